import test from 'ava';
import {
  compress,
  FIELD_MODULUS,
  SparseMerkleTree,
  smtLeafHash,
  verifyNonMembership,
} from '../../src/crypto/index.ts';

test('an empty tree has root 0 and proves absence with an empty slot', (t) => {
  const tree = new SparseMerkleTree();
  t.is(tree.root, 0n);
  const proof = tree.nonMembershipProof(5n, 10);
  t.is(proof.isOld0, 1n);
  t.deepEqual(proof.siblings, new Array(10).fill(0n));
  t.true(verifyNonMembership(0n, 5n, proof));
});

test('a single leaf is the root; two leaves split at their first differing bit', (t) => {
  const tree = new SparseMerkleTree();
  tree.insert(0b101n, 1n);
  t.is(tree.root, smtLeafHash(0b101n, 1n));
  tree.insert(0b001n, 2n);
  // LSB first: both go right at level 0 (bit 1) and left at level 1 (bit 0), then split at bit 2.
  const expected = compress(0n, compress(compress(smtLeafHash(0b001n, 2n), smtLeafHash(0b101n, 1n)), 0n));
  t.is(tree.root, expected);
});

test('find reports membership, and non-membership proofs verify', (t) => {
  const tree = new SparseMerkleTree();
  const keys = [1n, 2n, 3n, 8n, 17n, 1234567n];
  for (const k of keys) tree.insert(k, k * 10n);
  for (const k of keys) {
    const res = tree.find(k);
    t.true(res.found);
    t.is(res.foundValue, k * 10n);
    t.throws(() => tree.nonMembershipProof(k, 10), { message: /in the blocklist/ });
  }
  for (const k of [0n, 4n, 5n, 9n, 33n, 99999n]) {
    const proof = tree.nonMembershipProof(k, 10);
    t.true(verifyNonMembership(tree.root, k, proof), `absence of ${k}`);
    t.false(verifyNonMembership(tree.root + 1n, k, proof));
  }
});

test('a forged proof for a present key does not verify', (t) => {
  const tree = new SparseMerkleTree();
  for (const k of [1n, 2n, 3n, 6n]) tree.insert(k, 1n);
  const proofFor5 = tree.nonMembershipProof(5n, 10);
  t.false(verifyNonMembership(tree.root, 1n, proofFor5));
  t.false(verifyNonMembership(tree.root, 3n, { ...tree.nonMembershipProof(7n, 10), isOld0: 1n }));
  t.false(verifyNonMembership(tree.root, 5n, { ...proofFor5, isOld0: 2n }));
});

test('delete collapses back to the same root as never inserting', (t) => {
  const a = new SparseMerkleTree();
  const b = new SparseMerkleTree();
  for (const k of [4n, 12n, 20n]) {
    a.insert(k, 1n);
    b.insert(k, 1n);
  }
  a.insert(28n, 1n);
  a.delete(28n);
  t.is(a.root, b.root);
  a.delete(4n);
  a.delete(12n);
  a.delete(20n);
  t.is(a.root, 0n);
  t.throws(() => a.delete(4n), { message: /not in the tree/ });
});

test('paths deeper than the circuit are refused rather than truncated', (t) => {
  const tree = new SparseMerkleTree();
  // Keys equal in their low 12 bits force a path of depth 13.
  tree.insert(1n, 1n);
  tree.insert(1n + (1n << 12n), 1n);
  const key = 1n + (1n << 13n);
  t.throws(() => tree.nonMembershipProof(key, 10), { message: /more than the circuit's 10/ });
  t.true(verifyNonMembership(tree.root, key, tree.nonMembershipProof(key, 20)));
});

test('bad input throws', (t) => {
  const tree = new SparseMerkleTree();
  tree.insert(1n, 1n);
  t.throws(() => tree.insert(1n, 2n), { message: /already/ });
  t.throws(() => tree.insert(FIELD_MODULUS, 1n), { message: /key/ });
  t.throws(() => tree.insert(2n, -1n), { message: /value/ });
  t.throws(() => tree.find(-3n), { message: /key/ });
  t.throws(() => tree.nonMembershipProof(2n, 0), { message: /depth/ });
  t.throws(() => tree.update(9n, 1n), { message: /not in the tree/ });
  t.is(tree.size, 1);
});
