// Per-agent spending budgets (per hour and per day, off by default): what the agent's payments that paid or
// may still pay (everything but failed and released ones) add up to within a window.
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { PaymentContext } from './context.ts';

export async function spentWithin(pctx: PaymentContext, ref: AgentRef, windowMs: number): Promise<bigint> {
  const since = Date.now() - windowMs;
  const agent = scopedId(ref);
  let spent = 0n;
  for (const paymentId of await pctx.records.paymentsOf(ref.owner)) {
    const record = await pctx.flows.journal.get(paymentId);
    if (record === undefined || record.agent !== agent || record.createdAt < since) continue;
    if (record.state === 'failed' || record.state === 'released') continue;
    spent += record.amount;
  }
  return spent;
}
