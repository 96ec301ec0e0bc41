// Page-fault cost probe: what one minor page fault costs on this host, the figure that decides how much a
// program loses by giving memory back to the OS and touching it again (a VM whose faults exit to the
// hypervisor can take 10-100x longer per fault than bare metal). Maps fresh anonymous memory, writes one
// byte per 4 KiB page, and divides the time by the minor faults counted (getrusage); then the same with
// transparent huge pages asked for (madvise), and a second pass over memory already present (no faults:
// the cost of the writes alone, subtracted from the first figure).
// Build and run: g++ -O2 -o fault_probe bench/prover/fault_probe.cpp && ./fault_probe [MiB=64] [repeats=5]
// Prints one JSON line: {"usPerFault", "hugePages": {"usPerFault", "faults", "ms"}, "pageMs", "mib"}.
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

long minorFaults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Pass {
  double ms;
  long faults;
};

// Writes one byte per 4 KiB page of [p, p + bytes).
Pass touch(volatile char* p, size_t bytes) {
  const long f0 = minorFaults();
  const double t0 = nowMs();
  for (size_t off = 0; off < bytes; off += 4096) p[off] = 1;
  return Pass{nowMs() - t0, minorFaults() - f0};
}

struct Probe {
  Pass fresh, again;
};

Probe probe(size_t bytes, bool huge) {
  // 2 MiB of slack so that a huge-page region can start on a 2 MiB boundary.
  const size_t slack = 2u << 20;
  char* raw = (char*)mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  char* p = (char*)(((uintptr_t)raw + slack - 1) & ~(uintptr_t)(slack - 1));
  madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  Probe r{touch(p, bytes), touch(p, bytes)};
  munmap(raw, bytes + slack);
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? (size_t)std::atoi(argv[1]) : 64;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const size_t bytes = mib << 20;
  std::vector<double> us, hugeMs, hugeFaults, pageMs;
  for (int i = 0; i < repeats; i++) {
    Probe small = probe(bytes, false);
    Probe huge = probe(bytes, true);
    if (small.fresh.faults > 0) us.push_back((small.fresh.ms - small.again.ms) * 1e3 / (double)small.fresh.faults);
    pageMs.push_back(small.fresh.ms);
    hugeMs.push_back(huge.fresh.ms);
    hugeFaults.push_back((double)huge.fresh.faults);
  }
  const double hf = median(hugeFaults);
  std::printf(
      "{\"mib\":%zu,\"usPerFault\":%.2f,\"pageMs\":%.1f,\"hugePages\":{\"faults\":%.0f,\"ms\":%.1f,\"usPerFault\":%.1f}}\n",
      mib, us.empty() ? 0.0 : median(us), median(pageMs), hf, median(hugeMs), hf > 0 ? median(hugeMs) * 1e3 / hf : 0.0);
  return 0;
}
