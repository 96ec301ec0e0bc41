#include "setup.hpp"

#include <string>

#include "errors.hpp"
#include "fft.hpp"
#include "random.hpp"
#include "thread_pool.hpp"

namespace zk {

const char* const DEV_KEY_NAME = "DEVELOPMENT KEY: local toxic waste, NOT FOR PRODUCTION";

namespace {

// k*G for many k < 2^254 with a table of d * 2^(11j) * G (11-bit windows, 24 windows, 2047 entries
// each): at most 24 mixed additions per scalar.
template <class F>
class FixedBaseTable {
 public:
  static constexpr int kBits = 11;
  static constexpr int kWindows = (254 + kBits - 1) / kBits;
  static constexpr int kEntries = (1 << kBits) - 1;

  explicit FixedBaseTable(const Affine<F>& g) : table_((size_t)kWindows * kEntries) {
    std::vector<XYZZ<F>> pts(table_.size());
    XYZZ<F> base = XYZZ<F>::fromAffine(g);
    for (int j = 0; j < kWindows; j++) {
      XYZZ<F> acc = base;
      pts[(size_t)j * kEntries] = acc;
      for (int d = 2; d <= kEntries; d++) {
        acc.add(base);
        pts[(size_t)j * kEntries + d - 1] = acc;
      }
      acc.add(base);  // 2^kBits * base
      base = acc;
    }
    batchToAffine(pts.data(), table_.data(), pts.size());
  }
  XYZZ<F> mul(const uint64_t k[4]) const {
    XYZZ<F> r = XYZZ<F>::infinity();
    for (int j = 0; j < kWindows; j++) {
      int pos = j * kBits, limb = pos >> 6, off = pos & 63;
      uint64_t v = k[limb] >> off;
      if (off + kBits > 64 && limb < 3) v |= k[limb + 1] << (64 - off);
      unsigned d = (unsigned)(v & kEntries);
      if (d) r.addAffine(table_[(size_t)j * kEntries + d - 1]);
    }
    return r;
  }

 private:
  std::vector<Affine<F>> table_;
};

// Affine k_i * G for Montgomery-form scalars k_i, in parallel chunks with one inversion per chunk.
template <class F>
std::vector<Affine<F>> mulMany(const FixedBaseTable<F>& t, const std::vector<Fr>& k) {
  std::vector<Affine<F>> out(k.size());
  const size_t chunk = 1024;
  size_t nChunks = (k.size() + chunk - 1) / chunk;
  ThreadPool::instance().parallelFor(nChunks, [&](size_t c) {
    size_t b = c * chunk, e = std::min(k.size(), b + chunk);
    std::vector<XYZZ<F>> tmp(e - b);
    for (size_t i = b; i < e; i++) tmp[i - b] = t.mul(Fr::fromMont(k[i]).v);
    batchToAffine(tmp.data(), out.data() + b, e - b);
  });
  return out;
}

Fr randomNonZero() {
  uint64_t v[4];
  randomScalar(v, true);
  return Fr::toMont(Fr::raw(v));
}

// L_i(tau) = w^i (tau^m - 1) / (m (tau - w^i)) for i in [0, m) on the domain of size m = 2^log2m.
std::vector<Fr> lagrangeAt(const Fr& tau, int log2m) {
  const size_t m = (size_t)1 << log2m;
  Fr w = rootOfUnity(log2m);
  std::vector<Fr> wi(m), den(m), out(m);
  wi[0] = Fr::one();
  for (size_t i = 1; i < m; i++) wi[i] = Fr::mul(wi[i - 1], w);
  // Batch inversion of (tau - w^i).
  Fr run = Fr::one();
  for (size_t i = 0; i < m; i++) {
    Fr d = Fr::sub(tau, wi[i]);
    if (d.isZero()) throw ProverError(ErrorCode::SetupFailed, "toxic waste hit the evaluation domain; retry");
    den[i] = run;
    run = Fr::mul(run, d);
  }
  Fr inv = Fr::inv(run);
  uint64_t e[4] = {m, 0, 0, 0};
  Fr zOverM = Fr::mul(Fr::sub(Fr::pow(tau, e), Fr::one()), Fr::inv(Fr::fromU64(m)));
  for (size_t i = m; i-- > 0;) {
    Fr d = Fr::sub(tau, wi[i]);
    Fr invD = Fr::mul(inv, den[i]);
    inv = Fr::mul(inv, d);
    out[i] = Fr::mul(Fr::mul(zOverM, wi[i]), invD);
  }
  return out;
}

void writeG1(BinWriter& w, const G1A& p) { w.raw(&p, 64); }
void writeG2(BinWriter& w, const G2A& p) { w.raw(&p, 128); }

}  // namespace

std::vector<uint8_t> devSetup(const R1cs& r1cs) {
  const uint32_t nPublic = r1cs.nPublic();
  const uint32_t nVars = r1cs.nWires;
  // Same domain rule as snarkjs: 2^(floor(log2(nConstraints + nPublic)) + 1).
  uint64_t rows = (uint64_t)r1cs.nConstraints + nPublic;
  int log2n = 64 - __builtin_clzll(rows);
  if (log2n > 27) throw ProverError(ErrorCode::SetupFailed, "circuit too large for the development setup");
  const size_t n = (size_t)1 << log2n;

  Fr tau = randomNonZero(), alpha = randomNonZero(), beta = randomNonZero(), gamma = randomNonZero(),
     delta = randomNonZero();

  // QAP polynomials of every signal evaluated at tau.
  std::vector<Fr> L = lagrangeAt(tau, log2n);
  std::vector<Fr> At(nVars, Fr::zero()), Bt(nVars, Fr::zero()), Ct(nVars, Fr::zero());
  for (uint32_t c = 0; c < r1cs.nConstraints; c++) {
    const R1csConstraint& k = r1cs.constraints[c];
    for (const R1csTerm& t : k.a) At[t.signal] = Fr::add(At[t.signal], Fr::mul(t.value, L[c]));
    for (const R1csTerm& t : k.b) Bt[t.signal] = Fr::add(Bt[t.signal], Fr::mul(t.value, L[c]));
    for (const R1csTerm& t : k.c) Ct[t.signal] = Fr::add(Ct[t.signal], Fr::mul(t.value, L[c]));
  }
  // Public-input consistency rows (snarkjs adds A[nConstraints + s][s] = 1).
  for (uint32_t s = 0; s <= nPublic; s++) At[s] = Fr::add(At[s], L[r1cs.nConstraints + s]);

  Fr invGamma = Fr::inv(gamma), invDelta = Fr::inv(delta);
  std::vector<Fr> icS(nPublic + 1), cS(nVars - nPublic - 1);
  for (uint32_t s = 0; s < nVars; s++) {
    Fr v = Fr::add(Fr::add(Fr::mul(beta, At[s]), Fr::mul(alpha, Bt[s])), Ct[s]);
    if (s <= nPublic) {
      icS[s] = Fr::mul(v, invGamma);
    } else {
      cS[s - nPublic - 1] = Fr::mul(v, invDelta);
    }
  }
  // H[i] = L^(2n)_(2i+1)(tau) / delta.
  std::vector<Fr> hS(n);
  {
    std::vector<Fr> L2 = lagrangeAt(tau, log2n + 1);
    for (size_t i = 0; i < n; i++) hS[i] = Fr::mul(L2[2 * i + 1], invDelta);
  }

  FixedBaseTable<Fq> t1(g1Generator());
  FixedBaseTable<Fq2> t2(g2Generator());
  std::vector<G1A> A = mulMany(t1, At), B1 = mulMany(t1, Bt), C = mulMany(t1, cS), IC = mulMany(t1, icS),
                   H = mulMany(t1, hS);
  std::vector<G2A> B2 = mulMany(t2, Bt);
  std::vector<G1A> vk1 = mulMany(t1, std::vector<Fr>{alpha, beta, delta});
  std::vector<G2A> vk2 = mulMany(t2, std::vector<Fr>{beta, gamma, delta});
  // Proof-of-knowledge-shaped fields of the contribution record, so snarkjs tools can read it.
  Fr k = randomNonZero();
  std::vector<G1A> pok1 = mulMany(t1, std::vector<Fr>{k, Fr::mul(k, delta)});

  BinWriter w("zkey", 1, 10);
  w.startSection(1);
  w.u32(1);  // Groth16
  w.endSection();

  w.startSection(2);
  w.u32(32);
  w.raw(FqParams::P, 32);
  w.u32(32);
  w.raw(FrParams::P, 32);
  w.u32(nVars);
  w.u32(nPublic);
  w.u32((uint32_t)n);
  writeG1(w, vk1[0]);  // alpha1
  writeG1(w, vk1[1]);  // beta1
  writeG2(w, vk2[0]);  // beta2
  writeG2(w, vk2[1]);  // gamma2
  writeG1(w, vk1[2]);  // delta1
  writeG2(w, vk2[2]);  // delta2
  w.endSection();

  // Coefficients of A and B in constraint order, then the public rows; values stored as v * R^2.
  w.startSection(4);
  size_t nCoefs = nPublic + 1;
  for (const R1csConstraint& k2 : r1cs.constraints) nCoefs += k2.a.size() + k2.b.size();
  w.u32((uint32_t)nCoefs);
  auto writeCoef = [&w](uint32_t m, uint32_t c, uint32_t s, const Fr& vMont) {
    w.u32(m);
    w.u32(c);
    w.u32(s);
    Fr stored = Fr::toMont(vMont);  // (v R) R = v R^2 as a plain integer
    w.raw(stored.v, 32);
  };
  for (uint32_t c = 0; c < r1cs.nConstraints; c++) {
    for (const R1csTerm& t : r1cs.constraints[c].a) writeCoef(0, c, t.signal, t.value);
    for (const R1csTerm& t : r1cs.constraints[c].b) writeCoef(1, c, t.signal, t.value);
  }
  for (uint32_t s = 0; s <= nPublic; s++) writeCoef(0, r1cs.nConstraints + s, s, Fr::one());
  w.endSection();

  w.startSection(3);
  for (const G1A& p : IC) writeG1(w, p);
  w.endSection();
  w.startSection(9);
  for (const G1A& p : H) writeG1(w, p);
  w.endSection();
  w.startSection(8);
  for (const G1A& p : C) writeG1(w, p);
  w.endSection();
  w.startSection(5);
  for (const G1A& p : A) writeG1(w, p);
  w.endSection();
  w.startSection(6);
  for (const G1A& p : B1) writeG1(w, p);
  w.endSection();
  w.startSection(7);
  for (const G2A& p : B2) writeG2(w, p);
  w.endSection();

  // Contributions: no ceremony transcript exists, so the circuit hash is zero and the single record
  // carries the development marker as its name.
  w.startSection(10);
  uint8_t zeros[64] = {0};
  w.raw(zeros, 64);
  w.u32(1);
  writeG1(w, vk1[2]);  // deltaAfter
  writeG1(w, pok1[0]);
  writeG1(w, pok1[1]);
  writeG2(w, vk2[2]);
  w.raw(zeros, 64);  // transcript
  w.u32(0);          // type: contribution
  std::string name(DEV_KEY_NAME);
  w.u32((uint32_t)(2 + name.size()));
  uint8_t tag[2] = {1, (uint8_t)name.size()};
  w.raw(tag, 2);
  w.raw(name.data(), name.size());
  w.endSection();
  return std::move(w.buffer());
}

}  // namespace zk
