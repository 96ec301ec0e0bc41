// Parsed .zkey (Groth16), .wtns and .r1cs files, in the iden3 binary layouts (sections by id): snarkjs's
// src/zkey_utils.js and src/wtns_utils.js, and https://github.com/iden3/r1csfile/blob/master/doc/r1cs_bin_format.md.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "binfile.hpp"
#include "curve.hpp"

namespace zk {

struct Coef {
  uint32_t matrix;      // 0 = A, 1 = B
  uint32_t constraint;  // row in the evaluation domain
  uint32_t signal;
  Fr value;  // Montgomery form
};

struct ZKey {
  uint32_t nVars = 0, nPublic = 0, domainSize = 0;
  int log2Domain = 0;
  G1A alpha1, beta1, delta1;
  G2A beta2, gamma2, delta2;
  std::vector<Coef> coefs;  // sorted by constraint within each matrix
  std::vector<G1A> A, B1, C, H;
  std::vector<G1A> IC;  // verification key part, for the self-check of every proof
  std::vector<G2A> B2;
  // The query bases again in the AVX-512 MSM's form (msm_avx512.hpp), when that path is enabled.
  std::vector<uint64_t> A52, B1_52, C52, H52, B2_52;
};

// Parses and validates a Groth16 BN254 zkey (primes, sizes, points on the curve).
std::unique_ptr<ZKey> parseZKey(const uint8_t* data, size_t size);

// The check parseZKey leaves out because it costs ~0.16 ms of CPU per point: every G2 point of the key
// (beta2, gamma2, delta2 and the B2 query) in the order-r subgroup. For importing keys from outside;
// throws a FormatError naming the first point that is not.
void checkKeySubgroups(const ZKey& key);

struct Witness {
  std::vector<uint64_t> values;  // 4 limbs per value, plain form, each < r
  size_t size() const { return values.size() / 4; }
  const uint64_t* at(size_t i) const { return values.data() + 4 * i; }
};

Witness parseWtns(const uint8_t* data, size_t size);

struct R1csTerm {
  uint32_t signal;
  Fr value;  // Montgomery form
};
struct R1csConstraint {
  std::vector<R1csTerm> a, b, c;
};
struct R1cs {
  uint32_t nWires = 0, nPubOut = 0, nPubIn = 0, nPrvIn = 0, nConstraints = 0;
  std::vector<R1csConstraint> constraints;
  uint32_t nPublic() const { return nPubOut + nPubIn; }
};

R1cs parseR1cs(const uint8_t* data, size_t size);

}  // namespace zk
