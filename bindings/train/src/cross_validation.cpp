// SPDX-License-Identifier: Apache-2.0
// Cross-validation and the warm-started search of C (cross_validation.hpp): folds are sub-datasets trained by
// train() side by side in the caller's oneTBB arena.
#include "hetglm/cross_validation.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>

#include "hetglm/error.hpp"
#include "hetglm/memory.hpp"
#include "hetglm/model.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/train.hpp"

namespace hetglm {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A fold: its training and test rows, and (once built, build_fold) its sub-datasets. -C builds every fold's once
/// (the C path reuses them at every C); -v builds a fold's when it trains and drops it after, so that the folds
/// not training keep no copy of the data (LIBLINEAR builds its folds' subproblems the same way).
struct Fold {
  std::vector<index_t> train_rows, test_rows;
  Dataset train;
  std::vector<double> sample_weight;  ///< empty when the caller gave none
  CsrMatrix test_X;
};

std::vector<Fold> fold_rows(const Dataset& data, const std::vector<int>& fold_of, int n_folds) {
  std::vector<Fold> folds(static_cast<std::size_t>(n_folds));
  for (index_t i = 0; i < data.X.n_rows; ++i)
    for (int f = 0; f < n_folds; ++f)
      (fold_of[i] == f ? folds[f].test_rows : folds[f].train_rows).push_back(i);
  for (int f = 0; f < n_folds; ++f)
    folds[f].train.source = data.source.empty() ? fmt::format("fold {} of {}", f + 1, n_folds)
                                                : fmt::format("{} (fold {} of {})", data.source, f + 1, n_folds);
  return folds;
}

/// v[i] for the rows i listed (empty when v is).
std::vector<double> at_rows(const std::vector<double>& v, const std::vector<index_t>& rows) {
  std::vector<double> out;
  if (v.empty()) return out;
  out.reserve(rows.size());
  for (index_t i : rows) out.push_back(v[static_cast<std::size_t>(i)]);
  return out;
}

/// Fold `fo`'s sub-datasets: its training rows (labels, weights) and its test rows.
void build_fold(const Dataset& data, const std::vector<double>& sample_weight, Fold& fo) {
  fo.train.X = select_rows(data.X, fo.train_rows);
  fo.train.y = at_rows(data.y, fo.train_rows);
  fo.sample_weight = at_rows(sample_weight, fo.train_rows);
  fo.test_X = select_rows(data.X, fo.test_rows);
}

/// Frees what build_fold made (its source name stays). `v = {}` would keep a vector's capacity: each is replaced.
void drop_fold(Fold& fo) {
  fo.train.X = CsrMatrix();
  fo.train.y = std::vector<double>();
  fo.sample_weight = std::vector<double>();
  fo.test_X = CsrMatrix();
}

/// Accuracy, or MSE and squared correlation (LIBLINEAR's formulas), of `pred` against `y` over `rows` (all rows when
/// empty).
CvScore score_of(bool classifier, const std::vector<double>& y, const std::vector<double>& pred,
                 const std::vector<index_t>* rows) {
  CvScore s;
  s.classifier = classifier;
  const std::size_t n = rows ? rows->size() : y.size();
  s.n = static_cast<std::int64_t>(n);
  double sv = 0, sy = 0, svv = 0, syy = 0, svy = 0, se = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = rows ? static_cast<std::size_t>((*rows)[k]) : k;
    const double v = rows ? pred[k] : pred[i], t = y[i];
    if (classifier) {
      s.correct += v == t;
    } else {
      se += (v - t) * (v - t);
      sv += v, sy += t, svv += v * v, syy += t * t, svy += v * t;
    }
  }
  if (n == 0) return s;
  const double l = static_cast<double>(n);
  if (classifier) {
    s.accuracy = static_cast<double>(s.correct) / l;
  } else {
    s.mse = se / l;
    const double den = (l * svv - sv * sv) * (l * syy - sy * sy);
    s.squared_correlation = den > 0 ? (l * svy - sv * sy) * (l * svy - sv * sy) / den : 0.0;
  }
  return s;
}

/// How many of the k folds may train at once (at most `most`) within the memory train() would check (the memory
/// limit of the options, else what is available): per fold training at once, its copy of the data (its training
/// and test rows: the matrix once) and train()'s estimate on (k - 1) / k of the data; with `search` (-C) every
/// fold's copy at once, and the warm starts it keeps for every fold and weight column. Folds trained in parallel each
/// passed train()'s check for one fold and together went past the limit (multinomial, 500 classes,
/// `--memory-limit 300M -v 3`: 347 MB). Throws InvalidArgument when one fold at a time does not fit either.
int fold_memory(const Dataset& data, const TrainOptions& o, int k, int fold_threads, int most, bool search) {
  const double limit = o.memory_limit > 0 ? double(o.memory_limit) : double(memory_limit_bytes());
  if (!(limit > 0)) return most;  // unknown
  TrainOptions fo = o;
  fo.solver.n_threads = fold_threads;
  fo.keep_alpha = search;  // (run_fold: -C's warm starts; -v keeps none)
  const double train_part = double(k - 1) / k;
  const double fold = training_memory_bytes(data, fo, train_part);
  const CsrMatrix& X = data.X;
  const double copy = double(X.nnz()) * (sizeof(float) * (X.has_lo() ? 2 : 1) + sizeof(index_t)) +
                      (double(X.n_rows) + 2) * sizeof(offset_t) + double(data.y.size()) * 2 * sizeof(double);
  double kept = 0;  // -C: every fold's copy and warm starts
  if (search) {
    const ModelSpec& spec = o.problem.model;
    const double classes = spec.classifier ? double(class_labels(o.problem, data.y).size()) : 1.0;
    const double n_train = double(data.n_samples()) * train_part, d = double(data.n_features()) + 1;
    const double warm = spec.multinomial ? classes * d : (classes > 2 ? classes : 1.0) * std::max(n_train, d);
    kept = k * (copy + warm * sizeof(double));
  }
  auto need = [&](int c) { return kept + c * (fold + (search ? 0.0 : copy)); };
  for (int c = most; c >= 1; --c)
    if (need(c) <= limit) return c;
  throw InvalidArgument(fmt::format(
      "cross-validation needs about {} of memory ({} for training one fold of {} samples, {} for {}), more than {}",
      format_bytes(static_cast<std::uint64_t>(need(1))), format_bytes(static_cast<std::uint64_t>(fold)),
      static_cast<std::int64_t>(double(data.n_samples()) * train_part),
      format_bytes(static_cast<std::uint64_t>(search ? kept : copy)),
      search ? fmt::format("the {} folds' copies of the data and their warm starts (-C)", k)
             : std::string("the fold's copy of the data"),
      o.memory_limit > 0 ? fmt::format("the memory limit of {} (--memory-limit)", format_bytes(o.memory_limit))
                         : fmt::format("the {} available", format_bytes(static_cast<std::uint64_t>(limit)))));
}

/// Shared set-up of cross_validate and search_C.
struct Plan {
  std::vector<int> fold_of;
  std::vector<Fold> folds;
  int n_folds = 0;
  int fold_threads = 1;
  bool parallel = true;
  int at_once = 1;  ///< folds that train at the same time (parallel: as many as the memory holds, at most T)
  bool memory_bound = false;  ///< at_once lowered by the memory
  FoldKind kind = FoldKind::liblinear;
  /// Classifiers: the data's classes, which every fold trains (ProblemOptions::classes), also a fold whose training
  /// part lacks one: a rare class held out by its fold stopped -v and -C ("all samples have the same label"),
  /// where LIBLINEAR trains such a fold on the classes it has (a class without samples is never predicted).
  std::vector<double> classes;
};

Plan make_plan(const Dataset& data, const TrainOptions& o, const CvOptions& cv, bool search) {
  check_options(o);  // the option errors first, with train()'s messages
  if (data.X.n_rows == 0)
    throw InvalidArgument(fmt::format("{}: no samples to cross-validate on",
                                      data.source.empty() ? std::string("training data") : "'" + data.source + "'"));
  if (data.y.size() != static_cast<std::size_t>(data.X.n_rows))
    throw InvalidArgument(fmt::format("cross-validation: {} labels for {} samples", data.y.size(), data.X.n_rows));
  if (!o.problem.sample_weight.empty() && o.problem.sample_weight.size() != data.y.size())
    throw InvalidArgument(fmt::format("sample weights: {} weights for {} samples", o.problem.sample_weight.size(),
                                      data.y.size()));
  if (!o.initial_alpha.empty())
    throw InvalidArgument("cross-validation: TrainOptions::initial_alpha is per fold; leave it empty");
  Plan p;
  p.n_folds = cv.n_folds;
  p.kind = resolve_fold_kind(cv.folds, o);
  // One accelerator cannot train several folds at once: with DuHL the folds run one after another.
  const bool accel = o.device.device && (*o.device.device != Device::cpu || !o.device.accel_memory.empty());
  p.parallel = !accel;
  const int T = o.solver.n_threads > 0 ? o.solver.n_threads : std::max(1, tbb::this_task_arena::max_concurrency());
  p.fold_threads = cv.fold_threads > 0 ? cv.fold_threads : p.parallel ? std::max(1, T / cv.n_folds) : T;
  const int most = p.parallel ? std::min(cv.n_folds, T) : 1;
  p.at_once = fold_memory(data, o, cv.n_folds, p.fold_threads, most, search);
  p.memory_bound = p.at_once < most;
  if (o.problem.model.classifier && o.problem.classes.empty()) p.classes = distinct_labels(data.y);
  p.fold_of = make_folds(data.y, p.kind, cv.n_folds, cv.seed);
  p.folds = fold_rows(data, p.fold_of, cv.n_folds);
  // The multinomial model needs more than two classes in every training part; a rare class held out by its fold
  // left two, and train()'s "needs more than two classes, found 2" named neither the fold nor the class.
  if (o.problem.model.multinomial) {
    const std::vector<double> all = distinct_labels(data.y);
    for (const Fold& fo : p.folds) {
      const std::vector<double> here = distinct_labels(at_rows(data.y, fo.train_rows));
      if (here.size() >= 3 || all.size() < 3) continue;  // (fewer than 3 in the data: train()'s own error)
      std::vector<double> missing;
      std::set_difference(all.begin(), all.end(), here.begin(), here.end(), std::back_inserter(missing));
      const auto count = std::count(data.y.begin(), data.y.end(), missing.front());
      throw InvalidArgument(fmt::format(
          "'{}': --model multinomial: the training part holds {} of the data's {} classes (class {:g}, with {} "
          "sample{} in the data, is all in this fold's test part); use fewer folds, or --model logistic "
          "(one-vs-rest)",
          fo.train.source, here.size(), all.size(), missing.front(), count, count == 1 ? "" : "s"));
    }
  }
  if (search)
    tbb::parallel_for(0, p.n_folds, [&](int f) { build_fold(data, o.problem.sample_weight, p.folds[f]); });
  return p;
}

/// Train fold f with `o` (C, warm start and formulation already set by the caller) and predict its held-out rows.
struct FoldRun {
  TrainResult result;
  std::vector<double> pred;  ///< per test row of the fold
  double seconds = 0;
};

FoldRun run_fold(const Fold& fold, TrainOptions o, int fold_threads, bool keep_alpha,
                 const std::vector<double>& classes) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!classes.empty()) o.problem.classes = classes;
  o.keep_alpha = keep_alpha;  // -C's warm starts
  o.on_epoch = nullptr;
  o.problem.sample_weight = fold.sample_weight;
  o.solver.n_threads = fold_threads;
  FoldRun r;
  try {
    r.result = train(fold.train, o);
  } catch (const InvalidArgument& e) {  // train()'s budget check saw one fold's training part: say so
    static constexpr std::string_view kBudget = "--accel-memory: ";
    const std::string_view what = e.what();
    if (what.substr(0, kBudget.size()) != kBudget) throw;
    throw InvalidArgument(fmt::format("--accel-memory: in cross-validation each fold's training part resolves the "
                                      "budget and has its own largest column, so another fold may need more; the "
                                      "first that failed: {}",
                                      what.substr(kBudget.size())));
  }
  r.pred = predict(r.result.model, fold.test_X);
  r.seconds = seconds_since(t0);
  return r;
}

template <class F>
void for_each_fold(const Plan& p, const F& f) {
  if (p.parallel)
    for (int first = 0; first < p.n_folds; first += p.at_once)  // p.at_once folds at a time (fold_memory)
      tbb::parallel_for(first, std::min(p.n_folds, first + p.at_once), [&](int k) { f(k); });
  else
    for (int k = 0; k < p.n_folds; ++k) f(k);
}

int max_epochs_of(const TrainResult& r) {
  int e = 0;
  for (const ColumnReport& c : r.columns) e = std::max(e, c.epochs);
  return e;
}

}  // namespace

CvScore score_predictions(bool classifier, const std::vector<double>& y, const std::vector<double>& pred) {
  return score_of(classifier, y, pred, nullptr);
}

const char* fold_kind_name(FoldKind kind) {
  switch (kind) {
    case FoldKind::liblinear: return "liblinear";
    case FoldKind::stratified: return "stratified";
    case FoldKind::random: return "random";
  }
  return "?";
}

FoldKind parse_fold_kind(const std::string& name) {
  for (FoldKind k : {FoldKind::liblinear, FoldKind::stratified, FoldKind::random})
    if (name == fold_kind_name(k)) return k;
  throw InvalidArgument(
      fmt::format("--folds: unknown value '{}' (expected liblinear, stratified or random)", name));
}

FoldKind resolve_fold_kind(const std::optional<FoldKind>& requested, const TrainOptions& o) {
  const bool classifier = o.problem.model.classifier;
  const FoldKind kind = requested ? *requested : classifier ? FoldKind::stratified : FoldKind::random;
  if (kind == FoldKind::stratified && !classifier)
    throw InvalidArgument(fmt::format("--folds stratified: --model {} is a regression (no classes to stratify); use "
                                      "--folds random or --folds liblinear",
                                      o.problem.model.name));
  return kind;
}

std::vector<int> make_folds(const std::vector<double>& y, FoldKind kind, int n_folds, std::uint64_t seed) {
  const std::size_t n = y.size();
  if (n_folds < 2) throw InvalidArgument(fmt::format("-v: n-fold cross-validation needs n >= 2, got {}", n_folds));
  if (static_cast<std::size_t>(n_folds) > n)
    throw InvalidArgument(fmt::format("-v: {} folds for {} samples: at most one fold per sample", n_folds, n));
  std::vector<int> fold(n, 0);
  // perm cut into n_folds parts: fold k is perm[k n / n_folds .. (k + 1) n / n_folds) (LIBLINEAR's fold_start).
  const auto cut = [&](const std::vector<index_t>& perm) {
    const std::size_t F = static_cast<std::size_t>(n_folds);
    for (std::size_t f = 0; f < F; ++f)
      for (std::size_t k = f * n / F; k < (f + 1) * n / F; ++k) fold[perm[k]] = static_cast<int>(f);
  };
  if (kind == FoldKind::liblinear) {
    // LIBLINEAR: for(i=0;i<l;i++) { j = i+rand()%(l-i); swap(perm[i],perm[j]); } with rand() after srand(1).
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw InvalidArgument(fmt::format("--folds liblinear: {} samples; LIBLINEAR's split counts them in an int", n));
    GlibcRandom glibc_rand(1);
    std::vector<index_t> perm(n);
    for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<index_t>(i);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(glibc_rand.next() % static_cast<int>(n - i));
      std::swap(perm[i], perm[j]);
    }
    cut(perm);
    return fold;
  }
  SplitMix64 rng(seed);
  if (kind == FoldKind::stratified) {
    std::map<double, std::vector<index_t>> by_class;
    for (std::size_t i = 0; i < n; ++i) by_class[y[i]].push_back(static_cast<index_t>(i));
    std::size_t next = 0;  // dealing continues across classes, so fold sizes differ by at most one
    for (auto& [label, rows] : by_class) {
      shuffle(std::span<index_t>(rows), rng);
      for (index_t i : rows) fold[i] = static_cast<int>(next++ % static_cast<std::size_t>(n_folds));
    }
  } else {
    std::vector<index_t> perm(n);
    for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<index_t>(i);
    shuffle(std::span<index_t>(perm), rng);
    cut(perm);
  }
  return fold;
}

CvResult cross_validate(const Dataset& data, const TrainOptions& o, const CvOptions& cv) {
  const auto t0 = std::chrono::steady_clock::now();
  Plan p = make_plan(data, o, cv, false);
  CvResult res;
  res.n_folds = p.n_folds;
  res.seed = cv.seed;
  res.fold_kind = p.kind;
  res.fold = p.fold_of;
  res.fold_threads = p.fold_threads;
  res.parallel = p.parallel;
  res.folds_at_once = p.at_once;
  res.memory_bound = p.memory_bound;
  res.predictions.assign(data.y.size(), 0.0);
  res.folds.resize(static_cast<std::size_t>(p.n_folds));
  std::vector<int> interrupted(static_cast<std::size_t>(p.n_folds), 0);
  for_each_fold(p, [&](int f) {
    Fold& fold = p.folds[f];
    build_fold(data, o.problem.sample_weight, fold);  // only the folds training hold a copy
    FoldRun r = run_fold(fold, o, p.fold_threads, false, p.classes);
    drop_fold(fold);
    for (std::size_t k = 0; k < fold.test_rows.size(); ++k) res.predictions[fold.test_rows[k]] = r.pred[k];
    FoldReport& fr = res.folds[f];
    fr.n_train = static_cast<std::int64_t>(fold.train_rows.size());
    fr.n_test = static_cast<std::int64_t>(fold.test_rows.size());
    fr.score = score_of(o.problem.model.classifier, data.y, r.pred, &fold.test_rows);
    fr.epochs = max_epochs_of(r.result);
    fr.converged = r.result.converged;
    fr.seconds = r.seconds;
    fr.formulation = r.result.formulation;
    fr.solver = r.result.solver;
    interrupted[f] = r.result.interrupted;
  });
  for (int f = 0; f < p.n_folds; ++f) {
    res.converged = res.converged && res.folds[f].converged;
    res.interrupted = res.interrupted || interrupted[f];
  }
  res.score = score_of(o.problem.model.classifier, data.y, res.predictions, nullptr);
  res.seconds = seconds_since(t0);
  return res;
}

double default_start_C(const Dataset& data, const TrainOptions& o, double c_factor) {
  const double bias = o.problem.bias;
  double max_xtx = 0;
  for (index_t i = 0; i < data.X.n_rows; ++i) {
    double s = bias >= 0 ? bias * bias : 0.0;
    for (offset_t k = data.X.offsets[i]; k < data.X.offsets[i + 1]; ++k) s += double(data.X.values[k]) * data.X.values[k];
    max_xtx = std::max(max_xtx, s);
  }
  const double n = static_cast<double>(data.X.n_rows);
  if (!(max_xtx > 0) || n == 0) return 1.0;
  double c0 = 0;  // in hetglm's units (problem C)
  const Loss loss = o.problem.model.loss;
  if (o.problem.model.classifier) {
    c0 = (loss == Loss::squared_hinge ? 0.5 : 1.0) / (n * max_xtx);
  } else {
    // LIBLINEAR's SVR rule at p = 0 (in its units: hetglm's C is twice LIBLINEAR's SVR C).
    double sum_abs = 0, sum_sq = 0;
    for (double t : data.y) sum_abs += std::fabs(t), sum_sq += t * t;
    if (!(sum_sq > 0)) return 1.0;
    c0 = 2 * 0.1 * 0.1 * sum_sq / (8 * sum_abs * sum_abs * max_xtx);
  }
  return std::pow(2.0, std::floor(std::log2(c0 / c_factor)));
}

CPathResult search_C(const Dataset& data, const TrainOptions& o, const CvOptions& cv, const CPathOptions& path) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.problem.lambda)
    throw InvalidArgument("-C: the search sets C (lambda = 1/(C n)) along its path; drop --lambda");
  if (!(path.ratio > 1 && std::isfinite(path.ratio)))
    throw InvalidArgument(fmt::format("-C: the ratio between consecutive C must be above 1, got {}", path.ratio));
  if (!(path.c_factor > 0 && std::isfinite(path.c_factor)))
    throw InvalidArgument(fmt::format("-C: c_factor must be a positive number, got {}", path.c_factor));
  const Plan p = make_plan(data, o, cv, true);
  const bool classifier = o.problem.model.classifier;
  double C = path.start_C ? *path.start_C : default_start_C(data, o, path.c_factor);
  const double max_C = path.max_C ? *path.max_C : classifier ? 1024.0 : 1048576.0;
  if (!(C > 0 && std::isfinite(C))) throw InvalidArgument(fmt::format("-C: the first C must be positive, got {}", C));
  const bool above = C > max_C;
  C = std::min(C, max_C);

  CPathResult res;
  res.max_C = max_C;
  res.start_above_max = above;
  res.n_folds = p.n_folds;
  res.seed = cv.seed;
  res.fold_kind = p.kind;
  res.fold_threads = p.fold_threads;
  res.parallel = p.parallel;
  res.folds_at_once = p.at_once;
  res.memory_bound = p.memory_bound;
  const std::size_t F = static_cast<std::size_t>(p.n_folds);
  std::vector<std::vector<std::vector<double>>> alpha(F);  // per fold, per weight column: the warm start
  std::vector<std::vector<double>> prev_w(F);
  std::vector<std::optional<Formulation>> formulation(F);
  std::vector<double> predictions(data.y.size(), 0.0);
  int unchanged = 0;  // LIBLINEAR's num_unchanged_w: -1 after a step in which some fold's w moved
  bool first = true;
  for (;;) {
    const auto ts = std::chrono::steady_clock::now();
    CPathStep step;
    step.C = C;
    step.warm = !first;
    std::vector<int> moved(F, 0), epochs(F, 0), converged(F, 1), interrupted(F, 0);
    std::vector<SolverKind> solver(F, SolverKind::automatic);
    for_each_fold(p, [&](int f) {
      TrainOptions fo = o;
      fo.problem.C = path.c_factor * C;
      fo.problem.lambda.reset();
      if (formulation[f])  // keep the formulation of the first C so that the warm start fits
        fo.problem.formulation =
            *formulation[f] == Formulation::primal ? FormulationRequest::primal : FormulationRequest::dual;
      fo.initial_alpha = std::move(alpha[f]);
      FoldRun r = run_fold(p.folds[f], std::move(fo), p.fold_threads, true, p.classes);
      const Fold& fold = p.folds[f];
      for (std::size_t k = 0; k < fold.test_rows.size(); ++k) predictions[fold.test_rows[k]] = r.pred[k];
      formulation[f] = r.result.formulation;
      alpha[f].clear();
      for (ColumnReport& c : r.result.columns) alpha[f].push_back(std::move(c.alpha));
      const std::vector<double>& w = r.result.model.w;
      if (!prev_w[f].empty() && prev_w[f].size() == w.size()) {
        double d2 = 0;
        for (std::size_t j = 0; j < w.size(); ++j) d2 += (w[j] - prev_w[f][j]) * (w[j] - prev_w[f][j]);
        moved[f] = std::sqrt(d2) > 1e-15;
      } else {
        moved[f] = 1;
      }
      // An all-zero w (an L1 penalty below the C at which the first feature enters) is the start of the path, not
      // its end: it never counts as unchanged.
      if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; })) moved[f] = 1;
      prev_w[f] = w;
      epochs[f] = max_epochs_of(r.result);
      solver[f] = r.result.solver;
      converged[f] = r.result.converged;
      interrupted[f] = r.result.interrupted;
    });
    for (std::size_t f = 0; f < F; ++f) {
      step.epochs = std::max(step.epochs, epochs[f]);
      step.converged = step.converged && converged[f];
      res.interrupted = res.interrupted || interrupted[f];
    }
    if (res.interrupted) break;
    if (first && F > 0) res.solver = solver[0];
    step.score = score_of(classifier, data.y, predictions, nullptr);
    step.seconds = seconds_since(ts);
    if (first || step.score.better_than(res.best)) {
      res.best = step.score;
      res.best_C = C;
    }
    // LIBLINEAR (find_parameter_C): the first C only records w; afterwards a step in which some fold's w moved resets
    // the count, and 5 steps in a row without any change end the search.
    if (!first && std::count(moved.begin(), moved.end(), 1) > 0) unchanged = -1;
    res.path.push_back(step);
    if (path.on_step) path.on_step(step);
    first = false;
    ++unchanged;
    if (unchanged == 5) {
      res.stop_reason = "w unchanged for 5 values of C";
      break;
    }
    const double next = C * path.ratio;
    if (!(next <= max_C)) {
      res.stop_reason = "maximum C reached";
      break;
    }
    C = next;
  }
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace hetglm
