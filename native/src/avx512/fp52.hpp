// Eight BN254 field elements at once on AVX-512 IFMA (VPMADD52LUQ/HUQ): each element is five 52-bit
// limbs, limb j of all eight lanes in one register. Montgomery form with R' = 2^260 (five limbs).
//
// Value ranges, chosen so that no multiplication needs a final subtraction:
//  * every operation returns normalised limbs (< 2^52, top limb < 2^51) and a value in [0, 2p);
//  * mul accepts inputs below 2^256 (so an unreduced sum of two [0, 2p) values is fine): the result
//    is < p + ab / 2^260 < 2p.
// Only include from translation units compiled for avx512f + avx512ifma (see msm_avx512.cpp).
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace zk {
namespace avx512 {

constexpr uint64_t M52 = (1ULL << 52) - 1;

// Bits [52j, 52j + 52) of a 256-bit little-endian integer.
inline uint64_t limb52(const uint64_t x[4], int j) {
  int pos = 52 * j, w = pos >> 6, off = pos & 63;
  uint64_t v = x[w] >> off;
  if (off > 12 && w + 1 < 4) v |= x[w + 1] << (64 - off);
  return v & M52;
}

struct V52 {
  __m512i l[5];
};

// Per-field constants (broadcast vectors), built from the scalar field's parameters.
template <class C>
struct Consts52 {
  __m512i p[5], twoP[5], pinv, mask, zero;
  uint64_t pl[5];  // p in 52-bit limbs, for scalar code
  Consts52() {
    uint64_t two[4];
    unsigned char c = 0;
    for (int i = 0; i < 4; i++) c = _addcarry_u64(c, C::P[i], C::P[i], (unsigned long long*)&two[i]);
    for (int j = 0; j < 5; j++) {
      pl[j] = limb52(C::P, j);
      p[j] = _mm512_set1_epi64((long long)pl[j]);
      twoP[j] = _mm512_set1_epi64((long long)limb52(two, j));
    }
    pinv = _mm512_set1_epi64((long long)(C::INV & M52));  // -p^-1 mod 2^52
    mask = _mm512_set1_epi64((long long)M52);
    zero = _mm512_setzero_si512();
  }
  static const Consts52& get() {
    static const Consts52 k;
    return k;
  }
};

template <class C>
struct F52 {
  typedef Consts52<C> K;

  static inline V52 zero() {
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_setzero_si512();
    return r;
  }

  // Signed carry propagation: afterwards limbs 0..3 are in [0, 2^52) and the top limb carries the sign.
  static inline void carry(__m512i t[5], const K& k) {
    for (int j = 0; j < 4; j++) {
      t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srai_epi64(t[j], 52));
      t[j] = _mm512_and_si512(t[j], k.mask);
    }
  }
  // t (normalised, value < 2m) -> t mod m for the constant m (p or 2p), branch-free per lane.
  static inline void condSub(__m512i t[5], const __m512i m[5], const K& k) {
    __m512i d[5];
    for (int j = 0; j < 5; j++) d[j] = _mm512_sub_epi64(t[j], m[j]);
    carry(d, k);
    __mmask8 neg = _mm512_cmplt_epi64_mask(d[4], k.zero);
    for (int j = 0; j < 5; j++) t[j] = _mm512_mask_blend_epi64(neg, d[j], t[j]);
  }

  static inline V52 add(const V52& a, const V52& b) {
    const K& k = K::get();
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_add_epi64(a.l[j], b.l[j]);
    carry(r.l, k);
    condSub(r.l, k.twoP, k);
    return r;
  }
  // a + b with normalised limbs but no reduction: < 4p, valid only as a mul input.
  static inline V52 addLazy(const V52& a, const V52& b) {
    const K& k = K::get();
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_add_epi64(a.l[j], b.l[j]);
    carry(r.l, k);
    return r;
  }
  static inline V52 sub(const V52& a, const V52& b) {
    const K& k = K::get();
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_add_epi64(_mm512_sub_epi64(a.l[j], b.l[j]), k.twoP[j]);
    carry(r.l, k);
    condSub(r.l, k.twoP, k);
    return r;
  }
  static inline V52 dbl(const V52& a) { return add(a, a); }
  // 2p - a: the negation of a value in (0, 2p], kept in (0, 2p).
  static inline V52 neg(const V52& a) {
    const K& k = K::get();
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_sub_epi64(k.twoP[j], a.l[j]);
    carry(r.l, k);
    condSub(r.l, k.twoP, k);
    return r;
  }
  // Fully reduced [0, p) form (for equality tests and output).
  static inline V52 canonical(const V52& a) {
    const K& k = K::get();
    V52 r = a;
    condSub(r.l, k.p, k);
    return r;
  }
  static inline __mmask8 isZeroMask(const V52& canon) {
    __m512i o = _mm512_or_si512(_mm512_or_si512(canon.l[0], canon.l[1]),
                                _mm512_or_si512(_mm512_or_si512(canon.l[2], canon.l[3]), canon.l[4]));
    return _mm512_cmpeq_epi64_mask(o, _mm512_setzero_si512());
  }
  static inline V52 blend(__mmask8 takeB, const V52& a, const V52& b) {
    V52 r;
    for (int j = 0; j < 5; j++) r.l[j] = _mm512_mask_blend_epi64(takeB, a.l[j], b.l[j]);
    return r;
  }

  // Montgomery product a * b / 2^260 (operand scanning, one reduction step per limb of b).
  static inline V52 mul(const V52& a, const V52& b) {
    const K& k = K::get();
    __m512i t0 = k.zero, t1 = k.zero, t2 = k.zero, t3 = k.zero, t4 = k.zero, t5;
    for (int i = 0; i < 5; i++) {
      const __m512i bi = b.l[i];
      t5 = k.zero;
      t0 = _mm512_madd52lo_epu64(t0, a.l[0], bi);
      t1 = _mm512_madd52lo_epu64(t1, a.l[1], bi);
      t2 = _mm512_madd52lo_epu64(t2, a.l[2], bi);
      t3 = _mm512_madd52lo_epu64(t3, a.l[3], bi);
      t4 = _mm512_madd52lo_epu64(t4, a.l[4], bi);
      t1 = _mm512_madd52hi_epu64(t1, a.l[0], bi);
      t2 = _mm512_madd52hi_epu64(t2, a.l[1], bi);
      t3 = _mm512_madd52hi_epu64(t3, a.l[2], bi);
      t4 = _mm512_madd52hi_epu64(t4, a.l[3], bi);
      t5 = _mm512_madd52hi_epu64(t5, a.l[4], bi);
      const __m512i m = _mm512_madd52lo_epu64(k.zero, t0, k.pinv);
      t0 = _mm512_madd52lo_epu64(t0, m, k.p[0]);
      t1 = _mm512_madd52lo_epu64(t1, m, k.p[1]);
      t2 = _mm512_madd52lo_epu64(t2, m, k.p[2]);
      t3 = _mm512_madd52lo_epu64(t3, m, k.p[3]);
      t4 = _mm512_madd52lo_epu64(t4, m, k.p[4]);
      t1 = _mm512_madd52hi_epu64(t1, m, k.p[0]);
      t2 = _mm512_madd52hi_epu64(t2, m, k.p[1]);
      t3 = _mm512_madd52hi_epu64(t3, m, k.p[2]);
      t4 = _mm512_madd52hi_epu64(t4, m, k.p[3]);
      t5 = _mm512_madd52hi_epu64(t5, m, k.p[4]);
      // t0 is now a multiple of 2^52: shift it out.
      t0 = _mm512_add_epi64(t1, _mm512_srli_epi64(t0, 52));
      t1 = t2;
      t2 = t3;
      t3 = t4;
      t4 = t5;
    }
    V52 r{{t0, t1, t2, t3, t4}};
    for (int j = 0; j < 4; j++) {
      r.l[j + 1] = _mm512_add_epi64(r.l[j + 1], _mm512_srli_epi64(r.l[j], 52));
      r.l[j] = _mm512_and_si512(r.l[j], k.mask);
    }
    return r;
  }
  static inline V52 sqr(const V52& a) { return mul(a, a); }
};

}  // namespace avx512
}  // namespace zk
