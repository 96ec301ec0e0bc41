// Per-wallet bounds (flows/wallet-quotas.ts) shared by the replicas of one store: the wallet's prepares in
// progress and its recent new agents are one record, changed under the store's mutex, so a wallet cannot
// exceed its limits by spreading requests over replicas. A prepare in progress holds a slot that ends with it,
// or, if its process dies, when the slot's time runs out (a proof and its simulation take far less).
import { randomUUID } from 'node:crypto';
import {
  HOUR_MS,
  tooManyNewAgents,
  tooManyPrepares,
  type WalletQuotaLimits,
  type WalletQuotaPolicy,
} from '../flows/wallet-quotas.ts';
import type { Mutex } from '../store/backend.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Clock } from '../util/clock.ts';

interface QuotaRecord {
  /** Prepares in progress: slot id → when the slot lapses (ms). */
  prepares: Record<string, number>;
  /** Times (ms) of the wallet's new agents within the last hour, oldest first. */
  newAgents: number[];
}

export class SharedWalletQuotas implements WalletQuotaPolicy {
  readonly #store: EncryptedStore;
  readonly #limits: WalletQuotaLimits;
  readonly #mutex: Mutex;
  readonly #slotMs: number;
  readonly #clock: Clock;

  /** `slotMs`: how long a prepare's slot lasts if its process dies before it ends. */
  constructor(store: EncryptedStore, limits: WalletQuotaLimits, slotMs: number, clock: Clock) {
    this.#store = store;
    this.#limits = limits;
    this.#mutex = store.mutex('wallet-quota');
    this.#slotMs = slotMs;
    this.#clock = clock;
  }

  async preparing<T>(wallet: string, work: () => Promise<T>): Promise<T> {
    const slot = randomUUID();
    await this.#change(wallet, (record, now) => {
      const current = Object.keys(record.prepares).length;
      if (current >= this.#limits.concurrentPrepares) throw tooManyPrepares(current, this.#limits);
      record.prepares[slot] = now + this.#slotMs;
    });
    try {
      return await work();
    } finally {
      await this.#change(wallet, (record) => {
        delete record.prepares[slot];
      });
    }
  }

  async takeNewAgent(wallet: string): Promise<void> {
    await this.#change(wallet, (record, now) => {
      if (record.newAgents.length >= this.#limits.newAgentsPerHour)
        throw tooManyNewAgents(record.newAgents, this.#limits, now);
      record.newAgents.push(now);
    });
  }

  /** Reads the wallet's record without what has lapsed, applies `change`, writes it back (one section). */
  async #change(wallet: string, change: (record: QuotaRecord, now: number) => void): Promise<void> {
    const key = this.#store.key('wallet-quota', wallet);
    await this.#mutex.run(wallet, async () => {
      const now = this.#clock();
      const stored = await this.#store.get<QuotaRecord>(key);
      const record: QuotaRecord = {
        prepares: Object.fromEntries(
          Object.entries(stored?.prepares ?? {}).filter(([, until]) => until > now),
        ),
        newAgents: (stored?.newAgents ?? []).filter((t) => t > now - HOUR_MS),
      };
      change(record, now);
      if (Object.keys(record.prepares).length === 0 && record.newAgents.length === 0)
        await this.#store.del(key);
      else await this.#store.put(key, record);
    });
  }
}
