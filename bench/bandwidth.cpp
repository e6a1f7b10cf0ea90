// SPDX-License-Identifier: Apache-2.0
// hetglm-bandwidth: the machine's memory bandwidth, measured once, as the hardware bound of an epoch.
//
//   hetglm-bandwidth [--mib M] [--reps R] [--threads T]     -> one JSON object on standard output
//
// STREAM-like kernels (McCalpin, "Memory Bandwidth and Machine Balance", 1995) over float arrays of M MiB
// each (far beyond the last-level cache): copy b[i] = a[i] (bytes counted: read a + write b = 2M MiB, as
// STREAM counts them; write-allocate traffic is not counted) and read-only sum s += a[i] (bytes: M MiB),
// the kernel closest to an epoch, which mostly reads X. The read runs twice, as is and with a software prefetch
// kReadPrefetchBytes ahead, and read_gbs is the faster of the two (read_plain_gbs the first alone): on an Intel Xeon
// (KVM) the prefetch read 15.4 against 13.6 GB/s on 1 thread and 28.2 against 23.5 on 2, and the Newton solver's
// passes prefetch their rows (solvers/src/newton.cpp for_row_blocks), so the bound is what the machine can read.
// Each is run on 1 thread and on T threads (oneTBB, static contiguous ranges, first-touch initialization by the
// same ranges); the best of R repetitions is reported in GB/s (10^9 bytes per second), as STREAM does.
#include <CLI/CLI.hpp>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {
using Clock = std::chrono::steady_clock;

// The read kernel's sum: 32 independent float accumulators (AVX2: four 8-wide vectors; otherwise a loop the
// compiler vectorizes), so that the adds keep up with memory. The former 8 scalar accumulators were limited by
// the adder on an Intel Xeon (KVM): 3.2 GB/s on 1 thread where an AVX2 sum reads 6.3 GB/s, a bound below the
// Newton solver's own passes (bench/results/bandwidth_newton.md, ratios 0.6-1.0).
#if defined(__x86_64__)
constexpr std::size_t kReadPrefetchBytes = 2048;
constexpr std::size_t kReadPrefetchFloats = kReadPrefetchBytes / sizeof(float);

__attribute__((target("avx2"))) double sum_avx2(const float* a, std::size_t lo, std::size_t hi, bool prefetch) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  std::size_t i = lo;
  for (; i + 32 <= hi; i += 32) {
    if (prefetch && i + kReadPrefetchFloats < hi) __builtin_prefetch(a + i + kReadPrefetchFloats, 0, 3);
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(a + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(a + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(a + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(a + i + 24));
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  double r = 0;
  for (float x : t) r += x;
  for (; i < hi; ++i) r += a[i];
  return r;
}
#endif
double sum_floats(const float* a, std::size_t lo, std::size_t hi, bool prefetch) {
#if defined(__x86_64__)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
  }();
  if (avx2) return sum_avx2(a, lo, hi, prefetch);
#endif
  float acc[32] = {};
  std::size_t i = lo;
  for (; i + 32 <= hi; i += 32) {
    if (prefetch && i + kReadPrefetchFloats < hi) __builtin_prefetch(a + i + kReadPrefetchFloats, 0, 3);
    for (int k = 0; k < 32; ++k) acc[k] += a[i + static_cast<std::size_t>(k)];
  }
  double t = 0;
  for (float x : acc) t += x;
  for (; i < hi; ++i) t += a[i];
  return t;
}

struct Result {
  double copy_gbs = 0;
  double read_gbs = 0;        // the faster of the two reads
  double read_plain_gbs = 0;  // the read without the software prefetch
};

Result measure(float* a, float* b, std::size_t n, int threads, int reps) {
  tbb::task_arena arena(threads);
  Result r;
  const std::size_t chunk = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  auto ranges = [&](auto&& body) {
    arena.execute([&] {
      tbb::parallel_for(0, threads, [&](int t) {
        const std::size_t lo = std::min(n, static_cast<std::size_t>(t) * chunk), hi = std::min(n, lo + chunk);
        body(lo, hi);
      }, tbb::static_partitioner());
    });
  };
  // First touch by the same ranges (node-local pages on NUMA machines).
  ranges([&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a[i] = static_cast<float>(i & 1023);
    std::memset(b + lo, 0, (hi - lo) * sizeof(float));
  });
  const double bytes = static_cast<double>(n) * sizeof(float);
  for (int rep = 0; rep < reps; ++rep) {
    auto t0 = Clock::now();
    ranges([&](std::size_t lo, std::size_t hi) { std::memcpy(b + lo, a + lo, (hi - lo) * sizeof(float)); });
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.copy_gbs = std::max(r.copy_gbs, 2 * bytes / s / 1e9);
    for (const bool prefetch : {false, true}) {
      std::vector<double> partial(static_cast<std::size_t>(threads), 0.0);
      t0 = Clock::now();
      ranges([&](std::size_t lo, std::size_t hi) {
        partial[lo / std::max<std::size_t>(chunk, 1)] = sum_floats(a, lo, hi, prefetch);
      });
      s = std::chrono::duration<double>(Clock::now() - t0).count();
      volatile double sink = 0;
      for (double p : partial) sink = sink + p;
      r.read_gbs = std::max(r.read_gbs, bytes / s / 1e9);
      if (!prefetch) r.read_plain_gbs = std::max(r.read_plain_gbs, bytes / s / 1e9);
    }
  }
  return r;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hetglm-bandwidth: STREAM-like copy and read bandwidth (GB/s) on 1 and T threads, as JSON"};
  std::size_t mib = 512;
  int reps = 10;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--mib", mib, "size of each array in MiB (>> last-level cache)")->capture_default_str()
      ->check(CLI::Range(std::size_t{16}, std::size_t{1} << 20));
  app.add_option("--reps", reps, "repetitions; the best is reported")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--threads", threads, "threads of the parallel measurement (default: all cores)")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  const std::size_t n = mib * (std::size_t{1} << 20) / sizeof(float);
  std::unique_ptr<float[]> a, b;
  try {
    a.reset(new float[n]);
    b.reset(new float[n]);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hetglm-bandwidth: error: cannot allocate 2 x %zu MiB (lower --mib)\n", mib);
    return 1;
  }
  const Result one = measure(a.get(), b.get(), n, 1, reps);
  const Result all = measure(a.get(), b.get(), n, threads, reps);
  std::printf("{\"array_mib\": %zu, \"reps\": %d, \"threads\": %d, \"copy_gbs_1\": %.3f, \"read_gbs_1\": %.3f, "
              "\"copy_gbs\": %.3f, \"read_gbs\": %.3f, \"read_plain_gbs_1\": %.3f, \"read_plain_gbs\": %.3f}\n",
              mib, reps, threads, one.copy_gbs, one.read_gbs, all.copy_gbs, all.read_gbs, one.read_plain_gbs,
              all.read_plain_gbs);
  return 0;
}
