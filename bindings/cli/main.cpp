// SPDX-License-Identifier: Apache-2.0
// The `hetglm` command line: `hetglm train [options] TRAIN [MODEL]` and
// `hetglm predict [options] MODEL DATA [OUTPUT]` over libsvm files (LIBLINEAR's train/predict, with a
// duality-gap certificate). Exit codes: 0 success, 1 training failure, 2 bad usage or bad input,
// 130 interrupted (SIGINT), 143 terminated (SIGTERM: the same stop as SIGINT).
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <limits>
#include <cstring>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "liblinear.hpp"
#include "hetglm/config.hpp"
#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/memory.hpp"
#include "hetglm/model.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/cross_validation.hpp"
#include "hetglm/distributed.hpp"
#include "hetglm/train.hpp"

namespace {

using hetglm::CsrMatrix;
using hetglm::Dataset;
using hetglm::LinearModel;
using json = nlohmann::json;

constexpr int kExitTraining = 1;
constexpr int kExitUsage = 2;
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{SIGINT};  // the signal that interrupted (SIGINT or SIGTERM)
extern "C" void on_sigint(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
}
/// 128 + the signal, as a shell reports a process killed by it: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, which
/// `timeout`, `kill` and job schedulers send and which stops training the same way (without a handler it killed the
/// process mid-write and left the atomic write's temporary file behind).
int interrupted_exit_code() { return 128 + g_signal.load(); }

/// --distributed: Ctrl-C or SIGTERM stops a rank at once (the ranks cannot agree on a round to stop after): the first
/// rank says so (async-signal-safe write) and every rank exits 128 + the signal without writing anything (it exited
/// by the signal, silently).
bool g_says_interrupt = false;
extern "C" void on_distributed_signal(int sig) {
  if (g_says_interrupt) {
    static const char kText[] = "interrupted: a distributed run stops at once; no model or report written\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kText, sizeof kText - 1);
  }
  ::_exit(128 + sig);
}

/// Standard output's reader has gone (`hetglm train ... | head -1`): SIGPIPE is ignored, and the first failed flush of
/// a progress or summary line (EPIPE) sends the rest of standard output to /dev/null, so training goes on and the
/// model is written; run_train warns at the end. The model itself on standard output (MODEL "-") and predictions
/// are checked where they are written and fail with their own message.
bool g_stdout_closed = false;
void flush_info(std::FILE* f) {
  if (std::fflush(f) == 0 || f != stdout || errno != EPIPE) return;
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
  }
  std::clearerr(stdout);
  g_stdout_closed = true;
}

/// fmt::print(f, ...) for the lines that go to standard output, or to standard error where standard output carries
/// the model (MODEL "-") or the predictions: a failed write to standard error is ignored (hetglm::eprint, io.hpp),
/// one to standard output is found by flush_info as before.
template <class... T>
void info_print(std::FILE* f, fmt::format_string<T...> format, T&&... args) {
  const std::string s = fmt::format(format, std::forward<T>(args)...);
  if (f == stderr) hetglm::write_diagnostic(f, s);
  else std::fwrite(s.data(), 1, s.size(), f);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Metrics of predictions against the labels of `data`: accuracy for classifiers; for regression LIBLINEAR's mean
/// squared error and squared correlation coefficient, and the RMSE.
json metrics(const LinearModel& model, const Dataset& data) {
  const std::vector<double> pred = hetglm::predict(model, data.X);
  const hetglm::CvScore s = hetglm::score_predictions(model.is_classifier(), data.y, pred);
  json m;
  m["n_samples"] = data.y.size();
  if (s.classifier) {
    m["accuracy"] = s.accuracy;
  } else {
    m["mse"] = s.mse;
    m["squared_correlation"] = s.squared_correlation;
    m["rmse"] = std::sqrt(s.mse);
  }
  return m;
}

std::string metric_text(const json& m) {
  if (m.contains("accuracy")) return fmt::format("accuracy {:.4f}", m["accuracy"].get<double>());
  return fmt::format("mse {:.6g}, squared correlation {:.6g}", m["mse"].get<double>(),
                     m["squared_correlation"].get<double>());
}

/// Warn once when a data file has features the model does not know (they are ignored, as in LIBLINEAR). The index
/// named is the file's largest, as written in it (one less with --zero-based, where index i is the model's feature
/// i + 1: a file indexed from 1 read with --zero-based reaches one feature past the model, which the warning says).
void warn_extra_features(const LinearModel& model, const Dataset& data, const std::string& file, bool zero_based) {
  if (data.X.n_cols <= model.nr_feature) return;
  const std::int64_t largest = data.X.n_cols - (zero_based ? 1 : 0);
  if (!zero_based)
    hetglm::eprint("warning: '{}' has features up to index {} but the model has nr_feature {}: the extra features "
                   "are ignored\n",
                   file, largest, model.nr_feature);
  else
    hetglm::eprint("warning: '{}' has features up to index {}, which --zero-based makes feature {}, but the model has "
                   "nr_feature {}: the extra features are ignored{}\n",
                   file, largest, largest + 1, model.nr_feature,
                   largest == model.nr_feature ? " (if the file is indexed from 1, drop --zero-based)" : "");
}

/// Refuse an output path that names the same file as an input or another output (it would be overwritten).
/// Each entry is (role, path); empty paths are skipped.
using Files = std::vector<std::pair<std::string, std::string>>;
void check_outputs(const Files& inputs, const Files& outputs) {
  namespace fs = std::filesystem;
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code e1, e2;
    if (a == b) return true;
    if (fs::exists(a, e1) && fs::exists(b, e2)) return fs::equivalent(a, b, e1);
    // (absolute first: weakly_canonical("m") stays "m" when nothing of it exists, "./m" became "/cwd/m", and the
    // report then overwrote the model it named differently)
    return fs::weakly_canonical(fs::absolute(a, e1), e1) == fs::weakly_canonical(fs::absolute(b, e2), e2);
  };
  // "-" is standard output: among the outputs, the same file as /dev/stdout (MODEL - with --report-json
  // /dev/stdout mixed both); it is not compared with the inputs (a terminal is both standard input and output).
  auto file = [](const std::string& p) { return p == "-" ? std::string("/dev/stdout") : p; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [role, path] = outputs[i];
    if (path.empty()) continue;
    Files others = path == "-" ? Files{} : inputs;
    others.insert(others.end(), outputs.begin() + static_cast<std::ptrdiff_t>(i) + 1, outputs.end());
    for (const auto& [orole, opath] : others)
      if (!opath.empty() && !(path == "-" && opath == "-") && same(file(path), file(opath)))
        throw hetglm::InvalidArgument(
            fmt::format("{} '{}' is the same file as {} '{}': refusing to overwrite it", role, path, orole, opath));
  }
}

/// True when `path` names the file that standard output already is (/dev/stdout, /proc/self/fd/1, or the file the
/// shell redirected it to): written as "-" then, so that the progress and result lines go to standard error instead
/// of into the same stream as the model or the predictions.
bool is_standard_output(const std::string& path) {
  struct stat a {}, b {};
  return !path.empty() && path != "-" && ::stat(path.c_str(), &a) == 0 && ::fstat(STDOUT_FILENO, &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// --seed: a decimal integer in [0, 2^64 - 1] (CLI11 would wrap a negative or too large value silently).
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw hetglm::InvalidArgument(
        fmt::format("--seed: expected an integer in [0, 18446744073709551615], got {}", hetglm::quote_token(text)));
  return v;
}

std::string default_model_path(const std::string& train_file) {
  return std::filesystem::path(train_file).filename().string() + ".model";
}

json history_json(const std::vector<hetglm::EpochRecord>& h) {
  json a = json::array();
  for (const auto& r : h) {
    a.push_back({{"epoch", r.epoch}, {"seconds", r.seconds}, {"primal", r.primal}, {"dual", r.dual},
                 {"gap", r.gap}, {"rel_gap", r.rel_gap}});
    if (r.passes > 0) a.back()["passes"] = r.passes;  // the Newton solver's passes over the data
  }
  return a;
}

/// The command line's spelling of the options: strings parsed into the typed TrainOptions by parse_options() before any
/// data is read; every numeric option is read straight into TrainOptions (its default is the struct's).
struct TrainArgs {
  std::string train_file, model_file, test_file, report_file;
  hetglm::TrainOptions opt;
  std::string model = "logistic", penalty, formulation = "auto", solver = "auto", seed = "1";
  std::string device = "cpu", accel_memory, cpu_role = "gaps", duhl_selection = "duhl";
  std::optional<double> C, lambda;
  std::int64_t n_features = -1;
  bool zero_based = false, quiet = false;
  int threads = 0;
  bool n_features_given = false;
  bool save_on_interrupt = false;  ///< --save-on-interrupt: after Ctrl-C, write the model with its current certificate
  bool deterministic = false, nondeterministic = false;  ///< --deterministic / --nondeterministic
  bool no_shrinking = false;          ///< --no-shrinking
  std::string aggregation = "adaptive";  ///< --aggregation adaptive|fixed
  bool distributed = false;  ///< --distributed: CoCoA+ over MPI (docs/mpi.md)
  int local_epochs = 1;      ///< --local-epochs
  /// Options given that apply to some runs only (set from CLI11's counts): DuHL's, and --local-epochs (MPI).
  std::vector<std::string> duhl_options_given;
  std::vector<std::string> cd_options_given;  ///< coordinate descent's options given (ignored by the Newton solvers)
  bool replica_sigma_warned = false;           ///< parse_options warned about --replica-sigma already
  bool replica_sigma_cap_pending = false;      ///< --replica-sigma above the threads with --solver auto: said once
                                               ///< syscd ran (replica_sigma_cap), else ignored by the solver auto chose
  bool local_epochs_given = false;
  bool replica_sigma_given = false;
  bool partition_given = false;
  std::string partition = "random";  ///< --partition random|file-order (--distributed)
  std::string memory_limit;  ///< --memory-limit: the readers' budget ("" = automatic)
  // LIBLINEAR's flags (README, "The command line"), as written; empty = not given.
  std::string s_type, eps, svr_p, cv_folds_text, n_threads_text;
  bool find_C = false;                           ///< -C
  std::vector<hetglm::cli::ClassWeight> class_weights;  ///< -wi weight (taken out of argv before CLI11)
  std::string progress;                          ///< --progress N | Ts
  std::string folds = "liblinear";               ///< --folds liblinear|stratified|random (-v, -C)
  bool folds_given = false;
  // Which of hetglm's spellings were given (set from CLI11's counts): -s and -e, -n conflict with them.
  bool model_given = false, penalty_given = false, formulation_given = false, tol_given = false,
       threads_given = false, l1_ratio_given = false;
  // Resolved by parse_options():
  const hetglm::cli::LiblinearType* liblinear = nullptr;  ///< -s
  double c_factor = 1;       ///< problem C = c_factor * -c (2 for -s 11 / -s 12: LIBLINEAR's SVR C)
  int cv_folds = 0;          ///< -v n (0: no cross-validation; -C alone uses 5)
  hetglm::FoldKind fold_kind = hetglm::FoldKind::liblinear;  ///< --folds
  int progress_epochs = 1;   ///< --progress N: a line every N epochs
  double progress_seconds = 0;  ///< --progress Ts: a line every T seconds (0: by epochs)
};

/// --progress N (a line every N epochs) or --progress Ts (every T seconds, e.g. 2s or 0.5s).
void parse_progress(TrainArgs& a) {
  if (a.progress.empty()) {  // default: a line a second (the first and the last epoch always)
    a.progress_seconds = 1;
    return;
  }
  const std::string& t = a.progress;
  const auto bad = [&] {
    return hetglm::InvalidArgument(fmt::format(
        "--progress: expected a number of epochs (e.g. 10) or of seconds (e.g. 2s), got {}", hetglm::quote_token(t)));
  };
  if (t.back() == 's') {
    double sec = 0;
    try {
      sec = hetglm::cli::parse_number("--progress", t.substr(0, t.size() - 1));
    } catch (const hetglm::InvalidArgument&) {
      throw bad();
    }
    if (!(sec > 0)) throw bad();
    a.progress_seconds = sec;
    return;
  }
  int n = 0;
  try {
    n = hetglm::cli::parse_int("--progress", t);
  } catch (const hetglm::InvalidArgument&) {
    throw bad();
  }
  if (n < 1) throw bad();
  a.progress_epochs = n;
}

/// LIBLINEAR's flags into hetglm's settings, checked before any data is read (README, "The command line").
void parse_liblinear_flags(TrainArgs& a) {
  namespace cli = hetglm::cli;
  using hetglm::InvalidArgument;
  if (!a.s_type.empty()) {
    const cli::LiblinearType& t = cli::liblinear_type(a.s_type);
    const std::string means = fmt::format("-s {} is --model {} --penalty {} --formulation {}", t.type, t.model,
                                          t.penalty, t.formulation);
    for (const auto& [given, flag] : {std::pair{a.model_given, "--model"}, std::pair{a.penalty_given, "--penalty"},
                                      std::pair{a.formulation_given, "--formulation"}})
      if (given)
        throw InvalidArgument(
            fmt::format("-s {} and {} both choose the problem: give one of them ({})", t.type, flag, means));
    a.liblinear = &t;
    a.model = t.model;
    a.penalty = t.penalty;
    a.formulation = t.formulation;
  }
  const bool svr = a.liblinear && a.liblinear->svr;
  if (!a.svr_p.empty()) {
    const double p = cli::parse_number("-p", a.svr_p);
    if (!svr)
      throw InvalidArgument(fmt::format(
          "-p {}: the epsilon of support vector regression applies to -s 11 and -s 12 only", a.svr_p));
    if (p != 0)
      throw InvalidArgument(fmt::format("-p {}: the epsilon-insensitive loss of SVR (p > 0) is not available in "
                                        "hetglm; -s {} with -p 0 is ridge regression (squared loss)",
                                        a.svr_p, a.liblinear->type));
  } else if (svr) {
    throw InvalidArgument(fmt::format("-s {}: LIBLINEAR's default -p 0.1 (epsilon-insensitive loss) is not available "
                                      "in hetglm; give -p 0 for ridge regression (squared loss)",
                                      a.liblinear->type));
  }
  if (a.C && !(std::isfinite(*a.C) && *a.C > 0))
    throw InvalidArgument(fmt::format("-c: C must be a positive number, got {}", *a.C));
  if (svr) a.c_factor = 2;  // LIBLINEAR's SVR: C sum (y - w.x)^2 = 2 C sum (y - w.x)^2/2: hetglm's C is 2 C
  if (!a.eps.empty()) {
    if (a.tol_given)
      throw InvalidArgument("-e and --tol are one setting here (the relative duality gap): give one of them");
    const double e = cli::parse_number("-e", a.eps);
    if (!(e > 0))
      throw InvalidArgument(fmt::format(
          "-e: must be a positive number (hetglm's -e is --tol, the relative duality gap), got {}", a.eps));
    if (e < 1e-15)
      throw InvalidArgument(fmt::format("-e: must be at least 1e-15 (hetglm's -e is --tol, the relative duality gap, "
                                        "not certain in double precision below that), got {}",
                                        a.eps));
    a.opt.solver.tol = e;
  }
  if (!a.n_threads_text.empty()) {
    if (a.threads_given) throw InvalidArgument("-n and --threads are one setting: give one of them");
    const int n = cli::parse_int("-n", a.n_threads_text);
    if (n < 0) throw InvalidArgument(fmt::format("-n: must be >= 0 (0 = all cores), got {}", n));
    a.threads = n;
  }
  if (!a.cv_folds_text.empty()) {
    a.cv_folds = cli::parse_int("-v", a.cv_folds_text);
    if (a.cv_folds < 2)
      throw InvalidArgument(fmt::format("-v: n-fold cross-validation needs n >= 2, got {}", a.cv_folds_text));
  }
  const bool cv = a.cv_folds > 0 || a.find_C;
  if (cv) {
    const char* flag = a.find_C ? "-C" : "-v";
    if (a.distributed)
      throw InvalidArgument(fmt::format("{}: cross-validation runs in one process; drop --distributed", flag));
    if (!a.test_file.empty())
      throw InvalidArgument(fmt::format("{}: cross-validation trains no model to evaluate; drop --test", flag));
    if (a.save_on_interrupt)
      throw InvalidArgument(fmt::format("{}: cross-validation writes no model; drop --save-on-interrupt", flag));
  }
  if (a.find_C && a.lambda)
    throw InvalidArgument("-C: the search sets C (lambda = 1/(C n)) along its path; drop --lambda");
  a.fold_kind = hetglm::parse_fold_kind(a.folds);
  parse_progress(a);
}

/// Whether this process is the first of those an MPI launcher started, or was started alone. MPI is not initialized
/// yet here, so the rank comes from the launcher's environment (Open MPI's OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK,
/// MPICH / Hydra's PMI_RANK).
bool first_launched_process() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(var)) return std::string_view(r) == "0";
  return true;
}

/// Whether this process prints the option warnings: under `mpirun ... --distributed` every rank parses the same
/// options, and rank 0 alone says what they do.
bool prints_option_warnings(const TrainArgs& a) { return !a.distributed || first_launched_process(); }

/// The options of the parallel coordinate-descent solvers among those given that the sequential solver has no use
/// for, each with what it applies to: its one loop has no buckets, no replicas to merge or scale and no work stealing
/// (under --distributed the ranks' merge is aggregated all the same).
std::vector<std::pair<std::string, const char*>> parallel_only_options(const TrainArgs& a) {
  std::vector<std::pair<std::string, const char*>> out;
  for (const std::string& name : a.cd_options_given) {
    if (name == "--bucket-size") out.emplace_back(name, "the parallel solvers' buckets (syscd, passcode-*)");
    if (name == "--aggregation" && !a.distributed) out.emplace_back(name, "syscd's merge of its replicas");
    if (name == "--replica-sigma" && !a.replica_sigma_warned) out.emplace_back(name, "syscd's replicas");
    if (name == "--nondeterministic")
      out.emplace_back(name, "the parallel solvers' work stealing (syscd, passcode-*)");
  }
  return out;
}

/// Coordinate descent's options given (a.cd_options_given) when --solver auto chose a solver without them, known only
/// after training: Newton or the working-set solver, or the sequential solver for the parallel solvers' options
/// (`ran`); "trained" or "trained the folds" (`what`). None for the multinomial model (parse_options said it) and
/// --replica-sigma's when parse_options warned about it already.
std::vector<std::string> auto_ignored_cd_options(const TrainArgs& a, hetglm::SolverKind ran, std::string_view what) {
  std::vector<std::string> out;
  if (a.opt.solver.solver != hetglm::SolverKind::automatic || a.opt.problem.model.multinomial) return out;
  if (ran == hetglm::SolverKind::sequential) {
    for (const auto& [name, applies] : parallel_only_options(a))
      out.push_back(hetglm::ignored_option_warning(name, applies,
                                                   fmt::format("--solver auto {} with the sequential solver", what)));
    return out;
  }
  if (ran != hetglm::SolverKind::newton && ran != hetglm::SolverKind::working_set) return out;
  for (const std::string& name : a.cd_options_given)
    if (name != "--replica-sigma" || !a.replica_sigma_warned)
      out.push_back(hetglm::ignored_option_warning(
          name, "coordinate descent",
          fmt::format("--solver auto {} with the {} solver", what,
                      ran == hetglm::SolverKind::newton ? "Newton" : "working-set")));
  return out;
}

/// The options of several replicas (--aggregation outside --distributed, --nondeterministic, --replica-sigma when
/// not said already) among those given, when the parallel solver that ran (`ran`: syscd or PASSCoDe) had one thread
/// (`threads`): it then has one replica, nothing to merge and no one to steal from. `why` says where the one thread
/// came from.
std::vector<std::string> one_thread_ignored(const TrainArgs& a, hetglm::SolverKind ran, int threads,
                                            std::string_view why) {
  std::vector<std::string> out;
  using hetglm::SolverKind;
  if (threads != 1 || a.opt.problem.model.multinomial ||
      (ran != SolverKind::syscd && ran != SolverKind::passcode_atomic && ran != SolverKind::passcode_wild))
    return out;
  for (const auto& [name, applies] : parallel_only_options(a))
    if (name != "--bucket-size")  // one thread still visits its buckets
      out.push_back(fmt::format("warning: {} applies to several threads' replicas; {}; ignored\n", name, why));
  return out;
}

/// --replica-sigma above the `threads` of syscd: the replicas step at CoCoA+'s sigma' = threads.
std::string replica_sigma_cap_text(double sigma, int threads) {
  return fmt::format("warning: --replica-sigma {}: above the {} solver threads; using {} (CoCoA+)\n", sigma, threads,
                     threads);
}

/// The cap of --replica-sigma with --solver auto (TrainArgs::replica_sigma_cap_pending), once auto is known to have
/// run syscd (`ran`) on `threads` > 1 threads; where it chose another solver, or one thread, the warnings of
/// auto_ignored_cd_options and one_thread_ignored say that the option was ignored instead.
std::vector<std::string> replica_sigma_cap(const TrainArgs& a, hetglm::SolverKind ran, int threads) {
  if (!a.replica_sigma_cap_pending || ran != hetglm::SolverKind::syscd || threads < 2 ||
      a.opt.solver.replica_sigma <= threads)
    return {};
  return {replica_sigma_cap_text(a.opt.solver.replica_sigma, threads)};
}

/// The report's name of the solver that ran (--solver auto resolved): "duhl" when an accelerator trained.
std::string solver_report_name(hetglm::SolverKind ran) {
  return ran == hetglm::SolverKind::automatic ? std::string("duhl") : std::string(hetglm::solver_kind_name(ran));
}

/// The summary lines' note when cross-validation trained fewer folds at once to stay within the memory.
std::string folds_memory_note(bool memory_bound, int at_once) {
  return memory_bound ? fmt::format(", {} fold{} at a time to stay within the memory", at_once, at_once == 1 ? "" : "s")
                      : std::string();
}

/// The strings of `a` into a.opt, then every check that needs no data (train.hpp check_options). Options that do
/// not apply to this run are checked all the same; the warnings about them are printed once every check passed
/// (under mpirun by rank 0 only).
void parse_options(TrainArgs& a) {
  parse_liblinear_flags(a);
  hetglm::TrainOptions& o = a.opt;
  std::vector<std::string> warnings;
  // More solver threads than the machine runs at once only add replicas (SySCD's partitions): on a small file
  // each one holds a few coordinates and the epochs multiply. --threads is capped at the hardware concurrency.
  const int cores = tbb::info::default_concurrency();
  if (a.threads > cores) {
    warnings.push_back(fmt::format(
        "warning: {} {}: more than the {} hardware thread{} of this machine; using {}\n",
        a.n_threads_text.empty() ? "--threads" : "-n", a.threads, cores, cores == 1 ? "" : "s", cores));
    a.threads = cores;
  }
  o.problem.model = hetglm::model_spec(a.model, a.penalty);
  // -s 11 / -s 12 without -c: LIBLINEAR's default C = 1.
  if (a.C) o.problem.C = a.c_factor * *a.C;
  else if (a.c_factor != 1 && !a.lambda) o.problem.C = a.c_factor;
  o.problem.lambda = a.lambda;
  o.problem.formulation = hetglm::parse_formulation(a.formulation);
  if (a.liblinear) o.problem.formulation_requested_by = "-s " + a.s_type;  // -s N chose the formulation
  o.solver.solver = hetglm::parse_solver_kind(a.solver);
  o.solver.seed = parse_seed(a.seed);
  o.solver.n_threads = a.threads;
  o.device.device = a.device == "auto" ? std::nullopt : std::optional<hetglm::Device>(hetglm::parse_device(a.device));
  if (o.device.device) {  // a device that is not compiled in is known before the data: the registry's own message
    const std::vector<hetglm::Device> built = hetglm::compiled_devices();
    if (std::find(built.begin(), built.end(), *o.device.device) == built.end()) hetglm::make_backend(a.device);
  }
  if (!a.accel_memory.empty()) o.device.accel_memory = hetglm::parse_memory_budget(a.accel_memory);
  o.device.duhl.cpu_role = hetglm::parse_cpu_role(a.cpu_role);
  o.device.duhl.selection = hetglm::parse_selection(a.duhl_selection);
  if (a.deterministic && a.nondeterministic)
    throw hetglm::InvalidArgument("--deterministic and --nondeterministic are mutually exclusive: give one of them");
  if (a.deterministic) o.solver.deterministic = true;
  o.solver.shrinking = !a.no_shrinking;
  if (a.aggregation != "adaptive" && a.aggregation != "fixed")
    throw hetglm::InvalidArgument(
        fmt::format("--aggregation: unknown value '{}' (expected adaptive or fixed)", a.aggregation));
  o.solver.adaptive_aggregation = a.aggregation == "adaptive";
  if (o.solver.certificate_every < 0)
    throw hetglm::InvalidArgument(
        fmt::format("--certificate-every: must be >= 0 (0 = adaptive), got {}", o.solver.certificate_every));
  if (a.nondeterministic) o.solver.deterministic = false;
  if (a.l1_ratio_given && o.problem.model.penalty != hetglm::Penalty::elastic_net)
    warnings.push_back(fmt::format(
        "warning: --l1-ratio applies to the elastic-net penalty only ({}); ignored\n",
        a.liblinear ? fmt::format("-s {} is --model {} --penalty {}", a.liblinear->type, o.problem.model.name,
                                  hetglm::penalty_name(o.problem.model.penalty))
                    : fmt::format("--model {} has penalty {}", o.problem.model.name,
                                  hetglm::penalty_name(o.problem.model.penalty))));
  if (a.local_epochs < 1)
    throw hetglm::InvalidArgument(fmt::format("--local-epochs: must be at least 1, got {}", a.local_epochs));
  if (a.local_epochs_given && !a.distributed)
    warnings.push_back("warning: --local-epochs applies to --distributed (MPI) only; ignored\n");
  if (a.partition != "random" && a.partition != "file-order")
    throw hetglm::InvalidArgument(
        fmt::format("--partition: unknown value '{}' (expected random or file-order)", a.partition));
  if (a.partition_given && !a.distributed)
    warnings.push_back("warning: --partition applies to --distributed (MPI) only; ignored\n");
  // Solvers without coordinate descent's epochs (--solver auto's choice is known after training: run_train).
  const bool newton = o.solver.solver == hetglm::SolverKind::newton;
  const bool working_set = o.solver.solver == hetglm::SolverKind::working_set;
  const bool duhl = o.device.device != hetglm::Device::cpu || !o.device.accel_memory.empty();
  // DuHL trains in its own rounds (solvers/src/duhl.cpp): the CPU solvers' choice and settings do not reach it, but
  // --aggregation does in its role solve (the merge of the accelerator's and the CPU unit's steps).
  const bool duhl_cd = duhl && !o.problem.model.multinomial && !newton && !working_set;
  if (duhl_cd) {
    const char* why = "DuHL trains in its own rounds (docs/duhl.md)";
    if (o.solver.solver != hetglm::SolverKind::automatic)
      warnings.push_back(fmt::format("warning: --solver {} applies to the CPU solvers; {}; ignored\n",
                                     hetglm::solver_kind_name(o.solver.solver), why));
    for (const std::string& name : a.cd_options_given)
      if (name == "--aggregation" && o.device.duhl.cpu_role != hetglm::CpuRole::solve)
        warnings.push_back("warning: --aggregation applies to the CPU solvers and to DuHL's --cpu-role solve; "
                           "--cpu-role gaps merges nothing; ignored\n");
      else if (name != "--aggregation")
        warnings.push_back(fmt::format("warning: {} applies to the CPU solvers; {}; ignored\n", name, why));
    a.replica_sigma_warned = a.replica_sigma_given;
  }
  if (o.problem.model.multinomial || newton || working_set)
    for (const std::string& name : a.cd_options_given)
      warnings.push_back(fmt::format("warning: {} applies to coordinate descent; {}; ignored\n", name,
                                     o.problem.model.multinomial ? "--model multinomial trains with its Newton solvers"
                                     : newton ? "--solver newton is a Newton solver"
                                              : "--solver working-set keeps its own working sets and schedule"));
  const bool sequential = o.solver.solver == hetglm::SolverKind::sequential;
  if (a.replica_sigma_given && o.solver.replica_sigma != 0 && !o.problem.model.multinomial && !newton &&
      !working_set && !duhl_cd) {
    const int t = a.threads > 0 ? a.threads : cores;
    const char* why = a.distributed ? "--distributed (a rank's replicas step at CoCoA+'s sigma')"
                      : !o.solver.adaptive_aggregation ? "--aggregation fixed"
                      : t < 2                          ? "one thread"
                      : o.solver.solver != hetglm::SolverKind::syscd && o.solver.solver != hetglm::SolverKind::automatic
                          ? "a solver other than syscd"
                      : o.problem.formulation == hetglm::FormulationRequest::primal ? "--formulation primal"
                                                                                     : nullptr;
    if (why) {
      warnings.push_back(fmt::format("warning: --replica-sigma applies to syscd's replicas on several threads in the "
                                     "dual formulation with adaptive aggregation; ignored with {}\n",
                                     why));
      a.replica_sigma_warned = true;
    }
    else if (o.solver.replica_sigma > t && o.solver.solver == hetglm::SolverKind::automatic) {
      a.replica_sigma_cap_pending = true;  // auto's solver is known after training
    } else if (o.solver.replica_sigma > t) {
      warnings.push_back(replica_sigma_cap_text(o.solver.replica_sigma, t));
      a.replica_sigma_warned = true;
    }
  }
  if (sequential && !o.problem.model.multinomial && !duhl_cd)
    for (const auto& [name, applies] : parallel_only_options(a))  // --replica-sigma: said above
      warnings.push_back(
          fmt::format("warning: {} applies to {}; --solver sequential runs one loop; ignored\n", name, applies));
  const std::string& xclbin = o.device.backend.xclbin;
  if (!xclbin.empty()) {  // the FPGA binary: a file that exists, whichever device runs
    std::error_code ec;
    const auto st = std::filesystem::status(xclbin, ec);
    if (!std::filesystem::exists(st))
      throw hetglm::InvalidArgument(fmt::format("--xclbin: cannot open '{}': {}", xclbin,
                                                std::strerror(ec ? ec.value() : ENOENT)));
    if (!std::filesystem::is_regular_file(st))
      throw hetglm::InvalidArgument(fmt::format("--xclbin: '{}' is not a regular file", xclbin));
  }
  if (!duhl)
    for (const std::string& name : a.duhl_options_given)
      warnings.push_back(fmt::format("warning: {} applies to DuHL (--device other than cpu, or --accel-memory) "
                                     "only; ignored\n",
                                     name));
  hetglm::check_options(o);
  if (a.cv_folds > 0 || a.find_C)
    hetglm::resolve_fold_kind(a.fold_kind, o);  // --folds stratified of a regression model: the library's error
  else if (a.folds_given)
    warnings.push_back("warning: --folds applies to -v and -C only; ignored\n");
  if ((a.cv_folds > 0 || a.find_C) && !a.model_file.empty())  // LIBLINEAR's train ignores it silently
    warnings.push_back(fmt::format("warning: {}: cross-validation writes no model; MODEL '{}' is not written\n",
                                   a.find_C ? "-C" : "-v", a.model_file));
  for (const hetglm::cli::ClassWeight& w : a.class_weights)
    if (!o.problem.model.classifier)
      throw hetglm::InvalidArgument(fmt::format("{}: class weights apply to classifiers; --model {} is a regression",
                                                w.flag, o.problem.model.name));
  if (prints_option_warnings(a))
    for (const std::string& w : warnings) hetglm::eprint("{}", w);
}

/// -wi weight: the weight of class i (ProblemOptions::class_weights, applied as LIBLINEAR's train(): with two
/// classes every sample of class i, in one-vs-rest class i's own column only). A label that is not in the data is a
/// warning, as in LIBLINEAR.
void apply_class_weights(TrainArgs& a, const Dataset& data) {
  if (a.class_weights.empty()) return;
  const std::vector<double> labels = hetglm::distinct_labels(data.y);
  for (const hetglm::cli::ClassWeight& w : a.class_weights) {
    if (!std::binary_search(labels.begin(), labels.end(), w.label)) {
      hetglm::eprint("warning: {}: class label {} is not in '{}'; its weight is not used\n", w.flag, w.label,
                     a.train_file);
      continue;
    }
    a.opt.problem.class_weights.emplace_back(w.label, w.weight);
  }
}

json class_weights_json(const TrainArgs& a) {
  json cw = json::array();
  for (const hetglm::cli::ClassWeight& w : a.class_weights) cw.push_back({{"label", w.label}, {"weight", w.weight}});
  return cw;
}

/// Progress lines (--progress; hetglm::ProgressLines says when): "epoch N  primal ...", prefixed with the class
/// where one-vs-rest trains several columns.
struct ProgressPrinter : hetglm::ProgressLines {
  ProgressPrinter(const TrainArgs& a, std::FILE* out) {
    every_seconds = a.progress_seconds;
    every_epochs = a.progress_epochs;
    print = [this, out](double label, const hetglm::EpochRecord& r) {
      const std::string prefix = multi_column ? fmt::format("[class {}] ", label) : std::string();
      info_print(out, "{}epoch {:5d}  primal {:.10e}  gap {:.3e}  rel gap {:.3e}  {:8.3f}s\n", prefix, r.epoch,
                 r.primal, r.gap, r.rel_gap, r.seconds);
      flush_info(out);
    };
  }
  ProgressPrinter(const ProgressPrinter&) = delete;  // print captures this
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;
  bool multi_column = false;
};

json score_json(const hetglm::CvScore& s) {
  if (s.classifier) return {{"n_samples", s.n}, {"correct", s.correct}, {"accuracy", s.accuracy}};
  return {{"n_samples", s.n}, {"mse", s.mse}, {"squared_correlation", s.squared_correlation}};
}

/// -v n (cross-validation, LIBLINEAR's "Cross Validation Accuracy = ...%") and -C (search of C, LIBLINEAR's
/// "Best C = ...  CV accuracy = ...%"): no model is written; --report-json records the folds, the seed and the path.
int run_cross_validation(TrainArgs& a, const Dataset& data, double load_seconds, tbb::task_arena& arena,
                         std::chrono::steady_clock::time_point t_start) {
  const std::int64_t n = data.X.n_rows;
  int folds = a.cv_folds > 0 ? a.cv_folds : 5;
  // (With one sample or none the warning below said "using 1 folds" / "using 0 folds" and then an error blamed the
  // -v the user gave; -C, which has no -v, was warned about "-v 5".)
  if (n < 2)
    throw hetglm::InvalidArgument(fmt::format("'{}': {} needs at least 2 samples, the file has {}", a.train_file,
                                              a.find_C ? "-C (the search of C by cross-validation)"
                                                       : "-v (cross-validation)",
                                              n));
  if (folds > n) {
    const std::string flag = a.find_C ? fmt::format("-C ({} folds)", folds) : fmt::format("-v {}", folds);
    hetglm::eprint("warning: {}: more folds than the {} samples; using {} folds (leave-one-out)\n", flag, n, n);
    folds = static_cast<int>(n);
  }
  hetglm::CvOptions cv;
  cv.n_folds = folds;
  cv.seed = a.opt.solver.seed;
  cv.folds = a.fold_kind;
  const bool classifier = a.opt.problem.model.classifier;
  json report;
  report["version"] = HETGLM_VERSION;
  report["backends"] = HETGLM_BACKENDS;
  report["mode"] = a.find_C ? "c_search" : "cross_validation";
  report["train_file"] = a.train_file;
  report["model"] = a.opt.problem.model.name;
  report["penalty"] = hetglm::penalty_name(a.opt.problem.model.penalty);
  report["formulation_requested"] = a.formulation;
  report["solver_requested"] = a.solver;
  if (a.liblinear) report["liblinear_type"] = a.liblinear->type;
  if (!a.class_weights.empty()) report["class_weights"] = class_weights_json(a);
  report["threads"] = a.threads > 0 ? a.threads : tbb::info::default_concurrency();
  report["tol"] = a.opt.solver.tol;
  report["max_epochs"] = a.opt.solver.max_epochs;
  report["seed"] = a.opt.solver.seed;
  report["bias"] = a.opt.problem.bias;
  report["n_samples"] = data.X.n_rows;
  report["n_features"] = data.X.n_cols;
  report["nnz"] = data.X.nnz();
  report["load_seconds"] = load_seconds;
  const char* folds_kind = hetglm::fold_kind_name(a.fold_kind);
  // The summary line: LIBLINEAR's folds depend on no seed (its rand() after srand(1)); the others on --seed.
  const std::string folds_text = a.fold_kind == hetglm::FoldKind::liblinear
                                     ? std::string("LIBLINEAR's folds")
                                     : fmt::format("{} folds, seed {}", folds_kind, a.opt.solver.seed);
  if (!a.find_C) {
    if (a.C) report["C"] = *a.C;
    if (a.lambda) report["lambda"] = *a.lambda;
    const hetglm::CvResult r = arena.execute([&] { return hetglm::cross_validate(data, a.opt, cv); });
    if (r.interrupted) {
      hetglm::eprint("interrupted: cross-validation stopped; nothing written\n");
      return interrupted_exit_code();
    }
    json fj = json::array();
    int unconverged = 0;
    std::vector<std::string> ignored;  // the folds' solvers that have none of coordinate descent's options
    for (std::size_t f = 0; f < r.folds.size(); ++f) {
      const hetglm::FoldReport& fr = r.folds[f];
      unconverged += !fr.converged;
      if (ignored.empty()) ignored = auto_ignored_cd_options(a, fr.solver, "trained the folds");
      if (ignored.empty())
        ignored = one_thread_ignored(a, fr.solver, r.fold_threads, "cross-validation trains each fold on one thread");
      if (ignored.empty()) ignored = replica_sigma_cap(a, fr.solver, r.fold_threads);
      fj.push_back({{"fold", f + 1}, {"n_train", fr.n_train}, {"n_test", fr.n_test}, {"score", score_json(fr.score)},
                    {"epochs", fr.epochs}, {"converged", fr.converged}, {"seconds", fr.seconds},
                    {"formulation", hetglm::formulation_name(fr.formulation)},
                    {"solver", solver_report_name(fr.solver)}});
      if (!a.quiet)
        fmt::print("fold {}/{}: {} train, {} test, {} {:g}, {} epochs, {:.3f}s\n", f + 1, r.n_folds, fr.n_train,
                   fr.n_test, classifier ? "accuracy" : "mse", classifier ? fr.score.accuracy : fr.score.mse,
                   fr.epochs, fr.seconds);
    }
    report["cross_validation"] = {{"n_folds", r.n_folds}, {"folds_kind", folds_kind}, {"seed", r.seed},
                                  {"fold_threads", r.fold_threads}, {"parallel_folds", r.parallel},
                                  {"folds_at_once", r.folds_at_once}, {"folds_memory_bound", r.memory_bound},
                                  {"seconds", r.seconds}, {"converged", r.converged}, {"score", score_json(r.score)},
                                  {"folds", std::move(fj)}};
    if (unconverged > 0)
      hetglm::eprint("warning: {} of {} folds stopped before the tolerance (--max-epochs {}, or no measurable progress)\n", unconverged,
                     r.n_folds, a.opt.solver.max_epochs);
    for (const std::string& w : ignored) hetglm::eprint("{}", w);
    if (classifier) {
      fmt::print("Cross Validation Accuracy = {:g}%\n", 100.0 * r.score.accuracy);
    } else {
      fmt::print("Cross Validation Mean squared error = {:g}\n", r.score.mse);
      fmt::print("Cross Validation Squared correlation coefficient = {:g}\n", r.score.squared_correlation);
    }
    if (!a.quiet)
      fmt::print("{}-fold cross-validation ({}, {} thread{} per fold{}) in {:.3f}s, {:.3f}s total\n", r.n_folds,
                 folds_text, r.fold_threads, r.fold_threads == 1 ? "" : "s",
                 folds_memory_note(r.memory_bound, r.folds_at_once), r.seconds, seconds_since(t_start));
  } else {
    hetglm::CPathOptions po;
    po.start_C = a.C;
    po.c_factor = a.c_factor;
    if (!a.quiet) {
      fmt::print("Doing parameter search with {}-fold cross validation.\n", folds);
      po.on_step = [&](const hetglm::CPathStep& s) {
        if (classifier)
          fmt::print("log2c={:7.2f}\trate={:g}\t(C = {:g}, {} epochs max, {:.3f}s)\n", std::log2(s.C),
                     100.0 * s.score.accuracy, s.C, s.epochs, s.seconds);
        else
          fmt::print("log2c={:7.2f}\tMean squared error={:g}\t(C = {:g}, {} epochs max, {:.3f}s)\n", std::log2(s.C),
                     s.score.mse, s.C, s.epochs, s.seconds);
        flush_info(stdout);
      };
    }
    const hetglm::CPathResult r = arena.execute([&] { return hetglm::search_C(data, a.opt, cv, po); });
    if (r.interrupted) {
      hetglm::eprint("interrupted: the search of C stopped; nothing written\n");
      return interrupted_exit_code();
    }
    json pj = json::array();
    int unconverged = 0;
    for (const hetglm::CPathStep& s : r.path) {
      unconverged += !s.converged;
      pj.push_back({{"C", s.C}, {"log2c", std::log2(s.C)}, {"score", score_json(s.score)}, {"epochs", s.epochs},
                    {"converged", s.converged}, {"seconds", s.seconds}, {"warm_start", s.warm}});
    }
    report["c_search"] = {{"n_folds", r.n_folds}, {"folds_kind", folds_kind}, {"seed", r.seed},
                          {"fold_threads", r.fold_threads}, {"parallel_folds", r.parallel},
                          {"folds_at_once", r.folds_at_once}, {"folds_memory_bound", r.memory_bound},
                          {"c_factor", a.c_factor}, {"seconds", r.seconds}, {"stop_reason", r.stop_reason},
                          {"best_C", r.best_C}, {"best_score", score_json(r.best)},
                          {"solver", solver_report_name(r.solver)}, {"path", std::move(pj)}};
    if (unconverged > 0)
      hetglm::eprint("warning: at {} of {} values of C some fold stopped before the tolerance (--max-epochs {}, or no "
                     "measurable progress)\n",
                     unconverged, r.path.size(), a.opt.solver.max_epochs);
    for (const std::string& w : auto_ignored_cd_options(a, r.solver, "trained the folds")) hetglm::eprint("{}", w);
    for (const std::string& w :
         one_thread_ignored(a, r.solver, r.fold_threads, "the search of C trains each fold on one thread"))
      hetglm::eprint("{}", w);
    for (const std::string& w : replica_sigma_cap(a, r.solver, r.fold_threads)) hetglm::eprint("{}", w);
    if (r.start_above_max)  // LIBLINEAR clamps the same way, without a word
      hetglm::eprint("warning: -c {:g} is above the search's largest C ({:g}, LIBLINEAR's limit for -C): only C = {:g} "
                     "was tried\n",
                     *a.C, r.max_C, r.max_C);
    if (!a.quiet && r.stop_reason == "maximum C reached") fmt::print("WARNING: maximum C reached.\n");
    if (classifier)
      fmt::print("Best C = {:g}  CV accuracy = {:g}%\n", r.best_C, 100.0 * r.best.accuracy);
    else
      fmt::print("Best C = {:g}  CV MSE = {:g}\n", r.best_C, r.best.mse);
    if (!a.quiet)
      fmt::print("searched {} values of C x {} folds ({}, warm starts along the path{}) in {:.3f}s, {:.3f}s total\n",
                 r.path.size(), r.n_folds, folds_text, folds_memory_note(r.memory_bound, r.folds_at_once),
                 r.seconds, seconds_since(t_start));
  }
  flush_info(stdout);
  if (g_stdout_closed)
    hetglm::eprint("warning: standard output was closed by its reader (Broken pipe); the lines after that were "
                   "not printed\n");
  if (!a.report_file.empty()) {
    try {
      hetglm::write_file_atomic(a.report_file, report.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    } catch (const hetglm::Error& e) {
      hetglm::eprint("error: {}\n", e.what());
      return kExitTraining;
    }
  }
  return 0;
}

/// --memory-limit SIZE as the readers' budget in bytes; "" = 0, automatic (LibsvmOptions::memory_limit).
std::uint64_t memory_limit_option(const std::string& text) {
  return text.empty() ? 0 : hetglm::parse_byte_size(text, "--memory-limit");
}

int run_train(TrainArgs& a) {
  const auto t_start = std::chrono::steady_clock::now();
  parse_options(a);  // every option is checked before any data is read
  if (a.n_features < -1 || (a.n_features < 0 && a.n_features_given))
    throw hetglm::InvalidArgument(fmt::format("--n-features: must be >= 0, got {}", a.n_features));
  if (!(std::fabs(a.opt.problem.bias) <= std::numeric_limits<float>::max()))
    throw hetglm::InvalidArgument(
        fmt::format("-B: the bias feature is stored as float32 and must be at most {:g} in magnitude, got {}",
                    double(std::numeric_limits<float>::max()), a.opt.problem.bias));
  const bool cross_validation = a.cv_folds > 0 || a.find_C;  // -v / -C: no model is written
  if (a.model_file.empty()) a.model_file = default_model_path(a.train_file);
  if (is_standard_output(a.model_file)) a.model_file = "-";  // MODEL /dev/stdout: as MODEL -
  // The report is staged and renamed into place (written after the model, replaced only with it): a file. "-" wrote
  // a file named "-" where MODEL - means standard output.
  if (a.report_file == "-")
    throw hetglm::InvalidArgument(
        "--report-json: '-' is not standard output here; the report is written atomically to a file: give a file "
        "name (e.g. --report-json report.json, then cat it)");
  // Outputs must not overwrite an input or each other.
  check_outputs({{"TRAIN", a.train_file}, {"--test", a.test_file}},
                {{"MODEL", cross_validation ? std::string() : a.model_file}, {"--report-json", a.report_file}});
  // An output that cannot be written fails now, not after training (exit code 1, as a failed write).
  try {
    if (!cross_validation && a.model_file != "-") hetglm::check_writable(a.model_file);
    if (!a.report_file.empty()) hetglm::check_writable(a.report_file);
  } catch (const hetglm::IoError& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  }
  // MODEL "-" writes the model to standard output: every other line goes to standard error then.
  std::FILE* info = !cross_validation && a.model_file == "-" ? stderr : stdout;
  if (a.distributed && a.opt.solver.solver != hetglm::SolverKind::automatic &&
      a.opt.solver.solver != hetglm::SolverKind::sequential && a.opt.solver.solver != hetglm::SolverKind::syscd &&
      a.opt.solver.solver != hetglm::SolverKind::newton)
    throw hetglm::InvalidArgument(fmt::format(
        "--solver {}: --distributed trains with CoCoA+ (its local solver sequential or syscd on every rank) or "
        "newton; drop --solver or choose sequential, syscd or newton",
        hetglm::solver_kind_name(a.opt.solver.solver)));
  // `mpirun -np K hetglm train` without --distributed: K processes that each train the whole problem and write the
  // same MODEL. Said once (the first process), as the CLI cannot know what was meant.
  if (!a.distributed)
    if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE"); size && std::atoi(size) > 1 && first_launched_process())
      hetglm::eprint("warning: one of {} MPI processes (mpirun) without --distributed: each trains the whole problem "
                     "alone and writes MODEL; add --distributed to train one model across them\n",
                     size);
  if (a.distributed) {  // `mpirun -np K hetglm train --distributed ...` (solvers/src/distributed.cpp, docs/mpi.md)
    if (!a.class_weights.empty())  // (they were ignored without a word)
      throw hetglm::InvalidArgument(fmt::format("{}: class weights are not supported with --distributed",
                                                a.class_weights.front().flag));
#ifdef HETGLM_ENABLE_MPI
    if (!a.test_file.empty()) throw hetglm::InvalidArgument("--test is not supported with --distributed");
    if (a.save_on_interrupt)  // (it was ignored: an interrupted distributed run writes nothing)
      throw hetglm::InvalidArgument("--save-on-interrupt is not supported with --distributed (an interrupted "
                                    "distributed run writes no model)");
    a.opt.memory_limit = memory_limit_option(a.memory_limit);  // each rank's reader budget
    hetglm::DistributedArgs d{a.train_file, a.model_file, a.report_file, a.opt, a.zero_based, a.n_features,
                              a.threads, a.local_epochs, a.quiet, a.partition == "random", {},
                              a.progress_seconds, a.progress_epochs};
    for (const std::string& name : a.cd_options_given)  // (--replica-sigma: said already when parse_options warned)
      if (name != "--replica-sigma" || !a.replica_sigma_warned) d.cd_options_given.push_back(name);
    g_says_interrupt = first_launched_process();  // rank 0 (or a run without a launcher)
    std::signal(SIGINT, on_distributed_signal);
    std::signal(SIGTERM, on_distributed_signal);
    return hetglm::train_distributed_main(d);
#else
    throw hetglm::InvalidArgument("--distributed: this hetglm was built without MPI (configure with -DHETGLM_ENABLE_MPI=ON)");
#endif
  }
  // From here on, Ctrl-C ends with exit code 130 (SIGTERM the same way, 143) after the current epoch and writes
  // nothing, unless --save-on-interrupt is given (then the model with its honest current certificate and the report
  // are written).
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);

  hetglm::LibsvmOptions ro;
  ro.zero_based = a.zero_based;
  ro.n_features = a.n_features;
  ro.n_threads = a.threads;
  ro.memory_limit = memory_limit_option(a.memory_limit);
  ro.memory_limit_name = "--memory-limit";
  a.opt.memory_limit = ro.memory_limit;  // the same budget for train()'s memory estimate
  ro.should_stop = [] { return g_interrupted.load(); };  // Interrupted: "interrupted while loading", exit 130
  // At a tol below kFloat64Tol the values are read to double precision (values_lo, 4 more bytes a nonzero), which
  // the Newton, multinomial and coordinate-descent solvers then train on (docs/formulation.md, "float64 data").
  ro.float64 = a.opt.solver.tol < hetglm::kFloat64Tol;
  bool tiny = false;  // the file held a value below 2^-100: float32 values alone (said below)
  ro.values_lo_tiny = &tiny;
  auto t0 = std::chrono::steady_clock::now();
  const Dataset data = hetglm::read_libsvm(a.train_file, ro);
  const double load_seconds = seconds_since(t0);
  if (tiny) hetglm::eprint("{}", hetglm::float32_fallback_warning(a.train_file));
  if (g_interrupted.load()) {
    hetglm::eprint("interrupted while loading '{}'; nothing written\n", a.train_file);
    return interrupted_exit_code();
  }
  std::optional<Dataset> test;
  if (!a.test_file.empty()) {
    hetglm::LibsvmOptions to = ro;
    to.n_features = -1;  // extra features in the test file are ignored, as in predict
    to.float64 = true;   // and its values read to double precision, as in predict
    to.float64_keep_tiny = true;
    to.float64_reason = "as predictions are computed from them";
    test = hetglm::read_libsvm(a.test_file, to);
    if (test->X.n_rows == 0) {  // no score of nothing ("accuracy 0.0000"), as predict says for an empty file
      if (!a.quiet) hetglm::eprint("warning: --test '{}': no samples, so no test score\n", a.test_file);
      test.reset();
    }
  }
  if (!a.quiet)
    info_print(info, "loaded '{}': {} samples, {} features, {} nonzeros in {:.3f}s\n", a.train_file, data.X.n_rows,
               data.X.n_cols, data.X.nnz(), load_seconds);

  // The class labels (classifiers; none for a regression): the warning below and the progress prefix use them.
  const std::vector<double> classes =
      a.opt.problem.model.classifier ? hetglm::distinct_labels(data.y) : std::vector<double>{};
  // A classifier on real-valued targets (housing_scale with the default model trained 229 one-vs-rest classes
  // without a word): warned, as LIBLINEAR would cast them to int; the labels are kept as they are.
  if (a.opt.problem.model.classifier) {
    const auto it = std::find_if(data.y.begin(), data.y.end(), [](double v) { return v != std::nearbyint(v); });
    if (it != data.y.end()) {
      hetglm::eprint(
          "warning: '{}': label {:g} of sample {} is not an integer: training a classifier of {} classes, one "
          "per distinct label (for a regression give --model ridge, lasso or elastic-net, or -s 11)\n",
          a.train_file, *it, (it - data.y.begin()) + 1, classes.size());
    }
  }
  a.opt.solver.should_stop = [] { return g_interrupted.load(); };
  apply_class_weights(a, data);
  // The process's one oneTBB arena (docs/conventions.md, "Threads"): the solver threads, one-vs-rest classes and
  // cross-validation folds share it.
  const int cores = tbb::info::default_concurrency();
  tbb::task_arena arena(std::min(a.threads > 0 ? a.threads : cores, cores));
  // Out of memory past the reader (which names its line): name the file and the size the training had to hold.
  auto out_of_memory = [&] {
    return hetglm::TrainingError(fmt::format(
        "out of memory training on '{}' ({} samples x {} features, {} nonzeros); --memory-limit SIZE refuses "
        "data that need more than SIZE before training",
        a.train_file, data.n_samples(), data.n_features(), data.X.nnz()));
  };
  if (cross_validation) {
    try {
      return run_cross_validation(a, data, load_seconds, arena, t_start);
    } catch (const std::bad_alloc&) {
      throw out_of_memory();
    }
  }
  ProgressPrinter progress{a, info};
  if (!a.quiet)
    a.opt.on_epoch = [&progress](int k, double label, const hetglm::EpochRecord& r) { progress.on_epoch(k, label, r); };
  // One-vs-rest prefixes progress lines with the class.
  progress.multi_column = classes.size() > 2 && !a.opt.problem.model.multinomial;
  t0 = std::chrono::steady_clock::now();
  a.opt.keep_alpha = false;  // (the columns' coordinate variables: no warm start follows)
  hetglm::TrainResult res = [&] {
    try {
      return arena.execute([&] { return hetglm::train(data, a.opt); });
    } catch (const std::bad_alloc&) {
      throw out_of_memory();
    }
  }();
  progress.flush();
  const double train_seconds = seconds_since(t0);

  if (res.interrupted) {
    double gap = 0, primal = 0;
    for (const auto& c : res.columns) gap += c.certificate.gap, primal += c.certificate.primal;
    const double rel = primal != 0 ? gap / std::fabs(primal) : gap;
    // One-vs-rest stops at the interrupted class: the classes after it have no weights, so no model is written (the
    // multinomial model is one column: its whole matrix, whatever its classes).
    const std::size_t want = res.spec.classifier && res.model.nr_class > 2 && !res.spec.multinomial
                                 ? std::size_t(res.model.nr_class)
                                 : 1;
    if (!a.save_on_interrupt || res.columns.size() < want) {
      hetglm::eprint("interrupted: stopped after the current epoch with relative gap {:.3e}; no model written{}\n",
                     rel,
                     a.save_on_interrupt
                         ? fmt::format(" (--save-on-interrupt: only {} of {} one-vs-rest classes trained)",
                                       res.columns.size(), want)
                         : std::string());
      return interrupted_exit_code();
    }
  }

  json report;
  report["version"] = HETGLM_VERSION;
  report["backends"] = HETGLM_BACKENDS;
  report["train_file"] = a.train_file;
  report["model_file"] = a.model_file;
  report["model"] = res.spec.name;
  report["penalty"] = res.model.penalty;
  report["formulation"] = hetglm::formulation_name(res.formulation);
  report["formulation_reason"] = res.formulation_reason;
  // The solver that ran (--solver auto resolved); "duhl" when an accelerator trained.
  report["solver"] = solver_report_name(res.solver);
  report["device"] = a.device;
  if (!res.device_reason.empty()) {
    report["device_reason"] = res.device_reason;
    if (!a.quiet) info_print(info, "{}\n", res.device_reason);
  }
  if (!res.device.empty()) {
    report["accelerator"] = res.device;
    report["accel_memory"] = a.accel_memory;
    report["cpu_role"] = a.cpu_role;
    report["duhl_selection"] = a.duhl_selection;
    report["link_bandwidth_gbps"] = a.opt.device.backend.link_bandwidth_gbps;
  }
  report["threads"] = a.threads > 0 ? a.threads : tbb::info::default_concurrency();
  report["numa_nodes"] = a.opt.solver.numa_nodes;
  report["deterministic"] = a.opt.solver.deterministic.value_or(res.solver != hetglm::SolverKind::passcode_atomic &&
                                                                res.solver != hetglm::SolverKind::passcode_wild &&
                                                                res.solver != hetglm::SolverKind::automatic);  // DuHL
  report["lambda"] = res.lambda;
  report["l1_ratio"] = res.model.l1_ratio;
  report["tol"] = a.opt.solver.tol;
  // The file's values read to double precision and kept (a tol below 1e-6 and no value below 2^-100).
  report["float64_values"] = data.X.has_lo();
  report["max_epochs"] = a.opt.solver.max_epochs;
  report["seed"] = a.opt.solver.seed;
  report["bias"] = a.opt.problem.bias;
  if (a.liblinear) report["liblinear_type"] = a.liblinear->type;
  if (!a.class_weights.empty()) report["class_weights"] = class_weights_json(a);
  report["n_samples"] = data.X.n_rows;
  report["n_features"] = data.X.n_cols;
  report["nnz"] = data.X.nnz();
  report["load_seconds"] = load_seconds;
  report["train_seconds"] = train_seconds;
  report["formulation_seconds"] = res.formulation_seconds;  // of train_seconds: choosing the formulation
  double P = 0, D = 0, G = 0;
  int max_epochs_used = 0;
  json cols = json::array();
  for (const auto& c : res.columns) {
    P += c.certificate.primal;
    D += c.certificate.dual;
    G += c.certificate.gap;
    max_epochs_used = std::max(max_epochs_used, c.epochs);
    json cj = {{"primal", c.certificate.primal}, {"dual", c.certificate.dual}, {"gap", c.certificate.gap},
               {"rel_gap", c.certificate.primal != 0 ? c.certificate.gap / std::fabs(c.certificate.primal) : c.certificate.gap}, {"epochs", c.epochs},
               {"seconds", c.seconds}, {"converged", c.converged}, {"history", history_json(c.history)}};
    if (!c.stalled.empty()) cj["stalled"] = c.stalled;
    if (res.spec.classifier) cj["label"] = c.label;
    if (c.screened >= 0) cj["screened"] = c.screened;  // features proved zero by gap-safe screening (working set)
    if (!c.rounds.empty()) {  // DuHL per-round records (duhl.hpp)
      json rj = json::array();
      for (const hetglm::DuhlRound& r : c.rounds) {
        json x = {{"round", r.round}, {"seconds", r.seconds}, {"working_set", r.working_set}, {"swaps", r.swaps},
                  {"bytes_copied", r.bytes_copied}, {"ws_gap_share", r.ws_gap_share}, {"host", r.host},
                  {"accel_seconds", r.accel_seconds}, {"cpu_updates", r.cpu_updates}, {"gamma", r.gamma},
                  {"exact", r.exact}};
        if (r.exact) x.update({{"primal", r.primal}, {"dual", r.dual}, {"gap", r.gap}, {"rel_gap", r.rel_gap}});
        rj.push_back(std::move(x));
      }
      cj["rounds"] = std::move(rj);
    }
    cols.push_back(std::move(cj));
  }
  report["primal"] = P;
  report["dual"] = D;
  report["gap"] = G;
  report["rel_gap"] = P != 0 ? G / std::fabs(P) : G;
  report["epochs"] = max_epochs_used;
  report["converged"] = res.converged;
  report["interrupted"] = res.interrupted;
  report["columns"] = std::move(cols);
  report["train"] = metrics(res.model, data);
  if (test) report["test"] = metrics(res.model, *test);

  // The warnings about the certificate (and the options auto's solver ignored) are printed once the model is
  // written (they say so).
  std::vector<std::string> warnings = auto_ignored_cd_options(a, res.solver, "trained");
  const int solver_threads = a.threads > 0 ? a.threads : tbb::info::default_concurrency();
  for (std::string& w : one_thread_ignored(a, res.solver, solver_threads, "one thread runs one replica"))
    warnings.push_back(std::move(w));
  for (std::string& w : replica_sigma_cap(a, res.solver, solver_threads)) warnings.push_back(std::move(w));
  for (const auto& c : res.columns) {
    if (!c.converged && !res.interrupted) {
      const std::string who = res.spec.classifier && res.columns.size() > 1 ? fmt::format(" (class {})", c.label) : "";
      if (c.certificate.gap < 0)  // dual above primal beyond the tolerance: rounding, not convergence
        warnings.push_back(fmt::format(
            "warning: the duality gap is negative beyond the tolerance{}: P - D = {:.3e} (relative {:.3e}); the "
            "objective values lose precision on this data (extreme feature values or sample weights), so the "
            "model is written without a certificate at tol {:.1e}\n",
            who, c.certificate.gap, c.certificate.gap / std::fabs(c.certificate.primal), a.opt.solver.tol));
      else if (!c.stalled.empty())  // the stall rule (epoch_driver.hpp): no measurable progress any more
        warnings.push_back(
            hetglm::stall_warning(c.epochs, c.rounds.empty() ? "epochs" : "DuHL rounds", who, c.stalled));
      else if (!c.rounds.empty())  // DuHL: a round is an epoch over the working set (duhl.hpp max_rounds)
        warnings.push_back(fmt::format(
            "warning: reached DuHL's round limit before the tolerance{}: {} rounds (--max-epochs {} times the rounds "
            "of one pass over the data), relative gap {:.3e} > tol {:.1e}; the model and its certificate are "
            "written\n",
            who, c.epochs, a.opt.solver.max_epochs, c.certificate.gap / std::fabs(c.certificate.primal),
            a.opt.solver.tol));
      else
        warnings.push_back(fmt::format(
            "warning: reached --max-epochs {} before the tolerance{}: relative gap {:.3e} > tol {:.1e}; "
            "the model and its certificate are written\n",
            a.opt.solver.max_epochs, who, c.certificate.gap / std::fabs(c.certificate.primal), a.opt.solver.tol));
    }
  }
  // The report is written to a temporary file first (StagedFile, io.hpp), then the model (atomically); only when the
  // model is in place does the report replace the previous one. A failed write (disk full) therefore leaves the previous model
  // and the previous report as they were, and never a report of a model that was not written. Paths that are not
  // UTF-8 are written with U+FFFD in the JSON.
  std::optional<hetglm::StagedFile> staged_report;
  try {
    if (!a.report_file.empty())
      staged_report = hetglm::StagedFile::stage(
          a.report_file, report.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  } catch (const hetglm::Error& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  }
  res.model.zero_based = a.zero_based;  // predict reads its data as the training file was read
  try {
    hetglm::write_model_to(a.model_file, res.model);
  } catch (const hetglm::Error& e) {
    hetglm::eprint("error: {}{}\n", e.what(),
                   a.report_file.empty() ? std::string()
                                         : fmt::format("; the report '{}' is not replaced either", a.report_file));
    return kExitTraining;  // staged_report's temporary file is removed
  }
  if (staged_report) {
    try {
      staged_report->commit();
    } catch (const hetglm::Error& e) {
      hetglm::eprint("error: {} (the model {} is written)\n", e.what(),
                     a.model_file == "-" ? std::string("to standard output") : "'" + a.model_file + "'");
      return kExitTraining;
    }
  }
  for (const std::string& w : warnings) hetglm::eprint("{}", w);
  if (res.interrupted) {  // --save-on-interrupt: written, but still exit code 130
    hetglm::eprint(
        "interrupted: stopped after the current epoch with relative gap {:.3e}; model '{}' written with this "
        "certificate (--save-on-interrupt)\n",
        report["rel_gap"].get<double>(), a.model_file);
    return interrupted_exit_code();
  }
  if (!a.quiet) {
    info_print(info, "model '{}' ({} {}, lambda {:.6g}): primal {:.10e}  dual {:.10e}  gap {:.3e}  rel gap {:.3e}  epochs {}  "
               "train {:.3f}s\n",
               res.spec.name, report["formulation"].get<std::string>(), res.model.penalty, res.lambda, P, D, G,
               report["rel_gap"].get<double>(), max_epochs_used, train_seconds);
    // The trial runs of --formulation auto come before the first epoch, so the progress lines' seconds leave them
    // out of the train time above: said here when they take a noticeable share of it.
    const std::string trial = res.formulation_seconds >= 0.05 && res.formulation_seconds >= 0.1 * train_seconds
                                  ? fmt::format(", chosen in {:.3f}s before the first epoch", res.formulation_seconds)
                                  : std::string();
    info_print(info, "formulation {} (solver {}{}): {}\n", report["formulation"].get<std::string>(),
               report["solver"].get<std::string>(), trial, res.formulation_reason);
    info_print(info, "train {}", metric_text(report["train"]));
    if (test) info_print(info, "  test {} on '{}'", metric_text(report["test"]), a.test_file);
    info_print(info, "\nwrote {} in {:.3f}s total\n",
               a.model_file == "-" ? std::string("the model to standard output") : "'" + a.model_file + "'",
               seconds_since(t_start));
  }
  flush_info(info);
  if (g_stdout_closed)
    hetglm::eprint("warning: standard output was closed by its reader (Broken pipe); the lines after that were "
                   "not printed; the model '{}' is written\n",
                   a.model_file);
  if (test) warn_extra_features(res.model, *test, a.test_file, a.zero_based);
  return 0;
}

struct PredictArgs {
  std::string model_file, data_file, output_file, memory_limit;
  bool probability = false, quiet = false, zero_based = false;
  int threads = 0;
  std::string b;  ///< LIBLINEAR's -b 0|1 (1 = --probability)
};

/// The model file failed to load: when DATA is a hetglm model, the arguments are in LIBLINEAR's order.
[[noreturn]] void rethrow_with_order_hint(const PredictArgs& a) {
  try {
    throw;
  } catch (const hetglm::ParseError& e) {
    std::ifstream in(a.data_file, std::ios::binary);
    std::string head(16, '\0');
    in.read(head.data(), 16);
    if (in.gcount() == 16 && head == "format hetglm-1\n")
      throw hetglm::ParseError(
          e.file(), e.line(), e.column(),
          fmt::format("{}\nhint: the model comes first here: hetglm predict MODEL DATA [OUTPUT] (LIBLINEAR's predict "
                      "takes DATA MODEL OUTPUT): hetglm predict {} {}{}",
                      e.message(), a.data_file, a.model_file, a.output_file.empty() ? "" : " " + a.output_file));
    throw;
  }
}

int run_predict(PredictArgs& a) {
  if (!a.b.empty()) {
    const int b = hetglm::cli::parse_int("-b", a.b);
    if (b != 0 && b != 1)
      throw hetglm::InvalidArgument(fmt::format("-b: expected 0 or 1 (1: probability estimates), got {}", a.b));
    if (b == 0 && a.probability)
      throw hetglm::InvalidArgument("-b 0 and --probability contradict each other: give one of them");
    a.probability = a.probability || b == 1;
  }
  if (a.threads < 0) throw hetglm::InvalidArgument(fmt::format("--threads: must be >= 0 (0 = all cores), got {}", a.threads));
  if (a.output_file == "-" || is_standard_output(a.output_file)) a.output_file.clear();  // standard output
  check_outputs({{"MODEL", a.model_file}, {"DATA", a.data_file}}, {{"OUTPUT", a.output_file}});
  try {  // an output that cannot be written fails before anything is read (exit code 1)
    if (!a.output_file.empty()) hetglm::check_writable(a.output_file);
  } catch (const hetglm::IoError& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  }
  hetglm::ModelLoadOptions mo;
  mo.memory_limit = memory_limit_option(a.memory_limit);
  mo.memory_limit_name = "--memory-limit";
  LinearModel model;
  try {
    model = hetglm::load_model(a.model_file, mo);
  } catch (const hetglm::ParseError&) {
    rethrow_with_order_hint(a);
  }
  if (a.probability && model.model != "logistic" && model.model != "multinomial")
    throw hetglm::InvalidArgument(fmt::format("{}: only logistic and multinomial models give probabilities ('{}' is a {} model)",
                                              a.b == "1" ? "-b 1" : "--probability", a.model_file, model.model));
  // A model trained with --zero-based reads its data zero-based too (its features shifted by one without a word).
  if (model.zero_based && !a.zero_based) {
    if (!a.quiet)
      hetglm::eprint("note: '{}' was trained on zero-based feature indices (--zero-based): reading '{}' so\n",
                     a.model_file, a.data_file);
    a.zero_based = true;
  }
  hetglm::LibsvmOptions ro;
  ro.zero_based = a.zero_based;
  ro.n_threads = a.threads;
  ro.memory_limit = mo.memory_limit;
  ro.memory_limit_name = mo.memory_limit_name;
  // The values to double precision (values_lo, matrix.hpp), which decision_function reads: the decision values are
  // those of the file's own numbers, as LIBLINEAR's predict (doubles) and the Python estimators' predict (float64
  // X @ coef_) compute them, not of their float32 rounding (about 1e-7 relative off).
  ro.float64 = true;
  ro.float64_keep_tiny = true;  // a value below 2^-100 in one row leaves the other rows' values to double precision
  ro.float64_reason = "as predictions are computed from them";
  const Dataset data = hetglm::read_libsvm(a.data_file, ro);
  warn_extra_features(model, data, a.data_file, a.zero_based);
  // A decision value that overflows (a model file's weights edited to 1e308) printed "-nan" and "inf" with exit 0.
  std::int64_t bad_row = -1;
  const std::vector<double> pred = hetglm::predict(model, data.X, &bad_row);
  if (bad_row >= 0)
    throw hetglm::InvalidArgument(fmt::format("'{}': the decision value of sample {} of '{}' is not finite: the "
                                              "model's weights times the sample's values overflow double precision",
                                              a.model_file, bad_row + 1, a.data_file));
  std::string out;
  if (a.probability) {
    const std::vector<double> proba = hetglm::predict_proba(model, data.X);
    const std::size_t k = model.labels.size();
    out += "labels";
    // The shortest text that reads back as the same double ({}): a label 0.1 is "0.1" (LIBLINEAR's %g), not
    // "0.10000000000000001" as with %.17g, and nothing is lost.
    for (double l : model.labels) out += fmt::format(" {}", l);
    out += "\n";
    for (std::size_t i = 0; i < pred.size(); ++i) {
      out += fmt::format("{}", pred[i]);
      for (std::size_t j = 0; j < k; ++j) out += fmt::format(" {}", proba[i * k + j]);
      out += "\n";
    }
  } else {
    for (double p : pred) out += fmt::format("{}\n", p);
  }
  // A failed output is exit code 1, as in train (2 is for bad usage and bad input).
  try {
    if (a.output_file.empty()) {
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
        throw hetglm::IoError(fmt::format("cannot write the predictions to standard output: {}", std::strerror(errno)));
    } else {
      hetglm::write_file_atomic(a.output_file, out);
    }
  } catch (const hetglm::IoError& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  }
  if (pred.empty()) {  // no accuracy of nothing ("0.0000% (0/0)"): say why the output is empty
    if (!a.quiet)
      hetglm::eprint("warning: {}: no samples, so no predictions (the output is empty)\n", a.data_file);
    return 0;
  }
  const json m = metrics(model, data);
  if (!a.quiet && m.contains("accuracy")) {
    // Samples whose label is not a class of the model count as errors in the accuracy: say so (a file of labels
    // 1 / 2 against a model of -1 / +1 gave "Accuracy = 6.2%" and nothing else; LIBLINEAR says nothing either).
    const std::set<double> classes(model.labels.begin(), model.labels.end());
    std::set<double> foreign;
    std::size_t n_foreign = 0;
    for (double y : data.y)
      if (!classes.count(y)) {
        foreign.insert(y);
        ++n_foreign;
      }
    if (n_foreign > 0) {
      auto list = [](const std::set<double>& ls) {
        std::string t;
        std::size_t k = 0;
        for (double l : ls) {
          if (k++ == 5) return t + ", ...";
          t += fmt::format("{}{}", t.empty() ? "" : ", ", l);
        }
        return t;
      };
      hetglm::eprint("warning: '{}': {} of its {} samples have a label that is not a class of the model '{}' ({} {}; "
                     "the model's classes: {}): they count as errors in the accuracy\n",
                     a.data_file, n_foreign, data.y.size(), a.model_file, foreign.size() == 1 ? "label" : "labels",
                     list(foreign), list(classes));
    }
  }
  if (!a.quiet) {
    std::FILE* sink = a.output_file.empty() ? stderr : stdout;
    if (m.contains("accuracy"))
      info_print(sink, "Accuracy = {:g}% ({}/{})\n", 100.0 * m["accuracy"].get<double>(),  // LIBLINEAR's %g
                 static_cast<long long>(std::llround(m["accuracy"].get<double>() * pred.size())), pred.size());
    else
      info_print(sink, "Mean squared error = {:g} (regression)\nSquared correlation coefficient = {:g} (regression)\n",
                 m["mse"].get<double>(), m["squared_correlation"].get<double>());  // LIBLINEAR's two lines
  }
  return 0;
}

}  // namespace

/// The whole command line; main() calls it, and the option-parsing fuzzer (tests/fuzz) calls it directly.
int hetglm_cli_main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed standard output is an error to report, not a silent exit 141
  CLI::App app{"hetglm: generalized linear models with a certified duality gap", "hetglm"};
#ifdef HETGLM_ENABLE_MPI
  constexpr const char* kMpi = "; MPI: --distributed";
#else
  constexpr const char* kMpi = "; no MPI";
#endif
  app.set_version_flag("--version", std::string("hetglm ") + HETGLM_VERSION + " (backends: " + HETGLM_BACKENDS + kMpi +
                                        ")");
  app.require_subcommand(1);

  TrainArgs ta;
  auto* train = app.add_subcommand("train", "train a model on a libsvm file");
  train->add_option("TRAIN", ta.train_file, "training data (libsvm/svmlight, optionally .gz)")->required();
  train->add_option("MODEL", ta.model_file, "output model file (default: TRAIN's file name + .model)");
  train->add_option("--model", ta.model, hetglm::model_names(" | ", " | "))
      ->capture_default_str();
  train->add_option("--penalty", ta.penalty, "l2 | l1 | elastic-net (default: the model's own)");
  train->add_option("-c", ta.C, "LIBLINEAR's C: lambda = 1/(C n)");
  train->add_option("--lambda", ta.lambda, "regularization strength lambda of P(w) (scikit-learn's alpha for lasso)");
  train->add_option("--l1-ratio", ta.opt.problem.l1_ratio, "elastic-net mixing in [0, 1]")->capture_default_str();
  train->add_option("--tol", ta.opt.solver.tol, "stop when the duality gap <= tol * |primal|")->capture_default_str();
  train->add_option("--max-epochs", ta.opt.solver.max_epochs, "epoch limit (reaching it is a warning)")->capture_default_str();
  train->add_option("--seed", ta.seed, "seed of the coordinate order, an integer in [0, 2^64-1]")->capture_default_str();
  train->add_option("-B", ta.opt.problem.bias, "bias: >= 0 appends a constant feature of this value (LIBLINEAR -B)")
      ->capture_default_str();
  train->add_option("--formulation", ta.formulation, "auto | dual | primal")->capture_default_str();
  train->add_option("--n-features", ta.n_features, "number of features; a larger index in TRAIN is an error")
      ->each([&ta](const std::string&) { ta.n_features_given = true; });
  train->add_flag("--zero-based", ta.zero_based, "feature indices start at 0 (scikit-learn's dump_svmlight_file)");
  train->add_option("--test", ta.test_file, "evaluate on this libsvm file after training");
  train->add_option("--report-json", ta.report_file, "write a JSON report (certificate, metrics, history)");
  train->add_option("--threads", ta.threads, "threads for reading and for the solver (DuHL: its CPU unit) (0 = all cores; --distributed: per "
                    "rank, 0 = the node's cores shared among its ranks)")
      ->capture_default_str();
  train->add_option("--device", ta.device,
                    "cpu | opencl | cuda | fpga | fpga-sim | auto: accelerator for DuHL (cpu = the CPU solver, or the "
                    "cpu stand-in when --accel-memory is given)")
      ->capture_default_str();
  train->add_option("--accel-memory", ta.accel_memory,
                    "DuHL accelerator budget: bytes with K M G T (10^3..) or Ki Mi Gi Ti (2^10..), or a percentage such as "
                    "25%");
  train->add_option("--cpu-role", ta.cpu_role, "DuHL: gaps (as published) | solve (the CPU also trains)")
      ->capture_default_str();
  train->add_option("--duhl-selection", ta.duhl_selection, "DuHL working sets: duhl | random | streaming (baselines)")
      ->capture_default_str();
  train->add_option("--link-bandwidth", ta.opt.device.backend.link_bandwidth_gbps, "cpu stand-in: emulated host-device link in GB/s (0 = none)")
      ->capture_default_str();
  train->add_option("--tpa-concurrency", ta.opt.device.backend.tpa_concurrency,
                    "TPA-SCD wave schedule (docs/cuda.md): cuda = most coordinates in flight (0 = the resident blocks); "
                    "cpu stand-in = emulate the CUDA kernel's schedule with this many in flight (0 = sequential epochs)");
  train->add_option("--xclbin", ta.opt.device.backend.xclbin, "--device fpga: the FPGA binary built from hls/ with Vitis (docs/fpga.md)");
  train->add_option("--duhl-epochs", ta.opt.device.duhl.epochs_per_round, "DuHL: accelerator epochs per round")->capture_default_str();
  train->add_option("--solver", ta.solver,
                    "auto | newton | working-set | sequential | syscd | passcode-atomic | passcode-wild (auto: newton for the "
                    "primal of logistic, squared hinge, huber and ridge, working-set for the primal of lasso and elastic net, else "
                    "syscd, or sequential with --threads 1 and for the hinge loss below 10^6 nonzeros)")
      ->capture_default_str();
  train->add_option("--numa-nodes", ta.opt.solver.numa_nodes, "syscd: NUMA nodes (0 = the machine's; K = K virtual nodes)")
      ->capture_default_str();
  train->add_flag("--deterministic", ta.deterministic,
                  "the same --seed and --threads give a byte-identical model file (the default; with a PASSCoDe solver "
                  "an error)");
  train->add_option("--bucket-size", ta.opt.solver.bucket_size, "syscd: coordinates per bucket (0 = automatic)")
      ->capture_default_str();
  train->add_flag("--no-shrinking", ta.no_shrinking,
                  "coordinate descent: visit every coordinate every epoch (no gap-driven shrinking)");
  train->add_option("--aggregation", ta.aggregation,
                    "syscd with several threads, DuHL --cpu-role solve and --distributed: adaptive (a search on the "
                    "objective for the merged "
                    "step, the default) | fixed (the CoCoA+ step gamma = 1)")
      ->capture_default_str();
  train->add_option("--replica-sigma", ta.opt.solver.replica_sigma,
                    "syscd with several threads, dual, adaptive aggregation: the replicas' sigma', 1 or more (above "
                    "the thread count: the thread count, CoCoA+; 0 = by loss: sqrt(threads) hinge, threads^(1/4) "
                    "logistic and squared hinge, threads otherwise)")
      ->capture_default_str();
  train->add_option("--certificate-every", ta.opt.solver.certificate_every,
                    "coordinate descent: an exact certificate every N epochs (0 = the adaptive schedule)")
      ->capture_default_str();
  train->add_flag("--nondeterministic", ta.nondeterministic,
                  "syscd: let threads steal buckets from each other (faster on uneven rows; the model depends on the "
                  "schedule)");
  train->add_flag("--save-on-interrupt", ta.save_on_interrupt,
                  "on Ctrl-C, still write the model (with its current, unconverged certificate) and the report; "
                  "exit code 130");
  train->add_flag("-q,--quiet", ta.quiet, "no progress output");
  train->add_option("--memory-limit", ta.memory_limit,
                    "stop reading TRAIN (and --test, each file within SIZE) once the data kept would exceed SIZE "
                    "bytes, and refuse to train when "
                    "the memory estimate (data included) exceeds it (K M G T or Ki Mi Gi Ti; default: reading stops at "
                    "90% of the data kept plus the cgroup limit or MemAvailable, training is refused when its estimate "
                    "exceeds what is still available then)");
  train->add_flag("--distributed", ta.distributed,
                  "CoCoA+ over MPI: run under `mpirun -np K`; each rank reads its byte range of TRAIN (docs/mpi.md)");
  train->add_option("--local-epochs", ta.local_epochs, "--distributed: local epochs per communication round")
      ->capture_default_str();
  train->add_option("--partition", ta.partition,
                    "--distributed: random (rows or columns sent to ranks by a seeded hash of their index) or "
                    "file-order (each rank keeps what its byte range holds)")
      ->capture_default_str();
  train->add_option("--progress", ta.progress,
                    "progress lines besides the first and the last epoch: every T seconds (e.g. 2s; default 1s) or the first "
                    "certified epoch at or after every multiple of N epochs (e.g. 10; 1: every certified epoch)");
  // LIBLINEAR's flags with LIBLINEAR's meaning (README, "The command line"; -wi weight is taken out of argv first).
  train->add_option("-s", ta.s_type,
                    "LIBLINEAR solver type: 0 L2R_LR, 1 L2R_L2LOSS_SVC_DUAL, 2 L2R_L2LOSS_SVC, 3 L2R_L1LOSS_SVC_DUAL, "
                    "5 L1R_L2LOSS_SVC, 6 L1R_LR, 7 L2R_LR_DUAL, 11 / 12 L2R_L2LOSS_SVR(_DUAL) with -p 0 (ridge)");
  train->add_option("-e", ta.eps, "LIBLINEAR's -e: here the relative duality gap (= --tol)");
  train->add_option("-p", ta.svr_p, "LIBLINEAR's SVR epsilon: only -p 0 (ridge) with -s 11 / -s 12");
  train->add_option("-v", ta.cv_folds_text, "n-fold cross-validation: prints the CV accuracy (or MSE); no model");
  train->add_flag("-C", ta.find_C, "search C by cross-validation (5 folds, or -v n) with warm starts; no model");
  train->add_option("--folds", ta.folds,
                    "-v / -C: liblinear (LIBLINEAR's own split, the folds liblinear-train uses) | stratified "
                    "(classifiers; by --seed) | random (by --seed)")
      ->capture_default_str();
  train->add_option("-n", ta.n_threads_text, "threads (= --threads; LIBLINEAR's multicore -n)");
  // -wi weight: listed for --help only; extract_class_weights() has already taken every -wLABEL WEIGHT out of argv.
  train->footer(
      "Class weights: -wi weight (LIBLINEAR): C of the samples of class i times weight (one-vs-rest: in class i's "
      "own column), e.g. -w1 2 -w-1 0.5.");

  PredictArgs pa;
  auto* pred = app.add_subcommand("predict", "predict with a trained model");
  pred->add_option("MODEL", pa.model_file, "model file written by `hetglm train`")->required();
  pred->add_option("DATA", pa.data_file, "libsvm file with labels")->required();
  pred->add_option("OUTPUT", pa.output_file, "predictions, one per line (default: standard output)");
  pred->add_flag("--probability", pa.probability, "write class probabilities (logistic models)");
  pred->add_option("-b", pa.b, "LIBLINEAR's -b: 1 = probability estimates (= --probability), 0 = labels");
  pred->add_flag("--zero-based", pa.zero_based, "feature indices start at 0");
  pred->add_option("--threads", pa.threads, "threads for reading (0 = all cores)");
  pred->add_flag("-q,--quiet", pa.quiet, "print nothing but errors");
  pred->add_option("--memory-limit", pa.memory_limit,
                   "stop reading MODEL / DATA (each file within SIZE) once what is kept would exceed SIZE bytes (K M "
                   "G T or Ki Mi Gi Ti)");

  // Unknown options are reported by us, naming the token and what to write instead (liblinear.hpp).
  train->allow_extras();
  pred->allow_extras();
  std::vector<std::string> args(argv, argv + argc);
  // A first word that is neither a subcommand nor an option is named (CLI11 says only "A subcommand is required").
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-' && args[1] != "train" && args[1] != "predict") {
    hetglm::eprint("error: unknown command '{}' (expected train or predict; see hetglm --help)\n", args[1]);
    return kExitUsage;
  }
  try {
    ta.class_weights = hetglm::cli::extract_class_weights(args);
  } catch (const hetglm::Error& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitUsage;
  }
  std::vector<char*> cargs;
  for (std::string& s : args) cargs.push_back(s.data());
  cargs.push_back(nullptr);
  // The help to point to after a parse error: the subcommand's, once it was reached.
  auto usage_hint = [&]() -> std::string {
    if (pred->parsed()) return "Run 'hetglm predict --help' for usage.";
    if (train->parsed()) return "Run 'hetglm train --help' for usage.";
    return "Run 'hetglm --help' or 'hetglm train --help' for usage.";
  };
  // An option given twice takes its last value, as LIBLINEAR's train and predict do (CLI11 refused it: "-c: At Most
  // 1 required but received 2"; a script that appends an override broke). Two spellings of one setting (-e and
  // --tol) stay an error (check_options).
  for (CLI::App* sub : {train, pred})
    for (CLI::Option* o : sub->get_options())
      if (o->get_type_size_max() == 1 && o->get_expected_max() == 1)
        o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  try {
    app.parse(static_cast<int>(args.size()), cargs.data());
    for (CLI::App* sub : {train, pred}) {
      if (!app.got_subcommand(sub) || sub->remaining().empty()) continue;
      const std::vector<std::string> extra = sub->remaining();
      // Name the first token that looks like an option: the tokens after it are usually its value or the
      // positional arguments it pushed along.
      std::string token = extra.front();
      for (const std::string& t : extra) {
        double num = 0;
        const bool number = !t.empty() && std::from_chars(t.data(), t.data() + t.size(), num).ptr == t.data() + t.size();
        if (t.size() > 1 && t[0] == '-' && !number) {
          token = t;
          break;
        }
      }
      std::vector<std::string> known;
      for (const CLI::Option* o : sub->get_options()) {
        for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
        for (const std::string& s : o->get_snames()) known.push_back("-" + s);
      }
      const std::string hint = hetglm::cli::unknown_option_hint(token, sub == train, known);
      hetglm::eprint("error: The following argument was not expected: {}\n{}{}\n", token,
                     hint.empty() ? "" : hint + "\n", usage_hint());
      return kExitUsage;
    }
    ta.model_given = train->count("--model") > 0;
    ta.penalty_given = train->count("--penalty") > 0;
    ta.formulation_given = train->count("--formulation") > 0;
    ta.tol_given = train->count("--tol") > 0;
    ta.l1_ratio_given = train->count("--l1-ratio") > 0;
    ta.threads_given = train->count("--threads") > 0;
    for (const char* name : {"--cpu-role", "--duhl-selection", "--duhl-epochs", "--link-bandwidth",
                             "--tpa-concurrency", "--xclbin"})
      if (train->count(name) > 0) ta.duhl_options_given.push_back(name);
    for (const char* name : {"--no-shrinking", "--certificate-every", "--replica-sigma", "--bucket-size", "--aggregation",
                             "--nondeterministic"})
      if (train->count(name) > 0) ta.cd_options_given.push_back(name);
    ta.local_epochs_given = train->count("--local-epochs") > 0;
    ta.replica_sigma_given = train->count("--replica-sigma") > 0;
    ta.partition_given = train->count("--partition") > 0;
    ta.folds_given = train->count("--folds") > 0;
    // An option given an empty value ("-c ''", "--lambda=") would parse as its default or 0: an error instead.
    for (CLI::App* sub : {train, pred}) {
      if (!app.got_subcommand(sub)) continue;
      for (const CLI::Option* o : sub->get_options()) {
        if (o->get_type_size_min() <= 0) continue;  // a flag
        for (const std::string& v : o->results())
          if (v.empty()) {
            const std::string name = !o->get_lnames().empty()   ? "--" + o->get_lnames().front()
                                     : !o->get_snames().empty() ? "-" + o->get_snames().front()
                                                                : o->get_name();
            hetglm::eprint("error: {}: the value is empty\n", name);
            return kExitUsage;
          }
      }
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --max-epochs = 99999999999" for a malformed or out-of-range number: name the
    // option and the value in our form.
    const std::string what = e.what(), head = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.rfind(head, 0) == 0 && eq != std::string::npos)
      hetglm::eprint("error: {}: '{}' is not a value this option takes (a malformed number, or one out of its "
                     "range)\n{}\n",
                     what.substr(head.size(), eq - head.size()), what.substr(eq + 3), usage_hint());
    else
      hetglm::eprint("error: {}\n{}\n", what, usage_hint());
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    hetglm::eprint("error: {}\n{}\n", e.what(), usage_hint());
    return kExitUsage;
  }
  try {
    if (app.got_subcommand(train)) return run_train(ta);
    return run_predict(pa);
  } catch (const hetglm::TrainingError& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  } catch (const hetglm::Interrupted& e) {  // Ctrl-C while a reader waited or read (LibsvmOptions::should_stop)
    hetglm::eprint("interrupted while loading '{}'; nothing written\n", e.file());
    return interrupted_exit_code();
  } catch (const hetglm::Error& e) {
    // Under `mpirun ... --distributed` every rank finds the same bad option before MPI starts: rank 0 says it.
    if (!app.got_subcommand(train) || prints_option_warnings(ta)) hetglm::eprint("error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    hetglm::eprint("error: out of memory\n");
    return kExitTraining;
  } catch (const std::exception& e) {
    hetglm::eprint("error: {}\n", e.what());
    return kExitTraining;
  }
}

#ifndef HETGLM_CLI_NO_MAIN
int main(int argc, char** argv) { return hetglm_cli_main(argc, argv); }
#endif
