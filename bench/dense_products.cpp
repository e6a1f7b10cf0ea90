// SPDX-License-Identifier: Apache-2.0
// hetglm-dense-products: the Newton solver's Hessian-vector product on dense data, X^T (D (X p)), with the engine's
// vectorized kernels (solvers/src/dense_kernels.hpp, float32 X, float64 vectors and sums, the solver's blocks of
// 4 rows and chunks of 4096 rows) against Eigen on the same float32 row-major X through Eigen::Map: (a) float32
// products (p cast to float, Eigen's GEMV, the sums in float32), (b) the product in float64 through X.cast<double>().
// Rows are split over T threads (oneTBB, one range per thread), Eigen called per range, as the solver would.
//
//   hetglm-dense-products [--rows N] [--cols D] [--threads T] [--reps R]   -> one JSON object on standard output
//
// Built twice (bench/CMakeLists.txt): without -march, as the library is (Eigen then uses SSE2; the engine's kernels
// choose AVX2 + FMA at run time), and as hetglm-dense-products-native with -march=native (Eigen's best case).
// Times: median of R repetitions, in ms; GB/s counts the 4 n d bytes of X read once per product.
#include <CLI/CLI.hpp>
#include <Eigen/Dense>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "../solvers/src/dense_kernels.hpp"

namespace {
using Clock = std::chrono::steady_clock;
using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class F>
double median_ms(int reps, const F& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The Newton solver's dense Hessian-vector product: engine kernels vs Eigen"};
  std::int64_t n = 50000, d = 500;
  int threads = 2, reps = 15;
  app.add_option("--rows", n, "samples")->check(CLI::PositiveNumber);
  app.add_option("--cols", d, "features")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "threads")->check(CLI::PositiveNumber);
  app.add_option("--reps", reps, "repetitions")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::vector<float> X(static_cast<std::size_t>(n * d));
  std::vector<double> p(d), curv(n), xp(n), hp(d);
  std::mt19937_64 rng(1);
  std::normal_distribution<float> g;
  for (float& x : X) x = g(rng);
  for (double& x : p) x = g(rng);
  for (double& x : curv) x = 0.25 * std::abs(g(rng));
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t n_chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> buf(static_cast<std::size_t>(n_chunks * d));
  tbb::task_arena arena(threads);

  // The engine's kernels, as newton.cpp's dense CG pass: chunks of 4096 rows, each into its own buffer, blocks of
  // 4 rows (dot_rows, then axpy_rows), the buffers added in chunk order.
  auto engine = [&] {
    arena.execute([&] {
      tbb::parallel_for(std::int64_t(0), n_chunks, [&](std::int64_t ch) {
        double* b = buf.data() + ch * d;
        std::fill(b, b + d, 0.0);
        const std::int64_t lo = ch * kChunk, hi = std::min(n, lo + kChunk);
        for (std::int64_t i = lo; i < hi; i += hetglm::dense::kBlockRows) {
          const int rows = static_cast<int>(std::min<std::int64_t>(hetglm::dense::kBlockRows, hi - i));
          const float* xb = X.data() + i * d;
          double u[hetglm::dense::kBlockRows];
          hetglm::dense::dot_rows(xb, d, rows, p.data(), d, &xp[i]);
          for (int r = 0; r < rows; ++r) u[r] = curv[i + r] * xp[i + r];
          hetglm::dense::axpy_rows(u, xb, d, rows, b, d);
        }
      });
    });
    for (std::int64_t j = 0; j < d; ++j) {
      double t = 0;
      for (std::int64_t ch = 0; ch < n_chunks; ++ch) t += buf[ch * d + j];
      hp[j] = t;
    }
  };
  // Eigen, one row range per thread: xp = X p, then the range's X^T (D xp) into the thread's buffer.
  const std::int64_t per = (n + threads - 1) / threads;
  std::vector<float> pf(d), xpf(n);
  std::vector<Eigen::VectorXf> part_f(threads, Eigen::VectorXf::Zero(d));
  std::vector<Eigen::VectorXd> part_d(threads, Eigen::VectorXd::Zero(d));
  auto eigen_float = [&] {
    for (std::int64_t j = 0; j < d; ++j) pf[j] = static_cast<float>(p[j]);
    arena.execute([&] {
      tbb::parallel_for(0, threads, [&](int t) {
        const std::int64_t lo = std::min(n, t * per), hi = std::min(n, lo + per);
        Eigen::Map<const RowMajorF> Xb(X.data() + lo * d, hi - lo, d);
        Eigen::Map<Eigen::VectorXf> y(xpf.data() + lo, hi - lo);
        y.noalias() = Xb * Eigen::Map<const Eigen::VectorXf>(pf.data(), d);
        y.array() *= Eigen::Map<const Eigen::VectorXd>(curv.data() + lo, hi - lo).cast<float>().array();
        part_f[t].noalias() = Xb.transpose() * y;
      }, tbb::static_partitioner());
    });
    for (std::int64_t j = 0; j < d; ++j) {
      double s = 0;
      for (int t = 0; t < threads; ++t) s += part_f[t][j];
      hp[j] = s;
    }
  };
  auto eigen_double = [&] {
    arena.execute([&] {
      tbb::parallel_for(0, threads, [&](int t) {
        const std::int64_t lo = std::min(n, t * per), hi = std::min(n, lo + per);
        Eigen::Map<const RowMajorF> Xb(X.data() + lo * d, hi - lo, d);
        Eigen::Map<Eigen::VectorXd> y(xp.data() + lo, hi - lo);
        y.noalias() = Xb.cast<double>() * Eigen::Map<const Eigen::VectorXd>(p.data(), d);
        y.array() *= Eigen::Map<const Eigen::VectorXd>(curv.data() + lo, hi - lo).array();
        part_d[t].noalias() = Xb.transpose().cast<double>() * y;
      }, tbb::static_partitioner());
    });
    for (std::int64_t j = 0; j < d; ++j) {
      double s = 0;
      for (int t = 0; t < threads; ++t) s += part_d[t][j];
      hp[j] = s;
    }
  };
  std::vector<double> ref;
  const double t_engine = median_ms(reps, engine);
  ref = hp;
  const double t_ef = median_ms(reps, eigen_float);
  double err_f = 0, nrm = 0;
  for (std::int64_t j = 0; j < d; ++j) err_f = std::max(err_f, std::abs(hp[j] - ref[j])), nrm = std::max(nrm, std::abs(ref[j]));
  const double t_ed = median_ms(reps, eigen_double);
  double err_d = 0;
  for (std::int64_t j = 0; j < d; ++j) err_d = std::max(err_d, std::abs(hp[j] - ref[j]));
  const double gb = 4.0 * double(n) * double(d) / 1e9;
  std::printf("{\"rows\": %lld, \"cols\": %lld, \"threads\": %d, \"reps\": %d, \"simd\": \"%s\", "
              "\"engine_ms\": %.3f, \"eigen_float_ms\": %.3f, \"eigen_double_ms\": %.3f, "
              "\"engine_gbs\": %.2f, \"eigen_float_gbs\": %.2f, \"eigen_double_gbs\": %.2f, "
              "\"eigen_float_rel_err\": %.3e, \"eigen_double_rel_err\": %.3e}\n",
              static_cast<long long>(n), static_cast<long long>(d), threads, reps, Eigen::SimdInstructionSetsInUse(),
              t_engine, t_ef, t_ed, gb / (t_engine / 1e3), gb / (t_ef / 1e3), gb / (t_ed / 1e3), err_f / nrm,
              err_d / nrm);
  return 0;
}
