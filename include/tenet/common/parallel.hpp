// SPDX-License-Identifier: MIT
#pragma once
// tenet's parallel loops: the only place that knows which threads run them.
//
// Why a layer: every normal build runs the loops on TBB, but Debian's libtbb is not built with
// ThreadSanitizer, so TSan cannot see the happens-before edges inside TBB's scheduler and reports
// TBB's own task recycling as races in every parallel_for, drowning any race in tenet's loop bodies.
// A ThreadSanitizer build (-DTENET_SANITIZE=thread, which defines TENET_PARALLEL_STD_THREADS) runs
// the same loops on plain std::thread, whose creation and join TSan intercepts: what it reports
// there is tenet's.
//
// TBB backend: inline forwarding to the calls the code made before (same partitioner, grain sizes
// and thread-local storage), so results and speed are TBB's.
//
// std::thread backend (for checking, not speed): each loop is a fork-join. The caller and up to
// N - 1 threads started for the loop claim chunks (one index, or `grain` indices of a range) from
// an atomic counter, and the call returns once it has joined them; a loop of one chunk starts
// none. N is the smallest ThreadLimit alive (tbb::global_control's rule), else
// hardware_concurrency(). Nested loops get threads of their own two levels deep: the engine's
// per-event loops inside a synthesizer candidate run on several threads, so races between their
// tasks are exercised. Deeper loops (the same engine under a batch scenario) run on the calling
// thread: at most N * N threads are alive, and no thread ever waits for work nobody has started,
// so nesting cannot deadlock. A reduction keeps one partial result per chunk and joins them in
// chunk order. Sorting is std::sort on the caller: it shares nothing for TSan to check. As with
// TBB, results must not depend on how a range is cut: TBB's chunks are at most `grain`, these
// exactly `grain`.

#include <cstddef>

#ifdef TENET_PARALLEL_STD_THREADS
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>
#else
#include <functional>
#include <optional>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#endif

namespace tenet {

/// Caps the threads the parallel loops use, the caller's included, while it lives; 0 caps nothing.
/// Several alive at once: the smallest wins. Results never depend on it; tests compare 1 and 2.
class ThreadLimit {
 public:
  explicit ThreadLimit(std::size_t threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
#ifdef TENET_PARALLEL_STD_THREADS
  std::size_t threads_;
#else
  std::optional<tbb::global_control> control_;
#endif
};

#ifdef TENET_PARALLEL_STD_THREADS

namespace parallel_detail {

/// One chunk of a loop, type-erased without allocating: calls (*object)(chunk).
struct ChunkTask {
  void* object;
  void (*call)(void* object, std::size_t chunk);
};

template <typename F>
ChunkTask chunk_task(F& run) {
  return {&run, [](void* object, std::size_t chunk) { (*static_cast<F*>(object))(chunk); }};
}

/// Runs task for every chunk in [0, chunks) as the file comment says; rethrows the first exception
/// a chunk threw (chunks not yet started then never start).
void run_chunks(std::size_t chunks, ChunkTask task);

/// Threads a loop may use now (the file comment's N).
std::size_t allowed_threads();

/// Which thread a ThreadLocal instance belongs to. `finished` is set (release) when a worker ends:
/// a later thread may then take its instance over, everything the worker wrote to it visible.
struct ThreadRecord {
  std::atomic<bool> finished{false};
};
const std::shared_ptr<ThreadRecord>& this_thread_record();

inline std::size_t chunk_count(std::size_t size, std::size_t grain) { return (size + grain - 1) / grain; }

}  // namespace parallel_detail

/// fn(i) for every i in [begin, end).
template <typename Index, typename Fn>
void parallel_for(Index begin, Index end, const Fn& fn) {
  if (!(begin < end)) return;
  auto run = [&](std::size_t i) { fn(static_cast<Index>(begin + static_cast<Index>(i))); };
  parallel_detail::run_chunks(static_cast<std::size_t>(end - begin), parallel_detail::chunk_task(run));
}

/// fn(lo, hi) over consecutive sub-ranges of [begin, end) of at most `grain` indices each.
template <typename Index, typename Fn>
void parallel_for_range(Index begin, Index end, std::size_t grain, const Fn& fn) {
  if (!(begin < end)) return;
  grain = std::max<std::size_t>(grain, 1);
  const auto size = static_cast<std::size_t>(end - begin);
  auto run = [&](std::size_t chunk) {
    const std::size_t lo = chunk * grain;
    fn(static_cast<Index>(begin + static_cast<Index>(lo)),
       static_cast<Index>(begin + static_cast<Index>(std::min(size, lo + grain))));
  };
  parallel_detail::run_chunks(parallel_detail::chunk_count(size, grain), parallel_detail::chunk_task(run));
}

/// join(...join(join(identity, body(r1, identity)), body(r2, identity))...) over sub-ranges of at
/// most `grain` indices in order; body(lo, hi, value) returns `value` with [lo, hi) folded in (TBB
/// may pass a partial result rather than identity). join must be associative.
template <typename Index, typename Value, typename Body, typename Join>
Value parallel_reduce(Index begin, Index end, std::size_t grain, const Value& identity, const Body& body,
                      const Join& join) {
  if (!(begin < end)) return identity;
  grain = std::max<std::size_t>(grain, 1);
  const auto size = static_cast<std::size_t>(end - begin);
  // Wrapped: a std::vector<bool> would pack the partial results of different threads into one word.
  struct Partial {
    Value value;
  };
  std::vector<Partial> partials(parallel_detail::chunk_count(size, grain), Partial{identity});
  auto run = [&](std::size_t chunk) {
    const std::size_t lo = chunk * grain;
    partials[chunk].value = body(static_cast<Index>(begin + static_cast<Index>(lo)),
                                 static_cast<Index>(begin + static_cast<Index>(std::min(size, lo + grain))), identity);
  };
  parallel_detail::run_chunks(partials.size(), parallel_detail::chunk_task(run));
  Value result = identity;
  for (const Partial& partial : partials) result = join(result, partial.value);
  return result;
}

template <typename Iterator, typename Compare = std::less<>>
void parallel_sort(Iterator first, Iterator last, const Compare& less = Compare()) {
  std::sort(first, last, less);
}

/// The threads a loop started now may use: what a caller splitting work "one part per thread" asks.
inline int max_concurrency() { return static_cast<int>(parallel_detail::allowed_threads()); }

/// One T per thread that calls local(), made on its first call by the initializer (default: T()).
/// Instances live as long as the ThreadLocal and a thread may be given one an earlier thread used
/// (the std::thread backend hands on those of finished threads): a loop body must not expect a
/// fresh one.
template <typename T>
class ThreadLocal {
 public:
  ThreadLocal() : make_([] { return std::make_unique<T>(); }) {}
  template <typename Init>
  explicit ThreadLocal(Init init) : make_([init = std::move(init)] { return std::make_unique<T>(init()); }) {}
  ThreadLocal(const ThreadLocal&) = delete;
  ThreadLocal& operator=(const ThreadLocal&) = delete;

  T& local() {
    const std::shared_ptr<parallel_detail::ThreadRecord>& me = parallel_detail::this_thread_record();
    {
      const std::lock_guard lock(mutex_);
      for (Instance& instance : instances_) {
        if (instance.owner == me) return *instance.value;
      }
      for (Instance& instance : instances_) {
        if (instance.owner->finished.load(std::memory_order_acquire)) {
          instance.owner = me;
          return *instance.value;
        }
      }
    }
    std::unique_ptr<T> value = make_();  // unlocked: an initializer may be costly
    const std::lock_guard lock(mutex_);
    instances_.push_back({me, std::move(value)});
    return *instances_.back().value;
  }

 private:
  struct Instance {
    std::shared_ptr<parallel_detail::ThreadRecord> owner;
    std::unique_ptr<T> value;
  };
  std::function<std::unique_ptr<T>()> make_;
  std::mutex mutex_;
  std::vector<Instance> instances_;
};

#else  // TBB

inline ThreadLimit::ThreadLimit(std::size_t threads) {
  if (threads > 0) control_.emplace(tbb::global_control::max_allowed_parallelism, threads);
}
inline ThreadLimit::~ThreadLimit() = default;

/// fn(i) for every i in [begin, end).
template <typename Index, typename Fn>
void parallel_for(Index begin, Index end, const Fn& fn) {
  tbb::parallel_for(begin, end, fn);
}

/// fn(lo, hi) over consecutive sub-ranges of [begin, end) of at most `grain` indices each.
template <typename Index, typename Fn>
void parallel_for_range(Index begin, Index end, std::size_t grain, const Fn& fn) {
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end, grain),
                    [&](const tbb::blocked_range<Index>& range) { fn(range.begin(), range.end()); });
}

/// join(...join(join(identity, body(r1, identity)), body(r2, identity))...) over sub-ranges of at
/// most `grain` indices in order; body(lo, hi, value) returns `value` with [lo, hi) folded in (TBB
/// may pass a partial result rather than identity). join must be associative.
template <typename Index, typename Value, typename Body, typename Join>
Value parallel_reduce(Index begin, Index end, std::size_t grain, const Value& identity, const Body& body,
                      const Join& join) {
  return tbb::parallel_reduce(
      tbb::blocked_range<Index>(begin, end, grain), identity,
      [&](const tbb::blocked_range<Index>& range, const Value& value) {
        return body(range.begin(), range.end(), value);
      },
      join);
}

template <typename Iterator, typename Compare = std::less<>>
void parallel_sort(Iterator first, Iterator last, const Compare& less = Compare()) {
  tbb::parallel_sort(first, last, less);
}

/// The threads a loop started now may use: what a caller splitting work "one part per thread" asks.
inline int max_concurrency() { return tbb::this_task_arena::max_concurrency(); }

/// One T per thread that calls local(), made on its first call by the initializer (default: T()).
/// Instances live as long as the ThreadLocal and a thread may be given one an earlier thread used
/// (the std::thread backend hands on those of finished threads): a loop body must not expect a
/// fresh one.
template <typename T>
class ThreadLocal {
 public:
  ThreadLocal() = default;
  template <typename Init>
  explicit ThreadLocal(Init init) : instances_(std::move(init)) {}
  ThreadLocal(const ThreadLocal&) = delete;
  ThreadLocal& operator=(const ThreadLocal&) = delete;

  T& local() { return instances_.local(); }

 private:
  tbb::enumerable_thread_specific<T> instances_;
};

#endif

}  // namespace tenet
