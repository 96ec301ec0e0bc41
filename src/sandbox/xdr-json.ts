// XDR as JSON for the RPC's `xdrFormat: "json"`: the SEP-51 JSON form of a base64 XDR value, converted by
// the official @stellar/stellar-xdr-json (the WebAssembly build of the Rust stellar-xdr crate, the same
// conversion stellar-rpc links in). The module is loaded on first use, so a sandbox nobody asks for JSON
// never pays for it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { decode, encode, initSync } from '@stellar/stellar-xdr-json';

/** The XDR types the sandbox serves as JSON (names as the Stellar XDR definitions spell them). */
export type XdrJsonType =
  | 'ContractEvent'
  | 'DiagnosticEvent'
  | 'LedgerCloseMeta'
  | 'LedgerEntry'
  | 'LedgerEntryData'
  | 'LedgerEntryExt'
  | 'LedgerHeaderHistoryEntry'
  | 'LedgerKey'
  | 'ScVal'
  | 'SorobanAuthorizationEntry'
  | 'SorobanTransactionData'
  | 'TransactionEnvelope'
  | 'TransactionEvent'
  | 'TransactionMeta'
  | 'TransactionResult';

/** A value the converter could not turn into JSON (or back): names the type and the converter's reason. */
export class XdrJsonError extends Error {
  constructor(
    readonly type: string,
    reason: unknown,
  ) {
    super(`cannot convert ${type} between XDR and JSON: ${String(reason)}`);
  }
}

let loaded = false;
function load(): void {
  if (loaded) return;
  // Node's fetch cannot read the file: URL the package's default loader uses, so hand it the bytes
  const require = createRequire(import.meta.url);
  initSync(readFileSync(require.resolve('@stellar/stellar-xdr-json/stellar_xdr_json_bg.wasm')));
  loaded = true;
}

/** The JSON form of one base64 XDR value of `type`. */
export function xdrToJson(type: XdrJsonType, base64: string): unknown {
  load();
  try {
    return JSON.parse(decode(type, base64));
  } catch (e) {
    throw new XdrJsonError(type, e);
  }
}

/** The base64 XDR of one JSON value of `type` (the inverse of xdrToJson). */
export function jsonToXdr(type: XdrJsonType, json: unknown): string {
  load();
  try {
    return encode(type, JSON.stringify(json));
  } catch (e) {
    throw new XdrJsonError(type, e);
  }
}
