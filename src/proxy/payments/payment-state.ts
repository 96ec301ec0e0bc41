// A payment's status, one truth for every answer (POST /api/pay, its replays, GET /api/payments, MCP): read
// from its journal operation. And closing a payment that did not pay: its reservation is released and the
// operation ends in `state`.
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { StoreOp } from '../store/encrypted-store.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import { paymentData } from './payment-data.ts';
import { isFinal, type OperationRecord, type OperationState } from '../journal/journal.ts';

/** What this module uses of the payment context to close a payment that did not pay. */
export type PaymentFailureDeps = Pick<PaymentContext, 'float'> & {
  flows: Pick<FlowContext, 'journal' | 'notes' | 'metrics'>;
};

/** What answering for a payment uses of the payment context (less than closing one: queue-waiters.ts). */
export type OutcomeDeps = Pick<PaymentContext, 'records'> & { flows: Pick<FlowContext, 'journal'> };

/**
 * confirmed; failed (any other final state: nothing was paid); awaiting_approval while its owner has not
 * decided (nothing signed); pending while it may still pay.
 */
export function paymentStatusOf(
  state: OperationState,
): 'confirmed' | 'failed' | 'pending' | 'awaiting_approval' {
  if (state === 'confirmed') return 'confirmed';
  if (state === 'awaiting_approval') return 'awaiting_approval';
  return isFinal(state) ? 'failed' : 'pending';
}

export async function settlePaymentFailure(
  pctx: PaymentFailureDeps,
  paymentId: string,
  state: 'failed' | 'released',
  reason: { code: string; detail: string },
  /** store operations written with the failure (e.g. the answer kept for replays) */
  extra: StoreOp[] = [],
): Promise<void> {
  const record = await pctx.flows.journal.get(paymentId);
  if (record === undefined) return;
  await pctx.flows.notes.release(record.agent, paymentId);
  await pctx.flows.journal.update(paymentId, { state, reason }, extra);
  pctx.float.uncommit(paymentId);
  pctx.flows.metrics.ledgerOperations.inc({ kind: 'payment', outcome: state });
}

/** The answer of an earlier payment: its kept result, or its state while it is still being decided. */
export async function outcomeOf(pctx: OutcomeDeps, paymentId: string): Promise<PaymentOutcome> {
  const record = await pctx.flows.journal.get(paymentId);
  const status = record === undefined ? 'pending' : paymentStatusOf(record.state);
  // the answer kept when it was decided, if it is the journal's (one status in every answer)
  const kept = await pctx.records.result(paymentId);
  if (kept !== undefined && kept.paymentStatus === status) return kept;
  const batchId = (record && paymentData(record).batchId) ?? '';
  if (status === 'awaiting_approval')
    return { paymentId, batchId, paymentStatus: status, expiresAt: expiresAtOf(record!) };
  if (record === undefined || status !== 'failed') return { paymentId, batchId, paymentStatus: 'pending' };
  return {
    paymentId,
    batchId,
    paymentStatus: 'failed',
    reason: record.reason ?? { code: 'payment_failed', detail: 'the payment did not go through' },
  };
}

/** When a payment waiting for approval expires unpaid (ISO 8601). */
export function expiresAtOf(record: OperationRecord): string {
  return new Date(paymentData(record).approvalExpiresAt ?? 0).toISOString();
}
