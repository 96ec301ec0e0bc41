// Incremental Merkle tree kept in contract storage (filled subtrees + next index), the layout SPP's
// merkle_with_history and asp-membership use. Shared by the pool and the ASP membership contract.
import { compress, zeroHashes } from '../src/crypto/index.ts';
import { PoolStorageKey } from '../src/ledger/pool-interface.ts';
import { asU32, asU256, type ContractEnv, sym, u32, u256, vec } from '../src/sandbox/contract-api.ts';

const NEXT_INDEX = vec([sym('NextIndex')]);
const filledKey = PoolStorageKey.filledSubtree;

export function nextIndex(env: ContractEnv): number {
  const v = env.persistent.get(NEXT_INDEX);
  return v ? asU32(v) : 0;
}

/**
 * Appends `leaves` (all at the same parent when two are given, as the pool inserts pairs) and returns the
 * new root. Caller checks capacity first.
 */
export function appendLeaves(env: ContractEnv, levels: number, leaves: bigint[]): bigint {
  const zeros = zeroHashes(levels);
  let index = nextIndex(env);
  let root = 0n;
  for (const leaf of leaves) {
    let node = leaf;
    let i = index;
    for (let level = 0; level < levels; level++) {
      if (i % 2 === 0) {
        env.persistent.set(filledKey(level), u256(node));
        node = compress(node, zeros[level] as bigint);
      } else {
        const left = env.persistent.get(filledKey(level));
        node = compress(left ? asU256(left) : (zeros[level] as bigint), node);
      }
      i >>= 1;
    }
    root = node;
    index++;
  }
  env.persistent.set(NEXT_INDEX, u32(index));
  return root;
}

export function emptyRoot(levels: number): bigint {
  return zeroHashes(levels)[levels] as bigint;
}
