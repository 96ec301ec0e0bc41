// A store rebuilt from events (by `store recover`, a fresh data directory or a new replica's first pass) is
// checked against the chain's present state before it is trusted: the pool's current tree, its root and next
// index, and every full tree's final root, recomputed from the leaves read, against the pool contract's, the ASP allowlist and blocklist roots against
// the ones the pool checks proofs against, each nullifier read against the contract's spent set, and each
// credited note's commitment against its leaf, its spent mark against the contract. The
// first mismatch refuses the store (`ChainMismatchError`, naming it): an archive that lost, forged or changed
// an event never becomes balances that differ from the chain. A store passes once; its mark is kept in it.
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { NoteRecord } from './notebook.ts';
import type { PoolReads } from './pool-reads.ts';

/** The pool's current tree as the check compares it: its number, how many leaves it holds, its root. */
export interface TreeState {
  tree: number;
  nextIndex: number;
  root: bigint;
}

/** The rebuilt trees (a MerkleForest): the current one, full trees' roots, commitments by position. */
export interface RebuiltTrees {
  readonly currentTree: number;
  readonly currentTreeLeaves: number;
  readonly root: bigint;
  /** commitments across every tree */
  readonly nextIndex: number;
  rootOf(tree: number): bigint;
  leaf(position: number): bigint;
}

/** The store's events differ from the chain: the first mismatch found. */
export class ChainMismatchError extends Error {
  constructor(mismatch: string) {
    super(
      `the pool state rebuilt from the events read differs from the chain: ${mismatch}. Refused: the proxy ` +
        'does not serve balances the chain does not hold. Import an untouched export of this deployment ' +
        '(pool-proxy store import-events) or use an RPC that keeps the pool’s events, then run pool-proxy ' +
        'store recover and start again',
    );
  }
}

const hex = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

/**
 * What differs between the current tree rebuilt from events (`local`) and the pool contract's (`chain`), or
 * undefined when they agree (full trees are compared by their final roots, in firstMismatch).
 */
export function treeMismatch(local: TreeState, chain: TreeState): string | undefined {
  if (local.tree !== chain.tree)
    return `the events read fill ${local.tree + 1} pool trees, the pool contract ${chain.tree + 1}`;
  if (local.nextIndex !== chain.nextIndex)
    return (
      `the pool tree rebuilt from the events read holds ${local.nextIndex} leaves, the pool contract's ` +
      `${chain.nextIndex}`
    );
  if (local.root !== chain.root)
    return (
      `the pool tree's root rebuilt from the events read (${hex(local.root)}) is not the pool contract's ` +
      `(${hex(chain.root)}) at ${chain.nextIndex} leaves`
    );
  return undefined;
}

export interface ChainCheckInput {
  reads: PoolReads;
  /** the rebuilt pool trees */
  tree: RebuiltTrees;
  /** the ASP roots rebuilt from the events read: the allowlist tree's and the blocklist's */
  asp: () => { membership: bigint; nonMembership: bigint };
  /** the nullifiers read */
  spent: ReadonlySet<bigint>;
  /** every credited note (of every agent and the float account) */
  notes: () => Promise<NoteRecord[]>;
  /** one more pass over the events (the chain may move on while the check reads it) */
  sync: () => Promise<void>;
}

/** How often a mismatch is read again, after one more pass that read nothing new, before the store is refused. */
const ATTEMPTS = 3;

/** Resolves when the rebuilt state agrees with the chain; else `ChainMismatchError` naming the first mismatch. */
export async function checkAgainstChain(input: ChainCheckInput): Promise<void> {
  for (let attempts = 1; ; attempts++) {
    const mismatch = await firstMismatch(input);
    if (mismatch === undefined) return;
    if (attempts >= ATTEMPTS) throw new ChainMismatchError(mismatch);
    const before = JSON.stringify([input.tree.nextIndex, String(input.asp().membership)]);
    await input.sync();
    // The pass read new commitments or allowlist leaves (the chain moved on while it was checked): afresh.
    if (JSON.stringify([input.tree.nextIndex, String(input.asp().membership)]) !== before) attempts = 0;
  }
}

async function firstMismatch({
  reads,
  tree,
  asp,
  spent,
  notes,
}: ChainCheckInput): Promise<string | undefined> {
  const current = await reads.currentTree();
  const nextIndex = await reads.nextIndex();
  const root = await reads.root();
  // A transaction between the reads: read again after the next pass.
  if ((await reads.nextIndex()) !== nextIndex || (await reads.currentTree()) !== current)
    return 'the pool contract moved on while it was read';
  const tree_ = treeMismatch(
    { tree: tree.currentTree, nextIndex: tree.currentTreeLeaves, root: tree.root },
    { tree: current, nextIndex, root },
  );
  if (tree_ !== undefined) return tree_;
  for (let full = 0; full < current; full++) {
    const final = await reads.fullTreeRoot(full);
    if (final !== tree.rootOf(full))
      return `pool tree ${full}'s final root rebuilt from the events read (${hex(tree.rootOf(full))}) is not the pool contract's (${final === undefined ? 'none' : hex(final)})`;
  }
  const chainAsp = await reads.aspRoots();
  const localAsp = asp();
  if (localAsp.membership !== chainAsp.membership)
    return `the ASP allowlist root rebuilt from the events read (${hex(localAsp.membership)}) is not the chain's (${hex(chainAsp.membership)})`;
  if (localAsp.nonMembership !== chainAsp.nonMembership)
    return `the ASP blocklist root rebuilt from the events read (${hex(localAsp.nonMembership)}) is not the chain's (${hex(chainAsp.nonMembership)})`;
  for (const nullifier of spent)
    if (!(await reads.isSpent(nullifier)))
      return `nullifier ${hex(nullifier)} is spent in the events read but not in the pool contract`;
  for (const note of await notes()) {
    if (note.leafIndex >= tree.nextIndex || tree.leaf(note.leafIndex) !== note.commitment)
      return `the note of ${note.agentId} at leaf ${note.leafIndex} has commitment ${hex(note.commitment)}, which is not that leaf`;
    if (note.state !== 'spent' && (await reads.isSpent(note.nullifier)))
      return `the note of ${note.agentId} at leaf ${note.leafIndex} is unspent in the events read, but the pool contract has spent its nullifier ${hex(note.nullifier)}`;
  }
  return undefined;
}

/** The store's mark that its state agreed with the chain once (no mark: checked at the next start). */
export const checkedKey = (store: EncryptedStore): string => store.fixedKey('meta', 'chain-checked');
