// Radix-2 NTT over Fr (Montgomery form) on power-of-two domains, with roots derived from
// 5^((r-1)/2^28) exactly as ffjavascript/snarkjs do, so evaluation points match snarkjs zkeys.
#pragma once
#include <vector>

#include "arena.hpp"
#include "field.hpp"

namespace zk {

// Primitive 2^k-th root of unity in Montgomery form (k <= 28).
Fr rootOfUnity(int k);

class Domain {
 public:
  explicit Domain(int log2n);
  size_t size() const { return n_; }
  int log2() const { return log_; }
  // In-place forward transform: coefficients -> evaluations at w^i.
  void fft(Fr* a) const;
  // In-place inverse transform without the 1/n factor (callers fold it into a later scaling).
  void ifftUnscaled(Fr* a) const;

 private:
  void bitReverse(Fr* a) const;
  size_t n_;
  int log_;
  Scratch<Fr> roots_;  // w^i for i < n/2
};

}  // namespace zk
