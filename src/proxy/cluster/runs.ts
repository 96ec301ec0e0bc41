// Which proxy processes are alive, when several share one PostgreSQL store. Each process run holds a session
// advisory lock named by its run id on a connection of its own for as long as it runs; the server drops the
// lock when the process dies (the connection goes with it). An operation begun by a run whose lock is free
// was left by a dead process, so reconciliation may decide it; one whose run still holds its lock belongs to
// a live request on another replica and is left alone.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { LiveRuns } from '../journal/journal.ts';
import type { PostgresBackend } from '../store/postgres-backend.ts';
import { lockId } from '../store/pg-locks.ts';
import type { Logger } from '../util/logger.ts';

const RUN_SCOPE = 'process-run';

export class ProcessRuns implements LiveRuns {
  readonly runId = randomUUID();
  readonly #backend: PostgresBackend;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  #closed = false;

  private constructor(backend: PostgresBackend, logger: Logger) {
    this.#backend = backend;
    this.#logger = logger;
  }

  /** Takes this run's lock (and takes it again if its connection is lost). */
  static async join(backend: PostgresBackend, logger: Logger): Promise<ProcessRuns> {
    const runs = new ProcessRuns(backend, logger);
    await runs.#hold();
    return runs;
  }

  async #hold(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#backend.url });
    client.on('error', () => {});
    client.on('end', () => {
      if (this.#closed) return;
      this.#logger.log('warn', 'lost the run lock connection; taking it again');
      const retry = () => this.#hold().catch(() => setTimeout(retry, 1000).unref());
      retry();
    });
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1::bigint)', [lockId(RUN_SCOPE, this.runId)]);
    this.#client = client;
  }

  async isLive(runId: string): Promise<boolean> {
    if (runId === this.runId) return true;
    const id = lockId(RUN_SCOPE, runId);
    const client = await this.#backend.pool.connect();
    try {
      const { rows } = await client.query<{ free: boolean }>(
        'SELECT pg_try_advisory_lock($1::bigint) AS free',
        [id],
      );
      if (rows[0]!.free) await client.query('SELECT pg_advisory_unlock($1::bigint)', [id]);
      return !rows[0]!.free;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.end().catch(() => {});
  }
}
