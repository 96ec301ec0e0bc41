#include "fft.hpp"

#include <utility>

#include "bigint.hpp"

namespace zk {

Fr rootOfUnity(int k) {
  static const Fr w28 =
      Fr::toMont(Fr::raw(decimalToLimbs("19103219067921713944291392827692070036145651957329286315305642004821462161904").v));
  Fr w = w28;
  for (int i = 28; i > k; i--) w = Fr::sqr(w);
  return w;
}

Domain::Domain(int log2n) : n_((size_t)1 << log2n), log_(log2n) {
  roots_.resize(n_ / 2 > 0 ? n_ / 2 : 1);
  Fr w = rootOfUnity(log2n);
  roots_[0] = Fr::one();
  for (size_t i = 1; i < n_ / 2; i++) roots_[i] = Fr::mul(roots_[i - 1], w);
}

void Domain::bitReverse(Fr* a) const {
  for (size_t i = 1, j = 0; i < n_; i++) {
    size_t bit = n_ >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
}

void Domain::fft(Fr* a) const {
  bitReverse(a);
  for (size_t len = 2; len <= n_; len <<= 1) {
    size_t half = len >> 1, stride = n_ / len;
    for (size_t i = 0; i < n_; i += len) {
      for (size_t j = 0; j < half; j++) {
        Fr t = j == 0 ? a[i + half] : Fr::mul(a[i + j + half], roots_[j * stride]);
        Fr u = a[i + j];
        a[i + j] = Fr::add(u, t);
        a[i + j + half] = Fr::sub(u, t);
      }
    }
  }
}

// The inverse DFT equals the forward one followed by reversing entries 1..n-1 (w^-i = w^(n-i)).
void Domain::ifftUnscaled(Fr* a) const {
  fft(a);
  for (size_t i = 1, j = n_ - 1; i < j; i++, j--) std::swap(a[i], a[j]);
}

}  // namespace zk
