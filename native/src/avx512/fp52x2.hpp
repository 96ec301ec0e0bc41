// Eight Fq2 = Fq[u]/(u^2 + 1) elements at once: two F52<Fq> vectors. Same value ranges as fp52.hpp.
#pragma once
#include "fp52.hpp"

namespace zk {
namespace avx512 {

struct V52x2 {
  V52 c0, c1;
};

template <class C>
struct F52x2 {
  typedef F52<C> B;
  static inline V52x2 add(const V52x2& a, const V52x2& b) { return V52x2{B::add(a.c0, b.c0), B::add(a.c1, b.c1)}; }
  static inline V52x2 sub(const V52x2& a, const V52x2& b) { return V52x2{B::sub(a.c0, b.c0), B::sub(a.c1, b.c1)}; }
  static inline V52x2 neg(const V52x2& a) { return V52x2{B::neg(a.c0), B::neg(a.c1)}; }
  static inline V52x2 canonical(const V52x2& a) { return V52x2{B::canonical(a.c0), B::canonical(a.c1)}; }
  static inline __mmask8 isZeroMask(const V52x2& canon) { return B::isZeroMask(canon.c0) & B::isZeroMask(canon.c1); }
  static inline V52x2 blend(__mmask8 takeB, const V52x2& a, const V52x2& b) {
    return V52x2{B::blend(takeB, a.c0, b.c0), B::blend(takeB, a.c1, b.c1)};
  }
  // Karatsuba: three base multiplications; the sums go in unreduced (< 4p is a valid mul input).
  static inline V52x2 mul(const V52x2& a, const V52x2& b) {
    V52 t0 = B::mul(a.c0, b.c0);
    V52 t1 = B::mul(a.c1, b.c1);
    V52 t2 = B::mul(B::addLazy(a.c0, a.c1), B::addLazy(b.c0, b.c1));
    return V52x2{B::sub(t0, t1), B::sub(B::sub(t2, t0), t1)};
  }
  // (a + bu)^2 = (a + b)(a - b) + 2ab u
  static inline V52x2 sqr(const V52x2& a) {
    V52 t = B::mul(a.c0, a.c1);
    return V52x2{B::mul(B::addLazy(a.c0, a.c1), B::sub(a.c0, a.c1)), B::add(t, t)};
  }
};

}  // namespace avx512
}  // namespace zk
