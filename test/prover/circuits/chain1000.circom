pragma circom 2.0.0;

// A 1,000-constraint square chain (2^10 domain): small enough for a full snarkjs ceremony in the
// benchmark that compares it with devSetup.
template SquareChain(n) {
    signal input x;
    signal input c;
    signal output out;
    signal chain[n + 1];
    chain[0] <== x;
    for (var i = 0; i < n; i++) {
        chain[i + 1] <== chain[i] * chain[i] + c;
    }
    out <== chain[n];
}

component main {public [c]} = SquareChain(1000);
