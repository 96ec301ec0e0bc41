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
import { bindServer, createGrpcServer } from './grpc-adapter.ts';
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

export async function startProverDaemon(options: ProverDaemonOptions): Promise<ProverDaemon> {
  const listen = parseListen(options.listen);
  const engineName = options.engine ?? 'native';
  const inputLimits = {
    ...DEFAULT_INPUT_LIMITS,
    maxBytes: options.maxInputsJsonBytes ?? DEFAULT_INPUT_LIMITS.maxBytes,
  };
  const log = options.log ?? (() => undefined);

  const catalog = new CircuitCatalog();
  const queue = new ProofQueue(options.queueCapacity ?? 64);
  const inFlight = new InFlight();
  let pool: WitnessPool | undefined;
  let engine: ProvingEngine | undefined;
  const health = new HealthStatus([PROVER_SERVICE_NAME]);
  const metrics = new ProverMetrics(
    {
      inFlight: () => queue.inFlight,
      waitingForWitness: () => pool?.queued ?? 0,
      waitingForLane: () => queue.waitingForLane,
    },
    { processMetrics: options.metricsPort !== undefined },
  );
  const pipelineDeps = { queue, metrics, verifyAfterProve: options.verifyAfterProve ?? true };
  let accepting = false;

  const requireServing = () => {
    if (life.stopping) throw unavailable('prover daemon is shutting down');
    if (!accepting || !engine || !pool) throw unavailable('prover daemon is still loading its proving keys');
    return { engine, pool };
  };

  async function prove(
    call: grpc.ServerUnaryCall<ProveRequestMessage, ProveResponseMessage>,
  ): Promise<ProveResponseMessage> {
    const received = performance.now();
    const serving = requireServing();
    const circuit = catalog.require(call.request.circuit);
    const source = parseProveRequest(call.request, circuit, inputLimits);
    const release = queue.admit();
    const callLife = callSignal(call);
    const request = inFlight.track(callLife.signal);
    try {
      return await runProvePipeline(
        pipelineDeps,
        serving.engine,
        serving.pool,
        circuit,
        source,
        request.signal,
        received,
      );
    } finally {
      request.release();
      callLife.done();
      release();
    }
  }

  async function verify(
    call: grpc.ServerUnaryCall<VerifyRequestMessage, VerifyResponseMessage>,
  ): Promise<VerifyResponseMessage> {
    const { engine } = requireServing();
    const circuit = catalog.require(call.request.circuit);
    const { proof, publicSignals } = parseVerifyRequest(call.request, circuit);
    const started = performance.now();
    const valid = await engine.verify(circuit.verificationKey, proof, publicSignals);
    return { valid, verify_ms: performance.now() - started };
  }

  async function listCircuits(): Promise<ListCircuitsResponseMessage> {
    requireServing();
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

  const server = createGrpcServer(
    { prove, verify, listCircuits },
    {
      maxMessageBytes: options.maxMessageBytes ?? 64 * MiB,
      metrics,
      health,
      isServed: (id) => catalog.has(id),
      log,
    },
  );
  let ready: Promise<void> | undefined;
  let metricsServer: { port: number; close(): Promise<void> } | undefined;
  const life = stopper({
    server,
    inFlight,
    closeHealth: () => health.close(),
    loaded: () => ready ?? Promise.resolve(),
    release: async () => {
      await pool?.close();
      await engine?.close();
      await metricsServer?.close();
    },
  });

  const port = await bindServer(server, formatAddress(listen.host, listen.port), options.tls);
  metricsServer =
    options.metricsPort !== undefined
      ? await metrics.listen(options.metricsPort, options.metricsHost ?? '127.0.0.1')
      : undefined;

  ready = (async () => {
    await catalog.discover(options.circuitsDir, log);
    const chosen = await createEngine(engineName);
    engine = chosen;
    const started = await catalog.loadKeys(
      chosen,
      options.witnessWorkers ?? availableParallelism(),
      () => life.stopping,
      log,
    );
    if (!started) return;
    pool = started;
    if (life.stopping) return;
    accepting = true;
    health.setAll('SERVING');
  })();
  // A load failure is reported through `ready`; keep it from also surfacing as an unhandled rejection.
  ready.catch(() => undefined);

  return {
    address: formatAddress(listen.host, port),
    port,
    metricsPort: metricsServer?.port,
    engine: engineName,
    metrics,
    ready,
    circuits: (): CircuitDescription[] => catalog.list(),
    stats: () => ({
      inFlight: queue.inFlight,
      witnessWorkers: pool?.size ?? 0,
      witnessWorkersReplaced: pool?.replacements ?? 0,
      waitingForWitness: pool?.queued ?? 0,
      computingWitness: pool?.running ?? 0,
      waitingForLane: queue.waitingForLane,
      proving: queue.busy,
    }),
    stop: (stopOptions) => life.stop(stopOptions),
  };
}
