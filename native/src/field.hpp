// BN254 prime fields (Fq for coordinates, Fr for scalars) in Montgomery form on 4x64-bit limbs.
// Portable CIOS multiplication on unsigned __int128 with the "no-carry" shortcut, which applies
// because both moduli leave the top limb's highest bit clear (top limb < 2^63 - 1).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <x86intrin.h>
#define ZK_X86_ADX 1
#else
#define ZK_X86_ADX 0
#endif

namespace zk {

typedef unsigned __int128 u128;

// The hot field operations are forced inline: as out-of-line calls they would spill six callee-saved
// registers per multiplication.
#define ZK_INLINE inline __attribute__((always_inline))

// True when the CPU has BMI2 (MULX) and ADX (ADCX/ADOX); checked once at startup. The branch on it
// is perfectly predictable, so the portable path costs nothing on machines that do not need it.
bool cpuHasAdx();
extern const bool kUseAdx;

struct FqParams {
  static constexpr uint64_t P[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                    0x30644e72e131a029ULL};
  static constexpr uint64_t INV = 0x87d20782e4866389ULL;  // -p^-1 mod 2^64
  static constexpr uint64_t R2[4] = {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL,
                                     0x06d89f71cab8351fULL};
  static constexpr uint64_t ONE[4] = {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL,
                                      0x0e0a77c19a07df2fULL};
};

struct FrParams {
  static constexpr uint64_t P[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL,
                                    0x30644e72e131a029ULL};
  static constexpr uint64_t INV = 0xc2e1f593efffffffULL;
  static constexpr uint64_t R2[4] = {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL,
                                     0x0216d0b17f4e44a5ULL};
  static constexpr uint64_t ONE[4] = {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL,
                                      0x0e0a77c19a07df2fULL};
};

// Plain 256-bit helpers on little-endian limbs.
static inline bool limbsGeq(const uint64_t a[4], const uint64_t b[4]) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] != b[i]) return a[i] > b[i];
  }
  return true;
}
static inline bool limbsZero(const uint64_t a[4]) { return (a[0] | a[1] | a[2] | a[3]) == 0; }

template <class C>
struct Fp {
  uint64_t v[4];

  static inline Fp zero() { return Fp{{0, 0, 0, 0}}; }
  static inline Fp one() { return Fp{{C::ONE[0], C::ONE[1], C::ONE[2], C::ONE[3]}}; }
  static inline Fp raw(const uint64_t a[4]) { return Fp{{a[0], a[1], a[2], a[3]}}; }
  static inline const uint64_t* modulus() { return C::P; }
  inline bool isZero() const { return limbsZero(v); }
  inline bool operator==(const Fp& o) const {
    return ((v[0] ^ o.v[0]) | (v[1] ^ o.v[1]) | (v[2] ^ o.v[2]) | (v[3] ^ o.v[3])) == 0;
  }
  inline bool operator!=(const Fp& o) const { return !(*this == o); }

  // Conditional subtraction of the modulus, branch-free.
  static ZK_INLINE void reduceOnce(uint64_t t[4]) {
#if ZK_X86_ADX
    // In assembly, as sub(): four subtractions of P, then four conditional moves on "no borrow".
    uint64_t t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], s0, s1, s2, s3;
    __asm__(
        "movq %[t0], %[s0]\n\t"
        "movq %[t1], %[s1]\n\t"
        "movq %[t2], %[s2]\n\t"
        "movq %[t3], %[s3]\n\t"
        "subq %[p0], %[s0]\n\t"
        "sbbq %[p1], %[s1]\n\t"
        "sbbq %[p2], %[s2]\n\t"
        "sbbq %[p3], %[s3]\n\t"
        "cmovncq %[s0], %[t0]\n\t"
        "cmovncq %[s1], %[t1]\n\t"
        "cmovncq %[s2], %[t2]\n\t"
        "cmovncq %[s3], %[t3]\n\t"
        : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [s0] "=&r"(s0), [s1] "=&r"(s1),
          [s2] "=&r"(s2), [s3] "=&r"(s3)
        : [p0] "m"(C::P[0]), [p1] "m"(C::P[1]), [p2] "m"(C::P[2]), [p3] "m"(C::P[3])
        : "cc");
    t[0] = t0;
    t[1] = t1;
    t[2] = t2;
    t[3] = t3;
#else
    uint64_t s[4];
    u128 br = 0;
    for (int i = 0; i < 4; i++) {
      u128 d = (u128)t[i] - C::P[i] - (uint64_t)br;
      s[i] = (uint64_t)d;
      br = (d >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - (uint64_t)(br == 0);  // all ones when t >= P
    for (int i = 0; i < 4; i++) t[i] = (s[i] & mask) | (t[i] & ~mask);
#endif
  }

  static ZK_INLINE Fp add(const Fp& a, const Fp& b) {
    Fp r = addLazy(a, b);
    reduceOnce(r.v);
    return r;
  }
  // a + b without the final subtraction, in [0, 2P) for reduced inputs: only as an operand of mul()
  // or mulLazy() (see mulLazy).
  static ZK_INLINE Fp addLazy(const Fp& a, const Fp& b) {
    Fp r;
#if ZK_X86_ADX
    unsigned long long r0, r1, r2, r3;
    unsigned char c = _addcarry_u64(0, a.v[0], b.v[0], &r0);
    c = _addcarry_u64(c, a.v[1], b.v[1], &r1);
    c = _addcarry_u64(c, a.v[2], b.v[2], &r2);
    _addcarry_u64(c, a.v[3], b.v[3], &r3);
    r.v[0] = r0;
    r.v[1] = r1;
    r.v[2] = r2;
    r.v[3] = r3;
#else
    u128 c = 0;
    for (int i = 0; i < 4; i++) {
      c = (u128)a.v[i] + b.v[i] + (uint64_t)c;
      r.v[i] = (uint64_t)c;
      c >>= 64;
    }
#endif
    return r;
  }
  static ZK_INLINE Fp sub(const Fp& a, const Fp& b) {
    Fp r;
#if ZK_X86_ADX
    // In assembly: GCC 12 moves the carry out and back in with setb/add between the masking ANDs and the
    // additions of the intrinsics version, which made this subtraction about twice as slow.
    uint64_t r0 = a.v[0], r1 = a.v[1], r2 = a.v[2], r3 = a.v[3], m, t0, t1, t2, t3;
    __asm__(
        "subq %[b0], %[r0]\n\t"
        "sbbq %[b1], %[r1]\n\t"
        "sbbq %[b2], %[r2]\n\t"
        "sbbq %[b3], %[r3]\n\t"
        "sbbq %[m], %[m]\n\t"  // all ones when a < b
        "movq %[p0], %[t0]\n\t"
        "movq %[p1], %[t1]\n\t"
        "movq %[p2], %[t2]\n\t"
        "movq %[p3], %[t3]\n\t"
        "andq %[m], %[t0]\n\t"
        "andq %[m], %[t1]\n\t"
        "andq %[m], %[t2]\n\t"
        "andq %[m], %[t3]\n\t"
        "addq %[t0], %[r0]\n\t"
        "adcq %[t1], %[r1]\n\t"
        "adcq %[t2], %[r2]\n\t"
        "adcq %[t3], %[r3]\n\t"
        : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [m] "=&r"(m), [t0] "=&r"(t0),
          [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
        : [b0] "m"(b.v[0]), [b1] "m"(b.v[1]), [b2] "m"(b.v[2]), [b3] "m"(b.v[3]), [p0] "m"(C::P[0]),
          [p1] "m"(C::P[1]), [p2] "m"(C::P[2]), [p3] "m"(C::P[3])
        : "cc");
    r.v[0] = r0;
    r.v[1] = r1;
    r.v[2] = r2;
    r.v[3] = r3;
#else
    u128 br = 0;
    for (int i = 0; i < 4; i++) {
      u128 d = (u128)a.v[i] - b.v[i] - (uint64_t)br;
      r.v[i] = (uint64_t)d;
      br = (d >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - (uint64_t)br;
    u128 c = 0;
    for (int i = 0; i < 4; i++) {
      c = (u128)r.v[i] + (C::P[i] & mask) + (uint64_t)c;
      r.v[i] = (uint64_t)c;
      c >>= 64;
    }
#endif
    return r;
  }
  static ZK_INLINE Fp neg(const Fp& a) {
    if (a.isZero()) return a;
    Fp r;
    u128 br = 0;
    for (int i = 0; i < 4; i++) {
      u128 d = (u128)C::P[i] - a.v[i] - (uint64_t)br;
      r.v[i] = (uint64_t)d;
      br = (d >> 64) & 1;
    }
    return r;
  }
  static ZK_INLINE Fp dbl(const Fp& a) { return add(a, a); }

  // CIOS Montgomery multiplication, no-carry variant: returns a*b/2^256 mod P.
  static ZK_INLINE Fp mul(const Fp& a, const Fp& b) {
#if ZK_X86_ADX
    if (__builtin_expect(kUseAdx, 1)) return mulAdx(a, b);
#endif
    return mulPortable(a, b);
  }

#if ZK_X86_ADX
  static ZK_INLINE Fp mulAdx(const Fp& a, const Fp& b) {
    Fp r = mulAdxUnreduced(a, b);
    reduceOnce(r.v);
    return r;
  }
  // The CIOS product before its final subtraction: below 2P for operands below 2P (see mulLazy).
  static ZK_INLINE Fp mulAdxUnreduced(const Fp& a, const Fp& b) {
    uint64_t t0, t1, t2, t3, t4, lo, hi;
    __asm__(
#include "mont_mul_adx.inc"
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [lo] "=&r"(lo),
          [hi] "=&r"(hi)
        : [a] "r"(a.v), [b] "r"(b.v), [p] "r"(C::P), [inv] "m"(C::INV), "m"(*(const uint64_t(*)[4])a.v),
          "m"(*(const uint64_t(*)[4])b.v), "m"(*(const uint64_t(*)[4])C::P)
        : "rdx", "cc");
    return Fp{{t4, t0, t1, t2}};
  }
#endif

  // The same product left in [0, 2P) (no final subtraction), for chains of multiplications whose values
  // are never compared, negated or added: with 4P < 2^256, inputs below 2P give a result below 2P, and a
  // later mul() brings it back below P.
  static ZK_INLINE Fp mulLazy(const Fp& a, const Fp& b) {
#if ZK_X86_ADX
    if (__builtin_expect(kUseAdx, 1)) return mulAdxUnreduced(a, b);
#endif
    return mulPortable(a, b);
  }

  __attribute__((noinline)) static Fp mulPortable(const Fp& a, const Fp& b) {
    uint64_t t[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
      u128 x = (u128)a.v[0] * b.v[i] + t[0];
      uint64_t A = (uint64_t)(x >> 64);
      uint64_t t0 = (uint64_t)x;
      uint64_t m = t0 * C::INV;
      u128 y = (u128)m * C::P[0] + t0;
      uint64_t Cc = (uint64_t)(y >> 64);
      for (int j = 1; j < 4; j++) {
        x = (u128)a.v[j] * b.v[i] + t[j] + A;
        A = (uint64_t)(x >> 64);
        y = (u128)m * C::P[j] + (uint64_t)x + Cc;
        Cc = (uint64_t)(y >> 64);
        t[j - 1] = (uint64_t)y;
      }
      t[3] = Cc + A;
    }
    Fp r{{t[0], t[1], t[2], t[3]}};
    reduceOnce(r.v);
    return r;
  }
  static ZK_INLINE Fp sqr(const Fp& a) { return mul(a, a); }

  static inline Fp toMont(const Fp& a) { return mul(a, Fp{{C::R2[0], C::R2[1], C::R2[2], C::R2[3]}}); }
  static inline Fp fromMont(const Fp& a) { return mul(a, Fp{{1, 0, 0, 0}}); }

  // Exponentiation by a plain (non-Montgomery) 256-bit exponent.
  static Fp pow(const Fp& a, const uint64_t e[4]) {
    Fp r = one();
    for (int i = 3; i >= 0; i--) {
      for (int b = 63; b >= 0; b--) {
        r = sqr(r);
        if ((e[i] >> b) & 1) r = mul(r, a);
      }
    }
    return r;
  }
  // Fermat inverse; the inverse of zero is returned as zero.
  static Fp inv(const Fp& a) {
    uint64_t e[4] = {C::P[0] - 2, C::P[1], C::P[2], C::P[3]};
    return pow(a, e);
  }

  // Binary extended Euclid in the batched form of Pornin's "optimized binary GCD" (eprint 2020/972):
  // 31 steps at a time run on 64-bit approximations of a and b (their low 31 bits exactly and their top
  // 33 bits), recording the steps as a 2x2 matrix that is then applied once to the full values and to
  // the Bezout coefficients. Variable time: only for values whose handling is variable time anyway (MSM
  // bucket denominators), never for secrets such as r, s or toxic waste; those use inv().
  // Invariants: a == u * x and b == v * x (mod P), b odd; at the end b == 1 and v == x^-1.
  static Fp invVartime(const Fp& x) {
    if (x.isZero()) return x;
    uint64_t a[4] = {x.v[0], x.v[1], x.v[2], x.v[3]}, b[4] = {C::P[0], C::P[1], C::P[2], C::P[3]};
    uint64_t u[4] = {1, 0, 0, 0}, v[4] = {0, 0, 0, 0};
    for (int round = 0; round < 40; round++) {  // 2 * 254 steps need 17 rounds; the cap is a safety net
      if ((a[0] | a[1] | a[2] | a[3]) == 0) return fromInverseOfRepresentative(v);
      uint64_t at, bt;
      approximate(a, b, at, bt);
      int64_t f0 = 1, g0 = 0, f1 = 0, g1 = 1;
      for (int j = 0; j < 31; j++) {
        const uint64_t odd = (uint64_t)0 - (at & 1);
        const uint64_t sw = odd & ((uint64_t)0 - (uint64_t)(at < bt));
        uint64_t t = (at ^ bt) & sw;
        at ^= t;
        bt ^= t;
        t = ((uint64_t)f0 ^ (uint64_t)f1) & sw;
        f0 = (int64_t)((uint64_t)f0 ^ t);
        f1 = (int64_t)((uint64_t)f1 ^ t);
        t = ((uint64_t)g0 ^ (uint64_t)g1) & sw;
        g0 = (int64_t)((uint64_t)g0 ^ t);
        g1 = (int64_t)((uint64_t)g1 ^ t);
        at -= bt & odd;
        f0 -= f1 & (int64_t)odd;
        g0 -= g1 & (int64_t)odd;
        at >>= 1;
        f1 *= 2;
        g1 *= 2;
      }
      uint64_t na[4], nb[4];
      if (combineShift(a, b, f0, g0, na)) {
        f0 = -f0;
        g0 = -g0;
      }
      if (combineShift(a, b, f1, g1, nb)) {
        f1 = -f1;
        g1 = -g1;
      }
      uint64_t nu[4], nv[4];
      combineMod(u, v, f0, g0, nu);
      combineMod(u, v, f1, g1, nv);
      std::memcpy(a, na, 32);
      std::memcpy(b, nb, 32);
      std::memcpy(u, nu, 32);
      std::memcpy(v, nv, 32);
    }
    return inv(x);  // not reached for valid input; the Fermat inverse as a safety net
  }

  // Normal-form integer -> Montgomery element; rejects values >= P.
  static inline bool fromNormalChecked(const uint64_t a[4], Fp& out) {
    if (limbsGeq(a, C::P)) return false;
    out = toMont(raw(a));
    return true;
  }
  static inline Fp fromU64(uint64_t x) { return toMont(Fp{{x, 0, 0, 0}}); }

 private:
  static inline int bitLen(const uint64_t x[4]) {
    for (int i = 3; i >= 0; i--)
      if (x[i]) return 64 * i + 64 - __builtin_clzll(x[i]);
    return 0;
  }
  // 64-bit approximations: exact when both fit in 64 bits, else the low 31 bits and the 33 bits below
  // the top of the longer one.
  static inline void approximate(const uint64_t a[4], const uint64_t b[4], uint64_t& at, uint64_t& bt) {
    const int n = std::max(bitLen(a), bitLen(b));
    if (n <= 64) {
      at = a[0];
      bt = b[0];
      return;
    }
    const int s = n - 33, w = s >> 6, o = s & 63;
    auto top = [&](const uint64_t x[4]) {
      uint64_t lo = x[w] >> o;
      if (o && w + 1 < 4) lo |= x[w + 1] << (64 - o);
      return lo & ((1ULL << 33) - 1);
    };
    at = (a[0] & 0x7fffffffULL) | (top(a) << 31);
    bt = (b[0] & 0x7fffffffULL) | (top(b) << 31);
  }
  // out = |a * f + b * g| / 2^31 (exact division); returns true when a * f + b * g was negative.
  static inline bool combineShift(const uint64_t a[4], const uint64_t b[4], int64_t f, int64_t g, uint64_t out[4]) {
    uint64_t t[5];
    __int128 acc = 0;
    for (int i = 0; i < 4; i++) {
      acc += (__int128)f * (__int128)a[i] + (__int128)g * (__int128)b[i];
      t[i] = (uint64_t)acc;
      acc >>= 64;  // arithmetic
    }
    t[4] = (uint64_t)acc;
    const bool neg = (int64_t)t[4] < 0;
    if (neg) {  // two's complement negation of the 320-bit value
      u128 c = 1;
      for (int i = 0; i < 5; i++) {
        c += ~t[i];
        t[i] = (uint64_t)c;
        c >>= 64;
      }
    }
    for (int i = 0; i < 4; i++) out[i] = (t[i] >> 31) | (t[i + 1] << 33);
    return neg;
  }
  // out = (u * f + v * g) / 2^31 mod P for u, v < P: adds k * P to clear the low 31 bits first.
  static inline void combineMod(const uint64_t u[4], const uint64_t v[4], int64_t f, int64_t g, uint64_t out[4]) {
    static const uint64_t pInv31 = (uint64_t)(-(int64_t)C::INV) & 0x7fffffffULL;  // P^-1 mod 2^31
    uint64_t t[5];
    __int128 acc = 0;
    for (int i = 0; i < 4; i++) {
      acc += (__int128)f * (__int128)u[i] + (__int128)g * (__int128)v[i];
      t[i] = (uint64_t)acc;
      acc >>= 64;
    }
    t[4] = (uint64_t)acc;
    const uint64_t k = ((0 - t[0]) * pInv31) & 0x7fffffffULL;
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
      c += (unsigned __int128)k * C::P[i] + t[i];
      t[i] = (uint64_t)c;
      c >>= 64;
    }
    t[4] += (uint64_t)c;
    // Arithmetic shift right by 31: the value now fits in 4 limbs plus a sign, |value| < 4P.
    int64_t top = (int64_t)t[4] >> 31;
    for (int i = 0; i < 4; i++) out[i] = (t[i] >> 31) | (t[i + 1] << 33);
    while (top < 0) {  // add P until non-negative
      u128 cc = 0;
      for (int i = 0; i < 4; i++) {
        cc += (u128)out[i] + C::P[i];
        out[i] = (uint64_t)cc;
        cc >>= 64;
      }
      top += (int64_t)cc;
    }
    while (top > 0 || limbsGeq(out, C::P)) {  // subtract P until below P
      u128 br = 0;
      for (int i = 0; i < 4; i++) {
        u128 d = (u128)out[i] - C::P[i] - (uint64_t)br;
        out[i] = (uint64_t)d;
        br = (d >> 64) & 1;
      }
      top -= (int64_t)br;
    }
  }
  // x = (aR)^-1 as a plain integer -> the Montgomery form of a^-1, i.e. x * R^2 = mont(x, R^3).
  static inline Fp fromInverseOfRepresentative(const uint64_t x[4]) {
    static const Fp R3 = mul(Fp{{C::R2[0], C::R2[1], C::R2[2], C::R2[3]}}, Fp{{C::R2[0], C::R2[1], C::R2[2], C::R2[3]}});
    return mul(raw(x), R3);
  }
};

struct FqTag : FqParams {};
struct FrTag : FrParams {};
typedef Fp<FqTag> Fq;
typedef Fp<FrTag> Fr;

// Fq2 = Fq[u]/(u^2 + 1), the base field of G2.
struct Fq2 {
  Fq c0, c1;
  static inline Fq2 zero() { return Fq2{Fq::zero(), Fq::zero()}; }
  static inline Fq2 one() { return Fq2{Fq::one(), Fq::zero()}; }
  inline bool isZero() const { return c0.isZero() && c1.isZero(); }
  inline bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  inline bool operator!=(const Fq2& o) const { return !(*this == o); }
  static ZK_INLINE Fq2 add(const Fq2& a, const Fq2& b) { return Fq2{Fq::add(a.c0, b.c0), Fq::add(a.c1, b.c1)}; }
  static ZK_INLINE Fq2 sub(const Fq2& a, const Fq2& b) { return Fq2{Fq::sub(a.c0, b.c0), Fq::sub(a.c1, b.c1)}; }
  static ZK_INLINE Fq2 neg(const Fq2& a) { return Fq2{Fq::neg(a.c0), Fq::neg(a.c1)}; }
  static ZK_INLINE Fq2 dbl(const Fq2& a) { return add(a, a); }
  // Karatsuba: 3 base multiplications (the sums are only multiplied, so they stay unreduced).
  static ZK_INLINE Fq2 mul(const Fq2& a, const Fq2& b) {
    Fq t0 = Fq::mul(a.c0, b.c0);
    Fq t1 = Fq::mul(a.c1, b.c1);
    Fq t2 = Fq::mul(Fq::addLazy(a.c0, a.c1), Fq::addLazy(b.c0, b.c1));
    return Fq2{Fq::sub(t0, t1), Fq::sub(Fq::sub(t2, t0), t1)};
  }
  // No lazy form over Fq2: the Karatsuba subtractions need reduced products. Here for generic code.
  static ZK_INLINE Fq2 mulLazy(const Fq2& a, const Fq2& b) { return mul(a, b); }
  // (a + bu)^2 = (a+b)(a-b) + 2ab u
  static ZK_INLINE Fq2 sqr(const Fq2& a) {
    Fq t = Fq::mul(a.c0, a.c1);
    return Fq2{Fq::mul(Fq::addLazy(a.c0, a.c1), Fq::sub(a.c0, a.c1)), Fq::add(t, t)};
  }
  static inline Fq2 inv(const Fq2& a) {
    Fq n = Fq::add(Fq::sqr(a.c0), Fq::sqr(a.c1));
    Fq ni = Fq::inv(n);
    return Fq2{Fq::mul(a.c0, ni), Fq::neg(Fq::mul(a.c1, ni))};
  }
  static inline Fq2 invVartime(const Fq2& a) {
    Fq n = Fq::add(Fq::sqr(a.c0), Fq::sqr(a.c1));
    Fq ni = Fq::invVartime(n);
    return Fq2{Fq::mul(a.c0, ni), Fq::neg(Fq::mul(a.c1, ni))};
  }
};

}  // namespace zk
