#include "prover.hpp"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fft.hpp"
#include "fft_avx512.hpp"
#include "msm.hpp"
#include "random.hpp"
#include "thread_pool.hpp"

namespace zk {

namespace {

// Set ZKPROVER_PROFILE=1 to print per-phase timings to stderr (benchmark diagnostics).
// Thread CPU time is printed too: with ZKPROVER_THREADS=1 phases run one after another on one thread,
// so it measures each phase's cost even on a busy machine.
static double threadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
struct PhaseTimer {
  const char* name;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double cpu0 = threadCpuMs();
  explicit PhaseTimer(const char* n) : name(n) {}
  ~PhaseTimer() {
    static const bool on = std::getenv("ZKPROVER_PROFILE") != nullptr;
    if (!on) return;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[zkprover] %-10s %8.1f ms wall %8.1f ms thread cpu\n", name, ms, threadCpuMs() - cpu0);
  }
};

// Evaluations of A·w and B·w on the domain, then H's evaluations on the odd coset g·<w>.
// Returns plain-form scalars for the H MSM.
Scratch<uint64_t> computeH(const ZKey& key, const Witness& w) {
  const size_t n = key.domainSize;
  Scratch<Fr> a(n, Fr::zero()), b(n, Fr::zero()), c(n);
  // The coefficients are read where they lie in the key file (v*R^2 as stored) and multiplied by the
  // plain witness value: the Montgomery product is v*w*R, no conversion on either side. Their ranges
  // were checked when the key was first validated; the index checks stay, so a key file rewritten in
  // place under a running prover gives an error, never an out-of-bounds access.
  bool bad = false;
  const uint8_t* rec = key.coefs;
  for (uint32_t i = 0; i < key.nCoefs; i++, rec += kCoefRecord) {
    uint32_t head[3];
    Fr v;
    std::memcpy(head, rec, 12);
    std::memcpy(v.v, rec + 12, 32);
    if (head[0] > 1 || head[1] >= n || head[2] >= key.nVars) {
      bad = true;
      break;
    }
    Scratch<Fr>& dst = head[0] == 0 ? a : b;
    dst[head[1]] = Fr::add(dst[head[1]], Fr::mul(v, Fr::raw(w.at(head[2]))));
  }
  if (bad)
    throw ProverError(ErrorCode::KeyChanged,
                      "zkey coefficients changed since the key was loaded (replace key files by renaming, never in place)",
                      "coefficients");
  for (size_t i = 0; i < n; i++) c[i] = Fr::mul(a[i], b[i]);
  if (avx512MsmEnabled() && key.log2Domain >= kMinLog2Ntt52) {
    Scratch<uint64_t> h(4 * n);
    cosetHEvaluations52(key.log2Domain, a.data(), b.data(), c.data(), h.data());
    return h;
  }

  // Coset factors g^i / n with g a primitive 2n-th root (the 1/n of the inverse FFT folded in).
  Domain dom(key.log2Domain);
  Scratch<Fr> shift(n);
  {
    Fr g = rootOfUnity(key.log2Domain + 1);
    Fr invN = Fr::inv(Fr::fromU64(n));
    shift[0] = invN;
    for (size_t i = 1; i < n; i++) shift[i] = Fr::mul(shift[i - 1], g);
  }
  TaskGroup group;
  for (Scratch<Fr>* v : {&a, &b, &c}) {
    group.run([&dom, &shift, v, n] {
      Fr* x = v->data();
      dom.ifftUnscaled(x);
      for (size_t i = 0; i < n; i++) x[i] = Fr::mul(x[i], shift[i]);
      dom.fft(x);
    });
  }
  group.wait();

  Scratch<uint64_t> h(4 * n);
  for (size_t i = 0; i < n; i++) {
    Fr v = Fr::fromMont(Fr::sub(Fr::mul(a[i], b[i]), c[i]));
    std::memcpy(&h[4 * i], v.v, 32);
  }
  return h;
}

inline const uint64_t* ptrOrNull(const Span<uint64_t>& v) { return v.empty() ? nullptr : v.data(); }

// Maps the pages of [p, p + bytes) into the process's page tables (read-only: they are a key's), then
// reads one word of every cache line. Mapping alone is not enough on a host whose memory is backed
// lazily (a VM): there the first read of a page still costs far more than a later one. Measured on a
// 2-vCPU EPYC VM (policy_tx_2_2, IFMA path): with the key only mapped, the first proof's coefficient pass
// took 30 ms against 11 ms warm and the first proof was 1.11x a warm one; read through at load (5 ms more
// for ~14 MB), the first proof is as fast as the rest.
void readThrough(const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return;
  const uintptr_t page = (uintptr_t)::sysconf(_SC_PAGESIZE);
  const uintptr_t begin = (uintptr_t)p & ~(page - 1), end = (uintptr_t)p + bytes;
#ifdef MADV_POPULATE_READ
  (void)::madvise((void*)begin, end - begin, MADV_POPULATE_READ);  // Linux 5.14+: one call, no faults
#endif
  const uint8_t* bytesAt = static_cast<const uint8_t*>(p);
  uint64_t sum = 0;
  for (size_t off = 0; off < bytes; off += 64) sum += bytesAt[off];
  volatile uint64_t sink = sum;
  (void)sink;
}

template <class T>
void readThrough(const Span<T>& s) {
  readThrough(s.data(), s.size() * sizeof(T));
}

template <class F>
XYZZ<F> mulPoint(const Affine<F>& p, const uint64_t k[4]) {
  return XYZZ<F>::mulScalar(XYZZ<F>::fromAffine(p), k);
}

}  // namespace

Proof prove(const ZKey& key, const Witness& w) {
  if (w.size() != key.nVars)
    throw ProverError(ErrorCode::WitnessMismatch, "witness has " + std::to_string(w.size()) +
                                                      " values but the circuit key expects " + std::to_string(key.nVars) +
                                                      " (witness of another circuit?)");
  const uint64_t* w0 = w.at(0);
  if (!(w0[0] == 1 && w0[1] == 0 && w0[2] == 0 && w0[3] == 0))
    throw ProverError(ErrorCode::WitnessMismatch, "witness value 0 must be the constant 1", "values", 0);

  PhaseTimer total("total");
  ScalarView all{w.values.data(), key.nVars};
  ScalarView priv{w.at(key.nPublic + 1), key.nVars - key.nPublic - 1};
  G1P piA, piB1, piC, piH;
  G2P piB2;
  {
    // Everything is one task graph on the pool: the H chain (coefficient pass, six NTTs, then its MSM:
    // the longest dependent path) first, the G2 MSM (the largest single MSM) next, and the G1 witness
    // MSMs fill the remaining capacity.
    TaskGroup group;
    group.run([&] {
      Scratch<uint64_t> h;
      {
        PhaseTimer t("H evals");
        h = computeH(key, w);
      }
      PhaseTimer t("msm H");
      piH = msm(key.H.data(), ScalarView{h.data(), key.domainSize}, ptrOrNull(key.H52), false);
    });
    group.run([&] {
      PhaseTimer t("msm B2");
      piB2 = msm(key.B2.data(), all, ptrOrNull(key.B2_52));
    });
    group.run([&] {
      PhaseTimer t("msm A");
      piA = msm(key.A.data(), all, ptrOrNull(key.A52));
    });
    group.run([&] {
      PhaseTimer t("msm B1");
      piB1 = msm(key.B1.data(), all, ptrOrNull(key.B1_52));
    });
    group.run([&] {
      PhaseTimer t("msm C");
      piC = msm(key.C.data(), priv, ptrOrNull(key.C52));
    });
    group.wait();
  }

  uint64_t r[4], s[4];
  randomScalar(r, false);
  randomScalar(s, false);
  Fr rs = Fr::fromMont(Fr::mul(Fr::toMont(Fr::raw(r)), Fr::toMont(Fr::raw(s))));

  G1P A = piA;
  A.addAffine(key.alpha1);
  A.add(mulPoint(key.delta1, r));

  G2P B = piB2;
  B.addAffine(key.beta2);
  B.add(mulPoint(key.delta2, s));

  G1P B1 = piB1;
  B1.addAffine(key.beta1);
  B1.add(mulPoint(key.delta1, s));

  G1P C = piC;
  C.add(piH);
  C.add(G1P::mulScalar(A, s));
  C.add(G1P::mulScalar(B1, r));
  C.add(mulPoint(key.delta1, rs.v).negate());

  return Proof{A.toAffine(), B.toAffine(), C.toAffine()};
}

// Measured (arena high-water mark of one proof, 2^15 domains): policy_tx_2_2 (26,739 wires) 43.3 MiB on the
// IFMA path and 28.0 MiB on the scalar path, the full-scalar circuit (30,002 wires) 37.2 and 30.6 MiB; the
// MSMs' entries, digits and buckets grow with the wires, the H evaluations and their NTTs with the domain.
// A proof that needs more still runs in its arena (reserved at four times this), and the key's next arenas
// are pre-faulted to the largest proof seen.
size_t workingMemoryEstimate(const ZKey& key) {
  const size_t perElement = avx512MsmEnabled() ? 800 : 576;
  return perElement * ((size_t)key.nVars + key.domainSize);
}

void prepareProver(ZKey& key) {
  const bool vec = avx512MsmEnabled();
  {
    PhaseTimer t("tables");
    if (vec && key.log2Domain >= kMinLog2Ntt52) warmCosetTables52(key.log2Domain);
  }
  {
    PhaseTimer t("key pages");
    readThrough(key.coefs, (size_t)key.nCoefs * kCoefRecord);
    if (vec) {
      for (const Span<uint64_t>* s : {&key.A52, &key.B1_52, &key.B2_52, &key.C52, &key.H52}) readThrough(*s);
    } else {
      for (const Span<G1A>* s : {&key.A, &key.B1, &key.C, &key.H}) readThrough(*s);
      readThrough(key.B2);
    }
  }
  PhaseTimer t("arena");
  key.work = std::make_shared<ArenaPool>(workingMemoryEstimate(key));
  key.work->warm();
}

}  // namespace zk
