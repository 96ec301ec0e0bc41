pragma circom 2.1.0;
include "power_chain.circom";

component main {public [expected]} = PowerChain(8);
