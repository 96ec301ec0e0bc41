// The replica commands' input, on a real PostgreSQL server. `pool-proxy store migrate --to postgres://…`: a
// LevelDB store's records are copied unchanged into an empty database and read back with the same master key,
// and the archive of the pool's events goes into its table; a database that already holds a store, a URL that is
// not postgres, a missing store and a missing master key are refused with a clear message and change nothing. `store check|recover` on the database find a changed
// record and set the records aside. `start --replicas` and `serve` refuse what cannot work before starting
// anything. Few processes: on a loaded machine each `pool-proxy` start costs seconds, so what needs none is
// called directly.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { replicaEnvs } from '../../src/cli/commands/replicas.ts';
import { checkDatabaseStore } from '../../src/cli/commands/store-database.ts';
import { migrateStore } from '../../src/cli/commands/store-migrate.ts';
import { LevelEventArchive } from '../../src/proxy/services/event-archive.ts';
import { ArchiveSeal } from '../../src/proxy/services/archive-seal.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestProxy } from '../proxy/helpers/proxy.ts';
import { checkSessionsEnded, openSessions } from '../proxy/helpers/sessions.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';

let server: PostgresServer;
test.before(async () => {
  server = await startPostgres();
});
test.after.always(async () => {
  await server?.stop();
});

/** A data directory with a master key file and a LevelDB store holding a few records. */
async function dataDir(): Promise<{ dir: string; master: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), 'pp-migrate-'));
  const master = randomBytes(32);
  writeFileSync(join(dir, 'master.key'), `${master.toString('hex')}\n`, { mode: 0o600 });
  const store = await EncryptedStore.open(join(dir, 'proxy-store'), master);
  await store.batch(
    Array.from({ length: 1200 }, (_, i) => ({
      type: 'put' as const,
      key: store.key('note', 'agent', String(i)),
      value: { amount: BigInt(i) },
    })),
  );
  await store.put(store.key('agent', 'GOWNER', 'agent-1'), { owner: 'GOWNER', agentId: 'agent-1' });
  await store.close();
  // The archive of the pool's events beside it (more events than one copy batch).
  const archive = await LevelEventArchive.open(join(dir, 'pool-events'), new ArchiveSeal(master));
  await archive.append(
    Array.from({ length: 700 }, (_, i) => ({
      id: String(i).padStart(19, '0'),
      ledger: i,
      txHash: 'ab'.repeat(32),
      contractId: 'CPOOL',
      topic: ['AAAADwAAAAR0ZXN0'],
      value: 'AAAAAQ==',
    })),
  );
  await archive.close();
  return { dir, master };
}

const cleanEnv = { POOL_PROXY_MASTER_KEY: undefined, POOL_PROXY_DATABASE_URL: undefined };

test.serial(
  'store migrate: the records move unchanged and open with the same master key; a second is refused',
  async (t) => {
    const { dir, master } = await dataDir();
    const url = await server.database();
    const run = runCli(['store', 'migrate', '--data-dir', dir, '--to', url], cleanEnv);
    t.is(await run.exited, 0, run.output());
    t.regex(run.stdout(), /copied 1202 records from .*proxy-store to postgres:\/\//);
    t.regex(run.stdout(), /copied 700 pool events from .*pool-events/);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const { rows } = await db.query<{ n: string; last: string }>(
      "SELECT count(*) AS n, max((event->>'ledger')::int)::text AS last FROM pool_events",
    );
    await db.end();
    t.deepEqual(rows[0], { n: '700', last: '699' });
    const store = await EncryptedStore.open(url, master);
    const notes = await store.entries<{ amount: bigint }>(store.prefix('note', 'agent'));
    t.is(notes.length, 1200);
    t.deepEqual(await store.get(store.key('agent', 'GOWNER', 'agent-1')), {
      owner: 'GOWNER',
      agentId: 'agent-1',
    });
    await store.close();
    await t.throwsAsync(migrateStore({ dir: join(dir, 'proxy-store'), url, masterKey: master }), {
      message: /already holds 1202 records: migrate into an empty database/,
    });
  },
);

test.serial(
  'store check and recover on PostgreSQL: a changed record is found, recover sets the records aside',
  async (t) => {
    const { dir, master } = await dataDir();
    const url = await server.database();
    await migrateStore({ dir: join(dir, 'proxy-store'), url, masterKey: master });
    t.is(await checkDatabaseStore(url, master), 1202);
    const env = { ...cleanEnv, POOL_PROXY_DATABASE_URL: url };
    // A proxy on the database (no ledger needed for this): a wallet logs in twice and logs one token out.
    const proxyEnv = {
      POOL_PROXY_DATABASE_URL: url,
      POOL_PROXY_MASTER_KEY: master.toString('hex'),
      POOL_PROXY_DATA_DIR: dir,
    };
    const before = await startTestProxy(proxyEnv);
    const sessions = await openSessions(before.url).finally(() => before.close());
    const records = await checkDatabaseStore(url, master);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      "UPDATE kv SET value = overlay(value placing '\\x00'::bytea from 30 for 1) WHERE key = (SELECT min(key) FROM kv WHERE key LIKE 'note/%')",
    );
    const damaged = runCli(['store', 'check', '--data-dir', dir], env);
    t.is(await damaged.exited, 1);
    t.regex(
      damaged.stderr(),
      new RegExp(
        `1 of ${records} records in postgres://.* fail authentication .*run pool-proxy store recover`,
      ),
    );
    // recover checks the master key against the chain: give it a ledger
    const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 250 });
    try {
      const recovered = runCli(['store', 'recover', '--data-dir', dir], {
        ...env,
        POOL_PROXY_RPC_URL: sandbox.rpcUrl,
        POOL_PROXY_SANDBOX_INFO_URL: `${sandbox.url}/sandbox/info`,
      });
      t.is(await recovered.exited, 0, recovered.output());
      t.regex(recovered.stdout(), /moved the records of postgres:\/\/.* to table kv_damaged_\d+ \(kept/);
    } finally {
      await sandbox.close();
    }
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'kv_damaged_%'",
    );
    t.is(rows[0].n, 1, 'the old records are kept aside');
    await client.end();
    t.is(
      await checkDatabaseStore(url, master),
      3,
      'an empty store for the same master key: its key check, a new session epoch, the payment history to rebuild',
    );
    // Every session of the replaced store ended: the logged-out token stays refused (REST and /mcp).
    const after = await startTestProxy(proxyEnv);
    try {
      await checkSessionsEnded(t, after.url, sessions);
    } finally {
      await after.close();
    }
  },
);

test.serial('store migrate refuses bad input with a clear message', async (t) => {
  const { dir, master } = await dataDir();
  const store = join(dir, 'proxy-store');
  await t.throwsAsync(migrateStore({ dir: store, url: 'mysql://u@h/d', masterKey: master }), {
    message: /--to must be a postgres:\/\/ URL/,
  });
  await t.throwsAsync(
    migrateStore({ dir: join(dir, 'nowhere'), url: await server.database(), masterKey: master }),
    {
      message: /there is no store in .*nowhere/,
    },
  );
  const run = runCli(['store', 'migrate', '--data-dir', dir, '--to', await server.database()], {
    ...cleanEnv,
    POOL_PROXY_MASTER_KEY_FILE: 'missing.key',
  });
  t.is(await run.exited, 1);
  t.regex(run.stderr(), /no master key .*missing\.key is missing/);
});

test.serial('start --replicas and serve refuse what cannot work, before starting anything', async (t) => {
  const config = (env: Record<string, string>) => loadConfig(env);
  t.throws(() => replicaEnvs({}, config({}), '2'), { message: /--replicas needs POOL_PROXY_DATABASE_URL/ });
  for (const bad of ['0', 'three', '65'])
    t.throws(() => replicaEnvs({}, config({}), bad), {
      message: /--replicas must be a whole number from 1 to 64/,
    });
  const shared = { POOL_PROXY_DATABASE_URL: server.url };
  t.throws(() => replicaEnvs(shared, config({ ...shared, POOL_PROXY_PORT: '65534' }), '3'), {
    message: /ports 65534…65536 do not exist/,
  });
  t.deepEqual(replicaEnvs(shared, config({ ...shared, POOL_PROXY_PORT: '9000' }), '3'), [
    { POOL_PROXY_PORT: '9000', POOL_PROXY_PUBLIC_URL: 'http://127.0.0.1:9000' },
    { POOL_PROXY_PORT: '9001', POOL_PROXY_PUBLIC_URL: 'http://127.0.0.1:9000' },
    { POOL_PROXY_PORT: '9002', POOL_PROXY_PUBLIC_URL: 'http://127.0.0.1:9000' },
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'pp-replicas-'));
  const start = runCli(['start', '--replicas', '2', '--data-dir', dir], cleanEnv);
  const serve = runCli(['serve', '--data-dir', dir], {
    ...cleanEnv,
    POOL_PROXY_DATABASE_URL: server.url.replace(/\/postgres$/, '/missing_db'),
  });
  t.is(await start.exited, 1);
  t.regex(start.output(), /--replicas needs POOL_PROXY_DATABASE_URL/);
  t.is(await serve.exited, 1);
  t.regex(serve.output(), /cannot open the database postgres:\/\/.*missing_db/);
});
