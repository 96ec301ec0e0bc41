// Calls checked against the callee's published interface, as a Soroban contract built with the SDK refuses
// them: an unknown function fails as Error(WasmVm, MissingValue); a wrong number of arguments or an argument
// whose value does not have the declared type (a struct: a map with exactly its Symbol fields in order)
// fails as Error(Value, UnexpectedType), before any contract code runs.
import type { xdr } from '@stellar/stellar-sdk';
import type { ContractInterface, SpecType, StructSpec } from '../ledger/contract-spec.ts';
import { HostError, valueError } from './errors.ts';
import { rawBytes } from './keys.ts';

const SCALAR: Record<string, string> = {
  bool: 'scvBool',
  void: 'scvVoid',
  u32: 'scvU32',
  i32: 'scvI32',
  u64: 'scvU64',
  i64: 'scvI64',
  u128: 'scvU128',
  i128: 'scvI128',
  u256: 'scvU256',
  i256: 'scvI256',
  bytes: 'scvBytes',
  string: 'scvString',
  symbol: 'scvSymbol',
  address: 'scvAddress',
};

function describe(t: SpecType): string {
  if (typeof t === 'string') return t;
  if ('bytesN' in t) return `BytesN<${t.bytesN}>`;
  if ('vec' in t) return `Vec<${describe(t.vec)}>`;
  if ('option' in t) return `Option<${describe(t.option)}>`;
  return t.udt;
}

function check(v: xdr.ScVal, t: SpecType, structs: Map<string, StructSpec>, what: string): void {
  const kind: string = v.type;
  const fail = () => valueError(`${what}: expected ${describe(t)}, got ${kind}`);
  if (typeof t === 'string') {
    if (kind !== SCALAR[t]) throw fail();
    return;
  }
  if ('option' in t) {
    if (kind !== 'scvVoid') check(v, t.option, structs, what);
    return;
  }
  if ('bytesN' in t) {
    if (kind !== 'scvBytes' || rawBytes(v.value).length !== t.bytesN) throw fail();
    return;
  }
  if ('vec' in t) {
    const items = kind === 'scvVec' ? (v.value as xdr.ScVal[] | null) : null;
    if (!items) throw fail();
    items.forEach((item, i) => check(item, t.vec, structs, `${what}[${i}]`));
    return;
  }
  const s = structs.get(t.udt);
  if (!s) throw new HostError('Context', 'InternalError', `interface has no type ${t.udt}`);
  const entries = kind === 'scvMap' ? (v.value as xdr.ScMapEntry[] | null) : null;
  const fields = [...s.fields].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (!entries || entries.length !== fields.length) throw fail();
  entries.forEach((e, i) => {
    const [name, type] = fields[i] as readonly [string, SpecType];
    if (e.key.type !== 'scvSymbol' || String(e.key.value) !== name) throw fail();
    check(e.val, type, structs, `${what}.${name}`);
  });
}

/** Throws the host's error unless `fn(args)` matches the interface. */
export function checkCall(iface: ContractInterface, fn: string, args: readonly xdr.ScVal[]): void {
  const spec = iface.functions.find((f) => f.name === fn);
  if (!spec) {
    throw new HostError('WasmVm', 'MissingValue', `trying to invoke non-existent contract function ${fn}`);
  }
  if (args.length !== spec.inputs.length) {
    throw valueError(`${fn} expects ${spec.inputs.length} arguments, got ${args.length}`);
  }
  const structs = new Map(iface.structs.map((s) => [s.name, s]));
  spec.inputs.forEach(([name, type], i) => check(args[i] as xdr.ScVal, type, structs, `${fn}: ${name}`));
}
