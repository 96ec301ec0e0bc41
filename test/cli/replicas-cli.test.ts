// The replica commands' input, on a real PostgreSQL server. `pool-proxy store migrate --to postgres://…`: a
// LevelDB store's records are copied unchanged into an empty database and read back with the same master key;
// a database that already holds a store, a URL that is not postgres, a missing store and a missing master key
// are refused with a clear message and change nothing. `start --replicas` and `serve` refuse what cannot
// work before starting anything.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { runCli } from '../helpers/cli.ts';
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
  return { dir, master };
}

const cleanEnv = { POOL_PROXY_MASTER_KEY: undefined, POOL_PROXY_DATABASE_URL: undefined };

test('the records move unchanged and open with the same master key; a second migration is refused', async (t) => {
  const { dir, master } = await dataDir();
  const url = await server.database();
  const run = runCli(['store', 'migrate', '--data-dir', dir, '--to', url], cleanEnv);
  t.is(await run.exited, 0, run.output());
  t.regex(run.stdout(), /copied 1202 records from .*proxy-store to postgres:\/\//);
  const store = await EncryptedStore.open(url, master);
  const notes = await store.entries<{ amount: bigint }>(store.prefix('note', 'agent'));
  t.is(notes.length, 1200);
  t.deepEqual(await store.get(store.key('agent', 'GOWNER', 'agent-1')), {
    owner: 'GOWNER',
    agentId: 'agent-1',
  });
  await store.close();
  const again = runCli(['store', 'migrate', '--data-dir', dir, '--to', url], cleanEnv);
  t.is(await again.exited, 1);
  t.regex(again.stderr(), /already holds 1202 records: migrate into an empty database/);
});

test('bad input is refused with a clear message', async (t) => {
  const { dir } = await dataDir();
  const cases: Array<[string[], Record<string, string | undefined>, RegExp]> = [
    [['--to', 'mysql://u@h/d'], cleanEnv, /--to must be a postgres:\/\/ URL/],
    [
      ['--to', await server.database()],
      { ...cleanEnv, POOL_PROXY_STORE_DIR: 'nowhere' },
      /there is no store in .*nowhere/,
    ],
    [
      ['--to', await server.database()],
      { ...cleanEnv, POOL_PROXY_MASTER_KEY_FILE: 'missing.key' },
      /no master key .*missing\.key is missing/,
    ],
  ];
  await Promise.all(
    cases.map(async ([args, env, message]) => {
      const run = runCli(['store', 'migrate', '--data-dir', dir, ...args], env);
      t.is(await run.exited, 1);
      t.regex(run.stderr(), message);
    }),
  );
  const missing = runCli(['store', 'migrate', '--data-dir', dir], cleanEnv);
  t.is(await missing.exited, 1);
  t.regex(missing.stderr(), /required option '--to <url>'/);
});

test('start --replicas and serve refuse what cannot work, before starting anything', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pp-replicas-'));
  const cases: Array<[string[], Record<string, string | undefined>, RegExp]> = [
    [['start', '--replicas', '2'], cleanEnv, /--replicas needs POOL_PROXY_DATABASE_URL/],
    [['start', '--replicas', '0'], cleanEnv, /--replicas must be a whole number from 1 to 64, got \\?"0/],
    [['start', '--replicas', 'three'], cleanEnv, /--replicas must be a whole number from 1 to 64/],
    [
      ['start', '--replicas', '3'],
      { ...cleanEnv, POOL_PROXY_DATABASE_URL: server.url, POOL_PROXY_PORT: '65534' },
      /ports 65534…65536 do not exist/,
    ],
    [
      ['serve'],
      { ...cleanEnv, POOL_PROXY_DATABASE_URL: 'mysql://x@y/z' },
      /POOL_PROXY_DATABASE_URL must be a postgres/,
    ],
    [
      ['serve'],
      { ...cleanEnv, POOL_PROXY_DATABASE_URL: server.url.replace(/\/postgres$/, '/missing_db') },
      /cannot open the database postgres:\/\/.*missing_db/,
    ],
  ];
  await Promise.all(
    cases.map(async ([args, env, message]) => {
      const run = runCli([...args, '--data-dir', dir], env);
      t.is(await run.exited, 1, run.output());
      t.regex(run.output(), message);
    }),
  );
});
