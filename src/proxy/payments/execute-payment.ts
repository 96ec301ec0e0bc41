// One payment inside a batch: sign the x402 `exact` payment from the pool wallet, journal the signed
// authorization (payer, payTo, amount, nonce, expiration) before anything is sent, send the paid request,
// and count the payment confirmed only once our own RPC shows the transfer (pool wallet → payTo, exactly the
// price). Confirmed → the reservation becomes an unsettled debit (settlement later spends the agent's notes).
// Not signed → released at once. Signed but refused, or with no settlement → the authorization might still
// be used until it expires, so the reservation stays until reconciliation decides it.
import {
  confirmTransfer,
  isX402Error,
  type Quote,
  type SafeRequest,
  send,
  type SendResult,
  sign,
  type SignedPayment,
  X402Error,
} from '../../x402/index.ts';
import { formatAmount } from '../../api/amount.ts';
import { fault } from '../util/faults.ts';
import type { PaymentResult as PaymentOutcome, PaymentReceipt } from '../../api/types.ts';
import type { PaymentContext } from './context.ts';
import { settlePaymentFailure } from './payment-state.ts';

export interface QueuedPayment {
  paymentId: string;
  agent: string;
  quote: Quote;
  request: SafeRequest;
  /** the caller's idempotency key: the authorization's nonce derives from it (payment-nonce.ts) */
  idempotencyKey?: string;
  /** which signing attempt of this payment (0 first); each attempt has its own nonce */
  attempt?: number;
}

/** How long a paid request may take: the service's facilitator settles on the ledger before answering. */
const SEND_TIMEOUT_MS = 60_000;

const TEXTUAL = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

export async function executePayment(
  pctx: PaymentContext,
  p: QueuedPayment,
  batchId: string,
): Promise<PaymentOutcome> {
  const { journal, logger } = pctx.flows;
  const base = { paymentId: p.paymentId, batchId };
  try {
    let signed: SignedPayment;
    try {
      const nonce = pctx.nonces.derive(p.agent, p.idempotencyKey, p.attempt ?? 0);
      signed = await sign(p.quote, pctx.poolWallet, pctx.payer, { nonce });
    } catch (error) {
      const reason = reasonOf(error);
      await journal.update(p.paymentId, { data: { batchId } });
      await settlePaymentFailure(pctx, p.paymentId, 'failed', reason);
      return { ...base, paymentStatus: 'failed', reason };
    }
    await journal.update(p.paymentId, { state: 'signed', data: { batchId, auth: signed.record } });
    fault('payment', 'before-send');
    let res: SendResult;
    try {
      // The paid answer waits for the facilitator's settlement: allow it far longer than a plain fetch.
      res = await send(p.request, signed, { ...pctx.fetchOptions, timeoutMs: SEND_TIMEOUT_MS });
    } catch (error) {
      const reason = reasonOf(error);
      // whatever went wrong, the next payment simulates afresh instead of reusing a simulation
      pctx.payer.resources?.clear();
      await journal.update(p.paymentId, { state: 'sent', reason });
      // The service refused the payment: almost surely unused, but only its expiry proves it.
      const status = isX402Error(error, 'payment_rejected') ? 'failed' : 'pending';
      return { ...base, paymentStatus: status, reason };
    }
    fault('payment', 'after-send');
    const settled = res.settlement;
    if (settled?.success !== true || typeof settled.transaction !== 'string' || settled.transaction === '') {
      pctx.payer.resources?.clear();
      const reason = {
        code: 'payment_failed',
        detail: settled?.errorReason
          ? `the facilitator did not settle: ${settled.errorReason}`
          : `the service answered ${res.status} without settling the payment`,
      };
      await journal.update(p.paymentId, { state: 'sent', reason });
      return { ...base, paymentStatus: 'failed', reason, ...content(res) };
    }
    // Not journaled as `sent` first: a crash here leaves it `signed`, which reconciliation settles by
    // looking for the authorization's nonce on chain, exactly as it would a `sent` one.
    const confirmed = await confirmSoon(pctx, settled.transaction, signed);
    if (confirmed instanceof X402Error) {
      const reason = reasonOf(confirmed);
      await journal.update(p.paymentId, { state: 'sent', txHash: settled.transaction, reason });
      logger.log('warn', 'a settlement the service reported is not on our ledger', { code: confirmed.code });
      return { ...base, paymentStatus: 'pending', reason, ...content(res) };
    }
    const receipt: PaymentReceipt = {
      amount: formatAmount(p.quote.amount),
      asset: p.quote.asset,
      payTo: p.quote.payTo,
      network: p.quote.network,
      transaction: confirmed.txHash,
      settledAt: new Date(confirmed.createdAt * 1000).toISOString(),
    };
    const outcome: PaymentOutcome = { ...base, paymentStatus: 'confirmed', receipt, ...content(res) };
    await confirmPayment(pctx, p.paymentId, p.agent, outcome);
    fault('payment', 'after-confirm');
    return outcome;
  } catch (error) {
    // Store or journal trouble: leave the operation to reconciliation.
    logger.log('error', 'payment execution failed', {
      paymentId: p.paymentId,
      error: (error as Error).message,
    });
    return { ...base, paymentStatus: 'pending', reason: reasonOf(error) };
  } finally {
    pctx.float.uncommit(p.paymentId);
  }
}

/** Marks a payment confirmed: the reservation becomes the agent's unsettled debit, the answer is kept. */
export async function confirmPayment(
  pctx: PaymentContext,
  paymentId: string,
  agent: string,
  outcome: PaymentOutcome,
): Promise<void> {
  const first = await pctx.flows.notes.commitReservation(agent, paymentId);
  const record = await pctx.flows.journal.get(paymentId);
  if (first && typeof record?.data?.serviceKey === 'string')
    await pctx.flows.stats.recordPayment(record.data.serviceKey);
  await pctx.flows.journal.update(
    paymentId,
    { state: 'confirmed', txHash: outcome.receipt?.transaction, data: { receipt: outcome.receipt } },
    [pctx.records.resultOp(outcome)],
  );
  pctx.flows.metrics.ledgerOperations.inc({ kind: 'payment', outcome: 'confirmed' });
}

/** The facilitator waits for the ledger before answering; allow a few ledgers for our RPC to agree. */
async function confirmSoon(pctx: PaymentContext, txHash: string, signed: SignedPayment) {
  const expected = {
    payer: signed.record.payer,
    payTo: signed.record.payTo,
    asset: signed.record.asset,
    amount: signed.record.amount,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      return await confirmTransfer(pctx.payer.rpcUrl, txHash, expected);
    } catch (error) {
      if (!(error instanceof X402Error)) throw error;
      if (error.code !== 'tx_not_found' || attempt >= 20) return error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function content(
  res: SendResult,
): Pick<PaymentOutcome, 'serviceStatus' | 'contentType' | 'content' | 'contentEncoding'> {
  const textual = res.contentType === '' || TEXTUAL.test(res.contentType);
  return {
    serviceStatus: res.status,
    contentType: res.contentType,
    content: res.body.toString(textual ? 'utf8' : 'base64'),
    contentEncoding: textual ? 'utf8' : 'base64',
  };
}

export function reasonOf(error: unknown): { code: string; detail: string } {
  if (error instanceof X402Error) return { code: error.code, detail: error.message };
  const e = error as { code?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'internal_error',
    detail: typeof e?.message === 'string' ? e.message : 'unexpected error',
  };
}
