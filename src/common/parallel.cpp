// SPDX-License-Identifier: MIT
// The std::thread backend of parallel.hpp (the ThreadSanitizer build's); the TBB backend is all
// inline in the header.

#include "tenet/common/parallel.hpp"

#ifdef TENET_PARALLEL_STD_THREADS

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tenet {
namespace parallel_detail {
namespace {

/// Loops nested deeper than this run on the calling thread (header comment).
constexpr int kThreadedLevels = 2;

std::mutex limits_mutex;
std::vector<std::size_t> live_limits;        ///< one entry per ThreadLimit alive with threads > 0
std::atomic<std::size_t> smallest_limit{0};  ///< 0: no ThreadLimit alive

/// Loops this thread is inside (as caller or worker).
thread_local int loop_depth = 0;
thread_local std::shared_ptr<ThreadRecord> thread_record;
/// Every record ever made, kept to the end of the program: no record is freed while threads run,
/// so a thread dropping its reference never frees memory another thread's reference counting
/// touched (TSan reported such a free at a worker's end as a race, once in three CI runs).
std::mutex records_mutex;
std::vector<std::shared_ptr<ThreadRecord>> all_records;

void update_smallest_limit() {
  smallest_limit.store(live_limits.empty() ? 0 : *std::min_element(live_limits.begin(), live_limits.end()),
                       std::memory_order_relaxed);
}

/// Sets loop_depth for the caller's share of a loop, and puts it back however the loop ends.
class DepthScope {
 public:
  explicit DepthScope(int depth) : saved_(loop_depth) { loop_depth = depth; }
  ~DepthScope() { loop_depth = saved_; }
  DepthScope(const DepthScope&) = delete;
  DepthScope& operator=(const DepthScope&) = delete;

 private:
  int saved_;
};

}  // namespace

std::size_t allowed_threads() {
  // Read once: glibc reads /sys for it, and loops of one chunk each run by the hundred thousand.
  static const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t limit = smallest_limit.load(std::memory_order_relaxed);
  return limit != 0 ? limit : cores;
}

const std::shared_ptr<ThreadRecord>& this_thread_record() {
  if (!thread_record) {
    thread_record = std::make_shared<ThreadRecord>();
    const std::lock_guard lock(records_mutex);
    all_records.push_back(thread_record);
  }
  return thread_record;
}

void run_chunks(std::size_t chunks, ChunkTask task) {
  const DepthScope depth(loop_depth + 1);
  const std::size_t threads = chunks <= 1 ? chunks : std::min(chunks, allowed_threads());
  if (threads <= 1 || loop_depth > kThreadedLevels) {
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) task.call(task.object, chunk);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t chunk = next.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= chunks) return;
      try {
        task.call(task.object, chunk);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };
  const int worker_depth = loop_depth;
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  try {
    for (std::size_t i = 1; i < threads; ++i) {
      workers.emplace_back([&work, worker_depth] {
        loop_depth = worker_depth;
        work();
        // Hands this thread's ThreadLocal instances on (ThreadRecord); release: with what it wrote.
        // Dropped here rather than by thread_local destruction: TSan stops tracking a thread
        // before those destructors run, so their reference-count update would seem unordered
        // with the join and whoever frees the record next.
        if (thread_record) {
          thread_record->finished.store(true, std::memory_order_release);
          thread_record.reset();
        }
      });
    }
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and the caller share the chunks.
  }
  work();
  for (std::thread& worker : workers) worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace parallel_detail

ThreadLimit::ThreadLimit(std::size_t threads) : threads_(threads) {
  if (threads_ == 0) return;
  const std::lock_guard lock(parallel_detail::limits_mutex);
  parallel_detail::live_limits.push_back(threads_);
  parallel_detail::update_smallest_limit();
}

ThreadLimit::~ThreadLimit() {
  if (threads_ == 0) return;
  const std::lock_guard lock(parallel_detail::limits_mutex);
  auto& limits = parallel_detail::live_limits;
  limits.erase(std::find(limits.begin(), limits.end(), threads_));
  parallel_detail::update_smallest_limit();
}

}  // namespace tenet

#endif
