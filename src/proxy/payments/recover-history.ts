// Payment history after a store loss. Payment authorizations carry nonces derived from the master key
// (payment-nonce.ts), so the chain remembers which agent paid what: the first start on a store that
// `pool-proxy store recover` rebuilt reads the pool wallet's transfers, opens each nonce, and records every
// transfer it can attribute to a known agent as that agent's confirmed payment (receipt from the chain;
// the request it answered, its URL and content, are not on chain). Each is indexed by its nonce, so a
// caller that repeats an idempotency key of a lost payment is answered with that payment instead of paying
// again (`findRecoveredPayment`).
import { transfersFrom } from '../../x402/index.ts';
import { formatAmount } from '../../api/amount.ts';
import { parseScopedId, scopedId } from '../domain/agent-ref.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { PaymentContext } from './context.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import { MAX_NONCE_ATTEMPT } from './payment-nonce.ts';

/** Set by `store recover` in the store it creates: the next start rebuilds the payment history. */
export function historyToRecoverKey(store: EncryptedStore): string {
  return store.fixedKey('meta', 'payment-history-to-recover');
}

function recoveredFlagKey(store: EncryptedStore): string {
  return store.fixedKey('meta', 'payment-history-recovered');
}

function nonceKey(store: EncryptedStore, nonce: bigint): string {
  return store.key('pay-nonce', nonce.toString());
}

/** Rebuilds the payment history from the chain if this store asks for it; returns how many it recorded. */
export async function recoverPaymentHistory(pctx: PaymentContext, startLedger: number): Promise<number> {
  const { store, journal, agents, logger } = pctx.flows;
  if ((await store.get<boolean>(historyToRecoverKey(store))) !== true) return 0;
  const byTag = new Map<number, string | null>();
  for (const agent of await agents.all()) {
    const scoped = scopedId(agent);
    const tag = pctx.nonces.agentTag(scoped);
    // two agents with one tag: neither can be told apart, so neither is attributed
    byTag.set(tag, byTag.has(tag) ? null : scoped);
  }
  let recorded = 0;
  const payer = pctx.poolWallet.publicKey();
  for await (const transfer of transfersFrom(pctx.payer.rpcUrl, pctx.payer.asset, payer, startLedger)) {
    for (const nonce of transfer.nonces) {
      const agent = byTag.get(pctx.nonces.open(nonce).agentTag);
      if (agent === undefined || agent === null) continue;
      if ((await store.get(nonceKey(store, nonce))) !== undefined) continue;
      const paymentId = `recovered-${transfer.txHash.slice(0, 32)}`;
      const { owner, agentId } = parseScopedId(agent);
      const receipt = {
        amount: formatAmount(transfer.amount),
        asset: pctx.payer.asset,
        payTo: transfer.payTo,
        network: pctx.flows.deployment.network,
        transaction: transfer.txHash,
        settledAt: new Date(transfer.closedAt).toISOString(),
      };
      const outcome: PaymentOutcome = { paymentId, paymentStatus: 'confirmed', batchId: '', receipt };
      await journal.begin(
        {
          opId: paymentId,
          kind: 'payment',
          agent,
          state: 'confirmed',
          amount: transfer.amount,
          txHash: transfer.txHash,
          data: { owner, agentId, serviceUrl: '', payTo: transfer.payTo, receipt, recovered: true },
        },
        [
          ...pctx.records.newPaymentOps(owner, paymentId),
          pctx.records.resultOp(outcome),
          { type: 'put', key: nonceKey(store, nonce), value: { paymentId } },
        ],
      );
      recorded++;
    }
  }
  await store.batch([
    { type: 'del', key: historyToRecoverKey(store) },
    { type: 'put', key: recoveredFlagKey(store), value: true },
  ]);
  logger.log('info', 'payment history recovered from the chain', { payments: recorded });
  return recorded;
}

/**
 * The recovered payment an idempotency key paid for, if any: every attempt's nonce of (agent, key) is
 * looked up among the payments rebuilt from the chain.
 */
export async function findRecoveredPayment(
  pctx: PaymentContext,
  agent: string,
  idempotencyKey: string,
): Promise<string | undefined> {
  const { store } = pctx.flows;
  if ((await store.get<boolean>(recoveredFlagKey(store))) !== true) return undefined;
  for (let attempt = 0; attempt <= MAX_NONCE_ATTEMPT; attempt++) {
    const nonce = pctx.nonces.derive(agent, idempotencyKey, attempt);
    const found = await store.get<{ paymentId: string }>(nonceKey(store, nonce));
    if (found !== undefined) return found.paymentId;
  }
  return undefined;
}
