// End-to-end: the real sandbox ledger, the real prover daemon (native engine) and the proxy.
// Serial on purpose: every flow proves and settles on one ledger, and the machine has two cores.
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import {
  Address,
  Keypair,
  nativeToScVal,
  rpc,
  scValToNative,
  type Transaction,
  TransactionBuilder,
} from '@stellar/stellar-sdk';
import { ChainClient } from '../../src/proxy/services/chain-client.ts';
import { getJson, postJson, rawRequest, type RawResponse } from './helpers/http.ts';
import { type Stack, startStack, USDC } from './helpers/stack.ts';

/** The operator's token, the same for every proxy of the stack. */
let operator: Record<string, string>;
let stack: Stack;
let ledger: ChainClient;
test.before(async () => {
  stack = await startStack();
  operator = stack.operator;
  ledger = new ChainClient({
    rpcUrl: stack.sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    baseFee: 100,
    txTimeoutSeconds: 60,
    confirmTimeoutMs: 30_000,
  });
});
test.after.always(async () => {
  await stack?.close();
});

const url = (path: string) => `${stack.proxy.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const poolBalance = () => stack.usdcBalance(stack.sandbox.info.contracts.pool);

interface Wallet {
  kp: Keypair;
  token: string;
}

async function newWallet(usdc = 100): Promise<Wallet> {
  const kp = Keypair.random();
  await stack.fund(kp.publicKey(), usdc);
  return { kp, token: await stack.login(kp) };
}

async function balance(wallet: Wallet, agentId = wallet.kp.publicKey()): Promise<string> {
  const res = await getJson(url(`/api/balance/${agentId}`), bearer(wallet.token));
  // An agent exists from its first confirmed deposit on.
  if (res.status === 404 && res.json.code === 'not_found') return 'none';
  if (res.status !== 200) throw new Error(`balance: ${res.text}`);
  return res.json.balance;
}

async function prepare(wallet: Wallet, amount: string, agentId?: string): Promise<RawResponse> {
  return postJson(
    url('/api/deposit/prepare'),
    { amount, publicKey: wallet.kp.publicKey(), ...(agentId ? { agentId } : {}) },
    bearer(wallet.token),
  );
}

function signPrepared(xdrText: string, signer: Keypair): string {
  const tx = TransactionBuilder.fromXDR(xdrText, stack.config.ledger.networkPassphrase);
  tx.sign(signer);
  return tx.toXDR();
}

/** Prepares, retrying after `registration_pending` as a client does (Retry-After). */
async function prepareRetrying(wallet: Wallet, amount: string, agentId?: string): Promise<RawResponse> {
  for (;;) {
    const prepared = await prepare(wallet, amount, agentId);
    if (prepared.status !== 503 || prepared.json.code !== 'registration_pending') return prepared;
    await new Promise((r) => setTimeout(r, Number(prepared.headers['retry-after']) * 1000));
  }
}

async function deposit(wallet: Wallet, amount: string, agentId?: string): Promise<RawResponse> {
  const prepared = await prepareRetrying(wallet, amount, agentId);
  if (prepared.status !== 200) throw new Error(`prepare: ${prepared.text}`);
  return postJson(
    url('/api/deposit/submit'),
    {
      prepareId: prepared.json.prepareId,
      signedTransactionXDR: signPrepared(prepared.json.transactionXDR, wallet.kp),
    },
    bearer(wallet.token),
  );
}

async function withdraw(
  wallet: Wallet,
  amount: string,
  destination: string,
  agentId?: string,
): Promise<RawResponse> {
  return postJson(
    url('/api/withdraw'),
    { amount, destination, ...(agentId ? { agentId } : {}) },
    bearer(wallet.token),
  );
}

test.serial(
  'wallet deposit: confirmed with a real txHash; pool USDC rises; balance rises only after confirmation',
  async (t) => {
    const wallet = await newWallet(100);
    const poolBefore = await poolBalance();
    const prepared = await prepare(wallet, '12.3456789');
    t.is(prepared.status, 200, prepared.text);
    t.regex(prepared.json.prepareId, /^[0-9a-f-]{36}$/);
    t.is(
      await balance(wallet),
      'none',
      'nothing recorded at prepare: the agent exists once a deposit confirms',
    );
    t.is(await poolBalance(), poolBefore, 'nothing moved at prepare');

    const submitted = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: prepared.json.prepareId,
        signedTransactionXDR: signPrepared(prepared.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    t.is(submitted.status, 200, submitted.text);
    t.is(submitted.json.status, 'confirmed');
    t.is(submitted.json.amount, '12.3456789');
    t.true(
      submitted.json.zkProof.generated && submitted.json.zkProof.onChain && submitted.json.zkProof.timeMs > 0,
    );
    const onChain = await stack.server.getTransaction(submitted.json.txHash);
    t.is(onChain.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await poolBalance(), poolBefore + 123_456_789n);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 100n * USDC - 123_456_789n);
    t.is(await balance(wallet), '12.3456789');

    const replay = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: prepared.json.prepareId,
        signedTransactionXDR: signPrepared(prepared.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    // Submitting it again answers what happened: the same confirmed transaction, credited once.
    t.is(replay.status, 200, replay.text);
    t.is(replay.json.status, 'confirmed');
    t.is(replay.json.txHash, submitted.json.txHash);
    t.is(await balance(wallet), '12.3456789');
    t.is(await poolBalance(), poolBefore + 123_456_789n, 'sent once');
  },
);

test.serial(
  'wallet deposit refusals credit nothing: changed envelope, wrong signer, other wallet, reverted on the ledger',
  async (t) => {
    const wallet = await newWallet(50);
    const other = await newWallet(10);
    const poolBefore = await poolBalance();

    const unfunded = await prepare(wallet, '60');
    t.is(unfunded.status, 422);
    t.is(unfunded.json.code, 'ledger_rejected');
    t.regex(unfunded.json.detail, /holds 50\.0000000 USDC/);
    const first = await prepare(wallet, '5');
    const second = await prepare(wallet, '7');
    t.is(first.status, 200, first.text);
    // The envelope of another prepared deposit (different amount and proof) under this prepareId.
    const swapped = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: first.json.prepareId,
        signedTransactionXDR: signPrepared(second.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    t.is(swapped.status, 422);
    t.is(swapped.json.code, 'prepare_mismatch');
    // Same operations, higher fee.
    const tx = TransactionBuilder.fromXDR(
      first.json.transactionXDR,
      stack.config.ledger.networkPassphrase,
    ) as Transaction;
    const bumped = TransactionBuilder.cloneFrom(tx, { fee: String(Number(tx.fee) + 1000) }).build();
    bumped.sign(wallet.kp);
    const changedFee = await postJson(
      url('/api/deposit/submit'),
      { prepareId: first.json.prepareId, signedTransactionXDR: bumped.toXDR() },
      bearer(wallet.token),
    );
    t.is(changedFee.status, 422);
    // Signed by another key.
    const wrongSigner = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: first.json.prepareId,
        signedTransactionXDR: signPrepared(first.json.transactionXDR, other.kp),
      },
      bearer(wallet.token),
    );
    t.is(wrongSigner.status, 422);
    t.regex(wrongSigner.json.detail, /signature/);
    // Another wallet using this wallet's prepareId.
    const foreign = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: first.json.prepareId,
        signedTransactionXDR: signPrepared(first.json.transactionXDR, wallet.kp),
      },
      bearer(other.token),
    );
    t.is(foreign.status, 404, 'another wallet’s prepareId answers like an unknown one');
    t.is(foreign.json.detail, 'unknown prepareId');
    // Unknown prepareId.
    const unknown = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: '00000000-0000-4000-8000-000000000000',
        signedTransactionXDR: signPrepared(first.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    t.is(unknown.status, 404);
    t.is(await balance(wallet), 'none');
    t.is(await poolBalance(), poolBefore);

    // Reverted on the ledger: the wallet spends its USDC elsewhere between prepare and submit.
    const drained = await prepare(wallet, '40');
    t.is(drained.status, 200, drained.text);
    const sink = Keypair.random().publicKey();
    await stack.fund(sink, 0);
    await ledger.invokeAndConfirm(wallet.kp, stack.sandbox.info.contracts.token, 'transfer', [
      new Address(wallet.kp.publicKey()).toScVal(),
      new Address(sink).toScVal(),
      nativeToScVal(45n * USDC, { type: 'i128' }),
    ]);
    const reverted = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: drained.json.prepareId,
        signedTransactionXDR: signPrepared(drained.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    t.is(reverted.status, 422, reverted.text);
    t.is(reverted.json.code, 'ledger_rejected');
    t.is(await balance(wallet), 'none');
    t.is(await poolBalance(), poolBefore);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 5n * USDC);
    // The two prepared deposits left are cancelled: their promised roots would hold the next new agent's
    // registration until the registration slot.
    for (const { json } of [first, second]) {
      const cancelled = await rawRequest(url(`/api/deposit/prepare/${json.prepareId}`), {
        method: 'DELETE',
        headers: bearer(wallet.token),
      });
      t.is(cancelled.status, 200, cancelled.text);
    }
  },
);

test.serial(
  'a deposit the wallet sent itself is confirmed by submit, credited once (and again on a second submit)',
  async (t) => {
    const wallet = await newWallet(10);
    const poolBefore = await poolBalance();
    const prepared = await prepareRetrying(wallet, '3');
    t.is(prepared.status, 200, prepared.text);
    const signed = signPrepared(prepared.json.transactionXDR, wallet.kp);
    // The wallet sends it through the RPC itself, and it lands.
    const sent = await stack.server.sendTransaction(
      TransactionBuilder.fromXDR(signed, stack.config.ledger.networkPassphrase),
    );
    t.is(sent.status, 'PENDING', JSON.stringify(sent));
    const landed = await stack.server.pollTransaction(sent.hash, { attempts: 60 });
    t.is(landed.status, rpc.Api.GetTransactionStatus.SUCCESS);
    for (let i = 0; i < 2; i++) {
      const submitted = await postJson(
        url('/api/deposit/submit'),
        { prepareId: prepared.json.prepareId, signedTransactionXDR: signed },
        bearer(wallet.token),
      );
      t.is(submitted.status, 200, submitted.text);
      t.is(submitted.json.status, 'confirmed');
      t.is(submitted.json.txHash, sent.hash);
    }
    t.is(await balance(wallet), '3.0000000', 'credited once');
    t.is(await poolBalance(), poolBefore + 3n * USDC);
    // A tampered envelope is still refused, landed or not.
    const other = Keypair.random();
    const tampered = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: prepared.json.prepareId,
        signedTransactionXDR: signPrepared(prepared.json.transactionXDR, other),
      },
      bearer(wallet.token),
    );
    t.is(tampered.status, 422, tampered.text);
  },
);

test.serial('an expired prepareId is refused with prepare_expired, whoever noticed first', async (t) => {
  // the proxy's clock runs `skipped` ms ahead of the real one: its TTL passes without a wait
  let skipped = 0;
  const { proxy } = await stack.startProxy(
    {
      POOL_PROXY_PREPARE_TTL_SECONDS: '10',
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'short-ttl'),
      POOL_PROXY_RECONCILE_INTERVAL_MS: '200',
    },
    { clock: () => Date.now() + skipped },
  );
  try {
    const kp = Keypair.random();
    await stack.fund(kp.publicKey(), 10);
    const token = await stack.login(kp, proxy.url);
    const prepared = await postJson(
      `${proxy.url}/api/deposit/prepare`,
      { amount: '1', publicKey: kp.publicKey() },
      bearer(token),
    );
    t.is(prepared.status, 200, prepared.text);
    // Until its TTL the deposit may still be sent while no registration replaced its root; after it, never.
    const ttlEnd = Date.now() + 10_000;
    const expiresAt = Date.parse(prepared.json.expiresAt);
    t.true(expiresAt <= ttlEnd);
    // A second prepared deposit of the same wallet, which reconciliation (every 200 ms here) will find expired.
    const other = await postJson(
      `${proxy.url}/api/deposit/prepare`,
      { amount: '2', publicKey: kp.publicKey() },
      bearer(token),
    );
    t.is(other.status, 200, other.text);
    skipped = ttlEnd - Date.now() + 10_500;
    const submit = (p: { prepareId: string; transactionXDR: string }) =>
      postJson(
        `${proxy.url}/api/deposit/submit`,
        { prepareId: p.prepareId, signedTransactionXDR: signPrepared(p.transactionXDR, kp) },
        bearer(token),
      );
    // noticed at submit, then asked again: the same answer
    for (const late of [await submit(prepared.json), await submit(prepared.json)]) {
      t.is(late.status, 410, late.text);
      t.is(late.json.code, 'prepare_expired');
    }
    // noticed by reconciliation first: the same answer
    await new Promise((r) => setTimeout(r, 1000));
    for (const late of [await submit(other.json), await submit(other.json)]) {
      t.is(late.status, 410, late.text);
      t.is(late.json.code, 'prepare_expired');
    }
    const read = await getJson(`${proxy.url}/api/balance/${kp.publicKey()}`, bearer(token));
    t.is(read.status, 404, 'an abandoned prepare leaves no agent behind');
    t.is(await stack.usdcBalance(kp.publicKey()), 10n * USDC, 'nothing moved');
  } finally {
    await proxy.close();
  }
});

test.serial(
  'a prepared deposit the wallet will not sign is cancelled (DELETE); replayed, foreign, malformed and unauthorised cancels change nothing',
  async (t) => {
    const wallet = await newWallet(10);
    const other = await newWallet(0);
    const poolBefore = await poolBalance();
    const cancel = (prepareId: string, headers: Record<string, string>) =>
      rawRequest(url(`/api/deposit/prepare/${prepareId}`), { method: 'DELETE', headers });
    const prepared = await prepare(wallet, '2');
    t.is(prepared.status, 200, prepared.text);
    const id: string = prepared.json.prepareId;

    t.is((await cancel(id, {})).status, 401, 'no token');
    t.is((await cancel(id, { authorization: 'Bearer a.b.c' })).status, 401, 'a bad token');
    const foreign = await cancel(id, bearer(other.token));
    t.is(foreign.status, 404, "another wallet's prepareId answers like an unknown one");
    t.is(foreign.json.code, 'not_found');
    t.is((await cancel(randomUUID(), bearer(wallet.token))).status, 404);
    for (const bad of ['not-a-uuid', id.toUpperCase(), `${id}0`, 'x'.repeat(300)]) {
      const res = await cancel(bad, bearer(wallet.token));
      t.is(res.status, 400, bad);
      t.is(res.json.code, 'invalid_request', bad);
    }

    const cancelled = await cancel(id, bearer(wallet.token));
    t.is(cancelled.status, 200, cancelled.text);
    t.deepEqual(cancelled.json, { prepareId: id, status: 'cancelled' });
    const replay = await cancel(id, bearer(wallet.token));
    t.deepEqual([replay.status, replay.json], [200, { prepareId: id, status: 'cancelled' }], 'same answer');

    // The cancelled prepareId can no longer be submitted, and nothing moved.
    const late = await postJson(
      url('/api/deposit/submit'),
      { prepareId: id, signedTransactionXDR: signPrepared(prepared.json.transactionXDR, wallet.kp) },
      bearer(wallet.token),
    );
    t.is(late.status, 409, late.text);
    t.is(late.json.code, 'prepare_cancelled');
    t.regex(late.json.detail, /cancelled/);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 10n * USDC);
    t.is(await poolBalance(), poolBefore);
    t.is(await balance(wallet), 'none', 'no agent behind a cancelled deposit');

    // A deposit already submitted can no longer be cancelled.
    const next = await prepare(wallet, '1');
    const submitted = await postJson(
      url('/api/deposit/submit'),
      {
        prepareId: next.json.prepareId,
        signedTransactionXDR: signPrepared(next.json.transactionXDR, wallet.kp),
      },
      bearer(wallet.token),
    );
    t.is(submitted.status, 200, submitted.text);
    const tooLate = await cancel(next.json.prepareId, bearer(wallet.token));
    t.is(tooLate.status, 409);
    t.is(tooLate.json.code, 'conflict');
    t.is(await balance(wallet), '1.0000000');
  },
);

/** A same-host TCP forwarder to the proxy (what a reverse proxy, SSH tunnel or port forward is to it). */
async function forwarder(target: string): Promise<{ url: string; close: () => void }> {
  const { port, hostname } = new URL(target);
  const server = createNetServer((inbound) => {
    const outbound = connect(Number(port), hostname);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: local } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${local}`, close: () => server.close() };
}

test.serial(
  'operator rights come from the operator token only: through a same-host forwarder nothing without it',
  async (t) => {
    // Every caller of a forwarder on this host is loopback to the proxy: it must not matter.
    const relay = await forwarder(stack.proxy.url);
    t.teardown(relay.close);
    const via = (path: string) => `${relay.url}${path}`;
    const poolBefore = await poolBalance();
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const asOperator = { 'x-pool-operator': 'true' };
    const refused = [
      await postJson(via('/api/deposit'), { agentId: 'mcp-agent-7', amount: '2.5' }),
      await getJson(via('/api/operator/books')),
      await getJson(via('/metrics')),
      await getJson(via('/api/balance/mcp-agent-7'), asOperator),
      await postJson(via('/api/withdraw'), { amount: '1', destination, agentId: 'mcp-agent-7' }, asOperator),
      await postJson(
        via('/api/deposit'),
        { agentId: 'mcp-agent-7', amount: '2.5' },
        { authorization: `Bearer ppo_${'A'.repeat(43)}` },
      ),
    ];
    for (const res of refused) {
      t.is(res.status, 401, res.text);
      t.is(res.json.code, 'unauthorized');
    }
    // A wallet's token is not the operator's either.
    const wallet = await newWallet(0);
    const walletDeposit = await postJson(
      via('/api/deposit'),
      { agentId: 'mcp-agent-7', amount: '2.5' },
      bearer(wallet.token),
    );
    t.is(walletDeposit.status, 403, walletDeposit.text);
    t.is(await poolBalance(), poolBefore, 'nothing moved');

    // With the token the operator deposits for its agent, reads and spends it (through the forwarder too: the
    // token decides, not the path).
    const res = await postJson(via('/api/deposit'), { agentId: 'mcp-agent-7', amount: '2.5' }, operator);
    t.is(res.status, 200, res.text);
    t.is(res.json.status, 'confirmed');
    t.regex(res.json.txHash, /^[0-9a-f]{64}$/);
    t.is(await poolBalance(), poolBefore + 25_000_000n);
    const read = await getJson(url('/api/balance/mcp-agent-7'), operator);
    t.is(read.status, 200, read.text);
    t.is(read.json.balance, '2.5000000');
    const unnamed = await postJson(url('/api/withdraw'), { amount: '1', destination }, operator);
    t.is(unnamed.status, 400);
    const spent = await postJson(
      url('/api/withdraw'),
      { amount: '1', destination, agentId: 'mcp-agent-7' },
      operator,
    );
    t.is(spent.status, 200, spent.text);
    t.is(await stack.usdcBalance(destination), 10_000_000n);
    t.is((await getJson(url('/api/balance/mcp-agent-7'), operator)).json.balance, '1.5000000');
    t.is((await getJson(via('/api/operator/books'), operator)).status, 200);
  },
);

test.serial(
  'withdraw: destination receives USDC, notes spent, change kept, balance falls only after confirmation',
  async (t) => {
    const wallet = await newWallet(100);
    t.is((await deposit(wallet, '20')).status, 200);
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const poolBefore = await poolBalance();
    const res = await withdraw(wallet, '7.25', destination);
    t.is(res.status, 200, res.text);
    t.is(res.json.status, 'confirmed');
    t.is(res.json.amount, '7.2500000');
    t.is(res.json.destination, destination);
    t.is((await stack.server.getTransaction(res.json.txHash)).status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await stack.usdcBalance(destination), 72_500_000n);
    t.is(await poolBalance(), poolBefore - 72_500_000n);
    t.is(await balance(wallet), '12.7500000');
    // The change note is spendable: withdraw it all.
    const rest = await withdraw(wallet, '12.75', destination);
    t.is(rest.status, 200, rest.text);
    t.is(await balance(wallet), '0.0000000');
    t.is(await stack.usdcBalance(destination), 200_000_000n);
  },
);

test.serial('insufficient balance → insufficient_balance and nothing changes', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '3')).status, 200);
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const poolBefore = await poolBalance();
  const res = await withdraw(wallet, '3.0000001', destination);
  t.is(res.status, 409);
  t.is(res.json.code, 'insufficient_balance');
  t.is(await balance(wallet), '3.0000000');
  t.is(await poolBalance(), poolBefore);
  t.is(await stack.usdcBalance(destination), 0n);
  // An agent that never deposited.
  const none = await withdraw(wallet, '1', destination, 'never-used-agent');
  t.is(none.status, 404);
  t.is(none.json.code, 'not_found');
});

test.serial('10 concurrent withdrawals against one balance never overdraw', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '5')).status, 200);
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const results = await Promise.all(Array.from({ length: 10 }, () => withdraw(wallet, '2', destination)));
  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 409);
  t.is(ok.length, 2, results.map((r) => r.status).join(','));
  t.is(refused.length, 8);
  t.true(refused.every((r) => r.json.code === 'insufficient_balance'));
  t.is(await stack.usdcBalance(destination), 40_000_000n);
  t.is(await balance(wallet), '1.0000000');
});

test.serial('a withdrawal that needs more than two notes consolidates first', async (t) => {
  const wallet = await newWallet(20);
  for (const amount of ['1', '2', '3']) t.is((await deposit(wallet, amount)).status, 200);
  t.is(await balance(wallet), '6.0000000');
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const metricsBefore = (await getJson(url('/metrics'), operator)).text;
  const res = await withdraw(wallet, '5.5', destination);
  t.is(res.status, 200, res.text);
  t.is(await stack.usdcBalance(destination), 55_000_000n);
  t.is(await balance(wallet), '0.5000000');
  const count = (text: string) =>
    Number(
      /pool_proxy_ledger_operations_total\{kind="consolidate",outcome="confirmed"\} (\d+)/.exec(text)?.[1] ??
        0,
    );
  t.is(count((await getJson(url('/metrics'), operator)).text) - count(metricsBefore), 1);
});

test.serial(
  "agents belong to their owner: another's agent answers like a missing one, and its name is free to use",
  async (t) => {
    const alice = await newWallet(10);
    const bob = await newWallet(10);
    const carol = await newWallet(10);
    t.is((await deposit(alice, '1', 'alice-bot')).status, 200);
    t.is(await balance(alice, 'alice-bot'), '1.0000000');
    // Bob reading Alice's agent gets exactly what he gets for a name nobody uses (no existence oracle).
    const foreign = await getJson(url('/api/balance/alice-bot'), bearer(bob.token));
    const missing = await getJson(url('/api/balance/nobody-bot'), bearer(bob.token));
    t.is(foreign.status, 404);
    t.is(foreign.json.code, 'not_found');
    t.deepEqual(
      JSON.parse(foreign.text.replaceAll('alice-bot', 'X')),
      JSON.parse(missing.text.replaceAll('nobody-bot', 'X')),
    );
    const operatorRead = await getJson(url('/api/balance/alice-bot'), operator);
    t.is(operatorRead.status, 404, 'not the operator’s either');
    t.is((await withdraw(bob, '1', bob.kp.publicKey(), 'alice-bot')).status, 404);

    // The same name is a different agent for another owner: Bob's and the operator's "alice-bot".
    t.is((await deposit(bob, '2', 'alice-bot')).status, 200);
    t.is(await balance(bob, 'alice-bot'), '2.0000000');
    t.is(
      (await postJson(url('/api/deposit'), { agentId: 'alice-bot', amount: '0.5' }, operator)).status,
      200,
    );
    t.is((await getJson(url('/api/balance/alice-bot'), operator)).json.balance, '0.5000000');
    t.is(await balance(alice, 'alice-bot'), '1.0000000', 'Alice’s agent is untouched');

    // Bob naming Carol's address as an agent id does not take Carol's own default agent.
    t.is((await deposit(bob, '1', carol.kp.publicKey())).status, 200);
    t.is((await deposit(carol, '3')).status, 200);
    t.is(await balance(carol), '3.0000000');
    t.is(await balance(bob, carol.kp.publicKey()), '1.0000000');

    // publicKey in the prepare body must be the token's wallet.
    const spoofed = await postJson(
      url('/api/deposit/prepare'),
      { amount: '1', publicKey: alice.kp.publicKey() },
      bearer(bob.token),
    );
    t.is(spoofed.status, 403);
    const list = await getJson(url('/api/agents'), bearer(bob.token));
    t.deepEqual(
      list.json.agents.map((a: { agentId: string }) => a.agentId).sort(),
      ['alice-bot', carol.kp.publicKey()].sort(),
    );
  },
);

test.serial(
  'a prepared deposit stays valid while five other wallets create agents (registrations wait for it)',
  async (t) => {
    // A proxy that holds a request for its registration slot 1 s only: a newcomer whose key is queued behind
    // the victim's promise is told so (503 registration_pending) instead of waiting unseen. That answer,
    // received by all five before the victim submits, and the allowlist's events on the chain (no key added
    // from the victim's prepare until its deposit landed) prove the race was run, whatever the timing.
    const { proxy } = await stack.startProxy({
      POOL_PROXY_REGISTRATION_HOLD_SECONDS: '1',
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'short-hold'),
    });
    try {
      const at = (path: string) => `${proxy.url}${path}`;
      const wallet = async (): Promise<Wallet> => {
        const kp = Keypair.random();
        await stack.fund(kp.publicKey(), 10);
        return { kp, token: await stack.login(kp, proxy.url) };
      };
      const prepareAt = (w: Wallet, amount: string, agentId?: string) =>
        postJson(
          at('/api/deposit/prepare'),
          { amount, publicKey: w.kp.publicKey(), ...(agentId ? { agentId } : {}) },
          bearer(w.token),
        );
      const submitAt = (w: Wallet, prepared: RawResponse) =>
        postJson(
          at('/api/deposit/submit'),
          {
            prepareId: prepared.json.prepareId,
            signedTransactionXDR: signPrepared(prepared.json.transactionXDR, w.kp),
          },
          bearer(w.token),
        );
      const balanceAt = async (w: Wallet, agentId: string) =>
        (await getJson(at(`/api/balance/${agentId}`), bearer(w.token))).json.balance;

      const victim = await wallet();
      const others = await Promise.all(Array.from({ length: 5 }, () => wallet()));
      // (the victim is new too: its own key is added before its proof)
      const prepared = await prepareAt(victim, '2');
      t.is(prepared.status, 200, prepared.text);
      const fromLedger = (await stack.server.getLatestLedger()).sequence + 1;

      // Each newcomer prepares until its key is queued and held back (503), then waits for the victim's
      // submit and prepares again until its key is in the allowlist.
      let victimSubmitted!: () => void;
      const afterVictim = new Promise<void>((resolve) => (victimSubmitted = resolve));
      const queued: Promise<void>[] = [];
      const pending = others.map((w, i) => {
        let told!: () => void;
        queued.push(new Promise<void>((resolve) => (told = resolve)));
        return (async () => {
          const first = await prepareAt(w, '1', `newcomer-${i}`);
          if (first.status !== 503 || first.json.code !== 'registration_pending') {
            told();
            return first;
          }
          told();
          await afterVictim;
          for (;;) {
            const again = await prepareAt(w, '1', `newcomer-${i}`);
            if (again.status !== 503 || again.json.code !== 'registration_pending') return again;
          }
        })();
      });
      await Promise.all(queued);
      const early = await Promise.all(pending.map((p) => Promise.race([p, Promise.resolve(undefined)])));
      t.deepEqual(
        early.map((r) => r?.status),
        [undefined, undefined, undefined, undefined, undefined],
        'every newcomer was held back by the victim’s prepared deposit (503 registration_pending)',
      );

      const submitted = await submitAt(victim, prepared);
      victimSubmitted();
      t.is(submitted.status, 200, submitted.text);
      t.is(await balanceAt(victim, victim.kp.publicKey()), '2.0000000');
      const preparedOthers = await Promise.all(pending);
      for (const p of preparedOthers) t.is(p.status, 200, p.text);
      const results = await Promise.all(others.map((w, i) => submitAt(w, preparedOthers[i]!)));
      t.deepEqual(
        results.map((r) => r.status),
        [200, 200, 200, 200, 200],
        results.map((r) => r.text).join('\n'),
      );
      for (const [i, w] of others.entries()) t.is(await balanceAt(w, `newcomer-${i}`), '1.0000000');

      // On the chain: no allowlist key was added between the victim's proof and its deposit; the five
      // newcomers' keys were added after it.
      const landed = await stack.server.getTransaction(submitted.json.txHash);
      if (landed.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error('victim deposit not found');
      const victimLedger = landed.ledger;
      const { events } = await stack.server.getEvents({
        startLedger: fromLedger,
        filters: [{ type: 'contract', contractIds: [stack.sandbox.info.contracts.asp_membership] }],
        limit: 1000,
      });
      const added = events.filter((e) => scValToNative(e.topic[0]!) === 'LeafAdded').map((e) => e.ledger);
      t.deepEqual(
        added.filter((ledger) => ledger <= victimLedger),
        [],
        'no registration replaced the root the victim proved against',
      );
      t.true(added.filter((ledger) => ledger > victimLedger).length >= 5, `keys added: ${added.join(', ')}`);
    } finally {
      await proxy.close();
    }
  },
);

test.serial(
  'deposits prepared side by side land in any order (their footprint covers the shifted tree writes)',
  async (t) => {
    const wallets = await Promise.all([newWallet(5), newWallet(5), newWallet(5)]);
    // first deposits register the agents; then three prepares at once, submitted in reverse order
    for (const w of wallets) t.is((await deposit(w, '1')).status, 200);
    const prepared = await Promise.all(wallets.map((w) => prepare(w, '1')));
    for (const p of prepared) t.is(p.status, 200, p.text);
    for (let i = wallets.length - 1; i >= 0; i--) {
      const w = wallets[i]!;
      const submitted = await postJson(
        url('/api/deposit/submit'),
        {
          prepareId: prepared[i]!.json.prepareId,
          signedTransactionXDR: signPrepared(prepared[i]!.json.transactionXDR, w.kp),
        },
        bearer(w.token),
      );
      t.is(submitted.status, 200, submitted.text);
    }
    for (const w of wallets) t.is(await balance(w), '2.0000000');
  },
);

test.serial('per-wallet bounds: concurrent prepares and new agents per hour answer 429', async (t) => {
  const { proxy } = await stack.startProxy({
    POOL_PROXY_WALLET_NEW_AGENTS_PER_HOUR: '1',
    POOL_PROXY_WALLET_CONCURRENT_PREPARES: '1',
    POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'quotas'),
  });
  try {
    const kp = Keypair.random();
    await stack.fund(kp.publicKey(), 10);
    const auth = bearer(await stack.login(kp, proxy.url));
    const prep = (agentId: string) =>
      postJson(`${proxy.url}/api/deposit/prepare`, { amount: '1', publicKey: kp.publicKey(), agentId }, auth);
    const [a, b] = await Promise.all([prep('quota-a'), prep('quota-a')]);
    t.deepEqual([a.status, b.status].sort(), [200, 429], `${a.text}\n${b.text}`);
    const limited = a.status === 429 ? a : b;
    t.is(limited.json.code, 'rate_limited');
    t.truthy(limited.headers['retry-after']);
    const second = await prep('quota-b');
    t.is(second.status, 429, second.text);
    t.regex(second.json.detail, /new agents/);
    t.is((await prep('quota-a')).status, 200, 'an agent already registered is not new');
  } finally {
    await proxy.close();
  }
});

test.serial('pool stats and info are public and hold aggregates only', async (t) => {
  const stats = await getJson(url('/api/pool/stats'));
  t.is(stats.status, 200);
  t.deepEqual(Object.keys(stats.json).sort(), [
    'activeAgents',
    'recentBatches',
    'servicesUsed',
    'totalTransactions',
  ]);
  t.true(stats.json.activeAgents >= 5);
  t.true(stats.json.totalTransactions >= 10);
  t.false(stats.text.includes('alice-bot'));
  t.false(/G[A-Z2-7]{55}/.test(stats.text), 'no account addresses');
  const info = await getJson(url('/api/pool/info'));
  t.is(info.status, 200);
  t.is(info.json.contracts.pool, stack.sandbox.info.contracts.pool);
  t.is(info.json.networkPassphrase, 'Standalone Network ; February 2017');
  t.is(info.json.circuitId, 'policy_tx_2_2');
});

test.serial('every money endpoint refuses bad input with a clear 4xx', async (t) => {
  const wallet = await newWallet(1);
  const auth = bearer(wallet.token);
  const good = Keypair.random().publicKey();
  const badChecksum = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
  const endpoints: Array<{ path: string; body: Record<string, unknown>; headers: Record<string, string> }> = [
    { path: '/api/deposit/prepare', body: { amount: '1', publicKey: wallet.kp.publicKey() }, headers: auth },
    { path: '/api/deposit', body: { agentId: 'x', amount: '1' }, headers: operator },
    { path: '/api/withdraw', body: { amount: '1', destination: good }, headers: auth },
  ];
  for (const { path, body, headers } of endpoints) {
    const send = (payload: unknown, extra: Record<string, string> = {}) =>
      postJson(url(path), payload, { ...headers, ...extra });
    for (const amount of ['0', '-1', '1e3', '1.00000001', '100000.0000001', ' 1', 1, null]) {
      const res = await send({ ...body, amount });
      t.is(res.status, 400, `${path} amount ${JSON.stringify(amount)}`);
      t.is(res.json.code, 'invalid_request');
      t.is(res.json.errors[0].path, 'amount');
    }
    const unknownField = await send({ ...body, surprise: 1 });
    t.is(unknownField.status, 400);
    t.regex(unknownField.json.detail, /unknown field/);
    const malformed = await send('{"amount": "1",');
    t.is(malformed.status, 400);
    const wrongType = await rawPost(path, JSON.stringify(body), { ...headers, 'content-type': 'text/plain' });
    t.is(wrongType.status, 415);
    const oversized = await send({ ...body, pad: 'x'.repeat(70_000) });
    t.is(oversized.status, 413);
    const missing = await send({});
    t.is(missing.status, 400);
  }
  for (const [field, path, body, headers] of [
    ['publicKey', '/api/deposit/prepare', { amount: '1', publicKey: badChecksum }, auth],
    ['destination', '/api/withdraw', { amount: '1', destination: badChecksum }, auth],
    ['destination', '/api/withdraw', { amount: '1', destination: stack.sandbox.info.contracts.pool }, auth],
    ['agentId', '/api/deposit', { agentId: 'bad id', amount: '1' }, operator],
  ] as const) {
    const res = await postJson(url(path), body, headers);
    t.is(res.status, 400, `${path} ${field}`);
    t.is(res.json.errors[0].path, field);
  }
  const noToken = await postJson(url('/api/withdraw'), { amount: '1', destination: good });
  t.is(noToken.status, 401);
  const submitBad = await postJson(
    url('/api/deposit/submit'),
    { prepareId: 'not-a-uuid', signedTransactionXDR: 'AAAA' },
    auth,
  );
  t.is(submitBad.status, 400);
  const submitGarbage = await postJson(
    url('/api/deposit/submit'),
    { prepareId: '00000000-0000-4000-8000-000000000000', signedTransactionXDR: 'AAAAAAAA' },
    auth,
  );
  t.true(submitGarbage.status === 400 || submitGarbage.status === 404);
});

async function rawPost(path: string, body: string, headers: Record<string, string>): Promise<RawResponse> {
  const { rawRequest } = await import('./helpers/http.ts');
  return rawRequest(url(path), { method: 'POST', headers, body });
}

test.serial(
  'crash between submit and confirmation: the restarted proxy credits the deposit exactly once',
  async (t) => {
    const dataDir = join(stack.env.POOL_PROXY_DATA_DIR!, 'crash');
    const env = { ...process.env, ...stack.env, POOL_PROXY_DATA_DIR: dataDir };
    const child = await startChild(env);
    const kp = Keypair.random();
    await stack.fund(kp.publicKey(), 10);
    const token = await stack.login(kp, child.url);
    const prepared = await postJson(
      `${child.url}/api/deposit/prepare`,
      { amount: '4', publicKey: kp.publicKey() },
      bearer(token),
    );
    t.is(prepared.status, 200, prepared.text);
    const poolBefore = await poolBalance();

    await stack.sandbox.chain.stop(); // the ledger stops closing: the transaction stays pending
    const submit = postJson(
      `${child.url}/api/deposit/submit`,
      {
        prepareId: prepared.json.prepareId,
        signedTransactionXDR: signPrepared(prepared.json.transactionXDR, kp),
      },
      bearer(token),
    ).catch(() => undefined);
    // Wait until the proxy reports the transaction sent, then kill it before any confirmation.
    for (;;) {
      const metrics = await getJson(`${child.url}/metrics`, operator);
      if (/pool_proxy_transactions_in_flight 1/.test(metrics.text)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill();
    await submit;
    stack.sandbox.chain.start(250);
    const hash = TransactionBuilder.fromXDR(
      signPrepared(prepared.json.transactionXDR, kp),
      stack.config.ledger.networkPassphrase,
    ).hash();
    await ledger.waitFor(Buffer.from(hash).toString('hex'));
    t.is(await poolBalance(), poolBefore + 4n * USDC);

    for (let restart = 0; restart < 2; restart++) {
      const again = await startChild(env);
      try {
        const tokenAgain = await stack.login(kp, again.url);
        const read = await getJson(`${again.url}/api/balance/${kp.publicKey()}`, bearer(tokenAgain));
        t.is(read.json.balance, '4.0000000', `restart ${restart}`);
      } finally {
        again.kill();
      }
    }
  },
);

test.serial(
  'a crash during submit, before the send: the same signed transaction submitted again is sent and confirmed once',
  async (t) => {
    const env = {
      ...process.env,
      ...stack.env,
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'resend'),
    };
    // The proxy kills itself once the deposit is journaled as submitted, before it reaches the ledger.
    const child = await startChild({ ...env, POOL_PROXY_FAULT: 'wallet_deposit:before-send' });
    const kp = Keypair.random();
    await stack.fund(kp.publicKey(), 10);
    const prepared = await postJson(
      `${child.url}/api/deposit/prepare`,
      { amount: '4', publicKey: kp.publicKey() },
      bearer(await stack.login(kp, child.url)),
    );
    t.is(prepared.status, 200, prepared.text);
    const body = {
      prepareId: prepared.json.prepareId,
      signedTransactionXDR: signPrepared(prepared.json.transactionXDR, kp),
    };
    const poolBefore = await poolBalance();
    const died = await postJson(
      `${child.url}/api/deposit/submit`,
      body,
      bearer(await stack.login(kp, child.url)),
    ).catch(() => undefined);
    t.is(died, undefined, 'the proxy died during the submit');
    child.kill();
    t.is(await stack.usdcBalance(kp.publicKey()), 10n * USDC, 'nothing was sent');

    const again = await startChild(env);
    try {
      const token = await stack.login(kp, again.url);
      const resent = await postJson(`${again.url}/api/deposit/submit`, body, bearer(token));
      t.is(resent.status, 200, resent.text);
      t.is(resent.json.status, 'confirmed');
      const replay = await postJson(`${again.url}/api/deposit/submit`, body, bearer(token));
      t.is(replay.status, 200, replay.text);
      t.is(replay.json.txHash, resent.json.txHash);
      const read = await getJson(`${again.url}/api/balance/${kp.publicKey()}`, bearer(token));
      t.is(read.json.balance, '4.0000000');
      t.is(await poolBalance(), poolBefore + 4n * USDC, 'deposited once');
    } finally {
      again.kill();
    }
  },
);

test.serial(
  'a withdrawal whose confirmation times out stays reserved and is settled when it lands',
  async (t) => {
    const { proxy } = await stack.startProxy({
      POOL_PROXY_CONFIRM_TIMEOUT_MS: '1000',
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'uncertain'),
    });
    let stopped = false;
    try {
      const kp = Keypair.random();
      await stack.fund(kp.publicKey(), 10);
      const token = await stack.login(kp, proxy.url);
      const auth = bearer(token);
      const prepared = await postJson(
        `${proxy.url}/api/deposit/prepare`,
        { amount: '5', publicKey: kp.publicKey() },
        auth,
      );
      const submitted = await postJson(
        `${proxy.url}/api/deposit/submit`,
        {
          prepareId: prepared.json.prepareId,
          signedTransactionXDR: signPrepared(prepared.json.transactionXDR, kp),
        },
        auth,
      );
      t.is(submitted.status, 200, submitted.text);
      const destination = Keypair.random().publicKey();
      await stack.fund(destination, 0);
      const balanceOf = async () =>
        (await getJson(`${proxy.url}/api/balance/${kp.publicKey()}`, auth)).json.balance;

      await stack.sandbox.chain.stop();
      stopped = true;
      const late = await postJson(`${proxy.url}/api/withdraw`, { amount: '2', destination }, auth);
      t.is(late.status, 503, late.text);
      t.regex(late.json.txHash, /^[0-9a-f]{64}$/);
      t.is(await balanceOf(), '3.0000000', 'the 2 USDC stay reserved while the outcome is unknown');
      const again = await postJson(`${proxy.url}/api/withdraw`, { amount: '3.5', destination }, auth);
      t.is(again.status, 409, 'the held amount cannot be spent twice');

      stack.sandbox.chain.start(250);
      stopped = false;
      await ledger.waitFor(late.json.txHash);
      t.is(await stack.usdcBalance(destination), 20_000_000n);
      let settled = await balanceOf();
      for (let i = 0; i < 200 && settled !== '3.0000000'; i++) settled = await balanceOf();
      t.is(settled, '3.0000000');
      // The change note becomes spendable once the indexer applies the landed spend.
      let rest = await postJson(`${proxy.url}/api/withdraw`, { amount: '3', destination }, auth);
      for (let i = 0; i < 20 && rest.status === 409; i++) {
        await new Promise((r) => setTimeout(r, 250));
        rest = await postJson(`${proxy.url}/api/withdraw`, { amount: '3', destination }, auth);
      }
      t.is(rest.status, 200, rest.text);
      t.is(await balanceOf(), '0.0000000');
    } finally {
      if (stopped) stack.sandbox.chain.start(250);
      await proxy.close();
    }
  },
);

test.serial(
  'recovery: an empty store with the master key rebuilds every agent, its notes and balance from the chain',
  async (t) => {
    const alice = await newWallet(10);
    t.is((await deposit(alice, '3', 'alice-recovery')).status, 200);
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    t.is((await withdraw(alice, '1', destination, 'alice-recovery')).status, 200);
    t.is(
      (await postJson(url('/api/deposit'), { agentId: 'mcp-recovery', amount: '1.5' }, operator)).status,
      200,
    );
    const bob = await newWallet(1);

    const { proxy } = await stack.startProxy({
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'recovered'),
    });
    try {
      const aliceToken = await stack.login(alice.kp, proxy.url);
      const read = await getJson(`${proxy.url}/api/balance/alice-recovery`, bearer(aliceToken));
      t.is(read.status, 200, read.text);
      t.is(read.json.balance, '2.0000000');
      const bobToken = await stack.login(bob.kp, proxy.url);
      t.is(
        (await getJson(`${proxy.url}/api/balance/alice-recovery`, bearer(bobToken))).status,
        404,
        'ownership recovered too',
      );
      // The recovered notes are spendable, and the operator agent's deposit is there.
      const spend = await postJson(
        `${proxy.url}/api/withdraw`,
        { amount: '2', destination, agentId: 'alice-recovery' },
        bearer(aliceToken),
      );
      t.is(spend.status, 200, spend.text);
      t.is(await stack.usdcBalance(destination), 30_000_000n);
      const stats = await getJson(`${proxy.url}/api/pool/stats`);
      t.true(stats.json.activeAgents >= 2);
    } finally {
      await proxy.close();
    }
  },
);

test.serial('the raw LevelDB files hold no agent id, wallet address or amount in plaintext', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '6.4321987', 'plaintext-probe-agent')).status, 200);
  const storeDir = stack.config.storeDir;
  const blob = Buffer.concat(
    readdirSync(storeDir)
      .map((f) => join(storeDir, f))
      .filter((f) => statSync(f).isFile())
      .map((f) => readFileSync(f)),
  );
  t.true(blob.length > 10_000);
  for (const needle of [
    'plaintext-probe-agent',
    wallet.kp.publicKey(),
    '6.4321987',
    '64321987',
    'mcp-agent-7',
    'alice-bot',
  ]) {
    t.is(blob.indexOf(Buffer.from(needle)), -1, needle);
  }
});

async function startChild(env: NodeJS.ProcessEnv): Promise<{ url: string; kill: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import=tsx', join(import.meta.dirname, 'helpers', 'proxy-child.ts')],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line).url));
    child.once('exit', (code) => reject(new Error(`proxy child exited with ${code}`)));
  });
  return { url, kill: () => child.kill('SIGKILL') };
}
