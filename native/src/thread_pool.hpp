// The addon's own worker pool (libuv's pool is small and shared with fs/crypto). Tasks carry their
// own group counter, so concurrent proofs never share state; a waiting thread runs its own group's
// queued tasks itself instead of sleeping, which makes nested parallel sections deadlock-free.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace zk {

class TaskGroup;

class ThreadPool {
 public:
  static ThreadPool& instance();
  explicit ThreadPool(unsigned nThreads);
  ~ThreadPool();
  unsigned size() const { return (unsigned)workers_.size() + 1; }

  void submit(TaskGroup& g, std::function<void()> fn);
  // Runs fn(i) for i in [0, n) spread over the pool; returns when all are done.
  void parallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  friend class TaskGroup;
  struct Task {
    TaskGroup* group;
    std::function<void()> fn;
  };
  bool runOne(const TaskGroup* only = nullptr);  // runs one queued task (of group `only` if given)
  void workerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
};

class TaskGroup {
 public:
  explicit TaskGroup(ThreadPool& pool = ThreadPool::instance()) : pool_(pool) {}
  ~TaskGroup() { wait(); }
  // With no worker threads the task runs inline, which keeps a one-thread pool strictly sequential.
  void run(std::function<void()> fn) {
    if (pool_.size() == 1) {
      fn();
      return;
    }
    pool_.submit(*this, std::move(fn));
  }
  void wait();

 private:
  friend class ThreadPool;
  ThreadPool& pool_;
  std::atomic<size_t> pending_{0};
  std::mutex doneMu_;
  std::condition_variable doneCv_;
};

}  // namespace zk
