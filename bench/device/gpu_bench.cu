// SPDX-License-Identifier: Apache-2.0
// GPU check and benchmark of the CUDA backend for one device session (bench/device/run.sh, issue 5). Self-contained:
// built by nvcc from this file, backends/cuda/src/{cuda_backend.cpp,tpa_scd.cu} and header-only core headers (no
// TBB, fmt, zlib or CLI11, which the GPU machine lacks). Data is generated in memory. Model: L2 logistic regression
// in the dual (SDCA), lambda = 1/n; the certificate is the double sum of glm_math.h gap terms with v = A alpha
// recomputed on the host, the quantity of docs/conventions.md, "Tolerance: the relative duality gap".
//   1. correctness: the sequential kernel vs a host epoch in the same order (1e-5), async TPA-SCD to the host
//      optimum (relative primal within 1e-5);
//   2. bandwidth: device-to-device cudaMemcpy vs TPA-SCD epochs on dense and sparse data;
//   3. TPA-SCD vs a host multithreaded CD (std::thread, CoCoA+ over thread partitions, sigma' = threads) to gap 1e-4;
//   4. DuHL rounds (a minimal in-file round loop: host gaps, top-gap working set within the budget, device epochs,
//      host v = A alpha) at 25% budget vs 100% (fully resident) vs sequential streaming of 25% chunks.
// --cpu-only runs the host parts (data, host solvers, JSON/markdown) without touching CUDA.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/backends/cuda_backend.hpp"

using namespace hetglm;
using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Problem {
  std::string name;
  CsrMatrix X;  // rows = samples = dual coordinates
  std::vector<double> y, q;
  double lambda = 0;
};

static Problem generate(const std::string& name, index_t n, index_t d, double density, std::uint64_t seed) {
  Problem p;
  p.name = name;
  SplitMix64 rng(seed);
  auto unif = [&]() { return double(rng.next() >> 11) * (1.0 / 9007199254740992.0); };
  std::vector<double> wtrue(static_cast<std::size_t>(d));
  for (auto& w : wtrue) w = unif() * 2 - 1;
  p.X.n_rows = n;
  p.X.n_cols = d;
  p.X.offsets.assign(1, 0);
  for (index_t i = 0; i < n; ++i) {
    double z = 0, sq = 0;
    if (density >= 1) {
      for (index_t j = 0; j < d; ++j) {
        const float x = float((unif() * 2 - 1) / std::sqrt(double(d)));
        p.X.indices.push_back(j);
        p.X.values.push_back(x);
      }
    } else {
      const auto k = std::max<index_t>(1, index_t(density * d));
      const index_t start = index_t(unif() * double(d - k));
      for (index_t j = 0; j < k; ++j) {  // a random run of columns keeps indices sorted and distinct
        p.X.indices.push_back(start + j);
        p.X.values.push_back(float((unif() * 2 - 1) / std::sqrt(double(k))));
      }
    }
    for (auto o = p.X.offsets.back(); o < offset_t(p.X.values.size()); ++o) {
      z += double(p.X.values[o]) * wtrue[p.X.indices[o]];
      sq += double(p.X.values[o]) * p.X.values[o];
    }
    p.y.push_back(z + 0.1 * (unif() - 0.5) > 0 ? 1.0 : -1.0);
    p.q.push_back(sq);
    p.X.offsets.push_back(offset_t(p.X.values.size()));
  }
  p.lambda = 1.0 / double(n);
  for (auto& q : p.q) q /= p.lambda * double(n);
  return p;
}

// Host math (glm_math.h, the single copy).
static void shared_vector(const Problem& p, const std::vector<double>& a, std::vector<double>& v) {
  v.assign(std::size_t(p.X.n_cols), 0.0);
  for (index_t i = 0; i < p.X.n_rows; ++i)
    for (auto o = p.X.offsets[i]; o < p.X.offsets[i + 1]; ++o) v[p.X.indices[o]] += a[i] * double(p.X.values[o]);
}
static double dot(const Problem& p, index_t i, const double* v) {
  double s = 0;
  for (auto o = p.X.offsets[i]; o < p.X.offsets[i + 1]; ++o) s += double(p.X.values[o]) * v[p.X.indices[o]];
  return s;
}
static void gaps(const Problem& p, const std::vector<double>& a, const std::vector<double>& v, std::vector<double>& g) {
  const double inv_ln = 1.0 / (p.lambda * double(p.X.n_rows)), inv_n = 1.0 / double(p.X.n_rows);
  g.resize(std::size_t(p.X.n_rows));
  const unsigned T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (unsigned t = 0; t < T; ++t)
    th.emplace_back([&, t] {
      for (index_t i = index_t(t); i < p.X.n_rows; i += index_t(T))
        g[i] = hetglm_dual_gap_d(HETGLM_LOSS_LOGISTIC, p.y[i], a[i], dot(p, i, v.data()) * inv_ln, 1.0) * inv_n;
    });
  for (auto& x : th) x.join();
}
static double rel_gap(const Problem& p, const std::vector<double>& a, double* primal = nullptr) {
  std::vector<double> v, g;
  shared_vector(p, a, v);
  gaps(p, a, v, g);
  const double gap = std::accumulate(g.begin(), g.end(), 0.0);
  double P = 0;
  const double inv_ln = 1.0 / (p.lambda * double(p.X.n_rows));
  for (index_t i = 0; i < p.X.n_rows; ++i) P += hetglm_loss_value_d(HETGLM_LOSS_LOGISTIC, p.y[i], dot(p, i, v.data()) * inv_ln, 1.0);
  double ww = 0;
  for (double x : v) ww += x * inv_ln * x * inv_ln;
  P = P / double(p.X.n_rows) + 0.5 * p.lambda * ww;
  if (primal) *primal = P;
  return gap / std::fabs(P);
}
/// Host epoch over `ws` positions in epoch_order, sigma' scaling (CoCoA+ local solver).
static void host_epoch(const Problem& p, const std::vector<index_t>& ws, std::vector<double>& a, std::vector<double>& v,
                       std::uint64_t seed, int e, double sigma) {
  const double inv_ln = 1.0 / (p.lambda * double(p.X.n_rows));
  for (std::int32_t pos : epoch_order(ws.size(), seed, e)) {
    const index_t i = ws[std::size_t(pos)];
    const double an = hetglm_dual_step_d(HETGLM_LOSS_LOGISTIC, p.y[i], a[i], dot(p, i, v.data()) * inv_ln, sigma * p.q[i], 1.0);
    const double d = an - a[i];
    if (d == 0) continue;
    a[i] = an;
    for (auto o = p.X.offsets[i]; o < p.X.offsets[i + 1]; ++o) v[p.X.indices[o]] += sigma * d * double(p.X.values[o]);
  }
}
/// Host multithreaded CD: T threads, each a CoCoA+ local epoch on its partition with sigma' = T, then v = sum.
static double host_parallel(const Problem& p, double tol, int max_epochs, int* epochs_out, std::vector<double>& a) {
  const unsigned T = std::max(1u, std::thread::hardware_concurrency());
  const auto n = p.X.n_rows;
  a.assign(std::size_t(n), 0.0);
  std::vector<double> v(std::size_t(p.X.n_cols), 0.0);
  std::vector<std::vector<index_t>> part(T);
  for (index_t i = 0; i < n; ++i) part[std::size_t(i) % T].push_back(i);
  const auto t0 = Clock::now();
  int e = 0;
  for (; e < max_epochs; ++e) {
    std::vector<std::vector<double>> dv(T);
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; ++t)
      th.emplace_back([&, t] {
        std::vector<double> local = v;
        host_epoch(p, part[t], a, local, 1000 + e, int(t), double(T));
        dv[t] = std::move(local);
      });
    for (auto& x : th) x.join();
    // CoCoA+ adding: v = A alpha with every partition's new alpha, recomputed exactly (honest certificate).
    shared_vector(p, a, v);
    if (rel_gap(p, a) <= tol) { ++e; break; }
  }
  *epochs_out = e;
  return since(t0);
}

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_)); std::exit(1); } } while (0)

static double copy_bandwidth() {
  const std::size_t bytes = std::size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    CK(cudaEventRecord(e0));
    CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaFree(a);
  cudaFree(b);
  return 2.0 * double(bytes) / (ms[ms.size() / 2] * 1e-3) / 1e9;  // GB/s, bytes read + written
}

static ObjectiveDesc describe(const Problem& p, std::vector<double>& ones) {
  ones.assign(std::size_t(p.X.n_rows), 1.0);
  ObjectiveDesc d;
  d.formulation = HETGLM_FORM_DUAL;
  d.loss = HETGLM_LOSS_LOGISTIC;
  d.lambda = p.lambda;
  d.n = p.X.n_rows;
  d.n_coords = p.X.n_rows;
  d.dim = p.X.n_cols;
  d.coord_labels = p.y.data();
  d.coord_weights = ones.data();
  d.coord_curvature = p.q.data();
  return d;
}

struct DuhlRun { double seconds = 0, rel_gap = 0; int rounds = 0; std::size_t swaps = 0; };
/// Minimal DuHL loop: budget fraction `frac` of the data bytes; streaming = consecutive chunks instead of top gaps.
static DuhlRun duhl(const Problem& p, double frac, bool streaming, double tol, int max_rounds, int epochs_per_round) {
  std::size_t total = 0;
  for (index_t i = 0; i < p.X.n_rows; ++i) total += column_bytes(p.X, i);
  BackendOptions bo;
  bo.memory_budget = std::size_t(std::ceil(frac * double(total)));
  auto be = cuda::make_cuda_backend(bo);
  std::vector<double> ones;
  be->bind(describe(p, ones));
  std::vector<double> a(std::size_t(p.X.n_rows), 0.0), v(std::size_t(p.X.n_cols), 0.0), g;
  DuhlRun r;
  const auto t0 = Clock::now();
  index_t cursor = 0;
  for (int round = 0; round < max_rounds; ++round) {
    std::vector<index_t> ws;
    std::size_t used = 0;
    if (streaming || frac >= 1) {
      for (index_t k = 0; k < p.X.n_rows; ++k) {
        const index_t i = (cursor + k) % p.X.n_rows;
        if (used + column_bytes(p.X, i) > bo.memory_budget) break;
        used += column_bytes(p.X, i);
        ws.push_back(i);
      }
      cursor = (cursor + index_t(ws.size())) % p.X.n_rows;
    } else {
      gaps(p, a, v, g);
      std::vector<index_t> ord(std::size_t(p.X.n_rows));
      std::iota(ord.begin(), ord.end(), 0);
      std::sort(ord.begin(), ord.end(), [&](index_t x, index_t y) { return g[x] > g[y]; });
      for (index_t i : ord) {
        if (used + column_bytes(p.X, i) > bo.memory_budget) continue;
        used += column_bytes(p.X, i);
        ws.push_back(i);
      }
      std::sort(ws.begin(), ws.end());
    }
    std::vector<double> aws;
    for (index_t i : ws) aws.push_back(a[i]);
    r.swaps += be->load_working_set(ws, p.X, aws).columns_copied;
    be->set_shared_vector(v);
    be->run_epochs(epochs_per_round, 77 + std::uint64_t(round), 1.0);
    be->get_alpha(aws);
    for (std::size_t k = 0; k < ws.size(); ++k) a[ws[k]] = aws[k];
    shared_vector(p, a, v);
    ++r.rounds;
    if (round % 4 == 3 || frac >= 1) {
      r.rel_gap = rel_gap(p, a);
      if (r.rel_gap <= tol) break;
    }
  }
  r.seconds = since(t0);
  return r;
}

int main(int argc, char** argv) {
  bool cpu_only = false;
  std::string out = ".";
  double scale = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--cpu-only" || s == "--dry-run") cpu_only = true;
    else if (s == "--out" && i + 1 < argc) out = argv[++i];
    else if (s == "--scale" && i + 1 < argc) scale = std::atof(argv[++i]);
  }
  std::string json = "{\n", md = "| check | result |\n| --- | --- |\n";
  auto row = [&](const std::string& k, const std::string& v) {
    json += "  \"" + k + "\": \"" + v + "\",\n";
    md += "| " + k + " | " + v + " |\n";
    std::printf("%-48s %s\n", k.c_str(), v.c_str());
    std::fflush(stdout);
  };
  char buf[256];
  const auto n_sparse = index_t(2000000 * scale), n_dense = index_t(200000 * scale);
  Problem sparse = generate("sparse", n_sparse, 1000000, 50.0 / 1e6, 1);
  Problem dense = generate("dense", n_dense, 1000, 1.0, 2);
  Problem small = generate("small", 5000, 500, 0.05, 3);
  std::snprintf(buf, sizeof buf, "sparse %d x %d (%lld nnz), dense %d x %d", sparse.X.n_rows, sparse.X.n_cols,
                (long long)sparse.X.nnz(), dense.X.n_rows, dense.X.n_cols);
  row("data", buf);
  // Host reference optimum of the small problem.
  std::vector<double> a_ref(5000, 0.0), v_ref(500, 0.0), all(5000);
  std::iota(all.begin(), all.end(), 0);
  std::vector<index_t> ws_all(all.begin(), all.end());
  for (int e = 0; e < 400; ++e) host_epoch(small, ws_all, a_ref, v_ref, 5, e, 1.0);
  double P_ref = 0;
  std::snprintf(buf, sizeof buf, "%.3g", rel_gap(small, a_ref, &P_ref));
  row("host sequential reference rel gap (small)", buf);
  int cpu_epochs = 0;
  std::vector<double> a_cpu;
  const double cpu_s = host_parallel(cpu_only ? small : sparse, 1e-4, 200, &cpu_epochs, a_cpu);
  std::snprintf(buf, sizeof buf, "%.3f s, %d epochs, %u threads", cpu_s, cpu_epochs, std::max(1u, std::thread::hardware_concurrency()));
  row(cpu_only ? "host parallel CD to gap 1e-4 (small)" : "host parallel CD to gap 1e-4 (sparse)", buf);
  if (!cpu_only) {
    const cuda::DeviceProbe pr = cuda::probe();
    if (pr.count == 0) { std::fprintf(stderr, "no CUDA device: %s\n", pr.reason.c_str()); return 1; }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    row("device", std::string(prop.name) + " sm_" + std::to_string(prop.major) + std::to_string(prop.minor));
    // 1. correctness: sequential kernel vs host epoch; async to the host optimum.
    {
      cuda::CudaOptions co;
      co.sequential = true;
      auto be = cuda::make_cuda_backend({}, co);
      std::vector<double> ones, a(5000, 0.0), v(500, 0.0), got(5000);
      be->bind(describe(small, ones));
      be->load_working_set(ws_all, small.X, a);
      be->set_shared_vector(v);
      be->run_epochs(1, 9, 1.0);
      host_epoch(small, ws_all, a, v, 9, 0, 1.0);
      be->get_alpha(got);
      double err = 0;
      for (int i = 0; i < 5000; ++i) err = std::max(err, std::fabs(got[i] - a[i]));
      std::snprintf(buf, sizeof buf, "max |alpha - host| = %.2e (%s)", err, err <= 1e-5 ? "PASS" : "FAIL");
      row("sequential kernel vs host epoch", buf);
      const DuhlRun r = duhl(small, 1.0, false, 1e-7, 300, 1);
      std::snprintf(buf, sizeof buf, "rel gap %.2e after %d epochs", r.rel_gap, r.rounds);
      row("async TPA-SCD certificate (small)", buf);
    }
    // 2. bandwidth.
    const double bw = copy_bandwidth();
    std::snprintf(buf, sizeof buf, "%.0f GB/s", bw);
    row("device-to-device copy bandwidth", buf);
    for (Problem* p : {&dense, &sparse}) {
      auto be = cuda::make_cuda_backend({});
      std::vector<double> ones, a(std::size_t(p->X.n_rows), 0.0), v(std::size_t(p->X.n_cols), 0.0);
      std::vector<index_t> ws(std::size_t(p->X.n_rows));
      std::iota(ws.begin(), ws.end(), 0);
      be->bind(describe(*p, ones));
      be->load_working_set(ws, p->X, a);
      be->set_shared_vector(v);
      be->run_epochs(1, 1, 1.0);  // warm-up
      std::vector<double> t;
      for (int r = 0; r < 5; ++r) t.push_back(be->run_epochs(1, 2 + r, 1.0).seconds);
      std::sort(t.begin(), t.end());
      // Bytes: each nonzero's value and index read twice (dot, axpy), v read once and atomically updated once.
      const double bytes = double(p->X.nnz()) * (8.0 * 2 + 4.0 + 8.0);
      std::snprintf(buf, sizeof buf, "%.3f ms, %.0f GB/s = %.0f%% of copy", t[2] * 1e3, bytes / t[2] / 1e9, 100 * bytes / t[2] / 1e9 / bw);
      row("epoch " + p->name, buf);
    }
    // 3. TPA-SCD to gap 1e-4 vs the host parallel CD.
    {
      const DuhlRun r = duhl(sparse, 1.0, false, 1e-4, 200, 1);
      std::snprintf(buf, sizeof buf, "%.3f s, %d epochs, rel gap %.2e, speedup %.1fx", r.seconds, r.rounds, r.rel_gap, cpu_s / r.seconds);
      row("TPA-SCD to gap 1e-4 (sparse)", buf);
    }
    // 4. DuHL 25% vs resident vs streaming, on the sparse data to gap 1e-3 (bounded rounds).
    const DuhlRun full = duhl(sparse, 1.0, false, 1e-3, 200, 1);
    const DuhlRun d25 = duhl(sparse, 0.25, false, 1e-3, 800, 4);
    const DuhlRun st = duhl(sparse, 0.25, true, 1e-3, 800, 4);
    for (auto [k, r] : {std::pair{"fully resident", full}, {"DuHL 25%", d25}, {"streaming 25%", st}}) {
      std::snprintf(buf, sizeof buf, "%.3f s, %d rounds, %zu swaps, rel gap %.2e", r.seconds, r.rounds, r.swaps, r.rel_gap);
      row(std::string("to gap 1e-3: ") + k, buf);
    }
  }
  json += "  \"mode\": \"" + std::string(cpu_only ? "cpu-only" : "gpu") + "\"\n}\n";
  for (auto [name, text] : {std::pair{"/gpu_bench.json", &json}, {"/gpu_bench.md", &md}}) {
    FILE* f = std::fopen((out + name).c_str(), "w");
    if (f) { std::fputs(text->c_str(), f); std::fclose(f); }
  }
  std::printf("\n%s", md.c_str());
  return 0;
}
