// Montgomery's batch inversion (one field inversion for n elements) in the form the batch-affine
// additions use: push(i, d) for i = 0..n-1, invert(), then next(i) for i = n-1 down to 0 returns 1/d_i.
// Over Fq2 the chain runs on norms in Fq, since 1/d = conj(d) / N(d) with N(d) = d0^2 + d1^2: 7 base
// multiplications per element instead of 9 for the chain in Fq2 (3 Fq2 multiplications).
// Every d must be nonzero (a nonzero Fq2 element has a nonzero norm: -1 is not a square in Fq).
#pragma once
#include <cstddef>
#include <vector>

#include "field.hpp"

namespace zk {

template <class F>
class BatchInverse {
 public:
  void begin(size_t n) {
    den_.resize(n);
    prefix_.resize(n);
    run_ = F::one();
  }
  ZK_INLINE void push(size_t i, const F& d) {
    den_[i] = d;
    prefix_[i] = run_;
    run_ = F::mul(run_, d);
  }
  void invert() { inv_ = F::invVartime(run_); }
  ZK_INLINE F next(size_t i) {
    F r = F::mul(inv_, prefix_[i]);
    inv_ = F::mul(inv_, den_[i]);
    return r;
  }

 private:
  std::vector<F> den_, prefix_;
  F run_, inv_;
};

template <>
class BatchInverse<Fq2> {
 public:
  void begin(size_t n) {
    den_.resize(n);
    norm_.resize(n);
    prefix_.resize(n);
    run_ = Fq::one();
  }
  ZK_INLINE void push(size_t i, const Fq2& d) {
    den_[i] = d;
    Fq n = Fq::add(Fq::sqr(d.c0), Fq::sqr(d.c1));
    norm_[i] = n;
    prefix_[i] = run_;
    run_ = Fq::mul(run_, n);
  }
  void invert() { inv_ = Fq::invVartime(run_); }
  ZK_INLINE Fq2 next(size_t i) {
    Fq ni = Fq::mul(inv_, prefix_[i]);
    inv_ = Fq::mul(inv_, norm_[i]);
    return Fq2{Fq::mul(den_[i].c0, ni), Fq::neg(Fq::mul(den_[i].c1, ni))};
  }

 private:
  std::vector<Fq2> den_;
  std::vector<Fq> norm_, prefix_;
  Fq run_, inv_;
};

}  // namespace zk
