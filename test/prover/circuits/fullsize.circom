pragma circom 2.0.0;

// Benchmark circuit whose witness values are all full-size field elements: x_{i+1} = x_i^2 + c.
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

component main {public [c]} = SquareChain(30000);
