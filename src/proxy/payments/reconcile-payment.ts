// Reconciling a payment left unfinished (a crash, a refused or unanswered paid request):
//   waiting for its owner's approval         → left alone until its deadline, then released (approvals.ts)
//   queued, or executing under a live leader → left alone
//   never signed                             → released (also when the batch leader that took it died)
//   settled by a transaction we know         → confirmed if our RPC shows the transfer
//   signed, outcome unknown                  → every attempt's authorization (its nonce) is looked for on
//                                              chain: one used → the transfer is confirmed and the agent
//                                              debited once; all unused and expired → released; one still
//                                              valid → decided later
import { confirmTransfer, findAnyAuthorizationUse, X402Error } from '../../x402/index.ts';
import { formatAmount } from '../../api/amount.ts';
import type { OperationRecord } from '../journal/journal.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import { confirmPayment, type ConfirmPaymentDeps } from './execute-payment.ts';
import { type PaymentFailureDeps, settlePaymentFailure } from './payment-state.ts';
import { paymentData } from './payment-data.ts';
import { type ApprovalDeps, expireIfDue } from './approvals.ts';

/** What this module uses of the payment context. */
export type ReconcilePaymentDeps = Pick<PaymentContext, 'batches' | 'payer'> & {
  flows: Pick<FlowContext, 'journal' | 'logger'>;
} & ApprovalDeps &
  PaymentFailureDeps &
  ConfirmPaymentDeps;

export async function reconcilePayment(
  pctx: ReconcilePaymentDeps,
  record: OperationRecord,
): Promise<boolean> {
  const { paymentId, data } = { paymentId: record.opId, data: paymentData(record) };
  if (record.state === 'awaiting_approval') return expireIfDue(pctx, record);
  const queued = await pctx.batches.queueState(paymentId);
  if (queued === 'live') return false;
  if (record.state === 'reserved') {
    if (queued === 'abandoned') {
      // Its leader is gone and can no longer sign it (its epoch is fenced): as it is now, it stays.
      const now = await pctx.flows.journal.get(paymentId);
      if (now?.state !== 'reserved') return false; // signed after all: decided from the chain next round
    } else if (await pctx.flows.journal.runIsLive(record.runId)) return false; // between its checks and the queue
    await settlePaymentFailure(pctx, paymentId, 'released', {
      code: 'interrupted',
      detail: 'interrupted before it was signed; nothing was paid',
    });
    return true;
  }
  const auth = data.auth;
  // every signed attempt (a record written before attempts were listed has only `auth`)
  const attempts = data.attempts ?? (auth ? [auth] : []);
  if (auth === undefined || attempts.length === 0) {
    await settlePaymentFailure(pctx, paymentId, 'released', { code: 'interrupted', detail: 'never signed' });
    return true;
  }
  const expected = { payer: auth.payer, payTo: auth.payTo, asset: auth.asset, amount: auth.amount };
  let txHash = record.txHash;
  if (txHash === undefined) {
    let use;
    try {
      use = await findAnyAuthorizationUse(pctx.payer.rpcUrl, attempts);
    } catch (error) {
      if (error instanceof X402Error) {
        pctx.flows.logger.log('warn', 'payment not reconciled yet', { paymentId, code: error.code });
        return false;
      }
      throw error;
    }
    if (use.state === 'pending') return false;
    if (use.state === 'unused_expired') {
      // the reason the last attempt failed, if it was recorded, stays the payment's reason
      await settlePaymentFailure(
        pctx,
        paymentId,
        'released',
        record.reason ?? {
          code: 'payment_failed',
          detail: 'the payment authorization expired unused; nothing was paid',
        },
      );
      return true;
    }
    txHash = use.txHash;
  }
  let confirmed;
  try {
    confirmed = await confirmTransfer(pctx.payer.rpcUrl, txHash, expected);
  } catch (error) {
    if (!(error instanceof X402Error)) throw error;
    // The reported transaction does not pay: forget it and look for the authorization instead.
    if (error.code === 'tx_failed' || error.code === 'transfer_mismatch' || error.code === 'tx_not_found') {
      if (record.txHash !== undefined) await pctx.flows.journal.update(paymentId, { txHash: undefined });
    }
    return false;
  }
  await confirmPayment(pctx, paymentId, record.agent, {
    paymentId,
    paymentStatus: 'confirmed',
    batchId: data.batchId ?? '',
    receipt: {
      amount: formatAmount(BigInt(auth.amount)),
      asset: auth.asset,
      payTo: auth.payTo,
      network: auth.network,
      transaction: confirmed.txHash,
      settledAt: new Date(confirmed.createdAt * 1000).toISOString(),
    },
  });
  pctx.flows.logger.log('info', 'payment confirmed on reconciliation', { paymentId });
  return true;
}
