// Poseidon2 over BN254 (x^5, 4 + 56 + 4 rounds, t = 2, 3, 4), the fixed-width hash and the Merkle compression.
// Linear layers are carried as linear expressions in `var`s, so only the S-boxes cost constraints (3 each).
pragma circom 2.2.0;

include "poseidon2_constants.circom";

template Pow5() {
  signal input in;
  signal output out;
  signal x2 <== in * in;
  signal x4 <== x2 * x2;
  out <== x4 * in;
}

// One S-box constraint set per full-round lane and one per partial round.
template Poseidon2Permutation(t) {
  signal input in[t];
  signal output out[t];

  var rcExt[8][4] = poseidon2ExternalConstants(t);
  var rcInt[56] = poseidon2InternalConstants(t);
  var diag[4] = poseidon2InternalDiagMinusOne(t);

  component fullSbox[8][t];
  component partialSbox[56];

  // Lanes beyond t stay zero; arrays are sized 4 because circom functions need constant lengths.
  var s[4] = [0, 0, 0, 0];
  var mixed[4];
  for (var i = 0; i < t; i++) s[i] = in[i];
  mixed = poseidon2ExternalMix(t, s);
  s = mixed;

  for (var r = 0; r < 8; r++) {
    if (r == 4) {
      for (var p = 0; p < 56; p++) {
        partialSbox[p] = Pow5();
        partialSbox[p].in <== s[0] + rcInt[p];
        s[0] = partialSbox[p].out;
        var sum = 0;
        for (var i = 0; i < t; i++) sum += s[i];
        for (var i = 0; i < t; i++) s[i] = sum + diag[i] * s[i];
      }
    }
    for (var i = 0; i < t; i++) {
      fullSbox[r][i] = Pow5();
      fullSbox[r][i].in <== s[i] + rcExt[r][i];
      s[i] = fullSbox[r][i].out;
    }
    mixed = poseidon2ExternalMix(t, s);
    s = mixed;
  }
  for (var i = 0; i < t; i++) out[i] <== s[i];
}

// circ(2, 1, …) for t = 2, 3; the paper's M4 for t = 4. Works on linear expressions.
function poseidon2ExternalMix(t, s) {
  var out[4] = [0, 0, 0, 0];
  if (t == 4) {
    var t0 = s[0] + s[1];
    var t1 = s[2] + s[3];
    var t2 = 2 * s[1] + t1;
    var t3 = 2 * s[3] + t0;
    var t4 = 4 * t1 + t3;
    var t5 = 4 * t0 + t2;
    out[0] = t3 + t5;
    out[1] = t5;
    out[2] = t2 + t4;
    out[3] = t4;
  } else {
    var sum = 0;
    for (var i = 0; i < t; i++) sum += s[i];
    for (var i = 0; i < t; i++) out[i] = sum + s[i];
  }
  return out;
}

// hash(inputs, dom) = Poseidon2([inputs..., dom])[0], state width n + 1.
template Poseidon2Hash(n, dom) {
  signal input in[n];
  signal output out;
  component perm = Poseidon2Permutation(n + 1);
  for (var i = 0; i < n; i++) perm.in[i] <== in[i];
  perm.in[n] <== dom;
  out <== perm.out[0];
}

// compress(l, r) = Poseidon2([l, r])[0] + l: every binary Merkle node.
template Poseidon2Compress() {
  signal input left;
  signal input right;
  signal output out;
  component perm = Poseidon2Permutation(2);
  perm.in[0] <== left;
  perm.in[1] <== right;
  out <== perm.out[0] + left;
}
