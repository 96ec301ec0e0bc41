// Arena, ArenaScope and ArenaPool (arena.hpp): the reservation, huge-page advice, pre-faulting, and the
// per-key pool of arenas.
#include "arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace zk {

namespace {

constexpr size_t kHuge = size_t(2) << 20;  // a transparent huge page on x86-64 and most arm64 kernels
constexpr size_t kAlign = 64;
constexpr size_t kReuse = size_t(64) << 10;  // blocks from this size on are reused within a proof

thread_local Arena* tCurrent = nullptr;

}  // namespace

Arena::Arena(size_t reserveBytes) {
  reserved_ = (std::max(reserveBytes, kHuge) + kHuge - 1) & ~(kHuge - 1);
  // One huge page more than asked, so that the range can start on a huge-page boundary.
  mapped_ = reserved_ + kHuge;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
  flags |= MAP_NORESERVE;
#endif
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  mapping_ = static_cast<uint8_t*>(p);
  base_ = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(mapping_) + kHuge - 1) & ~(uintptr_t)(kHuge - 1));
#ifdef MADV_HUGEPAGE
  huge_ = ::madvise(base_, reserved_, MADV_HUGEPAGE) == 0;  // advice only: fails harmlessly without THP
#endif
  free_.reserve(1024);  // the list itself never allocates during a proof
}

Arena::~Arena() { ::munmap(mapping_, mapped_); }

void* Arena::allocate(size_t bytes) {
  const size_t size = (bytes + kAlign - 1) & ~(kAlign - 1);
  if (size >= kReuse) {
    std::lock_guard<std::mutex> lk(freeMu_);
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); i++)
      if (free_[i].second >= size && (best == free_.size() || free_[i].second < free_[best].second)) best = i;
    if (best < free_.size()) {
      auto [offset, have] = free_[best];
      if (have - size >= kReuse)
        free_[best] = {offset + size, have - size};  // the rest stays reusable
      else
        free_.erase(free_.begin() + (ptrdiff_t)best);
      return base_ + offset;
    }
  }
  size_t at = used_.fetch_add(size, std::memory_order_relaxed);
  if (at + size > reserved_) return nullptr;  // used_ stays past the end: later requests fail fast too
  size_t end = at + size, seen = highWater_.load(std::memory_order_relaxed);
  while (end > seen && !highWater_.compare_exchange_weak(seen, end, std::memory_order_relaxed)) {
  }
  return base_ + at;
}

void Arena::release(void* p, size_t bytes) {
  const size_t size = (bytes + kAlign - 1) & ~(kAlign - 1);
  if (size < kReuse) return;
  std::lock_guard<std::mutex> lk(freeMu_);
  free_.emplace_back((size_t)(static_cast<uint8_t*>(p) - base_), size);
}

void Arena::rewind() {
  std::lock_guard<std::mutex> lk(freeMu_);
  free_.clear();
  used_.store(0, std::memory_order_relaxed);
}

void Arena::prefault(size_t bytes) {
  bytes = std::min((bytes + kHuge - 1) & ~(kHuge - 1), reserved_);
  if (bytes <= prefaulted_) return;
  // One write per small page: a huge page is faulted in by its first write, small ones one by one.
  // (MADV_POPULATE_WRITE would map the pages too, but on a VM the first write after it still paid the
  // fault's cost: measured, not assumed.)
  const size_t page = (size_t)::sysconf(_SC_PAGESIZE);
  for (size_t off = prefaulted_; off < bytes; off += page) *reinterpret_cast<volatile uint8_t*>(base_ + off) = 0;
  prefaulted_ = bytes;
}

Arena* currentArena() { return tCurrent; }

ArenaScope::ArenaScope(Arena* a) : previous_(tCurrent) { tCurrent = a; }
ArenaScope::~ArenaScope() { tCurrent = previous_; }

ArenaPool::Lease::~Lease() {
  if (!arena_) return;
  std::lock_guard<std::mutex> lk(pool_->mu_);
  pool_->highWater_ = std::max(pool_->highWater_, arena_->highWater());
  pool_->expect_ = std::max(pool_->expect_, arena_->highWater());
  arena_->rewind();
  pool_->idle_.push_back(std::move(arena_));
}

std::unique_ptr<Arena> ArenaPool::make() {
  // Reserved at four times the expected size (address space, not memory), so that a larger witness of
  // the same circuit still fits; what is never written is never backed.
  auto a = std::make_unique<Arena>(4 * expect_ + (size_t(64) << 20));
  a->prefault(expect_);
  return a;
}

ArenaPool::Lease ArenaPool::acquire() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Arena> a = std::move(idle_.back());
      idle_.pop_back();
      a->prefault(expect_);  // grown since this arena was made
      return Lease(*this, std::move(a));
    }
    count_++;
  }
  return Lease(*this, make());
}

void ArenaPool::warm() {
  std::lock_guard<std::mutex> lk(mu_);
  if (count_ > 0) return;
  count_++;
  idle_.push_back(make());
}

size_t ArenaPool::expectBytes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return expect_;
}
size_t ArenaPool::highWater() const {
  std::lock_guard<std::mutex> lk(mu_);
  return highWater_;
}
size_t ArenaPool::arenas() const {
  std::lock_guard<std::mutex> lk(mu_);
  return count_;
}

}  // namespace zk
