// Pippenger buckets kept in affine form and updated with batch-affine additions: up to kBatch pending
// additions (each to a distinct bucket) share one field inversion (Montgomery's trick), so an addition
// costs about 6 multiplications instead of 10 for an XYZZ mixed addition. A point whose bucket already
// has a pending addition waits for the next batch. Empty buckets, P == Q (doubling) and P == -Q
// (the bucket becomes empty) are all handled explicitly. When many points hit the same bucket (e.g. a
// bit-heavy witness puts every 1 in bucket 0) the waiting queue is capped and the surplus goes into an
// XYZZ side bucket instead, so an addition never costs a whole inversion.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "arena.hpp"
#include "batch_inverse.hpp"
#include "curve.hpp"

namespace zk {

// sum_k (k + 1) * (bucket[k] + overflow[k]) by the running-sum method; overflow may be null.
template <class F>
XYZZ<F> bucketWeightedSum(const Affine<F>* buckets, const XYZZ<F>* overflow, size_t n) {
  XYZZ<F> running = XYZZ<F>::infinity(), total = XYZZ<F>::infinity();
  for (size_t k = n; k-- > 0;) {
    running.addAffine(buckets[k]);
    if (overflow) running.add(overflow[k]);
    total.add(running);
  }
  return total;
}

template <class F>
class BucketAccumulator {
 public:
  // The batch grows with the bucket count (more buckets, fewer collisions) to spread the inversion.
  explicit BucketAccumulator(int nBuckets)
      : kBatch(std::min<size_t>(512, std::max<size_t>(32, (size_t)nBuckets / 6))),
        kMaxDeferred(kBatch / 4 + 8),
        buckets_(nBuckets, Affine<F>::infinity()),
        busy_(nBuckets, 0) {
    pending_.reserve(kBatch);
    deferred_.reserve(kMaxDeferred);
  }

  inline void add(int bucket, const Affine<F>& p, bool negate) {
    Affine<F> q = negate ? Affine<F>{p.x, F::neg(p.y)} : p;
    if (busy_[bucket]) {
      if (deferred_.size() < kMaxDeferred) {
        deferred_.push_back(Op{bucket, q});
      } else {
        if (overflow_.empty()) overflow_.assign(buckets_.size(), XYZZ<F>::infinity());
        overflow_[bucket].addAffine(q);
      }
      return;
    }
    busy_[bucket] = 1;
    pending_.push_back(Op{bucket, q});
    if (pending_.size() >= kBatch) flush();
  }

  XYZZ<F> reduce() {
    while (!pending_.empty() || !deferred_.empty()) flush();
    return bucketWeightedSum(buckets_.data(), overflow_.empty() ? nullptr : overflow_.data(), buckets_.size());
  }

  // Applies every queued addition and hands the buckets over (for reduceBucketSets); the accumulator
  // is empty afterwards.
  void finish(Scratch<Affine<F>>& buckets, Scratch<XYZZ<F>>& overflow) {
    while (!pending_.empty() || !deferred_.empty()) flush();
    buckets.swap(buckets_);
    overflow.swap(overflow_);
  }

 private:
  const size_t kBatch;
  const size_t kMaxDeferred;
  struct Op {
    int bucket;
    Affine<F> p;
  };

  // Applies all pending additions with one inversion, then refills from the deferred queue.
  void flush() {
    const size_t n = pending_.size();
    batch_.begin(n);
    for (size_t i = 0; i < n; i++) {
      const Op& op = pending_[i];
      const Affine<F>& b = buckets_[op.bucket];
      F d;
      if (b.isInfinity()) {
        d = F::one();  // no division needed: the bucket simply takes the point
      } else if (b.x == op.p.x) {
        d = (b.y == op.p.y) ? F::dbl(op.p.y) : F::one();  // doubling, or P + (-P)
        if (d.isZero()) d = F::one();  // y == 0 cannot occur on these prime-order curves
      } else {
        d = F::sub(op.p.x, b.x);
      }
      batch_.push(i, d);
    }
    batch_.invert();
    for (size_t i = n; i-- > 0;) {
      const Op& op = pending_[i];
      F invD = batch_.next(i);
      Affine<F>& b = buckets_[op.bucket];
      busy_[op.bucket] = 0;
      if (b.isInfinity()) {
        b = op.p;
        continue;
      }
      F lambda;
      if (b.x == op.p.x) {
        if (b.y != op.p.y) {
          b = Affine<F>::infinity();
          continue;
        }
        F x2 = F::sqr(op.p.x);
        lambda = F::mulLazy(F::add(F::dbl(x2), x2), invD);
      } else {
        lambda = F::mulLazy(F::sub(op.p.y, b.y), invD);
      }
      F x3 = F::sub(F::sub(F::sqr(lambda), b.x), op.p.x);
      F y3 = F::sub(F::mul(lambda, F::sub(b.x, x3)), b.y);
      b.x = x3;
      b.y = y3;
    }
    pending_.clear();
    // Move deferred additions into the next batch (those that still collide stay deferred).
    size_t kept = 0;
    for (size_t i = 0; i < deferred_.size(); i++) {
      const Op& op = deferred_[i];
      if (!busy_[op.bucket]) {
        busy_[op.bucket] = 1;
        pending_.push_back(op);
      } else {
        deferred_[kept++] = op;
      }
    }
    deferred_.resize(kept);
  }

  Scratch<Affine<F>> buckets_;
  Scratch<XYZZ<F>> overflow_;
  Scratch<uint8_t> busy_;
  Scratch<Op> pending_, deferred_;
  BatchInverse<F> batch_;
};

}  // namespace zk
