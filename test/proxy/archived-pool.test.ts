// An idle pool wakes up: the sandbox ledger is advanced past the TTL of every contract entry (the pool's
// tree, its instance and code, the verifier, the ASPs, the USDC contract), so all of it is archived as after
// months without a transaction; the next wallet deposit, and after another idle spell the next withdrawal,
// then go through the proxy with no hand work, their transactions restoring what they read (protocol 23's
// restore in the same transaction). Real stack: sandbox, prover daemon, proxy.
import test from 'ava';
import { Address, Keypair, rpc, TransactionBuilder, xdr } from '#stellar-sdk';
import type { PoolApi } from './helpers/api.ts';
import { retryingRegistration } from './helpers/api.ts';
import { type Stack, startStack } from './helpers/stack.ts';

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.close();
});

async function deposit(api: PoolApi, wallet: Keypair, amount: string) {
  const prepared = await retryingRegistration(() =>
    api.prepareDeposit({ amount, publicKey: wallet.publicKey() }),
  );
  const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, stack.config.ledger.networkPassphrase);
  tx.sign(wallet);
  return api.submitDeposit({ prepareId: prepared.prepareId, signedTransactionXDR: tx.toXDR() });
}

/** The highest TTL of any contract entry on the ledger. */
function lastLiveUntil(): number {
  let max = 0;
  for (const rec of stack.sandbox.chain.state.entries.values()) max = Math.max(max, rec.liveUntil ?? 0);
  return max;
}

/** The pool contract's instance entry, as getLedgerEntries serves it. */
async function poolInstance() {
  const key = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(stack.sandbox.info.contracts.pool).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  const { entries, latestLedger } = await stack.server.getLedgerEntries(key);
  return { liveUntil: entries[0]?.liveUntilLedgerSeq ?? 0, latestLedger };
}

/** How many archived entries a landed transaction restored (its Soroban data's archived entries). */
async function restoredBy(hash: string): Promise<number> {
  const got = await stack.server.getTransaction(hash);
  if (got.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error(`status ${got.status}`);
  const env = got.envelopeXdr;
  const tx = env.type === 'envelopeTypeTx' ? (env.value as xdr.TransactionV1Envelope).tx : undefined;
  const data = tx?.ext.type === 'sorobanData' ? (tx.ext.value as xdr.SorobanTransactionData) : undefined;
  const ext = data?.ext;
  return ext?.type === 'resourceExt' ? ext.value.archivedSorobanEntries.length : 0;
}

test('a pool archived while idle accepts the next deposit and withdrawal without hand work', async (t) => {
  const wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 100);
  const api = await stack.walletApi(wallet);
  t.is((await deposit(api, wallet, '20')).status, 'confirmed');

  // months pass without a transaction: every contract entry's TTL runs out
  const latest = (await stack.server.getLatestLedger()).sequence;
  await stack.sandbox.advanceLedgers(lastLiveUntil() - latest + 1);
  const archived = await poolInstance();
  t.true(archived.liveUntil < archived.latestLedger, 'the pool contract is archived');

  const again = await deposit(api, wallet, '10');
  t.is(again.status, 'confirmed');
  t.true((await restoredBy(again.txHash)) > 0, 'the deposit restored the archived state it read');
  const live = await poolInstance();
  t.true(live.liveUntil >= live.latestLedger, 'the pool contract is live again');
  t.is((await api.balance(wallet.publicKey())).balance, '30.0000000');

  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  // idle again, then a withdrawal (the operator relays it)
  await stack.sandbox.advanceLedgers(lastLiveUntil() - (await stack.server.getLatestLedger()).sequence + 1);
  const out = await api.withdraw({ amount: '25', destination });
  t.is(out.status, 'confirmed');
  t.true((await restoredBy(out.txHash)) > 0, 'the withdrawal restored the archived state it read');
  t.is(await stack.usdcBalance(destination), 250_000_000n);
  t.is((await api.balance(wallet.publicKey())).balance, '5.0000000');
});
