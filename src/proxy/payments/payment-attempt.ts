// One signed attempt of a payment: sign the pool wallet's `transfer` authorization with the given nonce,
// journal it among the payment's attempts before anything is sent, send the paid request, and say what
// happened — confirmed (our own RPC shows the transfer), retryable (the facilitator could not settle, or the
// answer never came), or over (the service refused the payment or answered without settling it).
import type { PaymentResult as PaymentOutcome, PaymentReceipt } from '../../api/types.ts';
import { formatAmount } from '../../api/amount.ts';
import {
  confirmTransfer,
  type PaymentRecord,
  send,
  type SendResult,
  sign,
  type SignedPayment,
  X402Error,
} from '../../x402/index.ts';
import { fault } from '../util/faults.ts';
import type { FlowContext } from '../flows/context.ts';
import type { QueuedPayment } from './batches.ts';
import type { PaymentContext } from './context.ts';
import type { PaymentData } from './payment-data.ts';

/** What this module uses of the payment context. */
export type AttemptPaymentDeps = Pick<PaymentContext, 'poolWallet' | 'payer' | 'fetchOptions' | 'batches'> & {
  flows: Pick<FlowContext, 'journal' | 'logger'>;
};

/** How long a paid request may take: the service's facilitator settles on the ledger before answering. */
const SEND_TIMEOUT_MS = 60_000;
/**
 * Longest validity of an authorization: 60 s, 12 ledgers at the nominal 5 s. A failed payment is proven
 * unpaid once its authorizations expired, so a short validity answers a failure sooner.
 */
const MAX_VALIDITY_SECONDS = 60;

/**
 * Settlement failures that come from the facilitator's side of a burst (a sequence number taken by a
 * concurrent settlement, a transaction that failed on the ledger): nothing moved, and the same
 * authorization can be offered again. Exact `errorReason` codes of the Stellar `exact` facilitators
 * (@x402/stellar's and src/x402/facilitator/scheme.ts, which adds the duplicate settlement).
 */
const CONTENTION: ReadonlySet<string> = new Set([
  'settle_exact_stellar_transaction_submission_failed',
  'settle_exact_stellar_transaction_failed',
  'settle_exact_stellar_duplicate_settlement',
]);
/**
 * A facilitator's simulation that failed: the authorization may have expired before it was checked (a
 * slow or busy facilitator), or an earlier offer of the same nonce landed (the chain check before the next
 * signature finds it). Offered again, with the same nonce.
 */
const STALE: ReadonlySet<string> = new Set(['invalid_exact_stellar_payload_simulation_failed']);
/**
 * The facilitator failed in a way it did not foresee (its own bug, or a fault it does not classify):
 * nothing is known to have moved and the same nonce cannot pay twice, so it is offered again like a
 * contended settlement — but logged, so an unknown fault leaves a trace.
 */
const UNEXPECTED: ReadonlySet<string> = new Set(['unexpected_settle_error']);

const TEXTUAL = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

export type Reason = NonNullable<PaymentOutcome['reason']>;

export type AttemptResult =
  | { kind: 'confirmed'; outcome: PaymentOutcome }
  /** nothing was signed (e.g. the balance or the offer changed) */
  | { kind: 'unsigned'; reason: Reason }
  /** signed and sent; nothing settled, and offering the payment again may work */
  | { kind: 'retry'; reason: Reason; contended: boolean }
  /** signed and sent; the service refused it, answered without settling, or named an unknown transaction */
  | { kind: 'over'; reason: Reason; res?: SendResult; txHash?: string };

/** Signs attempt `record`'s successor with `nonce`, journals it, sends it and classifies the answer. */
export async function attemptPayment(
  pctx: AttemptPaymentDeps,
  p: QueuedPayment,
  batchId: string,
  nonce: bigint,
  attempts: PaymentRecord[],
): Promise<AttemptResult> {
  const { journal, logger } = pctx.flows;
  let signed: SignedPayment;
  try {
    signed = await sign(p.quote, pctx.poolWallet, pctx.payer, {
      nonce,
      maxValiditySeconds: MAX_VALIDITY_SECONDS,
    });
  } catch (error) {
    if (!(error instanceof X402Error)) logUnexpected(pctx, p, 'signing the authorization', error);
    return { kind: 'unsigned', reason: reasonOf(error) };
  }
  attempts.push(signed.record);
  // Journaled before it is sent, and only while this process may execute the payment (batches.ts).
  await pctx.batches.fenced(p.paymentId, () =>
    journal.update(p.paymentId, {
      state: 'signed',
      data: { batchId, auth: signed.record, attempts: [...attempts] } satisfies Partial<PaymentData>,
    }),
  );
  fault('payment', 'before-send');
  let res: SendResult;
  try {
    // The paid answer waits for the facilitator's settlement: allow it far longer than a plain fetch.
    res = await send(p.request, signed, { ...pctx.fetchOptions, timeoutMs: SEND_TIMEOUT_MS });
  } catch (error) {
    // whatever went wrong, the next payment simulates afresh instead of reusing a simulation
    pctx.payer.resources?.clear();
    const reason = reasonOf(error);
    if (error instanceof X402Error && error.code === 'payment_rejected') {
      const serviceReason = String(error.details?.reason ?? '');
      const withService = { ...reason, ...(serviceReason && { serviceReason }) };
      const said = (error.details?.settlement as { errorMessage?: string } | undefined)?.errorMessage;
      return classify(pctx, p, serviceReason, withService, said) ?? { kind: 'over', reason: withService };
    }
    if (!(error instanceof X402Error)) logUnexpected(pctx, p, 'sending the paid request', error);
    // no answer: the facilitator may have settled; the same nonce offered again cannot pay twice
    return { kind: 'retry', reason, contended: false };
  }
  fault('payment', 'after-send');
  const settled = res.settlement;
  if (settled?.success !== true || typeof settled.transaction !== 'string' || settled.transaction === '') {
    pctx.payer.resources?.clear();
    const serviceReason = settled?.errorReason;
    const reason: Reason = {
      code: 'payment_failed',
      detail: serviceReason
        ? `the facilitator did not settle: ${serviceReason}`
        : `the service answered ${res.status} without settling the payment`,
      ...(serviceReason && { serviceReason }),
    };
    return (
      (serviceReason && classify(pctx, p, serviceReason, reason, settled?.errorMessage)) || {
        kind: 'over',
        reason,
        res,
      }
    );
  }
  const confirmed = await confirmSoon(pctx, settled.transaction, signed);
  if (confirmed instanceof X402Error) {
    logger.log('warn', 'a settlement the service reported is not on our ledger', { code: confirmed.code });
    return { kind: 'over', reason: reasonOf(confirmed), res, txHash: settled.transaction };
  }
  const receipt: PaymentReceipt = {
    amount: formatAmount(p.quote.amount),
    asset: p.quote.asset,
    payTo: p.quote.payTo,
    network: p.quote.network,
    transaction: confirmed.txHash,
    settledAt: new Date(confirmed.createdAt * 1000).toISOString(),
  };
  return {
    kind: 'confirmed',
    outcome: { paymentId: p.paymentId, batchId, paymentStatus: 'confirmed', receipt, ...content(res) },
  };
}

/**
 * A facilitator's reason for not settling, by its exact code: offered again (contended or stale), or
 * undefined when the payment is over. An unexpected facilitator error is logged with the facilitator's own
 * message about it (x402's `errorMessage`), when it sent one.
 */
function classify(
  pctx: AttemptPaymentDeps,
  p: QueuedPayment,
  serviceReason: string,
  reason: Reason,
  serviceMessage?: string,
): AttemptResult | undefined {
  if (CONTENTION.has(serviceReason)) return { kind: 'retry', reason, contended: true };
  if (STALE.has(serviceReason)) return { kind: 'retry', reason, contended: false };
  if (UNEXPECTED.has(serviceReason)) {
    pctx.flows.logger.log(
      'warn',
      "the service's facilitator failed unexpectedly; the payment is offered again",
      {
        paymentId: p.paymentId,
        serviceReason,
        ...(serviceMessage !== undefined && { serviceMessage }),
        service: new URL(p.request.url).origin,
      },
    );
    return { kind: 'retry', reason, contended: true };
  }
  return undefined;
}

/** An error no layer foresaw (not an X402Error), where it is caught: its message, stack and cause are logged. */
function logUnexpected(pctx: AttemptPaymentDeps, p: QueuedPayment, doing: string, error: unknown): void {
  const e = error as { message?: unknown; stack?: unknown; cause?: unknown } | undefined;
  pctx.flows.logger.log('error', `unexpected error ${doing}`, {
    paymentId: p.paymentId,
    error: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.stack === 'string' && { stack: e.stack }),
    ...(e?.cause !== undefined && { cause: String((e.cause as Error)?.stack ?? e.cause) }),
  });
}

/** The facilitator waits for the ledger before answering; allow a few ledgers for our RPC to agree. */
async function confirmSoon(pctx: AttemptPaymentDeps, txHash: string, signed: SignedPayment) {
  const { payer, payTo, asset, amount } = signed.record;
  for (let attempt = 0; ; attempt++) {
    try {
      return await confirmTransfer(pctx.payer.rpcUrl, txHash, { payer, payTo, asset, amount });
    } catch (error) {
      if (!(error instanceof X402Error)) throw error;
      if (error.code !== 'tx_not_found' || attempt >= 20) return error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The service's answer as the caller gets it: status, content type and body (UTF-8 or base64). */
export function content(
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

export function reasonOf(error: unknown): Reason {
  if (error instanceof X402Error) return { code: error.code, detail: error.message };
  const e = error as { code?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'internal_error',
    detail: typeof e?.message === 'string' ? e.message : 'unexpected error',
  };
}
