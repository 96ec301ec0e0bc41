import { Keypair, TransactionBuilder } from '@stellar/stellar-sdk';
import test from 'ava';
import { getJson, postJson } from './helpers/http.ts';
import { type Stack, startStack, USDC } from './helpers/stack.ts';

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.close();
});

test.serial('operator deposit from loopback, then balance via token', async (t) => {
  const res = await postJson(`${stack.proxy.url}/api/deposit`, {
    agentId: 'local-agent-1',
    amount: '5.0000000',
  });
  t.is(res.status, 200, res.text);
  t.is(res.json.status, 'confirmed');
  t.regex(res.json.txHash, /^[0-9a-f]{64}$/);
  t.true(res.json.zkProof.generated && res.json.zkProof.onChain);
  const pool = stack.sandbox.info.contracts.pool;
  t.is(await stack.usdcBalance(pool), 5n * USDC);
});

test.serial('wallet deposit: prepare → sign → submit → confirmed; withdraw to a destination', async (t) => {
  const wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 100);
  const token = await stack.login(wallet);
  const auth = { authorization: `Bearer ${token}` };
  const poolBefore = await stack.usdcBalance(stack.sandbox.info.contracts.pool);

  const prepared = await postJson(
    `${stack.proxy.url}/api/deposit/prepare`,
    { amount: '10.0000000', publicKey: wallet.publicKey() },
    auth,
  );
  t.is(prepared.status, 200, prepared.text);
  const tx = TransactionBuilder.fromXDR(prepared.json.transactionXDR, stack.config.ledger.networkPassphrase);
  tx.sign(wallet);
  const before = await getJson(`${stack.proxy.url}/api/balance/${wallet.publicKey()}`, auth);
  t.is(before.json.balance, '0.0000000');
  const submitted = await postJson(
    `${stack.proxy.url}/api/deposit/submit`,
    { prepareId: prepared.json.prepareId, signedTransactionXDR: tx.toXDR() },
    auth,
  );
  t.is(submitted.status, 200, submitted.text);
  t.is(submitted.json.status, 'confirmed');
  t.is(submitted.json.amount, '10.0000000');
  t.is(await stack.usdcBalance(stack.sandbox.info.contracts.pool), poolBefore + 10n * USDC);
  t.is(await stack.usdcBalance(wallet.publicKey()), 90n * USDC);
  const after = await getJson(`${stack.proxy.url}/api/balance/${wallet.publicKey()}`, auth);
  t.is(after.json.balance, '10.0000000');

  const destination = Keypair.random();
  await stack.fund(destination.publicKey(), 0);
  const withdrawn = await postJson(
    `${stack.proxy.url}/api/withdraw`,
    { amount: '3.5000000', destination: destination.publicKey() },
    auth,
  );
  t.is(withdrawn.status, 200, withdrawn.text);
  t.is(withdrawn.json.destination, destination.publicKey());
  t.is(await stack.usdcBalance(destination.publicKey()), 35_000_000n);
  const final = await getJson(`${stack.proxy.url}/api/balance/${wallet.publicKey()}`, auth);
  t.is(final.json.balance, '6.5000000');
});
