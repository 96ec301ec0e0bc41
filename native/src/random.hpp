// Uniform field elements from the OS CSPRNG by rejection sampling (no modular bias).
#pragma once
#include <sys/random.h>

#include <cerrno>
#include <stdexcept>

#include "errors.hpp"
#include "field.hpp"

namespace zk {

inline void osRandom(void* buf, size_t n) {
  uint8_t* p = (uint8_t*)buf;
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ProverError(ErrorCode::Internal, "getrandom failed");
    }
    p += got;
    n -= (size_t)got;
  }
}

// Plain integer uniform in [0, r), or in [1, r) when nonZero.
inline void randomScalar(uint64_t out[4], bool nonZero) {
  for (;;) {
    osRandom(out, 32);
    out[3] &= 0x3fffffffffffffffULL;  // r < 2^254: keeps the acceptance rate above 75%
    if (limbsGeq(out, FrParams::P)) continue;
    if (nonZero && limbsZero(out)) continue;
    return;
  }
}

}  // namespace zk
