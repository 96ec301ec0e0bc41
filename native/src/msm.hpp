// Multi-scalar multiplication sum(k_i * P_i) by Pippenger's bucket method, tuned for circom witnesses:
//  * zero scalars and infinity bases are dropped up front;
//  * a scalar above r/2 is replaced by r - k with the base negated, so "small negative" values such as
//    r - 1 cost as little as small positive ones;
//  * entries are sorted by bit length and window j only visits the entries that still have bits
//    there, so a 0/1 scalar costs one bucket addition instead of one per window;
//  * signed digits halve the bucket count; the window size comes from a cost model over the actual
//    bit lengths; tasks form a (window x point-range) grid on the addon's thread pool.
#pragma once
#include <algorithm>
#include <vector>

#include "bucket_accumulator.hpp"
#include "curve.hpp"
#include "thread_pool.hpp"

namespace zk {

// Scalars are plain (non-Montgomery) integers < r, 4 little-endian limbs each.
struct ScalarView {
  const uint64_t* limbs;  // 4 * n words
  size_t n;
  inline const uint64_t* at(size_t i) const { return limbs + 4 * i; }
};

namespace msm_detail {

static const uint64_t HALF_R[4] = {0xa1f0fac9f8000000ULL, 0x9419f4243cdcb848ULL, 0xdc2822db40c0ac2eULL,
                                   0x183227397098d014ULL};  // (r - 1) / 2

inline int bitLength(const uint64_t a[4]) {
  for (int i = 3; i >= 0; i--)
    if (a[i]) return 64 * i + 64 - __builtin_clzll(a[i]);
  return 0;
}

struct Entry {
  uint32_t base;
  uint16_t bits;
  uint8_t neg;
  uint64_t mag[4];
};

inline uint32_t extractBits(const uint64_t m[4], int pos, int c) {
  int limb = pos >> 6, off = pos & 63;
  if (limb >= 4) return 0;
  uint64_t v = m[limb] >> off;
  if (off + c > 64 && limb + 1 < 4) v |= m[limb + 1] << (64 - off);
  return (uint32_t)(v & ((1ULL << c) - 1));
}

// Cost (in mixed-addition units) of a window size c for sorted bit lengths.
inline double costOf(const std::vector<Entry>& e, int c) {
  double adds = 0;
  for (const Entry& x : e) adds += (x.bits + c) / c;  // ceil((bits + 1) / c)
  int maxBits = e.empty() ? 0 : e[0].bits;
  int windows = (maxBits + c) / c;
  return adds + windows * (double)(1u << c) * 1.7;  // reduction: ~24 vs ~7 muls per bucket add
}

}  // namespace msm_detail

template <class F>
XYZZ<F> msm(const Affine<F>* bases, ScalarView scalars, ThreadPool& pool = ThreadPool::instance()) {
  using namespace msm_detail;
  const uint64_t* R = FrParams::P;
  std::vector<Entry> entries;
  entries.reserve(scalars.n);
  for (size_t i = 0; i < scalars.n; i++) {
    const uint64_t* k = scalars.at(i);
    if (limbsZero(k) || bases[i].isInfinity()) continue;
    Entry e;
    e.base = (uint32_t)i;
    if (limbsGeq(k, HALF_R) && !(k[0] == HALF_R[0] && k[1] == HALF_R[1] && k[2] == HALF_R[2] && k[3] == HALF_R[3])) {
      u128 br = 0;
      for (int j = 0; j < 4; j++) {
        u128 d = (u128)R[j] - k[j] - (uint64_t)br;
        e.mag[j] = (uint64_t)d;
        br = (d >> 64) & 1;
      }
      e.neg = 1;
    } else {
      std::memcpy(e.mag, k, 32);
      e.neg = 0;
    }
    e.bits = (uint16_t)bitLength(e.mag);
    entries.push_back(e);
  }
  if (entries.empty()) return XYZZ<F>::infinity();
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.bits > b.bits; });

  int c = 2;
  double best = 1e300;
  for (int cc = 2; cc <= 15; cc++) {
    double cost = costOf(entries, cc);
    if (cost < best) {
      best = cost;
      c = cc;
    }
  }
  const int nWindows = (entries[0].bits + c) / c;
  const size_t nE = entries.size();
  const int32_t half = 1 << (c - 1);

  // Signed digits, window-major, plus per-window prefix lengths (entries are sorted by bits).
  std::vector<int32_t> digits((size_t)nWindows * nE, 0);
  std::vector<size_t> windowLen(nWindows, 0);
  for (size_t i = 0; i < nE; i++) {
    const Entry& e = entries[i];
    int kw = (e.bits + c) / c;
    uint32_t carry = 0;
    for (int j = 0; j < kw; j++) {
      int32_t w = (int32_t)(extractBits(e.mag, j * c, c) + carry);
      if (w > half) {
        w -= (1 << c);
        carry = 1;
      } else {
        carry = 0;
      }
      digits[(size_t)j * nE + i] = w;
    }
    for (int j = 0; j < kw; j++) windowLen[j] = i + 1;
  }

  // Task grid: each window is split into point ranges when it is long compared to its bucket count.
  struct Task {
    int window;
    size_t begin, end;
  };
  std::vector<Task> tasks;
  const unsigned nThreads = pool.size();
  for (int j = 0; j < nWindows; j++) {
    size_t len = windowLen[j];
    size_t chunks = std::max<size_t>(1, std::min<size_t>(nThreads * 2, len / ((size_t)half * 8)));
    if (nWindows >= (int)nThreads * 4) chunks = 1;
    size_t step = (len + chunks - 1) / chunks;
    for (size_t b = 0; b < len; b += step) tasks.push_back(Task{j, b, std::min(len, b + step)});
  }
  std::vector<XYZZ<F>> results(tasks.size());
  pool.parallelFor(tasks.size(), [&](size_t t) {
    const Task& task = tasks[t];
    const int32_t* d = digits.data() + (size_t)task.window * nE;
    BucketAccumulator<F> acc(half);
    for (size_t i = task.begin; i < task.end; i++) {
      int32_t v = d[i];
      if (v == 0) continue;
      const Entry& e = entries[i];
      bool negate = (v < 0) != (e.neg != 0);
      acc.add(v < 0 ? -v - 1 : v - 1, bases[e.base], negate);
    }
    results[t] = acc.reduce();
  });

  std::vector<XYZZ<F>> windowSum(nWindows, XYZZ<F>::infinity());
  for (size_t t = 0; t < tasks.size(); t++) windowSum[tasks[t].window].add(results[t]);
  XYZZ<F> total = windowSum[nWindows - 1];
  for (int j = nWindows - 2; j >= 0; j--) {
    for (int k = 0; k < c; k++) total = XYZZ<F>::dbl(total);
    total.add(windowSum[j]);
  }
  return total;
}

}  // namespace zk
