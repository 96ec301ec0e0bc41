// Batch-affine Pippenger buckets on AVX-512 IFMA. Pending additions (each to a distinct bucket) are
// processed eight per vector: one forward pass multiplies the denominators x_P - x_B into eight
// running products, one scalar inversion (Montgomery's trick across the eight lanes) inverts them
// all, and a backward pass finishes lambda, x3 and y3 and scatters the new buckets. A vector
// multiplication costs ~6.6 ns per element here against ~35 ns for the scalar ADX one.
// Lanes where x_P == x_B (doubling, or P + (-P)) are rare and finished by scalar code.
#include "msm_avx512.hpp"

#include <algorithm>
#include <cstdlib>

#include "field.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define ZK_HAVE_AVX512_PATH 1
#else
#define ZK_HAVE_AVX512_PATH 0
#endif

namespace zk {

bool avx512MsmSupported() {
#if ZK_HAVE_AVX512_PATH
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
  }();
  return has;
#else
  return false;
#endif
}

bool avx512MsmEnabled() {
  static const bool on = avx512MsmSupported() && std::getenv("ZKPROVER_NO_AVX512") == nullptr;
  return on;
}

}  // namespace zk

#if ZK_HAVE_AVX512_PATH
// Everything below is compiled for AVX-512; it only runs when avx512MsmEnabled() said so. The shared
// headers are included above this line so their inline functions keep the default target.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512ifma")
// GCC 12 reports its own intrinsics (_mm512_undefined_epi32) as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "avx512/aligned_array.hpp"
#include "avx512/convert52.hpp"
#include "avx512/fp52x2.hpp"

namespace zk {
namespace {

using namespace avx512;
typedef F52<FqTag> VF;
typedef F52x2<FqTag> VF2;

// The vector policy per coordinate field: element type, words per coordinate, gathers and scalars.
template <class F>
struct Lanes;

template <>
struct Lanes<Fq> {
  typedef V52 E;
  typedef VF Ops;
  static constexpr int W = 5;
  static inline E gather(const uint64_t* base, __m512i idx, __mmask8 m) {
    E r;
    for (int j = 0; j < 5; j++)
      r.l[j] = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), m, idx, (const long long*)(base + j), 8);
    return r;
  }
  static inline void scatter(uint64_t* base, __m512i idx, __mmask8 m, const E& e) {
    for (int j = 0; j < 5; j++) _mm512_mask_i64scatter_epi64((long long*)(base + j), m, idx, e.l[j], 8);
  }
  // Bases are stored packed: the same value (< p) in four 64-bit words (toBases52), split into 52-bit
  // limbs as they are gathered: four gathers and a few shifts instead of five gathers of 80 bytes.
  static constexpr int BW = 4;
  static inline E gatherPacked(const uint64_t* base, __m512i idx, __mmask8 m) {
    __m512i w[4];
    for (int k = 0; k < 4; k++)
      w[k] = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), m, idx, (const long long*)(base + k), 8);
    const __m512i mask = _mm512_set1_epi64((long long)M52);
    E r;
    r.l[0] = _mm512_and_si512(w[0], mask);
    r.l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[0], 52), _mm512_slli_epi64(w[1], 12)), mask);
    r.l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[1], 40), _mm512_slli_epi64(w[2], 24)), mask);
    r.l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[2], 28), _mm512_slli_epi64(w[3], 36)), mask);
    r.l[4] = _mm512_srli_epi64(w[3], 16);
    return r;
  }
  static inline void unpack(const uint64_t* w, uint64_t* out) {
    out[0] = w[0] & M52;
    out[1] = ((w[0] >> 52) | (w[1] << 12)) & M52;
    out[2] = ((w[1] >> 40) | (w[2] << 24)) & M52;
    out[3] = ((w[2] >> 28) | (w[3] << 36)) & M52;
    out[4] = w[3] >> 16;
  }
  static inline void pack(const Fq& a, uint64_t* out) {
    Fq t = Fq::dbl(Fq::dbl(Fq::dbl(Fq::dbl(a))));  // a * 2^256 -> a * 2^260 (mod p), as toLimbs52
    std::copy(t.v, t.v + 4, out);
  }
  static inline void toWords(const Fq& a, uint64_t* out) { toLimbs52(a, out); }
  static inline Fq fromWords(const uint64_t* in) { return fromLimbs52<FqTag>(in); }
  static inline void negWords(uint64_t* y) { negLimbs(y); }
  // Lane i of e <-> words [i * W ...].
  static inline void extract(const E& e, uint64_t* out) { lanesToWords(e, out, W); }
  static inline E insert(const uint64_t* in) { return lanesFromWords(in, W); }
  // p - y on canonical limbs (y != 0 on these curves): the result is canonical too.
  static inline void negLimbs(uint64_t* y) {
    const auto& k = Consts52<FqTag>::get();
    int64_t borrow = 0;
    for (int j = 0; j < 5; j++) {
      int64_t d = (int64_t)k.pl[j] - (int64_t)y[j] + borrow;
      borrow = d >> 52;
      y[j] = (uint64_t)d & M52;
    }
  }
};

template <>
struct Lanes<Fq2> {
  typedef V52x2 E;
  typedef VF2 Ops;
  static constexpr int W = 10;
  static inline E gather(const uint64_t* base, __m512i idx, __mmask8 m) {
    return E{Lanes<Fq>::gather(base, idx, m), Lanes<Fq>::gather(base + 5, idx, m)};
  }
  static constexpr int BW = 8;
  static inline E gatherPacked(const uint64_t* base, __m512i idx, __mmask8 m) {
    return E{Lanes<Fq>::gatherPacked(base, idx, m), Lanes<Fq>::gatherPacked(base + 4, idx, m)};
  }
  static inline void unpack(const uint64_t* w, uint64_t* out) {
    Lanes<Fq>::unpack(w, out);
    Lanes<Fq>::unpack(w + 4, out + 5);
  }
  static inline void pack(const Fq2& a, uint64_t* out) {
    Lanes<Fq>::pack(a.c0, out);
    Lanes<Fq>::pack(a.c1, out + 4);
  }
  static inline void scatter(uint64_t* base, __m512i idx, __mmask8 m, const E& e) {
    Lanes<Fq>::scatter(base, idx, m, e.c0);
    Lanes<Fq>::scatter(base + 5, idx, m, e.c1);
  }
  static inline void toWords(const Fq2& a, uint64_t* out) {
    toLimbs52(a.c0, out);
    toLimbs52(a.c1, out + 5);
  }
  static inline Fq2 fromWords(const uint64_t* in) { return Fq2{fromLimbs52<FqTag>(in), fromLimbs52<FqTag>(in + 5)}; }
  static inline void negWords(uint64_t* y) {
    // A zero component stays zero (p - 0 = p would leave the canonical range).
    for (int c = 0; c < 2; c++) {
      uint64_t* w = y + 5 * c;
      if ((w[0] | w[1] | w[2] | w[3] | w[4]) != 0) Lanes<Fq>::negLimbs(w);
    }
  }
  static inline void extract(const E& e, uint64_t* out) {
    lanesToWords(e.c0, out, W);
    lanesToWords(e.c1, out + 5, W);
  }
  static inline E insert(const uint64_t* in) { return E{lanesFromWords(in, W), lanesFromWords(in + 5, W)}; }
};

template <class F>
class VecBuckets {
  typedef Lanes<F> L;
  typedef typename L::E E;
  typedef typename L::Ops Ops;
  // Buckets: W words per coordinate (52-bit limbs), PW per point; bases: packed, BW per coordinate.
  static constexpr int W = L::W, PW = 2 * L::W, BW = L::BW, BPW = 2 * L::BW;

 public:
  VecBuckets(const uint64_t* bases52, size_t nBuckets)
      : bases52_(bases52),
        nBuckets_(nBuckets),
        // One pending addition per 8 buckets keeps collisions (deferred additions) rare; a deep deferred
        // queue keeps them out of the scalar spill path (tuned on policy_tx_2_2).
        kBatch(std::max<size_t>(64, std::min<size_t>(2048, nBuckets / 8) & ~(size_t)7)),
        kMaxDeferred(4 * kBatch),
        words_(nBuckets * PW),
        full_(nBuckets, 0),
        busy_(nBuckets, 0) {
    pending_.reserve(kBatch);
    deferred_.reserve(kMaxDeferred);
    uint64_t oneWords[W];
    L::toWords(F::one(), oneWords);
    uint64_t lanes[8 * W];
    for (int i = 0; i < 8; i++) std::copy(oneWords, oneWords + W, lanes + i * W);
    one_ = L::insert(lanes);
  }

  inline void add(const BucketOp& op) {
    const uint32_t b = op.bucket & ~kBucketNegate;
    if (busy_[b]) {
      if (deferred_.size() < kMaxDeferred)
        deferred_.push_back(op);
      else
        spill(op);
      return;
    }
    if (!full_[b]) {
      takePoint(op);
      return;
    }
    busy_[b] = 1;
    pending_.push_back(op);
    if (pending_.size() >= kBatch) flush();
  }

  void finish(Scratch<Affine<F>>& out, Scratch<XYZZ<F>>& overflow) {
    while (!pending_.empty() || !deferred_.empty()) {
      flush();
      // What is still deferred piles onto a few buckets: one scalar addition each beats a batch each.
      if (pending_.size() < 32) {
        for (const BucketOp& op : deferred_) spill(op);
        deferred_.clear();
      }
    }
    out.resize(nBuckets_);
    for (size_t b = 0; b < nBuckets_; b++) {
      if (!full_[b]) {
        out[b] = Affine<F>::infinity();
        continue;
      }
      const uint64_t* w = &words_[b * PW];
      out[b] = Affine<F>{L::fromWords(w), L::fromWords(w + W)};
    }
    overflow.swap(overflow_);
  }

 private:
  const uint64_t* bases52_;
  const size_t nBuckets_;
  const size_t kBatch;
  const size_t kMaxDeferred;
  Scratch<uint64_t> words_;  // bucket b: x then y at b * PW
  Scratch<uint8_t> full_, busy_;
  Scratch<BucketOp> pending_, deferred_;
  Scratch<XYZZ<F>> overflow_;
  AlignedArray<E> den_, prefix_;
  Scratch<size_t> special_;       // pending indices whose x equals the bucket's
  Scratch<__mmask8> specialMask_;  // the same, per group of eight
  E one_;

  struct Group {
    __m512i idxP, idxB;
    __mmask8 valid, neg;
  };
  inline Group group(size_t g) const {
    alignas(64) int64_t ip[8] = {0}, ib[8] = {0};
    const size_t n = pending_.size(), first = g * 8, cnt = std::min<size_t>(8, n - first);
    __mmask8 neg = 0;
    for (size_t i = 0; i < cnt; i++) {
      const BucketOp& op = pending_[first + i];
      ip[i] = (int64_t)op.base * BPW;
      ib[i] = (int64_t)(op.bucket & ~kBucketNegate) * PW;
      if (op.bucket & kBucketNegate) neg |= (__mmask8)(1u << i);
    }
    return Group{_mm512_load_si512(ip), _mm512_load_si512(ib), (__mmask8)((1u << cnt) - 1), neg};
  }

  // An empty bucket simply takes the (possibly negated) point: no addition, no batch slot.
  void takePoint(const BucketOp& op) {
    const uint32_t b = op.bucket & ~kBucketNegate;
    uint64_t* dst = &words_[(size_t)b * PW];
    L::unpack(bases52_ + (size_t)op.base * BPW, dst);
    L::unpack(bases52_ + (size_t)op.base * BPW + BW, dst + W);
    if (op.bucket & kBucketNegate) L::negWords(dst + W);
    full_[b] = 1;
  }

  // A base as an affine point (for the rare scalar additions): the 64-bit form is never read.
  Affine<F> base(uint32_t i) const {
    uint64_t w[PW];
    L::unpack(bases52_ + (size_t)i * BPW, w);
    L::unpack(bases52_ + (size_t)i * BPW + BW, w + W);
    return Affine<F>{L::fromWords(w), L::fromWords(w + W)};
  }

  // A scalar XYZZ addition into the bucket's overflow accumulator.
  void spill(const BucketOp& op) {
    if (overflow_.empty()) overflow_.assign(nBuckets_, XYZZ<F>::infinity());
    const Affine<F> p = base(op.base);
    overflow_[op.bucket & ~kBucketNegate].addAffine((op.bucket & kBucketNegate) ? p.negate() : p);
  }

  // Inverts each lane of v (no lane is zero) with one scalar inversion.
  E invertLanes(const E& v) const {
    uint64_t w[8 * W];
    L::extract(v, w);
    F x[8], pre[8];
    F run = F::one();
    for (int i = 0; i < 8; i++) {
      x[i] = L::fromWords(w + i * W);
      pre[i] = run;
      run = F::mul(run, x[i]);
    }
    F inv = F::invVartime(run);
    for (int i = 8; i-- > 0;) {
      F xi = F::mul(inv, pre[i]);
      inv = F::mul(inv, x[i]);
      L::toWords(xi, w + i * W);
    }
    return L::insert(w);
  }

  void flush() {
    const size_t n = pending_.size();
    const size_t groups = (n + 7) / 8;
    den_.resize(groups);
    prefix_.resize(groups);
    specialMask_.resize(groups);
    special_.clear();
    uint64_t* B = words_.data();
    E run = one_;
    for (size_t g = 0; g < groups; g++) {
      Group gr = group(g);
      E px = L::gatherPacked(bases52_, gr.idxP, gr.valid);
      E bx = L::gather(B, gr.idxB, gr.valid);
      E d = Ops::sub(px, bx);
      __mmask8 zero = Ops::isZeroMask(Ops::canonical(d)) & gr.valid;
      specialMask_[g] = zero;
      for (unsigned i = 0; i < 8; i++)
        if (zero & (1u << i)) special_.push_back(g * 8 + i);
      d = Ops::blend((__mmask8)(zero | ~gr.valid), d, one_);
      den_[g] = d;
      prefix_[g] = run;
      run = Ops::mul(run, d);
    }
    E inv = invertLanes(run);
    for (size_t g = groups; g-- > 0;) {
      Group gr = group(g);
      E invD = Ops::mul(inv, prefix_[g]);
      inv = Ops::mul(inv, den_[g]);
      E px = L::gatherPacked(bases52_, gr.idxP, gr.valid);
      E py = L::gatherPacked(bases52_ + BW, gr.idxP, gr.valid);
      E bx = L::gather(B, gr.idxB, gr.valid);
      E by = L::gather(B + W, gr.idxB, gr.valid);
      py = Ops::blend(gr.neg, py, Ops::neg(py));
      E lambda = Ops::mul(Ops::sub(py, by), invD);
      E x3 = Ops::sub(Ops::sub(Ops::sqr(lambda), bx), px);
      E y3 = Ops::sub(Ops::mul(lambda, Ops::sub(bx, x3)), by);
      const __mmask8 keep = gr.valid & (__mmask8)~specialMask_[g];
      L::scatter(B, gr.idxB, keep, x3);
      L::scatter(B + W, gr.idxB, keep, y3);
    }
    for (size_t s : special_) finishSpecial(pending_[s]);
    for (const BucketOp& op : pending_) busy_[op.bucket & ~kBucketNegate] = 0;
    pending_.clear();
    // Move deferred additions into the next batch (those that still collide stay deferred).
    size_t kept = 0;
    for (size_t i = 0; i < deferred_.size(); i++) {
      const BucketOp op = deferred_[i];
      const uint32_t b = op.bucket & ~kBucketNegate;
      if (busy_[b]) {
        deferred_[kept++] = op;
      } else if (!full_[b]) {
        takePoint(op);
      } else {
        busy_[b] = 1;
        pending_.push_back(op);
      }
    }
    deferred_.resize(kept);
  }

  // Bucket + P with equal x: P + P (doubling) or P + (-P) (the bucket empties).
  void finishSpecial(const BucketOp& op) {
    const uint32_t b = op.bucket & ~kBucketNegate;
    uint64_t* w = &words_[(size_t)b * PW];
    Affine<F> p = base(op.base);
    if (op.bucket & kBucketNegate) p = p.negate();
    F by = L::fromWords(w + W);
    if (by != p.y) {
      full_[b] = 0;
      return;
    }
    Affine<F> d = XYZZ<F>::dblAffine(p).toAffine();
    L::toWords(d.x, w);
    L::toWords(d.y, w + W);
  }
};

template <class F>
void convertBases(const Affine<F>* bases, size_t n, uint64_t* out) {
  constexpr int BW = Lanes<F>::BW;
  for (size_t i = 0; i < n; i++) {
    uint64_t* p = out + i * 2 * BW;
    if (bases[i].isInfinity()) {
      std::fill(p, p + 2 * BW, 0);
      continue;
    }
    Lanes<F>::pack(bases[i].x, p);
    Lanes<F>::pack(bases[i].y, p + BW);
  }
}

template <class F>
std::vector<uint64_t> convertBases(const Affine<F>* bases, size_t n) {
  std::vector<uint64_t> out(n * 2 * Lanes<F>::BW);
  convertBases(bases, n, out.data());
  return out;
}

template <class F>
void accumulate(const uint64_t* bases52, const BucketOp* ops, size_t nOps, size_t nBuckets,
                Scratch<Affine<F>>& buckets, Scratch<XYZZ<F>>& overflow) {
  VecBuckets<F> acc(bases52, nBuckets);
  for (size_t i = 0; i < nOps; i++) acc.add(ops[i]);
  acc.finish(buckets, overflow);
}

}  // namespace

std::vector<uint64_t> toBases52(const G1A* bases, size_t n) { return convertBases(bases, n); }
std::vector<uint64_t> toBases52(const G2A* bases, size_t n) { return convertBases(bases, n); }
void toBases52(const G1A* bases, size_t n, uint64_t* out) { convertBases(bases, n, out); }
void toBases52(const G2A* bases, size_t n, uint64_t* out) { convertBases(bases, n, out); }

void accumulateBuckets52(const uint64_t* bases52, const BucketOp* ops, size_t nOps, size_t nBuckets,
                         Scratch<G1A>& buckets, Scratch<G1P>& overflow) {
  accumulate(bases52, ops, nOps, nBuckets, buckets, overflow);
}
void accumulateBuckets52(const uint64_t* bases52, const BucketOp* ops, size_t nOps, size_t nBuckets,
                         Scratch<G2A>& buckets, Scratch<G2P>& overflow) {
  accumulate(bases52, ops, nOps, nBuckets, buckets, overflow);
}

template <class F>
Affine<F> fromPacked(const uint64_t* p) {
  constexpr int W = Lanes<F>::W, BW = Lanes<F>::BW;
  uint64_t w[2 * W];
  Lanes<F>::unpack(p, w);
  Lanes<F>::unpack(p + BW, w + W);
  return Affine<F>{Lanes<F>::fromWords(w), Lanes<F>::fromWords(w + W)};
}
G1A fromBase52(const uint64_t* w, const Fq*) { return fromPacked<Fq>(w); }
G2A fromBase52(const uint64_t* w, const Fq2*) { return fromPacked<Fq2>(w); }

}  // namespace zk
#pragma GCC pop_options

#else  // no AVX-512 path on this platform: never called, since avx512MsmEnabled() is false

namespace zk {
std::vector<uint64_t> toBases52(const G1A*, size_t) { return {}; }
std::vector<uint64_t> toBases52(const G2A*, size_t) { return {}; }
void toBases52(const G1A*, size_t, uint64_t*) {}
void toBases52(const G2A*, size_t, uint64_t*) {}
void accumulateBuckets52(const uint64_t*, const BucketOp*, size_t, size_t, Scratch<G1A>&, Scratch<G1P>&) {}
void accumulateBuckets52(const uint64_t*, const BucketOp*, size_t, size_t, Scratch<G2A>&, Scratch<G2P>&) {}
G1A fromBase52(const uint64_t*, const Fq*) { return G1A::infinity(); }
G2A fromBase52(const uint64_t*, const Fq2*) { return G2A::infinity(); }
}  // namespace zk
#endif
