pragma circom 2.0.0;

// Smallest useful circuit: out = a * b with a public, so the domain is only 4 rows.
template Tiny() {
    signal input a;
    signal input b;
    signal output out;
    out <== a * b;
}

component main {public [a]} = Tiny();
