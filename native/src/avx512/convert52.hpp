// Scalar conversions between the 4x64-bit Montgomery form (R = 2^256, field.hpp) and the 5x52-bit
// Montgomery form (R' = 2^260, fp52.hpp) of one field element: R'/R = 16, so going in multiplies the
// representative by 16 mod p and coming out divides it by 16 mod p.
#pragma once
#include <cstdint>

#include "../field.hpp"
#include "fp52.hpp"

namespace zk {
namespace avx512 {

template <class C>
inline void toLimbs52(const Fp<C>& a, uint64_t out[5]) {
  Fp<C> t = Fp<C>::dbl(Fp<C>::dbl(Fp<C>::dbl(Fp<C>::dbl(a))));
  for (int j = 0; j < 5; j++) out[j] = limb52(t.v, j);
}

// Normalised limbs of a value in [0, 2p) -> the field element.
template <class C>
inline Fp<C> fromLimbs52(const uint64_t in[5]) {
  uint64_t x[4];
  x[0] = in[0] | (in[1] << 52);
  x[1] = (in[1] >> 12) | (in[2] << 40);
  x[2] = (in[2] >> 24) | (in[3] << 28);
  x[3] = (in[3] >> 36) | (in[4] << 16);
  if (limbsGeq(x, C::P)) {
    unsigned char b = 0;
    for (int i = 0; i < 4; i++) b = _subborrow_u64(b, x[i], C::P[i], (unsigned long long*)&x[i]);
  }
  for (int k = 0; k < 4; k++) {  // halve mod p four times
    if (x[0] & 1) {
      unsigned char c = 0;
      for (int i = 0; i < 4; i++) c = _addcarry_u64(c, x[i], C::P[i], (unsigned long long*)&x[i]);
    }
    x[0] = (x[0] >> 1) | (x[1] << 63);
    x[1] = (x[1] >> 1) | (x[2] << 63);
    x[2] = (x[2] >> 1) | (x[3] << 63);
    x[3] >>= 1;
  }
  return Fp<C>::raw(x);
}

// Eight elements' limbs (element i at words[i * stride .. i * stride + 4]) <-> one vector.
inline V52 lanesFromWords(const uint64_t* words, int stride) {
  V52 r;
  alignas(64) uint64_t t[8];
  for (int j = 0; j < 5; j++) {
    for (int i = 0; i < 8; i++) t[i] = words[i * stride + j];
    r.l[j] = _mm512_load_si512(t);
  }
  return r;
}
inline void lanesToWords(const V52& v, uint64_t* words, int stride) {
  alignas(64) uint64_t t[8];
  for (int j = 0; j < 5; j++) {
    _mm512_store_si512(t, v.l[j]);
    for (int i = 0; i < 8; i++) words[i * stride + j] = t[i];
  }
}

}  // namespace avx512
}  // namespace zk
