// The pool's commitments as the contract keeps them: one Merkle tree of `depth` levels after another, each
// taking `capacity` leaves (a power of two, at most 2^depth) before the next opens. A commitment is named by
// its position in the pool — the count of commitments before it, across every tree — which gives its tree
// (position / capacity) and its leaf index in that tree (position % capacity, the index the circuit proves
// and the nullifier commits to). A note is proved against the root of its own tree: a full tree's final root
// stays valid for ever, the current tree's latest root is in the contract's ring.
import { DEFAULT_DEPTH, type MerklePath, MerkleTree } from './merkle-tree.ts';

/** Where a commitment sits: its tree and its leaf index in that tree. */
export interface ForestPlace {
  tree: number;
  index: number;
}

export class MerkleForest {
  readonly depth: number;
  readonly capacity: number;
  readonly #trees: MerkleTree[] = [];
  #leaves = 0;

  constructor(depth: number = DEFAULT_DEPTH, capacity: number = 2 ** depth) {
    if (
      !Number.isInteger(capacity) ||
      capacity < 4 ||
      capacity > 2 ** depth ||
      (capacity & (capacity - 1)) !== 0
    )
      throw new RangeError(`tree capacity must be a power of two in 4..2^${depth}, got ${capacity}`);
    this.depth = depth;
    this.capacity = capacity;
    this.#trees.push(new MerkleTree(depth));
  }

  /** Commitments appended so far, across every tree (the next one's position). */
  get nextIndex(): number {
    return this.#leaves;
  }

  /**
   * The tree the latest commitment went to (0 while empty), as the contract counts it: a full tree stays
   * current until a transaction needs room, and that transaction opens the next.
   */
  get currentTree(): number {
    return this.#leaves === 0 ? 0 : Math.floor((this.#leaves - 1) / this.capacity);
  }

  /** Leaves used in the current tree (`capacity` once it is full). */
  get currentTreeLeaves(): number {
    return this.#leaves - this.currentTree * this.capacity;
  }

  /** The current tree's latest root. */
  get root(): bigint {
    return this.rootOf(this.currentTree);
  }

  /** A tree's latest root (a full tree's final root). */
  rootOf(tree: number): bigint {
    const t = this.#trees[tree];
    if (t === undefined) throw new RangeError(`tree ${tree} is not open (${this.#trees.length} so far)`);
    return t.root;
  }

  /** Where the commitment at `position` sits. */
  placeOf(position: number): ForestPlace {
    if (!Number.isInteger(position) || position < 0)
      throw new RangeError(`pool position ${position} is not a non-negative integer`);
    return { tree: Math.floor(position / this.capacity), index: position % this.capacity };
  }

  /** The position of leaf `index` of tree `tree`. */
  positionOf(place: ForestPlace): number {
    if (!Number.isInteger(place.index) || place.index < 0 || place.index >= this.capacity)
      throw new RangeError(`leaf index ${place.index} is outside a tree of ${this.capacity} leaves`);
    if (!Number.isInteger(place.tree) || place.tree < 0)
      throw new RangeError(`tree ${place.tree} is not valid`);
    return place.tree * this.capacity + place.index;
  }

  /** Appends the next commitment (opening the next tree when the last is full); returns its position. */
  insert(leaf: bigint): number {
    const { tree } = this.placeOf(this.#leaves);
    if (tree === this.#trees.length) this.#trees.push(new MerkleTree(this.depth));
    this.#trees[tree]!.insert(leaf);
    return this.#leaves++;
  }

  leaf(position: number): bigint {
    this.#check(position);
    const { tree, index } = this.placeOf(position);
    return this.#trees[tree]!.leaf(index);
  }

  /** The commitment's path in its own tree (`pathIndex` is its leaf index there). */
  path(position: number): MerklePath {
    this.#check(position);
    const { tree, index } = this.placeOf(position);
    return this.#trees[tree]!.path(index);
  }

  #check(position: number): void {
    if (!Number.isInteger(position) || position < 0 || position >= this.#leaves)
      throw new RangeError(`pool position ${position} is out of range (${this.#leaves} commitments)`);
  }
}
