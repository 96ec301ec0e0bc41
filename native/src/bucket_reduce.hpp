// Bucket reduction sum_k (k + 1) * B_k for many bucket sets at once, in affine form with batched
// inversions. The running-sum method costs two point additions per bucket; done one set at a time they
// are XYZZ additions (~25 multiplications per bucket). Here every set is cut into segments of kSegment
// buckets and all segments of all sets advance in lock step: each step is two rounds of independent
// affine additions (running += B_k, then total += running), each round sharing one inversion
// (Montgomery's trick), ~13 multiplications per bucket. A segment starting at bucket lo contributes
// total + lo * running; with lo = s * kSegment the lo terms are kSegment * sum_s s * running_s, again a
// running sum, over the few segments, in XYZZ.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "arena.hpp"
#include "batch_inverse.hpp"
#include "curve.hpp"
#include "thread_pool.hpp"

namespace zk {

// dst[i] += src[i] for n pairs of affine points (dst entries distinct), with one shared inversion.
// Infinity, P == Q (doubling) and P == -Q are handled. The batch inverter's storage is reused.
template <class F>
void batchAddAffine(Affine<F>* const* dst, const Affine<F>* const* src, size_t n, BatchInverse<F>& batch) {
  batch.begin(n);
  for (size_t i = 0; i < n; i++) {
    const Affine<F>& a = *dst[i];
    const Affine<F>& b = *src[i];
    F d;
    if (a.isInfinity() || b.isInfinity()) {
      d = F::one();
    } else if (a.x == b.x) {
      d = (a.y == b.y) ? F::dbl(b.y) : F::one();  // doubling (y != 0 on these curves), or P + (-P)
    } else {
      d = F::sub(b.x, a.x);
    }
    batch.push(i, d);
  }
  batch.invert();
  for (size_t i = n; i-- > 0;) {
    F invD = batch.next(i);
    Affine<F>& a = *dst[i];
    const Affine<F>& b = *src[i];
    if (b.isInfinity()) continue;
    if (a.isInfinity()) {
      a = b;
      continue;
    }
    F lambda;
    if (a.x == b.x) {
      if (a.y != b.y) {
        a = Affine<F>::infinity();
        continue;
      }
      F x2 = F::sqr(b.x);
      lambda = F::mulLazy(F::add(F::dbl(x2), x2), invD);
    } else {
      lambda = F::mulLazy(F::sub(b.y, a.y), invD);
    }
    F x3 = F::sub(F::sub(F::sqr(lambda), a.x), b.x);
    F y3 = F::sub(F::mul(lambda, F::sub(a.x, x3)), a.y);
    a.x = x3;
    a.y = y3;
  }
}

// One set of affine buckets to reduce; overflow (XYZZ, same length) may be empty.
template <class F>
struct BucketSet {
  Scratch<Affine<F>> buckets;
  Scratch<XYZZ<F>> overflow;
};

// Returns sum_k (k + 1) * (buckets[k] + overflow[k]) for every set, spread over the pool.
template <class F>
Scratch<XYZZ<F>> reduceBucketSets(Scratch<BucketSet<F>>& sets, ThreadPool& pool) {
  constexpr size_t kSegment = 64;
  // Fold overflow buckets into the affine ones first (rare: hot buckets only).
  for (BucketSet<F>& s : sets) {
    if (s.overflow.empty()) continue;
    Scratch<size_t> idx;
    Scratch<XYZZ<F>> sums;
    for (size_t k = 0; k < s.buckets.size(); k++) {
      if (s.overflow[k].isInfinity()) continue;
      XYZZ<F> t = s.overflow[k];
      t.addAffine(s.buckets[k]);
      idx.push_back(k);
      sums.push_back(t);
    }
    Scratch<Affine<F>> aff(sums.size());
    batchToAffine(sums.data(), aff.data(), sums.size());
    for (size_t i = 0; i < idx.size(); i++) s.buckets[idx[i]] = aff[i];
    s.overflow.clear();
  }
  struct Chain {
    uint32_t set, lo, hi;  // buckets [lo, hi) of set
  };
  Scratch<Chain> chains;
  for (size_t si = 0; si < sets.size(); si++)
    for (size_t lo = 0; lo < sets[si].buckets.size(); lo += kSegment)
      chains.push_back(Chain{(uint32_t)si, (uint32_t)lo,
                             (uint32_t)std::min(sets[si].buckets.size(), lo + kSegment)});
  Scratch<Affine<F>> running(chains.size(), Affine<F>::infinity()), total(chains.size(), Affine<F>::infinity());
  // Two tasks per thread at most; each advances its chains in lock step with its own batches.
  const size_t nTasks = std::max<size_t>(1, std::min<size_t>(pool.size(), chains.size() / 64));
  pool.parallelFor(nTasks, [&](size_t task) {
    const size_t c0 = chains.size() * task / nTasks, c1 = chains.size() * (task + 1) / nTasks;
    Scratch<Affine<F>*> dst;
    Scratch<const Affine<F>*> src;
    BatchInverse<F> batch;
    dst.reserve(c1 - c0);
    src.reserve(c1 - c0);
    for (size_t step = 0; step < kSegment; step++) {
      dst.clear();
      src.clear();
      for (size_t c = c0; c < c1; c++) {
        const Chain& ch = chains[c];
        if (ch.hi - ch.lo <= step) continue;
        const Affine<F>& b = sets[ch.set].buckets[ch.hi - 1 - step];
        if (b.isInfinity()) continue;
        dst.push_back(&running[c]);
        src.push_back(&b);
      }
      if (!dst.empty()) batchAddAffine(dst.data(), src.data(), dst.size(), batch);
      dst.clear();
      src.clear();
      for (size_t c = c0; c < c1; c++) {
        const Chain& ch = chains[c];
        if (ch.hi - ch.lo <= step || running[c].isInfinity()) continue;
        dst.push_back(&total[c]);
        src.push_back(&running[c]);
      }
      if (!dst.empty()) batchAddAffine(dst.data(), src.data(), dst.size(), batch);
    }
  });
  // Per set: sum of segment totals + kSegment * sum_s s * running_s (chains of a set are consecutive).
  Scratch<XYZZ<F>> out(sets.size(), XYZZ<F>::infinity());
  for (size_t c = 0; c < chains.size();) {
    const uint32_t si = chains[c].set;
    size_t end = c;
    while (end < chains.size() && chains[end].set == si) end++;
    XYZZ<F> sum = XYZZ<F>::infinity(), run = XYZZ<F>::infinity(), weighted = XYZZ<F>::infinity();
    for (size_t k = end; k-- > c;) {
      sum.addAffine(total[k]);
      if (k > c) {
        run.addAffine(running[k]);
        weighted.add(run);
      }
    }
    for (size_t d = 1; d < kSegment; d <<= 1) weighted = XYZZ<F>::dbl(weighted);
    sum.add(weighted);
    out[si] = sum;
    c = end;
  }
  return out;
}

}  // namespace zk
