pragma circom 2.1.0;

// Test circuit for the prover daemon. Repeated squaring sets the number of constraints; the `expected`
// check lets a test violate a constraint; `salt` is an array input for shape checks; `work` makes
// witness generation spin for a chosen number of steps (no constraints), so queue, deadline and
// cancellation tests can keep a witness worker busy for as long as they need.
function spin(seed, steps) {
    var acc = seed;
    for (var i = 0; i < steps; i++) {
        acc = acc * acc + i;
    }
    return acc;
}

template Square() {
    signal input in;
    signal output out;
    out <== in * in;
}

template PowerChain(n) {
    signal input x;
    signal input salt[2];
    signal input expected;   // must equal x^(2^n)
    signal input work;
    signal output tag;

    signal chain[n + 1];
    component squares[n];
    chain[0] <== x;
    for (var i = 0; i < n; i++) {
        squares[i] = Square();
        squares[i].in <== chain[i];
        chain[i + 1] <== squares[i].out;
    }
    chain[n] === expected;

    signal spun;
    spun <-- spin(x, work);
    signal spunSquared <== spun * spun;
    tag <== salt[0] * salt[1] + expected + 0 * spunSquared;
}
