// pool_stats: the pool's public aggregates (GET /api/pool/stats); no per-agent data.
import { outputs } from '../fields.ts';
import { count, guarded, success, type ToolContext } from '../tool-kit.ts';

export function registerStats({ server, api }: ToolContext): void {
  server.registerTool(
    'pool_stats',
    {
      title: 'Pool statistics',
      description:
        'Aggregate statistics of the pool (no per-agent data): active agents, transactions, services, recent batches.',
      inputSchema: {},
      outputSchema: outputs.stats,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () =>
      guarded(async () => {
        const stats = await api.stats();
        return success(
          {
            activeAgents: stats.activeAgents,
            totalTransactions: stats.totalTransactions,
            servicesUsed: stats.servicesUsed,
            recentBatches: stats.recentBatches,
          },
          `Pool: ${count(stats.activeAgents, 'active agent')}, ${count(stats.totalTransactions, 'transaction')}, ` +
            `${count(stats.servicesUsed, 'service')} used, ${count(stats.recentBatches.length, 'recent batch', 'recent batches')}.`,
        );
      }),
  );
}
