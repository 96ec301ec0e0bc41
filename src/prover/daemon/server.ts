// The prover daemon: a gRPC server (poolproxy.prover.v1.Prover + grpc.health.v1.Health) that owns the
// proving keys and witness generators of every circuit under its circuits folder. It binds its port at
// once and reports SERVING only when every key is loaded; Prove calls then flow
//   admission (bounded) -> witness worker pool -> proving lane (one proof at a time) -> verify -> answer,
// honouring the caller's deadline and cancellation at every wait. This file composes the parts:
//   catalog.ts (circuits and key loading), requests.ts (request parsing into one witness source),
//   pipeline.ts (the prove pipeline), grpc-adapter.ts (gRPC services, status codes, per-call metrics),
//   call-signal.ts and lifecycle.ts (deadlines and cancellation, in-flight requests, drain and abandon).
import { availableParallelism } from 'node:os';
import type * as grpc from '@grpc/grpc-js';
import { formatAddress, parseListen } from '../../listen.ts';
import { callSignal } from './call-signal.ts';
import { CircuitCatalog } from './catalog.ts';
import type { CircuitDescription } from './circuits.ts';
import { createEngine, type EngineName, type ProvingEngine } from './engines/index.ts';
import { unavailable } from './errors.ts';
import { bindServer, createGrpcServer, type ProverHandlers } from './grpc-adapter.ts';
import { HealthStatus } from './health.ts';
import { InFlight, stopper } from './lifecycle.ts';
import { ProverMetrics } from './metrics.ts';
import { runProvePipeline } from './pipeline.ts';
import { ProofQueue } from './proof-queue.ts';
import {
  type CircuitInfoMessage,
  type ListCircuitsResponseMessage,
  PROVER_SERVICE_NAME,
  type ProveRequestMessage,
  type ProveResponseMessage,
  type VerifyRequestMessage,
  type VerifyResponseMessage,
} from './proto.ts';
import { parseProveRequest, parseVerifyRequest } from './requests.ts';
import { DEFAULT_INPUT_LIMITS } from './witness/inputs.ts';
import type { WitnessPool } from './witness/witness-pool.ts';

export interface ProverDaemonOptions {
  /** host:port to listen on; port 0 picks a free port. */
  listen: string;
  circuitsDir: string;
  engine?: EngineName;
  /** PEM server certificate chain and private key; without them the daemon listens in plaintext. */
  tls?: { cert: Buffer; key: Buffer };
  /** Port for GET /metrics (Prometheus text); 0 picks a free port; undefined serves no metrics. */
  metricsPort?: number;
  metricsHost?: string;
  /** Witness worker threads; default: one per core. */
  witnessWorkers?: number;
  /** Prove requests admitted at once (witness + proof + waiting); more get RESOURCE_EXHAUSTED. */
  queueCapacity?: number;
  /** Check each proof against the verification key before returning it (default on). */
  verifyAfterProve?: boolean;
  /** gRPC transport limit for one request; larger messages are refused by gRPC itself. */
  maxMessageBytes?: number;
  /** Largest accepted inputs_json; larger is INVALID_ARGUMENT. */
  maxInputsJsonBytes?: number;
  log?: (line: string) => void;
}

export interface DaemonStats {
  inFlight: number;
  /** Witness workers ready to take work. */
  witnessWorkers: number;
  /** Witness workers replaced after a crash or because their task was abandoned (its work stopped). */
  witnessWorkersReplaced: number;
  waitingForWitness: number;
  computingWitness: number;
  waitingForLane: number;
  proving: boolean;
}

export interface ProverDaemon {
  /** host:port actually bound. */
  readonly address: string;
  readonly port: number;
  readonly metricsPort?: number;
  readonly engine: EngineName;
  readonly metrics: ProverMetrics;
  /** Resolves once every proving key and witness generator is loaded (health: SERVING). */
  readonly ready: Promise<void>;
  circuits(): CircuitDescription[];
  stats(): DaemonStats;
  /**
   * Stops the daemon. Graceful (default): reports NOT_SERVING, refuses new calls and lets every admitted
   * request finish. `force`: in-flight calls are answered UNAVAILABLE at once.
   */
  stop(options?: { force?: boolean }): Promise<void>;
}

const MiB = 1 << 20;

/** What the daemon has loaded so far; calls are served once `accepting`. */
interface Loaded {
  engine?: ProvingEngine;
  pool?: WitnessPool;
  accepting: boolean;
}

/** The daemon's parts that live from start to stop. */
interface DaemonParts {
  catalog: CircuitCatalog;
  queue: ProofQueue;
  inFlight: InFlight;
  health: HealthStatus;
  metrics: ProverMetrics;
  loaded: Loaded;
}

function createParts(options: ProverDaemonOptions): DaemonParts {
  const queue = new ProofQueue(options.queueCapacity ?? 64);
  const loaded: Loaded = { accepting: false };
  const metrics = new ProverMetrics(
    {
      inFlight: () => queue.inFlight,
      waitingForWitness: () => loaded.pool?.queued ?? 0,
      waitingForLane: () => queue.waitingForLane,
    },
    { processMetrics: options.metricsPort !== undefined },
  );
  return {
    catalog: new CircuitCatalog(),
    queue,
    inFlight: new InFlight(),
    health: new HealthStatus([PROVER_SERVICE_NAME]),
    metrics,
    loaded,
  };
}

/** The engine and witness pool a call may use, or UNAVAILABLE while loading or stopping. */
function requireServing(
  loaded: Loaded,
  stopping: () => boolean,
): { engine: ProvingEngine; pool: WitnessPool } {
  if (stopping()) throw unavailable('prover daemon is shutting down');
  const { engine, pool } = loaded;
  if (!loaded.accepting || !engine || !pool)
    throw unavailable('prover daemon is still loading its proving keys');
  return { engine, pool };
}

/** The Prover service's calls: Prove (admitted, tracked, through the pipeline), Verify, ListCircuits. */
function proverHandlers(
  parts: DaemonParts,
  options: ProverDaemonOptions,
  serving: () => { engine: ProvingEngine; pool: WitnessPool },
): ProverHandlers {
  const { catalog, queue, inFlight, metrics } = parts;
  const inputLimits = {
    ...DEFAULT_INPUT_LIMITS,
    maxBytes: options.maxInputsJsonBytes ?? DEFAULT_INPUT_LIMITS.maxBytes,
  };
  const pipelineDeps = { queue, metrics, verifyAfterProve: options.verifyAfterProve ?? true };

  async function prove(
    call: grpc.ServerUnaryCall<ProveRequestMessage, ProveResponseMessage>,
  ): Promise<ProveResponseMessage> {
    const received = performance.now();
    const { engine, pool } = serving();
    const circuit = catalog.require(call.request.circuit);
    const source = parseProveRequest(call.request, circuit, inputLimits);
    const release = queue.admit();
    const callLife = callSignal(call);
    const request = inFlight.track(callLife.signal);
    try {
      return await runProvePipeline(pipelineDeps, engine, pool, circuit, source, request.signal, received);
    } finally {
      request.release();
      callLife.done();
      release();
    }
  }

  async function verify(
    call: grpc.ServerUnaryCall<VerifyRequestMessage, VerifyResponseMessage>,
  ): Promise<VerifyResponseMessage> {
    const { engine } = serving();
    const circuit = catalog.require(call.request.circuit);
    const { proof, publicSignals } = parseVerifyRequest(call.request, circuit);
    const started = performance.now();
    const valid = await engine.verify(circuit.verificationKey, proof, publicSignals);
    return { valid, verify_ms: performance.now() - started };
  }

  async function listCircuits(): Promise<ListCircuitsResponseMessage> {
    serving();
    const list: CircuitInfoMessage[] = await Promise.all(
      catalog.list().map(async (c) => ({
        id: c.id,
        constraints: c.constraints,
        public_inputs: c.publicSignals,
        wires: c.wires,
        zkey_sha256: await c.zkeySha256,
        development_key: c.developmentKey,
      })),
    );
    return { circuits: list };
  }

  return { prove, verify, listCircuits };
}

/** Finds the circuits, loads the engine, every key and the witness workers, then reports SERVING. */
async function loadAll(
  parts: DaemonParts,
  options: ProverDaemonOptions,
  engineName: EngineName,
  stopping: () => boolean,
  log: (line: string) => void,
): Promise<void> {
  const { catalog, loaded } = parts;
  await catalog.discover(options.circuitsDir, log);
  const chosen = await createEngine(engineName);
  loaded.engine = chosen;
  const started = await catalog.loadKeys(
    chosen,
    options.witnessWorkers ?? availableParallelism(),
    stopping,
    log,
  );
  if (!started) return;
  loaded.pool = started;
  if (stopping()) return;
  loaded.accepting = true;
  parts.health.setAll('SERVING');
}

function daemonStats(parts: DaemonParts): DaemonStats {
  const { queue } = parts;
  const { pool } = parts.loaded;
  return {
    inFlight: queue.inFlight,
    witnessWorkers: pool?.size ?? 0,
    witnessWorkersReplaced: pool?.replacements ?? 0,
    waitingForWitness: pool?.queued ?? 0,
    computingWitness: pool?.running ?? 0,
    waitingForLane: queue.waitingForLane,
    proving: queue.busy,
  };
}

export async function startProverDaemon(options: ProverDaemonOptions): Promise<ProverDaemon> {
  const listen = parseListen(options.listen);
  const engineName = options.engine ?? 'native';
  const log = options.log ?? (() => undefined);
  const parts = createParts(options);
  const stopping = () => life.stopping;

  const server = createGrpcServer(
    proverHandlers(parts, options, () => requireServing(parts.loaded, stopping)),
    {
      maxMessageBytes: options.maxMessageBytes ?? 64 * MiB,
      metrics: parts.metrics,
      health: parts.health,
      isServed: (id) => parts.catalog.has(id),
      log,
    },
  );
  let ready: Promise<void> | undefined;
  let metricsServer: { port: number; close(): Promise<void> } | undefined;
  const life = stopper({
    server,
    inFlight: parts.inFlight,
    closeHealth: () => parts.health.close(),
    loaded: () => ready ?? Promise.resolve(),
    release: async () => {
      await parts.loaded.pool?.close();
      await parts.loaded.engine?.close();
      await metricsServer?.close();
    },
  });

  const port = await bindServer(server, formatAddress(listen.host, listen.port), options.tls);
  metricsServer =
    options.metricsPort !== undefined
      ? await parts.metrics.listen(options.metricsPort, options.metricsHost ?? '127.0.0.1')
      : undefined;

  ready = loadAll(parts, options, engineName, stopping, log);
  // A load failure is reported through `ready`; keep it from also surfacing as an unhandled rejection.
  ready.catch(() => undefined);

  return {
    address: formatAddress(listen.host, port),
    port,
    metricsPort: metricsServer?.port,
    engine: engineName,
    metrics: parts.metrics,
    ready,
    circuits: (): CircuitDescription[] => parts.catalog.list(),
    stats: () => daemonStats(parts),
    stop: (stopOptions) => life.stop(stopOptions),
  };
}
