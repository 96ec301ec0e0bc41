// The payment queue shared by the replicas of one PostgreSQL store (table `payment_queue`): a replica that
// reserved a payment adds it, the batch leader takes waiting payments into its batch under its epoch and
// writes each outcome back, and the replica that queued it reads the outcome and removes the row. Each row is
// named by the payment's record key (an HMAC) and its item and outcome are sealed like the store's records,
// so the table holds no identifier, amount or URL. Taking and answering check the leader's epoch in the same
// statement (locking its row), so a leader that lost its election can do neither.
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { PostgresBackend } from '../store/postgres-backend.ts';

/** Rows older than this are gone: their requests stopped waiting long ago. */
const FORGET_AFTER_MS = 3_600_000;

const FENCE = 'EXISTS (SELECT 1 FROM leader_epochs WHERE job = $JOB AND epoch = $EPOCH FOR SHARE)';

export class PaymentQueue<T> {
  readonly #db: PostgresBackend;
  readonly #store: EncryptedStore;
  readonly #job: string;

  /** `job`: the leadership whose epoch fences taking and answering (cluster/leadership.ts). */
  constructor(db: PostgresBackend, store: EncryptedStore, job: string) {
    this.#db = db;
    this.#store = store;
    this.#job = job;
  }

  /** The row id of `paymentId`. */
  idOf(paymentId: string): string {
    return this.#store.key('pay-queue', paymentId);
  }

  /** Rows not yet answered (queued or executing), recent ones only. */
  async unanswered(): Promise<number> {
    const { rows } = await this.#db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM payment_queue
       WHERE outcome IS NULL AND queued_at > now() - make_interval(secs => $1)`,
      [FORGET_AFTER_MS / 1000],
    );
    return Number(rows[0]!.n);
  }

  /** Adds `item` unless `max` rows are unanswered already (then false, nothing added). */
  async add(paymentId: string, item: T, max: number): Promise<boolean> {
    const id = this.idOf(paymentId);
    const { rowCount } = await this.#db.pool.query(
      `INSERT INTO payment_queue (id, item)
       SELECT $1, $2 WHERE (SELECT count(*) FROM payment_queue WHERE outcome IS NULL
                            AND queued_at > now() - make_interval(secs => $4)) < $3`,
      [id, Buffer.from(this.#store.seal(`${id}/item`, item)), max, FORGET_AFTER_MS / 1000],
    );
    return rowCount === 1;
  }

  /** How many rows wait for a leader. */
  async waiting(): Promise<number> {
    const { rows } = await this.#db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM payment_queue WHERE taken_epoch IS NULL',
    );
    return Number(rows[0]!.n);
  }

  /** Takes up to `max` waiting rows, oldest first, for the leader of `epoch` (none if it no longer leads). */
  async take(epoch: number, max: number): Promise<T[]> {
    const { rows } = await this.#db.pool.query<{ id: string; item: Buffer }>(
      `UPDATE payment_queue SET taken_epoch = $2
       WHERE id IN (SELECT id FROM payment_queue WHERE taken_epoch IS NULL ORDER BY seq LIMIT $3
                    FOR UPDATE SKIP LOCKED)
         AND ${fence(1, 2)}
       RETURNING id, item`,
      [this.#job, epoch, max],
    );
    return rows.map((r) => this.#store.open<T>(`${r.id}/item`, r.item));
  }

  /** Writes the outcome of a row the leader of `epoch` took; false if it no longer leads. */
  async answer(paymentId: string, epoch: number, outcome: unknown): Promise<boolean> {
    const id = this.idOf(paymentId);
    const { rowCount } = await this.#db.pool.query(
      `UPDATE payment_queue SET outcome = $3 WHERE id = $4 AND taken_epoch = $2 AND ${fence(1, 2)}`,
      [this.#job, epoch, Buffer.from(this.#store.seal(`${id}/outcome`, outcome)), id],
    );
    return rowCount === 1;
  }

  /** The outcomes written for `paymentIds` so far, by payment id. */
  async outcomes<O>(paymentIds: string[]): Promise<Map<string, O>> {
    const byId = new Map(paymentIds.map((p) => [this.idOf(p), p]));
    const { rows } = await this.#db.pool.query<{ id: string; outcome: Buffer }>(
      'SELECT id, outcome FROM payment_queue WHERE id = ANY($1::text[]) AND outcome IS NOT NULL',
      [[...byId.keys()]],
    );
    return new Map(rows.map((r) => [byId.get(r.id)!, this.#store.open<O>(`${r.id}/outcome`, r.outcome)]));
  }

  /**
   * `live` while the row waits or its taker still leads, `abandoned` when its taker lost its election,
   * `none` without an unanswered row.
   */
  async state(paymentId: string): Promise<'live' | 'abandoned' | 'none'> {
    const { rows } = await this.#db.pool.query<{ taken: string | null; current: string | null }>(
      `SELECT taken_epoch AS taken, (SELECT epoch FROM leader_epochs WHERE job = $2) AS current
       FROM payment_queue WHERE id = $1 AND outcome IS NULL`,
      [this.idOf(paymentId), this.#job],
    );
    const row = rows[0];
    if (row === undefined) return 'none';
    return row.taken === null || row.taken === row.current ? 'live' : 'abandoned';
  }

  async remove(paymentIds: string[]): Promise<void> {
    await this.#db.pool.query('DELETE FROM payment_queue WHERE id = ANY($1::text[])', [
      paymentIds.map((p) => this.idOf(p)),
    ]);
  }

  /** Deletes rows nobody waits for any more (their replica stopped before reading the outcome). */
  async sweep(): Promise<void> {
    await this.#db.pool.query(
      'DELETE FROM payment_queue WHERE queued_at < now() - make_interval(secs => $1)',
      [FORGET_AFTER_MS / 1000],
    );
  }
}

function fence(job: number, epoch: number): string {
  return FENCE.replace('$JOB', `$${job}`).replace('$EPOCH', `$${epoch}::bigint`);
}
