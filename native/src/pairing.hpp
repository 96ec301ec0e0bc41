// BN254 optimal ate pairing (Fq12 = Fq6[w]/(w^2 - v), Fq6 = Fq2[v]/(v^3 - (9 + u))), used only to check
// Groth16 proofs: whether a product of pairings is 1. Affine Miller loop, plain final exponentiation:
// a few milliseconds, far below the cost of proving.
#pragma once
#include <utility>
#include <vector>

#include "curve.hpp"

namespace zk {

bool pairingProductIsOne(const std::vector<std::pair<G1A, G2A>>& pairs);

}  // namespace zk
