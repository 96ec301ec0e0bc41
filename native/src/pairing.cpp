#include "pairing.hpp"

namespace zk {

namespace {

// Fq6 = Fq2[v]/(v^3 - xi), xi = 9 + u; Fq12 = Fq6[w]/(w^2 - v).
const Fq2& xi() {
  static const Fq2 x{Fq::fromU64(9), Fq::fromU64(1)};
  return x;
}
// (a0 + a1 u)(9 + u) = (9 a0 - a1) + (9 a1 + a0) u, with additions only.
Fq2 mulXi(const Fq2& a) {
  Fq n0 = Fq::add(Fq::dbl(Fq::dbl(Fq::dbl(a.c0))), a.c0);
  Fq n1 = Fq::add(Fq::dbl(Fq::dbl(Fq::dbl(a.c1))), a.c1);
  return Fq2{Fq::sub(n0, a.c1), Fq::add(n1, a.c0)};
}

struct Fq6 {
  Fq2 c0, c1, c2;
  static Fq6 zero() { return Fq6{Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  static Fq6 one() { return Fq6{Fq2::one(), Fq2::zero(), Fq2::zero()}; }
  static Fq6 add(const Fq6& a, const Fq6& b) { return Fq6{Fq2::add(a.c0, b.c0), Fq2::add(a.c1, b.c1), Fq2::add(a.c2, b.c2)}; }
  static Fq6 sub(const Fq6& a, const Fq6& b) { return Fq6{Fq2::sub(a.c0, b.c0), Fq2::sub(a.c1, b.c1), Fq2::sub(a.c2, b.c2)}; }
  static Fq6 neg(const Fq6& a) { return Fq6{Fq2::neg(a.c0), Fq2::neg(a.c1), Fq2::neg(a.c2)}; }
  static Fq6 mul(const Fq6& a, const Fq6& b) {
    Fq2 t0 = Fq2::mul(a.c0, b.c0), t1 = Fq2::mul(a.c1, b.c1), t2 = Fq2::mul(a.c2, b.c2);
    // c0 = t0 + xi((a1+a2)(b1+b2) - t1 - t2), c1 = (a0+a1)(b0+b1) - t0 - t1 + xi t2, c2 = (a0+a2)(b0+b2) - t0 - t2 + t1
    Fq2 c0 = Fq2::add(t0, mulXi(Fq2::sub(Fq2::sub(Fq2::mul(Fq2::add(a.c1, a.c2), Fq2::add(b.c1, b.c2)), t1), t2)));
    Fq2 c1 = Fq2::add(Fq2::sub(Fq2::sub(Fq2::mul(Fq2::add(a.c0, a.c1), Fq2::add(b.c0, b.c1)), t0), t1), mulXi(t2));
    Fq2 c2 = Fq2::add(Fq2::sub(Fq2::sub(Fq2::mul(Fq2::add(a.c0, a.c2), Fq2::add(b.c0, b.c2)), t0), t2), t1);
    return Fq6{c0, c1, c2};
  }
  // Multiplication by v: (a0, a1, a2) -> (xi a2, a0, a1).
  static Fq6 mulV(const Fq6& a) { return Fq6{mulXi(a.c2), a.c0, a.c1}; }
  static Fq6 inv(const Fq6& a) {
    Fq2 c0 = Fq2::sub(Fq2::sqr(a.c0), mulXi(Fq2::mul(a.c1, a.c2)));
    Fq2 c1 = Fq2::sub(mulXi(Fq2::sqr(a.c2)), Fq2::mul(a.c0, a.c1));
    Fq2 c2 = Fq2::sub(Fq2::sqr(a.c1), Fq2::mul(a.c0, a.c2));
    Fq2 t = Fq2::add(Fq2::mul(a.c0, c0), mulXi(Fq2::add(Fq2::mul(a.c2, c1), Fq2::mul(a.c1, c2))));
    Fq2 ti = Fq2::inv(t);
    return Fq6{Fq2::mul(c0, ti), Fq2::mul(c1, ti), Fq2::mul(c2, ti)};
  }
  bool isOne() const { return c0 == Fq2::one() && c1.isZero() && c2.isZero(); }
  bool isZero() const { return c0.isZero() && c1.isZero() && c2.isZero(); }
};

struct Fq12 {
  Fq6 c0, c1;
  static Fq12 one() { return Fq12{Fq6::one(), Fq6::zero()}; }
  static Fq12 mul(const Fq12& a, const Fq12& b) {
    Fq6 t0 = Fq6::mul(a.c0, b.c0), t1 = Fq6::mul(a.c1, b.c1);
    Fq6 c1 = Fq6::sub(Fq6::sub(Fq6::mul(Fq6::add(a.c0, a.c1), Fq6::add(b.c0, b.c1)), t0), t1);
    return Fq12{Fq6::add(t0, Fq6::mulV(t1)), c1};
  }
  static Fq12 sqr(const Fq12& a) { return mul(a, a); }
  static Fq12 conj(const Fq12& a) { return Fq12{a.c0, Fq6::neg(a.c1)}; }
  static Fq12 inv(const Fq12& a) {
    Fq6 t = Fq6::sub(Fq6::mul(a.c0, a.c0), Fq6::mulV(Fq6::mul(a.c1, a.c1)));
    Fq6 ti = Fq6::inv(t);
    return Fq12{Fq6::mul(a.c0, ti), Fq6::neg(Fq6::mul(a.c1, ti))};
  }
  bool isOne() const { return c0.isOne() && c1.isZero(); }
};

// Fq2 exponentiation by a plain little-endian multi-limb exponent.
Fq2 powFq2(const Fq2& a, const uint64_t* e, int limbs) {
  Fq2 r = Fq2::one();
  for (int i = limbs - 1; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      r = Fq2::sqr(r);
      if ((e[i] >> b) & 1) r = Fq2::mul(r, a);
    }
  return r;
}
Fq2 conjFq2(const Fq2& a) { return Fq2{a.c0, Fq::neg(a.c1)}; }

// Frobenius on the twist: pi(x, y) = (conj(x) g2, conj(y) g3) with g2 = xi^((p-1)/3), g3 = xi^((p-1)/2);
// pi^2(x, y) = (x h2, y h3) with h = g * conj(g) = xi^((p^2-1)/k).
struct FrobeniusConstants {
  Fq2 g2, g3, h2, h3;
  FrobeniusConstants() {
    const uint64_t* p = FqParams::P;
    // (p - 1) / 3 and (p - 1) / 2 as plain integers.
    unsigned __int128 rem = 0;
    uint64_t third[4], half[4];
    uint64_t pm1[4] = {p[0] - 1, p[1], p[2], p[3]};
    for (int i = 3; i >= 0; i--) {
      unsigned __int128 cur = (rem << 64) | pm1[i];
      third[i] = (uint64_t)(cur / 3);
      rem = cur % 3;
    }
    for (int i = 0; i < 4; i++) half[i] = (pm1[i] >> 1) | (i < 3 ? (pm1[i + 1] << 63) : 0);
    g2 = powFq2(xi(), third, 4);
    g3 = powFq2(xi(), half, 4);
    h2 = Fq2::mul(g2, conjFq2(g2));
    h3 = Fq2::mul(g3, conjFq2(g3));
  }
};
const FrobeniusConstants& frob() {
  static const FrobeniusConstants c;
  return c;
}

// (p^6 + 1) / r: the exponent left after f^(p^6 - 1) in the final exponentiation.
const uint64_t kFinalExp[20] = {
    0x5250a54036e3f812ULL, 0xa5635f1596789051ULL, 0xd1138bf54d5bd1d4ULL, 0xa8ce2533be36c7a2ULL, 0x94f69f6b84e09bf6ULL,
    0x42ad1f5e50ef3644ULL, 0x0fcc420e48c3454cULL, 0x758e4408ecc9952cULL, 0xc901bf1887c6042cULL, 0xa733cd65b14bb3b5ULL,
    0xdf6d76bdcf51b0d8ULL, 0xca64c0fd82eb59e1ULL, 0x1d2e5726e39276a1ULL, 0xc2d1ea74a391cae9ULL, 0x07409206c82d647eULL,
    0x051c6d1aa5afdd17ULL, 0xb37f601919667af5ULL, 0x150e578c5084015bULL, 0xfbdea556c23998e4ULL, 0x000fd14cc52f5b83ULL};
const uint64_t kAteLoop = 0x9d797039be763ba8ULL;  // 6x + 2 = 0x1_9d797039be763ba8 (65 bits)

// Line through the untwisted T and Q (slope lambda on the twist) evaluated at P:
// yP - lambda xP w + (lambda xT - yT) w^3, with w^3 = v w.
Fq12 line(const Fq2& lambda, const G2A& T, const G1A& P) {
  Fq12 l;
  l.c0 = Fq6{Fq2{P.y, Fq::zero()}, Fq2::zero(), Fq2::zero()};
  Fq2 lx = Fq2{Fq::mul(lambda.c0, P.x), Fq::mul(lambda.c1, P.x)};
  l.c1 = Fq6{Fq2::neg(lx), Fq2::sub(Fq2::mul(lambda, T.x), T.y), Fq2::zero()};
  return l;
}

// Inverts every element with one field inversion (Montgomery's trick); inputs are nonzero here.
void batchInvert(std::vector<Fq2>& v) {
  std::vector<Fq2> prefix(v.size());
  Fq2 run = Fq2::one();
  for (size_t i = 0; i < v.size(); i++) {
    prefix[i] = run;
    run = Fq2::mul(run, v[i]);
  }
  Fq2 inv = Fq2::inv(run);
  for (size_t i = v.size(); i-- > 0;) {
    Fq2 vi = v[i];
    v[i] = Fq2::mul(inv, prefix[i]);
    inv = Fq2::mul(inv, vi);
  }
}

// T <- 2T, returning the tangent line at P; invDen = 1 / (2 yT). T is never infinity here.
Fq12 doubleStep(G2A& T, const G1A& P, const Fq2& invDen) {
  Fq2 x2 = Fq2::sqr(T.x);
  Fq2 lambda = Fq2::mul(Fq2::add(Fq2::dbl(x2), x2), invDen);
  Fq12 l = line(lambda, T, P);
  Fq2 x3 = Fq2::sub(Fq2::sqr(lambda), Fq2::dbl(T.x));
  Fq2 y3 = Fq2::sub(Fq2::mul(lambda, Fq2::sub(T.x, x3)), T.y);
  T = G2A{x3, y3};
  return l;
}

// T <- T + Q, returning the chord line at P; invDen = 1 / (xQ - xT). T == +-Q cannot happen for
// prime-order Q in the loop.
Fq12 addStep(G2A& T, const G2A& Q, const G1A& P, const Fq2& invDen) {
  Fq2 lambda = Fq2::mul(Fq2::sub(Q.y, T.y), invDen);
  Fq12 l = line(lambda, T, P);
  Fq2 x3 = Fq2::sub(Fq2::sub(Fq2::sqr(lambda), T.x), Q.x);
  Fq2 y3 = Fq2::sub(Fq2::mul(lambda, Fq2::sub(T.x, x3)), T.y);
  T = G2A{x3, y3};
  return l;
}

}  // namespace

bool pairingProductIsOne(const std::vector<std::pair<G1A, G2A>>& pairs) {
  // Optimal ate Miller loop over all pairs at once, then one final exponentiation.
  std::vector<std::pair<G1A, G2A>> live;
  for (const auto& pq : pairs)
    if (!pq.first.isInfinity() && !pq.second.isInfinity()) live.push_back(pq);
  std::vector<G2A> T(live.size());
  for (size_t i = 0; i < live.size(); i++) T[i] = live[i].second;
  const size_t n = live.size();
  std::vector<Fq2> den(n);
  auto addAll = [&](Fq12& f, const std::vector<G2A>& Q) {
    for (size_t i = 0; i < n; i++) den[i] = Fq2::sub(Q[i].x, T[i].x);
    batchInvert(den);
    for (size_t i = 0; i < n; i++) f = Fq12::mul(f, addStep(T[i], Q[i], live[i].first, den[i]));
  };
  std::vector<G2A> Qs(n);
  for (size_t i = 0; i < n; i++) Qs[i] = live[i].second;
  Fq12 f = Fq12::one();
  for (int bit = 63; bit >= 0; bit--) {  // top bit (bit 64) is the starting T = Q
    f = Fq12::sqr(f);
    for (size_t i = 0; i < n; i++) den[i] = Fq2::dbl(T[i].y);
    batchInvert(den);
    for (size_t i = 0; i < n; i++) f = Fq12::mul(f, doubleStep(T[i], live[i].first, den[i]));
    if ((kAteLoop >> bit) & 1) addAll(f, Qs);
  }
  const FrobeniusConstants& c = frob();
  std::vector<G2A> q1(n), q2(n);
  for (size_t i = 0; i < n; i++) {
    const G2A& Q = live[i].second;
    q1[i] = G2A{Fq2::mul(conjFq2(Q.x), c.g2), Fq2::mul(conjFq2(Q.y), c.g3)};
    q2[i] = G2A{Fq2::mul(Q.x, c.h2), Fq2::neg(Fq2::mul(Q.y, c.h3))};  // -pi^2(Q)
  }
  addAll(f, q1);
  addAll(f, q2);
  // Final exponentiation: f^((p^6 - 1)(p^6 + 1)/r); the first factor is conj(f) / f.
  Fq12 g = Fq12::mul(Fq12::conj(f), Fq12::inv(f));
  Fq12 r = Fq12::one();
  for (int i = 19; i >= 0; i--)
    for (int b = 63; b >= 0; b--) {
      r = Fq12::sqr(r);
      if ((kFinalExp[i] >> b) & 1) r = Fq12::mul(r, g);
    }
  return r.isOne();
}

}  // namespace zk
