#include "formats.hpp"

#include "msm_avx512.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "thread_pool.hpp"

namespace zk {

namespace {

void expectPrime(ByteReader& r, const uint64_t* expected, const std::string& what) {
  uint32_t n8 = r.u32();
  if (n8 != 32)
    throw FormatError(r.code(), what + ": field element size " + std::to_string(n8) + " is not 32 (not BN254)", "header");
  uint64_t p[4];
  std::memcpy(p, r.bytes(32), 32);
  if (std::memcmp(p, expected, 32) != 0) throw FormatError(r.code(), what + ": prime is not the BN254 modulus", "header");
}

Fq readFq(ByteReader& r, const std::string& what) {
  Fq x;
  std::memcpy(x.v, r.bytes(32), 32);
  if (limbsGeq(x.v, FqParams::P)) throw FormatError(r.code(), what + ": coordinate out of range");
  return x;
}

G1A readG1(ByteReader& r, const std::string& what) {
  G1A p{readFq(r, what), readFq(r, what)};
  if (!g1OnCurve(p)) throw FormatError(r.code(), what + ": G1 point not on the curve");
  return p;
}

G2A readG2(ByteReader& r, const std::string& what) {
  G2A p;
  p.x.c0 = readFq(r, what);
  p.x.c1 = readFq(r, what);
  p.y.c0 = readFq(r, what);
  p.y.c1 = readFq(r, what);
  if (!g2OnCurve(p)) throw FormatError(r.code(), what + ": G2 point not on the curve");
  return p;
}

template <class P, class ReadFn>
std::shared_ptr<std::vector<P>> readPoints(const uint8_t* data, size_t count, size_t pointSize, const char* name,
                                           ReadFn fn) {
  ByteReader r(data, count * pointSize, std::string("zkey ") + name, ErrorCode::ZkeyInvalid);
  auto out = std::make_shared<std::vector<P>>(count);
  std::string what = std::string("zkey ") + name;
  for (size_t i = 0; i < count; i++) {
    try {
      (*out)[i] = fn(r, what);
    } catch (const FormatError& e) {
      throw FormatError(e.code(), e.what() + std::string(" (point ") + std::to_string(i) + ")", name, (int64_t)i);
    }
  }
  return out;
}

template <class T>
Span<T> keep(ZKey& key, std::shared_ptr<std::vector<T>> v) {
  Span<T> s{v->data(), v->size()};
  key.storage.push_back(std::move(v));
  return s;
}

}  // namespace

ZKeyLayout readZKeyLayout(const uint8_t* data, size_t size) {
  BinFile f(data, size, "zkey", 1, "zkey");
  ZKeyLayout out;
  out.key = std::make_unique<ZKey>();
  ZKey* z = out.key.get();
  {
    ByteReader r = f.reader(1);
    uint32_t protocol = r.u32();
    if (protocol != 1)
      throw FormatError(ErrorCode::ZkeyInvalid, "zkey: protocol " + std::to_string(protocol) + " is not Groth16", "header");
  }
  {
    ByteReader r = f.reader(2);
    expectPrime(r, FqParams::P, "zkey base field");
    expectPrime(r, FrParams::P, "zkey scalar field");
    z->nVars = r.u32();
    z->nPublic = r.u32();
    z->domainSize = r.u32();
    if (z->domainSize == 0 || (z->domainSize & (z->domainSize - 1)) != 0 || z->domainSize > (1u << 27))
      throw FormatError(ErrorCode::ZkeyInvalid,
                        "zkey: domain size " + std::to_string(z->domainSize) + " is not a supported power of two",
                        "header");
    if (z->nVars == 0 || z->nPublic >= z->nVars)
      throw FormatError(ErrorCode::ZkeyInvalid, "zkey: inconsistent variable counts", "header");
    z->log2Domain = __builtin_ctz(z->domainSize);
    z->alpha1 = readG1(r, "zkey alpha1");
    z->beta1 = readG1(r, "zkey beta1");
    z->beta2 = readG2(r, "zkey beta2");
    z->gamma2 = readG2(r, "zkey gamma2");
    z->delta1 = readG1(r, "zkey delta1");
    z->delta2 = readG2(r, "zkey delta2");
  }
  {
    ByteReader r = f.reader(3);
    const size_t n = (size_t)z->nPublic + 1;
    if (r.remaining() != n * 64)
      throw FormatError(ErrorCode::ZkeyInvalid,
                        "zkey: section 3 (IC) has size " + std::to_string(r.remaining()) + ", expected " +
                            std::to_string(n * 64),
                        "IC");
    z->IC.resize(n);
    for (size_t i = 0; i < n; i++) {
      try {
        z->IC[i] = readG1(r, "zkey IC");
      } catch (const FormatError& e) {
        throw FormatError(e.code(), e.what() + std::string(" (point ") + std::to_string(i) + ")", "IC", (int64_t)i);
      }
    }
  }
  {
    ByteReader r = f.reader(4);
    uint32_t n = r.u32();
    if ((size_t)n * kCoefRecord != r.remaining())
      throw FormatError(ErrorCode::ZkeyInvalid, "zkey: coefficient section size mismatch", "coefficients");
    z->nCoefs = n;
    z->coefs = r.bytes((size_t)n * kCoefRecord);
  }
  const size_t counts[10] = {0, 0, 0, 0, 0, z->nVars, z->nVars, z->nVars, (size_t)z->nVars - z->nPublic - 1,
                             z->domainSize};
  const char* names[10] = {"", "", "", "", "", "A", "B1", "B2", "C", "H"};
  for (uint32_t id = 5; id <= 9; id++) {
    Section s = f.section(id);
    const size_t want = counts[id] * (id == 7 ? 128 : 64);
    if (s.size != want)
      throw FormatError(ErrorCode::ZkeyInvalid,
                        std::string("zkey: section ") + std::to_string(id) + " (" + names[id] + ") has size " +
                            std::to_string(s.size) + ", expected " + std::to_string(want),
                        names[id]);
    out.sections[id] = s.data;
  }
  return out;
}

void validateZKeyBody(ZKeyLayout& layout, bool withVector) {
  ZKey* z = layout.key.get();
  for (uint32_t i = 0; i < z->nCoefs; i++) {
    const uint8_t* rec = z->coefs + (size_t)i * kCoefRecord;
    uint32_t head[3];
    uint64_t v[4];
    std::memcpy(head, rec, 12);
    std::memcpy(v, rec + 12, 32);
    if (head[0] > 1 || head[1] >= z->domainSize || head[2] >= z->nVars || limbsGeq(v, FrParams::P))
      throw FormatError(ErrorCode::ZkeyInvalid, "zkey: coefficient " + std::to_string(i) + " is out of range",
                        "coefficients", (int64_t)i);
  }
  // The five query sections are independent: read, check (and convert for the vector MSM) on the pool.
  // A failing section's error is the call's (the first one thrown, if several are bad).
  std::shared_ptr<std::vector<G1A>> A, B1, C, H;
  std::shared_ptr<std::vector<G2A>> B2;
  std::shared_ptr<std::vector<uint64_t>> v52[5];
  auto conv = [&](int k, auto& pts) {
    if (withVector) v52[k] = std::make_shared<std::vector<uint64_t>>(toBases52(pts->data(), pts->size()));
  };
  const uint8_t* const* sec = layout.sections;
  std::vector<std::function<void()>> jobs = {
      [&] { A = readPoints<G1A>(sec[5], z->nVars, 64, "A", readG1), conv(0, A); },
      [&] { B1 = readPoints<G1A>(sec[6], z->nVars, 64, "B1", readG1), conv(1, B1); },
      [&] { B2 = readPoints<G2A>(sec[7], z->nVars, 128, "B2", readG2), conv(2, B2); },
      [&] { C = readPoints<G1A>(sec[8], z->nVars - z->nPublic - 1, 64, "C", readG1), conv(3, C); },
      [&] { H = readPoints<G1A>(sec[9], z->domainSize, 64, "H", readG1), conv(4, H); },
  };
  ThreadPool::instance().parallelFor(jobs.size(), [&](size_t i) { jobs[i](); });
  z->A = keep(*z, A);
  z->B1 = keep(*z, B1);
  z->B2 = keep(*z, B2);
  z->C = keep(*z, C);
  z->H = keep(*z, H);
  if (withVector) {
    z->A52 = keep(*z, v52[0]);
    z->B1_52 = keep(*z, v52[1]);
    z->B2_52 = keep(*z, v52[2]);
    z->C52 = keep(*z, v52[3]);
    z->H52 = keep(*z, v52[4]);
  }
}

std::unique_ptr<ZKey> parseZKey(const uint8_t* data, size_t size) {
  ZKeyLayout layout = readZKeyLayout(data, size);
  ZKey* z = layout.key.get();
  // The coefficients are used where they lie: keep a copy of their section, not of the whole input.
  auto coefs = std::make_shared<std::vector<uint8_t>>(z->coefs, z->coefs + (size_t)z->nCoefs * kCoefRecord);
  z->coefs = coefs->data();
  z->storage.push_back(coefs);
  validateZKeyBody(layout, avx512MsmEnabled());
  return std::move(layout.key);
}

void checkKeySubgroups(const ZKey& key) {
  const G2A* header[3] = {&key.beta2, &key.gamma2, &key.delta2};
  const char* names[3] = {"beta2", "gamma2", "delta2"};
  for (int i = 0; i < 3; i++)
    if (!g2InSubgroup(*header[i]))
      throw FormatError(ErrorCode::ZkeyInvalid, std::string("zkey ") + names[i] + ": G2 point not in the prime-order subgroup",
                        names[i]);
  const size_t n = key.B2.size(), chunk = 256;
  std::vector<size_t> firstBad((n + chunk - 1) / chunk, SIZE_MAX);
  ThreadPool::instance().parallelFor(firstBad.size(), [&](size_t c) {
    for (size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); i++) {
      if (!g2InSubgroup(key.B2[i])) {
        firstBad[c] = i;
        return;
      }
    }
  });
  for (size_t bad : firstBad)
    if (bad != SIZE_MAX)
      throw FormatError(ErrorCode::ZkeyInvalid,
                        "zkey B2[" + std::to_string(bad) + "]: G2 point not in the prime-order subgroup", "B2",
                        (int64_t)bad);
}

Witness parseWtns(const uint8_t* data, size_t size) {
  BinFile f(data, size, "wtns", 2, "wtns");
  ByteReader h = f.reader(1);
  expectPrime(h, FrParams::P, "wtns");
  uint32_t n = h.u32();
  ByteReader d = f.reader(2);
  if (d.remaining() != (size_t)n * 32)
    throw FormatError(ErrorCode::WtnsInvalid,
                      "wtns: data section holds " + std::to_string(d.remaining()) + " bytes, expected " +
                          std::to_string((size_t)n * 32),
                      "values");
  Witness w;
  w.values.resize((size_t)n * 4);
  std::memcpy(w.values.data(), d.bytes((size_t)n * 32), (size_t)n * 32);
  for (uint32_t i = 0; i < n; i++) {
    if (limbsGeq(w.at(i), FrParams::P))
      throw FormatError(ErrorCode::WtnsInvalid, "wtns: value " + std::to_string(i) + " is not below the field modulus",
                        "values", (int64_t)i);
  }
  return w;
}

R1cs parseR1cs(const uint8_t* data, size_t size) {
  BinFile f(data, size, "r1cs", 1, "r1cs");
  R1cs out;
  ByteReader h = f.reader(1);
  expectPrime(h, FrParams::P, "r1cs");
  out.nWires = h.u32();
  out.nPubOut = h.u32();
  out.nPubIn = h.u32();
  out.nPrvIn = h.u32();
  h.u64();  // labels
  out.nConstraints = h.u32();
  if (out.nWires == 0 || out.nPublic() >= out.nWires || out.nWires > (1u << 28))
    throw FormatError(ErrorCode::R1csInvalid, "r1cs: inconsistent wire counts", "header");
  ByteReader r = f.reader(2);
  // Every constraint takes at least 12 bytes: reject impossible counts before allocating for them.
  if ((uint64_t)out.nConstraints * 12 > r.remaining())
    throw FormatError(ErrorCode::R1csInvalid, "r1cs: constraint section is truncated", "constraints");
  out.constraints.resize(out.nConstraints);
  for (uint32_t c = 0; c < out.nConstraints; c++) {
    for (int m = 0; m < 3; m++) {
      std::vector<R1csTerm>& lc = m == 0 ? out.constraints[c].a : (m == 1 ? out.constraints[c].b : out.constraints[c].c);
      uint32_t n = r.u32();
      if ((size_t)n * 36 > r.remaining())
        throw FormatError(ErrorCode::R1csInvalid, "r1cs: constraint " + std::to_string(c) + " is truncated",
                          "constraints", (int64_t)c);
      lc.resize(n);
      for (uint32_t i = 0; i < n; i++) {
        lc[i].signal = r.u32();
        uint64_t v[4];
        std::memcpy(v, r.bytes(32), 32);
        if (lc[i].signal >= out.nWires || limbsGeq(v, FrParams::P))
          throw FormatError(ErrorCode::R1csInvalid, "r1cs: constraint " + std::to_string(c) + " has an out-of-range term",
                            "constraints", (int64_t)c);
        lc[i].value = Fr::toMont(Fr::raw(v));
      }
    }
  }
  return out;
}

}  // namespace zk
