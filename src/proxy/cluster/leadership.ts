// One leader per singleton job among the replicas of one PostgreSQL store. Each replica campaigns for each
// job: it tries a session advisory lock named by the job on a connection of its own, every second; the one
// that gets it leads until that connection ends (the process stops or dies: the server drops the lock, and
// the next replica's try wins within about a second). Every election raises the job's epoch in
// `leader_epochs`; a leader's action first checks, in the database, that the epoch is still its own
// (`fence`), so a leader that stalled, lost its lock and woke up again cannot act after its successor took over.
import pg from 'pg';
import type { PostgresBackend } from '../store/postgres-backend.ts';
import { lockId } from '../store/pg-locks.ts';
import type { Logger } from '../util/logger.ts';
import { messageOf } from '../domain/errors.ts';

const CAMPAIGN_MS = 1000;

export class FencedError extends Error {
  constructor(job: string, epoch: number) {
    super(`leadership of ${job} (epoch ${epoch}) was lost: another replica leads it now`);
    this.name = 'FencedError';
  }
}

export interface LeaderCallbacks {
  /** This replica leads `job` from now on, under `epoch`. */
  elected(epoch: number): void | Promise<void>;
  /** This replica no longer leads (its lock connection ended). */
  deposed(): void | Promise<void>;
}

export class Campaign {
  readonly job: string;
  readonly #backend: PostgresBackend;
  readonly #callbacks: LeaderCallbacks;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  #epoch: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(backend: PostgresBackend, job: string, callbacks: LeaderCallbacks, logger: Logger) {
    this.#backend = backend;
    this.job = job;
    this.#callbacks = callbacks;
    this.#logger = logger;
  }

  /** The epoch this replica leads under, or undefined when it does not lead. */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  start(): void {
    void this.#try();
  }

  async #try(): Promise<void> {
    if (this.#stopped || this.#epoch !== undefined) return;
    const client = new pg.Client({ connectionString: this.#backend.url });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [
        lockId('leader', this.job),
      ]);
      if (!rows[0]!.ok || this.#stopped) {
        await client.end();
        return this.#again();
      }
      const elected = await client.query<{ epoch: string }>(
        `INSERT INTO leader_epochs (job, epoch) VALUES ($1, 1)
         ON CONFLICT (job) DO UPDATE SET epoch = leader_epochs.epoch + 1, elected_at = now()
         RETURNING epoch`,
        [this.job],
      );
      this.#client = client;
      this.#epoch = Number(elected.rows[0]!.epoch);
      client.on('end', () => void this.#lost());
      this.#logger.log('info', 'elected leader', { job: this.job, epoch: this.#epoch });
      await this.#callbacks.elected(this.#epoch);
    } catch (error) {
      await client.end().catch(() => {});
      this.#logger.log('warn', 'leader campaign failed; retrying', {
        job: this.job,
        error: messageOf(error),
      });
      this.#again();
    }
  }

  #again(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#try(), CAMPAIGN_MS);
    this.#timer.unref();
  }

  async #lost(): Promise<void> {
    if (this.#epoch === undefined) return;
    const epoch = this.#epoch;
    this.#epoch = undefined;
    this.#client = undefined;
    if (!this.#stopped) this.#logger.log('warn', 'lost leadership', { job: this.job, epoch });
    await this.#callbacks.deposed();
    this.#again();
  }

  /**
   * Throws FencedError unless this replica still leads under the epoch the database holds. Inside a store
   * mutex section the check is part of its transaction and holds the epoch row until it commits.
   */
  async fence(): Promise<number> {
    const epoch = this.#epoch;
    if (epoch === undefined) throw new FencedError(this.job, 0);
    const { rows } = await this.#backend.query<{ epoch: string }>(
      'SELECT epoch FROM leader_epochs WHERE job = $1 FOR SHARE',
      [this.job],
    );
    if (Number(rows[0]?.epoch) !== epoch) throw new FencedError(this.job, epoch);
    return epoch;
  }

  /** Stops campaigning and gives leadership up (the next replica takes it within about a second). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    if (client !== undefined) {
      await this.#lost();
      await client.end().catch(() => {});
    }
  }
}
