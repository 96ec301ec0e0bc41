// One payment inside a batch, until it is decided or its deadline passes. Each attempt (payment-attempt.ts)
// signs the pool wallet's `transfer` authorization, journals it among the payment's attempts before anything
// is sent, sends the paid request and confirms the transfer on our own RPC. A payment is never paid twice:
//   - an attempt the facilitator could not settle (a burst on a single-signer facilitator takes its sequence
//     numbers), or whose answer never came, is offered again with the SAME nonce and a new expiration: the
//     chain consumes a nonce once, so at most one of the two can ever move money;
//   - a fresh nonce (the next attempt index, payment-nonce.ts) is used only once every earlier authorization
//     is proven unused and expired;
//   - before any new signature the chain is asked whether an earlier authorization was used.
// Sends to one service are paced (pacing.ts) so that a facilitator that refuses concurrency settles a burst
// one after another, while one with channel accounts settles it at once. A payment that did not settle is
// failed only once all its authorizations expired unused (the reservation is then released); if the
// deadline comes first it stays pending and reconciliation decides it. Nothing signed → released at once.
// A payment whose agent was frozen after it was reserved is released before its first signature.
import {
  findAnyAuthorizationUse,
  confirmTransfer,
  type PaymentRecord,
  type SendResult,
  X402Error,
} from '../../x402/index.ts';
import { randomInt } from 'node:crypto';
import { formatAmount } from '../../api/amount.ts';
import { fault } from '../util/faults.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import type { QueuedPayment } from './batches.ts';
import { attemptPayment, type AttemptPaymentDeps, content, type Reason } from './payment-attempt.ts';
import { type PaymentFailureDeps, settlePaymentFailure } from './payment-state.ts';
import { MAX_NONCE_ATTEMPT } from './payment-nonce.ts';
import { frozenSinceReserved, type PolicyCheckDeps } from './policy-check.ts';
import { parseScopedId } from '../domain/agent-ref.ts';
import { frozenRefusal } from '../domain/agent-policy.ts';
import { type PaymentData, paymentData } from './payment-data.ts';
import { messageOf } from '../domain/errors.ts';

/** What confirming a payment uses of the payment context (reconcile-payment.ts confirms payments too). */
export type ConfirmPaymentDeps = Pick<PaymentContext, 'records'> & {
  flows: Pick<FlowContext, 'notes' | 'journal' | 'stats' | 'metrics'>;
};

/** What this module uses of the payment context. */
export type ExecutePaymentDeps = Pick<
  PaymentContext,
  'config' | 'nonces' | 'pacer' | 'float' | 'payer' | 'records'
> & {
  flows: Pick<FlowContext, 'journal' | 'logger' | 'clock'>;
} & AttemptPaymentDeps &
  PolicyCheckDeps &
  PaymentFailureDeps &
  ConfirmPaymentDeps;

/** Signatures of one payment at most (same-nonce offers and fresh attempts together). */
const MAX_SIGNATURES = 16;
/** A new signature is not started with less time than this left (a send can take a ledger or more). */
const MIN_TIME_FOR_ATTEMPT_MS = 10_000;
/** Poll interval while waiting for a failed payment's authorizations to expire. */
const DECIDE_POLL_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function executePayment(
  pctx: ExecutePaymentDeps,
  p: QueuedPayment,
  batchId: string,
): Promise<PaymentOutcome> {
  const { journal, logger } = pctx.flows;
  const base = { paymentId: p.paymentId, batchId };
  const deadline = pctx.flows.clock() + pctx.config.payDeadlineMs;
  const service = new URL(p.quote.url).origin;
  const attempts: PaymentRecord[] = [];
  let attempt = p.attempt ?? 0;
  let nonce = pctx.nonces.derive(p.agent, p.idempotencyKey, attempt);
  let last: { reason: Reason; res?: SendResult } | undefined;
  try {
    await journal.update(p.paymentId, { data: { batchId } satisfies Partial<PaymentData> });
    // An agent frozen since this payment was reserved: unless an earlier run already signed for it, it is
    // not paid, and its reservation is released.
    if (attempt === 0 && (await frozenSinceReserved(pctx, parseScopedId(p.agent)))) {
      const record = await journal.get(p.paymentId);
      const signed = record && paymentData(record);
      if (signed?.attempts === undefined && signed?.auth === undefined) {
        const reason = {
          code: 'agent_frozen',
          detail: frozenRefusal(parseScopedId(p.agent).agentId).message,
        };
        await settlePaymentFailure(pctx, p.paymentId, 'released', reason);
        return { ...base, paymentStatus: 'failed', reason };
      }
    }
    for (let signatures = 0; ; signatures++) {
      const release = await pctx.pacer.acquire(service);
      let result;
      try {
        result = await attemptPayment(pctx, p, batchId, nonce, attempts);
      } finally {
        release(
          result?.kind === 'confirmed'
            ? 'ok'
            : result?.kind === 'retry' && result.contended
              ? 'contended'
              : 'other',
        );
      }
      if (result.kind === 'confirmed') {
        await confirmPayment(pctx, p.paymentId, p.agent, result.outcome);
        fault('payment', 'after-confirm');
        return result.outcome;
      }
      if (result.kind === 'unsigned') {
        if (attempts.length === 0) {
          // nothing was ever signed: nothing can be paid
          await settlePaymentFailure(pctx, p.paymentId, 'failed', result.reason);
          return { ...base, paymentStatus: 'failed', reason: result.reason };
        }
        // (e.g. the nonce is used: an earlier offer landed after all) — the chain decides below
        last ??= { reason: result.reason };
        break;
      }
      last = { reason: result.reason, res: 'res' in result ? result.res : undefined };
      if (result.kind === 'over') {
        if (result.txHash !== undefined) await journal.update(p.paymentId, { txHash: result.txHash });
        break;
      }
      if (signatures + 1 >= MAX_SIGNATURES || deadline - pctx.flows.clock() < MIN_TIME_FOR_ATTEMPT_MS) break;
      // before signing again: did an earlier offer land after all? And may a fresh nonce be used?
      const use = await findAnyAuthorizationUse(pctx.payer.rpcUrl, attempts);
      if (use.state === 'used') break;
      if (use.state === 'unused_expired' && attempt < MAX_NONCE_ATTEMPT) {
        attempt++;
        nonce = pctx.nonces.derive(p.agent, p.idempotencyKey, attempt);
      }
      logger.log('info', 'payment offered again', {
        paymentId: p.paymentId,
        code: result.reason.code,
        serviceLimit: pctx.pacer.limitOf(service),
      });
      // a little jitter, so that payments refused together do not come back together
      await sleep(randomInt(50, 500));
    }
    return await decide(pctx, p, batchId, attempts, last, deadline);
  } catch (error) {
    // Store, journal or RPC trouble: leave the operation to reconciliation.
    logger.log('error', 'payment execution failed', {
      paymentId: p.paymentId,
      error: messageOf(error),
    });
    return { ...base, paymentStatus: 'pending', reason: reasonOfAny(error) };
  } finally {
    pctx.float.uncommit(p.paymentId);
  }
}

/**
 * After the last attempt: the payment is confirmed if one of its authorizations was used, failed once all
 * of them expired unused (the reservation released, the answer kept for replays), pending at the deadline.
 */
async function decide(
  pctx: ExecutePaymentDeps,
  p: QueuedPayment,
  batchId: string,
  attempts: PaymentRecord[],
  last: { reason: Reason; res?: SendResult } | undefined,
  deadline: number,
): Promise<PaymentOutcome> {
  const base = { paymentId: p.paymentId, batchId };
  const reason = last?.reason ?? { code: 'payment_failed', detail: 'the payment did not go through' };
  const answered = last?.res ? content(last.res) : {};
  for (;;) {
    let use;
    try {
      use = await findAnyAuthorizationUse(pctx.payer.rpcUrl, attempts);
    } catch (error) {
      if (!(error instanceof X402Error)) throw error;
      use = undefined;
    }
    if (use?.state === 'used') {
      const first = attempts[0] as PaymentRecord;
      const confirmed = await confirmTransfer(pctx.payer.rpcUrl, use.txHash, first);
      const outcome: PaymentOutcome = {
        ...base,
        paymentStatus: 'confirmed',
        receipt: {
          amount: formatAmount(p.quote.amount),
          asset: p.quote.asset,
          payTo: p.quote.payTo,
          network: p.quote.network,
          transaction: confirmed.txHash,
          settledAt: new Date(confirmed.createdAt * 1000).toISOString(),
        },
        ...answered,
      };
      await confirmPayment(pctx, p.paymentId, p.agent, outcome);
      return outcome;
    }
    if (use?.state === 'unused_expired') {
      const outcome: PaymentOutcome = { ...base, paymentStatus: 'failed', reason, ...answered };
      await settlePaymentFailure(pctx, p.paymentId, 'failed', reason, [pctx.records.resultOp(outcome)]);
      return outcome;
    }
    if (pctx.flows.clock() + DECIDE_POLL_MS > deadline) {
      await pctx.flows.journal.update(p.paymentId, { state: 'sent', reason });
      return { ...base, paymentStatus: 'pending', reason, ...answered };
    }
    await sleep(DECIDE_POLL_MS);
  }
}

function reasonOfAny(error: unknown): Reason {
  const e = error as { code?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'internal_error',
    detail: typeof e?.message === 'string' ? e.message : 'unexpected error',
  };
}

/** Marks a payment confirmed: the reservation becomes the agent's unsettled debit, the answer is kept. */
export async function confirmPayment(
  pctx: ConfirmPaymentDeps,
  paymentId: string,
  agent: string,
  outcome: PaymentOutcome,
): Promise<void> {
  const first = await pctx.flows.notes.commitReservation(agent, paymentId);
  const record = await pctx.flows.journal.get(paymentId);
  const payTo = outcome.receipt?.payTo ?? (record && paymentData(record).payTo);
  if (first && typeof payTo === 'string')
    await pctx.flows.stats.recordPayment({
      payeeKey: pctx.records.payeeKey(payTo),
      batchId: outcome.batchId,
      settledAt: outcome.receipt?.settledAt ?? '',
    });
  await pctx.flows.journal.update(
    paymentId,
    { state: 'confirmed', txHash: outcome.receipt?.transaction, data: { receipt: outcome.receipt } },
    [pctx.records.resultOp(outcome)],
  );
  pctx.flows.metrics.ledgerOperations.inc({ kind: 'payment', outcome: 'confirmed' });
}
