// A small declarative form of a Soroban contract's interface (functions, struct types, error enums), declared
// once per contract (pool-interface.ts): the build checks each compiled contract's `contractspecv0` section
// against it, and callers name contract errors with it.

/** A spec type: a primitive name, or a composite. `udt` names a struct declared in the same interface. */
export type SpecType =
  | 'bool'
  | 'void'
  | 'u32'
  | 'i32'
  | 'u64'
  | 'i64'
  | 'u128'
  | 'i128'
  | 'u256'
  | 'i256'
  | 'bytes'
  | 'string'
  | 'symbol'
  | 'address'
  | { bytesN: number }
  | { vec: SpecType }
  | { option: SpecType }
  | { udt: string };

export interface FunctionSpec {
  name: string;
  doc?: string;
  inputs: readonly (readonly [string, SpecType])[];
  /** omitted for functions that return nothing */
  output?: SpecType;
}

export interface StructSpec {
  name: string;
  doc?: string;
  /** field name → type; sorted by name when encoded, as soroban orders struct fields */
  fields: readonly (readonly [string, SpecType])[];
}

export interface ErrorEnumSpec {
  name: string;
  doc?: string;
  cases: Readonly<Record<string, number>>;
}

/** One contract's whole interface. */
export interface ContractInterface {
  /** the contract's name (for tools and the wasm metadata) */
  name: string;
  functions: readonly FunctionSpec[];
  structs: readonly StructSpec[];
  errors: readonly ErrorEnumSpec[];
}

/** Name of error `code` in the interface's error enums, if it declares one. */
export function errorName(ci: ContractInterface, code: number): string | undefined {
  for (const e of ci.errors) {
    for (const [name, value] of Object.entries(e.cases)) if (value === code) return name;
  }
  return undefined;
}
