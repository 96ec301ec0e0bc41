// Bit decomposition and comparison gadgets.
pragma circom 2.2.0;

template Num2Bits(n) {
  signal input in;
  signal output out[n];
  var acc = 0;
  var weight = 1;
  for (var i = 0; i < n; i++) {
    out[i] <-- (in >> i) & 1;
    out[i] * (out[i] - 1) === 0;
    acc += out[i] * weight;
    weight += weight;
  }
  acc === in;
}

// Num2Bits(254) alone lets x and x + r share a field element; this also proves the bits, read as an integer,
// are below r, so they are the unique canonical bits of `in`. Walks from the top bit keeping "equal so far".
template Num2BitsCanonical() {
  signal input in;
  signal output out[254];
  component bits = Num2Bits(254);
  bits.in <== in;
  var r = 21888242871839275222246405745257275088548364400416034343698204186575808495617;
  var rMinusOne = r - 1;
  signal equalSoFar[255];
  signal eqAndBit[254];
  equalSoFar[254] <== 1;
  var less = 0;
  for (var i = 253; i >= 0; i--) {
    eqAndBit[i] <== equalSoFar[i + 1] * bits.out[i];
    if (((rMinusOne >> i) & 1) == 1) {
      // bit 0 where r−1 has 1: strictly less from here on.
      less += equalSoFar[i + 1] - eqAndBit[i];
      equalSoFar[i] <== eqAndBit[i];
    } else {
      // bit 1 where r−1 has 0 while equal so far would make the value exceed r−1.
      eqAndBit[i] === 0;
      equalSoFar[i] <== equalSoFar[i + 1];
    }
  }
  // Either strictly below r−1 at some bit, or exactly r−1: both are < r.
  less + equalSoFar[0] === 1;
  for (var i = 0; i < 254; i++) out[i] <== bits.out[i];
}

template IsZero() {
  signal input in;
  signal output out;
  signal inv <-- in != 0 ? 1 / in : 0;
  out <== 1 - in * inv;
  in * out === 0;
}

template IsEqual() {
  signal input in[2];
  signal output out;
  component isZero = IsZero();
  isZero.in <== in[1] - in[0];
  out <== isZero.out;
}

// If enabled is non-zero, in[0] must equal in[1].
template ForceEqualIfEnabled() {
  signal input enabled;
  signal input in[2];
  (in[1] - in[0]) * enabled === 0;
}

// Two-way selector: out = s ? [b, a] : [a, b]; s must be a bit (checked by the caller's decomposition).
template Switcher() {
  signal input s;
  signal input a;
  signal input b;
  signal output left;
  signal output right;
  signal d <== s * (b - a);
  left <== a + d;
  right <== b - d;
}
