// The prover daemon: a gRPC server (poolproxy.prover.v1.Prover + grpc.health.v1.Health) that owns the
// proving keys and witness generators of every circuit under its circuits folder. It binds its port at
// once and reports SERVING only when every key is loaded; Prove calls then flow
//   admission (bounded) -> witness worker pool -> proving lane (one proof at a time) -> verify -> answer,
// honouring the caller's deadline and cancellation at every wait.
import { availableParallelism } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { PROOF_BYTES, proofFromBytes, proofToBytes } from '../../crypto/index.ts';
import { BN254_R, parseWtnsHeader, type WtnsHeader } from './binfile.ts';
import { CIRCUIT_ID, type CircuitDescription, describeCircuit, discoverCircuits } from './circuits.ts';
import {
  createEngine,
  type EngineName,
  type Groth16Proof,
  type ProvingEngine,
  UnsatisfiedWitnessError,
} from './engines/index.ts';
import {
  cancelled,
  deadlineExceeded,
  internal,
  invalidArgument,
  notFound,
  ProverError,
  unavailable,
} from './errors.ts';
import { HealthStatus } from './health.ts';
import { ProverMetrics } from './metrics.ts';
import { ProofQueue } from './proof-queue.ts';
import {
  type CircuitInfoMessage,
  HealthService,
  type ListCircuitsResponseMessage,
  PROVER_SERVICE_NAME,
  type ProveRequestMessage,
  type ProveResponseMessage,
  ProverService,
  type VerifyRequestMessage,
  type VerifyResponseMessage,
} from './proto.ts';
import { type CircuitInputs, DEFAULT_INPUT_LIMITS, parseCircuitInputs } from './witness/inputs.ts';
import { WitnessPool } from './witness/witness-pool.ts';
import { formatAddress, parseListen } from '../../listen.ts';

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
/** A cancellation this close to the deadline is the deadline. */
const DEADLINE_SLACK_MS = 50;

function bindAsync(
  server: grpc.Server,
  address: string,
  credentials: grpc.ServerCredentials,
): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(address, credentials, (error, port) => (error ? reject(error) : resolve(port))),
  );
}

/** An AbortSignal that fires when the caller cancels or its deadline passes; `done` releases the timers. */
function callSignal(call: grpc.ServerUnaryCall<unknown, unknown>): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  const expire = () =>
    controller.abort(
      deadlineExceeded('the deadline passed before the proof was ready; the work was dropped'),
    );
  // grpc-js ends a call at its deadline with its own timer and reports that as a cancellation too; timers
  // can fire a few ms before Date.now() reaches the deadline, hence the slack.
  const onCancelled = () =>
    Date.now() >= at - DEADLINE_SLACK_MS
      ? expire()
      : controller.abort(cancelled('the caller cancelled the request'));
  call.on('cancelled', onCancelled);
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(at)) {
    const remaining = at - Date.now();
    if (remaining <= 0) expire();
    else timer = setTimeout(expire, remaining);
  }
  if (call.cancelled) onCancelled();
  return {
    signal: controller.signal,
    done() {
      if (timer) clearTimeout(timer);
      call.removeListener('cancelled', onCancelled);
    },
  };
}

function toServiceError(error: unknown): Partial<grpc.ServiceError> {
  if (error instanceof ProverError) {
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(error.details)) metadata.set(key, value);
    return { code: error.code, details: error.message, metadata };
  }
  return {
    code: grpc.status.INTERNAL,
    details: `internal error: ${error instanceof Error ? error.message : String(error)}`,
  };
}

function checkProofJson(text: string): Groth16Proof {
  let proof: unknown;
  try {
    proof = JSON.parse(text);
  } catch (error) {
    throw invalidArgument(`proof_json is not valid JSON: ${(error as Error).message}`);
  }
  const decimal = (v: unknown) => typeof v === 'string' && /^[0-9]{1,80}$/.test(v);
  const p = proof as Partial<Groth16Proof> | null;
  const ok =
    p !== null &&
    typeof p === 'object' &&
    Array.isArray(p.pi_a) &&
    p.pi_a.length === 3 &&
    p.pi_a.every(decimal) &&
    Array.isArray(p.pi_c) &&
    p.pi_c.length === 3 &&
    p.pi_c.every(decimal) &&
    Array.isArray(p.pi_b) &&
    p.pi_b.length === 3 &&
    p.pi_b.every((row) => Array.isArray(row) && row.length === 2 && row.every(decimal));
  if (!ok)
    throw invalidArgument(
      'proof_json must be a snarkjs Groth16 proof: pi_a and pi_c of 3, pi_b of 3x2 decimal strings',
    );
  return { ...(p as Groth16Proof), protocol: 'groth16', curve: 'bn128' };
}

function checkPublicSignals(circuit: CircuitDescription, signals: string[]): void {
  if (signals.length !== circuit.publicSignals) {
    throw invalidArgument(
      `circuit ${circuit.id} has ${circuit.publicSignals} public signals, got ${signals.length}`,
    );
  }
  signals.forEach((value, i) => {
    if (!/^[0-9]{1,80}$/.test(value) || BigInt(value) >= BN254_R)
      throw invalidArgument(`public_signals[${i}] is not a decimal field element`);
  });
}

export async function startProverDaemon(options: ProverDaemonOptions): Promise<ProverDaemon> {
  const listen = parseListen(options.listen);
  const engineName = options.engine ?? 'native';
  const verifyAfterProve = options.verifyAfterProve ?? true;
  const inputLimits = {
    ...DEFAULT_INPUT_LIMITS,
    maxBytes: options.maxInputsJsonBytes ?? DEFAULT_INPUT_LIMITS.maxBytes,
  };
  const maxMessageBytes = options.maxMessageBytes ?? 64 * MiB;
  const log = options.log ?? (() => undefined);

  const queue = new ProofQueue(options.queueCapacity ?? 64);
  let pool: WitnessPool | undefined;
  let engine: ProvingEngine | undefined;
  const circuits = new Map<string, CircuitDescription>();
  const health = new HealthStatus([PROVER_SERVICE_NAME]);
  const metrics = new ProverMetrics(
    {
      inFlight: () => queue.inFlight,
      waitingForWitness: () => pool?.queued ?? 0,
      waitingForLane: () => queue.waitingForLane,
    },
    { processMetrics: options.metricsPort !== undefined },
  );
  let accepting = false;
  let stopping: Promise<void> | undefined;
  const active = new Set<AbortController>();

  const requireServing = () => {
    if (stopping) throw unavailable('prover daemon is shutting down');
    if (!accepting || !engine || !pool) throw unavailable('prover daemon is still loading its proving keys');
    return { engine, pool };
  };

  const requireCircuit = (id: string): CircuitDescription => {
    if (!id) throw invalidArgument('circuit is required');
    if (!CIRCUIT_ID.test(id)) throw invalidArgument(`"${id.slice(0, 64)}" is not a valid circuit id`);
    const circuit = circuits.get(id);
    if (!circuit)
      throw notFound(
        `circuit "${id}" is not served here (served: ${[...circuits.keys()].join(', ') || 'none'})`,
      );
    return circuit;
  };

  async function prove(
    call: grpc.ServerUnaryCall<ProveRequestMessage, ProveResponseMessage>,
  ): Promise<ProveResponseMessage> {
    const received = performance.now();
    const { engine, pool } = requireServing();
    const request = call.request;
    const circuit = requireCircuit(request.circuit);

    let inputs: CircuitInputs | undefined;
    let preparedWtns: Uint8Array | undefined;
    if (request.witness === 'inputs_json') {
      inputs = parseCircuitInputs(request.inputs_json ?? '', inputLimits);
    } else if (request.witness === 'wtns') {
      const wtns = request.wtns ?? Buffer.alloc(0);
      let header: WtnsHeader;
      try {
        header = parseWtnsHeader(wtns);
      } catch (error) {
        throw invalidArgument(`wtns is not a valid witness file: ${(error as Error).message}`);
      }
      if (header.prime !== BN254_R) throw invalidArgument('wtns is not over the BN254 scalar field');
      if (header.witnessCount !== circuit.wires) {
        throw invalidArgument(
          `wtns holds ${header.witnessCount} values; circuit ${circuit.id} has ${circuit.wires} wires`,
        );
      }
      preparedWtns = new Uint8Array(wtns);
    } else {
      throw invalidArgument('one of inputs_json or wtns is required');
    }

    const release = queue.admit();
    const { signal, done } = callSignal(call);
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    active.add(controller);
    try {
      let witnessMs = 0;
      let wtns = preparedWtns;
      if (!wtns) {
        const witness = await pool.compute(circuit.id, inputs!, controller.signal);
        wtns = witness.wtns;
        witnessMs = witness.ms;
        metrics.witnessSeconds.observe({ circuit: circuit.id }, witness.ms / 1000);
      }
      let proveMs = 0;
      let verifyMs = 0;
      const result = await queue.runExclusive(async () => {
        const started = performance.now();
        const proven = await engine.prove(circuit.id, wtns!);
        proveMs = performance.now() - started;
        if (verifyAfterProve && !proven.verified) {
          const verifyStarted = performance.now();
          const valid = await engine.verify(circuit.verificationKey, proven.proof, proven.publicSignals);
          verifyMs = performance.now() - verifyStarted;
          if (!valid) throw new UnsatisfiedWitnessError();
        }
        return proven;
      }, controller.signal);
      metrics.proveSeconds.observe({ circuit: circuit.id, engine: engine.name }, proveMs / 1000);
      if (verifyMs > 0)
        metrics.verifySeconds.observe({ circuit: circuit.id, engine: engine.name }, verifyMs / 1000);
      const totalMs = performance.now() - received;
      return {
        proof: Buffer.from(proofToBytes(result.proof)),
        proof_json: JSON.stringify(result.proof),
        public_signals: result.publicSignals,
        witness_ms: witnessMs,
        prove_ms: proveMs,
        verify_ms: verifyMs,
        queue_ms: Math.max(0, totalMs - witnessMs - proveMs - verifyMs),
        engine: engine.name,
      };
    } catch (error) {
      if (error instanceof UnsatisfiedWitnessError) {
        // From a prepared witness this is the caller's mistake; from inputs it means a prover bug.
        throw preparedWtns
          ? invalidArgument(error.message)
          : internal(`${error.message} (computed from inputs: prover fault)`);
      }
      if (controller.signal.aborted && error === controller.signal.reason) {
        const code = (error as ProverError).code;
        metrics.dropped.inc({
          reason:
            code === grpc.status.DEADLINE_EXCEEDED
              ? 'deadline'
              : code === grpc.status.CANCELLED
                ? 'cancelled'
                : 'shutdown',
        });
      }
      throw error;
    } finally {
      active.delete(controller);
      signal.removeEventListener('abort', forward);
      done();
      release();
    }
  }

  async function verify(
    call: grpc.ServerUnaryCall<VerifyRequestMessage, VerifyResponseMessage>,
  ): Promise<VerifyResponseMessage> {
    const { engine } = requireServing();
    const request = call.request;
    const circuit = requireCircuit(request.circuit);
    let proof: Groth16Proof;
    if (request.encoding === 'proof') {
      const bytes = request.proof ?? Buffer.alloc(0);
      if (bytes.length !== PROOF_BYTES)
        throw invalidArgument(`proof must be ${PROOF_BYTES} bytes, got ${bytes.length}`);
      try {
        proof = proofFromBytes(new Uint8Array(bytes)) as Groth16Proof;
      } catch (error) {
        throw invalidArgument(`proof bytes are malformed: ${(error as Error).message}`);
      }
    } else if (request.encoding === 'proof_json') {
      proof = checkProofJson(request.proof_json ?? '');
    } else {
      throw invalidArgument('one of proof or proof_json is required');
    }
    checkPublicSignals(circuit, request.public_signals);
    const started = performance.now();
    const valid = await engine.verify(circuit.verificationKey, proof, request.public_signals);
    return { valid, verify_ms: performance.now() - started };
  }

  function listCircuits(): ListCircuitsResponseMessage {
    requireServing();
    const list: CircuitInfoMessage[] = [...circuits.values()].map((c) => ({
      id: c.id,
      constraints: c.constraints,
      public_inputs: c.publicSignals,
      wires: c.wires,
      zkey_sha256: c.zkeySha256,
      development_key: c.developmentKey,
    }));
    return { circuits: list };
  }

  /** Adapts an async handler to grpc-js's callback style, counting failures by circuit and code. */
  function unary<Req, Res>(
    name: string,
    handler: (call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
  ) {
    return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => handler(call))
        .then(
          (response) => callback(null, response),
          (error: unknown) => {
            const serviceError = toServiceError(error);
            if (name === 'Prove') {
              const circuit = (call.request as { circuit?: string }).circuit ?? '';
              metrics.failures.inc({
                circuit: circuits.has(circuit) ? circuit : 'unknown',
                code: grpc.status[serviceError.code ?? 13] ?? 'UNKNOWN',
              });
            }
            if (serviceError.code === grpc.status.INTERNAL) log(`${name} failed: ${serviceError.details}`);
            callback(serviceError);
          },
        );
    };
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_send_message_length': 16 * MiB,
  });
  server.addService(ProverService.service, {
    Prove: unary<ProveRequestMessage, ProveResponseMessage>('Prove', async (call) => {
      const response = await prove(call);
      metrics.proofs.inc({ circuit: call.request.circuit, engine: response.engine });
      return response;
    }),
    Verify: unary('Verify', verify),
    ListCircuits: unary('ListCircuits', listCircuits),
  });
  server.addService(HealthService.service, health.handlers());

  const credentials = options.tls
    ? grpc.ServerCredentials.createSsl(
        null,
        [{ cert_chain: options.tls.cert, private_key: options.tls.key }],
        false,
      )
    : grpc.ServerCredentials.createInsecure();
  const port = await bindAsync(server, formatAddress(listen.host, listen.port), credentials);
  const metricsServer =
    options.metricsPort !== undefined
      ? await metrics.listen(options.metricsPort, options.metricsHost ?? '127.0.0.1')
      : undefined;

  const ready = (async () => {
    const found = await discoverCircuits(options.circuitsDir);
    for (const skipped of found.skipped) log(`skipping ${skipped.id}: missing ${skipped.missing.join(', ')}`);
    if (found.circuits.length === 0)
      throw new Error(`no complete circuit folder under ${options.circuitsDir}`);
    for (const files of found.circuits) {
      try {
        circuits.set(files.id, await describeCircuit(files));
      } catch (error) {
        throw new Error(`cannot load circuit ${files.id}: ${(error as Error).message}`);
      }
    }
    const chosen = await createEngine(engineName);
    engine = chosen;
    for (const circuit of circuits.values()) {
      if (stopping) return;
      await chosen.load(circuit);
      log(
        `loaded ${circuit.id}: ${circuit.constraints} constraints, ${circuit.publicSignals} public signals${circuit.developmentKey ? ', DEVELOPMENT KEY' : ''}`,
      );
    }
    const wasmPaths = Object.fromEntries([...circuits.values()].map((c) => [c.id, c.files.wasm]));
    pool = await WitnessPool.start(wasmPaths, options.witnessWorkers ?? availableParallelism());
    if (stopping) return;
    accepting = true;
    health.setAll('SERVING');
  })();
  // A load failure is reported through `ready`; keep it from also surfacing as an unhandled rejection.
  ready.catch(() => undefined);

  /** Answers every in-flight call UNAVAILABLE (clients retry those on another daemon). */
  const abandonInFlight = () => {
    for (const controller of active)
      controller.abort(unavailable('prover daemon stopped; retry on another daemon'));
  };

  const stop = (stopOptions: { force?: boolean } = {}): Promise<void> => {
    if (stopping) {
      // A forced stop during a graceful drain ends the drain.
      if (stopOptions.force) abandonInFlight();
      return stopping;
    }
    stopping = (async () => {
      health.close();
      if (stopOptions.force) abandonInFlight();
      // Graceful: no new calls; admitted ones finish. After a force, the calls end as soon as their
      // UNAVAILABLE answers are sent; connections are cut only if that does not happen.
      const cut = stopOptions.force ? setTimeout(() => server.forceShutdown(), 2_000) : undefined;
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      clearTimeout(cut);
      await ready.catch(() => undefined);
      await pool?.close();
      await engine?.close();
      await metricsServer?.close();
    })();
    return stopping;
  };

  return {
    address: formatAddress(listen.host, port),
    port,
    metricsPort: metricsServer?.port,
    engine: engineName,
    metrics,
    ready,
    circuits: () => [...circuits.values()],
    stats: () => ({
      inFlight: queue.inFlight,
      witnessWorkers: pool?.size ?? 0,
      witnessWorkersReplaced: pool?.replacements ?? 0,
      waitingForWitness: pool?.queued ?? 0,
      computingWitness: pool?.running ?? 0,
      waitingForLane: queue.waitingForLane,
      proving: queue.busy,
    }),
    stop,
  };
}
