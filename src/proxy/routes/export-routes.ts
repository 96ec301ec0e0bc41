// GET /api/agents/:agentId/payments/export: the record of one agent's payments over a period, as JSON or as a
// CSV download, for the agent's owner (its token, or the operator's for its own agents) and for an agent token
// of that agent. See payments/payment-export.ts for the rows.
import { PaymentExport, PaymentExportQuery, BalanceParams } from '../../api/schemas.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { exportPayments, toCsv } from '../payments/payment-export.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { PoolAccess } from './pool-access.ts';

export function registerExportRoutes(api: ApiRouter, agents: AgentRegistry, runtime: PoolAccess): void {
  api.add({
    method: 'get',
    path: '/api/agents/:agentId/payments/export',
    summary:
      "An agent's payments over a period, as JSON or CSV (time, service, amount, status, batch, transaction)",
    description:
      'Every payment the agent asked for in [from, to) (default: from the beginning until now), oldest first, ' +
      'whatever became of it: `confirmed` (paid, with its receipt’s transaction), `failed` (nothing was paid) or ' +
      '`pending`. `format=csv` answers text/csv as a download.',
    tag: 'pay',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    params: BalanceParams,
    query: PaymentExportQuery,
    response: PaymentExport,
    errors: ['not_found', 'invalid_request', 'service_unavailable'],
    text: {
      contentType: 'text/csv; charset=utf-8',
      render: (result, query) =>
        query.format === 'csv'
          ? {
              body: toCsv(result.payments),
              headers: { 'Content-Disposition': `attachment; filename="payments-${result.agentId}.csv"` },
            }
          : undefined,
    },
    handler: async ({ params, query, auth }) => {
      const ref = { owner: auth.sub, agentId: params.agentId };
      if ((await agents.get(ref)) === undefined) throw unknownAgent(params.agentId);
      const pctx = runtime.requirePayments();
      const from = query.from === undefined ? 0 : Date.parse(query.from);
      const to = query.to === undefined ? pctx.flows.clock() : Date.parse(query.to);
      return {
        agentId: params.agentId,
        from: query.from === undefined ? null : new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        payments: await exportPayments(pctx, ref, from, to),
      };
    },
  });
}
