// A proving engine: turns a witness into a Groth16 proof with a circuit's proving key, and checks proofs.
// The daemon runs one proof at a time; an engine is free to use every core for it.
import type { CircuitDescription } from '../circuits.ts';

export type EngineName = 'native' | 'snarkjs';
export const ENGINE_NAMES: readonly EngineName[] = ['native', 'snarkjs'];

/** snarkjs Groth16 proof JSON. */
export interface Groth16Proof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol: string;
  curve: string;
}

export interface EngineProof {
  proof: Groth16Proof;
  publicSignals: string[];
  /** True when the engine already checked the proof against the verification key (inside prove time). */
  verified?: boolean;
}

export interface ProvingEngine {
  readonly name: EngineName;
  /** Loads the circuit's proving key once, before the daemon reports SERVING. */
  load(circuit: CircuitDescription): Promise<void>;
  prove(circuitId: string, wtns: Uint8Array): Promise<EngineProof>;
  verify(
    verificationKey: Record<string, unknown>,
    proof: Groth16Proof,
    publicSignals: string[],
  ): Promise<boolean>;
  close(): Promise<void>;
}
