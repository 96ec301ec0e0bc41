#include "verifier.hpp"

#include "pairing.hpp"

namespace zk {

VerifyingKey verifyingKeyOf(const ZKey& key) { return VerifyingKey{key.alpha1, key.beta2, key.gamma2, key.delta2, key.IC}; }

bool verifyGroth16(const VerifyingKey& vk, const Proof& proof, const std::vector<U256>& publicSignals) {
  if (publicSignals.size() + 1 != vk.IC.size()) return false;
  if (!g1OnCurve(proof.A) || !g1OnCurve(proof.C) || !g2OnCurve(proof.B)) return false;
  // G2 has a cofactor: B must be in the order-r subgroup.
  if (!G2P::mulScalar(G2P::fromAffine(proof.B), FrParams::P).isInfinity()) return false;
  G1P L = G1P::fromAffine(vk.IC[0]);
  for (size_t i = 0; i < publicSignals.size(); i++) {
    if (limbsGeq(publicSignals[i].v, FrParams::P)) return false;
    L.add(G1P::mulScalar(G1P::fromAffine(vk.IC[i + 1]), publicSignals[i].v));
  }
  std::vector<std::pair<G1A, G2A>> pairs = {
      {proof.A.negate(), proof.B}, {vk.alpha1, vk.beta2}, {L.toAffine(), vk.gamma2}, {proof.C, vk.delta2}};
  return pairingProductIsOne(pairs);
}

}  // namespace zk
