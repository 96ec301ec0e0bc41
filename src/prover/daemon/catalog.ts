// The circuit catalog: which circuits this daemon serves (every complete folder under its circuits
// directory), their descriptions, and loading their proving keys into the engine and their witness
// generators into the worker pool.
import type { CircuitDescription } from './circuits.ts';
import { CIRCUIT_ID, describeCircuit, discoverCircuits } from './circuits.ts';
import type { ProvingEngine } from './engines/index.ts';
import { invalidArgument, notFound } from './errors.ts';
import { WitnessPool } from './witness/witness-pool.ts';

export class CircuitCatalog {
  readonly #circuits = new Map<string, CircuitDescription>();

  has(id: string): boolean {
    return this.#circuits.has(id);
  }

  list(): CircuitDescription[] {
    return [...this.#circuits.values()];
  }

  /** The circuit a request names; INVALID_ARGUMENT for a bad id, NOT_FOUND for one not served here. */
  require(id: string): CircuitDescription {
    if (!id) throw invalidArgument('circuit is required');
    if (!CIRCUIT_ID.test(id)) throw invalidArgument(`"${id.slice(0, 64)}" is not a valid circuit id`);
    const circuit = this.#circuits.get(id);
    if (!circuit)
      throw notFound(
        `circuit "${id}" is not served here (served: ${[...this.#circuits.keys()].join(', ') || 'none'})`,
      );
    return circuit;
  }

  /** Finds and describes every complete circuit folder under dir (at least one is required). */
  async discover(dir: string, log: (line: string) => void): Promise<void> {
    const found = await discoverCircuits(dir);
    for (const skipped of found.skipped) log(`skipping ${skipped.id}: missing ${skipped.missing.join(', ')}`);
    if (found.circuits.length === 0) throw new Error(`no complete circuit folder under ${dir}`);
    for (const files of found.circuits) {
      try {
        this.#circuits.set(files.id, await describeCircuit(files));
      } catch (error) {
        throw new Error(`cannot load circuit ${files.id}: ${(error as Error).message}`);
      }
    }
  }

  /**
   * Loads every proving key into the engine, then starts the witness workers. Returns undefined when
   * `stopping()` turns true on the way (the daemon is shutting down while loading).
   */
  async loadKeys(
    engine: ProvingEngine,
    witnessWorkers: number,
    stopping: () => boolean,
    log: (line: string) => void,
  ): Promise<WitnessPool | undefined> {
    for (const circuit of this.#circuits.values()) {
      if (stopping()) return undefined;
      await engine.load(circuit);
      log(
        `loaded ${circuit.id}: ${circuit.constraints} constraints, ${circuit.publicSignals} public signals${circuit.developmentKey ? ', DEVELOPMENT KEY' : ''}`,
      );
    }
    const wasmPaths = Object.fromEntries(this.list().map((c) => [c.id, c.files.wasm]));
    return WitnessPool.start(wasmPaths, witnessWorkers);
  }
}
