// Closing a payment that did not pay: its reservation is released and the operation ends in `state`.
import type { PaymentContext } from './context.ts';

export async function settlePaymentFailure(
  pctx: PaymentContext,
  paymentId: string,
  state: 'failed' | 'released',
  reason: { code: string; detail: string },
): Promise<void> {
  const record = await pctx.flows.journal.get(paymentId);
  if (record === undefined) return;
  await pctx.flows.notes.release(record.agent, paymentId);
  await pctx.flows.journal.update(paymentId, { state, reason });
  pctx.float.uncommit(paymentId);
  pctx.flows.metrics.ledgerOperations.inc({ kind: 'payment', outcome: state });
}
