// Standalone driver (not part of the addon): loads a zkey + wtns, proves N times, checks each proof,
// and prints the timings. Used for profiling (set ZKPROVER_PROFILE=1) and by bench/prover/rapidsnark.ts
// as the "ours, C++" engine next to rapidsnark's command line. Build: see native/tools/README.md.
// The key is loaded and readied as the addon does it (loadZKeyFile, then prepareProver: working memory
// pre-faulted, tables, key pages), each proof runs in the key's working memory (withWorkingMemory).
// The last line of output is one JSON object: {"path", "prepared", "loadMs", "prepareMs", "prove": [ms...],
// "check": [ms...], "faults": [minor faults per proof...], "verified", "arena": {"expectMb", "highWaterMb",
// "hugePages"}, "rssMb": resident file-backed and anonymous memory after the load and after the proofs}.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats.hpp"
#include "key_file.hpp"
#include "msm_avx512.hpp"
#include "prover.hpp"
#include "verifier.hpp"

static std::vector<uint8_t> slurp(const char* p) {
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error(std::string("cannot read ") + p);
  std::vector<uint8_t> out((size_t)f.tellg());
  f.seekg(0);
  f.read(reinterpret_cast<char*>(out.data()), (std::streamsize)out.size());
  return out;
}

// Resident memory from /proc/self/status (Linux; -1 elsewhere): file-backed pages (the mapped key
// files among them) and anonymous ones (heap), in MB.
static double statusMb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') return std::atof(line.c_str() + n + 1) / 1024;
  return -1;
}

// Minor page faults of the whole process so far (every thread).
static long minorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

static double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_prove <zkey> <wtns> [runs]\n");
    return 2;
  }
  int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  auto t0 = std::chrono::steady_clock::now();
  zk::LoadedKey loaded = zk::loadZKeyFile(argv[1]);
  const std::unique_ptr<zk::ZKey>& key = loaded.key;
  double loadMs = msSince(t0);
  const auto tp = std::chrono::steady_clock::now();
  zk::prepareProver(*key);
  const double prepareMs = msSince(tp);
  const double fileAfterLoad = statusMb("RssFile"), anonAfterLoad = statusMb("RssAnon");
  auto wb = slurp(argv[2]);
  std::string prove = "[", check = "[", faults = "[";
  bool allOk = true;
  for (int i = 0; i < runs; i++) {
    const long f0 = minorFaults();
    auto t = std::chrono::steady_clock::now();
    // As the addon proves: the witness parsed and proved inside the key's working memory.
    std::vector<zk::U256> publics(key->nPublic);
    zk::Proof proof = zk::withWorkingMemory(*key, [&] {
      zk::Witness w = zk::parseWtns(wb.data(), wb.size());
      for (uint32_t j = 1; j <= key->nPublic; j++) std::memcpy(publics[j - 1].v, w.at(j), 32);
      return zk::prove(*key, w);
    });
    double ms = msSince(t);
    const long nFaults = minorFaults() - f0;
    auto tv = std::chrono::steady_clock::now();
    bool ok = zk::verifyGroth16(zk::verifyingKeyOf(*key), proof, publics);
    double vms = msSince(tv);
    allOk = allOk && ok;
    std::fprintf(stderr, "prove %.1f ms, %ld minor faults, %s (check %.1f ms)\n", ms, nFaults,
                 ok ? "verifies" : "DOES NOT VERIFY", vms);
    faults += (i ? "," : "") + std::to_string(nFaults);
    prove += (i ? "," : "") + std::to_string(ms);
    check += (i ? "," : "") + std::to_string(vms);
  }
  const char* path = zk::avx512MsmEnabled() ? "avx512-ifma" : zk::kUseAdx ? "scalar-adx" : "scalar-portable";
  std::printf(
      "{\"path\":\"%s\",\"prepared\":\"%s\",\"loadMs\":%.3f,\"prepareMs\":%.3f,\"prove\":%s],\"check\":%s],"
      "\"faults\":%s],\"verified\":%s,\"arena\":{\"expectMb\":%.2f,\"highWaterMb\":%.2f,\"arenas\":%zu},"
      "\"rssMb\":{\"fileAfterLoad\":%.1f,\"anonAfterLoad\":%.1f,\"fileAfterProofs\":%.1f,\"anonAfterProofs\":%.1f}}\n",
      path, zk::prepStatusName(loaded.status), loadMs, prepareMs, prove.c_str(), check.c_str(), faults.c_str(),
      allOk ? "true" : "false", zk::workingMemoryEstimate(*key) / 1048576.0, key->work->highWater() / 1048576.0,
      key->work->arenas(), fileAfterLoad, anonAfterLoad, statusMb("RssFile"), statusMb("RssAnon"));
  return allOk ? 0 : 1;
}
