// Cross-process sections on PostgreSQL, with advisory locks keyed by a 64-bit hash of (scope, key):
//   mutex: a transaction that first takes pg_advisory_xact_lock; the section's store reads and writes run in
//          that transaction (AsyncLocalStorage carries it), so they commit together when the section returns,
//          and the lock goes with the commit. A section nested in another joins its transaction. A deadlock
//          between two processes (PostgreSQL detects it and aborts one) runs the loser's section again.
//   lease: a session lock (pg_try_advisory_lock, polled, so waiters hold no connection) kept on a connection
//          of its own while the section runs; the section's writes commit one by one outside any transaction.
// A process that dies loses its connections and with them its locks.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomInt } from 'node:crypto';
import type pg from 'pg';
import type { Mutex } from './backend.ts';

/** deadlock_detected, serialization_failure: the section is run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 10;

export function lockId(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\0${key}`).digest().readBigInt64BE(0).toString();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function isRetryable(error: unknown): boolean {
  return RETRYABLE.has(String((error as { code?: unknown })?.code));
}

export class PgLocks {
  readonly #data: pg.Pool;
  readonly #locks: pg.Pool;
  readonly #tx = new AsyncLocalStorage<pg.PoolClient>();

  /** `data` runs queries and transactions; `locks` holds the connections of leases. */
  constructor(data: pg.Pool, locks: pg.Pool) {
    this.#data = data;
    this.#locks = locks;
  }

  /** Where a store query runs: the transaction of the enclosing mutex section, else any connection. */
  get queryable(): pg.Pool | pg.PoolClient {
    return this.#tx.getStore() ?? this.#data;
  }

  /** Inside a mutex section (whose writes already commit together)? */
  get inTransaction(): boolean {
    return this.#tx.getStore() !== undefined;
  }

  mutex(scope: string): Mutex {
    return { run: (key, section) => this.#atomic(lockId(scope, key), section) };
  }

  lease(scope: string): Mutex {
    return { run: (key, section) => this.#held(lockId(scope, key), section) };
  }

  async #atomic<T>(id: string, section: () => Promise<T>): Promise<T> {
    const outer = this.#tx.getStore();
    if (outer !== undefined) {
      await outer.query('SELECT pg_advisory_xact_lock($1::bigint)', [id]);
      return section();
    }
    for (let attempt = 1; ; attempt++) {
      const client = await this.#data.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [id]);
        const result = await this.#tx.run(client, section);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (!isRetryable(error) || attempt >= MAX_ATTEMPTS) throw error;
      } finally {
        client.release(broken);
      }
      await sleep(randomInt(5, 20 * attempt));
    }
  }

  async #held<T>(id: string, section: () => Promise<T>): Promise<T> {
    let client: pg.PoolClient | undefined;
    for (let wait = 2; client === undefined; wait = Math.min(wait * 2, 100)) {
      const candidate = await this.#locks.connect();
      const { rows } = await candidate
        .query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [id])
        .catch((error: unknown) => {
          candidate.release(true);
          throw error;
        });
      if (rows[0]!.ok) client = candidate;
      else {
        candidate.release();
        await sleep(randomInt(1, wait + 1));
      }
    }
    try {
      // Outside any enclosing transaction: the section's writes must be durable as soon as they are made.
      return await this.#tx.exit(section);
    } finally {
      await client
        .query('SELECT pg_advisory_unlock($1::bigint)', [id])
        .then(() => client.release())
        .catch(() => client.release(true));
    }
  }
}
