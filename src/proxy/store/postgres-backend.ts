// The PostgreSQL store backend: records in one table (`kv`: opaque key → sealed bytes), so several proxy
// processes share one store. Opening connects, then applies the pending migrations (migrations.ts) inside a
// transaction holding an advisory lock, so replicas starting together migrate once. Keys order bytewise
// (COLLATE "C") like LevelDB's; a batch is one transaction.
import pg from 'pg';
import type { Mutex, RawOp, StoreBackend } from './backend.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
import { PgLocks } from './pg-locks.ts';
import { messageOf } from '../domain/errors.ts';

/** Advisory lock key taken while migrating (any constant shared by every release). */
const MIGRATION_LOCK = 0x706f6f6c; // "pool"

export class DatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseError';
  }
}

/** `url` without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

export interface PostgresOptions {
  /** Connections this process uses for queries and transactions (default 20). */
  maxConnections?: number;
  /** Connections this process may hold for leases, one per lease held at once (default 50). */
  maxLeaseConnections?: number;
}

export class PostgresBackend implements StoreBackend {
  readonly kind = 'postgres';
  readonly location: string;
  readonly url: string;
  readonly pool: pg.Pool;
  readonly #leasePool: pg.Pool;
  readonly #locks: PgLocks;

  private constructor(url: string, pool: pg.Pool, leasePool: pg.Pool) {
    this.url = url;
    this.location = redactUrl(url);
    this.pool = pool;
    this.#leasePool = leasePool;
    this.#locks = new PgLocks(pool, leasePool);
  }

  /** Connects and migrates; refuses a database whose schema is newer than this release knows. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresBackend> {
    if (!isPostgresUrl(url)) throw new DatabaseError(`not a postgres:// URL: ${redactUrl(url)}`);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 20,
      connectionTimeoutMillis: 10_000,
    });
    const leasePool = new pg.Pool({
      connectionString: url,
      max: options.maxLeaseConnections ?? 50,
      connectionTimeoutMillis: 10_000,
    });
    // A connection the server dropped must not crash the process: an idle one is replaced by the pool; one
    // checked out (a held lease, a transaction) fails its query in flight, and is released as broken.
    for (const p of [pool, leasePool]) {
      p.on('error', () => {});
      p.on('connect', (client) => client.on('error', () => {}));
    }
    const backend = new PostgresBackend(url, pool, leasePool);
    try {
      await backend.#migrate();
    } catch (error) {
      await Promise.all([pool.end(), leasePool.end()]);
      if (error instanceof DatabaseError) throw error;
      throw new DatabaseError(`cannot open the database ${backend.location}: ${messageOf(error)}`);
    }
    return backend;
  }

  /** The schema version the database is at. */
  async schemaVersion(): Promise<number> {
    const { rows } = await this.pool.query<{ version: number }>(
      'SELECT coalesce(max(version), 0) AS version FROM pool_proxy_schema',
    );
    return rows[0]!.version;
  }

  async #migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(`CREATE TABLE IF NOT EXISTS pool_proxy_schema (
                            version integer PRIMARY KEY,
                            name text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now()
                          )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM pool_proxy_schema');
      const applied = new Set(rows.map((r) => r.version));
      const newest = Math.max(0, ...applied);
      if (newest > SCHEMA_VERSION) {
        throw new DatabaseError(
          `the database ${this.location} is at schema version ${newest}, newer than this release ` +
            `(${SCHEMA_VERSION}): run the newer release, or restore a backup`,
        );
      }
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO pool_proxy_schema (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Runs a query in the enclosing mutex section's transaction, if any. */
  query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#locks.queryable.query<R>(text, values);
  }

  mutex(scope: string): Mutex {
    return this.#locks.mutex(scope);
  }

  lease(scope: string): Mutex {
    return this.#locks.lease(scope);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.query<{ value: Buffer }>('SELECT value FROM kv WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    await this.query(
      'INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
      [key, Buffer.from(value.buffer, value.byteOffset, value.byteLength)],
    );
  }

  async del(key: string): Promise<void> {
    await this.query('DELETE FROM kv WHERE key = $1', [key]);
  }

  async batch(ops: RawOp[]): Promise<void> {
    if (ops.length === 0) return;
    // The last operation on a key wins, as in a LevelDB batch; then puts and deletes touch disjoint keys.
    const last = new Map<string, RawOp>();
    for (const op of ops) {
      last.delete(op.key);
      last.set(op.key, op);
    }
    const puts = [...last.values()].filter((op) => op.type === 'put');
    const dels = [...last.values()].filter((op) => op.type === 'del').map((op) => op.key);
    const apply = async (client: pg.Pool | pg.PoolClient) => {
      if (puts.length > 0)
        await client.query(
          `INSERT INTO kv (key, value) SELECT * FROM unnest($1::text[], $2::bytea[])
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [puts.map((op) => op.key), puts.map((op) => Buffer.from(op.value))],
        );
      if (dels.length > 0) await client.query('DELETE FROM kv WHERE key = ANY($1::text[])', [dels]);
    };
    // Inside a mutex section the batch is part of its transaction.
    if (this.#locks.inTransaction) return apply(this.#locks.queryable);
    if (puts.length === 0 || dels.length === 0) return apply(this.pool);
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      await apply(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async *entries(prefix: string): AsyncIterable<[string, Uint8Array]> {
    const { rows } = await this.query<{ key: string; value: Buffer }>(
      'SELECT key, value FROM kv WHERE key >= $1 AND key < $2 ORDER BY key',
      [prefix, `${prefix}\uffff`],
    );
    for (const row of rows) yield [row.key, row.value];
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.#leasePool.end()]);
  }
}
