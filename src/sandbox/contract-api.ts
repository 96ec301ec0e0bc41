// What a sandbox contract sees of the host (the TypeScript counterpart of soroban_sdk::Env), and the
// helpers contracts use to read and build ScVal arguments with the host's type errors.
import { Address, nativeToScVal, scValToNative, xdr } from '@stellar/stellar-sdk';
import type { ContractInterface } from '../ledger/contract-spec.ts';
import { valueError } from './errors.ts';
import type { Overlay } from './overlay.ts';
import { scAddress } from './keys.ts';

export interface ContractStorage {
  get(key: xdr.ScVal): xdr.ScVal | undefined;
  set(key: xdr.ScVal, val: xdr.ScVal): void;
  has(key: xdr.ScVal): boolean;
  remove(key: xdr.ScVal): void;
}

export interface ContractEnv {
  /** this contract's C… address */
  readonly contractId: string;
  /** sequence of the ledger being closed (or simulated against) */
  readonly ledgerSequence: number;
  readonly ledgerTimestamp: bigint;
  readonly persistent: ContractStorage;
  readonly temporary: ContractStorage;
  readonly instance: ContractStorage;
  /** Fails the whole transaction unless `address` authorized this exact invocation. */
  requireAuth(address: string): void;
  /** Cross-contract call; a failure aborts the caller too. */
  call(contractId: string, fn: string, args: xdr.ScVal[]): Promise<xdr.ScVal>;
  /** Cross-contract call whose failure is returned (and whose effects are undone) instead of aborting. */
  tryCall(
    contractId: string,
    fn: string,
    args: xdr.ScVal[],
  ): Promise<{ ok: true; value: xdr.ScVal } | { ok: false; error: Error }>;
  emit(topics: xdr.ScVal[], data: xdr.ScVal): void;
  /** classic ledger entries (accounts, trustlines): given to the built-in Stellar Asset Contract only */
  readonly classicEntries?: Overlay;
}

/** Contract code may await cross-contract calls and host crypto; state access itself is synchronous. */
export type ContractFunction = (env: ContractEnv, args: xdr.ScVal[]) => xdr.ScVal | Promise<xdr.ScVal>;

export interface ContractDefinition {
  /** stable name (in the published wasm's metadata) */
  name: string;
  /** the contract's interface: published as its contract spec, and calls that do not match it are refused */
  interface?: ContractInterface;
  /** constructor run at deployment (like __constructor) */
  construct?: (env: ContractEnv, args: xdr.ScVal[]) => void | Promise<void>;
  functions: Record<string, ContractFunction>;
  /**
   * Estimated CPU instructions of one call, per function, for the fee model (the sandbox does not meter
   * CPU); functions not listed cost CONTRACT_CALL_INSTRUCTIONS (src/sandbox/fees.ts)
   */
  instructions?: Readonly<Record<string, number>>;
}

// ---- argument readers (wrong types fail as Error(Value, UnexpectedType)) ----

export function expectArgs(args: xdr.ScVal[], n: number, fn: string): void {
  if (args.length !== n) throw valueError(`${fn} expects ${n} arguments, got ${args.length}`);
}

export function asAddress(v: xdr.ScVal, what = 'address'): string {
  if (v.type !== 'scvAddress') throw valueError(`${what}: expected Address, got ${v.type}`);
  return Address.fromScVal(v).toString();
}

function asInt(v: xdr.ScVal, type: string, what: string): bigint {
  if (v.type !== type) throw valueError(`${what}: expected ${type}, got ${v.type}`);
  return BigInt(scValToNative(v));
}

export const asI128 = (v: xdr.ScVal, what = 'amount') => asInt(v, 'scvI128', what);
export const asU256 = (v: xdr.ScVal, what = 'value') => asInt(v, 'scvU256', what);
export const asI256 = (v: xdr.ScVal, what = 'value') => asInt(v, 'scvI256', what);

export function asU32(v: xdr.ScVal, what = 'value'): number {
  if (v.type !== 'scvU32') throw valueError(`${what}: expected u32, got ${v.type}`);
  return v.value as number;
}

export function asBool(v: xdr.ScVal, what = 'value'): boolean {
  if (v.type !== 'scvBool') throw valueError(`${what}: expected bool, got ${v.type}`);
  return v.value as boolean;
}

export function asBytes(v: xdr.ScVal, what = 'bytes', length?: number): Uint8Array {
  if (v.type !== 'scvBytes') throw valueError(`${what}: expected Bytes, got ${v.type}`);
  const b = new Uint8Array(scValToNative(v) as Uint8Array);
  if (length !== undefined && b.length !== length)
    throw valueError(`${what}: expected ${length} bytes, got ${b.length}`);
  return b;
}

export function asVec(v: xdr.ScVal, what = 'vec'): xdr.ScVal[] {
  if (v.type !== 'scvVec' || !v.value) throw valueError(`${what}: expected Vec, got ${v.type}`);
  return v.value as xdr.ScVal[];
}

/** A contracttype struct: a map with exactly these Symbol keys, in sorted order (as soroban encodes it). */
export function asStruct<K extends string>(
  v: xdr.ScVal,
  keys: readonly K[],
  what = 'struct',
): Record<K, xdr.ScVal> {
  if (v.type !== 'scvMap' || !v.value) throw valueError(`${what}: expected Map, got ${v.type}`);
  const entries = v.value as xdr.ScMapEntry[];
  const sorted = [...keys].sort();
  if (entries.length !== sorted.length) throw valueError(`${what}: expected fields ${sorted.join(', ')}`);
  const out = {} as Record<K, xdr.ScVal>;
  entries.forEach((e, i) => {
    if (e.key.type !== 'scvSymbol' || String(e.key.value) !== sorted[i]) {
      throw valueError(`${what}: expected field ${sorted[i]} at position ${i}`);
    }
    out[sorted[i] as K] = e.val;
  });
  return out;
}

// ---- value builders ----

export const sym = (s: string) => xdr.ScVal.scvSymbol(s);
export const addr = (a: string) => xdr.ScVal.scvAddress(scAddress(a));
export const i128 = (n: bigint) => nativeToScVal(n, { type: 'i128' });
export const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });
export const u32 = (n: number) => xdr.ScVal.scvU32(n);
export const u64 = (n: bigint) => xdr.ScVal.scvU64(n);
export const bool = (b: boolean) => xdr.ScVal.scvBool(b);
export const bytes = (b: Uint8Array) => xdr.ScVal.scvBytes(b);
export const str = (s: string) => xdr.ScVal.scvString(s);
export const vec = (items: xdr.ScVal[]) => xdr.ScVal.scvVec(items);
export const voidVal = () => xdr.ScVal.scvVoid();

/** A contracttype struct value: Symbol-keyed map, keys sorted. */
export function struct(fields: Record<string, xdr.ScVal>): xdr.ScVal {
  const keys = Object.keys(fields).sort();
  return xdr.ScVal.scvMap(keys.map((k) => new xdr.ScMapEntry({ key: sym(k), val: fields[k] as xdr.ScVal })));
}
