// Payments that wait for their owner's approval. A payment whose quoted price is above the owner's approval
// threshold is checked and reserved like any other (request-payment.ts), but journaled `awaiting_approval`
// with what its batch will need (the quote, the request, its idempotency key) and a deadline read from the
// proxy's clock; nothing is signed. Then, once:
//   approved → `reserved` under this process run, and it joins the next batch (paid at most once: the batch
//              path's own guarantees; a freeze since then still stops it before its first signature);
//   denied   → released: nothing paid, the reservation given back;
//   expired  → the same, when its deadline passed (swept by reconciliation, and whenever it is read).
// Each decision runs under a store mutex per payment, so one of them wins, in every replica; the state is the
// journal's, so a restart finds a waiting payment still waiting.
import { formatAmount } from '../../api/amount.ts';
import { codeOf, DomainError, messageOf } from '../domain/errors.ts';
import { APPROVAL_TIMEOUT_DEFAULT_S } from '../../api/schemas.ts';
import { type AgentPolicy, frozenRefusal } from '../domain/agent-policy.ts';
import type { OperationRecord } from '../journal/journal.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import {
  expiresAtOf,
  type PaymentFailureDeps,
  paymentStatusOf,
  settlePaymentFailure,
} from './payment-state.ts';
import { ownedPaymentData, paymentData } from './payment-data.ts';
import type { QueuedPayment } from './batches.ts';

/** What this module uses of the payment context. */
export type ApprovalDeps = Pick<PaymentContext, 'policies' | 'batches' | 'float'> & {
  flows: Pick<FlowContext, 'clock' | 'store' | 'journal' | 'logger'>;
} & PaymentFailureDeps;

/** The journal fields of a payment that waits: its deadline (ms, the proxy's clock) and its queued form. */
export function waitingData(
  pctx: ApprovalDeps,
  policy: AgentPolicy,
  queued: QueuedPayment,
): Record<string, unknown> {
  const seconds = policy.approvalTimeoutSeconds ?? APPROVAL_TIMEOUT_DEFAULT_S;
  return { approvalExpiresAt: pctx.flows.clock() + seconds * 1000, queued };
}

const lockOf = (pctx: ApprovalDeps) => pctx.flows.store.mutex('approval');

const EXPIRED = {
  code: 'approval_expired',
  detail: 'its owner did not approve it before its deadline',
};

/** Releases a waiting payment whose deadline passed; whether it did (it is no longer waiting). */
export async function expireIfDue(pctx: ApprovalDeps, record: OperationRecord): Promise<boolean> {
  if (pctx.flows.clock() < (paymentData(record).approvalExpiresAt ?? 0)) return false;
  return lockOf(pctx).run(record.opId, async () => {
    const now = await pctx.flows.journal.get(record.opId);
    if (now?.state !== 'awaiting_approval') return false;
    await settlePaymentFailure(pctx, record.opId, 'released', EXPIRED);
    pctx.flows.logger.log('info', 'payment approval expired', { paymentId: record.opId });
    return true;
  });
}

/** The payments of `owner` (of one agent, for its token) that wait for approval, oldest first. */
export async function pendingApprovals(
  pctx: ApprovalDeps,
  owner: string,
  agentId?: string,
): Promise<OperationRecord[]> {
  const out: OperationRecord[] = [];
  for (const record of await pctx.flows.journal.open()) {
    if (record.state !== 'awaiting_approval' || ownedPaymentData(record, owner, agentId) === undefined)
      continue;
    if (!(await expireIfDue(pctx, record))) out.push(record);
  }
  return out.sort((a, b) => a.createdAt - b.createdAt);
}

/** A pending approval as GET /api/approvals lists it. */
export function approvalView(record: OperationRecord) {
  const data = paymentData(record);
  return {
    paymentId: record.opId,
    agentId: data.agentId ?? '',
    serviceUrl: data.serviceUrl ?? '',
    method: data.method ?? '',
    amount: formatAmount(record.amount),
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: expiresAtOf(record),
  };
}

/** The owner's payment (404 otherwise, as for a payment that does not exist), swept if its deadline passed. */
export async function ownedPayment(
  pctx: ApprovalDeps,
  owner: string,
  paymentId: string,
  agentId?: string,
): Promise<OperationRecord> {
  const record = await pctx.flows.journal.get(paymentId);
  if (record === undefined || ownedPaymentData(record, owner, agentId) === undefined)
    throw new DomainError('not_found', `no payment ${paymentId}`);
  if (record.state === 'awaiting_approval' && (await expireIfDue(pctx, record)))
    return (await pctx.flows.journal.get(paymentId)) as OperationRecord;
  return record;
}

function notPending(record: OperationRecord): DomainError {
  const status = paymentStatusOf(record.state);
  const why = record.reason?.code === EXPIRED.code ? 'its approval deadline passed' : `it is ${status}`;
  return new DomainError(
    'approval_not_pending',
    `payment ${record.opId} no longer waits for approval: ${why}`,
    {
      extra: { paymentId: record.opId, paymentStatus: status },
    },
  );
}

/** Approves a waiting payment: it joins the next batch. Refused (nothing changes) if its agent is frozen. */
export async function approvePayment(pctx: ApprovalDeps, owner: string, paymentId: string): Promise<void> {
  const record = await ownedPayment(pctx, owner, paymentId);
  if (record.state !== 'awaiting_approval') throw notPending(record);
  const agentId = paymentData(record).agentId ?? '';
  if ((await pctx.policies.find({ owner, agentId }))?.frozen === true) throw frozenRefusal(agentId);
  await pctx.batches.checkCapacity();
  if ((await pctx.float.available()) < record.amount)
    throw new DomainError(
      'service_unavailable',
      `the pool wallet's float cannot pay ${formatAmount(record.amount)} USDC now; approve again after settlement`,
      { retryAfterSeconds: 30 },
    );
  const queued = paymentData(record).queued!;
  const approved = await lockOf(pctx).run(paymentId, async () => {
    // this run now owns it (reconciliation leaves a reserved payment of a live run to its batch)
    const { applied, record: now } = await pctx.flows.journal.transition(paymentId, ['awaiting_approval'], {
      state: 'reserved',
      runId: pctx.flows.journal.runId,
    });
    return applied ? undefined : now;
  });
  if (approved !== undefined) throw notPending(approved);
  pctx.float.commit(paymentId, record.amount);
  try {
    const { outcome } = await pctx.batches.enqueue(queued);
    outcome.catch(() => {}); // its outcome is journaled; whoever asks reads it there
  } catch (error) {
    await settlePaymentFailure(pctx, paymentId, 'released', {
      code: codeOf(error),
      detail: messageOf(error),
    });
    throw error;
  }
  pctx.flows.logger.log('info', 'payment approved', { paymentId });
}

/** Denies a waiting payment: released, nothing paid. */
export async function denyPayment(pctx: ApprovalDeps, owner: string, paymentId: string): Promise<void> {
  const record = await ownedPayment(pctx, owner, paymentId);
  if (record.state !== 'awaiting_approval') throw notPending(record);
  const closed = await lockOf(pctx).run(paymentId, async () => {
    const now = await pctx.flows.journal.get(paymentId);
    if (now?.state !== 'awaiting_approval') return now;
    await settlePaymentFailure(pctx, paymentId, 'released', {
      code: 'approval_denied',
      detail: 'its owner denied it',
    });
    return undefined;
  });
  if (closed !== undefined) throw notPending(closed);
  pctx.flows.logger.log('info', 'payment denied', { paymentId });
}
