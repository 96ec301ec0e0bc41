// Montgomery's batch inversion (one field inversion for n elements) in the form the batch-affine
// additions use: push(i, d) for i = 0..n-1, invert(), then next(i) for i = n-1 down to 0 returns 1/d_i.
// The products along the chains are only ever multiplied, so they skip the final subtraction (mulLazy);
// over Fq, next(i) may return 1/d_i + P, for use as a multiplication's operand only.
// Over Fq2 the chain runs on norms in Fq, since 1/d = conj(d) / N(d) with N(d) = d0^2 + d1^2: 7 base
// multiplications per element instead of 9 for the chain in Fq2 (3 Fq2 multiplications).
// Every d must be nonzero (a nonzero Fq2 element has a nonzero norm: -1 is not a square in Fq).
// The running products form kChains interleaved chains (element i joins chain i % kChains): each product
// waits for the one before it, so a single chain runs at the multiplication's latency, while two let
// the core overlap them. Full-scalar circuit, AVX2-only, one thread: 760 -> 685 ms per proof; three,
// four or six chains gained nothing more.
#pragma once
#include <cstddef>
#include <vector>

#include "arena.hpp"
#include "field.hpp"

namespace zk {

constexpr size_t kChains = 2;

// inv[k] = 1 / run[k] for every chain, with one inversion: 1/run_k = (prod_{j != k} run_j) / prod_j run_j.
template <class F>
ZK_INLINE void invertChains(const F (&run)[kChains], F (&inv)[kChains]) {
  F before[kChains];  // before[k] = run_0 * ... * run_{k-1}
  before[0] = F::one();
  for (size_t k = 1; k < kChains; k++) before[k] = F::mul(before[k - 1], run[k - 1]);
  F all = F::invVartime(F::mul(before[kChains - 1], run[kChains - 1]));
  for (size_t k = kChains; k-- > 0;) {  // all = 1 / (run_0 * ... * run_k) on entry
    inv[k] = F::mul(all, before[k]);
    all = F::mul(all, run[k]);
  }
}

template <class F>
class BatchInverse {
 public:
  void begin(size_t n) {
    den_.resize(n);
    prefix_.resize(n);
    for (F& r : run_) r = F::one();
  }
  ZK_INLINE void push(size_t i, const F& d) {
    F& run = run_[i % kChains];
    den_[i] = d;
    prefix_[i] = run;
    run = F::mulLazy(run, d);
  }
  void invert() { invertChains(run_, inv_); }
  ZK_INLINE F next(size_t i) {
    F& inv = inv_[i % kChains];
    F r = F::mulLazy(inv, prefix_[i]);
    inv = F::mulLazy(inv, den_[i]);
    return r;
  }

 private:
  Scratch<F> den_, prefix_;
  F run_[kChains], inv_[kChains];
};

template <>
class BatchInverse<Fq2> {
 public:
  void begin(size_t n) {
    den_.resize(n);
    norm_.resize(n);
    prefix_.resize(n);
    for (Fq& r : run_) r = Fq::one();
  }
  ZK_INLINE void push(size_t i, const Fq2& d) {
    Fq& run = run_[i % kChains];
    den_[i] = d;
    Fq n = Fq::addLazy(Fq::sqr(d.c0), Fq::sqr(d.c1));  // only multiplied: may stay unreduced
    norm_[i] = n;
    prefix_[i] = run;
    run = Fq::mulLazy(run, n);
  }
  void invert() { invertChains(run_, inv_); }
  ZK_INLINE Fq2 next(size_t i) {
    Fq& inv = inv_[i % kChains];
    Fq ni = Fq::mulLazy(inv, prefix_[i]);
    inv = Fq::mulLazy(inv, norm_[i]);
    return Fq2{Fq::mul(den_[i].c0, ni), Fq::neg(Fq::mul(den_[i].c1, ni))};
  }

 private:
  Scratch<Fq2> den_;
  Scratch<Fq> norm_, prefix_;
  Fq run_[kChains], inv_[kChains];
};

}  // namespace zk
