// Short Weierstrass curves y^2 = x^3 + b (a = 0) over Fq (G1) and Fq2 (G2).
// Affine points use (0,0) for infinity, as the zkey format does. Accumulators use XYZZ coordinates
// (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) with EFD formulas madd-2008-s, add-2008-s and dbl-2008-s-1;
// every special case (infinity, P == Q, P == -Q) is handled in the formulas' callers below.
#pragma once
#include <vector>

#include "field.hpp"

namespace zk {

template <class F>
struct Affine {
  F x, y;
  static inline Affine infinity() { return Affine{F::zero(), F::zero()}; }
  inline bool isInfinity() const { return x.isZero() && y.isZero(); }
  inline Affine negate() const { return isInfinity() ? *this : Affine{x, F::neg(y)}; }
  inline bool operator==(const Affine& o) const { return x == o.x && y == o.y; }
};

template <class F>
struct XYZZ {
  F X, Y, ZZ, ZZZ;  // infinity iff ZZ == 0

  static inline XYZZ infinity() { return XYZZ{F::one(), F::one(), F::zero(), F::zero()}; }
  inline bool isInfinity() const { return ZZ.isZero(); }
  static inline XYZZ fromAffine(const Affine<F>& p) {
    if (p.isInfinity()) return infinity();
    return XYZZ{p.x, p.y, F::one(), F::one()};
  }
  inline XYZZ negate() const { return XYZZ{X, F::neg(Y), ZZ, ZZZ}; }

  // Doubling of an XYZZ point (dbl-2008-s-1, a = 0).
  static inline XYZZ dbl(const XYZZ& p) {
    if (p.isInfinity() || p.Y.isZero()) return infinity();
    F U = F::dbl(p.Y);
    F V = F::sqr(U);
    F W = F::mul(U, V);
    F S = F::mul(p.X, V);
    F X2 = F::sqr(p.X);
    F M = F::add(F::dbl(X2), X2);
    F X3 = F::sub(F::sqr(M), F::dbl(S));
    F Y3 = F::sub(F::mul(M, F::sub(S, X3)), F::mul(W, p.Y));
    return XYZZ{X3, Y3, F::mul(V, p.ZZ), F::mul(W, p.ZZZ)};
  }

  // Doubling of an affine point into XYZZ (mdbl: ZZ1 = ZZZ1 = 1).
  static inline XYZZ dblAffine(const Affine<F>& q) {
    if (q.isInfinity() || q.y.isZero()) return infinity();
    F U = F::dbl(q.y);
    F V = F::sqr(U);
    F W = F::mul(U, V);
    F S = F::mul(q.x, V);
    F X2 = F::sqr(q.x);
    F M = F::add(F::dbl(X2), X2);
    F X3 = F::sub(F::sqr(M), F::dbl(S));
    F Y3 = F::sub(F::mul(M, F::sub(S, X3)), F::mul(W, q.y));
    return XYZZ{X3, Y3, V, W};
  }

  // this += affine q (madd-2008-s).
  inline void addAffine(const Affine<F>& q) {
    if (q.isInfinity()) return;
    if (isInfinity()) {
      *this = fromAffine(q);
      return;
    }
    F U2 = F::mul(q.x, ZZ);
    F S2 = F::mul(q.y, ZZZ);
    F P = F::sub(U2, X);
    F R = F::sub(S2, Y);
    if (P.isZero()) {
      if (R.isZero()) {
        *this = dblAffine(q);
      } else {
        *this = infinity();
      }
      return;
    }
    F PP = F::sqr(P);
    F PPP = F::mul(P, PP);
    F Q = F::mul(X, PP);
    F X3 = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
    F Y3 = F::sub(F::mul(R, F::sub(Q, X3)), F::mul(Y, PPP));
    X = X3;
    Y = Y3;
    ZZ = F::mul(ZZ, PP);
    ZZZ = F::mul(ZZZ, PPP);
  }
  inline void subAffine(const Affine<F>& q) { addAffine(q.negate()); }

  // this += q (add-2008-s).
  inline void add(const XYZZ& q) {
    if (q.isInfinity()) return;
    if (isInfinity()) {
      *this = q;
      return;
    }
    F U1 = F::mul(X, q.ZZ);
    F U2 = F::mul(q.X, ZZ);
    F S1 = F::mul(Y, q.ZZZ);
    F S2 = F::mul(q.Y, ZZZ);
    F P = F::sub(U2, U1);
    F R = F::sub(S2, S1);
    if (P.isZero()) {
      if (R.isZero()) {
        *this = dbl(*this);
      } else {
        *this = infinity();
      }
      return;
    }
    F PP = F::sqr(P);
    F PPP = F::mul(P, PP);
    F Q = F::mul(U1, PP);
    F X3 = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
    F Y3 = F::sub(F::mul(R, F::sub(Q, X3)), F::mul(S1, PPP));
    X = X3;
    Y = Y3;
    ZZ = F::mul(F::mul(ZZ, q.ZZ), PP);
    ZZZ = F::mul(F::mul(ZZZ, q.ZZZ), PPP);
  }

  Affine<F> toAffine() const {
    if (isInfinity()) return Affine<F>::infinity();
    // 1/ZZZ gives 1/Z^3; ZZ/ZZZ = 1/Z, so 1/ZZ = (ZZ/ZZZ)^2 * ... compute directly with one inversion:
    F iZZZ = F::inv(ZZZ);
    F iZ = F::mul(ZZ, iZZZ);  // Z^2 / Z^3 = 1/Z
    F iZZ = F::sqr(iZ);
    return Affine<F>{F::mul(X, iZZ), F::mul(Y, iZZZ)};
  }

  // Scalar multiplication by a plain 256-bit integer (double-and-add; used off the hot path).
  static XYZZ mulScalar(const XYZZ& p, const uint64_t k[4]) {
    XYZZ r = infinity();
    for (int i = 3; i >= 0; i--) {
      for (int b = 63; b >= 0; b--) {
        r = dbl(r);
        if ((k[i] >> b) & 1) r.add(p);
      }
    }
    return r;
  }
};

// Converts many XYZZ points to affine with one shared inversion (Montgomery's trick).
template <class F>
void batchToAffine(const XYZZ<F>* in, Affine<F>* out, size_t n) {
  std::vector<F> acc(n);
  F run = F::one();
  for (size_t i = 0; i < n; i++) {
    acc[i] = run;
    if (!in[i].isInfinity()) run = F::mul(run, in[i].ZZZ);
  }
  F inv = F::inv(run);
  for (size_t i = n; i-- > 0;) {
    if (in[i].isInfinity()) {
      out[i] = Affine<F>::infinity();
      continue;
    }
    F iZZZ = F::mul(inv, acc[i]);
    inv = F::mul(inv, in[i].ZZZ);
    F iZ = F::mul(in[i].ZZ, iZZZ);
    F iZZ = F::sqr(iZ);
    out[i] = Affine<F>{F::mul(in[i].X, iZZ), F::mul(in[i].Y, iZZZ)};
  }
}

typedef Affine<Fq> G1A;
typedef XYZZ<Fq> G1P;
typedef Affine<Fq2> G2A;
typedef XYZZ<Fq2> G2P;

// Group generators (Montgomery form built at startup).
G1A g1Generator();
G2A g2Generator();
bool g1OnCurve(const G1A& p);
bool g2OnCurve(const G2A& p);
// True when p (on the curve) is in the order-r subgroup: [r]p is infinity. G1 needs no such check (its
// cofactor is 1, so every curve point is in it); the twist carrying G2 has points of other orders.
// About 0.16 ms of CPU per point: for importing keys, not for every load.
bool g2InSubgroup(const G2A& p);

}  // namespace zk
