// Public pool statistics: aggregates only (counts), never per-agent data.
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { AgentRegistry } from './agents.ts';
import type { NoteBook } from './notebook.ts';

export interface BatchSummary {
  batchId: string;
  payments: number;
  executedAt: string;
}

interface StatsRecord {
  /** Distinct paid services (the payments module records them as HMACs, never as URLs). */
  services: string[];
  payments: number;
  recentBatches: BatchSummary[];
}

const RECENT_BATCHES = 10;

export class PoolStatsService {
  readonly #store: EncryptedStore;
  readonly #agents: AgentRegistry;
  readonly #notes: NoteBook;

  constructor(store: EncryptedStore, agents: AgentRegistry, notes: NoteBook) {
    this.#store = store;
    this.#agents = agents;
    this.#notes = notes;
  }

  async stats(): Promise<{
    activeAgents: number;
    totalTransactions: number;
    servicesUsed: number;
    recentBatches: BatchSummary[];
  }> {
    const record = await this.#record();
    let activeAgents = 0;
    let operations = 0;
    for (const agent of await this.#agents.all()) {
      const account = await this.#notes.account(agent.agentId);
      if (account.operations > 0 || account.notes > 0n) activeAgents += 1;
      operations += account.operations;
    }
    return {
      activeAgents,
      totalTransactions: operations + record.payments,
      servicesUsed: record.services.length,
      recentBatches: record.recentBatches,
    };
  }

  /** Called by the batch operator after a batch ran. */
  async recordBatch(batch: BatchSummary, serviceKeys: string[]): Promise<void> {
    const record = await this.#record();
    record.payments += batch.payments;
    record.services = [...new Set([...record.services, ...serviceKeys])];
    record.recentBatches = [batch, ...record.recentBatches].slice(0, RECENT_BATCHES);
    await this.#store.put(this.#store.fixedKey('meta', 'stats'), record);
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
