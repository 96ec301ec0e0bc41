// The AVX-512 IFMA path of the MSM bucket phase (msm_avx512.cpp): batch-affine bucket additions eight
// at a time. This header is portable; only msm_avx512.cpp is compiled for AVX-512.
#pragma once
#include <cstdint>
#include <vector>

#include "arena.hpp"
#include "curve.hpp"

namespace zk {

// True when the CPU has AVX-512F and IFMA and ZKPROVER_NO_AVX512 is unset (checked once).
bool avx512MsmEnabled();
// True when the CPU has AVX-512F and IFMA, whatever ZKPROVER_NO_AVX512 says.
bool avx512MsmSupported();

// Bases in the vector path's form: per point x then y, each coordinate in Montgomery form with R = 2^260
// (x * 2^260 mod p, < p) packed in 4 (G1) or 8 (G2) 64-bit words, the same size as the key's own form;
// the vector path splits them into 52-bit limbs as it gathers them. Infinity stays all-zero.
std::vector<uint64_t> toBases52(const G1A* bases, size_t n);
std::vector<uint64_t> toBases52(const G2A* bases, size_t n);
// The same into out (kBase52Words<F> * n words).
void toBases52(const G1A* bases, size_t n, uint64_t* out);
void toBases52(const G2A* bases, size_t n, uint64_t* out);
// Words per point of that form.
template <class F>
constexpr size_t kBase52Words = 8 * (sizeof(F) / sizeof(Fq));

// One point of that form back as an affine point (the F argument only selects G1 or G2).
G1A fromBase52(const uint64_t* words, const Fq*);
G2A fromBase52(const uint64_t* words, const Fq2*);

// One bucket addition: bucket index (bit 31 set = subtract the base) and base index.
struct BucketOp {
  uint32_t bucket;
  uint32_t base;
};
constexpr uint32_t kBucketNegate = 1u << 31;

// Applies ops to nBuckets buckets that start empty. On return buckets[k] is the affine sum of its
// additions, plus overflow[k] when overflow is non-empty (additions that piled onto a hot bucket).
void accumulateBuckets52(const uint64_t* bases52, const BucketOp* ops, size_t nOps, size_t nBuckets,
                         Scratch<G1A>& buckets, Scratch<G1P>& overflow);
void accumulateBuckets52(const uint64_t* bases52, const BucketOp* ops, size_t nOps, size_t nBuckets,
                         Scratch<G2A>& buckets, Scratch<G2P>& overflow);

}  // namespace zk
