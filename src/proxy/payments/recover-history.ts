// Payment history after a store loss. Payment authorizations carry nonces derived from the master key
// (payment-nonce.ts), so the chain remembers which agent paid what: the first start on a store that
// `pool-proxy store recover` rebuilt reads the pool wallet's transfers, opens each nonce, and records every
// transfer it can attribute to a known agent as that agent's confirmed payment (receipt from the chain;
// the request it answered, its URL and content, are not on chain). Each is indexed by its nonce, so a
// caller that repeats an idempotency key of a lost payment is answered with that payment instead of paying
// again (`findRecoveredPayment`). The agents' debts are rebuilt too: what an agent's recovered payments took
// from the pool wallet, less what settlement already moved from its notes to the float account
// (`settledOnChain`), is owed again, so a rebuilt balance never shows money that already paid a service.
import { transfersFrom } from '../../x402/index.ts';
import { formatAmount } from '../../api/amount.ts';
import { parseScopedId, scopedId } from '../domain/agent-ref.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import { MAX_NONCE_ATTEMPT } from './payment-nonce.ts';
import { FLOAT_ACCOUNT_ID } from '../domain/float-account.ts';
import type { NoteBook, NoteRecord } from '../services/notebook.ts';
import type { PaymentData } from './payment-data.ts';

/** What this module uses of the payment context. */
export type RecoverHistoryDeps = Pick<PaymentContext, 'poolWallet' | 'payer' | 'records' | 'nonces'> & {
  flows: Pick<FlowContext, 'store' | 'journal' | 'agents' | 'notes' | 'deployment' | 'logger'>;
};

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

/**
 * Rebuilds the payment history from the chain if this store asks for it; returns how many it recorded. The
 * pool wallet's transfers are read from `startLedger` (what the RPC keeps): an agent's debt is what they took
 * less what settlements from that ledger on moved (`ledgerOf`: the ledger of a pool transaction), so a
 * settlement of payments older than the RPC's window is not set against newer payments.
 */
export async function recoverPaymentHistory(
  pctx: RecoverHistoryDeps,
  startLedger: number,
  ledgerOf: (txHash: string) => number | undefined,
): Promise<number> {
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
  // what each agent's payments took from the pool wallet, counting those an interrupted run already recorded
  const paid = new Map<string, bigint>();
  const payer = pctx.poolWallet.publicKey();
  for await (const transfer of transfersFrom(pctx.payer.rpcUrl, pctx.payer.asset, payer, startLedger)) {
    for (const nonce of transfer.nonces) {
      const agent = byTag.get(pctx.nonces.open(nonce).agentTag);
      if (agent === undefined || agent === null) continue;
      paid.set(agent, (paid.get(agent) ?? 0n) + transfer.amount);
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
          data: {
            owner,
            agentId,
            serviceUrl: '',
            payTo: transfer.payTo,
            receipt,
            recovered: true,
          } satisfies Partial<PaymentData>,
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
  const { notes } = pctx.flows;
  const floatTxs = new Set(
    (await notes.notes(FLOAT_ACCOUNT_ID)).flatMap((n) =>
      n.createdTx === undefined || (ledgerOf(n.createdTx) ?? startLedger) < startLedger ? [] : [n.createdTx],
    ),
  );
  let owed = 0n;
  for (const [agent, amount] of paid) {
    const debt = amount - (await settledOnChain(notes, agent, floatTxs));
    if (debt > 0n) owed += debt;
    await notes.restoreUnsettled(agent, debt > 0n ? debt : 0n);
  }
  await store.batch([
    { type: 'del', key: historyToRecoverKey(store) },
    { type: 'put', key: recoveredFlagKey(store), value: true },
  ]);
  logger.log('info', 'payment history recovered from the chain', {
    payments: recorded,
    unsettled: formatAmount(owed),
  });
  return recorded;
}

/**
 * What settlement moved from the agent's notes to the float account, read from its rebuilt notes: in every
 * transaction that spent the agent's notes and created a float-account note (a settlement), the agent's
 * inputs less its change. Withdrawals and consolidations create no float-account note; padding spends no
 * agent note.
 */
async function settledOnChain(notes: NoteBook, agent: string, floatTxs: Set<string>): Promise<bigint> {
  const own = await notes.notes(agent);
  const sum = (tx: string, pick: (n: NoteRecord) => string | undefined) =>
    own.filter((n) => pick(n) === tx).reduce((s, n) => s + n.amount, 0n);
  let settled = 0n;
  for (const tx of new Set(own.flatMap((n) => (n.spentTx === undefined ? [] : [n.spentTx])))) {
    if (!floatTxs.has(tx)) continue;
    settled += sum(tx, (n) => n.spentTx) - sum(tx, (n) => n.createdTx);
  }
  return settled;
}

/**
 * The recovered payment an idempotency key paid for, if any: every attempt's nonce of (agent, key) is
 * looked up among the payments rebuilt from the chain.
 */
export async function findRecoveredPayment(
  pctx: RecoverHistoryDeps,
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
