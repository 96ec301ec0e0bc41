// Standalone profiling driver (not part of the addon): proves a zkey + wtns N times and prints phase
// timings (set ZKPROVER_PROFILE=1). Build: see native/tools/README.md.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "formats.hpp"
#include "prover.hpp"

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
    zk::prove(*key, w);
    std::printf("prove %.1f ms\n", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
  }
}
