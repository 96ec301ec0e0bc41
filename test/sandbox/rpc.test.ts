// The sandbox's Soroban RPC surface through @stellar/stellar-sdk's rpc.Server, plus the JSON-RPC error
// handling for malformed requests and the friendbot / info endpoints.

import {
  Account,
  Address,
  Asset,
  Contract,
  Keypair,
  Operation,
  rpc,
  scValToNative,
  StrKey,
  TransactionBuilder,
  type xdr,
} from '#stellar-sdk';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import test from 'ava';
import type { PoolSandbox as Sandbox } from '../../src/deploy/sandbox-network.ts';
import { fund, startSandbox } from './helpers.ts';

let sandbox: Sandbox;
let server: rpc.Server;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
});
test.after.always(async () => {
  await sandbox?.close();
});

/** A JSON-RPC 2.0 answer with a result, to the request of that id. */
interface RpcResult<R> {
  jsonrpc: '2.0';
  id: string | number | null;
  result: R;
}

/** A JSON-RPC 2.0 error answer, to the request of that id (null when the request could not be read). */
interface RpcError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

/** Posts `body` (a string as is) to the sandbox's RPC; its answer is untyped until the test names its type. */
async function rawRpc(body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(sandbox.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** The error of a JSON-RPC error answer: the test's claim that the RPC refused the request. */
function errorOf(answer: { json: unknown }): RpcError['error'] {
  return (answer.json as RpcError).error;
}

test('getHealth, getNetwork, getVersionInfo and getFeeStats answer as Soroban RPC does', async (t) => {
  const health = await server.getHealth();
  t.is(health.status, 'healthy');
  const network = await server.getNetwork();
  t.is(network.passphrase, 'Standalone Network ; February 2017');
  t.is(network.friendbotUrl, `${sandbox.url}/friendbot`);
  t.true(Number(network.protocolVersion) >= 22);
  const fees = await server.getFeeStats();
  t.is(fees.sorobanInclusionFee.p50, '100');
  t.is(typeof (await server.getVersionInfo()).version, 'string');
});

test('ledgers close on the interval and getLatestLedger parses (header and close meta)', async (t) => {
  const a = await server.getLatestLedger();
  await sandbox.chain.nextClose();
  await sandbox.chain.nextClose();
  const b = await server.getLatestLedger();
  t.true(b.sequence >= a.sequence + 2);
  t.is(b.headerXdr.ledgerSeq, b.sequence);
  t.regex(b.id, /^[0-9a-f]{64}$/);
  t.not(a.id, b.id);
});

test('/sandbox/info lists the contracts and well-known accounts, and no secrets', async (t) => {
  const res = await fetch(`${sandbox.url}/sandbox/info`);
  t.is(res.status, 200);
  const text = await res.text();
  const info = JSON.parse(text);
  t.is(info.networkPassphrase, 'Standalone Network ; February 2017');
  for (const id of Object.values(info.contracts)) t.true(StrKey.isValidContract(id as string));
  t.deepEqual(Object.keys(info.contracts).sort(), [
    'asp_membership',
    'asp_non_membership',
    'pool',
    'token',
    'verifier',
  ]);
  // the token is the Stellar Asset Contract of USDC issued by the admin
  t.is(info.contracts.token, new Asset('USDC', info.accounts.admin).contractId(info.networkPassphrase));
  const secrets = sandbox.secrets();
  for (const s of Object.values(secrets)) t.false(text.includes(s));
  t.is(Keypair.fromSecret(secrets.admin).publicKey(), info.accounts.admin);
  // genesis accounts exist on the ledger
  for (const a of Object.values(info.accounts) as string[]) t.is((await server.getAccount(a)).accountId(), a);
});

test('getContractInstance and getLedgerEntries serve contract data', async (t) => {
  const { contracts } = sandbox.info;
  const instance = await server.getContractInstance(contracts.token);
  t.is(instance.executable.type, 'contractExecutableStellarAsset');
  const pool = await server.getContractInstance(contracts.pool);
  t.is(pool.executable.type, 'contractExecutableWasm');
});

test('friendbot creates and funds accounts and validates its input', async (t) => {
  const kp = Keypair.random();
  await t.throwsAsync(server.getAccount(kp.publicKey()), { message: /Account not found/ });
  const res = await fund(sandbox, kp.publicKey(), '2.5');
  t.is(res.status, 200);
  const body = await res.json();
  t.is(body.usdc, '2.5000000', 'a USDC decimal, as the proxy API writes amounts');
  t.is(body.created, true);
  const account = await server.getAccount(kp.publicKey());
  t.true(BigInt(account.sequenceNumber()) > 0n);
  // funding again without USDC is refused, with USDC it mints more
  t.is((await fund(sandbox, kp.publicKey())).status, 400);
  t.is((await fund(sandbox, kp.publicKey(), '1')).status, 200);
  t.is((await fund(sandbox, 'GNOTANADDRESS')).status, 400);
  t.is((await fund(sandbox, Keypair.random().publicKey(), '-1')).status, 400);
  t.is((await fund(sandbox, Keypair.random().publicKey(), '1.12345678')).status, 400);
  t.is((await fund(sandbox, Keypair.random().publicKey(), '99999999999')).status, 400);
  t.is((await fund(sandbox, Keypair.random().publicKey(), 'abc')).status, 400);
  const contract = Address.contract(Buffer.alloc(32, 1)).toString();
  t.is((await fund(sandbox, contract, '1')).status, 400);
});

test('the SDK friendbot helpers work: requestAirdrop and fundAddress read the funding transaction back', async (t) => {
  const kp = Keypair.random();
  const account = await server.requestAirdrop(kp.publicKey());
  t.is(account.accountId(), kp.publicKey());
  t.is(account.sequenceNumber(), (await server.getAccount(kp.publicKey())).sequenceNumber());
  // asking again for an existing account falls back to reading it
  t.is((await server.requestAirdrop(kp.publicKey())).accountId(), kp.publicKey());
  const other = Keypair.random().publicKey();
  const funded = await server.fundAddress(other);
  t.is(funded.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.is((await server.getAccount(other)).accountId(), other);
  // the USDC grant is a mint transaction by the token admin, visible with its events
  const res = await fund(sandbox, other, '3');
  const body = await res.json();
  const mint = await server.getTransaction(body.hash);
  t.is(mint.status, rpc.Api.GetTransactionStatus.SUCCESS);
  if (mint.status === rpc.Api.GetTransactionStatus.SUCCESS) {
    t.is(mint.events.contractEventsXdr[0]?.length, 1);
    const source = mint.envelopeXdr.value as unknown as { tx: { sourceAccount: unknown } };
    t.truthy(source.tx.sourceAccount);
  }
});

test('simulateTransaction answers what it cannot simulate as stellar-rpc does: a result with error', async (t) => {
  const source = new Account(Keypair.random().publicKey(), '0');
  const payment = new TransactionBuilder(source, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(Operation.payment({ destination: source.accountId(), asset: Asset.native(), amount: '1' }))
    .setTimeout(30)
    .build();
  const sim = await rawRpc({
    jsonrpc: '2.0',
    id: 1,
    method: 'simulateTransaction',
    params: { transaction: payment.toXDR() },
  });
  t.like(sim.json, {
    result: { error: 'Transaction contains unsupported operation type: OperationTypePayment' },
  });
  const two = new TransactionBuilder(source, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(Operation.extendFootprintTtl({ extendTo: 10 }))
    .addOperation(Operation.extendFootprintTtl({ extendTo: 10 }))
    .setTimeout(30)
    .build();
  const answer = await rawRpc({
    jsonrpc: '2.0',
    id: 2,
    method: 'simulateTransaction',
    params: { transaction: two.toXDR() },
  });
  t.like(answer.json, { result: { error: 'Transaction contains more than one operation' } });
  // through the SDK: a simulation error, not a thrown RPC error
  const parsed = await server.simulateTransaction(payment);
  t.true(rpc.Api.isSimulationError(parsed));
});

test('malformed requests get JSON-RPC errors and the server keeps serving', async (t) => {
  const bad = await rawRpc('{not json');
  t.is(errorOf(bad).code, -32700);
  t.is(errorOf(await rawRpc({ jsonrpc: '2.0', id: 1, method: 'noSuchMethod' })).code, -32601);
  t.is(errorOf(await rawRpc({ id: 1, method: 'getHealth' })).code, -32600);
  t.is(
    errorOf(
      await rawRpc({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: { transaction: 'AAAA' } }),
    ).code,
    -32602,
  );
  t.is(errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: {} })).code, -32602);
  t.is(
    errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'sendTransaction', params: { transaction: 42 } }))
      .code,
    -32602,
  );
  // stellar-rpc answers a transaction it cannot read or simulate with a simulation result carrying `error`
  const unreadable = await rawRpc({
    jsonrpc: '2.0',
    id: 7,
    method: 'simulateTransaction',
    params: { transaction: '!!!' },
  });
  t.like(unreadable.json, { result: { error: 'Could not unmarshal transaction' } });
  t.is(
    errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'simulateTransaction', params: 'x' })).code,
    -32602,
  );
  t.is(
    errorOf(
      await rawRpc({ jsonrpc: '2.0', id: 7, method: 'getLedgerEntries', params: { keys: ['garbage'] } }),
    ).code,
    -32602,
  );
  t.is(
    errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'getLedgerEntries', params: { keys: [] } })).code,
    -32602,
  );
  t.is(
    errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'getTransaction', params: { hash: 'zz' } })).code,
    -32602,
  );
  t.is(
    errorOf(await rawRpc({ jsonrpc: '2.0', id: 7, method: 'getEvents', params: { startLedger: 999999999 } }))
      .code,
    -32602,
  );
  t.is(
    errorOf(
      await rawRpc({ jsonrpc: '2.0', id: 7, method: 'getEvents', params: { pagination: { cursor: 'x' } } }),
    ).code,
    -32602,
  );
  const oversized = await rawRpc({
    jsonrpc: '2.0',
    id: 1,
    method: 'sendTransaction',
    params: { transaction: 'A'.repeat(3 * 1024 * 1024) },
  });
  t.is(oversized.status, 413);
  const batch = await rawRpc([
    { jsonrpc: '2.0', id: 1, method: 'getHealth' },
    { jsonrpc: '2.0', id: 2, method: 'nope' },
  ]);
  const [health, unknownMethod] = batch.json as [RpcResult<{ status: string }>, RpcError];
  t.is(health.result.status, 'healthy');
  t.is(unknownMethod.error.code, -32601);
  // the id is echoed back
  t.is(
    ((await rawRpc({ jsonrpc: '2.0', id: 'abc', method: 'getHealth' })).json as RpcResult<unknown>).id,
    'abc',
  );
  t.is((await server.getHealth()).status, 'healthy');
});

test('getTransaction of an unknown hash is NOT_FOUND', async (t) => {
  const res = await server.getTransaction('ab'.repeat(32));
  t.is(res.status, rpc.Api.GetTransactionStatus.NOT_FOUND);
  t.true(res.latestLedger >= 1);
});

test('genesis refuses a verification key that is not a BN254 Groth16 key of the right shape', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { startPoolSandbox } = await import('../../src/deploy/sandbox-network.ts');
  const { DEFAULT_VKEY_PATH } = await import('../../src/deploy/verification-key.ts');
  const good = JSON.parse(readFileSync(DEFAULT_VKEY_PATH, 'utf8'));
  await t.throwsAsync(startPoolSandbox({ port: 0, vkey: { ...good, protocol: 'plonk' } }), {
    message: /Groth16/,
  });
  await t.throwsAsync(startPoolSandbox({ port: 0, vkey: { ...good, curve: 'bls12381' } }), {
    message: /BN254/,
  });
  await t.throwsAsync(startPoolSandbox({ port: 0, vkey: { ...good, IC: good.IC.slice(1) } }), {
    message: /IC length/,
  });
  // a point off the curve is refused when the verifier is deployed
  await t.throwsAsync(startPoolSandbox({ port: 0, vkey: { ...good, vk_alpha_1: ['1', '1', '1'] } }), {
    message: /Error\(Contract, #2\)/,
  });
});

test('a retention window drops older transactions and events, as a real RPC does, and getHealth says so', async (t) => {
  const { sandbox: short, server: rpcOf } = await startSandbox();
  t.teardown(() => short.close());
  const account = Keypair.random();
  await fund(short, account.publicKey());
  const funded = (await rpcOf.getLatestLedger()).sequence;
  const before = await rpcOf.getTransactions({ startLedger: 1, pagination: { limit: 200 } });
  const early = before.transactions.at(-1)!;
  t.true(early.ledger <= funded);
  short.chain.state.retainLedgers(3);
  for (let i = 0; i < 4; i++) await short.chain.nextClose();
  await short.chain.stop(); // the window stands still while it is looked at
  const health = await rpcOf.getHealth();
  const latest = (await rpcOf.getLatestLedger()).sequence;
  t.is(health.oldestLedger, latest - 2, 'the oldest ledger of a 3-ledger window');
  t.is(health.ledgerRetentionWindow, 3);
  t.is((await rpcOf.getTransaction(early.txHash)).status, rpc.Api.GetTransactionStatus.NOT_FOUND);
  // (the SDK rejects with the JSON-RPC error object itself)
  const refused = (call: Promise<unknown>) =>
    call.then(
      () => ({ message: 'answered' }),
      (e: { message: string }) => e,
    );
  const range = /startLedger must be between the oldest ledger/;
  t.regex(
    (await refused(rpcOf.getTransactions({ startLedger: early.ledger, pagination: { limit: 10 } }))).message,
    range,
  );
  t.regex((await refused(rpcOf.getEvents({ startLedger: early.ledger, filters: [] }))).message, range);
  const kept = await rpcOf.getEvents({ startLedger: health.oldestLedger, filters: [] });
  t.true(kept.events.every((e) => e.ledger >= health.oldestLedger));
});

test('friendbot refuses an account that exists in testnet friendbot words (stellar keys fund reads them)', async (t) => {
  const address = Keypair.random().publicKey();
  t.is((await fund(sandbox, address)).status, 200);
  const again = await fund(sandbox, address);
  t.is(again.status, 400);
  const body = (await again.json()) as { type: string; status: number; detail: string };
  t.is(body.type, 'https://stellar.org/horizon-errors/bad_request');
  t.is(body.status, 400);
  // the CLI takes a detail containing these words as "already funded", not as a failure
  t.true(body.detail.startsWith('account already funded to starting balance'));
});

test('the native asset contract (XLM SAC) exists from genesis and reads account balances', async (t) => {
  const address = Keypair.random().publicKey();
  t.is((await fund(sandbox, address)).status, 200);
  const native = Asset.native().contractId(STANDALONE_PASSPHRASE);
  const probe = new Account(Keypair.random().publicKey(), '0');
  const call = (fn: string, args: xdr.ScVal[] = []) =>
    server.simulateTransaction(
      new TransactionBuilder(probe, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
        .addOperation(new Contract(native).call(fn, ...args))
        .setTimeout(30)
        .build(),
    );
  const name = await call('name');
  t.true(rpc.Api.isSimulationSuccess(name), JSON.stringify(name));
  if (rpc.Api.isSimulationSuccess(name)) t.is(scValToNative(name.result!.retval), 'native');
  const balance = await call('balance', [new Address(address).toScVal()]);
  if (!rpc.Api.isSimulationSuccess(balance)) return t.fail(balance.error);
  t.is(scValToNative(balance.result!.retval), 100_000_000_000n, '10,000 XLM from friendbot');
});
