// The pool's incremental binary Merkle tree (SPP merkle_with_history): Poseidon2 compression nodes, a fixed
// depth, zero subtrees from the "XLM" zero leaf, and a ring buffer of recent roots.
import { assertField } from './field.ts';
import { compress, hash } from './poseidon2.ts';

/** Level-0 zero: Poseidon2 of the ASCII bytes "XLM" (88, 76, 77) with domain 0. */
export const ZERO_LEAF: bigint = hash([88n, 76n, 77n], 0n);
export const DEFAULT_DEPTH = 20;
export const ROOT_HISTORY_SIZE = 90;
export const MAX_DEPTH = 32;

const zeroCache: bigint[] = [ZERO_LEAF];

/** zeros[i] is the root of an empty subtree of height i. */
export function zeroHashes(depth: number): bigint[] {
  while (zeroCache.length <= depth) {
    const z = zeroCache[zeroCache.length - 1];
    zeroCache.push(compress(z, z));
  }
  return zeroCache.slice(0, depth + 1);
}

export interface MerklePath {
  /** Siblings from the leaf level upward. */
  pathElements: bigint[];
  /** The leaf index as one field element; its bits (LSB first) say left (0) or right (1) at each level. */
  pathIndex: bigint;
}

export class MerkleTree {
  readonly depth: number;
  readonly rootHistorySize: number;
  readonly #zeros: bigint[];
  /** layers[0] holds the leaves, layers[depth] the root; missing entries are zero subtrees. */
  readonly #layers: bigint[][];
  readonly #history: bigint[] = [];

  constructor(depth: number = DEFAULT_DEPTH, options: { rootHistorySize?: number } = {}) {
    if (!Number.isInteger(depth) || depth < 1 || depth > MAX_DEPTH) {
      throw new RangeError(`Merkle tree depth must be an integer in 1..${MAX_DEPTH}, got ${depth}`);
    }
    const historySize = options.rootHistorySize ?? ROOT_HISTORY_SIZE;
    if (!Number.isInteger(historySize) || historySize < 1)
      throw new RangeError('root history size must be ≥ 1');
    this.depth = depth;
    this.rootHistorySize = historySize;
    this.#zeros = zeroHashes(depth);
    this.#layers = Array.from({ length: depth + 1 }, () => []);
    this.#history.push(this.root);
  }

  get capacity(): number {
    return 2 ** this.depth;
  }

  get nextIndex(): number {
    return this.#layers[0].length;
  }

  get root(): bigint {
    return this.#layers[this.depth][0] ?? this.#zeros[this.depth];
  }

  /** Roots still accepted, newest last (the zero root of an empty tree is never a valid proof root). */
  get knownRoots(): readonly bigint[] {
    return this.#history;
  }

  leaf(index: number): bigint {
    this.#checkIndex(index);
    return this.#layers[0][index];
  }

  /** Appends one leaf and records the new root; returns the leaf's index. */
  insert(leaf: bigint): number {
    const index = this.#append(leaf);
    this.#recordRoot();
    return index;
  }

  /** Appends two sibling leaves as the pool contract does (one new root for the pair). */
  insertPair(left: bigint, right: bigint): [number, number] {
    if (this.nextIndex % 2 !== 0) throw new Error('insertPair needs an even next index');
    assertField(right, 'right leaf');
    if (this.nextIndex + 2 > this.capacity) throw new RangeError('Merkle tree is full');
    const a = this.#append(left);
    const b = this.#append(right);
    this.#recordRoot();
    return [a, b];
  }

  isKnownRoot(root: bigint): boolean {
    if (typeof root !== 'bigint' || root === 0n) return false;
    return this.#history.includes(root);
  }

  path(index: number): MerklePath {
    this.#checkIndex(index);
    const pathElements: bigint[] = [];
    let i = index;
    for (let level = 0; level < this.depth; level++) {
      pathElements.push(this.#node(level, i ^ 1));
      i >>= 1;
    }
    return { pathElements, pathIndex: BigInt(index) };
  }

  /** Root obtained by hashing `leaf` up along `path` (what the circuit checks). */
  static rootFromPath(leaf: bigint, path: MerklePath): bigint {
    let node = leaf;
    let bits = path.pathIndex;
    for (const sibling of path.pathElements) {
      node = bits & 1n ? compress(sibling, node) : compress(node, sibling);
      bits >>= 1n;
    }
    if (bits !== 0n) throw new RangeError('path index has more bits than the path has levels');
    return node;
  }

  #node(level: number, index: number): bigint {
    return this.#layers[level][index] ?? this.#zeros[level];
  }

  #append(leaf: bigint): number {
    assertField(leaf, 'leaf');
    const index = this.nextIndex;
    if (index >= this.capacity) throw new RangeError(`Merkle tree is full (${this.capacity} leaves)`);
    this.#layers[0].push(leaf);
    let i = index;
    let node = leaf;
    for (let level = 0; level < this.depth; level++) {
      const sibling = this.#node(level, i ^ 1);
      node = i & 1 ? compress(sibling, node) : compress(node, sibling);
      i >>= 1;
      this.#layers[level + 1][i] = node;
    }
    return index;
  }

  #recordRoot(): void {
    this.#history.push(this.root);
    if (this.#history.length > this.rootHistorySize) this.#history.shift();
  }

  #checkIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.nextIndex) {
      throw new RangeError(`leaf index ${index} is out of range (tree has ${this.nextIndex} leaves)`);
    }
  }
}
