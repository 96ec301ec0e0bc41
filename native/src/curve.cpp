// Generators and curve-membership checks for BN254 G1 and G2.
#include "curve.hpp"

#include <cstdlib>

#include "bigint.hpp"

namespace zk {

bool cpuHasAdx() {
#if ZK_X86_ADX
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("adx");
#else
  return false;
#endif
}
const bool kUseAdx = cpuHasAdx() && std::getenv("ZKPROVER_PORTABLE") == nullptr;

static Fq fqDec(const char* s) { return Fq::toMont(Fq::raw(decimalToLimbs(s).v)); }

G1A g1Generator() { return G1A{Fq::fromU64(1), Fq::fromU64(2)}; }

G2A g2Generator() {
  return G2A{Fq2{fqDec("10857046999023057135944570762232829481370756359578518086990519993285655852781"),
                 fqDec("11559732032986387107991004021392285783925812861821192530917403151452391805634")},
             Fq2{fqDec("8495653923123431417604973247489272438418190587263600148770280649306958101930"),
                 fqDec("4082367875863433681332203403145435568316851327593401208105741076214120093531")}};
}

bool g1OnCurve(const G1A& p) {
  if (p.isInfinity()) return true;
  Fq lhs = Fq::sqr(p.y);
  Fq rhs = Fq::add(Fq::mul(Fq::sqr(p.x), p.x), Fq::fromU64(3));
  return lhs == rhs;
}

bool g2OnCurve(const G2A& p) {
  if (p.isInfinity()) return true;
  // b' = 3 / (9 + u) for the D-type sextic twist.
  static const Fq2 b2 = Fq2::mul(Fq2{Fq::fromU64(3), Fq::zero()}, Fq2::inv(Fq2{Fq::fromU64(9), Fq::fromU64(1)}));
  Fq2 lhs = Fq2::sqr(p.y);
  Fq2 rhs = Fq2::add(Fq2::mul(Fq2::sqr(p.x), p.x), b2);
  return lhs == rhs;
}

bool g2InSubgroup(const G2A& p) {
  if (p.isInfinity()) return true;
  return G2P::mulScalar(G2P::fromAffine(p), FrParams::P).isInfinity();
}

}  // namespace zk
