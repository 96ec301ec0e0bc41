// Standalone profiling driver (not part of the addon): proves a zkey + wtns N times and prints phase
// timings (set ZKPROVER_PROFILE=1). Build: see native/tools/README.md.
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "formats.hpp"
#include "prover.hpp"
#include "verifier.hpp"

static std::vector<uint8_t> slurp(const char* p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_prove <zkey> <wtns> [runs]\n");
    return 2;
  }
  auto zb = slurp(argv[1]);
  auto wb = slurp(argv[2]);
  int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  auto key = zk::parseZKey(zb.data(), zb.size());
  zk::Witness w = zk::parseWtns(wb.data(), wb.size());
  for (int i = 0; i < runs; i++) {
    auto t = std::chrono::steady_clock::now();
    zk::Proof proof = zk::prove(*key, w);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    std::vector<zk::U256> publics(key->nPublic);
    for (uint32_t j = 1; j <= key->nPublic; j++) std::memcpy(publics[j - 1].v, w.at(j), 32);
    auto tv = std::chrono::steady_clock::now();
    bool ok = zk::verifyGroth16(zk::verifyingKeyOf(*key), proof, publics);
    double vms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tv).count();
    std::printf("prove %.1f ms, %s (check %.1f ms)\n", ms, ok ? "verifies" : "DOES NOT VERIFY", vms);
  }
}
