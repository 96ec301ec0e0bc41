#include "thread_pool.hpp"

#include <cstdlib>

#include "arena.hpp"

namespace zk {

// ZKPROVER_THREADS overrides the size (profiling); the default is one thread per hardware thread.
ThreadPool& ThreadPool::instance() {
  static ThreadPool pool([] {
    const char* env = std::getenv("ZKPROVER_THREADS");
    int n = env ? std::atoi(env) : 0;
    return n > 0 ? (unsigned)n : std::max(1u, std::thread::hardware_concurrency());
  }());
  return pool;
}

// The calling thread also works while it waits, so the pool keeps n-1 dedicated threads.
ThreadPool::ThreadPool(unsigned nThreads) {
  for (unsigned i = 1; i < nThreads; i++) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::submit(TaskGroup& g, std::function<void()> fn) {
  g.pending_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(Task{&g, std::move(fn), currentArena()});
  }
  cv_.notify_one();
}

bool ThreadPool::runOne(const TaskGroup* only) {
  Task t;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = queue_.begin();
    if (only)
      while (it != queue_.end() && it->group != only) ++it;
    if (it == queue_.end()) return false;
    t = std::move(*it);
    queue_.erase(it);
  }
  TaskGroup* g = t.group;
  // A group that already failed skips the rest of its work: its result is the exception.
  if (!g->failed()) {
    ArenaScope scope(t.arena);
    try {
      t.fn();
    } catch (...) {
      g->fail(std::current_exception());
    }
  }
  t.fn = nullptr;  // the task's captures go before the group may be gone
  // Decrement under the group's lock: the waiter re-takes that lock before returning, so the group
  // cannot be destroyed while this thread still touches it.
  std::lock_guard<std::mutex> lk(g->doneMu_);
  if (g->pending_.fetch_sub(1) == 1) g->doneCv_.notify_all();
  return true;
}

void ThreadPool::workerLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
    }
    runOne();
  }
}

void TaskGroup::run(std::function<void()> fn) {
  if (pool_.size() > 1) {
    pool_.submit(*this, std::move(fn));
    return;
  }
  if (failed()) return;
  try {
    fn();
  } catch (...) {
    fail(std::current_exception());
  }
}

void TaskGroup::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lk(doneMu_);
  if (!error_) error_ = std::move(e);
  failed_.store(true, std::memory_order_release);
}

void TaskGroup::drain() {
  for (;;) {
    if (pending_.load() == 0) {
      std::lock_guard<std::mutex> lk(doneMu_);
      return;
    }
    // Help with this group's own tasks only: picking up an unrelated long task here would delay the
    // group (and so the critical path of a proof) by that task's whole length.
    if (pool_.runOne(this)) continue;
    std::unique_lock<std::mutex> lk(doneMu_);
    doneCv_.wait_for(lk, std::chrono::milliseconds(1), [this] { return pending_.load() == 0; });
  }
}

void TaskGroup::wait() {
  drain();
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lk(doneMu_);
    e = std::move(error_);
    error_ = nullptr;
    failed_.store(false, std::memory_order_release);
  }
  if (e) std::rethrow_exception(e);
}

void ThreadPool::parallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 1) {
    fn(0);
    return;
  }
  TaskGroup g(*this);
  for (size_t i = 0; i < n; i++) g.run([&fn, i] { fn(i); });
  g.wait();
}

}  // namespace zk
