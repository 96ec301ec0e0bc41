pragma circom 2.0.0;

// Small test circuit: bit decomposition (0/1 witness values), a product chain (full-size values),
// a negated value (r - k) and one public input plus one public output.
template Small(nBits, nSquares) {
    signal input a;
    signal input b;
    signal input pub;
    signal output out;

    signal bits[nBits];
    var acc = 0;
    var e = 1;
    for (var i = 0; i < nBits; i++) {
        bits[i] <-- (a >> i) & 1;
        bits[i] * (bits[i] - 1) === 0;
        acc += bits[i] * e;
        e = e + e;
    }
    acc === a;

    signal sq[nSquares + 1];
    sq[0] <== b;
    for (var i = 0; i < nSquares; i++) {
        sq[i + 1] <== sq[i] * sq[i] + 7;
    }

    signal neg;
    neg <== (0 - a) * pub;
    out <== sq[nSquares] + neg;
}

component main {public [pub]} = Small(16, 8);
