// Public pool statistics: only what the ledger already shows anyone, so polling them tells an observer nothing
// the chain does not (docs/PRIVACY.md, "Public endpoints"). Agents: every agent the pool registered (each one's
// allowlist insert is public), not those holding funds (that count would drop when a settlement round emptied
// an agent's notes). Transactions: confirmed pool transactions and confirmed payments (each a public
// transaction). Services: distinct payees (public in every payment's transfer). Batches: per batch, its
// confirmed payments, counted as each one confirms (each is a public transfer), dated by the ledger close of its
// first; a payment that failed is never counted (the chain shows nothing of it), nor how long a batch took.
import type { BatchSummary, PoolStats } from '../../api/types.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { AgentRegistry } from './agents.ts';

interface StatsRecord {
  /** Distinct payees paid, as HMACs (never the address itself in the store). */
  payees?: string[];
  payments: number;
  /** Confirmed pool transactions made by this proxy (deposits, withdrawals, transfers, refills). */
  transactions?: number;
  batches?: BatchSummary[];
}

const RECENT_BATCHES = 10;

/** One confirmed payment, as the stats count it. */
export interface CountedPayment {
  /** HMAC of the payee's address */
  payeeKey: string;
  batchId: string;
  /** when its transfer's ledger closed (ISO 8601) */
  settledAt: string;
}

export class PoolStatsService {
  readonly #store: EncryptedStore;
  readonly #agents: AgentRegistry;
  readonly #mutex;

  constructor(store: EncryptedStore, agents: AgentRegistry) {
    this.#store = store;
    this.#mutex = store.mutex('stats');
    this.#agents = agents;
  }

  async stats(): Promise<PoolStats> {
    const record = await this.#record();
    return {
      activeAgents: (await this.#agents.all()).length,
      totalTransactions: (record.transactions ?? 0) + record.payments,
      servicesUsed: record.payees?.length ?? 0,
      recentBatches: record.batches ?? [],
    };
  }

  /** Counts one confirmed pool transaction. */
  async recordTransaction(): Promise<void> {
    await this.#update((record) => {
      record.transactions = (record.transactions ?? 0) + 1;
    });
  }

  /** Counts one confirmed payment: its payee and its batch. */
  async recordPayment(payment: CountedPayment): Promise<void> {
    await this.#update((record) => {
      record.payments += 1;
      const payees = (record.payees ??= []);
      if (!payees.includes(payment.payeeKey)) payees.push(payment.payeeKey);
      if (payment.batchId === '') return;
      const batches = record.batches ?? [];
      const batch = batches.find((b) => b.batchId === payment.batchId);
      if (batch !== undefined) batch.payments += 1;
      else batches.push({ batchId: payment.batchId, executedAt: payment.settledAt, payments: 1 });
      batches.sort((a, b) => b.executedAt.localeCompare(a.executedAt));
      record.batches = batches.slice(0, RECENT_BATCHES);
    });
  }

  async #update(change: (record: StatsRecord) => void): Promise<void> {
    await this.#mutex.run('stats', async () => {
      const record = await this.#record();
      change(record);
      await this.#store.put(this.#store.fixedKey('meta', 'stats'), record);
    });
  }

  async #record(): Promise<StatsRecord> {
    return (await this.#store.get<StatsRecord>(this.#store.fixedKey('meta', 'stats'))) ?? { payments: 0 };
  }
}
