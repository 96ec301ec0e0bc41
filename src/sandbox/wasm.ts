// The code a sandbox contract publishes: a WebAssembly module with no functions, carrying the contract's
// interface in the standard custom sections a Soroban contract has — `contractspecv0` (the ScSpecEntry
// stream), `contractmetav0` (ScMetaEntry key/values) and `contractenvmetav0` (the interface version) — so
// that `getContractWasmByContractId`, `contract.Client.from` and spec-reading tools work unchanged. The
// module is stored as the contract's code entry and its SHA-256 is the instance's wasm hash.
// Format: https://webassembly.github.io/spec/core/binary/modules.html (custom sections, id 0).
import { hash, xdr } from '@stellar/stellar-sdk';
import { specEntries } from '../ledger/contract-spec.ts';
import type { ContractDefinition } from './contract-api.ts';
import { PROTOCOL_VERSION } from './xdr-records.ts';

function leb128(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function customSection(name: string, payload: Uint8Array): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const body = Buffer.concat([Buffer.from(leb128(nameBytes.length)), nameBytes, payload]);
  return Buffer.concat([Buffer.from([0, ...leb128(body.length)]), body]);
}

const meta = (key: string, val: string) => xdr.ScMetaEntry.scMetaV0(new xdr.ScMetaV0({ key, val })).toXdr();

/** The wasm module for a contract definition (deterministic: same interface, same bytes, same hash). */
export function contractWasm(def: ContractDefinition): Buffer {
  const spec = def.interface ? specEntries(def.interface).map((e) => e.toXdr()) : [];
  const env = xdr.ScEnvMetaEntry.scEnvMetaKindInterfaceVersion(
    new xdr.ScEnvMetaEntryInterfaceVersion({ protocol: PROTOCOL_VERSION, preRelease: 0 }),
  ).toXdr();
  return Buffer.concat([
    Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]),
    customSection('contractenvmetav0', env),
    customSection(
      'contractmetav0',
      Buffer.concat([meta('name', def.name), meta('impl', 'privacy-pool-proxy sandbox (TypeScript)')]),
    ),
    ...(spec.length > 0 ? [customSection('contractspecv0', Buffer.concat(spec))] : []),
  ]);
}

/** SHA-256 of the module: the wasm hash its instances point at and the key of its code entry. */
export function wasmHash(wasm: Uint8Array): Buffer {
  return Buffer.from(hash(Buffer.from(wasm)));
}
