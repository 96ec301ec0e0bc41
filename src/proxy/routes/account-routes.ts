// Balance (owner only) and public pool statistics.
import { formatAmount } from '../domain/amount.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { Balance, BalanceParams, PoolStats } from '../http/schemas.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { NoteBook } from '../services/notebook.ts';
import type { PoolStatsService } from '../services/stats.ts';

export function registerAccountRoutes(
  api: ApiRouter,
  agents: AgentRegistry,
  notes: NoteBook,
  stats: PoolStatsService,
): void {
  api.add({
    method: 'get',
    path: '/api/balance/:agentId',
    summary: "An agent's available private balance",
    description:
      'Available = confirmed unspent notes − in-flight reservations − unsettled payments. Only the owning wallet may read it; ' +
      'loopback callers without a token read the operator’s own (MCP) agents.',
    tag: 'account',
    access: 'wallet-or-operator',
    params: BalanceParams,
    response: Balance,
    errors: ['forbidden', 'invalid_request'],
    handler: async ({ params, auth }) => {
      await agents.authorize(params.agentId, auth!.sub);
      return {
        agentId: params.agentId,
        balance: formatAmount(await notes.available(params.agentId)),
        currency: 'USDC' as const,
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/pool/stats',
    summary: 'Aggregate pool statistics (no per-agent data)',
    tag: 'pool',
    access: 'public',
    response: PoolStats,
    errors: [],
    handler: async () => stats.stats(),
  });
}
