// Public pool statistics: aggregates only (counts), never per-agent data.
import type { BatchSummary, PoolStats } from '../../api/types.ts';
import { scopedId } from '../domain/agent-ref.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { AgentRegistry } from './agents.ts';
import type { NoteBook } from './notebook.ts';

interface StatsRecord {
  /** Distinct paid services (the payments module records them as HMACs, never as URLs). */
  services: string[];
  payments: number;
  /** Confirmed pool transactions made by this proxy (deposits, withdrawals, consolidations). */
  transactions?: number;
  recentBatches: BatchSummary[];
}

const RECENT_BATCHES = 10;

export class PoolStatsService {
  readonly #store: EncryptedStore;
  readonly #agents: AgentRegistry;
  readonly #notes: NoteBook;
  readonly #mutex;

  constructor(store: EncryptedStore, agents: AgentRegistry, notes: NoteBook) {
    this.#store = store;
    this.#mutex = store.mutex('stats');
    this.#agents = agents;
    this.#notes = notes;
  }

  async stats(): Promise<PoolStats> {
    const record = await this.#record();
    // Active = holds funds in the pool (or owes unsettled payments).
    let activeAgents = 0;
    for (const agent of await this.#agents.all()) {
      const account = await this.#notes.account(scopedId(agent));
      if (account.notes > 0n || account.unsettled > 0n) activeAgents += 1;
    }
    return {
      activeAgents,
      totalTransactions: (record.transactions ?? 0) + record.payments,
      servicesUsed: record.services.length,
      recentBatches: record.recentBatches,
    };
  }

  /** Counts one confirmed pool transaction. */
  async recordTransaction(): Promise<void> {
    await this.#mutex.run('stats', async () => {
      const record = await this.#record();
      record.transactions = (record.transactions ?? 0) + 1;
      await this.#store.put(this.#store.fixedKey('meta', 'stats'), record);
    });
  }

  /** Called by the batch operator after a batch ran. */
  async recordBatch(batch: BatchSummary): Promise<void> {
    await this.#mutex.run('stats', async () => {
      const record = await this.#record();
      record.recentBatches = [batch, ...record.recentBatches].slice(0, RECENT_BATCHES);
      await this.#store.put(this.#store.fixedKey('meta', 'stats'), record);
    });
  }

  /** Counts one confirmed payment to the service named by `serviceKey` (an HMAC, never the URL). */
  async recordPayment(serviceKey: string): Promise<void> {
    await this.#mutex.run('stats', async () => {
      const record = await this.#record();
      record.payments += 1;
      if (!record.services.includes(serviceKey)) record.services.push(serviceKey);
      await this.#store.put(this.#store.fixedKey('meta', 'stats'), record);
    });
  }

  async #record(): Promise<StatsRecord> {
    return (
      (await this.#store.get<StatsRecord>(this.#store.fixedKey('meta', 'stats'))) ?? {
        services: [],
        payments: 0,
        recentBatches: [],
      }
    );
  }
}
