// The prove pipeline of one admitted request: witness (computed by the worker pool unless prepared)
// -> the proving lane (one proof at a time) -> prove -> verify-after-prove -> the response with its
// phase timings, observed into the metrics. Every wait honours the request's abort signal.
import * as grpc from '@grpc/grpc-js';
import { proofToBytes } from '../../crypto/index.ts';
import type { CircuitDescription } from './circuits.ts';
import { witnessUnsatisfied, WitnessError } from '../../circuit/witness-error.ts';
import type { ProvingEngine } from './engines/index.ts';
import { internal, invalidArgument, type ProverError } from './errors.ts';
import type { ProverMetrics } from './metrics.ts';
import type { ProofQueue } from './proof-queue.ts';
import type { ProveResponseMessage } from './proto.ts';
import type { WitnessSource } from './requests.ts';
import type { WitnessPool } from './witness/witness-pool.ts';

export interface PipelineDeps {
  queue: ProofQueue;
  metrics: ProverMetrics;
  /** Check each proof against the verification key unless the engine already did. */
  verifyAfterProve: boolean;
}

/**
 * Runs one request through witness, lane, prove and verify. `received` is when the call arrived (for
 * queue_ms). An unsatisfied witness is INVALID_ARGUMENT when the caller prepared it, INTERNAL when the
 * daemon computed it from inputs; work dropped by the signal is counted by reason.
 */
export async function runProvePipeline(
  deps: PipelineDeps,
  engine: ProvingEngine,
  pool: WitnessPool,
  circuit: CircuitDescription,
  source: WitnessSource,
  signal: AbortSignal,
  received: number,
): Promise<ProveResponseMessage> {
  const { queue, metrics } = deps;
  try {
    let witnessMs = 0;
    let wtns: Uint8Array;
    if (source.kind === 'inputs') {
      const witness = await pool.compute(circuit.id, source.inputs, signal);
      wtns = witness.wtns;
      witnessMs = witness.ms;
      metrics.witnessSeconds.observe({ circuit: circuit.id }, witness.ms / 1000);
    } else {
      wtns = source.wtns;
    }
    let proveMs = 0;
    let verifyMs = 0;
    const result = await queue.runExclusive(async () => {
      const started = performance.now();
      const proven = await engine.prove(circuit.id, wtns);
      proveMs = performance.now() - started;
      if (deps.verifyAfterProve && !proven.verified) {
        const verifyStarted = performance.now();
        const valid = await engine.verify(circuit.verificationKey, proven.proof, proven.publicSignals);
        verifyMs = performance.now() - verifyStarted;
        if (!valid) throw witnessUnsatisfied();
      }
      return proven;
    }, signal);
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
    if (error instanceof WitnessError && error.code === 'witness_unsatisfied') {
      // From a prepared witness this is the caller's mistake; from inputs it means a prover bug.
      throw source.kind === 'wtns'
        ? invalidArgument(error.message)
        : internal(`${error.message} (computed from inputs: prover fault)`);
    }
    if (signal.aborted && error === signal.reason) {
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
  }
}
