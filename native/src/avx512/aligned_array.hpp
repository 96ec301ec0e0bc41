// A 64-byte aligned array of vectors: std::vector's allocator does not align these over-aligned types
// here. resize() does not keep the contents (every user rewrites them). Like Scratch (arena.hpp), it takes
// its memory from the arena of the proof running on the constructing thread, or else from the heap.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <new>

#include "../arena.hpp"

namespace zk {
namespace avx512 {

template <class E>
class AlignedArray {
 public:
  AlignedArray() = default;
  explicit AlignedArray(size_t n) { resize(n); }
  ~AlignedArray() { release(); }
  AlignedArray(const AlignedArray&) = delete;
  AlignedArray& operator=(const AlignedArray&) = delete;

  void resize(size_t n) {
    if (n > cap_) {
      release();
      cap_ = std::max(n, 2 * cap_);
      const size_t bytes = ((cap_ * sizeof(E) + 63) / 64) * 64;
      if (arena_ != nullptr) data_ = static_cast<E*>(arena_->allocate(bytes));
      if (!data_) data_ = static_cast<E*>(std::aligned_alloc(64, bytes));
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
  void release() {
    if (data_ != nullptr && arena_ != nullptr && arena_->owns(data_))
      arena_->release(data_, ((cap_ * sizeof(E) + 63) / 64) * 64);
    else
      std::free(data_);
    data_ = nullptr;
  }
  Arena* arena_ = currentArena();
  E* data_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace avx512
}  // namespace zk
