// The ASP blocklist: a sparse Merkle tree in circomlib's canonical form with Poseidon2 (leaf = H(key, value, 1),
// node = compress(l, r), empty = 0, key bits LSB first). Each leaf sits at the shallowest depth where its key
// prefix is unique, so the tree is a pure function of its key set; deletes collapse automatically.
import { assertField } from './field.ts';
import { compress, hash } from './poseidon2.ts';

export const SMT_KEY_BITS = 254;

export interface SmtFindResult {
  found: boolean;
  /** Siblings from the root downward, as long as the path to the node that answers the query. */
  siblings: bigint[];
  foundValue: bigint;
  /** When not found: the leaf occupying the key's position (isOld0 = false), or an empty node (isOld0 = true). */
  notFoundKey: bigint;
  notFoundValue: bigint;
  isOld0: boolean;
}

export interface SmtNonMembershipProof {
  root: bigint;
  /** Siblings padded with zeros to the circuit depth. */
  siblings: bigint[];
  oldKey: bigint;
  oldValue: bigint;
  isOld0: bigint;
}

const bit = (key: bigint, level: number): number => Number((key >> BigInt(level)) & 1n);

export function smtLeafHash(key: bigint, value: bigint): bigint {
  return hash([key, value], 1n);
}

export class SparseMerkleTree {
  readonly #leaves = new Map<bigint, bigint>();
  #cachedRoot: bigint | undefined;

  get size(): number {
    return this.#leaves.size;
  }

  get root(): bigint {
    this.#cachedRoot ??= this.#subtreeRoot([...this.#leaves.keys()], 0);
    return this.#cachedRoot;
  }

  entries(): [bigint, bigint][] {
    return [...this.#leaves.entries()];
  }

  insert(key: bigint, value: bigint): void {
    assertField(key, 'key');
    assertField(value, 'value');
    if (this.#leaves.has(key)) throw new Error(`key ${key} is already in the tree`);
    this.#leaves.set(key, value);
    this.#cachedRoot = undefined;
  }

  update(key: bigint, value: bigint): void {
    assertField(key, 'key');
    assertField(value, 'value');
    if (!this.#leaves.has(key)) throw new Error(`key ${key} is not in the tree`);
    this.#leaves.set(key, value);
    this.#cachedRoot = undefined;
  }

  delete(key: bigint): void {
    assertField(key, 'key');
    if (!this.#leaves.delete(key)) throw new Error(`key ${key} is not in the tree`);
    this.#cachedRoot = undefined;
  }

  find(key: bigint): SmtFindResult {
    assertField(key, 'key');
    const siblings: bigint[] = [];
    let candidates = [...this.#leaves.keys()];
    for (let level = 0; ; level++) {
      if (candidates.length === 0) {
        return { found: false, siblings, foundValue: 0n, notFoundKey: key, notFoundValue: 0n, isOld0: true };
      }
      if (candidates.length === 1) {
        const leafKey = candidates[0];
        const leafValue = this.#leaves.get(leafKey)!;
        if (leafKey === key) {
          return {
            found: true,
            siblings,
            foundValue: leafValue,
            notFoundKey: 0n,
            notFoundValue: 0n,
            isOld0: false,
          };
        }
        return {
          found: false,
          siblings,
          foundValue: 0n,
          notFoundKey: leafKey,
          notFoundValue: leafValue,
          isOld0: false,
        };
      }
      const side = bit(key, level);
      const same = candidates.filter((k) => bit(k, level) === side);
      const other = candidates.filter((k) => bit(k, level) !== side);
      siblings.push(this.#subtreeRoot(other, level + 1));
      candidates = same;
    }
  }

  /** A proof that `key` is absent, shaped for a circuit of `depth` levels. */
  nonMembershipProof(key: bigint, depth: number): SmtNonMembershipProof {
    if (!Number.isInteger(depth) || depth < 1 || depth > SMT_KEY_BITS) {
      throw new RangeError(`SMT proof depth must be an integer in 1..${SMT_KEY_BITS}`);
    }
    const res = this.find(key);
    if (res.found) throw new Error('key is in the blocklist: no non-membership proof exists');
    if (res.siblings.length > depth) {
      throw new RangeError(
        `non-membership path needs ${res.siblings.length} levels, more than the circuit's ${depth}`,
      );
    }
    const siblings = [...res.siblings, ...new Array<bigint>(depth - res.siblings.length).fill(0n)];
    return {
      root: this.root,
      siblings,
      oldKey: res.isOld0 ? 0n : res.notFoundKey,
      oldValue: res.isOld0 ? 0n : res.notFoundValue,
      isOld0: res.isOld0 ? 1n : 0n,
    };
  }

  #subtreeRoot(keys: bigint[], level: number): bigint {
    if (keys.length === 0) return 0n;
    if (keys.length === 1) return smtLeafHash(keys[0], this.#leaves.get(keys[0])!);
    if (level >= SMT_KEY_BITS) throw new Error('distinct keys cannot share all key bits');
    const left = keys.filter((k) => bit(k, level) === 0);
    const right = keys.filter((k) => bit(k, level) === 1);
    return compress(this.#subtreeRoot(left, level + 1), this.#subtreeRoot(right, level + 1));
  }
}

/** Checks a non-membership proof the way the circuit does (used by the ASP contract and tests). */
export function verifyNonMembership(root: bigint, key: bigint, proof: SmtNonMembershipProof): boolean {
  assertField(root, 'root');
  assertField(key, 'key');
  const { siblings, oldKey, oldValue, isOld0 } = proof;
  if (isOld0 !== 0n && isOld0 !== 1n) return false;
  if (isOld0 === 0n && oldKey === key) return false;
  // The answering node sits just below the deepest non-zero sibling.
  let leafDepth = siblings.length;
  while (leafDepth > 0 && siblings[leafDepth - 1] === 0n) leafDepth--;
  if (isOld0 === 0n) {
    for (let level = 0; level < leafDepth; level++) if (bit(oldKey, level) !== bit(key, level)) return false;
  }
  let node = isOld0 === 1n ? 0n : smtLeafHash(oldKey, oldValue);
  for (let level = leafDepth - 1; level >= 0; level--) {
    node = bit(key, level) ? compress(siblings[level], node) : compress(node, siblings[level]);
  }
  return node === root;
}
