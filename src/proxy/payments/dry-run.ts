// A dry run of a payment (`POST /api/pay` with `dryRun: true`, MCP `pool_pay` with `dryRun`): the checks of a
// real payment (payment-checks.ts, the same functions in the same order), with the service's quoted price and
// the budgets, float and balance as they are now, and then nothing else: no journal record, no reservation,
// no idempotency record, no signature. It answers what would be paid and whether it would pass; a rule that
// would refuse is named with the problem code the payment would get. A request that is itself wrong (an unknown
// agent, a bad or private URL) is still a problem, as for a payment.
import { formatAmount } from '../../api/amount.ts';
import type { PaymentDryRun } from '../../api/types.ts';
import type { Quote } from '../../x402/index.ts';
import { needsApproval } from '../domain/agent-policy.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import { requireAgent, type RequireAgentDeps } from '../flows/require-agent.ts';
import {
  checkReservable,
  checkUpToQuote,
  type PayRequest,
  type PaymentChecksDeps,
} from './payment-checks.ts';

/** What this module uses of the payment context. */
export type DryRunDeps = PaymentChecksDeps & { flows: RequireAgentDeps };

export async function dryRunPayment(
  pctx: DryRunDeps,
  owner: string,
  req: PayRequest,
): Promise<PaymentDryRun> {
  const ref: AgentRef = { owner, agentId: req.agentId };
  await requireAgent(pctx.flows, ref);
  let quoted: Quote | undefined;
  try {
    const { policy, quote } = await checkUpToQuote(pctx, ref, req, (q) => (quoted = q));
    await checkReservable(pctx, ref, quote.amount);
    return { ...priceOf(quote), wouldPay: true, awaitsApproval: needsApproval(policy, quote.amount) };
  } catch (error) {
    if (!(error instanceof DomainError) || error.code === 'invalid_request') throw error;
    const rule = error.extra?.rule;
    return {
      ...(quoted === undefined ? { dryRun: true } : priceOf(quoted)),
      wouldPay: false,
      refusal: {
        code: error.code,
        detail: error.message,
        rule: typeof rule === 'string' ? rule : error.code,
      },
    };
  }
}

function priceOf(q: Quote) {
  return {
    dryRun: true as const,
    price: formatAmount(q.amount),
    asset: q.asset,
    payTo: q.payTo,
    network: q.network,
  };
}
