// Groth16 verification: e(-A, B) e(alpha, beta) e(IC(pub), gamma) e(C, delta) == 1.
#pragma once
#include <vector>

#include "bigint.hpp"
#include "prover.hpp"

namespace zk {

struct VerifyingKey {
  G1A alpha1;
  G2A beta2, gamma2, delta2;
  std::vector<G1A> IC;
};

VerifyingKey verifyingKeyOf(const ZKey& key);
// Public signals are plain integers; any value >= r, a wrong count, or B outside the r-torsion is false.
bool verifyGroth16(const VerifyingKey& vk, const Proof& proof, const std::vector<U256>& publicSignals);

}  // namespace zk
