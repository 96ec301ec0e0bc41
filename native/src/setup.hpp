// Development-only Groth16 setup: a snarkjs-compatible zkey from an r1cs and fresh random toxic
// waste (tau, alpha, beta, gamma, delta), which is discarded afterwards. Anyone who kept it could
// forge proofs, so production keys come from an MPC ceremony instead.
#pragma once
#include <vector>

#include "formats.hpp"

namespace zk {

extern const char* const DEV_KEY_NAME;

std::vector<uint8_t> devSetup(const R1cs& r1cs);

}  // namespace zk
