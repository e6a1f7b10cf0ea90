// SPDX-License-Identifier: Apache-2.0
// Google Benchmark micro-benchmarks of the core engine: libsvm parse throughput (MB/s), coordinate steps per
// second per loss (DualForm / PrimalForm::coordinate_step, the SDCA and primal CD inner loop), the exact gap
// pass (Form::certificate), ten epochs of train() per loss, one epoch of the sequential solver vs SySCD at 1, 2
// and 4 threads (when the parallel CPU solver is compiled in), model formatting and model file write.
// Run: build-bench/bin/bench_core [--benchmark_filter=REGEX]
#include <benchmark/benchmark.h>

#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unistd.h>

#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/forms.hpp"
#include "hetglm/train.hpp"
#if __has_include("hetglm/solvers/parallel_cpu.hpp")
#include "hetglm/solvers/parallel_cpu.hpp"
#define HETGLM_BENCH_HAVE_PARALLEL 1
#endif

using namespace hetglm;

namespace {
std::string path(const char* name) { return std::string(HETGLM_DATA_DIR) + "/" + name; }

void BM_ParseLibsvm(benchmark::State& st, const char* name) {
  const std::string text = read_file(path(name));
  LibsvmOptions o;
  o.n_threads = static_cast<int>(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(parse_libsvm(text, name, o));
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK_CAPTURE(BM_ParseLibsvm, a9a, "a9a")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ParseLibsvm, w7a, "w7a")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Ten epochs of the sequential solver (each with its exact certificate), reported per epoch.
void BM_Epochs(benchmark::State& st, const char* name, const char* model) {
  const Dataset d = read_libsvm(path(name));
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;  // the sequential reference (the library default is auto)
  o.problem.model = model_spec(model);
  o.solver.max_epochs = 10;
  o.solver.tol = 1e-15;
  for (auto _ : st) benchmark::DoNotOptimize(train(d, o));
  st.counters["epochs_per_s"] = benchmark::Counter(10, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Epochs, a9a_logistic, "a9a", "logistic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, a9a_svm, "a9a", "svm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, a9a_squared_hinge, "a9a", "squared-hinge")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, w7a_svm, "w7a", "svm")->Unit(benchmark::kMillisecond);

// Coordinate steps per second: the inner loop (u_i, closed-form or Newton step, v update) over one random
// permutation of all coordinates, sigma' = 1, on a9a (dual: 32,561 samples; primal: 123 features).
template <class Form>
void run_steps(benchmark::State& st, const Form& form) {
  const index_t m = form.n_coords();
  std::vector<double> alpha(static_cast<std::size_t>(m), 0.0), v(static_cast<std::size_t>(form.dim()), 0.0);
  std::vector<index_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), index_t{0});
  SplitMix64 rng(1);
  shuffle(std::span<index_t>(order), rng);
  const CsrMatrix& A = *form.A;
  for (auto _ : st) {
    for (index_t i : order) {
      const double a = form.coordinate_step(i, alpha[i], v.data(), 1.0);
      const double delta = a - alpha[i];
      if (delta == 0) continue;
      alpha[i] = a;
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) v[A.indices[k]] += delta * double(A.values[k]);
    }
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(st.iterations() * m);
  st.counters["nnz_per_s"] = benchmark::Counter(static_cast<double>(A.nnz()), benchmark::Counter::kIsIterationInvariantRate);
}

struct A9a {
  Dataset d = read_libsvm(path("a9a"));
  std::vector<double> y, c;
  ProblemData pd;
  CsrMatrix Xt;
  A9a() {
    const double pos = *std::max_element(d.y.begin(), d.y.end());
    for (double t : d.y) y.push_back(t == pos ? 1.0 : -1.0);
    c.assign(y.size(), 1.0);
    pd.X = &d.X;
    Xt = transpose(d.X);
    pd.Xt = &Xt;
    pd.row_sq_norm = row_sq_norms(d.X);
  }
  double lambda() const { return 1.0 / d.X.n_rows; }
};
const A9a& a9a() {
  static const A9a data;
  return data;
}

template <Loss L>
void BM_DualSteps(benchmark::State& st) {
  const A9a& p = a9a();
  run_steps(st, DualForm<L>(p.pd, p.y.data(), p.c.data(), p.lambda()));
}
BENCHMARK(BM_DualSteps<Loss::logistic>)->Name("BM_CoordinateSteps/a9a_dual_logistic")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DualSteps<Loss::hinge>)->Name("BM_CoordinateSteps/a9a_dual_hinge")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DualSteps<Loss::squared_hinge>)->Name("BM_CoordinateSteps/a9a_dual_squared_hinge")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DualSteps<Loss::squared>)->Name("BM_CoordinateSteps/a9a_dual_squared")->Unit(benchmark::kMillisecond);

template <Loss L, Penalty P>
void BM_PrimalSteps(benchmark::State& st) {
  const A9a& p = a9a();
  run_steps(st, PrimalForm<L, P>(p.pd, p.y.data(), p.c.data(), 1e-3, 0.5));
}
BENCHMARK(BM_PrimalSteps<Loss::squared, Penalty::l2>)->Name("BM_CoordinateSteps/a9a_primal_ridge")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrimalSteps<Loss::squared, Penalty::l1>)->Name("BM_CoordinateSteps/a9a_primal_lasso")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrimalSteps<Loss::squared, Penalty::elastic_net>)->Name("BM_CoordinateSteps/a9a_primal_elastic_net")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrimalSteps<Loss::logistic, Penalty::l1>)->Name("BM_CoordinateSteps/a9a_primal_l1_logistic")->Unit(benchmark::kMillisecond);

// The exact gap pass: v = A alpha recomputed, then Form::certificate (every epoch of every solver ends with it).
void BM_GapPass(benchmark::State& st) {
  const A9a& p = a9a();
  DualForm<Loss::logistic> form(p.pd, p.y.data(), p.c.data(), p.lambda());
  std::vector<double> alpha(p.y.size());
  for (std::size_t i = 0; i < alpha.size(); ++i) alpha[i] = 0.5;  // interior point of the logistic box
  for (auto _ : st) {
    const std::vector<double> v = shared_vector(form, std::span<const double>(alpha));
    benchmark::DoNotOptimize(certificate(form, alpha, v));
  }
  st.SetItemsProcessed(st.iterations() * static_cast<int64_t>(alpha.size()));
}
BENCHMARK(BM_GapPass)->Unit(benchmark::kMillisecond);

#ifdef HETGLM_BENCH_HAVE_PARALLEL
void BM_ParallelGapPass(benchmark::State& st) {
  const A9a& p = a9a();
  DualForm<Loss::logistic> form(p.pd, p.y.data(), p.c.data(), p.lambda());
  std::vector<double> alpha(p.y.size(), 0.5);
  const std::vector<double> v = shared_vector(form, std::span<const double>(alpha));
  tbb::task_arena arena(static_cast<int>(st.range(0)));
  for (auto _ : st)
    arena.execute([&] { benchmark::DoNotOptimize(parallel_certificate(form, alpha, v)); });
  st.SetItemsProcessed(st.iterations() * static_cast<int64_t>(alpha.size()));
}
BENCHMARK(BM_ParallelGapPass)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
#endif

// One epoch (plus its gap pass) of train(): sequential (solver 0) vs SySCD (solver 1) at range(1) threads.
// Ten epochs per iteration at an unreachable tolerance, reported per epoch (epochs_per_s).
void BM_Epoch(benchmark::State& st, const char* name, const char* model) {
  const Dataset d = read_libsvm(path(name));
  TrainOptions o;
  o.problem.model = model_spec(model);
  o.solver.max_epochs = 10;
  o.solver.tol = 1e-15;
#ifdef HETGLM_BENCH_HAVE_PARALLEL
  o.solver.solver = st.range(0) == 0 ? SolverKind::sequential : SolverKind::syscd;
  o.solver.n_threads = static_cast<int>(st.range(1));
#else
  if (st.range(0) != 0) {
    st.SkipWithError("the parallel CPU solver is not compiled in");
    return;
  }
#endif
  for (auto _ : st) benchmark::DoNotOptimize(train(d, o));
  st.counters["epochs_per_s"] = benchmark::Counter(10, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Epoch, a9a_logistic, "a9a", "logistic")
    ->ArgNames({"syscd", "threads"})->Args({0, 1})->Args({1, 1})->Args({1, 2})->Args({1, 4})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Epoch, w7a_svm, "w7a", "svm")
    ->ArgNames({"syscd", "threads"})->Args({0, 1})->Args({1, 1})->Args({1, 2})->Args({1, 4})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// Model file write (format + atomic write with fsync) of a 2^20-feature model.
void BM_WriteModel(benchmark::State& st) {
  LinearModel m;
  m.solver_type = "L2R_LR_DUAL";
  m.labels = {1, -1};
  m.nr_feature = static_cast<index_t>(st.range(0));
  m.model = "logistic";
  m.lambda = 1e-4;
  m.formulation = "dual";
  m.primal = m.dual = m.gap = {0.1};
  m.w.assign(static_cast<std::size_t>(st.range(0)), 0.123456789);
  const std::string out = "/tmp/hetglm_bench_model_" + std::to_string(::getpid());
  int64_t bytes = 0;
  for (auto _ : st) {
    const std::string text = format_model(m);
    write_file_atomic(out, text);
    bytes = static_cast<int64_t>(text.size());
  }
  std::remove(out.c_str());
  st.SetBytesProcessed(st.iterations() * bytes);
}
BENCHMARK(BM_WriteModel)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FormatModel(benchmark::State& st) {
  LinearModel m;
  m.solver_type = "L2R_LR_DUAL";
  m.labels = {1, -1};
  m.nr_feature = static_cast<index_t>(st.range(0));
  m.model = "logistic";
  m.lambda = 1e-4;
  m.formulation = "dual";
  m.primal = m.dual = m.gap = {0.1};
  m.w.assign(static_cast<std::size_t>(st.range(0)), 0.123456789);
  for (auto _ : st) benchmark::DoNotOptimize(format_model(m));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_FormatModel)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
