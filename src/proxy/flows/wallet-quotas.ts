// Bounded cost per wallet: how many deposits a wallet may be preparing at once (each costs a proof), and how
// many new agents it may register per hour (each costs the operator an allowlist insert). The operator's own
// agents are not limited here. Counts are kept in memory: a restart forgets them, which only ever allows more.
import { DomainError } from '../domain/errors.ts';
import type { Clock } from '../util/clock.ts';

export interface WalletQuotaLimits {
  concurrentPrepares: number;
  newAgentsPerHour: number;
}

/** Per-wallet bounds: this process's counts, or counts shared by the replicas (cluster/shared-quotas.ts). */
export interface WalletQuotaPolicy {
  preparing<T>(wallet: string, work: () => Promise<T>): Promise<T>;
  takeNewAgent(wallet: string): void | Promise<void>;
}

export class WalletQuotas implements WalletQuotaPolicy {
  readonly #limits: WalletQuotaLimits;
  readonly #preparing = new Map<string, number>();
  readonly #newAgents = new Map<string, number[]>();
  readonly #clock: Clock;

  constructor(limits: WalletQuotaLimits, clock: Clock) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Runs `work` as one of the wallet's concurrent prepares, or refuses with 429 when it has too many. */
  async preparing<T>(wallet: string, work: () => Promise<T>): Promise<T> {
    const current = this.#preparing.get(wallet) ?? 0;
    if (current >= this.#limits.concurrentPrepares) throw tooManyPrepares(current, this.#limits);
    this.#preparing.set(wallet, current + 1);
    try {
      return await work();
    } finally {
      const left = (this.#preparing.get(wallet) ?? 1) - 1;
      if (left <= 0) this.#preparing.delete(wallet);
      else this.#preparing.set(wallet, left);
    }
  }

  /** Counts one new agent for the wallet, or refuses with 429 past the hourly limit. */
  takeNewAgent(wallet: string): void {
    const now = this.#clock();
    const recent = (this.#newAgents.get(wallet) ?? []).filter((t) => t > now - HOUR_MS);
    if (recent.length >= this.#limits.newAgentsPerHour) throw tooManyNewAgents(recent, this.#limits, now);
    recent.push(now);
    this.#newAgents.set(wallet, recent);
  }
}

export const HOUR_MS = 3_600_000;

export function tooManyPrepares(current: number, limits: WalletQuotaLimits): DomainError {
  return new DomainError(
    'rate_limited',
    `this wallet already has ${current} deposits being prepared (limit ${limits.concurrentPrepares}); wait for them`,
    { retryAfterSeconds: 5 },
  );
}

/** `recent`: the wallet's new-agent times within the last hour, oldest first. */
export function tooManyNewAgents(recent: number[], limits: WalletQuotaLimits, now: number): DomainError {
  const retry = Math.ceil((recent[0]! + HOUR_MS - now) / 1000);
  return new DomainError(
    'rate_limited',
    `this wallet created ${recent.length} new agents in the last hour (limit ${limits.newAgentsPerHour})`,
    { retryAfterSeconds: Math.max(1, retry) },
  );
}
