// getEvents filters and cursors over token events, and a restart of the sandbox on the same LevelDB data
// directory that keeps contracts, balances, transactions and events, and a close that cannot be written
// reported to the caller's hook.

import { Keypair, nativeToScVal, rpc, scValToNative } from '#stellar-sdk';
import test from 'ava';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { closeFailedLogLine } from '../../src/sandbox/ledger-log.ts';
import {
  address,
  fund,
  i128,
  invokeTx,
  startSandbox,
  submit,
  tempDir,
  testVkey,
  tokenBalance,
} from './helpers.ts';

const USDC = 10_000_000n;
const sym = (s: string) => nativeToScVal(s, { type: 'symbol' }).toXdr('base64');

async function transfer(server: rpc.Server, token: string, from: Keypair, to: string, amount: bigint) {
  const account = await server.getAccount(from.publicKey());
  const tx = await server.prepareTransaction(
    invokeTx(account, token, 'transfer', [address(from.publicKey()), address(to), i128(amount)]),
  );
  tx.sign(from);
  const { final } = await submit(server, tx);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS)
    throw new Error(`transfer failed: ${final?.status}`);
  return final;
}

test('getEvents: topic and contract filters, limits and cursors page through every event once', async (t) => {
  const { sandbox, server } = await startSandbox();
  t.teardown(() => sandbox.close());
  const { token, pool } = sandbox.info.contracts;
  const alice = Keypair.random();
  const bob = Keypair.random();
  await fund(sandbox, alice.publicKey(), '100');
  await fund(sandbox, bob.publicKey()); // a USDC trustline to receive
  for (let i = 1n; i <= 4n; i++) await transfer(server, token, alice, bob.publicKey(), i * USDC);

  const all = await server.getEvents({ startLedger: 1, filters: [] });
  const kinds = all.events.map((e) => scValToNative(e.topic[0]!));
  t.deepEqual(kinds, ['mint', 'transfer', 'transfer', 'transfer', 'transfer']);
  t.deepEqual(
    all.events.filter((e) => scValToNative(e.topic[0]!) === 'transfer').map((e) => scValToNative(e.value)),
    [USDC, 2n * USDC, 3n * USDC, 4n * USDC],
  );
  for (const e of all.events) t.is(e.contractId?.contractId(), token);
  // ids strictly increase
  const ids = all.events.map((e) => e.id);
  t.deepEqual([...ids].sort(), ids);

  const transfers = await server.getEvents({
    startLedger: 1,
    filters: [{ type: 'contract', topics: [[sym('transfer'), '*', '*', '*']] }],
  });
  t.is(transfers.events.length, 4);
  const toBob = await server.getEvents({
    startLedger: 1,
    filters: [{ topics: [[sym('transfer'), '*', address(bob.publicKey()).toXdr('base64'), '**']] }],
  });
  t.is(toBob.events.length, 4);
  const tooShort = await server.getEvents({
    startLedger: 1,
    filters: [{ topics: [[sym('transfer'), '*']] }],
  });
  t.is(tooShort.events.length, 0);
  const wildTail = await server.getEvents({
    startLedger: 1,
    filters: [{ topics: [[sym('transfer'), '**']] }],
  });
  t.is(wildTail.events.length, 4);
  const otherContract = await server.getEvents({ startLedger: 1, filters: [{ contractIds: [pool] }] });
  t.is(otherContract.events.length, 0);

  // paging two at a time visits the same events in the same order
  const paged: string[] = [];
  let page = await server.getEvents({ startLedger: 1, filters: [], limit: 2 });
  while (page.events.length > 0) {
    paged.push(...page.events.map((e) => e.id));
    page = await server.getEvents({ cursor: page.cursor, filters: [], limit: 2 });
  }
  t.deepEqual(paged, ids);
  // a cursor from the end of the range picks up only newer events
  const tail = await server.getEvents({ startLedger: 1, filters: [] });
  await transfer(server, token, alice, bob.publicKey(), 5n);
  const newer = await server.getEvents({ cursor: tail.cursor, filters: [] });
  t.deepEqual(
    newer.events.map((e) => scValToNative(e.value)),
    [5n],
  );
  // getTransactions pages through the applied transactions in ledger order
  const seen: string[] = [];
  let txPage = await server.getTransactions({ startLedger: 1, pagination: { limit: 2 } });
  while (txPage.transactions.length > 0) {
    seen.push(...txPage.transactions.map((tx) => tx.txHash));
    for (const tx of txPage.transactions) t.is(tx.status, rpc.Api.GetTransactionStatus.SUCCESS);
    txPage = await server.getTransactions({ pagination: { cursor: txPage.cursor, limit: 2 } });
  }
  const transferHashes = new Set(
    all.events.filter((e) => scValToNative(e.topic[0]!) === 'transfer').map((e) => e.txHash),
  );
  for (const h of transferHashes) t.true(seen.includes(h));
  t.is(new Set(seen).size, seen.length);
  // endLedger bounds the range
  const firstLedger = all.events[0]!.ledger;
  const bounded = await server.getEvents({ startLedger: 1, endLedger: firstLedger + 1, filters: [] });
  t.true(bounded.events.every((e) => e.ledger <= firstLedger));
});

test('state, transactions and events survive a restart on the same data directory', async (t) => {
  const { dir, remove } = tempDir();
  t.teardown(remove);
  const alice = Keypair.random();
  const bob = Keypair.random();
  let info: unknown;
  let hash = '';
  let ledgerBefore = 0;
  let eventsBefore: string[] = [];
  {
    const { sandbox, server } = await startSandbox({ dataDir: dir });
    try {
      info = sandbox.info;
      await fund(sandbox, alice.publicKey(), '20');
      await fund(sandbox, bob.publicKey());
      const done = await transfer(server, sandbox.info.contracts.token, alice, bob.publicKey(), 3n * USDC);
      hash = done.txHash;
      eventsBefore = (await server.getEvents({ startLedger: 1, filters: [] })).events.map((e) => e.id);
      ledgerBefore = (await server.getLatestLedger()).sequence;
    } finally {
      await sandbox.close();
    }
  }
  const { sandbox, server } = await startSandbox({ dataDir: dir });
  t.teardown(() => sandbox.close());
  t.deepEqual(sandbox.info, info);
  const { token } = sandbox.info.contracts;
  t.is(await tokenBalance(server, token, alice.publicKey()), 17n * USDC);
  t.is(await tokenBalance(server, token, bob.publicKey()), 3n * USDC);
  const tx = await server.getTransaction(hash);
  t.is(tx.status, rpc.Api.GetTransactionStatus.SUCCESS);
  const events = await server.getEvents({ startLedger: 1, filters: [] });
  t.deepEqual(
    events.events.map((e) => e.id),
    eventsBefore,
  );
  t.true((await server.getLatestLedger()).sequence >= ledgerBefore);
  // the chain continues: a new transfer from alice works with her persisted sequence number
  await transfer(server, token, alice, bob.publicKey(), USDC);
  t.is(await tokenBalance(server, token, bob.publicKey()), 4n * USDC);
});

test('a sandbox that cannot listen releases its data directory', async (t) => {
  const { dir, remove } = tempDir();
  t.teardown(remove);
  const { sandbox } = await startSandbox();
  t.teardown(() => sandbox.close());
  const port = Number(new URL(sandbox.url).port);
  await t.throwsAsync(startSandbox({ dataDir: dir, port }), { code: 'EADDRINUSE' });
  const again = await startSandbox({ dataDir: dir });
  t.teardown(() => again.sandbox.close());
  t.is((await again.server.getHealth()).status, 'healthy');
});

test('a ledger close that cannot be written is reported to onCloseFailed, not to the console', async (t) => {
  const { dir, remove } = tempDir();
  t.teardown(remove);
  const failed: Error[] = [];
  let reported: () => void = () => {};
  const sandbox = await startPoolSandbox({
    port: 0,
    ledgerMs: 20,
    dataDir: dir,
    vkey: testVkey(),
    onCloseFailed: (error) => {
      failed.push(error);
      reported();
    },
  });
  t.teardown(() => sandbox.close());
  const first = new Promise<void>((resolve) => (reported = resolve));
  await sandbox.chain.state.close(); // the next close cannot write its batch
  await first;
  t.true(failed.length >= 1);
  t.regex(failed[0]!.message, /not open|closed/i);
  t.deepEqual(closeFailedLogLine(failed[0]!), {
    level: 'error',
    message: 'ledger close failed',
    fields: { error: failed[0]!.message },
  });
});
