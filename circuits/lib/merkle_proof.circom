// Root of a binary Poseidon2 Merkle tree from a leaf, its siblings and its index (one field element).
pragma circom 2.2.0;

include "poseidon2.circom";
include "bits.circom";

template MerkleRoot(levels) {
  signal input leaf;
  signal input pathElements[levels];
  signal input pathIndex;
  signal output root;

  component indexBits = Num2Bits(levels);
  indexBits.in <== pathIndex;

  component order[levels];
  component node[levels];
  for (var i = 0; i < levels; i++) {
    order[i] = Switcher();
    order[i].s <== indexBits.out[i];
    order[i].a <== i == 0 ? leaf : node[i - 1].out;
    order[i].b <== pathElements[i];
    node[i] = Poseidon2Compress();
    node[i].left <== order[i].left;
    node[i].right <== order[i].right;
  }
  root <== node[levels - 1].out;
}
