// Balances (the caller's own agents only) and public pool statistics.
import { formatAmount } from '../../api/amount.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import { AgentList, Balance, BalanceParams, PoolStats } from '../../api/schemas.ts';
import { scopedId } from '../domain/agent-ref.ts';
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
      'Available = confirmed unspent notes − in-flight reservations − unsettled payments. Agents belong to their owner: ' +
      'a wallet reads its own agents, the operator (its token) the operator’s (MCP) agents. Another owner’s ' +
      'agent answers exactly like one that does not exist (404).',
    tag: 'account',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    params: BalanceParams,
    response: Balance,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params, auth }) => {
      const ref = { owner: auth.sub, agentId: params.agentId };
      if ((await agents.get(ref)) === undefined) throw unknownAgent(params.agentId);
      return {
        agentId: params.agentId,
        balance: formatAmount(await notes.available(scopedId(ref))),
        currency: 'USDC' as const,
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/agents',
    summary: "The caller's agents with their available balances",
    tag: 'account',
    access: 'wallet-or-operator',
    response: AgentList,
    errors: [],
    handler: async ({ auth }) => {
      const mine = await agents.ofOwner(auth.sub);
      mine.sort((a, b) => a.agentId.localeCompare(b.agentId));
      return {
        agents: await Promise.all(
          mine.map(async (a) => ({
            agentId: a.agentId,
            balance: formatAmount(await notes.available(scopedId(a))),
            currency: 'USDC' as const,
          })),
        ),
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
