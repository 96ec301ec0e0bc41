// A small declarative form of a Soroban contract's interface (functions, struct types, error enums) and its
// translation into the standard `ScSpecEntry` XDR that Soroban contracts carry in their `contractspecv0`
// wasm custom section (the stream `contract.Spec` and the Stellar CLI read). Declared once per contract,
// used by the sandbox to publish and enforce the interface, and by clients to name functions and errors.
import { xdr } from '@stellar/stellar-sdk';

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

export function specTypeDef(t: SpecType): xdr.ScSpecTypeDef {
  const T = xdr.ScSpecTypeDef;
  if (typeof t === 'string') {
    switch (t) {
      case 'bool':
        return T.scSpecTypeBool();
      case 'void':
        return T.scSpecTypeVoid();
      case 'u32':
        return T.scSpecTypeU32();
      case 'i32':
        return T.scSpecTypeI32();
      case 'u64':
        return T.scSpecTypeU64();
      case 'i64':
        return T.scSpecTypeI64();
      case 'u128':
        return T.scSpecTypeU128();
      case 'i128':
        return T.scSpecTypeI128();
      case 'u256':
        return T.scSpecTypeU256();
      case 'i256':
        return T.scSpecTypeI256();
      case 'bytes':
        return T.scSpecTypeBytes();
      case 'string':
        return T.scSpecTypeString();
      case 'symbol':
        return T.scSpecTypeSymbol();
      case 'address':
        return T.scSpecTypeAddress();
    }
  }
  if ('bytesN' in t) return T.scSpecTypeBytesN(new xdr.ScSpecTypeBytesN({ n: t.bytesN }));
  if ('vec' in t) return T.scSpecTypeVec(new xdr.ScSpecTypeVec({ elementType: specTypeDef(t.vec) }));
  if ('option' in t)
    return T.scSpecTypeOption(new xdr.ScSpecTypeOption({ valueType: specTypeDef(t.option) }));
  return T.scSpecTypeUdt(new xdr.ScSpecTypeUdt({ name: t.udt }));
}

const byName = <T extends readonly [string, unknown]>(a: T, b: T) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** The interface as the ScSpecEntry list a Soroban contract publishes (structs, errors, then functions). */
export function specEntries(ci: ContractInterface): xdr.ScSpecEntry[] {
  const E = xdr.ScSpecEntry;
  const structs = ci.structs.map((s) =>
    E.scSpecEntryUdtStructV0(
      new xdr.ScSpecUdtStructV0({
        doc: s.doc ?? '',
        lib: '',
        name: s.name,
        fields: [...s.fields]
          .sort(byName)
          .map(([name, type]) => new xdr.ScSpecUdtStructFieldV0({ doc: '', name, type: specTypeDef(type) })),
      }),
    ),
  );
  const errors = ci.errors.map((e) =>
    E.scSpecEntryUdtErrorEnumV0(
      new xdr.ScSpecUdtErrorEnumV0({
        doc: e.doc ?? '',
        lib: '',
        name: e.name,
        cases: Object.entries(e.cases).map(
          // the case's doc is its name: typed clients report a contract error by it
          ([name, value]) => new xdr.ScSpecUdtErrorEnumCaseV0({ doc: name, name, value }),
        ),
      }),
    ),
  );
  const functions = ci.functions.map((f) =>
    E.scSpecEntryFunctionV0(
      new xdr.ScSpecFunctionV0({
        doc: f.doc ?? '',
        name: f.name,
        inputs: f.inputs.map(
          ([name, type]) => new xdr.ScSpecFunctionInputV0({ doc: '', name, type: specTypeDef(type) }),
        ),
        outputs: f.output === undefined ? [] : [specTypeDef(f.output)],
      }),
    ),
  );
  return [...structs, ...errors, ...functions];
}

/** Name of error `code` in the interface's error enums, if it declares one. */
export function errorName(ci: ContractInterface, code: number): string | undefined {
  for (const e of ci.errors) {
    for (const [name, value] of Object.entries(e.cases)) if (value === code) return name;
  }
  return undefined;
}
