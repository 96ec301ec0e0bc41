// Runs a circom-generated wasm witness calculator (circom_runtime) and returns snarkjs-format .wtns bytes.
import { readFile } from 'node:fs/promises';
import { WitnessCalculatorBuilder } from 'circom_runtime';

export type CircuitInputValue = bigint | number | string | CircuitInputValue[];
export type CircuitInputs = Record<string, CircuitInputValue>;

export interface WitnessCalculator {
  /** The .wtns file bytes (header, field, witness) that provers read. */
  calculateWtns(inputs: CircuitInputs): Promise<Uint8Array>;
  /** The witness as field elements, wire 0 first (= 1). */
  calculateWitness(inputs: CircuitInputs): Promise<bigint[]>;
}

/** A failing `===` or `assert`, with the circom template and line when the wasm reports them. */
export class ConstraintError extends Error {
  readonly template: string | undefined;
  readonly line: number | undefined;
  constructor(message: string) {
    const where = /Error in template (\S+) line: (\d+)/.exec(message);
    super(where ? `constraint failed in template ${where[1]} line ${where[2]}` : `witness generation failed: ${message.trim()}`);
    this.name = 'ConstraintError';
    this.template = where?.[1];
    this.line = where ? Number(where[2]) : undefined;
  }
}

function assertInputs(inputs: unknown): asserts inputs is CircuitInputs {
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) {
    throw new TypeError('circuit inputs must be an object of named signals');
  }
}

export async function loadWitnessCalculator(wasm: string | Uint8Array): Promise<WitnessCalculator> {
  const code = typeof wasm === 'string' ? await readFile(wasm) : wasm;
  // circom_runtime logs every failed assert to stderr itself; we surface it as a ConstraintError instead.
  const calculator = await WitnessCalculatorBuilder(code, { sanityCheck: true });
  const run = async <T>(inputs: CircuitInputs, fn: () => Promise<T>): Promise<T> => {
    assertInputs(inputs);
    try {
      return await fn();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/Assert Failed|Error in template/.test(message)) throw new ConstraintError(message);
      throw new TypeError(`invalid circuit inputs: ${message}`);
    }
  };
  return {
    calculateWtns: (inputs) => run(inputs, async () => new Uint8Array(await calculator.calculateWTNSBin(inputs, true))),
    calculateWitness: (inputs) => run(inputs, () => calculator.calculateWitness(inputs, true)),
  };
}
