// SPDX-License-Identifier: Apache-2.0
// train(): the single entry point used by the CLI (and later Python): labels, bias, lambda, formulation,
// one-vs-rest, and the solver, returning the model and its duality-gap certificate.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hetglm/dataset.hpp"
#include "hetglm/model.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/objective.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

struct TrainOptions {
  std::string model = "logistic";     ///< logistic | svm | squared-hinge | ridge | lasso | elastic-net
  std::string penalty;                ///< "" = the model's default
  std::optional<double> C;            ///< LIBLINEAR's C: lambda = 1 / (C n)
  std::optional<double> lambda;       ///< lambda directly (scikit-learn's alpha for lasso/elastic-net)
  double l1_ratio = 0.5;              ///< elastic-net mixing eta in [0, 1]
  double tol = 1e-4;                  ///< relative duality gap
  int max_epochs = 5000;              ///< epoch budget (hinge SDCA converges as O(1/eps): LIBLINEAR-like 1000 is too few)
  std::uint64_t seed = 1;
  double bias = -1;                   ///< LIBLINEAR -B: >= 0 appends a constant feature of this value
  std::string formulation = "auto";   ///< auto | dual | primal
  std::vector<double> sample_weight;  ///< c_i, empty = all ones
  /// Progress: (weight column, its label or NaN for regression, the epoch record).
  std::function<void(int, double, const EpochRecord&)> on_epoch;
  std::function<bool()> should_stop;  ///< polled once per epoch (Ctrl-C)
  /// Test and diagnostic hook, passed to SolverOptions::after_epoch (sequential and parallel CPU solvers only).
  std::function<void(int epoch, std::span<double> alpha, std::span<double> v)> after_epoch;
  /// DuHL on an accelerator (duhl.hpp; docs/duhl.md). Used when device != "cpu" or accel_memory is set.
  std::string device = "cpu";         ///< cpu | opencl | cuda | fpga | fpga-sim | auto (registry.hpp)
  std::string accel_memory;           ///< "" = the device's own; bytes with K M G Ki Mi Gi, or "25%" of the data
  std::string cpu_role = "gaps";      ///< gaps (DuHL as published) | solve (CPU also trains outside the working set)
  std::string duhl_selection = "duhl";  ///< duhl | random | streaming (baselines)
  double link_bandwidth = 0;          ///< cpu stand-in: emulated link in GB/s (0 = none)
  std::string xclbin;                 ///< device fpga: the xclbin file (docs/fpga.md)
  int duhl_epochs = 1;                ///< accelerator epochs per DuHL round
  int exact_gap_every = 0;            ///< DuHL rounds between exact certificates (0 = about once per data pass)
  /// CPU solver (parallel_cpu.hpp, newton.hpp). The library default is the sequential reference; the CLI and Python
  /// default to automatic (newton for the primal of logistic / squared hinge, else syscd, or sequential on 1 thread).
  SolverKind solver = SolverKind::sequential;
  int n_threads = 0;                  ///< solver threads = replicas (0 = all cores of the current arena)
  int numa_nodes = 0;                 ///< 0 = hwloc topology; K > 0 = K (virtual) NUMA nodes
  bool deterministic = false;         ///< syscd: same seed and n_threads give a byte-identical model
  int bucket_size = 0;                ///< coordinates per SySCD bucket (0 = automatic)
};

/// What happened for one weight column (one class of one-vs-rest, or the only column).
struct ColumnReport {
  double label = 0;                   ///< positive class of this column (classifiers)
  Certificate certificate;
  int epochs = 0;
  bool converged = false;
  double seconds = 0;
  std::vector<EpochRecord> history;
  std::vector<DuhlRound> rounds;      ///< DuHL rounds (empty when the CPU solver ran)
};

struct TrainResult {
  LinearModel model;
  ModelSpec spec;
  Formulation formulation = Formulation::dual;
  std::string device;                 ///< DuHL accelerator description (empty: CPU solver only)
  std::string device_reason;         ///< with --device auto: which device was chosen and why
  std::string formulation_reason;      ///< why this formulation (--formulation auto logs its estimate)
  SolverKind solver = SolverKind::sequential;  ///< the CPU solver that ran (auto resolved); automatic = DuHL ran
  double lambda = 0;
  std::vector<ColumnReport> columns;
  bool converged = false;             ///< every column reached the tolerance
  bool interrupted = false;
  double seconds = 0;
};

/// The lambda that `options` asks for on `n_samples` samples (conventions.md defaults:
/// classifiers C = 1, ridge 1/n, lasso and elastic net 1.0). Throws InvalidArgument on both C and lambda.
double resolve_lambda(const TrainOptions& options, const ModelSpec& spec, std::int64_t n_samples);

/// Train. Throws InvalidArgument for bad options or data (empty data, one class, NaN labels, bad weights),
/// TrainingError for numerical failure. Reaching max_epochs is not an error: see TrainResult::converged.
TrainResult train(const Dataset& data, const TrainOptions& options);

}  // namespace hetglm
