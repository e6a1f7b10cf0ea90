// SPDX-License-Identifier: Apache-2.0
// hetglm-gpu-bench: the GPU machine's measurements (bench/device/run.sh, docs/cuda.md "The GPU check script"),
// through the engine's own code: the libsvm reader, make_backend("cuda") (or the cpu stand-in with --device cpu),
// the real DuHL scheduler solve_duhl (solvers/src/duhl.cpp) and train() for the CPU solver. Model: L2 logistic
// regression in the dual at C = 1 (lambda = 1/n), the objective of docs/conventions.md; every time is to the exact
// relative duality gap --tol, computed by the scheduler in double.
//
//   hetglm-gpu-bench DATA --device cuda|cpu --out FILE.json [--name NAME] [--tol 1e-4] [--threads 16]
//                    [--runs duhl25,solve25,full,stream25,cpu] [--max-epochs N] [--time-limit S] [--bandwidth]
//                    [--npy DIR] [--tpa-concurrency N]
//
// Runs (each its own backend, so a run starts cold):
//   duhl25   DuHL at a 25% budget, --cpu-role gaps (as published)      solve25  the same, --cpu-role solve
//   full     the accelerator holds all data (100%, loaded once)        stream25 sequential streaming of 25% chunks
//   cpu      train() with the CPU solver (syscd) on --threads threads
// --bandwidth: seconds per epoch of the accelerator with all data resident (after one warm-up epoch), the data rate
// nnz x 8 bytes / epoch time, against a timed device-to-device copy (cuda::time_device_copy; read + write bytes).
// --npy DIR: the data as NumPy arrays (indptr int64, indices int32, data float32, y float64) for snapml_bench.py.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hetglm/backends/registry.hpp"
#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/solvers/dispatch.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/train.hpp"
#if defined(HETGLM_WITH_CUDA)
#include "hetglm/backends/cuda_backend.hpp"
#endif

using namespace hetglm;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// A .npy file (format 1.0) of a little-endian 1-D array.
template <class T>
void write_npy(const std::string& path, const T* data, std::size_t n, const char* descr) {
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}", descr, n);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
  if (!f) throw IoError(fmt::format("{}: cannot write", path));
}

json certificate_json(const Certificate& c) {
  return {{"primal", c.primal}, {"dual", c.dual}, {"gap", c.gap}, {"rel_gap", relative_gap(c)}};
}

/// Seconds until the first exact certificate at or below tol (NaN when none was).
double time_to_tol(const std::vector<EpochRecord>& h, double tol) {
  for (const EpochRecord& r : h)
    if (r.rel_gap <= tol) return r.seconds;
  return std::nan("");
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_path, device = "cuda", out_path, name, runs = "duhl25,solve25,full,stream25,cpu", npy_dir;
  double tol = 1e-4, time_limit = 60;
  int threads = 16, max_epochs = 500;
  bool bandwidth = false;
  long tpa_concurrency = 0;
  CLI::App app{"hetglm-gpu-bench: DuHL / TPA-SCD measurements through the engine (bench/device/run.sh)"};
  app.add_option("DATA", data_path, "libsvm file (binary labels)")->required();
  app.add_option("--device", device, "cuda | cpu (the cpu stand-in, for --cpu-only)");
  app.add_option("--out", out_path, "JSON results")->required();
  app.add_option("--name", name, "data set name in the results (default: the file name)");
  app.add_option("--tol", tol, "relative duality gap");
  app.add_option("--threads", threads, "CPU threads (reader, DuHL's CPU side, the CPU solver)");
  app.add_option("--runs", runs, "comma-separated: duhl25, solve25, full, stream25, cpu");
  app.add_option("--max-epochs", max_epochs, "epoch budget of every run (DuHL: passes over the data)");
  app.add_option("--time-limit", time_limit, "seconds per run; the run stops after the epoch that crosses it");
  app.add_option("--tpa-concurrency", tpa_concurrency,
                 "BackendOptions::tpa_concurrency (cpu: emulate the CUDA wave schedule with N in flight)");
  app.add_flag("--bandwidth", bandwidth, "time accelerator epochs against a device-to-device copy");
  app.add_option("--npy", npy_dir, "write the data as NumPy arrays into this folder (snapml_bench.py)");
  CLI11_PARSE(app, argc, argv);
  if (name.empty()) name = data_path.substr(data_path.find_last_of('/') + 1);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::task_arena arena(std::min(threads, cores));

  json res;
  res["data"] = name;
  res["device"] = device;
  res["tol"] = tol;
  res["threads"] = threads;
  res["model"] = "logistic, dual, C = 1";
  try {
    // Load (the engine's parallel reader).
    auto t0 = Clock::now();
    LibsvmOptions lo;
    lo.n_threads = threads;
    Dataset ds = arena.execute([&] { return read_libsvm(data_path, lo); });
    const double load_s = since(t0);
    const CsrMatrix& X = ds.X;
    double ymax = ds.y.empty() ? 0 : ds.y[0];
    for (double y : ds.y) ymax = std::max(ymax, y);
    std::vector<double> y(ds.y.size()), c(ds.y.size(), 1.0);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = ds.y[i] == ymax ? 1.0 : -1.0;
    const std::size_t total = data_bytes(X);
    res["rows"] = X.n_rows;
    res["cols"] = X.n_cols;
    res["nnz"] = X.nnz();
    res["device_bytes"] = total;
    res["load_seconds"] = load_s;
    std::printf("%s: %d x %d, %lld nonzeros, %.2f GB in the device format, loaded in %.2f s\n", name.c_str(),
                X.n_rows, X.n_cols, static_cast<long long>(X.nnz()), double(total) / 1e9, load_s);
    std::fflush(stdout);
    if (!npy_dir.empty()) {
      t0 = Clock::now();
      write_npy(npy_dir + "/indptr.npy", X.offsets.data(), X.offsets.size(), "<i8");
      write_npy(npy_dir + "/indices.npy", X.indices.data(), X.indices.size(), "<i4");
      write_npy(npy_dir + "/data.npy", X.values.data(), X.values.size(), "<f4");
      write_npy(npy_dir + "/y.npy", y.data(), y.size(), "<f8");
      std::ofstream(npy_dir + "/shape.txt") << X.n_rows << " " << X.n_cols << "\n";
      std::printf("  numpy arrays in %s (%.1f s)\n", npy_dir.c_str(), since(t0));
    }

    ProblemData pd;
    pd.X = &X;
    pd.row_sq_norm = row_sq_norms(X);
    const double lambda = 1.0 / double(X.n_rows);
    const ModelSpec spec = model_spec("logistic");

    if (bandwidth) {
      json bw;
#if defined(HETGLM_WITH_CUDA)
      if (device == "cuda") {
        const std::size_t bytes = std::min<std::size_t>(std::size_t(4) << 30, std::max<std::size_t>(total, std::size_t(256) << 20));
        const double s = cuda::time_device_copy(bytes, 10);
        bw["copy_bytes"] = bytes;
        bw["copy_seconds"] = s;
        bw["copy_gbps"] = 2.0 * double(bytes) / s / 1e9;  // read + write
      }
#endif
      with_form(spec, Formulation::dual, [&]<class Form>() {
        if constexpr (Form::formulation == Formulation::dual) {
          const Form form(pd, y.data(), c.data(), lambda);
          BackendOptions bo;
          bo.tpa_concurrency = tpa_concurrency;
          auto be = make_backend(device, bo);
          std::vector<double> curv;
          be->bind(describe_objective(form, curv));
          std::vector<index_t> ws(static_cast<std::size_t>(X.n_rows));
          for (index_t i = 0; i < X.n_rows; ++i) ws[static_cast<std::size_t>(i)] = i;
          auto tl = Clock::now();
          be->load_working_set(ws, X, std::vector<double>(ws.size(), 0.0));
          be->set_shared_vector(std::vector<double>(static_cast<std::size_t>(X.n_cols), 0.0));
          be->run_epochs(1, 1, 1.0);  // warm-up: waits for the copies, plans the waves
          bw["load_and_first_epoch_seconds"] = since(tl);
          const int reps = 5;
          const EpochReport er = be->run_epochs(reps, 2, 1.0);
          const double epoch_s = er.seconds / reps;
          bw["epoch_seconds"] = epoch_s;
          bw["nnz_bytes_per_epoch"] = double(X.nnz()) * 8;
          bw["epoch_data_gbps"] = double(X.nnz()) * 8 / epoch_s / 1e9;
          bw["accelerator"] = be->description();
          if (bw.contains("copy_gbps")) bw["epoch_share_of_copy"] = bw["epoch_data_gbps"].get<double>() / bw["copy_gbps"].get<double>();
          std::printf("  epoch %.3g ms: %.1f GB/s of nonzeros (%s)%s\n", epoch_s * 1e3, bw["epoch_data_gbps"].get<double>(),
                      be->description().c_str(),
                      bw.contains("copy_gbps") ? fmt::format("; device copy {:.0f} GB/s", bw["copy_gbps"].get<double>()).c_str() : "");
        }
        return 0;
      });
      res["bandwidth"] = bw;
      std::fflush(stdout);
    }

    json jruns = json::array();
    std::stringstream ss(runs);
    for (std::string run; std::getline(ss, run, ',');) {
      json jr;
      jr["run"] = run;
      SolverOptions so;
      so.tol = tol;
      so.max_epochs = max_epochs;
      so.seed = 1;
      so.n_threads = threads;
      const auto start = Clock::now();
      so.should_stop = [&] { return since(start) > time_limit; };
      try {
        if (run == "cpu") {
          TrainOptions to;
          to.problem.C = 1.0;
          to.problem.formulation = FormulationRequest::dual;
          to.solver = so;
          to.solver.solver = SolverKind::syscd;
          const TrainResult tr = arena.execute([&] { return train(ds, to); });
          const ColumnReport& col = tr.columns.at(0);
          jr["seconds"] = col.seconds;
          jr["epochs"] = col.epochs;
          jr["converged"] = col.converged;
          jr["certificate"] = certificate_json(col.certificate);
          jr["seconds_to_tol"] = time_to_tol(col.history, tol);
          jr["solver"] = fmt::format("syscd, {} threads", threads);
        } else {
          DuhlOptions o;
          std::string budget = "25%";
          if (run == "duhl25") o.cpu_role = CpuRole::gaps;
          else if (run == "solve25") o.cpu_role = CpuRole::solve;
          else if (run == "full") budget = "100%";
          else if (run == "stream25") o.selection = Selection::streaming;
          else throw InvalidArgument(fmt::format("--runs: unknown run '{}'", run));
          BackendOptions bo;
          bo.memory_budget = parse_memory_size(budget, total);
          bo.tpa_concurrency = tpa_concurrency;
          auto be = make_backend(device, bo);
          const DuhlResult r = with_form(spec, Formulation::dual, [&]<class Form>() -> DuhlResult {
            if constexpr (Form::formulation == Formulation::dual) {
              const Form form(pd, y.data(), c.data(), lambda);
              return arena.execute([&] { return solve_duhl(form, *be, so, o); });
            } else {
              return {};
            }
          });
          std::size_t swaps = 0, bytes = 0;
          double accel_s = 0;
          for (const DuhlRound& rd : r.rounds) {
            swaps += rd.swaps;
            bytes += rd.bytes_copied;
            accel_s += rd.accel_seconds;
          }
          jr["budget"] = budget;
          jr["cpu_role"] = cpu_role_name(o.cpu_role);
          jr["selection"] = selection_name(o.selection);
          jr["seconds"] = r.seconds;
          jr["rounds"] = r.rounds.size();
          jr["converged"] = r.converged;
          jr["certificate"] = certificate_json(r.certificate);
          jr["seconds_to_tol"] = time_to_tol(r.history, tol);
          jr["swaps"] = swaps;
          jr["bytes_copied"] = bytes;
          jr["accel_seconds"] = accel_s;
          jr["accelerator"] = be->description();  // after the run: the wave schedule it planned
        }
      } catch (const std::exception& e) {
        jr["error"] = e.what();
      }
      jr["wall_seconds"] = since(start);
      if (jr.contains("error")) {
        std::printf("  %-9s error: %s\n", run.c_str(), jr["error"].get<std::string>().c_str());
      } else {
        std::printf("  %-9s %7.2f s, %s, rel gap %.3g%s\n", run.c_str(), jr["seconds"].get<double>(),
                    jr["converged"].get<bool>() ? "converged" : "NOT converged",
                    jr["certificate"]["rel_gap"].get<double>(),
                    jr.contains("accelerator") ? (" [" + jr["accelerator"].get<std::string>() + "]").c_str() : "");
      }
      std::fflush(stdout);
      jruns.push_back(jr);
    }
    res["runs"] = jruns;
  } catch (const std::exception& e) {
    res["error"] = e.what();
    std::fprintf(stderr, "hetglm-gpu-bench: %s\n", e.what());
  }
  std::ofstream(out_path) << res.dump(2) << "\n";
  return res.contains("error") ? 1 : 0;
}
