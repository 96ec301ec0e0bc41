// The encrypted store on PostgreSQL (a real server from Debian's package, one for the whole file): the
// database holds only ciphertext under opaque keys, tampering is detected, batches are all-or-nothing,
// prefixes list in LevelDB's order, and the schema migrations are versioned, run once and refuse a newer
// database. Two stores on one database stand for two processes: mutex and lease sections exclude each other,
// the rate limits and wallet quotas they share hold for both together, and one of them leads a singleton
// job until its connection dies, when another is elected under a higher epoch that fences the old leader.
// The payment queue they share holds sealed rows under opaque ids, and a leader that lost its election can
// neither take a payment nor answer one; a notification from one reaches the other. A batch leader that
// stalled and was replaced cannot sign the payment it had taken (its journal write is fenced by the epoch).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { Campaign, FencedError } from '../../src/proxy/cluster/leadership.ts';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PaymentResult } from '../../src/api/types.ts';
import { joinCluster } from '../../src/proxy/cluster/cluster.ts';
import { Notifications } from '../../src/proxy/cluster/notifications.ts';
import { Journal } from '../../src/proxy/journal/journal.ts';
import type { QueuedPayment } from '../../src/proxy/payments/batches.ts';
import { PaymentRecords } from '../../src/proxy/payments/records.ts';
import { ReplicatedBatches } from '../../src/proxy/payments/replicated-batches.ts';
import { PaymentQueue } from '../../src/proxy/cluster/payment-queue.ts';
import { SharedWalletQuotas } from '../../src/proxy/cluster/shared-quotas.ts';
import { SharedRateLimiter } from '../../src/proxy/cluster/shared-rate-limit.ts';
import { ConfigError, loadConfig } from '../../src/proxy/config.ts';
import { EncryptedStore, StoreTamperError } from '../../src/proxy/store/encrypted-store.ts';
import { SCHEMA_VERSION } from '../../src/proxy/store/migrations.ts';
import { DatabaseError, PostgresBackend, redactUrl } from '../../src/proxy/store/postgres-backend.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';

let server: PostgresServer;
test.before(async () => {
  server = await startPostgres();
});
test.after.always(async () => {
  await server?.stop();
});

async function rows(url: string): Promise<Array<{ key: string; value: Buffer }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ key: string; value: Buffer }>('SELECT key, value FROM kv ORDER BY key'))
      .rows;
  } finally {
    await client.end();
  }
}

async function sql(url: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

test('the database holds ciphertext under opaque keys; values round-trip', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  const store = await EncryptedStore.open(url, master);
  t.is(store.backend.kind, 'postgres');
  const key = store.key('agent', 'GWALLETSECRETNAME', 'agent-visible-name');
  await store.put(key, { owner: 'GWALLETSECRETNAME', amount: 2n ** 200n, bytes: new Uint8Array([7, 8]) });
  const read = await store.get<{ owner: string; amount: bigint; bytes: Uint8Array }>(key);
  t.is(read!.owner, 'GWALLETSECRETNAME');
  t.is(read!.amount, 2n ** 200n);
  t.deepEqual(read!.bytes, new Uint8Array([7, 8]));
  const dump = (await rows(url)).map((r) => `${r.key}=${r.value.toString('latin1')}`).join('\n');
  t.false(dump.includes('GWALLETSECRETNAME'), 'no identifier in keys or values');
  t.false(dump.includes('agent-visible-name'));
  t.regex(dump, /^agent\/[A-Za-z0-9_-]{32}\/[A-Za-z0-9_-]{32}=/m, 'namespace, then HMAC segments');
  await store.close();
});

test('a value changed in the database, or moved to another key, fails authentication', async (t) => {
  const url = await server.database();
  const store = await EncryptedStore.open(url, randomBytes(32));
  const a = store.key('note', 'x', '1');
  const b = store.key('note', 'x', '2');
  await store.put(a, 1n);
  await store.put(b, 2n);
  await sql(url, "UPDATE kv SET value = overlay(value placing '\\xff'::bytea from 20 for 1) WHERE key = $1", [
    a,
  ]);
  await t.throwsAsync(store.get(a), { instanceOf: StoreTamperError });
  await sql(url, 'UPDATE kv SET value = (SELECT value FROM kv WHERE key = $2) WHERE key = $1', [a, b]);
  await t.throwsAsync(store.get(a), { instanceOf: StoreTamperError, message: /tag mismatch/ });
  await store.close();
});

test('another master key is refused', async (t) => {
  const url = await server.database();
  await (await EncryptedStore.open(url, randomBytes(32))).close();
  await t.throwsAsync(EncryptedStore.open(url, randomBytes(32)), { instanceOf: StoreTamperError });
});

test('batches are all-or-nothing, the last operation on a key wins, and prefixes list like LevelDB', async (t) => {
  const master = randomBytes(32);
  const onPg = await EncryptedStore.open(await server.database(), master);
  const onLevel = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-store-')), master);
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  for (const store of [onPg, onLevel]) {
    const ops = ['a', 'b', 'aa', 'a/b', 'z', '~'].map((id, i) => ({
      type: 'put' as const,
      key: store.key('note', 'agent', id),
      value: BigInt(i),
    }));
    await store.batch([
      ...ops,
      { type: 'del', key: store.key('note', 'agent', 'z') },
      { type: 'put', key: store.key('note', 'agent', 'b'), value: 99n },
      { type: 'put', key: store.key('note', 'other', 'a'), value: 5n },
      { type: 'put', key: store.fixedKey('meta', 'cursor'), value: 7n },
    ]);
    await t.throwsAsync(
      store.batch([
        { type: 'del', key: store.key('note', 'agent', 'a') },
        { type: 'put', key: store.key('note', 'agent', 'c'), value: 3n },
        { type: 'put', key: store.key('note', 'agent', 'd'), value: circular },
      ]),
    );
  }
  const pgEntries = await onPg.entries<bigint>(onPg.prefix('note', 'agent'));
  const levelEntries = await onLevel.entries<bigint>(onLevel.prefix('note', 'agent'));
  t.deepEqual(pgEntries, levelEntries, 'same keys, same order, same values');
  t.deepEqual(pgEntries.map(([, v]) => v).sort(), [0n, 2n, 3n, 5n, 99n]);
  t.is(await onPg.get(onPg.fixedKey('meta', 'cursor')), 7n);
  await onPg.close();
  await onLevel.close();
});

test('migrations run once, are recorded with their version, and a newer database is refused', async (t) => {
  const url = await server.database();
  // Several processes starting together: one migrates, the others wait and find it done.
  const backends = await Promise.all([1, 2, 3].map(() => PostgresBackend.open(url, { maxConnections: 2 })));
  t.deepEqual(
    await Promise.all(backends.map((b) => b.schemaVersion())),
    [1, 2, 3].map(() => SCHEMA_VERSION),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied = (await client.query('SELECT version FROM pool_proxy_schema ORDER BY version')).rows;
  t.deepEqual(
    applied.map((r) => r.version),
    Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
  );
  await Promise.all(backends.map((b) => b.close()));
  await client.query("INSERT INTO pool_proxy_schema (version, name) VALUES ($1, 'from the future')", [
    SCHEMA_VERSION + 1,
  ]);
  await client.end();
  const error = await t.throwsAsync(PostgresBackend.open(url), { instanceOf: DatabaseError });
  t.regex(error!.message, new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this release`));
});

test('a database that cannot be reached is a clear error without the password', async (t) => {
  const url = server.url.replace('postgres@', 'postgres:hunter2@').replace(/\/postgres$/, '/no_such_db');
  const error = await t.throwsAsync(EncryptedStore.open(url, randomBytes(32)), { instanceOf: DatabaseError });
  t.regex(
    error!.message,
    /cannot open the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/no_such_db/,
  );
  t.false(error!.message.includes('hunter2'));
  t.is(redactUrl('postgres://u:p@h/d'), 'postgres://u:***@h/d');
});

test('POOL_PROXY_DATABASE_URL must be a postgres URL', (t) => {
  t.is(loadConfig({}).databaseUrl, '');
  t.is(
    loadConfig({ POOL_PROXY_DATABASE_URL: 'postgres://u@db:5432/pool' }).databaseUrl,
    'postgres://u@db:5432/pool',
  );
  for (const bad of ['mysql://u@h/d', 'not a url', 'postgres:///nohost', '/var/lib/db']) {
    t.throws(() => loadConfig({ POOL_PROXY_DATABASE_URL: bad }), {
      instanceOf: ConfigError,
      message: /POOL_PROXY_DATABASE_URL must be a postgres:/,
    });
  }
});

test('mutex sections exclude each other across processes and commit together', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  // Two stores on one database stand for two proxy processes (each has its own connections).
  const stores = [await EncryptedStore.open(url, master), await EncryptedStore.open(url, master)];
  const key = stores[0]!.fixedKey('meta', 'counter');
  const increment = (store: EncryptedStore) =>
    store.backend.mutex('counter').run('one', async () => {
      const value = (await store.get<number>(key)) ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 1));
      await store.put(key, value + 1);
    });
  await Promise.all(Array.from({ length: 40 }, (_, i) => increment(stores[i % 2]!)));
  t.is(await stores[0]!.get(key), 40, 'no lost update');
  // A section that throws writes nothing, even what it wrote before throwing.
  await t.throwsAsync(
    stores[1]!.backend.mutex('counter').run('one', async () => {
      await stores[1]!.put(key, 1000);
      throw new Error('refused');
    }),
    { message: 'refused' },
  );
  t.is(await stores[0]!.get(key), 40);
  // Two sections taking two keys in opposite orders: PostgreSQL breaks the deadlock, the loser runs again.
  const [a, b] = [stores[0]!.fixedKey('meta', 'a'), stores[0]!.fixedKey('meta', 'b')];
  const crossed = (store: EncryptedStore, first: string, second: string) =>
    store.backend.mutex('pair').run(first, async () => {
      await store.put(first === 'a' ? a : b, first);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.backend.mutex('pair').run(second, () => store.put(first === 'a' ? b : a, first));
    });
  await Promise.all([crossed(stores[0]!, 'a', 'b'), crossed(stores[1]!, 'b', 'a')]);
  const [va, vb] = [await stores[0]!.get(a), await stores[0]!.get(b)];
  t.is(va, vb, 'one section ran entirely after the other');
  await Promise.all(stores.map((s) => s.close()));
});

test('a lease excludes across processes and its writes are visible before it ends', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  const stores = [await EncryptedStore.open(url, master), await EncryptedStore.open(url, master)];
  const key = stores[0]!.fixedKey('meta', 'step');
  let inside = 0;
  let most = 0;
  const section = (store: EncryptedStore, i: number) =>
    store.backend.lease('spend').run('agent', async () => {
      most = Math.max(most, ++inside);
      await store.put(key, i);
      // The other process sees the write while the lease is still held.
      t.is(await stores[(i + 1) % 2]!.get(key), i);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside--;
    });
  await Promise.all(Array.from({ length: 12 }, (_, i) => section(stores[i % 2]!, i)));
  t.is(most, 1);
  await Promise.all(stores.map((s) => s.close()));
});

test('a rate limit and wallet quotas shared by two processes hold for both together', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  const stores = [await EncryptedStore.open(url, master), await EncryptedStore.open(url, master)];
  let now = 1_000_000;
  const limiters = stores.map(
    (s) =>
      new SharedRateLimiter(s.backend as PostgresBackend, s, 'token', { perSecond: 1, burst: 5 }, () => now),
  );
  const first = await Promise.all(Array.from({ length: 20 }, (_, i) => limiters[i % 2]!.take('GWALLET')));
  t.is(first.filter((d) => d.allowed).length, 5, 'one bucket of 5 for both processes');
  t.true(first.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 1));
  t.true((await limiters[0]!.take('GOTHER')).allowed, 'another client has its own bucket');
  now += 2000;
  const later = await Promise.all([0, 1, 0].map((i) => limiters[i]!.take('GWALLET')));
  t.is(later.filter((d) => d.allowed).length, 2, 'two seconds refill two tokens');
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  const rows = await probe.query('SELECT key FROM rate_buckets');
  await probe.end();
  t.false(JSON.stringify(rows.rows).includes('GWALLET'), 'clients are HMACs in the database');

  const limits = { concurrentPrepares: 2, newAgentsPerHour: 3 };
  const quotas = stores.map((s) => new SharedWalletQuotas(s, limits, 60_000, Date.now));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = [quotas[0]!.preparing('GW', () => held), quotas[1]!.preparing('GW', () => held)];
  await new Promise((resolve) => setTimeout(resolve, 200));
  await t.throwsAsync(
    quotas[1]!.preparing('GW', async () => 'third'),
    { message: /already has 2 deposits/ },
  );
  t.is(await quotas[0]!.preparing('GOTHER', async () => 'ok'), 'ok');
  release();
  await Promise.all(running);
  t.is(await quotas[1]!.preparing('GW', async () => 'after'), 'after', 'slots end with their prepares');
  await Promise.all([0, 1, 0].map((i) => quotas[i]!.takeNewAgent('GW')));
  await t.throwsAsync(Promise.resolve(quotas[1]!.takeNewAgent('GW')), {
    message: /3 new agents in the last hour/,
  });
  await Promise.all(stores.map((s) => s.close()));
});

test('one leader per job; when its connection dies another is elected within seconds, and the old epoch is fenced', async (t) => {
  const url = await server.database();
  const backends = await Promise.all([1, 2, 3].map(() => PostgresBackend.open(url, { maxConnections: 3 })));
  const elections: Array<{ replica: number; epoch: number }> = [];
  const campaigns = backends.map(
    (b, replica) =>
      new Campaign(
        b,
        'settlement',
        { elected: (epoch) => void elections.push({ replica, epoch }), deposed: () => {} },
        silentLogger,
      ),
  );
  campaigns.forEach((c) => c.start());
  const until = async (check: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await until(() => elections.length === 1, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.is(elections.length, 1, 'one leader while it lives');
  const first = elections[0]!;
  const leader = campaigns[first.replica]!;
  t.is(await leader.fence(), first.epoch);
  for (const [i, c] of campaigns.entries())
    if (i !== first.replica) await t.throwsAsync(c.fence(), { instanceOf: FencedError });
  // The leader's lock connection dies (as with kill -9): the server drops its lock.
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const started = Date.now();
  await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  await until(() => elections.length === 2, 10_000);
  t.true(Date.now() - started < 10_000);
  t.is(elections[1]!.epoch, first.epoch + 1);
  t.not(elections[1]!.replica, first.replica);
  await t.throwsAsync(leader.fence(), { instanceOf: FencedError }, 'the old leader cannot act');
  t.is(await campaigns[elections[1]!.replica]!.fence(), first.epoch + 1);
  await admin.end();
  await Promise.all(campaigns.map((c) => c.stop()));
  await Promise.all(backends.map((b) => b.close()));
});

test('the payment queue: sealed rows, each taken once, and a deposed leader can neither take nor answer', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  const stores = await Promise.all(
    [1, 2].map(async () => EncryptedStore.on(await PostgresBackend.open(url, { maxConnections: 3 }), master)),
  );
  const backends = stores.map((s) => s.backend as PostgresBackend);
  type Item = { paymentId: string; serviceUrl: string };
  const queues = stores.map((s, i) => new PaymentQueue<Item>(backends[i]!, s, 'batch-operator'));
  const item = (paymentId: string): Item => ({ paymentId, serviceUrl: 'https://secret-service.example/x' });
  const elections: number[] = [];
  const campaigns = backends.map(
    (b) =>
      new Campaign(
        b,
        'batch-operator',
        { elected: (e) => void elections.push(e), deposed: () => {} },
        silentLogger,
      ),
  );
  campaigns.forEach((c) => c.start());
  const until = async (check: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await until(() => elections.length === 1);
  const first = elections[0]!;
  const notifications = new Notifications(backends[1]!, silentLogger);
  const heard: string[] = [];
  await notifications.on('pool_test_channel', (payload) => heard.push(payload));

  t.true(await queues[0]!.add('pay-1', item('pay-1'), 2));
  t.true(await queues[1]!.add('pay-2', item('pay-2'), 2));
  t.false(await queues[1]!.add('pay-3', item('pay-3'), 2), 'a full queue adds nothing');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const table = (await client.query('SELECT id, item FROM payment_queue')).rows as Array<{
    id: string;
    item: Buffer;
  }>;
  t.is(table.length, 2);
  for (const row of table) {
    t.false(/pay-[12]/.test(row.id), 'rows are named by an HMAC');
    t.false(row.item.toString('latin1').includes('secret-service'), 'items are sealed');
  }
  t.deepEqual(await queues[0]!.take(first + 1, 10), [], "no epoch but the leader's takes");
  const taken = await queues[1]!.take(first, 10);
  t.deepEqual(taken.map((i) => i.paymentId).sort(), ['pay-1', 'pay-2']);
  t.deepEqual(await queues[0]!.take(first, 10), [], 'each payment is taken once');
  t.is(await queues[0]!.state('pay-1'), 'live');

  // The leader's lock connection dies (as with kill -9): another election raises the epoch.
  await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  await until(() => elections.length === 2);
  const second = elections[1]!;
  t.is(second, first + 1);
  t.is(await queues[0]!.state('pay-1'), 'abandoned', 'its taker is gone: reconciliation decides it');
  t.false(
    await queues[0]!.answer('pay-1', first, { paymentStatus: 'confirmed' }),
    'the deposed leader cannot answer',
  );
  t.true(await queues[0]!.add('pay-3', item('pay-3'), 10));
  t.deepEqual(await queues[1]!.take(first, 10), [], 'nor take');
  t.deepEqual(
    (await queues[0]!.take(second, 10)).map((i) => i.paymentId),
    ['pay-3'],
  );
  t.true(await queues[1]!.answer('pay-3', second, { paymentStatus: 'confirmed' }));
  t.deepEqual(
    [...(await queues[0]!.outcomes(['pay-1', 'pay-3']))],
    [['pay-3', { paymentStatus: 'confirmed' }]],
  );
  await queues[0]!.remove(['pay-3']);
  t.is(await queues[0]!.state('pay-3'), 'none');

  await notifications.notify('pool_test_channel', 'woken');
  await until(() => heard.length === 1);
  t.deepEqual(heard, ['woken']);
  await client.end();
  await notifications.close();
  await Promise.all(campaigns.map((c) => c.stop()));
  await Promise.all(stores.map((s) => s.close()));
});

test('a batch leader that stalled and was replaced cannot sign the payment it took', async (t) => {
  const url = await server.database();
  const master = randomBytes(32);
  const stores = await Promise.all(
    [1, 2].map(async () => EncryptedStore.on(await PostgresBackend.open(url, { maxConnections: 5 }), master)),
  );
  const clusters = await Promise.all(
    stores.map(async (s) => (await joinCluster(s, silentLogger, Date.now))!),
  );
  const journals = stores.map((s, i) => new Journal(s, clusters[i]!.runs, Date.now));
  let letGo!: () => void;
  const stalled = new Promise<void>((resolve) => (letGo = resolve));
  let tookIt!: () => void;
  const taken = new Promise<void>((resolve) => (tookIt = resolve));
  const signedBy: Array<[number, string]> = [];
  const refusals: unknown[] = [];
  // What execute-payment does before a paid request leaves: journal the signed authorization, fenced.
  const execute =
    (i: number) =>
    async (p: QueuedPayment, batchId: string): Promise<PaymentResult> => {
      tookIt();
      if (i === 0) await stalled;
      try {
        await batches[i]!.fenced(p.paymentId, () => journals[i]!.update(p.paymentId, { state: 'signed' }));
        signedBy.push([i, p.paymentId]);
        return { paymentId: p.paymentId, batchId, paymentStatus: 'confirmed' };
      } catch (error) {
        refusals.push(error);
        return { paymentId: p.paymentId, batchId, paymentStatus: 'pending' };
      }
    };
  const batches: ReplicatedBatches[] = stores.map(
    (store, i) =>
      new ReplicatedBatches(
        {
          flows: { store, journal: journals[i]!, clock: Date.now },
          records: new PaymentRecords(store),
          uncommit: () => {},
        },
        clusters[i]!,
        {
          windowMs: 200,
          batchMax: 10,
          queueMax: 100,
          concurrency: 2,
          payDeadlineMs: 1000,
          logger: silentLogger,
          execute: execute(i),
        },
      ),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const epoch = async () =>
    Number(
      (await client.query("SELECT epoch FROM leader_epochs WHERE job = 'batch-operator'")).rows[0]?.epoch ??
        0,
    );
  const until = async (check: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await batches[0]!.start();
  await until(async () => (await epoch()) === 1);
  await batches[1]!.start();

  const payment = async (paymentId: string) => {
    // reserved by the replica that received it (here the one that does not lead), then queued
    await journals[1]!.begin({
      opId: paymentId,
      kind: 'payment',
      agent: 'agent',
      state: 'reserved',
      amount: 1n,
    });
    const quote = {
      url: 'https://service.example/x',
      amount: 1n,
      asset: 'C',
      payTo: 'G',
      network: 'stellar:local',
      maxTimeoutSeconds: 60,
      requirements: {} as PaymentRequirements,
      paymentRequired: {} as PaymentRequired,
    };
    return batches[1]!.enqueue({
      paymentId,
      agent: 'agent',
      quote,
      request: { url: quote.url, method: 'GET' },
    });
  };
  const first = await payment('payment-1');
  await taken; // the leader took it, and stalls before signing
  // It loses its lock connection (as when its host stalls past the server's timeouts): another election.
  await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  await until(async () => (await epoch()) === 2);
  t.is(await batches[1]!.queueState('payment-1'), 'abandoned', 'reconciliation may decide it now');
  letGo();
  await until(() => refusals.length === 1);
  t.true(refusals[0] instanceof FencedError, String(refusals[0]));
  t.deepEqual(signedBy, [], 'the stalled leader signed nothing');
  t.is((await journals[1]!.get('payment-1'))!.state, 'reserved', 'the journal still says never signed');

  // Reconciliation releases it; the request waiting on the other replica answers with that.
  await journals[1]!.update('payment-1', {
    state: 'released',
    reason: { code: 'interrupted', detail: 'never signed' },
  });
  t.like(await first.outcome, { paymentId: 'payment-1', paymentStatus: 'failed' });
  // The new leader runs the next batch.
  const second = await payment('payment-2');
  t.like(await second.outcome, { paymentId: 'payment-2', paymentStatus: 'confirmed' });
  t.is(signedBy.length, 1);
  t.is((await journals[1]!.get('payment-2'))!.state, 'signed');

  await client.end();
  await Promise.all(batches.map((b) => b.stop()));
  await Promise.all(clusters.map((c) => c.close()));
  await Promise.all(stores.map((s) => s.close()));
});
