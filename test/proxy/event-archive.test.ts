// The proxy's archive of the pool's events, on both of its homes: a LevelDB directory and the `pool_events`
// table of a real PostgreSQL store. Events come back in id order, once however often they are appended, from
// any point; an export line that is not an event is refused. An indexer whose archive ends before what the RPC
// keeps refuses to go on (a sandbox with a retention window), naming the gap and the way out.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToScVal, rpc } from '#stellar-sdk';
import test from 'ava';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import {
  type ArchivedEvent,
  type EventArchive,
  LevelEventArchive,
  parseArchived,
  PostgresEventArchive,
} from '../../src/proxy/services/event-archive.ts';
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

async function roundTrip(t: import('ava').ExecutionContext, archive: EventArchive): Promise<void> {
  const events = [event(3, 1), event(3, 2), event(7, 1), event(12, 4)];
  t.is(await archive.last(), undefined);
  await archive.append([events[2]!, events[0]!]);
  await archive.append(events); // again, and the rest: each is kept once
  t.deepEqual(await archive.page(undefined, 10), events, 'in id order, once each');
  t.deepEqual(await archive.page(events[1]!.id, 2), events.slice(2, 4), 'after a given event');
  t.deepEqual(await archive.last(), events[3]);
  await archive.close();
}

test('a LevelDB archive keeps events once, in order, from any point', async (t) => {
  await roundTrip(t, await LevelEventArchive.open(mkdtempSync(join(tmpdir(), 'pp-archive-'))));
});

test('a PostgreSQL archive (the pool_events table) keeps events once, in order, from any point', async (t) => {
  const server = await startPostgres();
  t.teardown(() => server.stop());
  const backend = await PostgresBackend.open(await server.database());
  t.teardown(() => backend.close());
  await roundTrip(t, new PostgresEventArchive(backend));
});

test('an export line that is not an archived pool event is refused, naming where', (t) => {
  const good = event(5, 1);
  t.deepEqual(parseArchived(JSON.parse(JSON.stringify(good)), 'f line 1'), good);
  for (const bad of [null, {}, { ...good, id: '5-1' }, { ...good, txHash: 'x' }, { ...good, topic: 'x' }])
    t.throws(() => parseArchived(bad, 'f line 2'), { message: /f line 2: not an archived pool event/ });
  t.throws(() => parseArchived({ ...good, value: 'not xdr' }, 'f line 3'), {
    message: /f line 3: .* not XDR/,
  });
});

test('an archive that ends before what the RPC keeps stops the indexer with the gap named', async (t) => {
  const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 50 });
  t.teardown(() => sandbox.close());
  sandbox.chain.state.retainLedgers(2);
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  while ((await server.getHealth()).oldestLedger < 6) await new Promise((r) => setTimeout(r, 50));
  const archive = await LevelEventArchive.open(mkdtempSync(join(tmpdir(), 'pp-archive-')));
  t.teardown(() => archive.close());
  await archive.append([event(1, 1)]);
  const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-archive-store-')), randomBytes(32));
  t.teardown(() => store.close());
  const { contracts } = sandbox.info;
  const indexer = new PoolIndexer({
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
  const error = await t.throwsAsync(indexer.sync());
  t.regex(error!.message, /the pool's events from ledger 2 to \d+ are neither in the event archive/);
  t.regex(error!.message, /pool-proxy store import-events/);
});
