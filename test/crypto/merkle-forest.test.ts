// The pool's trees one after another (MerkleForest): positions, places, roots and paths against single trees
// built from the same leaves, and the rules of capacity.
import test from 'ava';
import { MerkleForest, MerkleTree } from '../../src/crypto/index.ts';
import { treesThatMayFill } from '../../src/proxy/flows/pin-footprint.ts';

const leaf = (i: number) => BigInt(1000 + i);

test('commitments fill one tree of `capacity` leaves after another; each tree is an ordinary tree', (t) => {
  const forest = new MerkleForest(20, 4);
  const trees = [new MerkleTree(20), new MerkleTree(20), new MerkleTree(20)];
  t.is(forest.currentTree, 0);
  t.is(forest.root, trees[0]!.root, 'an empty pool has the empty tree root');
  for (let i = 0; i < 10; i++) {
    t.is(forest.insert(leaf(i)), i);
    trees[Math.floor(i / 4)]!.insert(leaf(i));
  }
  t.is(forest.nextIndex, 10);
  t.deepEqual(forest.placeOf(9), { tree: 2, index: 1 });
  t.is(forest.positionOf({ tree: 2, index: 1 }), 9);
  t.is(forest.currentTree, 2);
  t.is(forest.currentTreeLeaves, 2);
  for (let tree = 0; tree < 3; tree++) t.is(forest.rootOf(tree), trees[tree]!.root, `tree ${tree}`);
  t.is(forest.root, trees[2]!.root);
  for (const position of [0, 3, 4, 7, 9]) {
    const { tree, index } = forest.placeOf(position);
    t.deepEqual(forest.path(position), trees[tree]!.path(index), `path of ${position}`);
    t.is(forest.leaf(position), leaf(position));
    t.is(MerkleTree.rootFromPath(leaf(position), forest.path(position)), trees[tree]!.root);
  }
  t.throws(() => forest.rootOf(3), { message: /tree 3 is not open/ });
  t.throws(() => forest.path(10), { message: /out of range/ });
  t.throws(() => forest.leaf(-1), { message: /out of range/ });
});

test('a full tree stays current until the next commitment opens the next one', (t) => {
  const forest = new MerkleForest(20, 4);
  for (let i = 0; i < 4; i++) forest.insert(leaf(i));
  t.is(forest.currentTree, 0);
  t.is(forest.currentTreeLeaves, 4);
  const full = forest.root;
  forest.insert(leaf(4));
  t.is(forest.currentTree, 1);
  t.is(forest.currentTreeLeaves, 1);
  t.is(forest.rootOf(0), full, "the full tree's final root does not change");
});

test('the default capacity is the whole tree, and a capacity must be a power of two from 4 to 2^depth', (t) => {
  t.is(new MerkleForest(20).capacity, 2 ** 20);
  for (const bad of [0, 2, 3, 6, 12, 2 ** 21, 2.5, Number.NaN])
    t.throws(() => new MerkleForest(20, bad), { message: /power of two in 4\.\.2\^20/ }, String(bad));
  t.throws(() => new MerkleForest(20, 4).positionOf({ tree: 0, index: 4 }), { message: /outside a tree/ });
  t.throws(() => new MerkleForest(20, 4).placeOf(-1), { message: /non-negative/ });
});

test('a prepared deposit pins the entries of the trees that may fill before it lands', (t) => {
  // far from full: nothing
  t.deepEqual(treesThatMayFill({ tree: 3, leaves: 100, capacity: 2 ** 20 }), []);
  // within reach of the transactions that may land first: the current tree's
  t.deepEqual(treesThatMayFill({ tree: 3, leaves: 2 ** 20 - 10, capacity: 2 ** 20 }), [3]);
  t.deepEqual(treesThatMayFill({ tree: 3, leaves: 2 ** 20, capacity: 2 ** 20 }), [3]);
  // tiny trees: several may fill
  const small = treesThatMayFill({ tree: 0, leaves: 2, capacity: 8 });
  t.true(small.length >= 8, JSON.stringify(small));
  t.is(small[0], 0);
});
