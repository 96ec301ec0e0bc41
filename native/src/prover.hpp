// Groth16 prover over a parsed zkey and witness (snarkjs/rapidsnark algorithm, research/prover.md §1.5).
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
