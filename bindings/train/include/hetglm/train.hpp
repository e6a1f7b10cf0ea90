// SPDX-License-Identifier: Apache-2.0
// train(): the composition root of the engine (docs/design.md, "Layers"). It ties the solvers (solvers/: forms,
// sequential, SySCD / PASSCoDe, Newton, DuHL) to the accelerator backends (backends/: the registry) for one data set:
// labels, the bias column, lambda, the formulation, one-vs-rest, and the solver, returning the model and its
// duality-gap certificate. The CLI (bindings/cli), the Python package (bindings/python) and C++ programs call it.
//
// Options are typed and parsed once at each boundary (the CLI's flags, the Python estimators' parameters); the
// default of every option is its member initializer here or in the solver, DuHL and backend option structs.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/backend_options.hpp"
#include "hetglm/dataset.hpp"
#include "hetglm/model.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/objective.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// What to fit (docs/conventions.md, "Objective and scaling").
struct ProblemOptions {
  ModelSpec model = model_spec("logistic");  ///< --model / --penalty (model_spec())
  std::optional<double> C;                   ///< LIBLINEAR's C: lambda = 1 / (C n)
  std::optional<double> lambda;              ///< lambda directly (scikit-learn's alpha for lasso / elastic-net)
  double l1_ratio = 0.5;                     ///< elastic-net mixing eta in [0, 1]
  double bias = -1;                          ///< LIBLINEAR -B: >= 0 appends a constant feature of this value
  FormulationRequest formulation = FormulationRequest::automatic;
  /// What asked for a forced formulation, as the reason string names it ("" = "--formulation NAME"; the CLI gives
  /// "-s N" when LIBLINEAR's -s chose it).
  std::string formulation_requested_by;
  std::vector<double> sample_weight;         ///< c_i, empty = all ones
  /// Classifiers: (label, weight) pairs (LIBLINEAR's -wi, scikit-learn's class_weight), applied as LIBLINEAR's
  /// train() does: with two classes (and in the multinomial model) sample i's c_i is multiplied by the weight of
  /// its class; in one-vs-rest, class k's weight column multiplies only class k's samples (its positives) by w_k and
  /// the others keep c_i (LIBLINEAR: Cp = weighted_C[k], Cn = C; scikit-learn's LinearSVC the same). A class
  /// without a pair: weight 1. Weights must be positive and finite; a label that is not a class is ignored.
  std::vector<std::pair<double, double>> class_weights;
  /// Classifiers: the classes to train, ascending (empty = the distinct labels of y). Every label of y must be one
  /// of them; a class without a sample still gets its weight column (one-vs-rest: a column with no positive sample;
  /// multinomial: a softmax column), as scikit-learn fits a cross-validation fold whose training part lacks a class.
  std::vector<double> classes;
};

/// Where to train: the CPU solver alone, or DuHL with an accelerator (duhl.hpp; docs/duhl.md).
struct DeviceOptions {
  std::optional<Device> device = Device::cpu;  ///< nullopt = auto (resolve_device); cpu = the CPU solver
  MemoryBudget accel_memory;  ///< empty = the device's own; given with device cpu: the cpu stand-in accelerator
  BackendOptions backend;     ///< link bandwidth, xclbin, ...; memory_budget is resolved from accel_memory by train()
  DuhlOptions duhl;           ///< CPU role, selection, accelerator epochs per round, exact-certificate interval
};

struct TrainOptions {
  ProblemOptions problem;
  SolverOptions solver;  ///< tol, epoch budget, seed, solver kind, threads, ...; on_epoch is set by train()
  DeviceOptions device;
  /// Progress: (weight column, its label or NaN for regression, the epoch record).
  std::function<void(int, double, const EpochRecord&)> on_epoch;
  /// Warm start per weight column: a previous TrainResult's ColumnReport::alpha on the same data and formulation
  /// (e.g. at another C: dual variables stay feasible). Empty = cold start; sizes must match.
  std::vector<std::vector<double>> initial_alpha;
  /// Bytes the memory estimate may not exceed (check_training_memory); 0 = automatic (memory_limit_bytes()). The CLI
  /// sets it from --memory-limit, the readers' budget, so one number bounds both reading and training.
  std::uint64_t memory_limit = 0;
  /// Keep each column's coordinate variables in ColumnReport::alpha (a warm start). The CLI's train, which never
  /// reuses them, sets false: for one-vs-rest in the dual they are n doubles a class (1000 classes of 20,000
  /// samples: 160 MB), which the memory estimate then leaves out.
  bool keep_alpha = true;
};

/// What happened for one weight column (one class of one-vs-rest, or the only column).
struct ColumnReport {
  double label = 0;                   ///< positive class of this column (classifiers)
  Certificate certificate;
  int epochs = 0;
  bool converged = false;
  std::string stalled;                ///< not empty: stopped without measurable progress (SolveResult::stalled)
  double seconds = 0;
  std::vector<EpochRecord> history;
  std::vector<DuhlRound> rounds;      ///< DuHL rounds (empty when the CPU solver ran)
  std::vector<double> alpha;          ///< the coordinate variables (dual: per sample; primal: w): a warm start
  std::int64_t screened = -1;         ///< features proved zero by gap-safe screening (SolveResult::screened)
};

struct TrainResult {
  LinearModel model;
  ModelSpec spec;
  Formulation formulation = Formulation::dual;
  std::string device;                 ///< DuHL accelerator description (empty: CPU solver only)
  std::string device_reason;          ///< with --device auto: which device was chosen and why
  std::string formulation_reason;     ///< why this formulation (--formulation auto logs its estimate)
  SolverKind solver = SolverKind::sequential;  ///< the CPU solver that ran (auto resolved); automatic = DuHL ran
  double lambda = 0;
  std::vector<ColumnReport> columns;
  bool converged = false;             ///< every column reached the tolerance
  bool interrupted = false;
  double seconds = 0;
  double formulation_seconds = 0;     ///< of `seconds`, choosing the formulation (--formulation auto's trial runs)
};

/// A formulation and why it was chosen (--formulation auto logs its estimate).
struct FormulationChoice {
  Formulation formulation;
  std::string reason;
};

/// Models that --solver auto trains with the primal Newton solver where the primal is chosen: logistic and squared
/// hinge, and ridge (the squared loss with the L2 penalty: Newton is then one conjugate-gradient solve of the normal
/// equations, 3-30x faster than coordinate descent in either formulation on a9a, w7a, mushrooms, housing_scale and
/// dense 100,000 x 200 at C = 1: bench/results/auto_choice.md). Not the Lasso or elastic net (working-set solver).
bool auto_newton_loss(const ModelSpec& spec);

/// The rows that --formulation auto measures R^2 on: rows floor(t n / m), t < m = min(n, 10000), of the whole data
/// (n rows). Sums c_i ||x_i||^2 (c = nullptr: weights 1) over those of them among the rows [row_off, row_off +
/// X.n_rows) that X holds: all of them in one process, a rank's share under --distributed (the ranks' sums add up).
struct RowNormSample {
  double sum = 0;
  std::int64_t count = 0;
};
RowNormSample sample_row_norms(const CsrMatrix& X, std::int64_t row_off, std::int64_t n, const double* c);

/// --formulation auto when the primal would run the Newton solver (train() and the distributed trainer: one rule):
/// dual SDCA (CoCoA+ under --distributed) needs about 6 (1 + L R^2/(lambda n)) epochs, one Newton solve costs
/// about 5 sqrt(max(1, d/n)) dual epochs (bench/results/formulation.md); the cheaper one. n, d: the problem's rows
/// and columns (with the bias column), nnz its nonzeros, mean_r2 the sampled mean of c_i ||x_i||^2.
FormulationChoice newton_or_dual(const ModelSpec& spec, std::int64_t n, std::int64_t d, std::int64_t nnz,
                                 double mean_r2, double lambda);

/// A classifier's labels into the model file (docs/conventions.md, "Labels and the positive class"): two classes list the larger one first
/// and train one weight column for it; more classes list them ascending, one-vs-rest. `classes`: the distinct
/// labels, ascending, at least two (train() and the distributed trainer check that with their own message).
/// Returns the positive class of each weight column.
std::vector<double> set_class_labels(LinearModel& model, const std::vector<double>& classes);

/// The CPU coordinate-descent solver that --solver auto runs on `n_threads` threads (0 = all cores) for a problem
/// of `nnz` nonzeros (one process; a CoCoA+ rank's local solver under --distributed, with the rank's nonzeros):
/// sequential on one thread, and for the hinge loss's SDCA below kAutoSequentialHingeNnz nonzeros; SySCD otherwise.
/// The hinge rule is measured (docs/parallel-cpu.md, "Which solver auto runs"): on a9a, w7a and mushrooms the
/// sequential solver's shrinking reaches tol 1e-3 in 0.6-0.9x the time of SySCD on 2 threads, whose replicas need
/// up to 1.7x the epochs there; from 10^6 nonzeros on SySCD is as fast or faster (generated sparse and dense sets).
inline constexpr offset_t kAutoSequentialHingeNnz = 1000000;
SolverKind auto_cd_solver(int n_threads, Loss loss, offset_t nnz);

/// Checks the options that do not need the data (tol, epoch budget, l1 ratio, bias, C and lambda, solver and
/// formulation against the model, device combinations) with the messages train() gives; the CLI calls it before
/// reading any data. Throws InvalidArgument.
void check_options(const TrainOptions& options);

/// The smallest tolerance check_options accepts (a relative duality gap in double precision is not certain below).
inline constexpr double kMinTol = 1e-15;

/// train()'s memory estimate, before it allocates anything: n samples, d features (the bias column included), nnz
/// nonzeros, `classes` weight columns, n_threads solver threads (0: the hardware concurrency). Counted: the matrix and
/// its transpose, alpha, v and one replica of v per thread, and the model. Throws InvalidArgument "training needs
/// about X of memory (n samples, d features, nnz nonzeros, k weight columns), more than the Y available" (sizes by
/// format_bytes, e.g. "19.2 GB", "67.8 kB") when
/// that exceeds memory_limit_bytes() (a libsvm index near 2^31 asks for dense vectors of 17 GB each). The Python
/// regressors call it before they allocate anything of d entries themselves. An explicit `limit` (bytes, not 0)
/// replaces memory_limit_bytes(); the message then ends "more than the memory limit of Y (<limit_name>)".
/// float64_values: the matrix also holds values_lo (matrix.hpp), 4 bytes more per nonzero in each copy.
/// multinomial: the softmax model's solver (`classes` is then its K), which also keeps several n x K and d x K
/// matrices and, for the proximal solver (L1, elastic net), the features' K x K Hessian blocks (up to 512 MiB).
enum class MultinomialMemory { none, newton_cg, proximal };
/// keep_alpha: one-vs-rest's columns keep their coordinate variables (TrainOptions::keep_alpha), counted then.
void check_training_memory(double n, double d, double nnz, std::size_t classes, int n_threads,
                           std::uint64_t limit = 0, const char* limit_name = "memory_limit",
                           bool float64_values = false, MultinomialMemory multinomial = MultinomialMemory::none,
                           bool keep_alpha = true);
/// The bytes check_training_memory counts, without a check.
double training_memory_bytes(double n, double d, double nnz, std::size_t classes, int n_threads,
                             bool float64_values = false, MultinomialMemory multinomial = MultinomialMemory::none,
                             bool keep_alpha = true);
/// The bytes train(data, options) counts before it allocates (its model, classes, bias column and threads from
/// `options`), for a share of the samples and nonzeros (cross-validation's training parts: (k - 1) / k).
double training_memory_bytes(const Dataset& data, const TrainOptions& options, double share = 1.0);

/// The distinct values of `y` (n labels), ascending, as std::set would give them: the class labels. `y` must be
/// free of NaN (read_libsvm refuses non-finite labels, train() checks its input first); with a NaN the result is
/// unspecified. Linear in n for up to 256 distinct values (a short sorted list checked against the last value seen
/// first; a std::set of 400,000 labels took 6 ms a scan), a sort past that. Throws nothing but std::bad_alloc.
std::vector<double> distinct_labels(const std::vector<double>& y);

/// The classes a classifier trains: ProblemOptions::classes when given (checked: finite, strictly ascending, at
/// least two, every label of y among them; InvalidArgument naming what is wrong), else distinct_labels(y).
std::vector<double> class_labels(const ProblemOptions& o, const std::vector<double>& y);

/// with_bias_column(X, bias) (matrix.hpp; bias < 0: X as it is), given values_lo when `lo` asks for it and X has none
/// (values that float32 holds exactly): zeros for X's entries and values_lo_of(bias) for the bias entries, the last
/// of each row (docs/formulation.md, "float64 data"). train() asks for it at a tol below kFloat64Tol when float32
/// does not hold the bias (-B 0.1); the distributed trainer when its ranks agreed on float64 values (a rank whose
/// values float32 holds, or that holds no entry, then matches the others).
CsrMatrix bias_column(const CsrMatrix& X, double bias, bool lo);
/// The same from a matrix the caller gives up: with bias < 0, X itself (moved, not copied).
CsrMatrix bias_column(CsrMatrix&& X, double bias, bool lo);

/// The warning (one line, newline included) for a training file that held a nonzero value below 2^-100 at a tol
/// below kFloat64Tol, so that the fit trains on its float32 values (LibsvmOptions::values_lo_tiny).
std::string float32_fallback_warning(const std::string& file);

/// The warning (one line, newline included) for a fit the stall rule stopped before the tolerance (epoch_driver.hpp;
/// SolveResult::stalled is `stalled`): after `count` `unit` ("epochs", "DuHL rounds", "rounds"), `who` naming the
/// class where there are several (" (class 3)") or empty. One process's and the distributed trainer's.
std::string stall_warning(int count, std::string_view unit, std::string_view who, std::string_view stalled);

/// When the progress lines of a fit are printed (--progress): the first record of every weight column, then every
/// `every_epochs` epochs (rounds), or every `every_seconds` seconds when that is > 0, and the last record of each
/// column (held back until the column ends, or flush()). `print(label, record)` writes one line. One process's CLI
/// and the distributed trainer's rank 0.
struct ProgressLines {
  double every_seconds = 1;
  int every_epochs = 1;
  std::function<void(double label, const EpochRecord&)> print;
  /// The record `r` of weight column `k` (its class `label`).
  void on_epoch(int k, double label, const EpochRecord& r);
  /// Prints the record held back, if any (the end of a column or of the fit).
  void flush();

 private:
  void emit(double label, const EpochRecord& r);
  int column_ = -1;
  double last_printed_ = 0;
  int last_epoch_ = 0;  ///< the epoch of the last line printed
  std::optional<std::pair<double, EpochRecord>> pending_;
};

/// Writes a trained model where the CLI's MODEL argument says: "-" its text to standard output (flushed), any other
/// path atomically (save_model). Throws IoError ("cannot write the model to standard output: ...", or save_model's
/// naming the path). One process's CLI and the distributed trainer's rank 0.
void write_model_to(const std::string& path, const LinearModel& model);

/// The warning (one line, newline included) for an option that only `applies` to something the fit did not run:
/// "warning: OPTION applies to APPLIES; WHY; ignored". One process's (bindings/cli) and the distributed trainer's.
std::string ignored_option_warning(std::string_view option, std::string_view applies, std::string_view why);

/// Train. Throws InvalidArgument for bad options or data (empty data, one class, NaN labels, bad weights),
/// TrainingError for numerical failure. Reaching the epoch budget is not an error: see TrainResult::converged.
TrainResult train(const Dataset& data, const TrainOptions& options);

}  // namespace hetglm
