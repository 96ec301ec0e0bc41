// A 64-byte aligned array of vectors: std::vector's allocator does not align these over-aligned types
// here. resize() does not keep the contents (every user rewrites them).
#pragma once
#include <algorithm>
#include <cstdlib>
#include <new>

namespace zk {
namespace avx512 {

template <class E>
class AlignedArray {
 public:
  AlignedArray() = default;
  explicit AlignedArray(size_t n) { resize(n); }
  ~AlignedArray() { std::free(data_); }
  AlignedArray(const AlignedArray&) = delete;
  AlignedArray& operator=(const AlignedArray&) = delete;

  void resize(size_t n) {
    if (n > cap_) {
      std::free(data_);
      data_ = nullptr;
      cap_ = std::max(n, 2 * cap_);
      data_ = static_cast<E*>(std::aligned_alloc(64, ((cap_ * sizeof(E) + 63) / 64) * 64));
      if (!data_) {
        cap_ = 0;
        throw std::bad_alloc();
      }
    }
    n_ = n;
  }
  size_t size() const { return n_; }
  E& operator[](size_t i) { return data_[i]; }
  const E& operator[](size_t i) const { return data_[i]; }

 private:
  E* data_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace avx512
}  // namespace zk
