// Pippenger buckets in XYZZ coordinates: each addition is a mixed (XYZZ + affine) addition.
#pragma once
#include <vector>

#include "curve.hpp"

namespace zk {

template <class F>
class BucketAccumulator {
 public:
  explicit BucketAccumulator(int nBuckets) : buckets_(nBuckets, XYZZ<F>::infinity()) {}

  inline void add(int bucket, const Affine<F>& p, bool negate) {
    if (negate) {
      buckets_[bucket].addAffine(Affine<F>{p.x, F::neg(p.y)});
    } else {
      buckets_[bucket].addAffine(p);
    }
  }

  // sum_k (k + 1) * bucket[k] by the running-sum method.
  XYZZ<F> reduce() const {
    XYZZ<F> running = XYZZ<F>::infinity(), total = XYZZ<F>::infinity();
    for (size_t k = buckets_.size(); k-- > 0;) {
      running.add(buckets_[k]);
      total.add(running);
    }
    return total;
  }

 private:
  std::vector<XYZZ<F>> buckets_;
};

}  // namespace zk
