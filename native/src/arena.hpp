// Working memory that stays with a circuit between proofs. A proof's scratch arrays (witness copy, H
// evaluations, MSM entries, digits, buckets, batch inversions) come from an Arena: one reserved address
// range per proof in flight, handed out by an atomic bump pointer and rewound, never unmapped, when the
// proof ends. Blocks of 64 KiB and more that a proof frees are reused by its later requests (best fit),
// which keeps an arena near the proof's peak of live memory rather than the sum of everything it asks
// for (policy_tx_2_2: ~80 MiB asked for in ~90 large blocks). Pages touched once stay resident, so a warm proof takes almost no page faults (on a VM a
// fault can cost 15-70 us, and a proof that gives its memory back faults in thousands of pages each time).
// Transparent huge pages are asked for (madvise) where the OS offers them, never required.
//
// The arena in use is a thread-local setting (ArenaScope); the addon's pool carries it into the tasks a
// thread submits. Scratch<T> is a std::vector whose allocator takes its arena when the vector is
// constructed and falls back to the heap when there is none (outside a proof, or once the reservation is
// used up), so code that builds these vectors runs the same with or without an arena.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace zk {

class Arena {
 public:
  // Reserves `reserveBytes` of address space (not memory: pages are only backed once written).
  explicit Arena(size_t reserveBytes);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // 64-byte aligned; null when the reservation cannot hold it (the caller then uses the heap).
  void* allocate(size_t bytes);
  // A block this arena gave out (bytes as asked for): large ones become reusable, small ones wait for
  // the rewind.
  void release(void* p, size_t bytes);
  bool owns(const void* p) const { return p >= base_ && p < base_ + reserved_; }
  // Every allocation is released at once; the caller guarantees none is still in use.
  void rewind();
  // Writes the first `bytes` of the range so that they are resident before a proof needs them.
  void prefault(size_t bytes);
  size_t highWater() const { return highWater_.load(std::memory_order_relaxed); }
  size_t prefaulted() const { return prefaulted_; }
  bool hugePages() const { return huge_; }

 private:
  uint8_t* base_ = nullptr;
  size_t reserved_ = 0, mapped_ = 0, prefaulted_ = 0;
  uint8_t* mapping_ = nullptr;
  bool huge_ = false;
  std::atomic<size_t> used_{0}, highWater_{0};
  std::mutex freeMu_;
  std::vector<std::pair<size_t, size_t>> free_;  // (offset, size) of released large blocks
};

// The arena of the proof running on this thread, or null.
Arena* currentArena();

// Sets the current arena for this thread until the scope ends.
class ArenaScope {
 public:
  explicit ArenaScope(Arena* a);
  ~ArenaScope();
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  Arena* previous_;
};

template <class T>
class ScratchAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;

  ScratchAllocator() noexcept : arena_(currentArena()) {}
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>& o) noexcept : arena_(o.arena()) {}

  T* allocate(size_t n) {
    if (arena_ != nullptr)
      if (void* p = arena_->allocate(n * sizeof(T))) return static_cast<T*>(p);
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T) > 64 ? alignof(T) : 64)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (arena_ != nullptr && arena_->owns(p)) {
      arena_->release(p, n * sizeof(T));
      return;
    }
    ::operator delete(p, std::align_val_t(alignof(T) > 64 ? alignof(T) : 64));
  }
  Arena* arena() const { return arena_; }
  template <class U>
  bool operator==(const ScratchAllocator<U>& o) const {
    return arena_ == o.arena();
  }
  template <class U>
  bool operator!=(const ScratchAllocator<U>& o) const {
    return arena_ != o.arena();
  }

 private:
  Arena* arena_;
};

template <class T>
using Scratch = std::vector<T, ScratchAllocator<T>>;

// The arenas of one circuit key: one per proof in flight (a second concurrent proof gets a second
// arena), each reserved large and pre-faulted to `expectBytes`, the working memory a proof of this key
// is expected to need (grown to the largest proof seen).
class ArenaPool {
 public:
  explicit ArenaPool(size_t expectBytes) : expect_(expectBytes) {}
  // An arena for one proof: returned (rewound) when the lease ends.
  class Lease {
   public:
    Lease(ArenaPool& pool, std::unique_ptr<Arena> a) : pool_(&pool), arena_(std::move(a)) {}
    Lease(Lease&&) = default;
    ~Lease();
    Arena* get() const { return arena_.get(); }

   private:
    ArenaPool* pool_;
    std::unique_ptr<Arena> arena_;
  };
  Lease acquire();
  // Creates the first arena and pre-faults it, so that the first proof runs on resident memory.
  void warm();
  size_t expectBytes() const;
  // The largest working memory any proof of this key used so far.
  size_t highWater() const;
  size_t arenas() const;

 private:
  std::unique_ptr<Arena> make();
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Arena>> idle_;
  size_t expect_, highWater_ = 0, count_ = 0;
};

}  // namespace zk
