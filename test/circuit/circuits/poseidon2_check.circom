// Test harness: exposes the circuit's Poseidon2 permutations (t = 2, 3, 4), hash and compression.
pragma circom 2.2.0;

include "../../../circuits/lib/poseidon2.circom";

template Poseidon2Check() {
  signal input in2[2];
  signal input in3[3];
  signal input in4[4];
  signal output out2[2];
  signal output out3[3];
  signal output out4[4];
  signal output compressed;
  signal output hashed;

  component p2 = Poseidon2Permutation(2);
  component p3 = Poseidon2Permutation(3);
  component p4 = Poseidon2Permutation(4);
  p2.in <== in2;
  p3.in <== in3;
  p4.in <== in4;
  out2 <== p2.out;
  out3 <== p3.out;
  out4 <== p4.out;

  component c = Poseidon2Compress();
  c.left <== in2[0];
  c.right <== in2[1];
  compressed <== c.out;

  component h = Poseidon2Hash(3, 7);
  h.in[0] <== in3[0];
  h.in[1] <== in3[1];
  h.in[2] <== in3[2];
  hashed <== h.out;
}

component main = Poseidon2Check();
