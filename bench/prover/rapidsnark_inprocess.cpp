// rapidsnark proving inside its own process, through its library's C API (prover.h: create a prover from
// a zkey buffer once, prove a witness buffer many times): the like-for-like partner of our warm in-process
// proof. Not part of this project's build; bench/prover/rapidsnark.ts compiles it against a rapidsnark
// build (bench/prover/README.md) when RAPIDSNARK_PROVER is set.
// Usage: rapidsnark_inprocess <zkey> <wtns> <proofs> <proof.json> <public.json>
// Prints one JSON line: {"createMs", "prove": [ms...], "faults": [minor faults per proof...]}; the last
// proof and its public signals are written to the two files (checked by the caller with snarkjs).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "prover.h"

namespace {

long minorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int fail(const char* what, const char* detail) {
  std::fprintf(stderr, "rapidsnark_inprocess: %s: %s\n", what, detail);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: rapidsnark_inprocess <zkey> <wtns> <proofs> <proof.json> <public.json>\n");
    return 2;
  }
  const int proofs = std::atoi(argv[3]);
  std::ifstream in(argv[2], std::ios::binary);
  const std::vector<char> wtns((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (wtns.empty()) return fail("cannot read", argv[2]);

  char error[1024] = {0};
  void* prover = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  // The zkey mapped and used in place, as rapidsnark's own command line does. (Its
  // groth16_prover_create_zkey_file unmaps the file before returning, at 81eddf1, so the prover it
  // creates reads freed memory: the buffer form is the one that works.)
  const int fd = ::open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return fail("cannot open", argv[1]);
  void* zkey = ::mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (zkey == MAP_FAILED) return fail("cannot map", argv[1]);
  if (groth16_prover_create(&prover, zkey, (unsigned long long)st.st_size, error, sizeof error) != PROVER_OK)
    return fail("create", error);
  const double createMs = msSince(t0);

  std::string proof(16384, '\0'), pub(1 << 20, '\0'), times = "[", faults = "[";
  for (int i = 0; i < proofs; i++) {
    unsigned long long proofSize = proof.size(), publicSize = pub.size();
    const long f0 = minorFaults();
    const auto t = std::chrono::steady_clock::now();
    int rc = groth16_prover_prove(prover, wtns.data(), wtns.size(), &proof[0], &proofSize, &pub[0], &publicSize,
                                  error, sizeof error);
    const double ms = msSince(t);
    const long nFaults = minorFaults() - f0;
    if (rc != PROVER_OK) return fail("prove", error);
    times += (i ? "," : "") + std::to_string(ms);
    faults += (i ? "," : "") + std::to_string(nFaults);
    if (i == proofs - 1) {
      std::ofstream(argv[4]) << proof.substr(0, proofSize);
      std::ofstream(argv[5]) << pub.substr(0, publicSize);
    }
  }
  groth16_prover_destroy(prover);
  ::munmap(zkey, (size_t)st.st_size);
  std::printf("{\"createMs\":%.3f,\"prove\":%s],\"faults\":%s]}\n", createMs, times.c_str(), faults.c_str());
  return 0;
}
