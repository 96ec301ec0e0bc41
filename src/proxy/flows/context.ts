// What every money flow needs, as one object: the store and its journal, the note book and agents, the
// ledger, the prover, the deployment, and the service's limits. Built once when the pool connects
// (`pool-runtime.ts`). Each flow declares the part it uses as a `Pick` of this context (with the parts of the
// flows it calls), so its signature says what it touches and the compiler refuses one reaching for more.
import type { ProxyMetrics } from '../util/metrics.ts';
import type { Journal } from '../journal/journal.ts';
import type { AgentKeyring } from '../services/agent-keyring.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { AspRegistrar } from '../services/asp-registrar.ts';
import type { Deployment } from '../services/deployment.ts';
import type { ChainClient } from '../services/chain-client.ts';
import type { NoteBook } from '../services/notebook.ts';
import type { NoteCrediting } from '../services/note-crediting.ts';
import type { PoolIndexer } from '../services/pool-indexer.ts';
import type { PoolTransactionProver } from '../services/pool-transaction.ts';
import type { PoolStatsService } from '../services/stats.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Mutex } from '../store/backend.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { WalletQuotaPolicy } from './wallet-quotas.ts';

export interface FlowLimits {
  prepareTtlSeconds: number;
  txTimeoutSeconds: number;
}

export interface FlowContext {
  store: EncryptedStore;
  journal: Journal;
  agents: AgentRegistry;
  notes: NoteBook;
  keyring: AgentKeyring;
  crediting: NoteCrediting;
  indexer: PoolIndexer;
  chain: ChainClient;
  prover: PoolTransactionProver;
  registrar: AspRegistrar;
  deployment: Deployment;
  metrics: ProxyMetrics;
  logger: Logger;
  stats: PoolStatsService;
  limits: FlowLimits;
  /** Per-wallet bounds: concurrent prepares, new agents per hour. */
  quotas: WalletQuotaPolicy;
  /** One spend at a time per agent (note selection and change depend on the last result). */
  spendLock: Mutex;
  /** One proof at a time per owner: a wallet's proofs queue behind its own, not in front of others'. */
  proofLanes: Mutex;
  /** What decides a prepared deposit's deadline, the hourly new-agent quota and what reconciliation finds
   *  expired. */
  clock: Clock;
}
