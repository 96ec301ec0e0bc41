// Proves `key` is absent from a canonical Poseidon2 sparse Merkle tree (the ASP blocklist).
// The node on key's path just below the deepest non-zero sibling is either empty (isOld0 = 1) or a leaf of
// another key (oldKey ≠ key); hashing it up along key's bits must give the root.
pragma circom 2.2.0;

include "poseidon2.circom";
include "bits.circom";

template SmtNonMembership(levels) {
  signal input root;
  signal input key;
  signal input siblings[levels];
  signal input oldKey;
  signal input oldValue;
  signal input isOld0;

  isOld0 * (isOld0 - 1) === 0;

  component keyBits = Num2BitsCanonical();
  keyBits.in <== key;

  // A leaf of another key answers the query only if that key differs.
  component sameKey = IsEqual();
  sameKey.in[0] <== oldKey;
  sameKey.in[1] <== key;
  (1 - isOld0) * sameKey.out === 0;

  component oldLeaf = Poseidon2Hash(2, 1);
  oldLeaf.in[0] <== oldKey;
  oldLeaf.in[1] <== oldValue;
  signal answer <== (1 - isOld0) * oldLeaf.out;

  // below[i] = 1 when siblings[i..levels-1] are all zero: levels at and below the answering node.
  component zero[levels];
  signal below[levels + 1];
  below[levels] <== 1;
  for (var i = levels - 1; i >= 0; i--) {
    zero[i] = IsZero();
    zero[i].in <== siblings[i];
    below[i] <== below[i + 1] * zero[i].out;
  }

  component order[levels];
  component node[levels];
  signal level[levels + 1];
  signal keep[levels];
  level[levels] <== answer;
  for (var i = levels - 1; i >= 0; i--) {
    order[i] = Switcher();
    order[i].s <== keyBits.out[i];
    order[i].a <== level[i + 1];
    order[i].b <== siblings[i];
    node[i] = Poseidon2Compress();
    node[i].left <== order[i].left;
    node[i].right <== order[i].right;
    // Above the answering node hash upward; at and below it pass the answer through unchanged.
    keep[i] <== below[i] * (level[i + 1] - node[i].out);
    level[i] <== node[i].out + keep[i];
  }
  root === level[0];
}
