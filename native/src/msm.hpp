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
#include "bucket_reduce.hpp"
#include "curve.hpp"
#include "msm_avx512.hpp"
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

// Window j covers bits [start[j], start[j] + width[j]) of the magnitudes. All windows are c bits wide
// except the top one: a narrow remainder is merged into the window below, since a 2-bit top window
// would send every point to the same 2 buckets.
struct Windows {
  Scratch<int> start, width;
  int count() const { return (int)start.size(); }
  int32_t half(int j) const { return (int32_t)1 << (width[j] - 1); }
};

// Signed digits need maxBits + 1 bits (the top digit may carry).
inline Windows windowLayout(int maxBits, int c) {
  Windows w;
  int nW = (maxBits + c) / c;
  int rem = maxBits + 1 - c * (nW - 1);  // 1..c bits left for the top window
  bool merge = nW >= 2 && rem <= c / 2;
  if (merge) nW--;
  for (int j = 0; j < nW; j++) {
    w.start.push_back(j * c);
    w.width.push_back(j < nW - 1 ? c : merge ? c + rem : rem);
  }
  return w;
}

// Cost (in bucket-addition units) of a window size c, from the histogram of bit lengths (countByBits[b]
// entries have b bits). bucketWeight is the cost of reducing one bucket (two scalar XYZZ additions)
// over one bucket addition.
inline double costOf(const Scratch<size_t>& countByBits, int maxBits, int c, double bucketWeight) {
  double adds = 0;
  for (int b = 1; b <= maxBits; b++) adds += (double)countByBits[b] * ((b + c) / c);  // ceil((b + 1) / c)
  Windows w = windowLayout(maxBits, c);
  double buckets = 0;
  for (int j = 0; j < w.count(); j++) buckets += w.half(j);
  return adds + buckets * bucketWeight;
}

// Entries with equal magnitudes, merged: k*P + k*Q = k*(P + Q). Circuits copy values between wires,
// so equal witness values are common (policy_tx_2_2: 25,368 full-size values, 12,589 distinct); each
// merge costs one batched affine addition instead of one bucket addition per window, and it also keeps
// equal scalars from piling onto the same bucket in every window. The merged entries' bases are
// appended to `merged` and numbered from n (the number of original bases) on; entries whose merged
// base is infinity (the points cancelled) are dropped.
template <class F, class BaseAt>
void mergeEqualScalars(const BaseAt& baseAt, size_t n, Scratch<Entry>& entries,
                       Scratch<Affine<F>>& merged) {
  const size_t m = entries.size();
  if (m < 2) return;
  Scratch<uint32_t> order(m);
  for (size_t i = 0; i < m; i++) order[i] = (uint32_t)i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint64_t *x = entries[a].mag, *y = entries[b].mag;
    for (int l = 3; l >= 0; l--)
      if (x[l] != y[l]) return x[l] < y[l];
    return a < b;
  });
  auto same = [&](uint32_t a, uint32_t b) { return std::memcmp(entries[a].mag, entries[b].mag, 32) == 0; };
  // Groups of two or more, their members' signed bases side by side in pts.
  Scratch<uint32_t> rep, start, count;
  Scratch<Affine<F>> pts;
  for (size_t i = 0; i < m;) {
    size_t j = i + 1;
    while (j < m && same(order[i], order[j])) j++;
    if (j - i >= 2) {
      rep.push_back(order[i]);
      start.push_back((uint32_t)pts.size());
      count.push_back((uint32_t)(j - i));
      for (size_t k = i; k < j; k++) {
        const Entry& e = entries[order[k]];
        const Affine<F> p = baseAt(e.base);
        pts.push_back(e.neg ? p.negate() : p);
      }
    }
    i = j;
  }
  if (rep.empty()) return;
  // Pairwise tree sums of all groups at once: each round is one batch with one inversion.
  Scratch<Affine<F>*> dst;
  Scratch<const Affine<F>*> src;
  BatchInverse<F> batch;
  for (bool more = true; more;) {
    more = false;
    dst.clear();
    src.clear();
    for (size_t g = 0; g < rep.size(); g++)
      for (uint32_t k = 0; k + 1 < count[g]; k += 2) {
        dst.push_back(&pts[start[g] + k]);
        src.push_back(&pts[start[g] + k + 1]);
      }
    batchAddAffine(dst.data(), src.data(), dst.size(), batch);
    for (size_t g = 0; g < rep.size(); g++) {
      if (count[g] == 1) continue;
      uint32_t half = (count[g] + 1) / 2;
      for (uint32_t k = 1; k < half; k++) pts[start[g] + k] = pts[start[g] + 2 * k];
      count[g] = half;
      more = more || half > 1;
    }
  }
  // Rebuild the entry list: singletons as they were, one entry per group.
  Scratch<uint8_t> inGroup(m, 0);
  for (size_t i = 0; i < m;) {
    size_t j = i + 1;
    while (j < m && same(order[i], order[j])) j++;
    if (j - i >= 2)
      for (size_t k = i; k < j; k++) inGroup[order[k]] = 1;
    i = j;
  }
  Scratch<Entry> out;
  out.reserve(m - pts.size() + rep.size());
  for (size_t i = 0; i < m; i++)
    if (!inGroup[i]) out.push_back(entries[i]);
  merged.reserve(rep.size());
  for (size_t g = 0; g < rep.size(); g++) {
    const Affine<F>& sum = pts[start[g]];
    if (sum.isInfinity()) continue;
    Entry e = entries[rep[g]];
    e.neg = 0;
    e.base = (uint32_t)(n + merged.size());
    merged.push_back(sum);
    out.push_back(e);
  }
  entries.swap(out);
}

}  // namespace msm_detail

// Brings an affine point (64 or 128 bytes, any alignment) into the cache ahead of its use.
template <class F>
inline void prefetchPoint(const Affine<F>* p) {
  const char* b = reinterpret_cast<const char*>(p);
  for (size_t off = 0; off < sizeof(Affine<F>); off += 64) __builtin_prefetch(b + off);
  __builtin_prefetch(b + sizeof(Affine<F>) - 1);
}

// Scalar bucket phase: a (window x point range) task grid, each window split into point ranges when
// it is long compared to its bucket count.
template <class F>
void sumWindowsScalar(const Affine<F>* bases, size_t nBases, const Affine<F>* merged,
                      const Scratch<msm_detail::Entry>& entries,
                      const Scratch<int32_t>& digits, const Scratch<size_t>& windowLen,
                      const msm_detail::Windows& win, unsigned nThreads, ThreadPool& pool,
                      Scratch<XYZZ<F>>& windowSum) {
  const int nWindows = win.count();
  struct Task {
    int window;
    size_t begin, end;
  };
  Scratch<Task> tasks;
  for (int j = 0; j < nWindows; j++) {
    size_t len = windowLen[j];
    size_t chunks = std::max<size_t>(1, std::min<size_t>(nThreads * 2, len / ((size_t)win.half(j) * 8)));
    if (nWindows >= (int)nThreads * 4) chunks = 1;
    size_t step = (len + chunks - 1) / chunks;
    for (size_t b = 0; b < len; b += step) tasks.push_back(Task{j, b, std::min(len, b + step)});
  }
  Scratch<BucketSet<F>> sets(tasks.size());
  pool.parallelFor(tasks.size(), [&](size_t t) {
    const Task& task = tasks[t];
    BucketAccumulator<F> acc(win.half(task.window));
    // The bases are visited in scalar order, i.e. at random: fetch them a few entries ahead, since
    // waiting for those loads cost about a tenth of the scalar MSM (perf, policy_tx_2_2).
    // Merged bases (numbered from nBases on) live in their own array, so the key's bases are never copied.
    constexpr size_t kAhead = 12;
    auto base = [&](uint32_t k) -> const Affine<F>* { return k < nBases ? &bases[k] : &merged[k - nBases]; };
    for (size_t i = task.begin; i < task.end; i++) {
      if (i + kAhead < task.end) prefetchPoint(base(entries[i + kAhead].base));
      int32_t v = digits[i * nWindows + task.window];
      if (v == 0) continue;
      const msm_detail::Entry& e = entries[i];
      bool negate = (v < 0) != (e.neg != 0);
      acc.add(v < 0 ? -v - 1 : v - 1, *base(e.base), negate);
    }
    acc.finish(sets[t].buckets, sets[t].overflow);
  });
  Scratch<XYZZ<F>> results = reduceBucketSets(sets, pool);
  for (size_t t = 0; t < tasks.size(); t++) windowSum[tasks[t].window].add(results[t]);
}

// AVX-512 bucket phase: a task owns a group of windows (their buckets side by side, so one batch of
// pending additions rarely collides and shares one inversion across more additions).
template <class F>
void sumWindowsVector(const uint64_t* bases52, const Scratch<msm_detail::Entry>& entries,
                      const Scratch<int32_t>& digits, const Scratch<size_t>& windowLen,
                      const msm_detail::Windows& win, ThreadPool& pool, Scratch<XYZZ<F>>& windowSum) {
  const int nWindows = win.count();
  // Consecutive windows up to ~4096 buckets per group: each group is one pool task, and smaller tasks
  // balance the two cores better at the end of a proof.
  Scratch<int> groupStart{0};
  for (int j = 0, buckets = 0; j < nWindows; j++) {
    if (buckets > 0 && buckets + win.half(j) > 4096) {
      groupStart.push_back(j);
      buckets = 0;
    }
    buckets += win.half(j);
  }
  groupStart.push_back(nWindows);
  const size_t nGroups = groupStart.size() - 1;
  Scratch<BucketSet<F>> sets(nWindows);
  pool.parallelFor(nGroups, [&](size_t g) {
    const int j0 = groupStart[g], j1 = groupStart[g + 1];
    Scratch<uint32_t> offset(j1 - j0 + 1, 0);
    for (int j = j0; j < j1; j++) offset[j - j0 + 1] = offset[j - j0] + (uint32_t)win.half(j);
    Scratch<BucketOp> ops;
    ops.reserve(windowLen[j0] * (j1 - j0));
    for (size_t i = 0; i < windowLen[j0]; i++) {
      const msm_detail::Entry& e = entries[i];
      for (int j = j0; j < j1; j++) {
        int32_t v = digits[i * nWindows + j];
        if (v == 0) continue;
        uint32_t bucket = offset[j - j0] + (uint32_t)(v < 0 ? -v - 1 : v - 1);
        if ((v < 0) != (e.neg != 0)) bucket |= kBucketNegate;
        ops.push_back(BucketOp{bucket, e.base});
      }
    }
    Scratch<Affine<F>> buckets;
    Scratch<XYZZ<F>> overflow;
    accumulateBuckets52(bases52, ops.data(), ops.size(), offset.back(), buckets, overflow);
    for (int j = j0; j < j1; j++) {
      const size_t off = offset[j - j0], len = (size_t)win.half(j);
      BucketSet<F>& set = sets[j];
      set.buckets.assign(buckets.begin() + off, buckets.begin() + off + len);
      if (!overflow.empty()) set.overflow.assign(overflow.begin() + off, overflow.begin() + off + len);
    }
  });
  Scratch<XYZZ<F>> sums = reduceBucketSets(sets, pool);
  for (int j = 0; j < nWindows; j++) windowSum[j] = sums[j];
}

// bases52: the same bases in the AVX-512 path's form (toBases52), or null for the scalar path. The
// vector path reads only bases52 (so only those pages of a mapped key are touched); bases may then be null.
// mergeEqual: look for equal scalars (mergeEqualScalars); off for scalars with no structure (H).
template <class F>
XYZZ<F> msm(const Affine<F>* bases, ScalarView scalars, const uint64_t* bases52 = nullptr,
            bool mergeEqual = true, ThreadPool& pool = ThreadPool::instance()) {
  using namespace msm_detail;
  const uint64_t* R = FrParams::P;
  const bool vec = bases52 != nullptr && avx512MsmEnabled();
  constexpr size_t PW = kBase52Words<F>;  // words per point in the vector path's form
  auto isInfinity = [&](size_t i) {
    if (!vec) return bases[i].isInfinity();
    const uint64_t* w = bases52 + i * PW;
    for (size_t k = 0; k < PW; k++)
      if (w[k] != 0) return false;
    return true;
  };
  Scratch<Entry> entries;
  entries.reserve(scalars.n);
  for (size_t i = 0; i < scalars.n; i++) {
    const uint64_t* k = scalars.at(i);
    if (limbsZero(k) || isInfinity(i)) continue;
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
  // Merged entries refer to bases numbered from scalars.n on: the scalar path keeps them in their own
  // array; the vector path (whose gathers take one array) uses a copy of bases52 with theirs appended.
  Scratch<Affine<F>> merged;
  Scratch<uint64_t> allBases52;
  if (mergeEqual) {
    if (vec)
      mergeEqualScalars<F>([&](uint32_t i) { return fromBase52(bases52 + i * PW, (const F*)nullptr); },
                           scalars.n, entries, merged);
    else
      mergeEqualScalars<F>([&](uint32_t i) { return bases[i]; }, scalars.n, entries, merged);
  }
  if (vec && !merged.empty()) {
    allBases52.resize((scalars.n + merged.size()) * PW);
    std::copy(bases52, bases52 + scalars.n * PW, allBases52.data());
    toBases52(merged.data(), merged.size(), allBases52.data() + scalars.n * PW);
    bases52 = allBases52.data();
  }
  if (entries.empty()) return XYZZ<F>::infinity();
  // Counting sort by bit length, longest first (stable).
  Scratch<size_t> countByBits(257, 0);
  int maxBits = 0;
  for (const Entry& e : entries) {
    countByBits[e.bits]++;
    maxBits = std::max<int>(maxBits, e.bits);
  }
  {
    Scratch<size_t> next(257, 0);
    for (int b = maxBits, pos = 0; b >= 0; b--) {
      next[b] = (size_t)pos;
      pos += (int)countByBits[b];
    }
    Scratch<Entry> sorted(entries.size());
    for (const Entry& e : entries) sorted[next[e.bits]++] = e;
    entries.swap(sorted);
  }

  // A bucket's reduction is two batched affine additions (reduceBucketSets), about two scalar bucket
  // additions; for the vector path (eight lanes of IFMA per bucket addition) the weights were tuned on
  // policy_tx_2_2.
  const double bucketWeight = !vec ? 2.0 : sizeof(F) == sizeof(Fq) ? 12 : 8;
  int c = 2;
  double best = 1e300;
  for (int cc = 2; cc <= 15; cc++) {
    double cost = costOf(countByBits, maxBits, cc, bucketWeight);
    if (cost < best) {
      best = cost;
      c = cc;
    }
  }
  const Windows win = windowLayout(maxBits, c);
  const int nWindows = win.count();
  const size_t nE = entries.size();

  // Signed digits, entry-major (digits[i * nWindows + j]: an entry's digits are written and read
  // together), plus per-window prefix lengths (entries are sorted by bits).
  Scratch<int32_t> digits((size_t)nWindows * nE, 0);
  Scratch<size_t> windowLen(nWindows, 0);
  for (size_t i = 0; i < nE; i++) {
    const Entry& e = entries[i];
    uint32_t carry = 0;
    int j = 0;
    for (; j < nWindows && win.start[j] <= e.bits; j++) {
      const int32_t half = win.half(j);
      int32_t w = (int32_t)(extractBits(e.mag, win.start[j], win.width[j]) + carry);
      carry = w > half;  // without a branch: it goes either way at random
      digits[i * nWindows + j] = w - (int32_t)carry * 2 * half;
    }
    for (int k = 0; k < j; k++) windowLen[k] = i + 1;
  }

  Scratch<XYZZ<F>> windowSum(nWindows, XYZZ<F>::infinity());
  if (vec)
    sumWindowsVector(bases52, entries, digits, windowLen, win, pool, windowSum);
  else
    sumWindowsScalar(bases, scalars.n, merged.data(), entries, digits, windowLen, win, pool.size(), pool, windowSum);
  XYZZ<F> total = windowSum[nWindows - 1];
  for (int j = nWindows - 2; j >= 0; j--) {
    for (int k = 0; k < win.width[j]; k++) total = XYZZ<F>::dbl(total);
    total.add(windowSum[j]);
  }
  return total;
}

}  // namespace zk
