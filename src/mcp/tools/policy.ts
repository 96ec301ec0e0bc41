// pool_policy: what the agent's owner allows it (GET /api/agents/:agentId/policy): its per-payment cap, its
// allowed and denied services, whether it is frozen, and what is left of each budget. Read-only: no tool
// changes a policy (only its owner does, over REST or the web page, with the owner's own token).
import { agentIdInput, outputs } from '../fields.ts';
import { checkPathAgentId, guarded, success, type ToolContext } from '../tool-kit.ts';

export function registerPolicy({ server, api, mode, agentOf, forWhom }: ToolContext): void {
  server.registerTool(
    'pool_policy',
    {
      title: 'Spending policy and remaining budgets',
      description:
        `Reads the spending policy the owner set for ${forWhom}: the per-payment cap, the services it may and may ` +
        'not pay, whether it is frozen, and for each rolling budget (hour, day, 30 days) what is spent and left. ' +
        'Payments outside it are refused (policy_* or agent_frozen codes). Only the owner can change it.',
      inputSchema: mode.kind === 'wallet' ? { agentId: agentIdInput } : {},
      outputSchema: outputs.policy,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args: { agentId?: string }) =>
      guarded(async () => {
        const view = await api.policy(checkPathAgentId(agentOf(args)));
        const left = Object.entries(view.effective.budgets)
          .filter(([, state]) => state !== null)
          .map(([window, state]) => `${window}: ${state!.remaining} of ${state!.budget} USDC left`);
        return success(
          view,
          `Policy of ${view.agentId}${view.frozen ? ' (FROZEN: it pays nothing)' : ''}: per-payment cap ` +
            `${view.effective.perPaymentCap} USDC; ${left.length > 0 ? left.join('; ') : 'no budgets'}; services ` +
            `allowed: ${view.allowedServices.join(', ') || 'any'}; denied: ${view.deniedServices.join(', ') || 'none'}.`,
        );
      }),
  );
}
