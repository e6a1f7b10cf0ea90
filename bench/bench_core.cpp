// SPDX-License-Identifier: Apache-2.0
// Google Benchmark micro-benchmarks of the core engine: libsvm parse throughput, one SDCA epoch per loss
// (sequential solver, including its exact gap pass), model formatting. Run: build/bin/bench_core
#include <benchmark/benchmark.h>

#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "hetglm/solvers/train.hpp"

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
  o.model = model;
  o.max_epochs = 10;
  o.tol = 1e-15;
  for (auto _ : st) benchmark::DoNotOptimize(train(d, o));
  st.counters["epochs_per_s"] = benchmark::Counter(10, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Epochs, a9a_logistic, "a9a", "logistic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, a9a_svm, "a9a", "svm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, a9a_squared_hinge, "a9a", "squared-hinge")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Epochs, w7a_svm, "w7a", "svm")->Unit(benchmark::kMillisecond);

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
