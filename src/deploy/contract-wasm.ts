// The pool's contracts as `npm run build` compiles them (contracts/, Rust → build/contracts/<name>.wasm):
// the modules a deployment uploads, byte for byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hash } from '#stellar-sdk';

export const CONTRACT_NAMES = ['verifier', 'asp_membership', 'asp_non_membership', 'pool'] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];

/** Where `npm run build` writes the contracts' WebAssembly modules. */
export const DEFAULT_WASM_DIR = fileURLToPath(new URL('../../build/contracts/', import.meta.url));

/** One compiled contract: its module and the SHA-256 that names it on the ledger. */
export interface ContractWasm {
  name: ContractName;
  wasm: Buffer;
  hash: Buffer;
}

/** The four modules from `dir`; a missing one is an error that says how to build it. */
export function readContractWasms(dir: string = DEFAULT_WASM_DIR): Record<ContractName, ContractWasm> {
  const out = {} as Record<ContractName, ContractWasm>;
  for (const name of CONTRACT_NAMES) {
    const file = join(dir, `${name}.wasm`);
    let wasm: Buffer;
    try {
      wasm = readFileSync(file);
    } catch (e) {
      throw new Error(
        `cannot read the ${name} contract ${file} (run \`npm run build\` first): ${(e as Error).message}`,
      );
    }
    out[name] = { name, wasm, hash: Buffer.from(hash(wasm)) };
  }
  return out;
}
