// Token-bucket rate limiter keyed by client (socket IP, or the wallet behind a token). Buckets refill
// continuously; idle full buckets are forgotten so the map cannot grow without bound.
import type { RateLimitConfig } from '../config.ts';
import { type Clock, systemClock } from '../util/clock.ts';

interface Bucket {
  tokens: number;
  updated: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Seconds until one request would be allowed again (only when refused). */
  retryAfterSeconds: number;
}

/** A rate limiter: this process's buckets, or buckets shared by the replicas (cluster/shared-rate-limit.ts). */
export interface RequestLimiter {
  take(key: string): RateDecision | Promise<RateDecision>;
}

export class RateLimiter implements RequestLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #config: RateLimitConfig;
  readonly #now: Clock;
  #lastSweep = 0;

  constructor(config: RateLimitConfig, now: Clock = systemClock) {
    this.#config = config;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#config.perSecond > 0;
  }

  take(key: string): RateDecision {
    if (!this.enabled) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.#now();
    this.#sweep(now);
    const { perSecond, burst } = this.#config;
    const bucket = this.#buckets.get(key) ?? { tokens: burst, updated: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updated) / 1000) * perSecond);
    bucket.updated = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 10_000) return;
    this.#lastSweep = now;
    const fullAfterMs = (this.#config.burst / this.#config.perSecond) * 1000;
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.updated > fullAfterMs) this.#buckets.delete(key);
    }
  }
}
