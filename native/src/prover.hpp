// Groth16 prover over a parsed zkey and witness: the algorithm of snarkjs's src/groth16_prove.js and of
// rapidsnark (H evaluated on the odd coset of the domain, then five MSMs).
#pragma once
#include "formats.hpp"

namespace zk {

struct Proof {
  G1A A;
  G2A B;
  G1A C;
};

// Validates that the witness belongs to this key, then proves. Throws std::runtime_error on bad input.
Proof prove(const ZKey& key, const Witness& w);

}  // namespace zk
