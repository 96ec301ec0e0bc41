// Radix-2 NTTs over Fr on AVX-512 IFMA for the H evaluations (see fft_avx512.hpp). Elements live in
// blocks of eight (five 52-bit limb vectors, Montgomery R' = 2^260): butterflies between blocks are
// plain vector operations; the three stages inside a block pair lanes with a permutation.
#include "fft_avx512.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "fft.hpp"
#include "msm_avx512.hpp"
#include "thread_pool.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512ifma")
// GCC 12 reports its own intrinsics (_mm512_undefined_epi32) as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "avx512/aligned_array.hpp"
#include "avx512/convert52.hpp"

namespace zk {
namespace {

using namespace avx512;
typedef F52<FrTag> VR;

typedef AlignedArray<V52> Blocks;

inline V52 lanesOf(const Fr* x) {  // eight scalars -> one vector
  uint64_t w[8 * 5];
  for (int i = 0; i < 8; i++) toLimbs52(x[i], w + 5 * i);
  return lanesFromWords(w, 5);
}

// Twiddles of one direction (root w or w^-1) for every stage, plus the coset factors in bit-reversed
// order. Built once per domain size.
struct Tables {
  size_t n;
  // Stage with half-size h >= 8: twiddles w_len^j for j = 8t .. 8t + 7 at big[h][t] (len = 2h).
  std::unique_ptr<Blocks> fwdBig, invBig;  // concatenated per stage, offset bigOffset(h)
  V52 fwdSmall[3], invSmall[3];            // h = 1, 2, 4: lane p holds w_len^(p mod h)
  std::unique_ptr<Blocks> shiftBR;         // position i holds g^br(i) / n
  __m512i perm[3];
  __mmask8 bottom[3];

  size_t bigOffset(size_t h) const { return h / 8 - 1; }  // h = 8, 16, ..., n/2 -> 0, 1, 3, 7, ...

  explicit Tables(int lg) : n((size_t)1 << lg) {
    const Fr w = rootOfUnity(lg), wInv = Fr::inv(w);
    // sum over h = 8 .. n/2 of h/8 vectors = n/8 - 1
    fwdBig = std::make_unique<Blocks>(n / 8);
    invBig = std::make_unique<Blocks>(n / 8);
    for (size_t h = 8; h < n; h <<= 1) {
      // w_len = w^(n / len) with len = 2h
      Fr wl = w, wlInv = wInv;
      for (size_t k = n / (2 * h); k > 1; k >>= 1) {
        wl = Fr::sqr(wl);
        wlInv = Fr::sqr(wlInv);
      }
      Fr f = Fr::one(), g = Fr::one();
      for (size_t t = 0; t < h / 8; t++) {
        Fr fs[8], gs[8];
        for (int i = 0; i < 8; i++) {
          fs[i] = f;
          gs[i] = g;
          f = Fr::mul(f, wl);
          g = Fr::mul(g, wlInv);
        }
        (*fwdBig)[bigOffset(h) + t] = lanesOf(fs);
        (*invBig)[bigOffset(h) + t] = lanesOf(gs);
      }
    }
    for (int s = 0; s < 3; s++) {
      const size_t h = (size_t)1 << s;
      Fr wl = w, wlInv = wInv;
      for (size_t k = n / (2 * h); k > 1; k >>= 1) {
        wl = Fr::sqr(wl);
        wlInv = Fr::sqr(wlInv);
      }
      Fr fs[8], gs[8];
      alignas(64) int64_t idx[8];
      __mmask8 m = 0;
      for (int p = 0; p < 8; p++) {
        Fr a = Fr::one(), b = Fr::one();
        for (size_t j = 0; j < (p % h); j++) {
          a = Fr::mul(a, wl);
          b = Fr::mul(b, wlInv);
        }
        fs[p] = a;
        gs[p] = b;
        idx[p] = p ^ (int)h;
        if (p & h) m |= (__mmask8)(1u << p);
      }
      fwdSmall[s] = lanesOf(fs);
      invSmall[s] = lanesOf(gs);
      perm[s] = _mm512_load_si512(idx);
      bottom[s] = m;
    }
    // Coset factors g^j / n (g a primitive 2n-th root; the 1/n of the inverse transform folded in),
    // stored at the bit-reversed position of j since the inverse DIF leaves coefficients there.
    std::vector<Fr> shift(n);
    const Fr g = rootOfUnity(lg + 1);
    shift[0] = Fr::inv(Fr::fromU64(n));
    for (size_t j = 1; j < n; j++) shift[j] = Fr::mul(shift[j - 1], g);
    std::vector<Fr> br(n);
    for (size_t i = 0; i < n; i++) {
      size_t r = 0;
      for (int b = 0; b < lg; b++) r |= ((i >> b) & 1) << (lg - 1 - b);
      br[i] = shift[r];
    }
    shiftBR = std::make_unique<Blocks>(n / 8);
    for (size_t k = 0; k < n / 8; k++) (*shiftBR)[k] = lanesOf(&br[8 * k]);
  }

  // Kept for the life of the process, so never in a proof's arena.
  static const Tables& forDomain(int lg) {
    static std::mutex mu;
    static std::map<int, std::unique_ptr<Tables>> cache;
    std::lock_guard<std::mutex> lk(mu);
    auto& t = cache[lg];
    if (!t) {
      ArenaScope heap(nullptr);
      t = std::make_unique<Tables>(lg);
    }
    return *t;
  }
};

inline V52 permute(const V52& x, __m512i idx) {
  V52 r;
  for (int j = 0; j < 5; j++) r.l[j] = _mm512_permutexvar_epi64(idx, x.l[j]);
  return r;
}

// Scalar Montgomery Fr values (< r) -> blocks, vectorised: split into 52-bit limbs, then times 16.
void load(const Fr* x, Blocks& out) {
  const __m512i mask = _mm512_set1_epi64((long long)M52);
  const __m512i idx = _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28);
  for (size_t k = 0; k < out.size(); k++) {
    const long long* base = (const long long*)(x + 8 * k);
    __m512i w0 = _mm512_i64gather_epi64(idx, base, 8), w1 = _mm512_i64gather_epi64(idx, base + 1, 8);
    __m512i w2 = _mm512_i64gather_epi64(idx, base + 2, 8), w3 = _mm512_i64gather_epi64(idx, base + 3, 8);
    V52 v;
    v.l[0] = _mm512_and_si512(w0, mask);
    v.l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w0, 52), _mm512_slli_epi64(w1, 12)), mask);
    v.l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w1, 40), _mm512_slli_epi64(w2, 24)), mask);
    v.l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w2, 28), _mm512_slli_epi64(w3, 36)), mask);
    v.l[4] = _mm512_srli_epi64(w3, 16);
    v = VR::dbl(VR::dbl(VR::dbl(VR::dbl(v))));  // R' / R = 16
    out[k] = v;
  }
}

// Inverse transform, decimation in frequency: natural order in, bit-reversed order out, unscaled.
void inverseDif(Blocks& a, const Tables& T) {
  const size_t nb = a.size();
  for (size_t h = T.n / 2; h >= 8; h >>= 1) {
    const size_t hb = h / 8;
    const V52* tw = &(*T.invBig)[T.bigOffset(h)];
    for (size_t g = 0; g < nb; g += 2 * hb) {
      for (size_t t = 0; t < hb; t++) {
        V52 x = a[g + t], y = a[g + t + hb];
        a[g + t] = VR::add(x, y);
        a[g + t + hb] = VR::mul(VR::sub(x, y), tw[t]);
      }
    }
  }
  for (int s = 2; s >= 0; s--) {
    for (size_t k = 0; k < nb; k++) {
      V52 x = a[k], p = permute(x, T.perm[s]);
      V52 top = VR::blend(T.bottom[s], x, p), bot = VR::blend(T.bottom[s], p, x);
      V52 sum = VR::add(top, bot), diff = VR::mul(VR::sub(top, bot), T.invSmall[s]);
      a[k] = VR::blend(T.bottom[s], sum, diff);
    }
  }
}

// Forward transform, decimation in time: bit-reversed order in, natural order out.
void forwardDit(Blocks& a, const Tables& T) {
  const size_t nb = a.size();
  for (int s = 0; s < 3; s++) {
    for (size_t k = 0; k < nb; k++) {
      V52 x = a[k], p = permute(x, T.perm[s]);
      V52 top = VR::blend(T.bottom[s], x, p), bot = VR::blend(T.bottom[s], p, x);
      V52 t = VR::mul(bot, T.fwdSmall[s]);
      a[k] = VR::blend(T.bottom[s], VR::add(top, t), VR::sub(top, t));
    }
  }
  for (size_t h = 8; h < T.n; h <<= 1) {
    const size_t hb = h / 8;
    const V52* tw = &(*T.fwdBig)[T.bigOffset(h)];
    for (size_t g = 0; g < nb; g += 2 * hb) {
      for (size_t t = 0; t < hb; t++) {
        V52 x = a[g + t], y = VR::mul(a[g + t + hb], tw[t]);
        a[g + t] = VR::add(x, y);
        a[g + t + hb] = VR::sub(x, y);
      }
    }
  }
}

void toCoset(Blocks& a, const Tables& T) {
  inverseDif(a, T);
  for (size_t k = 0; k < a.size(); k++) a[k] = VR::mul(a[k], (*T.shiftBR)[k]);
  forwardDit(a, T);
}

}  // namespace

void warmCosetTables52(int log2n) { Tables::forDomain(log2n); }

void cosetHEvaluations52(int log2n, const Fr* a, const Fr* b, const Fr* c, uint64_t* hOut) {
  const Tables& T = Tables::forDomain(log2n);
  const size_t nb = T.n / 8;
  Blocks A(nb), B(nb), C(nb);
  TaskGroup group;
  group.run([&] {
    load(a, A);
    toCoset(A, T);
  });
  group.run([&] {
    load(b, B);
    toCoset(B, T);
  });
  group.run([&] {
    load(c, C);
    toCoset(C, T);
  });
  group.wait();
  // h = A·B − C, out of Montgomery form (a product with plain 1), canonical, as 4 words per value.
  V52 one = VR::zero();
  one.l[0] = _mm512_set1_epi64(1);
  const __m512i idx = _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28);
  for (size_t k = 0; k < nb; k++) {
    V52 h = VR::canonical(VR::mul(VR::sub(VR::mul(A[k], B[k]), C[k]), one));
    __m512i w0 = _mm512_or_si512(h.l[0], _mm512_slli_epi64(h.l[1], 52));
    __m512i w1 = _mm512_or_si512(_mm512_srli_epi64(h.l[1], 12), _mm512_slli_epi64(h.l[2], 40));
    __m512i w2 = _mm512_or_si512(_mm512_srli_epi64(h.l[2], 24), _mm512_slli_epi64(h.l[3], 28));
    __m512i w3 = _mm512_or_si512(_mm512_srli_epi64(h.l[3], 36), _mm512_slli_epi64(h.l[4], 16));
    long long* base = (long long*)(hOut + 32 * k);
    _mm512_i64scatter_epi64(base, idx, w0, 8);
    _mm512_i64scatter_epi64(base + 1, idx, w1, 8);
    _mm512_i64scatter_epi64(base + 2, idx, w2, 8);
    _mm512_i64scatter_epi64(base + 3, idx, w3, 8);
  }
}

}  // namespace zk
#pragma GCC pop_options

#else  // no AVX-512 path on this platform: never called, since avx512MsmEnabled() is false
namespace zk {
void warmCosetTables52(int) {}
void cosetHEvaluations52(int, const Fr*, const Fr*, const Fr*, uint64_t*) {}
}  // namespace zk
#endif
