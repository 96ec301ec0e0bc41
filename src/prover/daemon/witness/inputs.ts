// Parses and checks the `inputs_json` of a Prove request before any work is queued, so malformed JSON,
// wrong types and out-of-range numbers are answered with INVALID_ARGUMENT naming the offending signal.
// Signal names and array sizes are checked by the circuit's witness calculator in the worker.
import { BN254_R } from '../binfile.ts';
import { invalidArgument } from '../errors.ts';

export type SignalValue = bigint | SignalValue[];
export type CircuitInputs = Record<string, SignalValue>;

export interface InputLimits {
  /** Largest accepted inputs_json, in bytes. */
  maxBytes: number;
  /** Largest number of field elements over all signals. */
  maxValues: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = { maxBytes: 1 << 20, maxValues: 1 << 16 };

const MAX_DEPTH = 8;
const DECIMAL = /^[0-9]{1,80}$/;
const HEX = /^0x[0-9a-fA-F]{1,64}$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function toFieldValue(value: unknown, where: string): bigint {
  let parsed: bigint;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw invalidArgument(
        `input ${where}: ${value} is not a non-negative exact integer (send large numbers as decimal strings)`,
      );
    }
    parsed = BigInt(value);
  } else if (typeof value === 'string') {
    if (!DECIMAL.test(value) && !HEX.test(value))
      throw invalidArgument(
        `input ${where}: "${value.slice(0, 40)}" is not a non-negative decimal or 0x-hex integer`,
      );
    parsed = BigInt(value);
  } else {
    throw invalidArgument(
      `input ${where}: expected an integer, a decimal or 0x-hex string or an array, got ${describe(value)}`,
    );
  }
  if (parsed >= BN254_R) throw invalidArgument(`input ${where}: value is outside the BN254 scalar field`);
  return parsed;
}

export function parseCircuitInputs(json: string, limits: InputLimits = DEFAULT_INPUT_LIMITS): CircuitInputs {
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxBytes)
    throw invalidArgument(`inputs_json is ${bytes} bytes; the limit is ${limits.maxBytes}`);
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw invalidArgument(`inputs_json is not valid JSON: ${(error as Error).message}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalidArgument(`inputs_json must be a JSON object of signal name -> value, got ${describe(raw)}`);
  }
  let count = 0;
  const convert = (value: unknown, where: string, depth: number): SignalValue => {
    if (Array.isArray(value)) {
      if (depth >= MAX_DEPTH) throw invalidArgument(`input ${where}: arrays nested deeper than ${MAX_DEPTH}`);
      if (value.length === 0) throw invalidArgument(`input ${where}: empty array`);
      return value.map((item, i) => convert(item, `${where}[${i}]`, depth + 1));
    }
    count += 1;
    if (count > limits.maxValues)
      throw invalidArgument(`inputs_json holds more than ${limits.maxValues} values`);
    return toFieldValue(value, where);
  };
  const inputs: CircuitInputs = {};
  const names = Object.keys(raw);
  if (names.length === 0) throw invalidArgument('inputs_json has no signals');
  for (const name of names) {
    inputs[name] = convert((raw as Record<string, unknown>)[name], name, 0);
  }
  return inputs;
}
