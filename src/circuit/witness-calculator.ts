// Our driver for circom 2's generated wasm witness calculator: sets the inputs, runs the circuit's own witness
// code (with its asserts), and returns the witness or snarkjs-format .wtns bytes. Each call starts clean, so an
// error names the failing template and line of that call only.
import { readFile } from 'node:fs/promises';
import { constraintFailed, WitnessError } from './witness-error.ts';

export type CircuitInputValue = bigint | number | string | CircuitInputValue[];
export type CircuitInputs = Record<string, CircuitInputValue>;

export interface WitnessCalculator {
  readonly prime: bigint;
  readonly witnessSize: number;
  /** The .wtns file bytes (header, field, witness) that provers read. */
  calculateWtns(inputs: CircuitInputs): Promise<Uint8Array>;
  /** The witness as field elements, wire 0 first (= 1). */
  calculateWitness(inputs: CircuitInputs): Promise<bigint[]>;
}

interface CircomExports {
  getVersion(): number;
  getFieldNumLen32(): number;
  getRawPrime(): void;
  getWitnessSize(): number;
  getInputSize(): number;
  getInputSignalSize(hi: number, lo: number): number;
  readSharedRWMemory(i: number): number;
  writeSharedRWMemory(i: number, v: number): void;
  setInputSignal(hi: number, lo: number, i: number): void;
  getWitness(i: number): void;
  init(sanityCheck: number): void;
  getMessageChar(): number;
}

const EXCEPTIONS: Record<number, string> = {
  1: 'signal not found',
  2: 'too many signals set',
  3: 'signal already set',
  4: 'assert failed',
  5: 'not enough memory',
  6: 'input signal array access exceeds its size',
};

/** circom's signal-name hash: 64-bit FNV-1a, split into two 32-bit halves. */
function fnv1a64(name: string): [number, number] {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < name.length; i++) {
    h ^= BigInt(name.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return [Number(h >> 32n), Number(h & 0xffffffffn)];
}

function flatten(name: string, value: CircuitInputValue, out: bigint[], prime: bigint): void {
  if (Array.isArray(value)) {
    for (const v of value) flatten(name, v, out, prime);
    return;
  }
  let v: bigint;
  if (typeof value === 'bigint') v = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) v = BigInt(value);
  else if (typeof value === 'string' && /^(0|[1-9][0-9]*|0x[0-9a-fA-F]+)$/.test(value)) v = BigInt(value);
  else
    throw new WitnessError(
      'input_rejected',
      `input ${name} has a value that is not a non-negative integer: ${String(value).slice(0, 40)}`,
    );
  if (v < 0n || v >= prime)
    throw new WitnessError('input_rejected', `input ${name} has a value outside the field`);
  out.push(v);
}

export async function loadWitnessCalculator(wasm: string | Uint8Array): Promise<WitnessCalculator> {
  const code = typeof wasm === 'string' ? await readFile(wasm) : wasm;
  let exports!: CircomExports;
  let errors = '';
  const message = () => {
    let s = '';
    for (let c = exports.getMessageChar(); c !== 0; c = exports.getMessageChar()) s += String.fromCharCode(c);
    return s;
  };
  const { instance } = (await WebAssembly.instantiate(new Uint8Array(code), {
    runtime: {
      exceptionHandler: (c: number) => {
        throw constraintFailed(`${EXCEPTIONS[c] ?? `error ${c}`}: ${errors}`);
      },
      printErrorMessage: () => {
        errors += `${message()}\n`;
      },
      // circom `log()` output is not part of the witness; drain it.
      writeBufferMessage: () => void message(),
      showSharedRWMemory: () => undefined,
    },
  })) as WebAssembly.WebAssemblyInstantiatedSource;
  exports = instance.exports as unknown as CircomExports;
  if (typeof exports.getVersion !== 'function' || exports.getVersion() !== 2) {
    throw new Error('not a circom 2 witness calculator');
  }
  const n32 = exports.getFieldNumLen32();
  const readShared = (): bigint => {
    let v = 0n;
    for (let j = n32 - 1; j >= 0; j--) v = (v << 32n) | BigInt(exports.readSharedRWMemory(j) >>> 0);
    return v;
  };
  exports.getRawPrime();
  const prime = readShared();
  const witnessSize = exports.getWitnessSize();

  // The wasm instance is single-threaded state: calls are serialised.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => T): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const compute = (inputs: CircuitInputs): void => {
    if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) {
      throw new WitnessError('input_rejected', 'circuit inputs must be an object of named signals');
    }
    errors = '';
    exports.init(1);
    let set = 0;
    for (const [name, value] of Object.entries(inputs)) {
      const [hi, lo] = fnv1a64(name);
      const size = exports.getInputSignalSize(hi, lo);
      if (size <= 0) throw new WitnessError('input_rejected', `${name} is not an input of this circuit`);
      const values: bigint[] = [];
      flatten(name, value, values, prime);
      if (values.length !== size)
        throw new WitnessError('input_rejected', `input ${name} needs ${size} values, got ${values.length}`);
      values.forEach((v, i) => {
        for (let j = 0; j < n32; j++)
          exports.writeSharedRWMemory(j, Number((v >> BigInt(32 * j)) & 0xffffffffn));
        exports.setInputSignal(hi, lo, i);
      });
      set += size;
    }
    if (set < exports.getInputSize()) {
      throw new WitnessError(
        'input_rejected',
        `missing inputs: ${set} of ${exports.getInputSize()} values were given`,
      );
    }
  };

  const wrap = (err: unknown): never => {
    if (err instanceof WitnessError) throw err;
    if (err instanceof WebAssembly.RuntimeError) throw constraintFailed(`${err.message}: ${errors}`);
    throw err;
  };

  return {
    prime,
    witnessSize,
    calculateWitness: (inputs) =>
      serial(() => {
        try {
          compute(inputs);
        } catch (err) {
          wrap(err);
        }
        const w: bigint[] = [];
        for (let i = 0; i < witnessSize; i++) {
          exports.getWitness(i);
          w.push(readShared());
        }
        return w;
      }),
    calculateWtns: (inputs) =>
      serial(() => {
        try {
          compute(inputs);
        } catch (err) {
          wrap(err);
        }
        // wtns v2: magic, version, 2 sections; header = n8, prime, witness count; then the witness.
        const n8 = n32 * 4;
        const headerLen = 4 + n8 + 4;
        const out = new Uint8Array(12 + 12 + headerLen + 12 + witnessSize * n8);
        const view = new DataView(out.buffer);
        out.set([0x77, 0x74, 0x6e, 0x73]);
        view.setUint32(4, 2, true);
        view.setUint32(8, 2, true);
        view.setUint32(12, 1, true);
        view.setBigUint64(16, BigInt(headerLen), true);
        view.setUint32(24, n8, true);
        let pos = 28;
        exports.getRawPrime();
        for (let j = 0; j < n32; j++, pos += 4)
          view.setUint32(pos, exports.readSharedRWMemory(j) >>> 0, true);
        view.setUint32(pos, witnessSize, true);
        pos += 4;
        view.setUint32(pos, 2, true);
        view.setBigUint64(pos + 4, BigInt(witnessSize * n8), true);
        pos += 12;
        for (let i = 0; i < witnessSize; i++) {
          exports.getWitness(i);
          for (let j = 0; j < n32; j++, pos += 4)
            view.setUint32(pos, exports.readSharedRWMemory(j) >>> 0, true);
        }
        return out;
      }),
  };
}
