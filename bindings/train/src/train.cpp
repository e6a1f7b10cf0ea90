// SPDX-License-Identifier: Apache-2.0
// train(), the composition root (train.hpp): checks, the bias column, labels and one-vs-rest, lambda, the formulation
// and the solver, DuHL with a backend from the registry.
#include "hetglm/train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <fstream>
#include <chrono>
#include <cmath>
#include <limits>

#include "hetglm/memory.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/error.hpp"
#include "hetglm/solvers/dispatch.hpp"
#include "hetglm/solvers/multinomial.hpp"
#include "hetglm/solvers/parallel_cpu.hpp"
#include "hetglm/solvers/newton.hpp"
#include "hetglm/solvers/sequential.hpp"
#include "hetglm/solvers/working_set.hpp"

namespace hetglm {

namespace {

/// Epochs of a trial run to tol (relative gap) on a sample of the problem (trial_estimate).
struct TrialEstimate {
  double epochs = 0;          ///< measured when the trial converged, else extrapolated
  int ran = 0;                ///< epochs the trial ran
  index_t rows = 0;           ///< sampled rows
  bool extrapolated = false;  ///< cut short by the work cap: epochs from the geometric rate of its second half
  bool beyond = false;        ///< stopped at `limit` epochs unconverged: it needs more than that (epochs = infinity)
};

/// The sequential solver (the engine's own, sequential.hpp) on a strided sample of m of the n rows in formulation f,
/// to the tolerance of the real solve (with its shrinking and certificate schedule):
///   dual:   m = min(n, 2000), lambda n / m (SDCA's per-coordinate ratios c_i ||x_i||^2 / (lambda n) are those of the
///           full problem; measured within 10% of the full problem's epochs, docs/formulation.md);
///   primal: the same lambda (the sample's scaled Hessian X_S^T C X_S / m + lambda I estimates the full one) on
///           min(100 d, n / 4) rows and at most 4e6 nonzeros, but at least 2000 rows (or all n): with fewer rows the
///           sample is worse conditioned than the full problem and the estimate errs high (make_classification
///           20000 x 100: 19 epochs on 2000 rows, 10 on 5000, 7 on 10,000 and on all).
/// At most max(2e7, nnz(X)) nonzero visits (at least 10 epochs): a trial cut short is extrapolated from the geometric
/// rate of its relative gap between its middle certificate and its last. A trial that fails numerically, or ends with
/// a gap that does not certify, counts as never converging. `limit` (> 0): the epochs beyond which the answer no
/// longer matters (the other formulation's estimate): a trial not converged by then stops there (beyond).
TrialEstimate trial_estimate(const ModelSpec& spec, Formulation f, const CsrMatrix& X, const std::vector<double>& labels,
                             double positive, const std::vector<double>& c, double lambda, double eta,
                             const SolverOptions& base, int limit = 0) {
  const index_t n = X.n_rows;
  const double row_nnz = std::max(1.0, double(X.nnz()) / std::max<index_t>(n, 1));
  const double primal_rows = std::min({100.0 * X.n_cols, 4e6 / row_nnz, 0.25 * n});
  const index_t m = f == Formulation::dual
                        ? std::min<index_t>(n, 2000)
                        : std::min<index_t>(n, static_cast<index_t>(std::clamp(primal_rows, 2000.0, 1e9)));
  std::vector<index_t> rows(static_cast<std::size_t>(m));
  for (index_t t = 0; t < m; ++t) rows[t] = static_cast<index_t>(std::int64_t(t) * n / m);
  const CsrMatrix Xs = select_rows(X, rows);
  std::vector<double> ys(rows.size()), cs(rows.size());
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const double yi = labels[rows[t]];
    ys[t] = spec.classifier ? (yi == positive ? 1.0 : -1.0) : yi;
    cs[t] = c[rows[t]];
  }
  if (f == Formulation::dual) lambda *= double(n) / m;
  ProblemData pd;
  pd.X = &Xs;
  CsrMatrix Xt;
  if (f == Formulation::primal) {
    Xt = transpose(Xs);
    pd.Xt = &Xt;
  } else {
    pd.row_sq_norm = row_sq_norms(Xs);
  }
  SolverOptions so;
  so.tol = base.tol;
  so.seed = base.seed;
  so.solver = SolverKind::sequential;
  so.n_threads = 1;
  so.shrinking = base.shrinking;
  so.certificate_every = base.certificate_every;  // the real solve's schedule: its epochs are counted the same way
  const double work = std::max(2e7, double(X.nnz()));
  so.max_epochs = static_cast<int>(
      std::clamp(work / std::max(1.0, double(Xs.nnz())), 10.0, double(std::max(10, base.max_epochs))));
  const bool limited = limit > 0 && limit < so.max_epochs;
  if (limited) so.max_epochs = limit;
  TrialEstimate t;
  t.rows = m;
  SolveResult r;
  try {
    r = with_form(spec, f, [&]<class Form>() {
      if constexpr (Form::formulation == Formulation::dual) {
        return solve_sequential(Form(pd, ys.data(), cs.data(), lambda), so);
      } else {
        return solve_sequential(Form(pd, ys.data(), cs.data(), lambda, eta), so);
      }
    });
  } catch (const TrainingError&) {
    t.epochs = std::numeric_limits<double>::infinity();
    return t;
  }
  t.ran = r.epochs;
  t.epochs = r.epochs;
  if (!r.converged && limited) {  // more epochs than `limit`: whatever the rate, the other formulation wins
    t.beyond = true;
    t.epochs = std::numeric_limits<double>::infinity();
    return t;
  }
  if (r.converged || r.history.size() < 2) {
    if (!r.converged) t.epochs = std::numeric_limits<double>::infinity();
    return t;
  }
  const EpochRecord& last = r.history.back();
  const EpochRecord& mid = r.history[r.history.size() / 2];
  const double per_epoch = std::log(mid.rel_gap / last.rel_gap) / std::max(1, last.epoch - mid.epoch);
  t.extrapolated = true;
  t.epochs = per_epoch > 0 && last.rel_gap > 0 ? last.epoch + std::log(last.rel_gap / base.tol) / per_epoch
                                               : std::numeric_limits<double>::infinity();
  return t;
}

std::string trial_text(const TrialEstimate& t) {
  if (t.beyond) return fmt::format("more than {} epochs (on {} rows; the trial stops where the dual wins)", t.ran, t.rows);
  if (!std::isfinite(t.epochs)) return fmt::format("no convergence in {} trial epochs on {} rows", t.ran, t.rows);
  if (t.extrapolated) return fmt::format("{:.3g} epochs (on {} rows, extrapolated from {})", t.epochs, t.rows, t.ran);
  return fmt::format("{:.3g} epochs (on {} rows)", t.epochs, t.rows);
}

/// --formulation auto|dual|primal. With the Newton solver for the primal: measured costs (below). Otherwise auto
/// compares estimated work, epochs x passes over the nonzeros, with the epochs measured by trial_estimate on a
/// strided sample of m = min(n, 2000) rows: dual SDCA one pass per epoch, primal CD two for the non-quadratic losses
/// (derivatives, then the line-search trial). Analytic rates missed by orders of magnitude (issue 15): 1/mu of the
/// scaled primal Hessian counts directions that collinear (redundant) features make flat but that hold no share of
/// the gap, and 1 + L R^2/(lambda n) is SDCA's rate per constant factor, not its epochs to the tolerance.
/// Non-L2 penalties have no dual (SDCA) form here: primal. Hinge has no smooth primal: dual.
/// positive: the label of the first weight column's positive class (classifiers; NaN for regression).
FormulationChoice resolve_formulation(const TrainOptions& o, const ModelSpec& spec, const CsrMatrix& X,
                                      const std::vector<double>& labels, double positive, const std::vector<double>& c,
                                      double lambda, double eta, bool primal_newton) {
  const FormulationRequest req = o.problem.formulation;
  const SolverKind kind = o.solver.solver;
  if (const std::optional<Formulation> f = forced_formulation(spec, req)) {
    if (*f == Formulation::dual && kind == SolverKind::newton)
      throw InvalidArgument("--solver newton: runs the primal formulation only; drop --formulation dual or choose "
                            "--solver sequential or syscd");
    if (req != FormulationRequest::automatic)
      return {*f, o.problem.formulation_requested_by.empty()
                      ? fmt::format("requested with --formulation {}", formulation_name(*f))
                      : "requested with " + o.problem.formulation_requested_by};
    if (*f == Formulation::primal)
      return {*f, fmt::format("penalty {} has no dual (SDCA) form", penalty_name(spec.penalty))};
    return {*f, "the hinge loss is not smooth: no primal coordinate descent"};
  }
  if (kind == SolverKind::newton) return {Formulation::primal, "requested with --solver newton (primal only)"};
  if (primal_newton) {  // the primal runs the Newton solver (newton.hpp): measured costs (newton_or_dual)
    const RowNormSample r2 = sample_row_norms(X, 0, X.n_rows, c.data());
    return newton_or_dual(spec, X.n_rows, X.n_cols, X.nnz(), r2.count > 0 ? r2.sum / double(r2.count) : 0.0, lambda);
  }
  const TrialEstimate dual = trial_estimate(spec, Formulation::dual, X, labels, positive, c, lambda, eta, o.solver);
  const double passes = spec.loss == Loss::squared ? 1.0 : 2.0;
  // The primal wins only below dual / passes epochs: its trial stops at the first whole number of epochs at or above
  // that (the same choice as the whole trial; on a9a, logistic through DuHL, 10 primal epochs instead of 177: the
  // trials took 1.15 s of a 1.7 s run).
  const double bound = std::ceil(dual.epochs / passes);
  const int limit = std::isfinite(bound) && bound < 1e9 ? std::max(1, static_cast<int>(bound)) : 0;
  const TrialEstimate primal =
      trial_estimate(spec, Formulation::primal, X, labels, positive, c, lambda, eta, o.solver, limit);
  const Formulation f = primal.epochs * passes < dual.epochs ? Formulation::primal : Formulation::dual;
  return {f, fmt::format("auto: {} x {}; trial runs of the sequential solver on sampled rows to tol {:g}: dual SDCA {} "
                         "vs primal CD {} x {} passes; chose {}",
                         X.n_rows, X.n_cols, o.solver.tol, trial_text(dual), trial_text(primal), passes,
                         formulation_name(f))};
}


}  // namespace

bool auto_newton_loss(const ModelSpec& spec) {
  return is_smooth(spec.loss) && (spec.loss != Loss::squared || spec.penalty == Penalty::l2);
}

SolverKind auto_cd_solver(int n_threads, Loss loss, offset_t nnz) {
  return n_threads == 1 || (loss == Loss::hinge && nnz < kAutoSequentialHingeNnz) ? SolverKind::sequential
                                                                                 : SolverKind::syscd;
}

RowNormSample sample_row_norms(const CsrMatrix& X, std::int64_t row_off, std::int64_t n, const double* c) {
  RowNormSample s;
  const std::int64_t m = std::min<std::int64_t>(n, 10000);
  const double stride = double(n) / double(std::max<std::int64_t>(m, 1));
  for (std::int64_t t = 0; t < m; ++t) {
    const auto g = static_cast<std::int64_t>(double(t) * stride);
    if (g < row_off || g >= row_off + X.n_rows) continue;
    const auto i = static_cast<index_t>(g - row_off);
    double sq = 0;
    for (offset_t k = X.offsets[i]; k < X.offsets[i + 1]; ++k) sq += double(X.values[k]) * X.values[k];
    s.sum += (c ? c[i] : 1.0) * sq;
    ++s.count;
  }
  return s;
}

std::vector<double> set_class_labels(LinearModel& model, const std::vector<double>& classes) {
  model.nr_class = static_cast<int>(classes.size());
  model.labels = classes.size() == 2 ? std::vector<double>{classes[1], classes[0]} : classes;
  return classes.size() == 2 ? std::vector<double>{classes[1]} : classes;
}

FormulationChoice newton_or_dual(const ModelSpec& spec, std::int64_t n, std::int64_t d, std::int64_t nnz,
                                 double mean_r2, double lambda) {
  // Measured on 2 cores (bench/results/formulation.md), one Newton solve costs about as much as kNewtonEpochs dual
  // epochs when d <= n, growing like sqrt(d/n) on wide data (its vectors have d entries and X^T is needed); dual SDCA
  // needs about kDualFactor times its bound 1 + L R^2/(lambda n) in epochs (Shalev-Shwartz & Zhang 2013, with the
  // mean R^2 of importance sampling).
  constexpr double kNewtonEpochs = 5, kDualFactor = 6;
  const double L = curvature_bound(spec.loss);
  const double bound = 1 + L * mean_r2 / (lambda * double(n));
  const double dual_epochs = kDualFactor * bound;
  const double newton_epochs = kNewtonEpochs * std::sqrt(std::max(1.0, double(d) / double(n)));
  const Formulation f = dual_epochs < newton_epochs ? Formulation::dual : Formulation::primal;
  return {f, fmt::format("auto: {} x {}, {} nonzeros; dual SDCA ~{} x (1 + L R^2/(lambda n)) = {:.3g} epochs (mean "
                         "R^2 = {:.4g}) vs primal Newton ~{} sqrt(max(1, d/n)) = {:.3g} dual-epoch equivalents; "
                         "chose {}",
                         n, d, nnz, kDualFactor, dual_epochs, mean_r2, kNewtonEpochs, newton_epochs,
                         formulation_name(f))};
}

namespace {
/// bias_column's values_lo of a matrix whose bias column is in place (or that has none).
CsrMatrix with_lo_of_bias(CsrMatrix b, double bias, bool lo) {
  if (lo && !b.has_lo() && b.nnz() > 0) {
    b.values_lo.assign(static_cast<std::size_t>(b.nnz()), 0.0f);
    if (bias >= 0)
      for (index_t i = 0; i < b.n_rows; ++i)
        b.values_lo[static_cast<std::size_t>(b.offsets[i + 1] - 1)] = values_lo_of(bias);
  }
  return b;
}
}  // namespace

// Declared in train.hpp.
CsrMatrix bias_column(const CsrMatrix& X, double bias, bool lo) {
  return with_lo_of_bias(with_bias_column(X, bias), bias, lo);
}
CsrMatrix bias_column(CsrMatrix&& X, double bias, bool lo) {
  return with_lo_of_bias(bias < 0 ? std::move(X) : with_bias_column(X, bias), bias, lo);
}

std::string float32_fallback_warning(const std::string& file) {
  return fmt::format("warning: '{}' holds a nonzero value below 2^-100 (about 7.9e-31), whose remainder after the "
                     "float32 rounding float32 cannot hold: training on the float32 values, so the certificate is "
                     "that of the float32-rounded data, not of the file's values (docs/formulation.md, \"float64 "
                     "data\")\n",
                     file);
}

std::string stall_warning(int count, std::string_view unit, std::string_view who, std::string_view stalled) {
  return fmt::format("warning: stopped after {} {} before the tolerance{}: {}; the model and its certificate are "
                     "written\n",
                     count, unit, who, stalled);
}

void ProgressLines::emit(double label, const EpochRecord& r) {
  print(label, r);
  last_printed_ = r.seconds;
  last_epoch_ = r.epoch;
}

void ProgressLines::on_epoch(int k, double label, const EpochRecord& r) {
  const bool first = k != column_;  // the first record of a column (epoch 1; with DuHL the first exact round)
  if (first) {
    flush();
    column_ = k;
  }
  const bool show = first || (every_seconds > 0 ? r.seconds - last_printed_ >= every_seconds
                                                : r.epoch / every_epochs > last_epoch_ / every_epochs);
  if (show) {
    emit(label, r);
    pending_.reset();
  } else {
    pending_ = std::pair{label, r};
  }
}

void ProgressLines::flush() {
  if (pending_) emit(pending_->first, pending_->second);
  pending_.reset();
}

void write_model_to(const std::string& path, const LinearModel& model) {
  if (path != "-") return save_model(path, model);
  const std::string text = format_model(model);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw IoError(fmt::format("cannot write the model to standard output: {}", std::strerror(errno)));
}

std::string ignored_option_warning(std::string_view option, std::string_view applies, std::string_view why) {
  return fmt::format("warning: {} applies to {}; {}; ignored\n", option, applies, why);
}

std::vector<double> distinct_labels(const std::vector<double>& y) {
  std::vector<double> u;
  double last = std::numeric_limits<double>::quiet_NaN();  // equal to no label
  for (const double x : y) {
    if (x == last) continue;
    const auto it = std::lower_bound(u.begin(), u.end(), x);
    if (it == u.end() || *it != x) {
      if (u.size() >= 256) {
        u = y;
        std::sort(u.begin(), u.end());
        u.erase(std::unique(u.begin(), u.end()), u.end());
        return u;
      }
      u.insert(it, x);
    }
    last = x;
  }
  return u;
}

std::vector<double> class_labels(const ProblemOptions& o, const std::vector<double>& y) {
  if (o.classes.empty()) return distinct_labels(y);
  const std::vector<double>& k = o.classes;
  if (k.size() < 2) throw InvalidArgument(fmt::format("classes: at least two are needed, got {}", k.size()));
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!std::isfinite(k[i])) throw InvalidArgument(fmt::format("classes[{}] = {} is not a finite number", i, k[i]));
    if (i > 0 && !(k[i - 1] < k[i]))
      throw InvalidArgument(fmt::format("classes must be strictly ascending: classes[{}] = {} after {}", i, k[i],
                                        k[i - 1]));
  }
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!std::binary_search(k.begin(), k.end(), y[i]))
      throw InvalidArgument(fmt::format("label {} of sample {} is not among the {} classes given", y[i], i, k.size()));
  return k;
}

namespace {
/// Bytes of memory this process can still allocate (the cgroup limit less usage, or MemAvailable), or 0 if unknown.
double available_memory_bytes() { return static_cast<double>(memory_limit_bytes()); }

/// check_training_memory's arguments for the data set and options: what train() estimates before it allocates.
/// add_bias: train() appends the bias column (with_bias_column's copy; not when the caller's X has it).
struct MemoryArgs {
  double n, d, nnz;
  std::size_t classes;
  MultinomialMemory multinomial;
};
MemoryArgs memory_args(const Dataset& data, const TrainOptions& o, const ModelSpec& spec, const std::vector<double>& y,
                       bool add_bias) {
  std::size_t classes = 1;
  if (spec.classifier) {
    const std::size_t k = class_labels(o.problem, y).size();
    classes = k > 2 ? k : 1;
  }
  return {double(data.n_samples()), double(data.n_features()) + (o.problem.bias >= 0 ? 1 : 0),
          double(data.X.nnz()) + (add_bias ? data.n_samples() : 0), classes,
          !spec.multinomial ? MultinomialMemory::none
          : spec.penalty == Penalty::l2 ? MultinomialMemory::newton_cg
                                        : MultinomialMemory::proximal};
}
void check_memory(const Dataset& data, const TrainOptions& o, const ModelSpec& spec, const std::vector<double>& y,
                  bool add_bias) {
  const MemoryArgs m = memory_args(data, o, spec, y, add_bias);
  try {
    check_training_memory(m.n, m.d, m.nnz, m.classes, o.solver.n_threads, o.memory_limit, "--memory-limit",
                          data.X.has_lo(), m.multinomial, o.keep_alpha);
  } catch (const InvalidArgument& e) {  // the file named (a feature index of 2147483646 on line 1 said nothing of it)
    if (data.source.empty()) throw;
    throw InvalidArgument(fmt::format("'{}': {}", data.source, e.what()));
  }
}
}  // namespace

double training_memory_bytes(const Dataset& data, const TrainOptions& o, double share) {
  const MemoryArgs m = memory_args(data, o, o.problem.model, data.y, o.problem.bias >= 0 && !data.bias_included);
  return training_memory_bytes(m.n * share, m.d, m.nnz * share, m.classes, o.solver.n_threads, data.X.has_lo(),
                               m.multinomial, o.keep_alpha);
}

void check_training_memory(double n, double d, double nnz, std::size_t classes, int n_threads, std::uint64_t limit,
                           const char* limit_name, bool float64_values, MultinomialMemory multinomial,
                           bool keep_alpha) {
  const double need = training_memory_bytes(n, d, nnz, classes, n_threads, float64_values, multinomial, keep_alpha);
  const double avail = limit > 0 ? double(limit) : available_memory_bytes();
  if (avail > 0 && need > avail)
    throw InvalidArgument(fmt::format(
        "training needs about {} of memory ({} samples, {} features, {} nonzeros{}, {} weight column{}), more than {}",
        format_bytes(static_cast<std::uint64_t>(need)), static_cast<std::int64_t>(n), static_cast<std::int64_t>(d),
        static_cast<std::int64_t>(nnz), float64_values ? " kept to double precision, as a tol below 1e-6 asks" : "",
        classes, classes == 1 ? "" : "s",
        limit > 0 ? fmt::format("the memory limit of {} ({})", format_bytes(limit), limit_name)
                  : fmt::format("the {} available", format_bytes(static_cast<std::uint64_t>(avail)))));
}

double training_memory_bytes(double n, double d, double nnz, std::size_t classes, int n_threads, bool float64_values,
                             MultinomialMemory multinomial, bool keep_alpha) {
  const double threads = n_threads > 0 ? n_threads : std::thread::hardware_concurrency();
  const double value_bytes = sizeof(float) * (float64_values ? 2 : 1);  // values (and values_lo)
  const double matrix = nnz * (value_bytes + sizeof(index_t)) + (n + d + 2) * sizeof(offset_t);
  double vectors = (n + d) * sizeof(double) * (3 + threads) + d * sizeof(double) * classes;
  // One-vs-rest keeps each class's coordinate variables where asked (TrainOptions::keep_alpha; ColumnReport::alpha:
  // n a column in the dual, d in the primal, the larger counted): 1000 classes of 20,000 samples in the dual took
  // 160 MB of them where this estimate said 8 MB.
  if (multinomial == MultinomialMemory::none && classes > 1 && keep_alpha)
    vectors += std::max(n, d) * sizeof(double) * double(classes);
  if (multinomial != MultinomialMemory::none) {
    // solvers/src/multinomial.cpp: n x K for Z, P, U = X S and the extrapolation's X S; d x K for W, G, the Hessian
    // diagonal, S, the conjugate gradients' or the extrapolation's vectors (about 14 in all); the per-chunk gradient
    // buffers (at most 2^24 doubles together); the proximal solver's K x K blocks of the features (at most 2^26).
    const double K = double(classes);
    vectors += sizeof(double) * (6 * n * K + 14 * d * K + std::min(std::ceil(n / 4096) * d * K, 16777216.0) +
                                 (multinomial == MultinomialMemory::proximal ? std::min(d * K * K, 67108864.0) : 0.0));
  }
  return 2 * matrix + vectors;
}

void check_options(const TrainOptions& o) {
  const SolverOptions& so = o.solver;
  const ProblemOptions& p = o.problem;
  if (!(so.tol > 0 && std::isfinite(so.tol)))
    throw InvalidArgument(fmt::format("--tol: must be a positive number, got {}", so.tol));
  if (so.tol < kMinTol)
    throw InvalidArgument(fmt::format(
        "--tol: must be at least {:g} (a duality gap in double precision is not certain below that), got {}", kMinTol,
        so.tol));
  if (so.max_epochs < 1) throw InvalidArgument(fmt::format("--max-epochs: must be at least 1, got {}", so.max_epochs));
  if (so.n_threads < 0)
    throw InvalidArgument(fmt::format("--threads: must be >= 0 (0 = all cores), got {}", so.n_threads));
  if (so.numa_nodes < 0)
    throw InvalidArgument(fmt::format("--numa-nodes: must be >= 0 (0 = the machine's topology), got {}", so.numa_nodes));
  if (!(p.l1_ratio >= 0 && p.l1_ratio <= 1))
    throw InvalidArgument(fmt::format("--l1-ratio: must be in [0, 1], got {}", p.l1_ratio));
  if (!std::isfinite(p.bias)) throw InvalidArgument("-B: bias must be a finite number");
  if (p.C && p.lambda) throw InvalidArgument("-c and --lambda are mutually exclusive: give one of them");
  if (p.C) resolve_lambda(p.model, p.C, std::nullopt, 1);
  if (p.lambda && !(std::isfinite(*p.lambda) && *p.lambda > 0))
    throw InvalidArgument(fmt::format("--lambda: lambda must be a positive number, got {}", *p.lambda));
  const bool accel = o.device.device && (*o.device.device != Device::cpu || !o.device.accel_memory.empty());
  if (so.solver == SolverKind::newton && accel)
    throw InvalidArgument(fmt::format("--solver newton: runs on the CPU only; DuHL on --device {} trains by coordinate "
                                      "descent (drop --solver newton)",
                                      device_name(*o.device.device)));
  if (so.solver == SolverKind::newton && !is_smooth(p.model.loss))
    throw InvalidArgument("--solver newton: the hinge loss (svm) is not smooth, so it has no Newton step; use --solver "
                          "syscd or sequential (dual SDCA)");
  if (so.solver == SolverKind::working_set && accel)
    throw InvalidArgument(fmt::format("--solver working-set: runs on the CPU only; DuHL on --device {} trains by "
                                      "coordinate descent (drop --solver working-set)",
                                      device_name(*o.device.device)));
  if (so.solver == SolverKind::working_set && !has_l1_part(p.model.penalty))
    throw InvalidArgument(fmt::format("--solver working-set: needs a penalty with an L1 part (l1 or elastic-net), not "
                                      "{}; use --solver auto",
                                      penalty_name(p.model.penalty)));
  forced_formulation(p.model, p.formulation);  // a formulation the model does not have
  if (so.solver == SolverKind::newton && p.formulation == FormulationRequest::dual)
    throw InvalidArgument("--solver newton: runs the primal formulation only; drop --formulation dual or choose "
                          "--solver sequential or syscd");
  // Options of one solver or device are checked whichever runs (an option that does not apply is still valid).
  if (so.bucket_size < 0)
    throw InvalidArgument(fmt::format("--bucket-size: must be >= 0 (0 = automatic), got {}", so.bucket_size));
  if (!valid_replica_sigma(so.replica_sigma))
    throw InvalidArgument(fmt::format("--replica-sigma: must be 0 (by loss) or a number >= 1, got {}", so.replica_sigma));
  check_link_bandwidth(o.device.backend.link_bandwidth_gbps);
  if (o.device.backend.tpa_concurrency < 0)
    throw InvalidArgument(fmt::format("--tpa-concurrency: must be 0 (sequential epochs) or positive, got {}",
                                      o.device.backend.tpa_concurrency));
  if (p.model.multinomial) {  // the Newton-CG solver of multinomial.hpp, on the CPU
    if (accel || !o.device.accel_memory.empty())
      throw UnsupportedDevice(fmt::format(
          "--model multinomial: trains on the CPU only (the Newton solvers of solvers/src/multinomial.cpp); the "
          "coordinate kernels of {} and DuHL's working sets are written for losses of one margin",
          !o.device.device || *o.device.device == Device::cpu
              ? std::string("the accelerators (--accel-memory)")
              : fmt::format("--device {}", device_name(*o.device.device))));
    if (so.solver != SolverKind::automatic && so.solver != SolverKind::newton)
      throw InvalidArgument(fmt::format("--solver {}: --model multinomial trains with its own Newton solvers only (use "
                                        "--solver auto or newton)",
                                        solver_kind_name(so.solver)));
  }
  check_duhl_epochs(o.device.duhl.epochs_per_round);
}

namespace {
/// The report of one weight column from its solver's result (label: the positive class, NaN for regression and the
/// multinomial model); moves the history, the stall message and, with keep_alpha (TrainOptions::keep_alpha), the
/// coordinate variables out of `sr` (else they go with `sr`).
ColumnReport column_report(double label, SolveResult& sr, bool keep_alpha) {
  ColumnReport cr;
  cr.label = label;
  cr.certificate = sr.certificate;
  cr.epochs = sr.epochs;
  cr.converged = sr.converged;
  cr.stalled = std::move(sr.stalled);
  cr.seconds = sr.seconds;
  cr.history = std::move(sr.history);
  if (keep_alpha) cr.alpha = std::move(sr.alpha);
  cr.screened = sr.screened;
  return cr;
}

/// --model multinomial (multinomial.hpp): the softmax loss over K > 2 classes, one weight column per class (classes
/// ascending, the layout of one-vs-rest models), trained together by the Newton-CG solver on the CPU. The model file
/// holds one certificate for the whole matrix: in the first column's primal / dual / gap, 0 in the others.
TrainResult train_multinomial(const Dataset& data, const CsrMatrix& X, const std::vector<double>& c, double lambda,
                              double eta, const TrainOptions& o, TrainResult res,
                              std::chrono::steady_clock::time_point t0) {
  const std::vector<double> uniq = class_labels(o.problem, data.y);
  if (uniq.size() < 3)
    throw InvalidArgument(fmt::format(
        "--model multinomial: needs more than two classes, found {} (with two, the softmax model is logistic "
        "regression{}: use --model logistic{})",
        uniq.size(),
        res.spec.penalty == Penalty::l2   ? " at twice the C"
        : res.spec.penalty == Penalty::l1 ? " at the same C"
                                          : " with another mix of the penalties",
        res.spec.penalty == Penalty::l2 ? "" : fmt::format(" --penalty {}", penalty_name(res.spec.penalty))));
  const std::vector<double> classes(uniq.begin(), uniq.end());
  const int K = static_cast<int>(classes.size());
  std::vector<int> y(data.y.size());
  for (std::size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<int>(std::lower_bound(classes.begin(), classes.end(), data.y[i]) - classes.begin());
  SolverOptions so = o.solver;
  so.solver = SolverKind::newton;
  if (!o.initial_alpha.empty()) {
    if (o.initial_alpha.size() != 1)
      throw InvalidArgument(fmt::format("warm start: {} columns for 1 weight matrix", o.initial_alpha.size()));
    so.initial_alpha = &o.initial_alpha[0];
  }
  if (o.on_epoch) so.on_epoch = [&](const EpochRecord& r) { o.on_epoch(0, std::numeric_limits<double>::quiet_NaN(), r); };
  SolveResult sr = solve_multinomial(X, y, K, c, lambda, res.spec.penalty, eta, so);
  res.formulation = Formulation::primal;
  res.formulation_reason = res.spec.penalty == Penalty::l2
                               ? "the multinomial model trains in the primal (Newton-CG)"
                               : "the multinomial model trains in the primal (proximal Newton)";
  res.solver = SolverKind::newton;
  LinearModel& model = res.model;
  model.labels = classes;
  model.nr_class = K;
  model.w = sr.w;
  model.primal.assign(static_cast<std::size_t>(K), 0.0);
  model.dual.assign(static_cast<std::size_t>(K), 0.0);
  model.gap.assign(static_cast<std::size_t>(K), 0.0);
  model.primal[0] = sr.certificate.primal;
  model.dual[0] = sr.certificate.dual;
  model.gap[0] = sr.certificate.gap;
  ColumnReport cr = column_report(std::numeric_limits<double>::quiet_NaN(), sr, o.keep_alpha);
  res.converged = sr.converged;
  res.interrupted = sr.interrupted;
  res.columns.push_back(std::move(cr));
  model.solver_type = solver_type_name(res.spec, Formulation::primal);
  model.nr_feature = data.n_features();
  model.bias = o.problem.bias;
  model.model = res.spec.name;
  model.penalty = penalty_name(res.spec.penalty);
  model.lambda = lambda;
  model.l1_ratio = eta;
  model.n_samples = data.n_samples();
  model.formulation = formulation_name(Formulation::primal);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}
}  // namespace

namespace {
/// The bytes in the device format (column_bytes) of all coordinates and of the largest one.
struct CoordinateBytes {
  std::size_t total = 0, largest = 0;
};
/// ... of coordinates that are the rows of A (data_bytes(A) and the largest column_bytes).
CoordinateBytes row_coordinate_bytes(const CsrMatrix& A) {
  CoordinateBytes b;
  for (index_t i = 0; i < A.n_rows; ++i) {
    const std::size_t c = column_bytes(A, i);
    b.total += c;
    b.largest = std::max(b.largest, c);
  }
  return b;
}
/// ... of coordinates that are the columns of X (the primal's of samples-as-rows data), without transposing it.
CoordinateBytes column_coordinate_bytes(const CsrMatrix& X) {
  std::vector<std::size_t> per(static_cast<std::size_t>(X.n_cols));
  std::size_t most = 0;
  for (const index_t j : X.indices) most = std::max(most, ++per[static_cast<std::size_t>(j)]);
  return {static_cast<std::size_t>(X.nnz()) * kBytesPerNonzero + per.size() * kBytesPerCoordinate,
          most * kBytesPerNonzero + kBytesPerCoordinate};
}

/// The smallest percentage, at 3 significant digits, whose budget (MemoryBudget::resolve) holds `bytes` of `total`.
double percent_holding(std::size_t bytes, std::size_t total) {
  const double p = 100.0 * double(bytes) / double(total);
  const double unit = std::pow(10.0, std::floor(std::log10(p)) - 2);
  return std::ceil(p / unit - 1e-9) * unit;
}

/// --accel-memory below the largest coordinate of the formulation that trains (DuHL needs room for one): the
/// error names the budget as given, the formulation, its largest column and the least budget that holds it, and
/// the other formulation where the model has it and the budget holds its largest column (solve_duhl's own check
/// says bytes only).
void check_accel_budget(const MemoryBudget& mb, std::size_t budget, const CsrMatrix& coords, Formulation f,
                        const CsrMatrix& X, bool both_forms, const std::string& requested_by) {
  const auto [total, largest] = row_coordinate_bytes(coords);
  if (budget >= largest) return;
  auto what = [](Formulation g) { return g == Formulation::primal ? "a feature" : "a sample"; };
  std::string msg =
      mb.percent > 0
          ? fmt::format("--accel-memory: {} of the {} formulation's {} bytes is {} bytes, smaller than its largest "
                        "column ({}: {} bytes); give at least {}% ({} bytes)",
                        mb.text.empty() ? fmt::format("{}%", mb.percent) : mb.text, formulation_name(f), total,
                        budget, what(f), largest, fmt::format("{:.3g}", percent_holding(largest, total)), largest)
          : fmt::format("--accel-memory: a budget of {} bytes is smaller than the largest column of the {} "
                        "formulation ({}: {} bytes); give at least {} bytes",
                        budget, formulation_name(f), what(f), largest, largest);
  const Formulation g = f == Formulation::primal ? Formulation::dual : Formulation::primal;
  if (both_forms && X.n_rows > 0) {  // (X is empty for by-feature data that trains the primal without rows)
    const CoordinateBytes other = g == Formulation::dual ? row_coordinate_bytes(X) : column_coordinate_bytes(X);
    // LIBLINEAR's -s N chose the formulation: its solver of the other one (-s 0 / 7, 2 / 1, 11 / 12), since -s and
    // --formulation together are refused.
    static constexpr std::pair<const char*, const char*> kTwins[] = {
        {"-s 0", "-s 7"}, {"-s 7", "-s 0"}, {"-s 2", "-s 1"}, {"-s 1", "-s 2"}, {"-s 11", "-s 12"}, {"-s 12", "-s 11"}};
    std::string way = fmt::format("--formulation {}", formulation_name(g));
    if (!requested_by.empty()) {
      way.clear();
      for (const auto& [from, to] : kTwins)
        if (requested_by == from) way = fmt::format("{} (the {} formulation)", to, formulation_name(g));
    }
    if (!way.empty() && mb.resolve(other.total) >= other.largest)
      msg += fmt::format(", or {}, whose largest column ({}: {} bytes) the budget holds", way, what(g), other.largest);
  }
  throw InvalidArgument(msg);
}
}  // namespace

TrainResult train(const Dataset& data, const TrainOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  TrainResult res;
  res.spec = o.problem.model;
  const ModelSpec& spec = res.spec;
  const ProblemOptions& po = o.problem;
  const CsrMatrix& X0 = data.X;  // samples as rows, or X^T for by-feature data (dataset.hpp)
  const index_t n_samples = data.n_samples();
  const std::string src = data.source.empty() ? std::string("training data") : "'" + data.source + "'";
  if (data.bias_included && (po.bias < 0 || data.by_feature || X0.n_cols < 1))
    throw InvalidArgument(fmt::format("{}: a bias column is included but the options ask for none (bias {}), or the "
                                      "data are stored by feature", src, po.bias));
  // The bias column: the caller's (Dataset::bias_included), or with_bias_column's copy below.
  const bool add_bias = po.bias >= 0 && !data.bias_included;
  // A bias that float32 does not hold (-B 0.1) keeps its remainder at a tol below kFloat64Tol, also on data whose
  // values float32 holds (bias_column), so that the fit and its certificate are those of the bias the model states.
  const bool bias_lo = o.solver.tol < kFloat64Tol && values_lo_of(po.bias) != 0.0f;
  if (n_samples == 0) throw InvalidArgument(fmt::format("{}: no samples to train on", src));
  if (data.y.size() != static_cast<std::size_t>(n_samples))
    throw InvalidArgument(fmt::format("{}: {} labels for {} samples", src, data.y.size(), n_samples));
  // Data, targets and weights within float range keep every sum of the objective and its dual finite in double
  // (squares of 3.4e38 are 1.2e77); beyond it, a target of 1e300 or a weight of 1e300 overflowed to a "numerical
  // failure" after training had started.
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  for (std::size_t i = 0; i < data.y.size(); ++i) {
    if (!std::isfinite(data.y[i])) throw InvalidArgument(fmt::format("{}: label of sample {} is not finite", src, i + 1));
    if (!spec.classifier && std::fabs(data.y[i]) > kFloatMax)
      throw InvalidArgument(fmt::format("{}: the target of sample {} is {:g}, out of float range (a regression "
                                        "target must be at most {:g} in magnitude)",
                                        src, i + 1, data.y[i], kFloatMax));
  }
  std::vector<double> c = po.sample_weight;
  if (c.empty()) c.assign(data.y.size(), 1.0);
  if (c.size() != data.y.size())
    throw InvalidArgument(fmt::format("sample weights: {} weights for {} samples", c.size(), data.y.size()));
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!(c[i] > 0 && std::isfinite(c[i]))) throw InvalidArgument("sample weights must be positive and finite");
    if (c[i] > kFloatMax)
      throw InvalidArgument(fmt::format("sample weights: the weight of sample {} is {:g}, out of float range (at "
                                        "most {:g})",
                                        i + 1, c[i], kFloatMax));
  }

  // Class weights (ProblemOptions::class_weights): the weight of each sample's class; with two classes and in the
  // multinomial model they multiply c_i here, in one-vs-rest each column's positives only (below).
  std::vector<double> class_w;
  if (!po.class_weights.empty()) {
    if (!spec.classifier)
      throw InvalidArgument(fmt::format("class weights apply to classifiers; --model {} is a regression", spec.name));
    for (const auto& [label, weight] : po.class_weights)
      if (!(weight > 0 && std::isfinite(weight)))
        throw InvalidArgument(fmt::format("class weights must be positive and finite, got {:g} for class {:g}",
                                          weight, label));
    class_w.assign(data.y.size(), 1.0);
    for (std::size_t i = 0; i < class_w.size(); ++i)
      for (const auto& [label, weight] : po.class_weights)
        if (data.y[i] == label) class_w[i] = weight;
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i] * class_w[i] > kFloatMax)
        throw InvalidArgument(fmt::format("sample weights x class weights: sample {} has weight {:g}, out of float "
                                          "range (at most {:g})",
                                          i + 1, c[i] * class_w[i], kFloatMax));
  }
  // One-vs-rest (more than two classes, not multinomial) weights each column's positives only.
  const bool ovr_weights = !class_w.empty() && !spec.multinomial && class_labels(po, data.y).size() > 2;
  if (!class_w.empty() && !ovr_weights)
    for (std::size_t i = 0; i < c.size(); ++i) c[i] *= class_w[i];

  const double lambda = resolve_lambda(spec, po.C, po.lambda, n_samples);
  res.lambda = lambda;
  const double eta = l1_share(spec.penalty, po.l1_ratio);
  check_memory(data, o, spec, data.y, add_bias);
  // `auto` that finds no accelerator means the CPU solver itself, exactly as --device cpu (docs/conventions.md, "Devices").
  Device device = Device::cpu;
  if (o.device.device) {
    device = *o.device.device;
  } else if (spec.multinomial) {  // check_options() refused every accelerator for it
    res.device_reason = "--model multinomial trains on the CPU only";
  } else {
    std::string why;
    device = resolve_device("auto", &why);
    res.device_reason = why;
  }
  const bool use_accel = device != Device::cpu || !o.device.accel_memory.empty();
  if (spec.multinomial) {  // samples as rows with the bias column (by-feature data transposed back)
    const CsrMatrix rows = data.by_feature ? transpose(X0) : CsrMatrix();
    const CsrMatrix& Xr = data.by_feature ? rows : X0;
    if (!add_bias) return train_multinomial(data, Xr, c, lambda, eta, o, std::move(res), t0);
    return train_multinomial(data, bias_column(Xr, po.bias, bias_lo), c, lambda, eta, o, std::move(res), t0);
  }
  if (o.solver.solver == SolverKind::newton && use_accel)
    throw InvalidArgument(fmt::format("--solver newton: runs on the CPU only; DuHL on --device {} trains by coordinate "
                                      "descent (drop --solver newton)", device_name(device)));
  // Labels: binary -> the larger label is the positive class; k > 2 -> one-vs-rest, ascending.
  LinearModel& model = res.model;
  std::vector<double> positives;  // positive class of each weight column
  if (spec.classifier) {
    const std::vector<double> uniq = class_labels(o.problem, data.y);
    if (uniq.size() < 2)
      throw InvalidArgument(fmt::format("{}: all samples have the same label {}; a classifier needs two classes", src,
                                        *uniq.begin()));
    positives = set_class_labels(model, std::vector<double>(uniq.begin(), uniq.end()));
  } else {
    model.nr_class = 2;
    positives = {std::numeric_limits<double>::quiet_NaN()};
  }

  // The primal runs the Newton solver when asked, or under --solver auto for the smooth losses with the L2 penalty
  // (auto_newton_loss; the Lasso and elastic net run the working-set solver).
  const bool newton_loss = auto_newton_loss(spec);
  const bool primal_newton =
      !use_accel && (o.solver.solver == SolverKind::newton || (o.solver.solver == SolverKind::automatic && newton_loss));
  // Samples as rows: the caller's matrix; for by-feature data a transposed copy, made only when something needs rows
  // (the bias column, a formulation that is not forced to the primal or its estimate, the Newton solver); the
  // primal coordinate-descent solvers then use the caller's X^T as it is. The bias column needs a copy of the data;
  // without it the caller's matrix is used as it is.
  const std::optional<Formulation> forced = forced_formulation(spec, po.formulation);
  const bool rows_needed =
      !data.by_feature || po.bias >= 0 || !(forced && *forced == Formulation::primal) || primal_newton;
  CsrMatrix X_rows, X_bias;
  if (data.by_feature && rows_needed) X_rows = transpose(X0);
  const CsrMatrix& Xs = data.by_feature ? X_rows : X0;  // empty when by-feature rows are not needed
  if (add_bias) X_bias = bias_column(Xs, po.bias, bias_lo);
  const CsrMatrix& X = add_bias ? X_bias : Xs;
  const auto t_formulation = std::chrono::steady_clock::now();
  const FormulationChoice choice = resolve_formulation(o, spec, X, data.y, positives[0], c, lambda, eta, primal_newton);
  res.formulation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_formulation).count();
  const Formulation form_kind = choice.formulation;
  res.formulation = form_kind;
  res.formulation_reason = choice.reason;

  // The solver that runs: auto -> newton for the primal of logistic / squared hinge / ridge, else sequential on one thread
  // or for a small hinge problem, and syscd otherwise (auto_cd_solver, train.hpp).
  // The Lasso and elastic net (squared loss, L1 part) train with the working-set solver (working_set.hpp).
  SolverKind solver = o.solver.solver;
  if (solver == SolverKind::automatic)
    solver = form_kind == Formulation::primal && primal_newton ? SolverKind::newton
             : form_kind == Formulation::primal && !use_accel && spec.loss == Loss::squared &&
                     has_l1_part(spec.penalty) && eta > 0
                 ? SolverKind::working_set
                 : auto_cd_solver(o.solver.n_threads, spec.loss, X0.nnz());
  res.solver = use_accel ? SolverKind::automatic : solver;

  ProblemData pd;
  pd.X = &X;
  CsrMatrix Xt;
  // The Newton solver with an L2 penalty works from the rows alone (newton.hpp): no transposed copy then.
  const bool rows_only = !use_accel && solver == SolverKind::newton && spec.penalty == Penalty::l2 &&
                         newton_rows_only(X);
  if (form_kind == Formulation::primal && rows_only) {
    // pd.Xt stays null: PrimalForm then describes the problem without its coordinate matrix.
  } else if (form_kind == Formulation::primal) {
    if (data.by_feature && po.bias < 0) {
      pd.Xt = &X0;  // the caller's X^T
    } else {
      Xt = transpose(X);
      pd.Xt = &Xt;
    }
  } else {
    pd.row_sq_norm = row_sq_norms(X);
  }

  // A path's points share X^T and the weights: the form's column curvatures once (PathCache).
  PathCache* path_cache = o.solver.path_cache.get();
  if (path_cache && pd.Xt && !ovr_weights) {  // (one-vs-rest class weights: every column has its own weights)
    const PathCache::MatrixId id = PathCache::MatrixId::of(*pd.Xt);
    if (!(path_cache->curvature_x == id && path_cache->curvature_c == c)) {
      path_cache->curvature = primal_column_curvature(*pd.Xt, c.data());
      path_cache->curvature_x = id;
      path_cache->curvature_c = c;
    }
    pd.column_curvature = &path_cache->curvature;
  }

  const int ncol = static_cast<int>(positives.size());
  const index_t nrows_w = pd.Xt ? pd.Xt->n_rows : X.n_cols;
  model.w.assign(static_cast<std::size_t>(nrows_w) * ncol, 0.0);
  // DuHL on an accelerator when a device or a budget is asked for (duhl.hpp); the budget's 100% is the bytes of
  // every coordinate of the chosen formulation in the device format.
  std::unique_ptr<Backend> accel;
  if (use_accel) {
    BackendOptions bo = o.device.backend;
    const CsrMatrix& coords = form_kind == Formulation::primal ? *pd.Xt : X;
    if (!o.device.accel_memory.empty()) bo.memory_budget = o.device.accel_memory.resolve(data_bytes(coords));
    accel = make_backend(device_name(device), bo);  // first: a device that is missing says so before the budget
    if (!o.device.accel_memory.empty())
      check_accel_budget(o.device.accel_memory, bo.memory_budget, coords, form_kind, X,
                         !forced_formulation(spec, FormulationRequest::automatic), po.formulation_requested_by);
    res.device = accel->description();
  }
  res.converged = true;
  std::vector<double> c_col;  // one-vs-rest class weights: this column's c (its positives weighted)
  for (int k = 0; k < ncol && !res.interrupted; ++k) {
    std::vector<double> y(data.y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = spec.classifier ? (data.y[i] == positives[k] ? 1.0 : -1.0) : data.y[i];
    if (ovr_weights) {
      c_col = c;
      for (std::size_t i = 0; i < c_col.size(); ++i)
        if (y[i] > 0) c_col[i] *= class_w[i];
    }
    const std::vector<double>& cw = ovr_weights ? c_col : c;
    SolverOptions so = o.solver;
    so.solver = solver;
    if (!o.initial_alpha.empty()) {
      if (o.initial_alpha.size() != static_cast<std::size_t>(ncol))
        throw InvalidArgument(fmt::format("warm start: {} columns for {} weight columns", o.initial_alpha.size(), ncol));
      so.initial_alpha = &o.initial_alpha[static_cast<std::size_t>(k)];
    }
    if (o.on_epoch) so.on_epoch = [&, k](const EpochRecord& r) { o.on_epoch(k, positives[k], r); };
    // DuHL (duhl.hpp): the per-round records go to the column report.
    std::vector<DuhlRound> duhl_rounds;
    auto run_duhl = [&](const auto& f) -> SolveResult {
      DuhlResult dr = solve_duhl(f, *accel, so, o.device.duhl);
      duhl_rounds = std::move(dr.rounds);
      return std::move(static_cast<SolveResult&>(dr));
    };
    SolveResult sr = with_form(spec, form_kind, [&]<class Form>() {
      auto solve = [&](const Form& f) {
        if (accel) return run_duhl(f);
        if constexpr (Form::formulation == Formulation::primal) {
          if (so.solver == SolverKind::newton) return solve_primal_newton(f, X, so);
          if (so.solver == SolverKind::working_set) return solve_working_set(f, so);
        }
        return so.solver == SolverKind::sequential ? solve_sequential(f, so) : solve_parallel_cpu(f, so);
      };
      auto make = [&] {
        if constexpr (Form::formulation == Formulation::dual) return Form(pd, y.data(), cw.data(), lambda);
        else return Form(pd, y.data(), cw.data(), lambda, eta);
      };
      Form f = make();
      // float64 data at tol < kFloat64Tol: the host coordinate-descent solvers and DuHL's host side (its merge, gap
      // memory, CPU unit and certificate; the accelerator steps on its float32 columns) read the float64 values (the
      // Newton and working-set solvers decide that themselves).
      if (accel || (so.solver != SolverKind::newton && so.solver != SolverKind::working_set))
        read_float64_values(f, so.tol);
      return solve(f);
    });
    for (index_t j = 0; j < nrows_w; ++j) model.w[static_cast<std::size_t>(j) * ncol + k] = sr.w[j];
    ColumnReport cr = column_report(positives[k], sr, o.keep_alpha);
    cr.rounds = std::move(duhl_rounds);
    res.converged = res.converged && sr.converged;
    res.interrupted = res.interrupted || sr.interrupted;
    model.primal.push_back(sr.certificate.primal);
    model.dual.push_back(sr.certificate.dual);
    model.gap.push_back(sr.certificate.gap);
    res.columns.push_back(std::move(cr));
  }

  model.solver_type = solver_type_name(spec, form_kind);
  model.nr_feature = data.n_features();
  model.bias = po.bias;
  model.model = spec.name;
  model.penalty = penalty_name(spec.penalty);
  model.lambda = lambda;
  model.l1_ratio = eta;
  model.n_samples = n_samples;
  model.formulation = formulation_name(form_kind);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace hetglm
