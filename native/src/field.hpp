// BN254 prime fields (Fq for coordinates, Fr for scalars) in Montgomery form on 4x64-bit limbs.
// Portable CIOS multiplication on unsigned __int128 with the "no-carry" shortcut, which applies
// because both moduli leave the top limb's highest bit clear (top limb < 2^63 - 1).
#pragma once
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
  inline bool isZero() const { return limbsZero(v); }
  inline bool operator==(const Fp& o) const {
    return ((v[0] ^ o.v[0]) | (v[1] ^ o.v[1]) | (v[2] ^ o.v[2]) | (v[3] ^ o.v[3])) == 0;
  }
  inline bool operator!=(const Fp& o) const { return !(*this == o); }

  // Conditional subtraction of the modulus, branch-free.
  static ZK_INLINE void reduceOnce(uint64_t t[4]) {
#if ZK_X86_ADX
    unsigned long long s0, s1, s2, s3;
    unsigned char br = _subborrow_u64(0, t[0], C::P[0], &s0);
    br = _subborrow_u64(br, t[1], C::P[1], &s1);
    br = _subborrow_u64(br, t[2], C::P[2], &s2);
    br = _subborrow_u64(br, t[3], C::P[3], &s3);
    if (!br) {
      t[0] = s0;
      t[1] = s1;
      t[2] = s2;
      t[3] = s3;
    }
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
    reduceOnce(r.v);
    return r;
  }
  static ZK_INLINE Fp sub(const Fp& a, const Fp& b) {
    Fp r;
#if ZK_X86_ADX
    unsigned long long r0, r1, r2, r3;
    unsigned char br = _subborrow_u64(0, a.v[0], b.v[0], &r0);
    br = _subborrow_u64(br, a.v[1], b.v[1], &r1);
    br = _subborrow_u64(br, a.v[2], b.v[2], &r2);
    br = _subborrow_u64(br, a.v[3], b.v[3], &r3);
    uint64_t m = (uint64_t)0 - (uint64_t)br;
    unsigned char c = _addcarry_u64(0, r0, C::P[0] & m, &r0);
    c = _addcarry_u64(c, r1, C::P[1] & m, &r1);
    c = _addcarry_u64(c, r2, C::P[2] & m, &r2);
    _addcarry_u64(c, r3, C::P[3] & m, &r3);
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
    uint64_t t0, t1, t2, t3, t4, lo, hi;
    __asm__(
#include "mont_mul_adx.inc"
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [lo] "=&r"(lo),
          [hi] "=&r"(hi)
        : [a] "r"(a.v), [b] "r"(b.v), [p] "r"(C::P), [inv] "m"(C::INV), "m"(*(const uint64_t(*)[4])a.v),
          "m"(*(const uint64_t(*)[4])b.v), "m"(*(const uint64_t(*)[4])C::P)
        : "rdx", "cc");
    Fp r{{t4, t0, t1, t2}};
    reduceOnce(r.v);
    return r;
  }
#endif

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

  // Binary extended Euclid, about 4x faster than inv() but variable time: only for values whose handling
  // is variable time anyway (MSM bucket denominators), never for secrets such as r, s or toxic waste.
  // Invariants: x1 * a == u and x2 * a == v (mod P), with u and v odd after each halving step.
  static Fp invVartime(const Fp& a) {
    if (a.isZero()) return a;
    uint64_t u[4] = {a.v[0], a.v[1], a.v[2], a.v[3]}, v[4] = {C::P[0], C::P[1], C::P[2], C::P[3]};
    uint64_t x1[4] = {1, 0, 0, 0}, x2[4] = {0, 0, 0, 0};
    for (;;) {
      halveWhileEven(u, x1);
      halveWhileEven(v, x2);
      if (isOneRaw(u)) return fromInverseOfRepresentative(x1);
      if (isOneRaw(v)) return fromInverseOfRepresentative(x2);
      if (limbsGeq(u, v)) {
        subRaw(u, v);
        subModRaw(x1, x2);
      } else {
        subRaw(v, u);
        subModRaw(x2, x1);
      }
    }
  }

  // Normal-form integer -> Montgomery element; rejects values >= P.
  static inline bool fromNormalChecked(const uint64_t a[4], Fp& out) {
    if (limbsGeq(a, C::P)) return false;
    out = toMont(raw(a));
    return true;
  }
  static inline Fp fromU64(uint64_t x) { return toMont(Fp{{x, 0, 0, 0}}); }

 private:
  static inline bool isOneRaw(const uint64_t u[4]) { return u[0] == 1 && (u[1] | u[2] | u[3]) == 0; }
  static inline void subRaw(uint64_t a[4], const uint64_t b[4]) {
    unsigned char br = 0;
    for (int i = 0; i < 4; i++) br = _subborrow_u64(br, a[i], b[i], (unsigned long long*)&a[i]);
  }
  // a = a - b mod P for a, b < P.
  static inline void subModRaw(uint64_t a[4], const uint64_t b[4]) {
    Fp r = sub(raw(a), raw(b));
    std::memcpy(a, r.v, 32);
  }
  // Strips the factors of two from u (odd P keeps x * a == u): x = x / 2^k mod P, k <= 63 bits at a
  // time, as (x + m P) / 2^k with m = -x / P mod 2^k, then one conditional subtraction.
  static inline void halveWhileEven(uint64_t u[4], uint64_t x[4]) {
    while ((u[0] & 1) == 0) {
      int k = u[0] ? __builtin_ctzll(u[0]) : 63;
      for (int i = 0; i < 3; i++) u[i] = (u[i] >> k) | (u[i + 1] << (64 - k));
      u[3] >>= k;
      const uint64_t mask = (1ULL << k) - 1;
      const uint64_t m = (x[0] * C::INV) & mask;
      u128 carry = 0;
      uint64_t t[5];
      for (int i = 0; i < 4; i++) {
        carry += (u128)m * C::P[i] + x[i];
        t[i] = (uint64_t)carry;
        carry >>= 64;
      }
      t[4] = (uint64_t)carry;
      for (int i = 0; i < 4; i++) x[i] = (t[i] >> k) | (t[i + 1] << (64 - k));
      reduceOnce(x);
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
  // Karatsuba: 3 base multiplications.
  static ZK_INLINE Fq2 mul(const Fq2& a, const Fq2& b) {
    Fq t0 = Fq::mul(a.c0, b.c0);
    Fq t1 = Fq::mul(a.c1, b.c1);
    Fq t2 = Fq::mul(Fq::add(a.c0, a.c1), Fq::add(b.c0, b.c1));
    return Fq2{Fq::sub(t0, t1), Fq::sub(Fq::sub(t2, t0), t1)};
  }
  // (a + bu)^2 = (a+b)(a-b) + 2ab u
  static ZK_INLINE Fq2 sqr(const Fq2& a) {
    Fq t = Fq::mul(a.c0, a.c1);
    return Fq2{Fq::mul(Fq::add(a.c0, a.c1), Fq::sub(a.c0, a.c1)), Fq::add(t, t)};
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
