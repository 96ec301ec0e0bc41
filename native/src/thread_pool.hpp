// The addon's own worker pool (libuv's pool is small and shared with fs/crypto). Tasks carry their
// own group counter, so concurrent proofs never share state; a waiting thread runs its own group's
// queued tasks itself instead of sleeping, which makes nested parallel sections deadlock-free.
// A task may throw: the group keeps the first exception, skips its tasks not yet started, and wait()
// rethrows it on the waiting thread (so a failing task is an error of the call, never std::terminate).
// A task runs with the arena (arena.hpp) of the thread that submitted it.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace zk {

class Arena;
class TaskGroup;

class ThreadPool {
 public:
  static ThreadPool& instance();
  explicit ThreadPool(unsigned nThreads);
  ~ThreadPool();
  unsigned size() const { return (unsigned)workers_.size() + 1; }

  void submit(TaskGroup& g, std::function<void()> fn);
  // Runs fn(i) for i in [0, n) spread over the pool; returns when all are done, or rethrows the first
  // exception one of them threw (once all started ones have finished).
  void parallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  friend class TaskGroup;
  struct Task {
    TaskGroup* group;
    std::function<void()> fn;
    Arena* arena;
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
  // Waits for the tasks still running; an exception nobody waited for is dropped (a destructor must
  // not throw: call wait() to see it).
  ~TaskGroup() { drain(); }
  // With no worker threads the task runs inline, which keeps a one-thread pool strictly sequential;
  // its exception is kept for wait() all the same.
  void run(std::function<void()> fn);
  // Returns when every task of the group is done; rethrows the first exception a task threw.
  void wait();

 private:
  friend class ThreadPool;
  void drain();
  void fail(std::exception_ptr e);
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  ThreadPool& pool_;
  std::atomic<size_t> pending_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // the first exception, under doneMu_
  std::mutex doneMu_;
  std::condition_variable doneCv_;
};

}  // namespace zk
