// Token buckets shared by the replicas of one PostgreSQL store (the `rate_buckets` table): one statement
// refills a client's bucket for the time since its last request and takes a token if there is one, so the
// limit holds for the deployment, not per replica. Clients are named by an HMAC (an IP address or a wallet
// never reaches the database). Buckets idle long enough to be full again are deleted now and then.
import type { RateLimitConfig } from '../config.ts';
import type { RateDecision, RequestLimiter } from '../http/rate-limit.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { PostgresBackend } from '../store/postgres-backend.ts';
import type { Clock } from '../util/clock.ts';

const SWEEP_EVERY_MS = 60_000;

export class SharedRateLimiter implements RequestLimiter {
  readonly #db: PostgresBackend;
  readonly #store: EncryptedStore;
  readonly #scope: string;
  readonly #config: RateLimitConfig;
  readonly #now: Clock;
  #lastSweep = 0;

  /** `scope` keeps limiters apart (`ip`, `token`). */
  constructor(
    db: PostgresBackend,
    store: EncryptedStore,
    scope: string,
    config: RateLimitConfig,
    now: Clock,
  ) {
    this.#db = db;
    this.#store = store;
    this.#scope = scope;
    this.#config = config;
    this.#now = now;
  }

  async take(client: string): Promise<RateDecision> {
    const { perSecond, burst } = this.#config;
    if (perSecond <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.#now();
    this.#sweep(now);
    // In ON CONFLICT DO UPDATE, `b` is the stored row (locked), so concurrent takes queue on it.
    const refill =
      'least($3::float8, b.tokens + greatest(0, $4::bigint - b.updated_ms) / 1000.0 * $2::float8)';
    const { rows } = await this.#db.query<{ tokens: number; allowed: boolean }>(
      `INSERT INTO rate_buckets AS b (key, tokens, updated_ms, allowed) VALUES ($1, $3::float8 - 1, $4, true)
       ON CONFLICT (key) DO UPDATE SET
         tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
         updated_ms = greatest(b.updated_ms, $4),
         allowed = ${refill} >= 1
       RETURNING tokens, allowed`,
      [this.#store.key('rate', this.#scope, client), perSecond, burst, now],
    );
    const { tokens, allowed } = rows[0]!;
    if (allowed) return { allowed: true, retryAfterSeconds: 0 };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perSecond)) };
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    const fullAfterMs = (this.#config.burst / this.#config.perSecond) * 1000;
    const prefix = this.#store.prefix('rate', this.#scope);
    this.#db
      .query('DELETE FROM rate_buckets WHERE key >= $1 AND key < $2 AND updated_ms < $3', [
        prefix,
        `${prefix}\uffff`,
        now - fullAfterMs,
      ])
      .catch(() => {});
  }
}
