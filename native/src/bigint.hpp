// 256-bit unsigned integers: decimal conversion and byte (de)serialisation, little-endian limbs.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace zk {

struct U256 {
  uint64_t v[4];
};

inline U256 decimalToLimbs(const char* s) {
  U256 r{{0, 0, 0, 0}};
  for (; *s; s++) {
    unsigned __int128 carry = (unsigned)(*s - '0');
    for (int i = 0; i < 4; i++) {
      unsigned __int128 t = (unsigned __int128)r.v[i] * 10 + carry;
      r.v[i] = (uint64_t)t;
      carry = t >> 64;
    }
  }
  return r;
}

inline std::string limbsToDecimal(const uint64_t a[4]) {
  uint64_t t[4] = {a[0], a[1], a[2], a[3]};
  std::string out;
  while (t[0] | t[1] | t[2] | t[3]) {
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; i--) {
      unsigned __int128 cur = (rem << 64) | t[i];
      t[i] = (uint64_t)(cur / 10);
      rem = cur % 10;
    }
    out.push_back((char)('0' + (int)rem));
  }
  if (out.empty()) out = "0";
  return std::string(out.rbegin(), out.rend());
}

inline void loadLE(const uint8_t* p, uint64_t out[4]) { std::memcpy(out, p, 32); }
inline void storeLE(uint8_t* p, const uint64_t in[4]) { std::memcpy(p, in, 32); }

}  // namespace zk
