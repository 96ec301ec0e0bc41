// The proxy's archive of the pool's events, on both of its homes: a LevelDB directory and the `pool_events`
// table of a real PostgreSQL store. Events come back in id order, once however often they are appended, from
// any point, each with its seal; an event kept is never replaced by another of the same id; an event edited
// where it is kept, or read under another master key, is refused naming it; an export line that is not an
// event is refused. An indexer whose archive holds an event of another contract, or reads an edited row of the
// PostgreSQL table,
// refuses it; one whose archive ends before the RPC's window with no event missing reads on.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { Level } from 'level';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToScVal, rpc } from '#stellar-sdk';
import test from 'ava';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import {
  ArchiveConflictError,
  type ArchivedEvent,
  ForeignEventError,
  type EventArchive,
  LevelEventArchive,
  openEventArchive,
  parseArchived,
  PostgresEventArchive,
  type SealedEvent,
} from '../../src/proxy/services/event-archive.ts';
import { ArchiveSeal, ArchiveSealError } from '../../src/proxy/services/archive-seal.ts';
import { PoolIndexer } from '../../src/proxy/services/pool-indexer.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { PostgresBackend } from '../../src/proxy/store/postgres-backend.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPostgres } from '../helpers/postgres.ts';

const CONTRACT = 'CAAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC526';

function event(ledger: number, n: number): ArchivedEvent {
  return {
    id: `${(BigInt(ledger) << 32n).toString().padStart(19, '0')}-${String(n).padStart(10, '0')}`,
    ledger,
    txHash: randomBytes(32).toString('hex'),
    contractId: CONTRACT,
    topic: [nativeToScVal('some_event', { type: 'symbol' }).toXDR('base64')],
    value: nativeToScVal(n, { type: 'u32' }).toXDR('base64'),
  };
}

const masterKey = randomBytes(32);
const seal = new ArchiveSeal(masterKey);
const sealed = (e: ArchivedEvent): SealedEvent => ({ ...e, mac: seal.mac(e) });

/** `archive` keeps events once, in order, sealed; refuses to replace one; `edit` changes a kept one. */
async function roundTrip(
  t: import('ava').ExecutionContext,
  archive: EventArchive,
  edit: (e: SealedEvent) => Promise<void>,
  reopen: (seal: ArchiveSeal) => Promise<EventArchive>,
): Promise<void> {
  const events = [event(3, 1), event(3, 2), event(7, 1), event(12, 4)];
  t.is(await archive.last(), undefined);
  await archive.append([events[2]!, events[0]!]);
  await archive.append(events); // again, and the rest: each is kept once
  t.deepEqual(await archive.page(undefined, 10), events.map(sealed), 'in id order, once each, sealed');
  t.deepEqual(await archive.page(events[1]!.id, 2), events.slice(2, 4).map(sealed), 'after a given event');
  t.deepEqual(await archive.last(), sealed(events[3]!));

  // Never replaced: an event with a kept id and other content refuses the whole append.
  const forged = { ...events[1]!, value: nativeToScVal(99, { type: 'u32' }).toXDR('base64') };
  const fresh = event(20, 1);
  await t.throwsAsync(archive.append([fresh, forged]), {
    instanceOf: ArchiveConflictError,
    message: new RegExp(`pool event ${events[1]!.id} is in the archive already with other content`),
  });
  t.deepEqual(await archive.page(undefined, 10), events.map(sealed), 'nothing was written');

  // Edited where it is kept: its seal no longer verifies, and reading it is refused, naming it.
  await edit({ ...sealed(events[2]!), value: forged.value });
  const refused = await t.throwsAsync(archive.page(undefined, 10), { instanceOf: ArchiveSealError });
  t.regex(refused!.message, new RegExp(`seal of pool event ${events[2]!.id} does not verify`));
  await edit(sealed(events[2]!)); // put back
  t.is((await archive.page(undefined, 10)).length, 4);
  await archive.close();

  // Read under another master key: refused too.
  const foreign = await reopen(new ArchiveSeal(randomBytes(32)));
  await t.throwsAsync(foreign.page(undefined, 10), { instanceOf: ArchiveSealError });
  await t.throwsAsync(foreign.last(), { instanceOf: ArchiveSealError });
  await foreign.close();
}

test('a LevelDB archive keeps events once, in order, sealed, never replaced, edits refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pp-archive-'));
  let archive = await LevelEventArchive.open(dir, seal);
  // An edit as someone with the directory would make it: through LevelDB itself, the archive closed.
  const edit = async (e: SealedEvent) => {
    await archive.close();
    const db = new Level<string, SealedEvent>(dir, { valueEncoding: 'json' });
    await db.put(e.id, e);
    await db.close();
    archive = await LevelEventArchive.open(dir, seal);
  };
  await roundTrip(
    t,
    {
      append: (events) => archive.append(events),
      page: (after, limit) => archive.page(after, limit),
      last: () => archive.last(),
      close: () => archive.close(),
    },
    edit,
    (other) => LevelEventArchive.open(dir, other),
  );
});

test('a PostgreSQL archive (the pool_events table) keeps events once, in order, sealed, never replaced, edits refused', async (t) => {
  const server = await startPostgres();
  t.teardown(() => server.stop());
  const backend = await PostgresBackend.open(await server.database());
  t.teardown(() => backend.close());
  const edit = async (e: SealedEvent) => {
    await backend.pool.query('UPDATE pool_events SET event = $2::jsonb WHERE id = $1', [
      e.id,
      JSON.stringify(e),
    ]);
  };
  await roundTrip(
    t,
    new PostgresEventArchive(backend, seal),
    edit,
    async (other) => new PostgresEventArchive(backend, other),
  );
});

test('an export line that is not a sealed archived pool event is refused, naming where', (t) => {
  const good = sealed(event(5, 1));
  t.deepEqual(parseArchived(JSON.parse(JSON.stringify(good)), 'f line 1'), good);
  const { mac: _, ...unsealed } = good;
  for (const bad of [
    null,
    {},
    { ...good, id: '5-1' },
    { ...good, txHash: 'x' },
    { ...good, topic: 'x' },
    unsealed,
  ])
    t.throws(() => parseArchived(bad, 'f line 2'), { message: /f line 2: not an archived pool event/ });
  t.throws(() => parseArchived({ ...good, value: 'not xdr' }, 'f line 3'), {
    message: /f line 3: .* not XDR/,
  });
});

test('a seal covers every field of the event and verifies only under its master key', (t) => {
  const e = event(5, 1);
  const mac = seal.mac(e);
  t.true(seal.verifies(e, mac));
  for (const changed of [
    { ...e, id: event(5, 2).id },
    { ...e, ledger: 6 },
    { ...e, txHash: randomBytes(32).toString('hex') },
    { ...e, contractId: 'CBBB' },
    { ...e, topic: [...e.topic, e.topic[0]!] },
    { ...e, value: nativeToScVal(2, { type: 'u32' }).toXDR('base64') },
  ])
    t.false(seal.verifies(changed, mac));
  t.false(
    seal.verifies(
      e,
      mac.replace(/^./, (c) => (c === '0' ? '1' : '0')),
    ),
    'an edited seal',
  );
  t.false(seal.verifies(e, undefined), 'no seal');
  t.false(new ArchiveSeal(randomBytes(32)).verifies(e, mac), 'another master key');
});

test('an archive that ends before what the RPC keeps is read on from the RPC; an event of another contract, or an edited row on PostgreSQL, stops the indexer', async (t) => {
  // Ledgers of 250 ms, 8 kept (as store-recover.test.ts): the oldest moves on while the indexer reads from it.
  const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 250 });
  t.teardown(() => sandbox.close());
  sandbox.chain.state.retainLedgers(8);
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  while ((await server.getHealth()).oldestLedger < 3) await new Promise((r) => setTimeout(r, 100));
  const { contracts } = sandbox.info;
  /** An indexer of this sandbox's pool on `store`, replaying `archive` first. */
  const indexerOn = (store: EncryptedStore, archive: EventArchive) =>
    new PoolIndexer({
      server,
      store,
      contracts: {
        pool: contracts.pool,
        aspMembership: contracts.asp_membership,
        aspNonMembership: contracts.asp_non_membership,
      },
      startLedger: 0,
      logger: silentLogger,
      archive,
      treeCapacity: 2 ** 20,
    });
  /** An indexer on an empty store whose archive holds `events`. */
  const indexerWith = async (events: ArchivedEvent[]) => {
    const archive = await LevelEventArchive.open(mkdtempSync(join(tmpdir(), 'pp-archive-')), seal);
    t.teardown(() => archive.close());
    await archive.append(events);
    const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-archive-store-')), masterKey);
    t.teardown(() => store.close());
    return indexerOn(store, archive);
  };
  // Ledgers without pool events between the archive's last event and the RPC's oldest are no gap: the
  // indexer replays the archive and reads on (what it rebuilt is checked against the chain: chain-check.ts).
  await t.notThrowsAsync((await indexerWith([{ ...event(1, 1), contractId: contracts.pool }])).sync());
  // An event of another contract (sealed under this master key: another deployment's archive) is refused.
  const foreign = await t.throwsAsync((await indexerWith([event(1, 1)])).sync(), {
    instanceOf: ForeignEventError,
  });
  t.regex(
    foreign!.message,
    new RegExp(`pool event .* is of contract ${CONTRACT}, not of this deployment's pool`),
  );

  // Replicas on PostgreSQL share the archive table: a row edited there is refused by the replay that reads it.
  const pg = await startPostgres();
  t.teardown(() => pg.stop());
  const store = await EncryptedStore.open(await pg.database(), masterKey);
  t.teardown(() => store.close());
  const archive = await openEventArchive(store, '', seal);
  const kept = { ...event(1, 1), contractId: contracts.pool };
  await archive.append([kept]);
  const backend = store.backend as PostgresBackend;
  await backend.pool.query(`UPDATE pool_events SET event = jsonb_set(event, '{ledger}', '2') WHERE id = $1`, [
    kept.id,
  ]);
  const edited = await t.throwsAsync(indexerOn(store, archive).sync(), {
    instanceOf: ArchiveSealError,
  });
  t.regex(edited!.message, new RegExp(`the seal of pool event ${kept.id} does not verify`));
});
