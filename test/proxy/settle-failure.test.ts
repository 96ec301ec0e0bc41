// What a failed money flow gives back, on a real encrypted LevelDB store with the proxy's journal, note book and
// note crediting: before its transaction is sent any failure releases the reservation and note locks; once
// sent, only the ledger's refusal does. A transaction confirmed but not yet credited, one not decided in time
// or any unexpected error after sending keeps everything held for reconciliation, which decides by hash — a
// settlement given back while its transfer landed would be settled, and charged, twice.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { rpc } from '#stellar-sdk';
import { DomainError } from '../../src/proxy/domain/errors.ts';
import { settleFailure } from '../../src/proxy/flows/settle-failure.ts';
import { Journal, type OperationState } from '../../src/proxy/journal/journal.ts';
import { AgentKeyring } from '../../src/proxy/services/agent-keyring.ts';
import { AgentRegistry } from '../../src/proxy/services/agents.ts';
import { UncertainOutcome } from '../../src/proxy/services/chain-client.ts';
import { NoteCrediting } from '../../src/proxy/services/note-crediting.ts';
import { NoteBook } from '../../src/proxy/services/notebook.ts';
import { PoolIndexer } from '../../src/proxy/services/pool-indexer.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';

const AGENT = 'w/agent';
const PENDING = { commitment: 77n, amount: 40n, blinding: 5n };

async function rig(t: ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), 'pp-settle-'));
  const store = await EncryptedStore.open(dir, randomBytes(32));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const notes = new NoteBook(store);
  const journal = new Journal(store, undefined, Date.now);
  // The indexer is never started here: nothing is read from a ledger.
  const indexer = new PoolIndexer({
    server: new rpc.Server('http://127.0.0.1:9', { allowHttp: true }),
    store,
    contracts: { pool: 'pool', aspMembership: 'asp-membership', aspNonMembership: 'asp-non-membership' },
    startLedger: 0,
    logger: silentLogger,
    treeCapacity: 2 ** 20,
  });
  const crediting = new NoteCrediting({
    store,
    notes,
    agents: new AgentRegistry(store, Date.now),
    indexer,
    keyring: new AgentKeyring(randomBytes(32)),
    logger: silentLogger,
  });
  await notes.credit(AGENT, [{ commitment: 1n, amount: 100n, blinding: 3n, leafIndex: 0, nullifier: 1000n }]);
  /** A withdrawal of 60 that reserved its amount, locked its note and reached `state`. */
  const withdrawal = async (state: OperationState) => {
    const opId = randomUUID();
    await journal.begin({ opId, kind: 'withdraw', agent: AGENT, state: 'reserved', amount: 60n });
    await notes.reserve(AGENT, opId, 60n);
    await notes.lock(AGENT, opId, [1n]);
    if (state === 'submitted')
      await journal.update(
        opId,
        { state, txHash: 'ab'.repeat(32), maxTime: 2_000_000_000, outputs: [PENDING] },
        crediting.pendingOps(AGENT, [PENDING]),
      );
    else await journal.update(opId, { state });
    return opId;
  };
  const ctx = { journal, notes, crediting };
  return { ctx, withdrawal, available: () => notes.available(AGENT) };
}

test('after sending, an error other than the ledger’s refusal keeps the operation held for reconciliation', async (t) => {
  const { ctx, withdrawal, available } = await rig(t);
  const afterSend = [
    new DomainError('service_unavailable', 'the transaction is confirmed but not indexed yet'),
    new UncertainOutcome('ab'.repeat(32), new Error('timed out')),
    new Error('socket hang up'),
    'a thrown string',
  ];
  for (const error of afterSend) {
    const opId = await withdrawal('submitted');
    const held = await available();
    await settleFailure(ctx, opId, error);
    const record = await ctx.journal.get(opId);
    t.is(record?.state, 'submitted', String(error));
    t.true(
      (await ctx.journal.open()).some((r) => r.opId === opId),
      'reconciliation will see it',
    );
    t.is(await available(), held, 'the reservation stays');
    t.deepEqual(record?.outputs, [PENDING], 'its pending output stays, to be credited when it lands');
    await settleFailure(ctx, opId, new DomainError('ledger_rejected', 'refused'));
  }
});

test('the ledger’s refusal after sending, and any failure before it, release what the operation held', async (t) => {
  const { ctx, withdrawal, available } = await rig(t);
  const before = await available();
  const refused = await withdrawal('submitted');
  await settleFailure(
    ctx,
    refused,
    new DomainError('ledger_rejected', 'the transaction failed on the ledger'),
  );
  t.like(await ctx.journal.get(refused), { state: 'failed', reason: { code: 'ledger_rejected' } });
  t.is(await available(), before, 'reservation and note lock released');
  for (const error of [new DomainError('insufficient_balance', 'short'), new Error('prover crashed')]) {
    const opId = await withdrawal('proving');
    await settleFailure(ctx, opId, error);
    t.is((await ctx.journal.get(opId))?.state, 'failed', String(error));
    t.is(await available(), before);
  }
});
