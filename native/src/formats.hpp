// Parsed .zkey (Groth16), .wtns and .r1cs files, in the iden3 binary layouts (sections by id): snarkjs's
// src/zkey_utils.js and src/wtns_utils.js, and https://github.com/iden3/r1csfile/blob/master/doc/r1cs_bin_format.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arena.hpp"
#include "binfile.hpp"
#include "curve.hpp"

namespace zk {

// A read-only array inside storage the key owns (a file mapping or a vector).
template <class T>
struct Span {
  const T* ptr = nullptr;
  size_t n = 0;
  const T* data() const { return ptr; }
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const T& operator[](size_t i) const { return ptr[i]; }
};

// A coefficient record of zkey section 4, used where it lies: u32 matrix (0 = A, 1 = B), u32 constraint,
// u32 signal, then the value v as stored, v*R^2 mod r (R = 2^256): a Montgomery multiplication of it
// with a plain witness value w gives v*w*R, the Montgomery form of v*w, with no conversion.
constexpr size_t kCoefRecord = 44;

struct ZKey {
  uint32_t nVars = 0, nPublic = 0, domainSize = 0;
  int log2Domain = 0;
  G1A alpha1, beta1, delta1;
  G2A beta2, gamma2, delta2;
  std::vector<G1A> IC;  // verification key part, for the self-check of every proof
  // Section 4 records (kCoefRecord bytes each, any alignment; read with memcpy).
  const uint8_t* coefs = nullptr;
  uint32_t nCoefs = 0;
  Span<G1A> A, B1, C, H;
  Span<G2A> B2;
  // The query bases again in the AVX-512 MSM's form (msm_avx512.hpp), or empty.
  Span<uint64_t> A52, B1_52, C52, H52, B2_52;
  // What the pointers above point into: file mappings and/or vectors.
  std::vector<std::shared_ptr<const void>> storage;
  // The proofs' working memory, kept between them (prepareProver in prover.hpp), or null: the heap.
  std::shared_ptr<ArenaPool> work;
};

// Parses and validates a Groth16 BN254 zkey held in memory (primes, sizes, coefficient ranges, points on
// the curve); the key keeps its own copies of what it uses.
std::unique_ptr<ZKey> parseZKey(const uint8_t* data, size_t size);

// The parts of a zkey every load reads and checks (container, header, IC, section sizes): cheap. The
// query points and coefficients are only located here; validateZKeyBody checks them.
struct ZKeyLayout {
  std::unique_ptr<ZKey> key;  // header fields and IC filled in; coefs points into the data
  const uint8_t* sections[10] = {};  // data of sections 5..9 (A, B1, B2, C, H) at [5..9]
};
ZKeyLayout readZKeyLayout(const uint8_t* data, size_t size);

// Full validation of what readZKeyLayout left out: every coefficient in range, every query point on
// its curve (coordinates < q). Fills key.A..key.H with owned, aligned copies (and their 52-bit forms
// when withVector).
void validateZKeyBody(ZKeyLayout& layout, bool withVector);

// The check validation leaves out because it costs ~0.16 ms of CPU per point: every G2 point of the key
// (beta2, gamma2, delta2 and the B2 query) in the order-r subgroup. For importing keys from outside;
// throws a FormatError naming the first point that is not.
void checkKeySubgroups(const ZKey& key);

struct Witness {
  Scratch<uint64_t> values;  // 4 limbs per value, plain form, each < r (in the current arena, if any)
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
