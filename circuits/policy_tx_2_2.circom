// The pool circuit: 2 inputs, 2 outputs, pool depth 20, ASP allowlist depth 20, blocklist SMT depth 10.
pragma circom 2.2.0;

include "lib/policy_transaction.circom";

component main {public [root, publicAmount, extDataHash, inputNullifier, outputCommitment, membershipRoots, nonMembershipRoots]} = PolicyTransaction(2, 2, 20, 20, 10);
