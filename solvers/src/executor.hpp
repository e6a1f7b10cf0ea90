// SPDX-License-Identifier: Apache-2.0
// The CPU solvers' executors (private to solvers/src): parallel_cpu.cpp and newton.cpp run every parallel region
// through parallel_chunks / run_tasks and pick their arena with in_solver_arena.
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace hetglm {

// Executors. Every parallel region of the solvers goes through parallel_chunks and run_tasks, so the solver logic
// is the same whichever threads run it. Normally they are oneTBB parallel_for loops in the caller's arena. Under
// ThreadSanitizer (-fsanitize=thread) they are plain std::thread fork/join: Debian's libtbb is not instrumented, so
// TSan cannot see oneTBB's internal synchronization and reports races inside its own bookkeeping; std::thread's
// create/join edges are visible to TSan, so every report left is about the solver's own memory accesses.
#if defined(__SANITIZE_THREAD__)
#define HETGLM_STD_THREADS 1
#endif

#if defined(HETGLM_STD_THREADS)
inline int executor_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Runs body(c) for every chunk c in [0, n_chunks); threads take chunks from a shared counter.
template <class Body>
void parallel_chunks(std::int64_t n_chunks, const Body& body) {
  if (n_chunks <= 0) return;
  const int T = static_cast<int>(std::min<std::int64_t>(n_chunks, executor_threads()));
  std::atomic<std::int64_t> next{0};
  auto worker = [&] {
    for (std::int64_t c; (c = next.fetch_add(1)) < n_chunks;) body(c);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < T; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

/// Runs f(t) for t in [0, n), one thread per t (results must depend on t only).
template <class F>
void run_tasks(int n, bool /*deterministic*/, const F& f) {
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back([&f, t] { f(t); });
  if (n > 0) f(0);
  for (auto& th : pool) th.join();
}
#else
/// Runs body(c) for every chunk c in [0, n_chunks) in the current arena (work stealing allowed: each chunk's
/// result must depend on c only).
template <class Body>
void parallel_chunks(std::int64_t n_chunks, const Body& body) {
  if (n_chunks <= 0) return;
  if (n_chunks == 1) {
    body(std::int64_t{0});
    return;
  }
  tbb::parallel_for(std::int64_t{0}, n_chunks, [&](std::int64_t c) { body(c); });
}

/// Runs f(t) for t in [0, n) in the current arena, one task per t. deterministic: a static partition (which OS
/// thread runs which t is still up to TBB; results must depend on t only).
template <class F>
void run_tasks(int n, bool deterministic, const F& f) {
  if (n == 1) {
    f(0);
    return;
  }
  if (deterministic) {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, n, 1),
        [&](const tbb::blocked_range<int>& r) {
          for (int t = r.begin(); t < r.end(); ++t) f(t);
        },
        tbb::static_partitioner());
  } else {
    tbb::parallel_for(0, n, [&](int t) { f(t); });
  }
}
#endif


/// Calls f(T) with T = n_threads (0: the concurrency of the current arena; under ThreadSanitizer the cores) in the
/// caller's arena when its concurrency equals min(T, cores) (the process's one arena, docs/conventions.md, "Threads"), else in an
/// arena of that size. T > cores still means T logical threads (replicas), executed by the available cores.
template <class F>
auto in_solver_arena(int n_threads, F&& f) {
#if defined(HETGLM_STD_THREADS)
  return f(n_threads > 0 ? n_threads : executor_threads());
#else
  const int T = n_threads > 0 ? n_threads : std::max(1, tbb::this_task_arena::max_concurrency());
  const int want = std::max(1, std::min(T, tbb::info::default_concurrency()));
  if (tbb::this_task_arena::max_concurrency() == want) return f(T);  // the caller's arena
  tbb::task_arena arena(want);
  return arena.execute([&] { return f(T); });
#endif
}

}  // namespace hetglm
