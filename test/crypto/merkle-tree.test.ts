import test from 'ava';
import {
  compress,
  FIELD_MODULUS,
  MerkleTree,
  ROOT_HISTORY_SIZE,
  ZERO_LEAF,
  zeroHashes,
} from '../../src/crypto/index.ts';

// A from-scratch full recomputation, to check the incremental tree against.
function naiveRoot(leaves: bigint[], depth: number): bigint {
  let level = [...leaves];
  let zero = ZERO_LEAF;
  for (let d = 0; d < depth; d++) {
    const next: bigint[] = [];
    for (let i = 0; i < Math.max(level.length, 1); i += 2)
      next.push(compress(level[i] ?? zero, level[i + 1] ?? zero));
    level = next;
    zero = compress(zero, zero);
  }
  return level[0];
}

test('an empty tree has the zero root of its depth', (t) => {
  const tree = new MerkleTree(5);
  t.is(tree.root, zeroHashes(5)[5]);
  t.is(tree.nextIndex, 0);
  t.false(tree.isKnownRoot(0n));
});

test('incremental roots and paths match a full recomputation', (t) => {
  const tree = new MerkleTree(4);
  const leaves = [3n, 1n, 4n, 1n, 5n, 9n, 2n];
  for (const leaf of leaves) tree.insert(leaf);
  t.is(tree.root, naiveRoot(leaves, 4));
  leaves.forEach((leaf, i) => {
    const path = tree.path(i);
    t.is(path.pathIndex, BigInt(i));
    t.is(path.pathElements.length, 4);
    t.is(MerkleTree.rootFromPath(leaf, path), tree.root);
  });
  t.not(MerkleTree.rootFromPath(99n, tree.path(2)), tree.root);
});

test('insertPair adds two siblings and records one root', (t) => {
  const tree = new MerkleTree(3);
  const before = tree.knownRoots.length;
  t.deepEqual(tree.insertPair(7n, 8n), [0, 1]);
  t.is(tree.knownRoots.length, before + 1);
  t.is(tree.root, naiveRoot([7n, 8n], 3));
  tree.insert(9n);
  t.throws(() => tree.insertPair(1n, 2n), { message: /even next index/ });
});

test('root history keeps the last 90 roots', (t) => {
  const tree = new MerkleTree(8);
  const roots: bigint[] = [];
  for (let i = 0; i < ROOT_HISTORY_SIZE + 5; i++) {
    tree.insert(BigInt(i + 1));
    roots.push(tree.root);
  }
  t.true(tree.isKnownRoot(roots.at(-1)!));
  t.true(tree.isKnownRoot(roots.at(-ROOT_HISTORY_SIZE)!));
  t.false(tree.isKnownRoot(roots[0]));
  t.is(tree.knownRoots.length, ROOT_HISTORY_SIZE);
});

test('a full tree and out-of-range paths throw', (t) => {
  const tree = new MerkleTree(2);
  for (let i = 0; i < 4; i++) tree.insert(BigInt(i));
  t.throws(() => tree.insert(5n), { message: /full/ });
  t.throws(() => tree.path(4), { message: /out of range/ });
  t.throws(() => tree.path(-1), { message: /out of range/ });
  t.throws(() => tree.path(1.5), { message: /out of range/ });
  t.throws(() => new MerkleTree(2).path(0), { message: /out of range/ });
});

test('bad depth and leaves throw', (t) => {
  t.throws(() => new MerkleTree(0), { message: /depth/ });
  t.throws(() => new MerkleTree(33), { message: /depth/ });
  t.throws(() => new MerkleTree(2.5), { message: /depth/ });
  const tree = new MerkleTree(3);
  t.throws(() => tree.insert(FIELD_MODULUS), { message: /leaf is not a canonical/ });
  t.throws(() => tree.insert(-1n), { message: /canonical/ });
  t.throws(() => tree.insert(5 as unknown as bigint), { message: /bigint/ });
  t.is(tree.nextIndex, 0, 'a refused leaf changes nothing');
  t.throws(() => MerkleTree.rootFromPath(1n, { pathElements: [0n], pathIndex: 2n }), {
    message: /more bits/,
  });
});

test('depth 20 is the default', (t) => {
  const tree = new MerkleTree();
  t.is(tree.depth, 20);
  tree.insert(42n);
  t.is(tree.path(0).pathElements.length, 20);
});
