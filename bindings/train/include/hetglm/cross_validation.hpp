// SPDX-License-Identifier: Apache-2.0
// n-fold cross-validation and the search of C along a warm-started path (LIBLINEAR's `train -v n` and `train -C`),
// built on train() (train.hpp): each fold is a sub-dataset trained with train() and scored on the samples it did not
// see. Folds are trained in parallel in the caller's oneTBB arena (docs/conventions.md, "Threads"). The folds are
// LIBLINEAR's own split, or stratified / random ones decided by a seed (FoldKind, docs/liblinear-cli.md).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hetglm/dataset.hpp"
#include "hetglm/train.hpp"

namespace hetglm {

/// How the samples are split into folds.
enum class FoldKind {
  /// LIBLINEAR's split (linear.cpp, cross_validation() and find_parameters()): perm = 0 .. n-1, then for i = 0 .. n-1
  /// swap perm[i] with perm[i + rand() % (n - i)], and fold k is perm[k n / n_folds .. (k + 1) n / n_folds). rand() is
  /// glibc's after srand(1) (LIBLINEAR's train never seeds it), computed by GlibcRandom (rng.hpp), so these are the
  /// folds that liblinear-train -v / -C uses on a glibc system, whatever the platform. Not stratified; no seed.
  liblinear,
  /// Classifiers: the samples of each class, in a seeded random order, are dealt to the folds in turn, the classes
  /// one after another in ascending label order, so every fold holds each class's share up to one sample and fold
  /// sizes differ by at most one.
  stratified,
  /// A seeded random permutation cut into n_folds nearly equal parts (at k n / n_folds, as LIBLINEAR cuts).
  random,
};

/// "liblinear", "stratified", "random".
const char* fold_kind_name(FoldKind kind);
/// The inverse of fold_kind_name; anything else is InvalidArgument "--folds: unknown value 'x' (expected liblinear,
/// stratified or random)".
FoldKind parse_fold_kind(const std::string& name);

/// The split that CvOptions::folds = `requested` gives for the model of `options`: unset is stratified for classifiers
/// and random for regression; stratified folds of a regression model are InvalidArgument ("--folds stratified: ...").
FoldKind resolve_fold_kind(const std::optional<FoldKind>& requested, const TrainOptions& options);

/// The fold (0 .. n_folds-1) of every sample, split as `kind` says (the seed decides stratified and random folds and
/// is not used by LIBLINEAR's). Stratified folds take the classes from y. Needs 2 <= n_folds <= y.size()
/// (InvalidArgument naming -v otherwise).
std::vector<int> make_folds(const std::vector<double>& y, FoldKind kind, int n_folds, std::uint64_t seed);

struct CvOptions {
  int n_folds = 5;           ///< LIBLINEAR -v n (at most the number of samples: the caller clamps, as LIBLINEAR does)
  std::uint64_t seed = 1;    ///< decides stratified and random folds (the CLI passes --seed)
  /// The split; unset: stratified for classifiers, random for regression (the CLI passes --folds, default liblinear).
  /// Stratified folds of a regression model are InvalidArgument.
  std::optional<FoldKind> folds;
  /// Threads of each fold's solver: 0 = max(1, T / n_folds) with T = TrainOptions::solver.n_threads, or the
  /// concurrency of the current arena when that is 0. With one thread per fold the folds run side by side and each
  /// runs the sequential (dual) or single-threaded Newton (primal) solver, so results do not depend on scheduling.
  int fold_threads = 0;
};

/// Cross-validated quality of predictions: accuracy for classifiers; for regression the mean squared error and the
/// squared correlation coefficient (LIBLINEAR's two numbers).
struct CvScore {
  bool classifier = true;
  std::int64_t n = 0;
  std::int64_t correct = 0;        ///< classifiers
  double accuracy = 0;             ///< correct / n
  double mse = 0;                  ///< regression: sum (prediction - y)^2 / n
  double squared_correlation = 0;  ///< regression: LIBLINEAR's "Squared correlation coefficient"
  /// true when this score is better than `other` (accuracy higher, or mean squared error lower; ties are not
  /// better, so the first, smallest C of a tie wins, as in LIBLINEAR).
  bool better_than(const CvScore& other) const {
    return classifier ? accuracy > other.accuracy : mse < other.mse;
  }
};

struct FoldReport {
  std::int64_t n_train = 0, n_test = 0;
  CvScore score;                   ///< on this fold's held-out samples
  int epochs = 0;                  ///< largest epoch count over the fold's weight columns
  bool converged = false;
  double seconds = 0;
  Formulation formulation = Formulation::dual;
  SolverKind solver = SolverKind::sequential;  ///< the CPU solver that ran (TrainResult::solver)
};

struct CvResult {
  CvScore score;                   ///< over all samples, each predicted by the fold model that did not see it
  std::vector<double> predictions; ///< per sample
  std::vector<int> fold;           ///< make_folds()
  std::vector<FoldReport> folds;
  int n_folds = 0;
  std::uint64_t seed = 0;
  FoldKind fold_kind = FoldKind::liblinear;
  int fold_threads = 1;
  bool parallel = true;            ///< folds trained side by side (false with an accelerator: one device)
  int folds_at_once = 1;           ///< at most this many side by side (threads, and what the memory limit holds)
  bool memory_bound = false;       ///< folds_at_once is below the threads' count to stay within the memory limit
  bool converged = true;           ///< every fold reached the tolerance
  bool interrupted = false;        ///< should_stop() asked to stop (the score is then not meaningful)
  double seconds = 0;
};

/// The score of predictions `pred` (size n) against labels `y` (size n): accuracy for a classifier, else LIBLINEAR's
/// mean squared error and squared correlation coefficient (its `predict` prints both). Used by `hetglm predict` and
/// `--test` as well as by cross-validation.
CvScore score_predictions(bool classifier, const std::vector<double>& y, const std::vector<double>& pred);

/// n-fold cross-validation of `options` on `data` (LIBLINEAR -v). Trains no model on the whole data. Throws what
/// train() throws; on_epoch of `options` is not called.
CvResult cross_validate(const Dataset& data, const TrainOptions& options, const CvOptions& cv = {});

/// One C of the path.
struct CPathStep {
  double C = 0;                    ///< in the caller's units (problem C = c_factor * C)
  CvScore score;
  int epochs = 0;                  ///< largest over folds and columns
  bool converged = true;
  double seconds = 0;
  bool warm = false;               ///< started from the previous C's solution
};

struct CPathOptions {
  /// First C; default LIBLINEAR's rule (calc_start_C): 2^floor(log2(C0)) with C0 = 1/(n max_i ||x_i||^2) for the
  /// classifiers (squared hinge: 1/(2 n max ||x_i||^2)) and, for the squared loss, LIBLINEAR's SVR rule at p = 0,
  /// 0.01 sum y_i^2 / (8 (sum |y_i|)^2 max ||x_i||^2) in LIBLINEAR's SVR units (x_i with the bias feature).
  std::optional<double> start_C;
  /// Last C: LIBLINEAR's 1024 for classifiers, 2^20 for regression.
  std::optional<double> max_C;
  double ratio = 2;                ///< C multiplies by this at each step
  /// problem.C = c_factor * C. The CLI's -s 11 / -s 12 pass 2: LIBLINEAR's SVR C is half of hetglm's -c
  /// (docs/liblinear-cli.md, "LIBLINEAR's SVR and ridge").
  double c_factor = 1;
  std::function<void(const CPathStep&)> on_step;  ///< after each C (progress)
};

struct CPathResult {
  std::vector<CPathStep> path;
  double best_C = 0;
  CvScore best;
  int n_folds = 0;
  std::uint64_t seed = 0;
  FoldKind fold_kind = FoldKind::liblinear;
  int fold_threads = 1;
  bool parallel = true;
  int folds_at_once = 1;  ///< as CvResult::folds_at_once
  bool memory_bound = false;
  std::string stop_reason;         ///< "maximum C reached" or "w unchanged for 5 values of C" (LIBLINEAR's rule)
  double max_C = 0;                ///< the search's largest C (CPathOptions::max_C or LIBLINEAR's default)
  bool start_above_max = false;    ///< the first C given was above max_C: the search ran at max_C alone (LIBLINEAR)
  /// The solver that trained the first fold at the first C (--solver auto's choice, or the one asked for)
  SolverKind solver = SolverKind::automatic;
  bool interrupted = false;
  double seconds = 0;
};

/// Search of C by n-fold cross-validation (LIBLINEAR -C): C = start, start * ratio, ... up to max_C, every fold
/// warm-started from its solution at the previous C (TrainOptions::initial_alpha; the formulation that the first C
/// chose, or the requested one, is kept along the path so that the warm start fits). Stops early, as LIBLINEAR does,
/// when no fold's w has changed (by more than 1e-15 in norm) for 5 values of C (an all-zero w, as an L1 penalty gives
/// at small C, does not count as unchanged). The best C is the first with the best
/// score. options.problem.lambda must not be set (InvalidArgument "-C: ...").
CPathResult search_C(const Dataset& data, const TrainOptions& options, const CvOptions& cv = {},
                     const CPathOptions& path = {});

/// The start of search_C's path (CPathOptions::start_C's default), in the caller's units.
double default_start_C(const Dataset& data, const TrainOptions& options, double c_factor = 1);

}  // namespace hetglm
