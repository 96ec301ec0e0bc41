// Soroban RPC behaviour beyond the transaction lifecycle, through the SDK's rpc.Server: getLedgers paging,
// simulation stateChanges and a resource fee that grows with the footprint and the bytes written, the fee
// event in transactionEventsXdr, getFeeStats from recent ledgers. (xdrFormat: xdr-json.test.ts.)
import {
  Account,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { address, fund, i128, invokeTx, startSandbox, submit } from './helpers.ts';

const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });
const hex = (h: { toXdr(): Uint8Array }) => Buffer.from(h.toXdr()).toString('hex');

let sandbox: PoolSandbox;
let server: rpc.Server;
let admin: Keypair;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  admin = Keypair.fromSecret(sandbox.secrets().admin);
});
test.after.always(() => sandbox?.close());

async function rawRpc(method: string, params: unknown) {
  const res = await fetch(sandbox.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

test('getLedgers pages through closed ledgers with headers the SDK parses', async (t) => {
  while ((await server.getLatestLedger()).sequence < 6) await sandbox.chain.nextClose();
  const first = await server.getLedgers({ startLedger: 1, pagination: { limit: 2 } });
  t.deepEqual(
    first.ledgers.map((l) => l.sequence),
    [1, 2],
  );
  t.is(first.cursor, '2');
  t.is(first.oldestLedger, 1);
  t.true(first.latestLedger >= 6);
  for (const l of first.ledgers) {
    t.is(l.headerXdr.header.ledgerSeq, l.sequence);
    t.is(hex(l.headerXdr.hash), l.hash);
    t.is(typeof l.ledgerCloseTime, 'string');
  }
  // ledger 2's header links to ledger 1's hash
  t.is(hex(first.ledgers[1]!.headerXdr.header.previousLedgerHash), first.ledgers[0]!.hash);
  const next = await server.getLedgers({ pagination: { cursor: first.cursor, limit: 3 } } as never);
  t.deepEqual(
    next.ledgers.map((l) => l.sequence),
    [3, 4, 5],
  );
  // out of range, both start and cursor, bad limits: JSON-RPC errors
  for (const params of [
    { startLedger: 0 },
    { startLedger: 1_000_000 },
    { startLedger: 1, pagination: { cursor: '1' } },
    { startLedger: 1, pagination: { limit: 0 } },
    { startLedger: 1, pagination: { limit: 10_001 } },
    { pagination: { cursor: 'x' } },
  ]) {
    const r = await rawRpc('getLedgers', params);
    t.is(r.error?.code, -32602, JSON.stringify(params));
  }
});

test('simulation reports stateChanges and a resource fee that grows with what is written', async (t) => {
  const id = sandbox.info.contracts.asp_non_membership;
  const source = await server.getAccount(admin.publicKey());
  const simInsert = (key: bigint) =>
    server.simulateTransaction(
      invokeTx(new Account(source.accountId(), source.sequenceNumber()), id, 'insert_leaf', [
        u256(key),
        u256(1n),
      ]),
    );
  const first = await simInsert(1000n);
  if (!rpc.Api.isSimulationSuccess(first)) return t.fail(first.error);
  const changes = first.stateChanges ?? [];
  t.true(changes.length >= 2, 'the leaf and the root change');
  for (const c of changes) {
    t.true(['created', 'updated', 'deleted'].includes(c.type as unknown as string));
    t.true(c.after !== null || c.before !== null);
  }
  // a read-only call costs less than a write
  const readOnly = await server.simulateTransaction(
    invokeTx(new Account(source.accountId(), source.sequenceNumber()), id, 'get_root', []),
  );
  if (!rpc.Api.isSimulationSuccess(readOnly)) return t.fail(readOnly.error);
  t.is(readOnly.stateChanges, undefined, 'a read changes nothing');
  t.true(BigInt(readOnly.minResourceFee) < BigInt(first.minResourceFee));

  // grow the blocklist: the sparse tree deepens, so the same insert writes more nodes and costs more
  for (let i = 0n; i < 12n; i++) {
    const sim = await simInsert(2000n + i);
    if (!rpc.Api.isSimulationSuccess(sim)) return t.fail(sim.error);
    const acct = await server.getAccount(admin.publicKey());
    const tx = rpc
      .assembleTransaction(invokeTx(acct, id, 'insert_leaf', [u256(2000n + i), u256(1n)]), sim)
      .build();
    tx.sign(admin);
    const { final } = await submit(server, tx);
    t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  }
  const later = await simInsert(1000n);
  if (!rpc.Api.isSimulationSuccess(later)) return t.fail(later.error);
  const bytes = (s: rpc.Api.SimulateTransactionSuccessResponse) =>
    Number(s.transactionData.build().resources.writeBytes);
  t.true(bytes(later) > bytes(first), 'more bytes written');
  // the declared resources cost more, by the host's fee model (the whole fee also carries rent)
  const declared = (s: rpc.Api.SimulateTransactionSuccessResponse) =>
    sandbox.chain.host.transactionResourceFee({
      sorobanData: Buffer.from(s.transactionData.build().toXdr()),
      transactionSizeBytes: 0,
    }).nonRefundable;
  t.true(declared(later) > declared(first), 'a higher fee for the bytes');
});

test('a landed transaction carries its fee event, and getFeeStats reflects recent inclusion fees', async (t) => {
  const alice = Keypair.random();
  const bob = Keypair.random();
  await fund(sandbox, alice.publicKey(), '10');
  await fund(sandbox, bob.publicKey());
  const token = sandbox.info.contracts.token;
  const call = invokeTx(await server.getAccount(alice.publicKey()), token, 'transfer', [
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(1n),
  ]);
  const sim = await server.simulateTransaction(call);
  if (!rpc.Api.isSimulationSuccess(sim)) return t.fail(sim.error);
  // bid 1,000 stroops of inclusion fee above the resource fee
  const func = (call.operations[0] as Operation.InvokeHostFunction).func;
  const rebuilt = new TransactionBuilder(await server.getAccount(alice.publicKey()), {
    fee: '1000',
    networkPassphrase: STANDALONE_PASSPHRASE,
  })
    .setSorobanData(sim.transactionData.build())
    .addOperation(Operation.invokeHostFunction({ func, auth: sim.result!.auth }))
    .setTimeout(60)
    .build();
  rebuilt.sign(alice);
  const { final } = await submit(server, rebuilt);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return t.fail(`not applied: ${final?.status}`);
  const raw = await rawRpc('getTransaction', { hash: final.txHash });
  const events = (raw.result?.events as { transactionEventsXdr: string[] }).transactionEventsXdr;
  // charged before the ledger's transactions: the declared resource fee and the network's base inclusion fee
  // (no surge pricing), not the whole bid; refunded after all of them: the refundable part not consumed
  t.is(events.length, 2);
  const [charged, refunded] = events.map((e) => xdr.TransactionEvent.fromXdr(e, 'base64'));
  t.is(charged?.stage.name, 'transactionEventStageBeforeAllTxs');
  t.is(refunded?.stage.name, 'transactionEventStageAfterAllTxs');
  const amount = (ev: xdr.TransactionEvent | undefined) => {
    const body = ev?.event.body.value as xdr.ContractEventV0;
    t.is(String(body.topics[0]?.value), 'fee');
    t.is(scValToNative(body.topics[1] as xdr.ScVal), alice.publicKey());
    return BigInt(scValToNative(body.data));
  };
  t.is(amount(charged), BigInt(sim.minResourceFee) + 100n);
  const refund = -amount(refunded);
  t.true(refund > 0n && refund < BigInt(sim.minResourceFee));
  // the result's feeCharged is what stays charged
  const result = xdr.TransactionResult.fromXdr(final.resultXdr.toXdr());
  t.is(BigInt(result.feeCharged as unknown as bigint), amount(charged) - refund);

  const stats = await server.getFeeStats();
  t.true(Number(stats.sorobanInclusionFee.transactionCount) >= 1);
  t.is(stats.sorobanInclusionFee.max, '1000', 'fee stats report the inclusion fees bid');
  t.true(stats.sorobanInclusionFee.ledgerCount >= 1);
});
