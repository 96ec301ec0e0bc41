// `xdrFormat: "json"` on the sandbox RPC over real HTTP: every method that takes it answers with
// stellar-rpc's `…Json` fields instead of the `…Xdr` ones, and each JSON value, encoded back to XDR by
// the official @stellar/stellar-xdr-json, equals the base64 the same request returns without the flag.
// A bad xdrFormat is refused (JSON-RPC invalid params; a simulation error for simulateTransaction, as
// stellar-rpc does), and getLatestLedger, which has no JSON form in stellar-rpc, refuses "json".
import {
  Account,
  Address,
  Asset,
  Keypair,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { jsonToXdr, type XdrJsonType } from '../../src/sandbox/xdr-json.ts';
import { address, fund, i128, invokeTx, startSandbox, submit } from './helpers.ts';

/** A JSON-RPC result object: its fields are compared with other replies, not typed. */
type Obj = Record<string, any>;
type Reply = { result?: Obj; error?: { code: number; message: string } };

let sandbox: PoolSandbox;
let server: rpc.Server;
let alice: Keypair;
let bob: Keypair;
/** a USDC transfer that landed, and one that failed on the ledger (alice had paid her USDC away) */
let landed: rpc.Api.GetSuccessfulTransactionResponse;
let failed: rpc.Api.GetFailedTransactionResponse;

const USDC = 10_000_000n;

async function rawRpc(method: string, params: unknown): Promise<Reply> {
  const res = await fetch(sandbox.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as Reply;
}

/** The same request in base64 and in JSON. */
async function both(method: string, params: Obj): Promise<{ b64: Obj; js: Obj }> {
  const [b64, js] = await Promise.all([
    rawRpc(method, params),
    rawRpc(method, { ...params, xdrFormat: 'json' }),
  ]);
  if (!b64.result || !js.result) throw new Error(`${method}: ${JSON.stringify(b64.error ?? js.error)}`);
  return { b64: b64.result, js: js.result };
}

/** No field of a JSON reply (at any depth) is still base64 XDR. */
function noXdrFields(t: { false(v: boolean, m?: string): void }, value: unknown, path = '$'): void {
  if (Array.isArray(value)) return value.forEach((v, i) => noXdrFields(t, v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return;
  for (const [k, v] of Object.entries(value)) {
    t.false(/Xdr$/.test(k) && v !== '', `${path}.${k} is still XDR`);
    noXdrFields(t, v, `${path}.${k}`);
  }
}

const back = (type: XdrJsonType, value: unknown) => jsonToXdr(type, value);
const backAll = (type: XdrJsonType, values: unknown) => (values as unknown[]).map((v) => back(type, v));

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  alice = Keypair.random();
  bob = Keypair.random();
  await fund(sandbox, alice.publicKey(), '10');
  await fund(sandbox, bob.publicKey());
  const token = sandbox.info.contracts.token;
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);

  const transfer = async (acct: Account) => {
    const call = invokeTx(acct, token, 'transfer', [
      address(alice.publicKey()),
      address(bob.publicKey()),
      i128(5n * USDC),
    ]);
    const sim = await server.simulateTransaction(call);
    if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
    const tx = rpc.assembleTransaction(call, sim).build();
    tx.sign(alice);
    return tx;
  };
  const ok = await submit(server, await transfer(await server.getAccount(alice.publicKey())));
  if (ok.final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error('transfer did not land');
  landed = ok.final;

  // a transfer prepared while alice still holds 5 USDC, sent after a classic payment took them
  const acct = await server.getAccount(alice.publicKey());
  const later = await transfer(
    new Account(acct.accountId(), (BigInt(acct.sequenceNumber()) + 1n).toString()),
  );
  const pay = new TransactionBuilder(acct, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(Operation.payment({ destination: bob.publicKey(), asset: usdc, amount: '5' }))
    .setTimeout(60)
    .build();
  pay.sign(alice);
  if ((await submit(server, pay)).final?.status !== 'SUCCESS') throw new Error('payment did not land');
  const bad = await submit(server, later);
  if (bad.final?.status !== rpc.Api.GetTransactionStatus.FAILED) throw new Error('transfer did not fail');
  failed = bad.final;
});
test.after.always(() => sandbox?.close());

function sameTransaction(t: ExecutionContext, b64: Obj, js: Obj) {
  t.is(back('TransactionEnvelope', js.envelopeJson), b64.envelopeXdr);
  t.is(back('TransactionResult', js.resultJson), b64.resultXdr);
  t.is(back('TransactionMeta', js.resultMetaJson), b64.resultMetaXdr);
  t.deepEqual(backAll('DiagnosticEvent', js.diagnosticEventsJson), b64.diagnosticEventsXdr);
  const evB64 = b64.events as { contractEventsXdr: string[][]; transactionEventsXdr: string[] };
  const evJs = js.events as { contractEventsJson: unknown[][]; transactionEventsJson: unknown[] };
  t.deepEqual(
    evJs.contractEventsJson.map((op) => backAll('ContractEvent', op)),
    evB64.contractEventsXdr,
  );
  t.deepEqual(backAll('TransactionEvent', evJs.transactionEventsJson), evB64.transactionEventsXdr);
  for (const k of ['status', 'txHash', 'ledger', 'createdAt', 'applicationOrder', 'feeBump'])
    t.deepEqual(js[k], b64[k], k);
  noXdrFields(t, js);
}

test('getTransaction: a landed and a failed transaction in JSON encode back to their base64 XDR', async (t) => {
  for (const tx of [landed, failed]) {
    const { b64, js } = await both('getTransaction', { hash: tx.txHash });
    sameTransaction(t, b64, js);
  }
  // the JSON says what the SDK reads from the XDR
  const { js } = await both('getTransaction', { hash: landed.txHash });
  const result = js.resultJson as { fee_charged: string; result: Obj };
  t.is(result.fee_charged, String(landed.resultXdr.feeCharged));
  t.truthy(result.result.tx_success);
  const [[transferEvent]] = (js.events as { contractEventsJson: Obj[][] }).contractEventsJson as [[Obj]];
  t.is(JSON.stringify(transferEvent).includes('"symbol":"transfer"'), true);
  const failedJs = (await both('getTransaction', { hash: failed.txHash })).js;
  t.truthy((failedJs.resultJson as { result: Obj }).result.tx_failed);
  t.true((failedJs.diagnosticEventsJson as unknown[]).length > 0, 'the failure is explained');
  // unknown hash: the same NOT_FOUND either way
  const missing = await both('getTransaction', { hash: '00'.repeat(32) });
  t.is(missing.js.status, 'NOT_FOUND');
});

test('getTransactions: a page in JSON encodes back to the same page in base64', async (t) => {
  const { b64, js } = await both('getTransactions', {
    startLedger: landed.ledger,
    pagination: { limit: 5 },
  });
  const a = b64.transactions as Obj[];
  const b = js.transactions as Obj[];
  t.true(a.length >= 2);
  t.is(b.length, a.length);
  a.forEach((tx, i) => sameTransaction(t, tx, b[i] as Obj));
  t.is(js.cursor, b64.cursor);
});

test('getLedgerEntries: keys, entry data and extension in JSON', async (t) => {
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);
  const keys = [
    xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(alice.publicKey()).xdrAccountId() }),
    ),
    xdr.LedgerKey.trustline(
      new xdr.LedgerKeyTrustLine({
        accountId: Keypair.fromPublicKey(bob.publicKey()).xdrAccountId(),
        asset: usdc.toTrustLineXDRObject(),
      }),
    ),
    xdr.LedgerKey.contractData(
      new xdr.LedgerKeyContractData({
        contract: new Address(sandbox.info.contracts.pool).toScAddress(),
        key: xdr.ScVal.scvLedgerKeyContractInstance(),
        durability: xdr.ContractDataDurability.persistent,
      }),
    ),
  ].map((k) => k.toXdr('base64'));
  const { b64, js } = await both('getLedgerEntries', { keys });
  const a = b64.entries as Obj[];
  const b = js.entries as Obj[];
  t.is(a.length, 3);
  t.is(b.length, 3);
  a.forEach((e, i) => {
    const j = b[i] as Obj;
    t.is(back('LedgerKey', j.keyJson), e.key);
    t.is(back('LedgerEntryData', j.dataJson), e.xdr);
    t.is(j.extJson, 'v0');
    t.is(j.lastModifiedLedgerSeq, e.lastModifiedLedgerSeq);
    t.is(j.liveUntilLedgerSeq, e.liveUntilLedgerSeq);
  });
  // bob's trustline holds the 10 USDC alice paid him
  const line = (b[1] as { dataJson: { trustline: { balance: string } } }).dataJson.trustline;
  t.is(line.balance, String(10n * USDC));
  noXdrFields(t, js);
});

test('getLedgers: header and close meta in JSON, their Xdr fields left empty as stellar-rpc does', async (t) => {
  const { b64, js } = await both('getLedgers', { startLedger: landed.ledger, pagination: { limit: 2 } });
  const a = b64.ledgers as Obj[];
  const b = js.ledgers as Obj[];
  t.is(b.length, a.length);
  a.forEach((l, i) => {
    const j = b[i] as Obj;
    t.is(back('LedgerHeaderHistoryEntry', j.headerJson), l.headerXdr);
    t.is(back('LedgerCloseMeta', j.metadataJson), l.metadataXdr);
    t.is(j.headerXdr, '');
    t.is(j.metadataXdr, '');
    t.is(j.sequence, l.sequence);
    t.is(j.hash, l.hash);
  });
  const header = (b[0] as { headerJson: { header: { ledger_seq: number } } }).headerJson.header;
  t.is(header.ledger_seq, landed.ledger);
  noXdrFields(t, js);
});

test('getEvents: topics and values in JSON', async (t) => {
  const { b64, js } = await both('getEvents', {
    startLedger: landed.ledger,
    filters: [{ contractIds: [sandbox.info.contracts.token] }],
  });
  const a = b64.events as Obj[];
  const b = js.events as Obj[];
  t.true(a.length >= 1);
  t.is(b.length, a.length);
  a.forEach((ev, i) => {
    const j = b[i] as Obj;
    t.deepEqual(backAll('ScVal', j.topicJson), ev.topic);
    t.is(back('ScVal', j.valueJson), ev.value);
    t.is(j.id, ev.id);
    t.false('topic' in j || 'value' in j);
  });
  t.deepEqual((b[0] as { topicJson: unknown[] }).topicJson[0], { symbol: 'transfer' });
  t.deepEqual((b[0] as { valueJson: unknown }).valueJson, { i128: String(5n * USDC) });
});

test('sendTransaction: an ERROR result and its diagnostic events in JSON', async (t) => {
  // a sequence number far ahead (txBadSeq), and an unsupported operation (with a diagnostic message)
  const acct = await server.getAccount(bob.publicKey());
  const build = (source: Account, op: xdr.Operation) => {
    const tx = new TransactionBuilder(source, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
      .addOperation(op)
      .setTimeout(60)
      .build();
    tx.sign(bob);
    return tx.toXDR();
  };
  const ahead = new Account(bob.publicKey(), (BigInt(acct.sequenceNumber()) + 10n).toString());
  const badSeq = build(
    ahead,
    Operation.payment({ destination: alice.publicKey(), asset: Asset.native(), amount: '1' }),
  );
  const manageData = build(acct, Operation.manageData({ name: 'k', value: 'v' }));
  const codes: unknown[] = [];
  for (const envelope of [badSeq, manageData]) {
    const { b64, js } = await both('sendTransaction', { transaction: envelope });
    t.is(js.status, 'ERROR');
    t.is(b64.status, 'ERROR');
    t.is(js.hash, b64.hash);
    t.is(back('TransactionResult', js.errorResultJson), b64.errorResultXdr);
    codes.push(js.errorResultJson.result);
    t.deepEqual(backAll('DiagnosticEvent', js.diagnosticEventsJson ?? []), b64.diagnosticEventsXdr ?? []);
    noXdrFields(t, js);
  }
  t.deepEqual(codes, ['tx_bad_seq', 'tx_not_supported']);
});

test('simulateTransaction: a write, a read and a failure in JSON', async (t) => {
  const token = sandbox.info.contracts.token;
  const bobAcct = await server.getAccount(bob.publicKey());
  const write = invokeTx(bobAcct, token, 'transfer', [
    address(bob.publicKey()),
    address(alice.publicKey()),
    i128(1n),
  ]);
  const read = invokeTx(bobAcct, token, 'balance', [address(bob.publicKey())]);
  const fail = invokeTx(bobAcct, token, 'transfer', [
    address(bob.publicKey()),
    address(alice.publicKey()),
    i128(1_000n * USDC),
  ]);
  for (const tx of [write, read]) {
    const { b64, js } = await both('simulateTransaction', { transaction: tx.toXDR() });
    t.is(back('SorobanTransactionData', js.transactionDataJson), b64.transactionData);
    t.is(js.minResourceFee, b64.minResourceFee);
    const [r64] = b64.results as { xdr: string; auth: string[] }[];
    const [rjs] = js.results as { returnValueJson: unknown; authJson: unknown[] }[];
    t.is(back('ScVal', rjs!.returnValueJson), r64!.xdr);
    t.deepEqual(backAll('SorobanAuthorizationEntry', rjs!.authJson), r64!.auth);
    t.deepEqual(backAll('DiagnosticEvent', js.eventsJson ?? []), b64.events ?? []);
    const c64 = (b64.stateChanges ?? []) as {
      type: string;
      key: string;
      before: string | null;
      after: string | null;
    }[];
    const cjs = (js.stateChanges ?? []) as Obj[];
    t.is(cjs.length, c64.length);
    if (tx === write) t.true(cjs.length >= 2, 'the transfer changes two trustlines');
    c64.forEach((c, i) => {
      const j = cjs[i] as Obj;
      t.is(j.type, c.type);
      t.is(back('LedgerKey', j.keyJson), c.key);
      t.is(j.beforeJson === undefined ? null : back('LedgerEntry', j.beforeJson), c.before);
      t.is(j.afterJson === undefined ? null : back('LedgerEntry', j.afterJson), c.after);
      t.is(j.before, null);
      t.is(j.after, null);
    });
    noXdrFields(t, js);
  }
  // the read returns bob's balance, 10 USDC
  const { js } = await both('simulateTransaction', { transaction: read.toXDR() });
  const [res] = js.results as { returnValueJson: unknown }[];
  t.deepEqual(res!.returnValueJson, { i128: String(10n * USDC) });
  t.is(scValToNative(xdr.ScVal.fromXDR(back('ScVal', res!.returnValueJson), 'base64')), 10n * USDC);

  const failure = await both('simulateTransaction', { transaction: fail.toXDR() });
  t.is(failure.js.error, failure.b64.error);
  t.truthy(failure.js.error);
  t.deepEqual(backAll('DiagnosticEvent', failure.js.eventsJson), failure.b64.events);
  t.false('transactionDataJson' in failure.js);
});

test('a bad xdrFormat is refused with invalid params (simulateTransaction: a simulation error)', async (t) => {
  const tx = invokeTx(new Account(bob.publicKey(), '1'), sandbox.info.contracts.token, 'decimals', []);
  const params = {
    hash: landed.txHash,
    startLedger: landed.ledger,
    keys: [
      xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: bob.xdrAccountId() })).toXdr('base64'),
    ],
    transaction: tx.toXDR(),
  };
  for (const method of [
    'getTransaction',
    'getTransactions',
    'getLedgerEntries',
    'getLedgers',
    'getEvents',
    'sendTransaction',
    'getLatestLedger',
  ]) {
    for (const xdrFormat of ['xml', 'JSON', 5, {}]) {
      const r = await rawRpc(method, { ...params, xdrFormat });
      t.is(r.error?.code, -32602, `${method} ${String(xdrFormat)}`);
      t.regex(r.error?.message ?? '', /xdrFormat/, method);
    }
  }
  // stellar-rpc answers simulateTransaction's bad format inside the result, as a simulation error …
  const sim = await rawRpc('simulateTransaction', { ...params, xdrFormat: 'xml' });
  t.regex(String(sim.result?.error), /got 'xml': expected base64, json for optional 'xdrFormat'/);
  t.false('transactionData' in (sim.result ?? {}));
  // … and a value that is not a string as invalid params
  t.is((await rawRpc('simulateTransaction', { ...params, xdrFormat: 5 })).error?.code, -32602);
  // "", "base64" and null are base64
  for (const xdrFormat of ['', 'base64', null]) {
    const r = await rawRpc('getTransaction', { hash: landed.txHash, xdrFormat });
    t.is(typeof r.result?.envelopeXdr, 'string');
  }
});

test('getLatestLedger has no JSON form (as in stellar-rpc): "json" is refused, not ignored', async (t) => {
  const r = await rawRpc('getLatestLedger', { xdrFormat: 'json' });
  t.is(r.error?.code, -32602);
  t.regex(r.error?.message ?? '', /getLatestLedger takes no xdrFormat/);
  const ok = await rawRpc('getLatestLedger', { xdrFormat: 'base64' });
  t.is(typeof ok.result?.headerXdr, 'string');
  // methods without XDR answer the same whatever the format
  const health = await rawRpc('getHealth', { xdrFormat: 'json' });
  t.is(health.result?.status, 'healthy');
});
