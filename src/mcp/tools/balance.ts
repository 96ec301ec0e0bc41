// pool_balance: the agent's available private balance (GET /api/balance/:agentId).
import { agentIdInput, outputs } from '../fields.ts';
import { checkPathAgentId, guarded, success, type ToolContext } from '../tool-kit.ts';

export function registerBalance({ server, api, mode, agentOf, forWhom }: ToolContext): void {
  server.registerTool(
    'pool_balance',
    {
      title: 'Private pool balance',
      description: `Reads the available private USDC balance of ${forWhom} (confirmed notes minus amounts in flight).`,
      inputSchema: mode.kind === 'wallet' ? { agentId: agentIdInput } : {},
      outputSchema: outputs.balance,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args: { agentId?: string }) =>
      guarded(async () => {
        const result = await api.balance(checkPathAgentId(agentOf(args)));
        return success(
          { agentId: result.agentId, balance: result.balance, currency: result.currency },
          `Balance of ${result.agentId}: ${result.balance} USDC.`,
        );
      }),
  );
}
