// The H evaluations of the prover on AVX-512 IFMA (fft_avx512.cpp). Portable header.
#pragma once
#include <cstdint>

#include "field.hpp"

namespace zk {

// Smallest domain the vector path handles (one butterfly across vectors needs 16 elements).
constexpr int kMinLog2Ntt52 = 4;

// From the evaluations of A·w, B·w and C·w on the domain of size 2^log2n (scalar Montgomery form),
// computes h_i = (A·B − C)(g·w^i), the evaluations on the odd coset that snarkjs zkeys expect, as
// plain integers (4 words each, in hOut). Each input is interpolated (inverse DIF NTT, bit-reversed
// output), scaled by g^j / n and evaluated (DIT NTT, natural output), so no bit reversal pass is
// needed. Call only when avx512MsmEnabled() and log2n >= kMinLog2Ntt52.
void cosetHEvaluations52(int log2n, const Fr* a, const Fr* b, const Fr* c, uint64_t* hOut);

// Builds the twiddle and coset tables of that domain size now (they are built on first use and kept).
void warmCosetTables52(int log2n);

}  // namespace zk
