// Connects the proxy to its ledger and prover. The HTTP API starts first; the pool side connects in
// the background and retries, so a ledger or prover that starts later (or restarts) is picked up, and
// until then the pool endpoints answer 503 `service_unavailable` instead of the process dying.

import { scValToNative } from '#stellar-sdk';
import type { Clock } from './util/clock.ts';
import { ProverClient } from '../prover/client.ts';
import type { ProxyConfig } from './config.ts';
import { DomainError, messageOf } from './domain/errors.ts';
import type { ProxyMetrics } from './util/metrics.ts';
import type { EncryptedStore } from './store/encrypted-store.ts';
import type { Logger } from './util/logger.ts';
import type { AgentRegistry } from './services/agents.ts';
import { type Deployment, resolveDeployment } from './services/deployment.ts';
import { ChainClient } from './services/chain-client.ts';
import type { NoteBook } from './services/notebook.ts';
import { PoolIndexer } from './services/pool-indexer.ts';
import { ArchiveConflictError, type EventArchive, ForeignEventError } from './services/event-archive.ts';
import { ArchiveSealError } from './services/archive-seal.ts';
import { PoolTransactionProver, type TreeState } from './services/pool-transaction.ts';
import { TreeCapacityWatch } from './services/tree-capacity.ts';
import { ChainMismatchError, checkAgainstChain, checkedKey } from './services/chain-check.ts';
import { PoolReads } from './services/pool-reads.ts';
import { scopedId } from './domain/agent-ref.ts';
import { FLOAT_ACCOUNT_ID } from './domain/float-account.ts';
import type { FlowContext } from './flows/context.ts';
import { reconcile, type Reconciler } from './flows/reconcile.ts';
import type { PaymentContext } from './payments/context.ts';
import { reconcilePayment } from './payments/reconcile-payment.ts';
import { recoverPaymentHistory } from './payments/recover-history.ts';
import { createPayments, type Payments } from './payments/runtime.ts';
import { type WalletQuotaPolicy, WalletQuotas } from './flows/wallet-quotas.ts';
import { Journal } from './journal/journal.ts';
import type { Cluster } from './cluster/cluster.ts';
import type { Singletons } from './cluster/singletons.ts';
import { AgentKeyring } from './services/agent-keyring.ts';
import { AspRegistrar } from './services/asp-registrar.ts';
import { NoteCrediting } from './services/note-crediting.ts';
import type { PoolStatsService } from './services/stats.ts';

import type { PoolAccess } from './routes/pool-access.ts';
import { type OperatorBooks, operatorBooks } from './payments/books.ts';

/** How long finished deposits, withdrawals and consolidations stay in the journal (the other kinds stay). */
const JOURNAL_RETENTION_MS = 7 * 86_400_000;
/** How often the journal is pruned of them. */
const PRUNE_INTERVAL_MS = 3_600_000;

export interface PoolRuntimeDeps {
  config: ProxyConfig;
  store: EncryptedStore;
  masterKey: Uint8Array;
  agents: AgentRegistry;
  notes: NoteBook;
  metrics: ProxyMetrics;
  logger: Logger;
  stats: PoolStatsService;
  /** The other replicas on a shared store (cluster/cluster.ts); undefined alone on LevelDB. */
  cluster?: Cluster;
  clock: Clock;
  /** The proxy's copy of the pool's events (services/event-archive.ts). */
  archive: EventArchive;
}

interface Connected {
  flows: FlowContext;
  payments: Payments | undefined;
  deployment: Deployment;
  indexer: PoolIndexer;
  prover: ProverClient;
}

/** Per-wallet quotas: shared by the replicas on a shared store, else this process's. */
function walletQuotas(config: ProxyConfig, cluster: Cluster | undefined, clock: Clock): WalletQuotaPolicy {
  const limits = {
    concurrentPrepares: config.limits.walletConcurrentPrepares,
    newAgentsPerHour: config.limits.walletNewAgentsPerHour,
  };
  // A dead replica's prepare slot lapses after the longest a prepare can take (its proof, then a minute).
  return cluster?.quotas(limits, config.prover.timeoutMs + 60_000) ?? new WalletQuotas(limits, clock);
}

/** Errors of the pool's events that a retry cannot mend: the proxy stops connecting and says why. */
function refusedForGood(error: unknown): error is Error {
  return (
    error instanceof ChainMismatchError ||
    error instanceof ArchiveSealError ||
    error instanceof ArchiveConflictError ||
    error instanceof ForeignEventError
  );
}

export class PoolRuntime implements PoolAccess {
  readonly #deps: PoolRuntimeDeps;
  #connected: Connected | undefined;
  #lastError = 'connecting';
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  #reconciler: NodeJS.Timeout | undefined;
  #singletons: Singletons | undefined;
  /** When the journal was last pruned (the proxy's clock, ms); 0: not yet. */
  #prunedAt = 0;
  /** Resolves once connected; rejects when the store is refused for good (it differs from the chain). */
  readonly ready: Promise<void>;
  #markReady!: () => void;
  #refuse!: (error: Error) => void;
  /** Why the store was refused for good (a rebuilt state that differs from the chain), if it was. */
  #refused: string | undefined;

  constructor(deps: PoolRuntimeDeps) {
    this.#deps = deps;
    this.ready = new Promise((resolve, reject) => {
      this.#markReady = resolve;
      this.#refuse = reject;
    });
    this.ready.catch(() => undefined); // a caller that never awaits `ready` is told through require()
  }

  /** Starts connecting; resolves at once (use `ready` to wait for the connection). */
  start(): void {
    void this.#attempt();
  }

  /** Why the pool is not connected yet (the last attempt's failure, or `connecting`); undefined once it is. */
  starting(): string | undefined {
    return this.#connected === undefined ? this.#lastError : undefined;
  }

  require(): FlowContext {
    if (this.#refused !== undefined) throw new DomainError('service_unavailable', this.#refused);
    if (this.#connected === undefined) {
      throw new DomainError(
        'service_unavailable',
        `the pool is not connected yet (${this.#lastError}); retry shortly`,
        {
          retryAfterSeconds: 2,
        },
      );
    }
    return this.#connected.flows;
  }

  /** The payment side, or 503 when the pool is not connected or payments are not configured. */
  requirePayments(): PaymentContext {
    const payments = this.#connected === undefined ? undefined : this.#connected.payments;
    if (payments === undefined) {
      this.require();
      throw new DomainError(
        'service_unavailable',
        'payments are not configured on this proxy (set POOL_PROXY_POOL_WALLET_SECRET)',
      );
    }
    return payments.pctx;
  }

  /** Runs a settlement round now (the settlement job also runs on its own). */
  async settleNow(): Promise<void> {
    await this.#connected?.payments?.settlement.runOnce();
  }

  /** The operator's books (payments/books.ts). */
  books(): Promise<OperatorBooks> {
    return operatorBooks(this.require(), this.#connected?.payments);
  }

  /** Health details: the pool wallet's float, when payments are on. */
  async health(): Promise<{ float?: bigint }> {
    const payments = this.#connected?.payments;
    if (payments === undefined) return {};
    return { float: await payments.pctx.float.held() };
  }

  /**
   * Periodic housekeeping: forget finished operations a week old, at most once an hour (pruning reads the whole
   * journal); a no-op until connected.
   */
  async sweep(): Promise<void> {
    const flows = this.#connected?.flows;
    if (flows === undefined) return;
    const now = flows.clock();
    if (now - this.#prunedAt < PRUNE_INTERVAL_MS) return;
    this.#prunedAt = now;
    await flows.journal.prune(now - JOURNAL_RETENTION_MS, [
      'wallet_deposit',
      'operator_deposit',
      'withdraw',
      'consolidate',
    ]);
  }

  registrationWaitBoundMs(): number {
    return this.require().registrar.waitBoundMs();
  }

  info(): { deployment: Deployment; circuitId: string; trees: TreeState } {
    const flows = this.require();
    return {
      deployment: this.#connected!.deployment,
      circuitId: this.#deps.config.prover.circuitId,
      trees: flows.prover.treeState(),
    };
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#reconciler);
    await this.#singletons?.stop();
    await this.#connected?.payments?.pctx.batches.stop();
    await this.#connected?.payments?.settlement.stop();
    await this.#connected?.payments?.refill.stop();
    this.#connected?.flows.registrar.stop();
    await this.#connected?.indexer.stop();
    this.#connected?.prover.close();
  }

  async #attempt(): Promise<void> {
    if (this.#stopped) return;
    const { config, store, logger } = this.#deps;
    let prover: ProverClient | undefined;
    let indexer: PoolIndexer | undefined;
    try {
      const deployment = await resolveDeployment(config.ledger);
      const ledger = await this.#chainClient(deployment);
      prover = await ProverClient.connect({
        addresses: config.prover.addresses,
        deadlineMs: config.prover.timeoutMs,
      });
      const treeCapacity = Number(
        scValToNative(
          await ledger.read(deployment.operator.publicKey(), deployment.contracts.pool, 'get_tree_capacity'),
        ),
      );
      indexer = new PoolIndexer({
        server: ledger.server,
        store,
        contracts: deployment.contracts,
        startLedger: config.indexer.startLedger,
        logger,
        archive: this.#deps.archive,
        treeCapacity,
      });
      const flows = this.#flowContext(deployment, ledger, prover, indexer);
      const trees = new TreeCapacityWatch(this.#deps.metrics, logger);
      indexer.onCommitments(async () => trees.observe(flows.prover.treeState()));
      const payments = createPayments({
        flows,
        config: config.payments,
        paymentCap: config.limits.paymentCap,
        masterKey: this.#deps.masterKey,
        cluster: this.#deps.cluster,
        // beside other replicas, settlement and refills run on the elected leader (known once caught up)
        maySettle: async () => (await this.#singletons?.maySettle()) ?? true,
      });
      const { singletons, reconcileNow } = await this.#catchUp(flows, payments, indexer);
      if (this.#stopped) {
        await singletons?.stop();
        await indexer.stop();
        prover.close();
        return;
      }
      this.#connected = { flows, payments, deployment, indexer, prover };
      await this.#serve(flows, payments, singletons, reconcileNow);
    } catch (error) {
      await indexer?.stop();
      prover?.close();
      if (refusedForGood(error)) {
        // Not retried: the events read differ from the chain (part of the history is missing, or forged) or
        // were tampered with; reading them again changes nothing.
        this.#refused = error.message;
        logger.log('error', 'the pool events read cannot be trusted; refused', { error: error.message });
        this.#refuse(error);
        return;
      }
      this.#lastError = messageOf(error);
      logger.log('warn', 'pool connection failed; retrying', { error: this.#lastError });
      this.#retry = setTimeout(() => void this.#attempt(), 2000);
      this.#retry.unref();
    }
  }

  /** The client of the configured chain, once its RPC serves the configured network. */
  async #chainClient(deployment: Deployment): Promise<ChainClient> {
    const { ledger: settings } = this.#deps.config;
    const ledger = new ChainClient({
      rpcUrl: settings.rpcUrl,
      networkPassphrase: settings.networkPassphrase,
      baseFee: settings.baseFee,
      txTimeoutSeconds: settings.txTimeoutSeconds,
      confirmTimeoutMs: settings.confirmTimeoutMs,
      // the operator pays a restore an RPC asks for before a wallet's deposit (a few hundred stroops of XLM)
      restorer: deployment.operator,
      contracts: {
        pool: deployment.contracts.pool,
        token: deployment.contracts.token,
        asp_membership: deployment.contracts.aspMembership,
        asp_non_membership: deployment.contracts.aspNonMembership,
      },
    });
    const network = await ledger.server.getNetwork();
    if (network.passphrase !== settings.networkPassphrase) {
      throw new Error(`RPC serves "${network.passphrase}", configured "${settings.networkPassphrase}"`);
    }
    return ledger;
  }

  /** What every money flow works with, over the connected chain, prover and indexer. */
  #flowContext(
    deployment: Deployment,
    ledger: ChainClient,
    prover: ProverClient,
    indexer: PoolIndexer,
  ): FlowContext {
    const { config, store, masterKey, agents, notes, metrics, logger, stats } = this.#deps;
    const keyring = new AgentKeyring(masterKey);
    const registrar = new AspRegistrar({
      ledger,
      deployment,
      indexer,
      keyring,
      logger,
      schedule: config.registration,
      clock: this.#deps.clock,
      insertLease: store.lease('asp-insert'),
    });
    return {
      store,
      journal: new Journal(store, this.#deps.cluster?.runs, this.#deps.clock),
      agents,
      notes,
      keyring,
      crediting: new NoteCrediting({ store, notes, agents, indexer, keyring, logger }),
      indexer,
      chain: ledger,
      prover: new PoolTransactionProver(
        indexer,
        prover,
        config.prover.circuitId,
        config.prover.timeoutMs,
        metrics,
      ),
      registrar,
      deployment,
      metrics,
      logger,
      stats,
      limits: {
        prepareTtlSeconds: config.limits.prepareTtlSeconds,
        txTimeoutSeconds: config.ledger.txTimeoutSeconds,
      },
      quotas: walletQuotas(config, this.#deps.cluster, this.#deps.clock),
      clock: this.#deps.clock,
      spendLock: store.lease('spend'),
      proofLanes: store.lease('proof-lane'),
    };
  }

  /**
   * Before requests are served: the indexer catches up, a rebuilt store learns its past payments, and
   * operations left by a previous run are decided (alone: here; beside other replicas: by their elected
   * leader, which also runs settlement).
   */
  async #catchUp(
    flows: FlowContext,
    payments: Payments | undefined,
    indexer: PoolIndexer,
  ): Promise<{ singletons: Singletons | undefined; reconcileNow: () => Promise<number> }> {
    const reconcilers: Partial<Record<string, Reconciler>> = payments
      ? { payment: (record) => reconcilePayment(payments.pctx, record) }
      : {};
    await indexer.start(this.#deps.config.indexer.pollIntervalMs);
    await this.#checkAgainstChain(flows, indexer);
    const reconcileNow = () => reconcile(flows, flows.clock(), reconcilers);
    // Beside other replicas, reconciliation and settlement run on their elected leader, which
    // reconciles first; alone, operations left by a previous run are decided before requests are served.
    const singletons = this.#deps.cluster?.lead({ reconcile: reconcileNow });
    this.#singletons = singletons;
    // A store rebuilt by `store recover` learns its past payments from the chain first.
    if (payments !== undefined)
      await recoverPaymentHistory(payments.pctx, await indexer.firstLedger, (tx) => indexer.ledgerOf(tx));
    if (singletons === undefined) await reconcileNow();
    return { singletons, reconcileNow };
  }

  /**
   * A store whose state was never compared with the chain (rebuilt from events: `store recover`, a fresh data
   * directory) is, once, before anything is served from it (services/chain-check.ts).
   */
  async #checkAgainstChain(flows: FlowContext, indexer: PoolIndexer): Promise<void> {
    const { store, agents, notes } = this.#deps;
    if ((await store.get<boolean>(checkedKey(store))) === true) return;
    const { chain, deployment } = flows;
    await checkAgainstChain({
      reads: new PoolReads(chain.server, chain.passphrase, deployment.contracts.pool),
      tree: indexer.poolTree,
      asp: () => ({ membership: indexer.aspTree.root, nonMembership: indexer.blocklist.root }),
      spent: indexer.spent,
      notes: async () => {
        const accounts = [FLOAT_ACCOUNT_ID, ...(await agents.all()).map((a) => scopedId(a))];
        return (await Promise.all(accounts.map((id) => notes.notes(id)))).flat();
      },
      sync: () => indexer.sync(),
    });
    await store.put(checkedKey(store), true);
  }

  /** Starts the registration slots, the batches, settlement, refills and periodic reconciliation; ready. */
  async #serve(
    flows: FlowContext,
    payments: Payments | undefined,
    singletons: Singletons | undefined,
    reconcileNow: () => Promise<number>,
  ): Promise<void> {
    const { config, logger } = this.#deps;
    flows.registrar.start();
    await payments?.pctx.batches.start();
    payments?.settlement.start();
    payments?.refill.start();
    logger.log('info', 'pool connected', {
      rpcUrl: config.ledger.rpcUrl,
      pool: flows.deployment.contracts.pool,
      ledger: flows.indexer.ledger,
    });
    this.#reconciler = setInterval(() => {
      (singletons === undefined ? reconcileNow() : singletons.reconcile()).catch((error) =>
        logger.log('warn', 'reconciliation failed; will retry', { error: messageOf(error) }),
      );
    }, config.reconcileIntervalMs);
    this.#reconciler.unref();
    this.#markReady();
  }
}
