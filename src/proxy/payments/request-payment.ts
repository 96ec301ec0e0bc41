// POST /api/pay: an agent asks the proxy to fetch an x402-protected URL. Everything that can be refused is
// refused at once, before anything is signed: an unknown agent, a reused idempotency key with another request,
// a full queue, a bad or private URL, a service that is not x402 (or answers with a redirect, never followed:
// x402/pay.ts) or does not take our token or whose payee is one of the deployment's own accounts or contracts
// (services/deployment.ts, ownAddresses), a price above `maxAmount`, the per-payment cap or the agent's
// budget, a rule of its owner's policy (policy-check.ts), a float or a balance too low (the checks, in order,
// are payment-checks.ts, shared with a dry run). Then the price is reserved (a journaled `payment` operation)
// and the payment joins the current batch; the answer comes once the batch ran. A price above the owner's approval threshold
// is reserved the same way but journaled `awaiting_approval` and answered at once: it joins a batch only
// when its owner approves it (approvals.ts). The same idempotency key returns the first payment's answer (or
// its current state), never a second payment.
import { randomUUID } from 'node:crypto';
import type { Quote } from '../../x402/index.ts';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { codeOf, DomainError, messageOf } from '../domain/errors.ts';
import type { FlowContext } from '../flows/context.ts';
import { requireAgent, type RequireAgentDeps } from '../flows/require-agent.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { PaymentContext } from './context.ts';
import {
  outcomeOf,
  type OutcomeDeps,
  type PaymentFailureDeps,
  settlePaymentFailure,
} from './payment-state.ts';
import { findRecoveredPayment, type RecoverHistoryDeps } from './recover-history.ts';
import { fingerprint, type KeyRecord } from './records.ts';

/** How long a repeated request waits for the first one's outcome beyond the batch window. */
const REPLAY_WAIT_MS = 90_000;
const REPLAY_POLL_MS = 200;
import { isBudgeted } from './policy-check.ts';
import {
  checkReservable,
  checkUpToQuote,
  type PayRequest,
  type PaymentChecksDeps,
} from './payment-checks.ts';
import { needsApproval } from '../domain/agent-policy.ts';
import { type ApprovalDeps, waitingData } from './approvals.ts';
import type { PaymentData } from './payment-data.ts';

/** What this module uses of the payment context. */
export type RequestPaymentDeps = Pick<
  PaymentContext,
  'records' | 'config' | 'batches' | 'float' | 'payer' | 'fetchOptions' | 'poolWallet' | 'paymentCap'
> & {
  flows: Pick<FlowContext, 'store' | 'journal' | 'notes' | 'deployment' | 'logger' | 'clock'> &
    RequireAgentDeps;
} & RecoverHistoryDeps &
  OutcomeDeps &
  PaymentChecksDeps &
  ApprovalDeps &
  PaymentFailureDeps;

export async function requestPayment(
  pctx: RequestPaymentDeps,
  owner: string,
  req: PayRequest,
): Promise<PaymentOutcome> {
  const ref: AgentRef = { owner, agentId: req.agentId };
  await requireAgent(pctx.flows, ref);
  if (req.idempotencyKey === undefined) return pay(pctx, ref, req);
  const key = req.idempotencyKey;
  const print = fingerprint({
    agentId: req.agentId,
    serviceUrl: req.serviceUrl,
    method: req.method,
    body: req.body ?? null,
    headers: req.headers ?? null,
    maxAmount: req.maxAmount?.toString() ?? null,
  });
  const existing = await pctx.records.lookupKey(owner, key);
  if (existing !== undefined) return replay(pctx, existing, print);
  // The key's record may have been lost with the store: a payment rebuilt from the chain answers for it.
  const recovered = await findRecoveredPayment(pctx, scopedId(ref), key);
  if (recovered !== undefined) {
    await pctx.flows.store.batch(pctx.records.bindKeyOps(owner, recovered, { key, fingerprint: print }));
    return outcomeOf(pctx, recovered);
  }
  try {
    return await pay(pctx, ref, req, { key, fingerprint: print });
  } catch (error) {
    // Another request with this key (on this replica or another) bound it first: answer as it does.
    if (error instanceof KeyTaken) return replay(pctx, error.existing, print);
    throw error;
  }
}

/** Thrown inside the reservation when the idempotency key was bound in the meantime. */
class KeyTaken extends Error {
  readonly existing: KeyRecord;
  constructor(existing: KeyRecord) {
    super('idempotency key already bound');
    this.existing = existing;
  }
}

/** A request repeating an idempotency key: the first payment's answer, once it has one. */
async function replay(pctx: RequestPaymentDeps, existing: KeyRecord, print: string): Promise<PaymentOutcome> {
  if (existing.fingerprint !== print)
    throw new DomainError('conflict', 'this idempotencyKey was used for another request', {
      extra: { paymentId: existing.paymentId },
    });
  // The first request may still be waiting for its batch: wait as long as it would, then say `pending`.
  const deadline = pctx.flows.clock() + pctx.config.batchWindowMs + REPLAY_WAIT_MS;
  for (;;) {
    const outcome = await outcomeOf(pctx, existing.paymentId);
    if (outcome.paymentStatus !== 'pending' || pctx.flows.clock() > deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
  }
}

async function pay(
  pctx: RequestPaymentDeps,
  ref: AgentRef,
  req: PayRequest,
  idempotency?: { key: string; fingerprint: string },
): Promise<PaymentOutcome> {
  const { flows } = pctx;
  const agent = scopedId(ref);
  const { policy, quote: q, request } = await checkUpToQuote(pctx, ref, req);
  // With budgets on (the operator's or a policy's), an agent's checks and reservation are taken one payment
  // at a time; with an idempotency key, one request per key binds it (in every replica: the locks are the
  // store's).
  const budgeted = isBudgeted(pctx, policy);
  const paymentId = randomUUID();
  // Above the owner's approval threshold: reserved and journaled as waiting, not queued (approvals.ts).
  const waiting = needsApproval(policy, q.amount)
    ? waitingData(pctx, policy!, { paymentId, agent, quote: q, request, idempotencyKey: idempotency?.key })
    : undefined;
  const reserve = async () => {
    if (idempotency !== undefined) {
      const taken = await pctx.records.lookupKey(ref.owner, idempotency.key);
      if (taken !== undefined) throw new KeyTaken(taken);
    }
    // A refused reservation is returned, not thrown, so the failed operation it journaled is kept.
    return checkAndReserve(pctx, ref, req, q, paymentId, idempotency, waiting);
  };
  const keyed = () =>
    idempotency === undefined
      ? reserve()
      : pctx.records.keyLock.run(`${ref.owner}\u0000${idempotency.key}`, reserve);
  const refused = await (budgeted ? pctx.records.budgetLock.run(agent, keyed) : keyed());
  if (refused !== undefined) throw refused;
  if (waiting !== undefined) {
    flows.logger.log('info', 'payment awaits approval', { paymentId });
    return outcomeOf(pctx, paymentId);
  }
  pctx.float.commit(paymentId, q.amount);
  let queued: { outcome: Promise<PaymentOutcome> };
  try {
    queued = await pctx.batches.enqueue({
      paymentId,
      agent,
      quote: q,
      request,
      idempotencyKey: idempotency?.key,
    });
  } catch (error) {
    // The queue filled up while this payment was being checked: nothing was signed, give the money back.
    await settlePaymentFailure(pctx, paymentId, 'released', {
      code: codeOf(error),
      detail: messageOf(error),
    });
    throw error;
  }
  flows.logger.log('info', 'payment queued', { paymentId });
  return queued.outcome;
}

async function checkAndReserve(
  pctx: RequestPaymentDeps,
  ref: AgentRef,
  req: PayRequest,
  q: Quote,
  paymentId: string,
  idempotency: { key: string; fingerprint: string } | undefined,
  waiting: Record<string, unknown> | undefined,
): Promise<Error | undefined> {
  await checkReservable(pctx, ref, q.amount);
  return reserveJournaled(pctx, ref, req, q, paymentId, idempotency, waiting);
}

/** Journals the payment (binding its key) and reserves its price; a refused reservation is returned. */
async function reserveJournaled(
  pctx: RequestPaymentDeps,
  ref: AgentRef,
  req: PayRequest,
  q: Quote,
  paymentId: string,
  idempotency: { key: string; fingerprint: string } | undefined,
  waiting: Record<string, unknown> | undefined,
): Promise<Error | undefined> {
  const { flows } = pctx;
  const agent = scopedId(ref);
  await flows.journal.begin(
    {
      opId: paymentId,
      kind: 'payment',
      agent,
      state: waiting === undefined ? 'reserved' : 'awaiting_approval',
      amount: q.amount,
      data: {
        owner: ref.owner,
        agentId: ref.agentId,
        serviceUrl: q.url,
        method: req.method,
        payTo: q.payTo,
        asset: q.asset,
        network: q.network,
        ...waiting,
      } satisfies PaymentData,
    },
    pctx.records.newPaymentOps(ref.owner, paymentId, idempotency),
  );
  try {
    await flows.notes.reserve(agent, paymentId, q.amount);
    return undefined;
  } catch (error) {
    await flows.journal.update(paymentId, {
      state: 'failed',
      reason: { code: codeOf(error), detail: messageOf(error) },
    });
    return error as Error;
  }
}
