// The snarkjs engine: the reference implementation, kept for differential tests and benchmarks.
// snarkjs parses the zkey on every proof; the bytes are read from disk once and kept in memory.
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import type { CircuitDescription } from '../circuits.ts';
import type { EngineProof, Groth16Proof, ProvingEngine } from './engine.ts';

// Engines open in this process: the shared curve is terminated only when the last one closes.
let openEngines = 0;

export class SnarkjsEngine implements ProvingEngine {
  readonly name = 'snarkjs' as const;
  readonly #zkeys = new Map<string, Uint8Array>();
  #closed = false;

  constructor() {
    openEngines += 1;
  }

  async load(circuit: CircuitDescription): Promise<void> {
    this.#zkeys.set(circuit.id, new Uint8Array(await readFile(circuit.files.zkey)));
  }

  async prove(circuitId: string, wtns: Uint8Array): Promise<EngineProof> {
    const zkey = this.#zkeys.get(circuitId);
    if (!zkey) throw new Error(`circuit ${circuitId} is not loaded`);
    const { proof, publicSignals } = await snarkjs.groth16.prove(zkey, wtns);
    return { proof: proof as Groth16Proof, publicSignals: publicSignals as string[] };
  }

  async verify(
    verificationKey: Record<string, unknown>,
    proof: Groth16Proof,
    publicSignals: string[],
  ): Promise<boolean> {
    try {
      return (await snarkjs.groth16.verify(verificationKey, publicSignals, proof)) === true;
    } catch {
      // Points or signals snarkjs cannot even parse make an invalid proof, not a failed call.
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#zkeys.clear();
    openEngines -= 1;
    if (openEngines > 0) return;
    // snarkjs keeps a curve with worker threads alive in a global; without terminating it the process never exits.
    const curve = (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128;
    if (curve) {
      await curve.terminate();
      delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
    }
  }
}
