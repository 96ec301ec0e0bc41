// The native engine: the project's C++ Groth16 prover (src/prover/index.ts). Each zkey is loaded into the
// addon once; a proof uses the addon's own thread pool and is verified before it is returned.
import type { CircuitDescription } from '../circuits.ts';
import type { EngineProof, Groth16Proof, ProvingEngine } from './engine.ts';

type NativeProverModule = typeof import('../../index.ts');
type NativeProver = Awaited<ReturnType<NativeProverModule['loadProver']>>;

export class NativeEngine implements ProvingEngine {
  readonly name = 'native' as const;
  readonly #provers = new Map<string, NativeProver>();

  readonly #native: NativeProverModule;

  private constructor(native: NativeProverModule) {
    this.#native = native;
  }

  /** Loads the addon (only when this engine is chosen, so the snarkjs engine runs without a native build). */
  static async create(): Promise<NativeEngine> {
    return new NativeEngine(await import('../../index.ts'));
  }

  async load(circuit: CircuitDescription): Promise<void> {
    this.#provers.set(circuit.id, await this.#native.loadProver(circuit.files.zkey));
  }

  async prove(circuitId: string, wtns: Uint8Array): Promise<EngineProof> {
    const prover = this.#provers.get(circuitId);
    if (!prover) throw new Error(`circuit ${circuitId} is not loaded`);
    // a witness that fails the native self-check rejects with WitnessError witness_unsatisfied
    const { proof, publicSignals } = await prover.prove(wtns);
    return { proof, publicSignals, verified: true };
  }

  verify(
    verificationKey: Record<string, unknown>,
    proof: Groth16Proof,
    publicSignals: string[],
  ): Promise<boolean> {
    return this.#native.verify(
      verificationKey as unknown as Parameters<NativeProverModule['verify']>[0],
      proof,
      publicSignals,
    );
  }

  async close(): Promise<void> {
    this.#provers.clear();
    await this.#native.releaseVerifier();
  }
}
