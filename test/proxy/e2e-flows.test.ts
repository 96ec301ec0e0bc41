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
} from '#stellar-sdk';
import type { PreparedDeposit } from '../../src/api/types.ts';
import { ChainClient } from '../../src/proxy/services/chain-client.ts';
import {
  outcomeOf,
  PoolApi,
  PoolApiError,
  refusalOf,
  refused,
  retryingRegistration,
  walletApi,
} from './helpers/api.ts';
import { getJson, postJson, problemOf, rawRequest } from './helpers/http.ts';
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
  /** the proxy's client for this wallet */
  api: PoolApi;
}

/** `kp` logged in on the first proxy, or on the one at `proxyUrl`. */
async function loggedIn(kp: Keypair, proxyUrl = stack.proxy.url): Promise<Wallet> {
  const token = await stack.login(kp, proxyUrl);
  return { kp, token, api: walletApi(proxyUrl, token) };
}

/** A funded wallet logged in on the first proxy, or on the one at `proxyUrl`. */
async function newWallet(usdc = 100, proxyUrl = stack.proxy.url): Promise<Wallet> {
  const kp = Keypair.random();
  await stack.fund(kp.publicKey(), usdc);
  return loggedIn(kp, proxyUrl);
}

/** An agent's balance through `api`; 'none' while it does not exist (its first confirmed deposit makes it). */
async function balanceVia(api: PoolApi, agentId: string): Promise<string> {
  try {
    return (await api.balance(agentId)).balance;
  } catch (error) {
    if (error instanceof PoolApiError && error.status === 404 && error.code === 'not_found') return 'none';
    throw error;
  }
}

function balance(wallet: Wallet, agentId = wallet.kp.publicKey()): Promise<string> {
  return balanceVia(wallet.api, agentId);
}

function prepare(wallet: Wallet, amount: string, agentId?: string): Promise<PreparedDeposit> {
  return wallet.api.prepareDeposit({
    amount,
    publicKey: wallet.kp.publicKey(),
    ...(agentId ? { agentId } : {}),
  });
}

function signPrepared(xdrText: string, signer: Keypair): string {
  const tx = TransactionBuilder.fromXDR(xdrText, stack.config.ledger.networkPassphrase);
  tx.sign(signer);
  return tx.toXDR();
}

/** Submits `prepared` signed by `signer` (the wallet's own key unless a test says otherwise). */
function submit(wallet: Wallet, prepared: PreparedDeposit, signer = wallet.kp) {
  return wallet.api.submitDeposit({
    prepareId: prepared.prepareId,
    signedTransactionXDR: signPrepared(prepared.transactionXDR, signer),
  });
}

/** Prepares, retrying after `registration_pending` as a client does (Retry-After). */
function prepareRetrying(wallet: Wallet, amount: string, agentId?: string): Promise<PreparedDeposit> {
  return retryingRegistration(() => prepare(wallet, amount, agentId));
}

async function deposit(wallet: Wallet, amount: string, agentId?: string) {
  return submit(wallet, await prepareRetrying(wallet, amount, agentId));
}

function withdraw(wallet: Wallet, amount: string, destination: string, agentId?: string) {
  return wallet.api.withdraw({ amount, destination, ...(agentId ? { agentId } : {}) });
}

test.serial(
  'wallet deposit: confirmed with a real txHash; pool USDC rises; balance rises only after confirmation',
  async (t) => {
    const wallet = await newWallet(100);
    const poolBefore = await poolBalance();
    const prepared = await prepare(wallet, '12.3456789');
    t.regex(prepared.prepareId, /^[0-9a-f-]{36}$/);
    t.is(
      await balance(wallet),
      'none',
      'nothing recorded at prepare: the agent exists once a deposit confirms',
    );
    t.is(await poolBalance(), poolBefore, 'nothing moved at prepare');

    const submitted = await submit(wallet, prepared);
    t.is(submitted.status, 'confirmed');
    t.is(submitted.amount, '12.3456789');
    t.true(submitted.zkProof.generated && submitted.zkProof.onChain && (submitted.zkProof.timeMs ?? 0) > 0);
    const onChain = await stack.server.getTransaction(submitted.txHash);
    t.is(onChain.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await poolBalance(), poolBefore + 123_456_789n);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 100n * USDC - 123_456_789n);
    t.is(await balance(wallet), '12.3456789');

    const replay = await submit(wallet, prepared);
    // Submitting it again answers what happened: the same confirmed transaction, credited once.
    t.is(replay.status, 'confirmed');
    t.is(replay.txHash, submitted.txHash);
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

    const unfunded = await refused(t, prepare(wallet, '60'));
    t.is(unfunded.status, 422);
    t.is(unfunded.code, 'ledger_rejected');
    t.regex(unfunded.detail, /holds 50\.0000000 USDC/);
    const first = await prepare(wallet, '5');
    const second = await prepare(wallet, '7');
    // The envelope of another prepared deposit (different amount and proof) under this prepareId.
    const swapped = await refused(
      t,
      wallet.api.submitDeposit({
        prepareId: first.prepareId,
        signedTransactionXDR: signPrepared(second.transactionXDR, wallet.kp),
      }),
    );
    t.is(swapped.status, 422);
    t.is(swapped.code, 'prepare_mismatch');
    // Same operations, higher fee.
    const tx = TransactionBuilder.fromXDR(
      first.transactionXDR,
      stack.config.ledger.networkPassphrase,
    ) as Transaction;
    const bumped = TransactionBuilder.cloneFrom(tx, { fee: String(Number(tx.fee) + 1000) }).build();
    bumped.sign(wallet.kp);
    const changedFee = await refused(
      t,
      wallet.api.submitDeposit({ prepareId: first.prepareId, signedTransactionXDR: bumped.toXDR() }),
    );
    t.is(changedFee.status, 422);
    // Signed by another key.
    const wrongSigner = await refused(t, submit(wallet, first, other.kp));
    t.is(wrongSigner.status, 422);
    t.regex(wrongSigner.detail, /signature/);
    // Another wallet using this wallet's prepareId.
    const foreign = await refused(
      t,
      other.api.submitDeposit({
        prepareId: first.prepareId,
        signedTransactionXDR: signPrepared(first.transactionXDR, wallet.kp),
      }),
    );
    t.is(foreign.status, 404, 'another wallet’s prepareId answers like an unknown one');
    t.is(foreign.detail, 'unknown prepareId');
    // Unknown prepareId.
    const unknown = await refused(
      t,
      submit(wallet, { ...first, prepareId: '00000000-0000-4000-8000-000000000000' }),
    );
    t.is(unknown.status, 404);
    t.is(await balance(wallet), 'none');
    t.is(await poolBalance(), poolBefore);

    // Reverted on the ledger: the wallet spends its USDC elsewhere between prepare and submit.
    const drained = await prepare(wallet, '40');
    const sink = Keypair.random().publicKey();
    await stack.fund(sink, 0);
    await ledger.invokeAndConfirm(wallet.kp, stack.sandbox.info.contracts.token, 'transfer', [
      new Address(wallet.kp.publicKey()).toScVal(),
      new Address(sink).toScVal(),
      nativeToScVal(45n * USDC, { type: 'i128' }),
    ]);
    const reverted = await refused(t, submit(wallet, drained));
    t.is(reverted.status, 422, reverted.detail);
    t.is(reverted.code, 'ledger_rejected');
    t.is(await balance(wallet), 'none');
    t.is(await poolBalance(), poolBefore);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 5n * USDC);
    // The two prepared deposits left are cancelled: their promised roots would hold the next new agent's
    // registration until the registration slot.
    for (const { prepareId } of [first, second]) {
      t.is((await wallet.api.cancelDeposit(prepareId)).status, 'cancelled');
    }
  },
);

test.serial(
  'a deposit the wallet sent itself is confirmed by submit, credited once (and again on a second submit)',
  async (t) => {
    const wallet = await newWallet(10);
    const poolBefore = await poolBalance();
    const prepared = await prepareRetrying(wallet, '3');
    const signed = signPrepared(prepared.transactionXDR, wallet.kp);
    // The wallet sends it through the RPC itself, and it lands.
    const sent = await stack.server.sendTransaction(
      TransactionBuilder.fromXDR(signed, stack.config.ledger.networkPassphrase),
    );
    t.is(sent.status, 'PENDING', JSON.stringify(sent));
    const landed = await stack.server.pollTransaction(sent.hash, { attempts: 60 });
    t.is(landed.status, rpc.Api.GetTransactionStatus.SUCCESS);
    for (let i = 0; i < 2; i++) {
      const submitted = await wallet.api.submitDeposit({
        prepareId: prepared.prepareId,
        signedTransactionXDR: signed,
      });
      t.is(submitted.status, 'confirmed');
      t.is(submitted.txHash, sent.hash);
    }
    t.is(await balance(wallet), '3.0000000', 'credited once');
    t.is(await poolBalance(), poolBefore + 3n * USDC);
    // A tampered envelope is still refused, landed or not.
    const tampered = await refused(t, submit(wallet, prepared, Keypair.random()));
    t.is(tampered.status, 422, tampered.detail);
  },
);

test.serial('an expired prepareId is refused with prepare_expired, whoever noticed first', async (t) => {
  // the proxy's clock runs `skipped` ms ahead of the real one: its TTL passes without a wait
  let skipped = 0;
  const clock = () => Date.now() + skipped;
  const env = {
    POOL_PROXY_PREPARE_TTL_SECONDS: '10',
    POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'short-ttl'),
  };
  let { proxy } = await stack.startProxy(env, { clock });
  try {
    let w = await newWallet(10, proxy.url);
    const prepared = await prepare(w, '1');
    // Until its TTL the deposit may still be sent while no registration replaced its root; after it, never.
    const ttlEnd = Date.now() + 10_000;
    const expiresAt = Date.parse(prepared.expiresAt);
    t.true(expiresAt <= ttlEnd);
    // A second prepared deposit of the same wallet, which reconciliation will find expired, and one of another
    // wallet, which its cancel will.
    const other = await prepare(w, '2');
    const canceller = await newWallet(10, proxy.url);
    const abandoned = await prepare(canceller, '1');
    // past the last one's TTL (each prepare took its own proof time)
    skipped = 10_000 + 10_500;
    // noticed at submit, then asked again: the same answer
    for (const late of [await refused(t, submit(w, prepared)), await refused(t, submit(w, prepared))]) {
      t.is(late.status, 410, late.detail);
      t.is(late.code, 'prepare_expired');
    }
    // noticed at cancel: expired (not cancelled), and so it stays for a submit and a replayed cancel
    for (let i = 0; i < 2; i++) {
      t.deepEqual(await canceller.api.cancelDeposit(abandoned.prepareId), {
        prepareId: abandoned.prepareId,
        status: 'expired',
      });
    }
    t.is((await refused(t, submit(canceller, abandoned))).code, 'prepare_expired');
    // noticed by reconciliation first: a proxy reconciles its open operations before it is ready, so the one
    // started now over the same store has expired the other prepared deposit before any request reaches it
    // (a cancel answers `expired` for a deposit already expired)
    await proxy.close();
    ({ proxy } = await stack.startProxy(env, { clock }));
    w = await loggedIn(w.kp, proxy.url);
    t.deepEqual(await w.api.cancelDeposit(other.prepareId), {
      prepareId: other.prepareId,
      status: 'expired',
    });
    for (const late of [await refused(t, submit(w, other)), await refused(t, submit(w, other))]) {
      t.is(late.status, 410, late.detail);
      t.is(late.code, 'prepare_expired');
    }
    t.is(await balance(w), 'none', 'an abandoned prepare leaves no agent behind');
    t.is(await stack.usdcBalance(w.kp.publicKey()), 10n * USDC, 'nothing moved');
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
    // without a valid token: what PoolApi never sends
    const unauthorised = (prepareId: string, headers: Record<string, string>) =>
      rawRequest(url(`/api/deposit/prepare/${prepareId}`), { method: 'DELETE', headers });
    const prepared = await prepare(wallet, '2');
    const id = prepared.prepareId;

    t.is((await unauthorised(id, {})).status, 401, 'no token');
    t.is((await unauthorised(id, { authorization: 'Bearer a.b.c' })).status, 401, 'a bad token');
    const foreign = await refused(t, other.api.cancelDeposit(id));
    t.is(foreign.status, 404, "another wallet's prepareId answers like an unknown one");
    t.is(foreign.code, 'not_found');
    t.is((await refused(t, wallet.api.cancelDeposit(randomUUID()))).status, 404);
    for (const bad of ['not-a-uuid', id.toUpperCase(), `${id}0`, 'x'.repeat(300)]) {
      const res = await refused(t, wallet.api.cancelDeposit(bad), bad);
      t.is(res.status, 400, bad);
      t.is(res.code, 'invalid_request', bad);
    }

    const cancelled = await wallet.api.cancelDeposit(id);
    t.deepEqual(cancelled, { prepareId: id, status: 'cancelled' });
    const replay = await wallet.api.cancelDeposit(id);
    t.deepEqual(replay, { prepareId: id, status: 'cancelled' }, 'same answer');

    // The cancelled prepareId can no longer be submitted, and nothing moved.
    const late = await refused(t, submit(wallet, prepared));
    t.is(late.status, 409, late.detail);
    t.is(late.code, 'prepare_cancelled');
    t.regex(late.detail, /cancelled/);
    t.is(await stack.usdcBalance(wallet.kp.publicKey()), 10n * USDC);
    t.is(await poolBalance(), poolBefore);
    t.is(await balance(wallet), 'none', 'no agent behind a cancelled deposit');

    // A deposit already submitted can no longer be cancelled.
    const next = await prepare(wallet, '1');
    t.is((await submit(wallet, next)).status, 'confirmed');
    const tooLate = await refused(t, wallet.api.cancelDeposit(next.prepareId));
    t.is(tooLate.status, 409);
    t.is(tooLate.code, 'conflict');
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
    // Without credentials (raw: PoolApi sends an operator deposit only as the operator; /metrics and the books
    // are not among its calls).
    const unauthorised = [
      await postJson(via('/api/deposit'), { agentId: 'mcp-agent-7', amount: '2.5' }),
      await getJson(via('/api/operator/books')),
      await getJson(via('/metrics')),
    ];
    for (const res of unauthorised) {
      t.is(res.status, 401, res.text);
      t.is(problemOf(res).code, 'unauthorized');
    }
    // The operator caller without a token (`X-Pool-Operator: true`), and with a forged one.
    const tokenless = new PoolApi({ baseUrl: relay.url, caller: { kind: 'operator' } });
    const forged = tokenless.as({ kind: 'operator', token: `ppo_${'A'.repeat(43)}` });
    for (const call of [
      () => tokenless.balance('mcp-agent-7'),
      () => tokenless.withdraw({ amount: '1', destination, agentId: 'mcp-agent-7' }),
      () => forged.operatorDeposit({ agentId: 'mcp-agent-7', amount: '2.5' }),
    ]) {
      const res = await refused(t, call());
      t.is(res.status, 401, res.detail);
      t.is(res.code, 'unauthorized');
    }
    // A wallet's token is not the operator's either (sent raw: PoolApi never sends a wallet's operator deposit).
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
    const res = await stack.operatorApi(relay.url).operatorDeposit({ agentId: 'mcp-agent-7', amount: '2.5' });
    t.is(res.status, 'confirmed');
    t.regex(res.txHash, /^[0-9a-f]{64}$/);
    t.is(await poolBalance(), poolBefore + 25_000_000n);
    const op = stack.operatorApi();
    t.is((await op.balance('mcp-agent-7')).balance, '2.5000000');
    const unnamed = await refused(t, op.withdraw({ amount: '1', destination }));
    t.is(unnamed.status, 400);
    const spent = await op.withdraw({ amount: '1', destination, agentId: 'mcp-agent-7' });
    t.is(spent.status, 'confirmed');
    t.is(await stack.usdcBalance(destination), 10_000_000n);
    t.is((await op.balance('mcp-agent-7')).balance, '1.5000000');
    // (the books have no PoolApi method: an operator-only page of the proxy's own checks)
    t.is((await getJson(via('/api/operator/books'), operator)).status, 200);
  },
);

test.serial(
  'withdraw: destination receives USDC, notes spent, change kept, balance falls only after confirmation',
  async (t) => {
    const wallet = await newWallet(100);
    t.is((await deposit(wallet, '20')).status, 'confirmed');
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const poolBefore = await poolBalance();
    const res = await withdraw(wallet, '7.25', destination);
    t.is(res.status, 'confirmed');
    t.is(res.amount, '7.2500000');
    t.is(res.destination, destination);
    t.is((await stack.server.getTransaction(res.txHash)).status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await stack.usdcBalance(destination), 72_500_000n);
    t.is(await poolBalance(), poolBefore - 72_500_000n);
    t.is(await balance(wallet), '12.7500000');
    // The change note is spendable: withdraw it all.
    const rest = await withdraw(wallet, '12.75', destination);
    t.is(rest.status, 'confirmed');
    t.is(await balance(wallet), '0.0000000');
    t.is(await stack.usdcBalance(destination), 200_000_000n);
  },
);

test.serial('insufficient balance → insufficient_balance and nothing changes', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '3')).status, 'confirmed');
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const poolBefore = await poolBalance();
  const res = await refused(t, withdraw(wallet, '3.0000001', destination));
  t.is(res.status, 409);
  t.is(res.code, 'insufficient_balance');
  t.is(await balance(wallet), '3.0000000');
  t.is(await poolBalance(), poolBefore);
  t.is(await stack.usdcBalance(destination), 0n);
  // An agent that never deposited.
  const none = await refused(t, withdraw(wallet, '1', destination, 'never-used-agent'));
  t.is(none.status, 404);
  t.is(none.code, 'not_found');
});

test.serial('10 concurrent withdrawals against one balance never overdraw', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '5')).status, 'confirmed');
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, () => withdraw(wallet, '2', destination)),
  );
  const outcome = (r: (typeof results)[number]) =>
    r.status === 'fulfilled' ? r.value.status : r.reason instanceof PoolApiError ? r.reason.status : r.reason;
  const ok = results.filter((r) => r.status === 'fulfilled');
  const declined = results.flatMap((r) =>
    r.status === 'rejected' && r.reason instanceof PoolApiError && r.reason.status === 409 ? [r.reason] : [],
  );
  t.is(ok.length, 2, results.map(outcome).join(','));
  t.is(declined.length, 8);
  t.true(declined.every((e) => e.code === 'insufficient_balance'));
  t.is(await stack.usdcBalance(destination), 40_000_000n);
  t.is(await balance(wallet), '1.0000000');
});

test.serial('a withdrawal that needs more than two notes consolidates first', async (t) => {
  const wallet = await newWallet(20);
  for (const amount of ['1', '2', '3']) t.is((await deposit(wallet, amount)).status, 'confirmed');
  t.is(await balance(wallet), '6.0000000');
  const destination = Keypair.random().publicKey();
  await stack.fund(destination, 0);
  const metricsBefore = (await getJson(url('/metrics'), operator)).text;
  t.is((await withdraw(wallet, '5.5', destination)).status, 'confirmed');
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
    t.is((await deposit(alice, '1', 'alice-bot')).status, 'confirmed');
    t.is(await balance(alice, 'alice-bot'), '1.0000000');
    // Bob reading Alice's agent gets exactly what he gets for a name nobody uses (no existence oracle).
    const foreign = await refused(t, bob.api.balance('alice-bot'));
    const missing = await refused(t, bob.api.balance('nobody-bot'));
    t.is(foreign.status, 404);
    t.is(foreign.code, 'not_found');
    // the whole refusal, its problem document's members included
    const seen = (e: PoolApiError, name: string) =>
      JSON.parse(
        JSON.stringify({
          ...e.extra,
          code: e.code,
          title: e.title,
          status: e.status,
          detail: e.detail,
        }).replaceAll(name, 'X'),
      );
    t.deepEqual(seen(foreign, 'alice-bot'), seen(missing, 'nobody-bot'));
    const op = stack.operatorApi();
    t.is((await refused(t, op.balance('alice-bot'))).status, 404, 'not the operator’s either');
    t.is((await refused(t, withdraw(bob, '1', bob.kp.publicKey(), 'alice-bot'))).status, 404);

    // The same name is a different agent for another owner: Bob's and the operator's "alice-bot".
    t.is((await deposit(bob, '2', 'alice-bot')).status, 'confirmed');
    t.is(await balance(bob, 'alice-bot'), '2.0000000');
    t.is((await op.operatorDeposit({ agentId: 'alice-bot', amount: '0.5' })).status, 'confirmed');
    t.is((await op.balance('alice-bot')).balance, '0.5000000');
    t.is(await balance(alice, 'alice-bot'), '1.0000000', 'Alice’s agent is untouched');

    // Bob naming Carol's address as an agent id does not take Carol's own default agent.
    t.is((await deposit(bob, '1', carol.kp.publicKey())).status, 'confirmed');
    t.is((await deposit(carol, '3')).status, 'confirmed');
    t.is(await balance(carol), '3.0000000');
    t.is(await balance(bob, carol.kp.publicKey()), '1.0000000');

    // publicKey in the prepare body must be the token's wallet.
    const spoofed = await refused(
      t,
      bob.api.prepareDeposit({ amount: '1', publicKey: alice.kp.publicKey() }),
    );
    t.is(spoofed.status, 403);
    const list = await bob.api.agents();
    t.deepEqual(list.agents.map((a) => a.agentId).sort(), ['alice-bot', carol.kp.publicKey()].sort());
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
      const wallet = () => newWallet(10, proxy.url);
      /** The prepared deposit, or `pending` when the proxy answered 503 registration_pending. */
      const prepareAt = async (w: Wallet, amount: string, agentId: string) => {
        try {
          return await prepare(w, amount, agentId);
        } catch (error) {
          if (error instanceof PoolApiError && error.status === 503 && error.code === 'registration_pending')
            return 'pending' as const;
          throw error;
        }
      };

      const victim = await wallet();
      const others = await Promise.all(Array.from({ length: 5 }, () => wallet()));
      // (the victim is new too: its own key is added before its proof)
      const prepared = await prepare(victim, '2');
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
          const first = await prepareAt(w, '1', `newcomer-${i}`).finally(told);
          if (first !== 'pending') return first;
          await afterVictim;
          for (;;) {
            const again = await prepareAt(w, '1', `newcomer-${i}`);
            if (again !== 'pending') return again;
          }
        })();
      });
      await Promise.all(queued);
      const early = await Promise.all(pending.map((p) => Promise.race([p, Promise.resolve(undefined)])));
      t.deepEqual(
        early.map((r) => r?.prepareId),
        [undefined, undefined, undefined, undefined, undefined],
        'every newcomer was held back by the victim’s prepared deposit (503 registration_pending)',
      );

      const submitted = await submit(victim, prepared);
      victimSubmitted();
      t.is(submitted.status, 'confirmed');
      t.is(await balance(victim), '2.0000000');
      const preparedOthers = await Promise.all(pending);
      const results = await Promise.all(others.map((w, i) => submit(w, preparedOthers[i]!)));
      t.deepEqual(
        results.map((r) => r.status),
        ['confirmed', 'confirmed', 'confirmed', 'confirmed', 'confirmed'],
      );
      for (const [i, w] of others.entries()) t.is(await balance(w, `newcomer-${i}`), '1.0000000');

      // On the chain: no allowlist key was added between the victim's proof and its deposit; the five
      // newcomers' keys were added after it.
      const landed = await stack.server.getTransaction(submitted.txHash);
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
    for (const w of wallets) t.is((await deposit(w, '1')).status, 'confirmed');
    const prepared = await Promise.all(wallets.map((w) => prepare(w, '1')));
    for (let i = wallets.length - 1; i >= 0; i--) {
      t.is((await submit(wallets[i]!, prepared[i]!)).status, 'confirmed');
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
    const w = await newWallet(10, proxy.url);
    const [a, b] = await Promise.allSettled([prepare(w, '1', 'quota-a'), prepare(w, '1', 'quota-a')]);
    t.deepEqual([outcomeOf(a), outcomeOf(b)].sort(), ['429 rate_limited', 'ok']);
    const limited = refusalOf(a) ?? refusalOf(b);
    t.true((limited?.retryAfterSeconds ?? 0) >= 1, 'the 429 names when to try again (Retry-After)');
    const second = await refused(t, prepare(w, '1', 'quota-b'));
    t.is(second.status, 429, second.detail);
    t.regex(second.detail, /new agents/);
    t.truthy(await prepare(w, '1', 'quota-a'), 'an agent already registered is not new');
  } finally {
    await proxy.close();
  }
});

test.serial('pool stats and info are public and hold aggregates only', async (t) => {
  const publicApi = new PoolApi({ baseUrl: stack.proxy.url });
  const stats = await publicApi.stats();
  t.deepEqual(Object.keys(stats).sort(), [
    'activeAgents',
    'recentBatches',
    'servicesUsed',
    'totalTransactions',
  ]);
  t.true(stats.activeAgents >= 5);
  t.true(stats.totalTransactions >= 10);
  const text = JSON.stringify(stats);
  t.false(text.includes('alice-bot'));
  t.false(/G[A-Z2-7]{55}/.test(text), 'no account addresses');
  const info = await publicApi.info();
  t.is(info.contracts.pool, stack.sandbox.info.contracts.pool);
  t.is(info.networkPassphrase, 'Standalone Network ; February 2017');
  t.is(info.circuitId, 'policy_tx_2_2');
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
  // Raw: amounts of the wrong type, unknown fields, broken JSON, another content type, oversized and empty
  // bodies are what PoolApi's types never send.
  for (const { path, body, headers } of endpoints) {
    const send = (payload: unknown, extra: Record<string, string> = {}) =>
      postJson(url(path), payload, { ...headers, ...extra });
    for (const amount of ['0', '-1', '1e3', '1.00000001', '100000.0000001', ' 1', 1, null]) {
      const res = await send({ ...body, amount });
      t.is(res.status, 400, `${path} amount ${JSON.stringify(amount)}`);
      t.is(problemOf(res).code, 'invalid_request');
      t.is(problemOf(res).errors?.[0]?.path, 'amount');
    }
    const unknownField = await send({ ...body, surprise: 1 });
    t.is(unknownField.status, 400);
    t.regex(problemOf(unknownField).detail, /unknown field/);
    const malformed = await send('{"amount": "1",');
    t.is(malformed.status, 400);
    const wrongType = await rawRequest(url(path), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: JSON.stringify(body),
    });
    t.is(wrongType.status, 415);
    const oversized = await send({ ...body, pad: 'x'.repeat(70_000) });
    t.is(oversized.status, 413);
    const missing = await send({});
    t.is(missing.status, 400);
  }
  // Well-typed requests with values the proxy refuses.
  for (const [field, what, call] of [
    ['publicKey', 'prepare', () => wallet.api.prepareDeposit({ amount: '1', publicKey: badChecksum })],
    ['destination', 'withdraw', () => wallet.api.withdraw({ amount: '1', destination: badChecksum })],
    [
      'destination',
      'withdraw to a contract',
      () => wallet.api.withdraw({ amount: '1', destination: stack.sandbox.info.contracts.pool }),
    ],
    [
      'agentId',
      'operator deposit',
      () => stack.operatorApi().operatorDeposit({ agentId: 'bad id', amount: '1' }),
    ],
  ] as const) {
    const res = await refused(t, call(), `${what} ${field}`);
    t.is(res.status, 400, `${what} ${field}`);
    t.is(res.issues?.[0]?.path, field);
  }
  const noToken = await postJson(url('/api/withdraw'), { amount: '1', destination: good });
  t.is(noToken.status, 401);
  const submitBad = await refused(
    t,
    wallet.api.submitDeposit({ prepareId: 'not-a-uuid', signedTransactionXDR: 'AAAA' }),
  );
  t.is(submitBad.status, 400);
  const submitGarbage = await refused(
    t,
    wallet.api.submitDeposit({
      prepareId: '00000000-0000-4000-8000-000000000000',
      signedTransactionXDR: 'AAAAAAAA',
    }),
  );
  t.true(submitGarbage.status === 400 || submitGarbage.status === 404);
});

test.serial(
  'crash between submit and confirmation: the restarted proxy credits the deposit exactly once',
  async (t) => {
    const dataDir = join(stack.env.POOL_PROXY_DATA_DIR!, 'crash');
    const env = { ...process.env, ...stack.env, POOL_PROXY_DATA_DIR: dataDir };
    const child = await startChild(env);
    const w = await newWallet(10, child.url);
    const kp = w.kp;
    const prepared = await prepare(w, '4');
    const poolBefore = await poolBalance();

    await stack.sandbox.chain.stop(); // the ledger stops closing: the transaction stays pending
    const submitting = submit(w, prepared).catch(() => undefined);
    // Wait until the proxy reports the transaction sent, then kill it before any confirmation.
    for (;;) {
      const metrics = await getJson(`${child.url}/metrics`, operator);
      if (/pool_proxy_transactions_in_flight 1/.test(metrics.text)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill();
    await submitting;
    stack.sandbox.chain.start(250);
    const hash = TransactionBuilder.fromXDR(
      signPrepared(prepared.transactionXDR, kp),
      stack.config.ledger.networkPassphrase,
    ).hash();
    await ledger.waitFor(Buffer.from(hash).toString('hex'));
    t.is(await poolBalance(), poolBefore + 4n * USDC);

    for (let restart = 0; restart < 2; restart++) {
      const again = await startChild(env);
      try {
        t.is(await balance(await loggedIn(kp, again.url)), '4.0000000', `restart ${restart}`);
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
    const w = await newWallet(10, child.url);
    const kp = w.kp;
    const prepared = await prepare(w, '4');
    const body = {
      prepareId: prepared.prepareId,
      signedTransactionXDR: signPrepared(prepared.transactionXDR, kp),
    };
    const poolBefore = await poolBalance();
    // No answer at all (an answer, or a refusal, would be what the proxy said before dying).
    const died = await (await loggedIn(kp, child.url)).api.submitDeposit(body).then(
      (answer) => answer,
      (error: unknown) =>
        error instanceof PoolApiError && error.code === 'proxy_unreachable' ? undefined : error,
    );
    t.is(died, undefined, 'the proxy died during the submit');
    child.kill();
    t.is(await stack.usdcBalance(kp.publicKey()), 10n * USDC, 'nothing was sent');

    const again = await startChild(env);
    try {
      const w2 = await loggedIn(kp, again.url);
      const resent = await w2.api.submitDeposit(body);
      t.is(resent.status, 'confirmed');
      const replay = await w2.api.submitDeposit(body);
      t.is(replay.txHash, resent.txHash);
      t.is(await balance(w2), '4.0000000');
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
      const w = await newWallet(10, proxy.url);
      t.is((await deposit(w, '5')).status, 'confirmed');
      const destination = Keypair.random().publicKey();
      await stack.fund(destination, 0);
      const balanceOf = () => balance(w);

      await stack.sandbox.chain.stop();
      stopped = true;
      const late = await refused(t, withdraw(w, '2', destination));
      t.is(late.status, 503, late.detail);
      const txHash = String(late.extra.txHash);
      t.regex(txHash, /^[0-9a-f]{64}$/);
      t.is(await balanceOf(), '3.0000000', 'the 2 USDC stay reserved while the outcome is unknown');
      const again = await refused(t, withdraw(w, '3.5', destination));
      t.is(again.status, 409, 'the held amount cannot be spent twice');

      stack.sandbox.chain.start(250);
      stopped = false;
      await ledger.waitFor(txHash);
      t.is(await stack.usdcBalance(destination), 20_000_000n);
      let settled = await balanceOf();
      for (let i = 0; i < 200 && settled !== '3.0000000'; i++) settled = await balanceOf();
      t.is(settled, '3.0000000');
      // The change note becomes spendable once the indexer applies the landed spend.
      const spendRest = () =>
        withdraw(w, '3', destination).catch((error: unknown) => {
          if (error instanceof PoolApiError && error.status === 409) return error;
          throw error;
        });
      let rest = await spendRest();
      for (let i = 0; i < 20 && rest instanceof PoolApiError; i++) {
        await new Promise((r) => setTimeout(r, 250));
        rest = await spendRest();
      }
      t.false(rest instanceof PoolApiError, rest instanceof PoolApiError ? rest.detail : '');
      t.is(rest.status, 'confirmed');
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
    t.is((await deposit(alice, '3', 'alice-recovery')).status, 'confirmed');
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    t.is((await withdraw(alice, '1', destination, 'alice-recovery')).status, 'confirmed');
    t.is(
      (await stack.operatorApi().operatorDeposit({ agentId: 'mcp-recovery', amount: '1.5' })).status,
      'confirmed',
    );
    const bob = await newWallet(1);

    const { proxy } = await stack.startProxy({
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'recovered'),
    });
    try {
      const aliceThere = await loggedIn(alice.kp, proxy.url);
      t.is((await aliceThere.api.balance('alice-recovery')).balance, '2.0000000');
      const bobThere = await loggedIn(bob.kp, proxy.url);
      t.is((await refused(t, bobThere.api.balance('alice-recovery'))).status, 404, 'ownership recovered too');
      // The recovered notes are spendable, and the operator agent's deposit is there.
      const spend = await withdraw(aliceThere, '2', destination, 'alice-recovery');
      t.is(spend.status, 'confirmed');
      t.is(await stack.usdcBalance(destination), 30_000_000n);
      const stats = await new PoolApi({ baseUrl: proxy.url }).stats();
      t.true(stats.activeAgents >= 2);
    } finally {
      await proxy.close();
    }
  },
);

test.serial('the raw LevelDB files hold no agent id, wallet address or amount in plaintext', async (t) => {
  const wallet = await newWallet(10);
  t.is((await deposit(wallet, '6.4321987', 'plaintext-probe-agent')).status, 'confirmed');
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
