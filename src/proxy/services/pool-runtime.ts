// Connects the proxy to its ledger and prover. The HTTP API starts first; the pool side connects in
// the background and retries, so a ledger or prover that starts later (or restarts) is picked up, and
// until then the pool endpoints answer 503 `service_unavailable` instead of the process dying.

import { ProverClient } from '../../prover/client.ts';
import type { ProxyConfig } from '../config.ts';
import { ProblemError } from '../errors.ts';
import type { ProxyMetrics } from '../http/metrics.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentRegistry } from './agents.ts';
import { type Deployment, resolveDeployment } from './deployment.ts';
import { LedgerClient } from './ledger-client.ts';
import type { NoteBook } from './notebook.ts';
import { PoolIndexer } from './pool-indexer.ts';
import { PoolService } from './pool-service.ts';
import { PoolTransactionProver } from './pool-transaction.ts';
import type { PoolStatsService } from './stats.ts';

export interface PoolRuntimeDeps {
  config: ProxyConfig;
  store: EncryptedStore;
  masterKey: Uint8Array;
  agents: AgentRegistry;
  notes: NoteBook;
  metrics: ProxyMetrics;
  logger: Logger;
  stats: PoolStatsService;
}

interface Connected {
  service: PoolService;
  deployment: Deployment;
  indexer: PoolIndexer;
  prover: ProverClient;
}

export class PoolRuntime {
  readonly #deps: PoolRuntimeDeps;
  #connected: Connected | undefined;
  #lastError = 'connecting';
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  readonly ready: Promise<void>;
  #markReady!: () => void;

  constructor(deps: PoolRuntimeDeps) {
    this.#deps = deps;
    this.ready = new Promise((resolve) => {
      this.#markReady = resolve;
    });
  }

  /** Starts connecting; resolves at once (use `ready` to wait for the connection). */
  start(): void {
    void this.#attempt();
  }

  require(): PoolService {
    if (this.#connected === undefined) {
      throw new ProblemError(
        'service_unavailable',
        `the pool is not connected yet (${this.#lastError}); retry shortly`,
        {
          headers: { 'Retry-After': '2' },
        },
      );
    }
    return this.#connected.service;
  }

  /** Periodic housekeeping (prepared deposits long expired); a no-op until connected. */
  async sweep(): Promise<void> {
    await this.#connected?.service.sweepPrepared();
    await this.#connected?.service.reconcileUncertain();
  }

  info(): { deployment: Deployment; circuitId: string } {
    this.require();
    return { deployment: this.#connected!.deployment, circuitId: this.#deps.config.prover.circuitId };
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#connected?.indexer.stop();
    this.#connected?.prover.close();
  }

  async #attempt(): Promise<void> {
    if (this.#stopped) return;
    const { config, store, masterKey, agents, notes, metrics, logger, stats } = this.#deps;
    let prover: ProverClient | undefined;
    let indexer: PoolIndexer | undefined;
    try {
      const deployment = await resolveDeployment(config.ledger);
      const ledger = new LedgerClient({
        rpcUrl: config.ledger.rpcUrl,
        networkPassphrase: config.ledger.networkPassphrase,
        baseFee: config.ledger.baseFee,
        txTimeoutSeconds: config.ledger.txTimeoutSeconds,
        confirmTimeoutMs: config.ledger.confirmTimeoutMs,
      });
      const network = await ledger.server.getNetwork();
      if (network.passphrase !== config.ledger.networkPassphrase) {
        throw new Error(
          `RPC serves "${network.passphrase}", configured "${config.ledger.networkPassphrase}"`,
        );
      }
      prover = await ProverClient.connect({
        addresses: config.prover.addresses,
        deadlineMs: config.prover.timeoutMs,
      });
      indexer = new PoolIndexer(
        ledger.server,
        store,
        deployment.contracts,
        config.indexer.startLedger,
        logger,
      );
      const service = new PoolService({
        store,
        masterKey,
        agents,
        notes,
        indexer,
        ledger,
        prover: new PoolTransactionProver(
          indexer,
          prover,
          config.prover.circuitId,
          config.prover.timeoutMs,
          metrics,
        ),
        deployment,
        metrics,
        logger,
        prepareTtlSeconds: config.limits.prepareTtlSeconds,
        txTimeoutSeconds: config.ledger.txTimeoutSeconds,
        stats,
      });
      await indexer.start(config.indexer.pollIntervalMs);
      // Spends left undecided by a previous run are settled before new requests are served.
      await service.reconcileUncertain();
      if (this.#stopped) {
        await indexer.stop();
        prover.close();
        return;
      }
      this.#connected = { service, deployment, indexer, prover };
      logger.log('info', 'pool connected', {
        rpcUrl: config.ledger.rpcUrl,
        pool: deployment.contracts.pool,
        ledger: indexer.ledger,
      });
      this.#markReady();
    } catch (error) {
      await indexer?.stop();
      prover?.close();
      this.#lastError = (error as Error).message;
      logger.log('warn', 'pool connection failed; retrying', { error: this.#lastError });
      this.#retry = setTimeout(() => void this.#attempt(), 2000);
      this.#retry.unref();
    }
  }
}
