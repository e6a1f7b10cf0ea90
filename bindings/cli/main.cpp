// SPDX-License-Identifier: Apache-2.0
// The `hetglm` command line: `hetglm train [options] TRAIN [MODEL]` and
// `hetglm predict [options] MODEL DATA [OUTPUT]` over libsvm files (LIBLINEAR's train/predict, with a
// duality-gap certificate). Exit codes: 0 success, 1 training failure, 2 bad usage or bad input,
// 130 interrupted (SIGINT).
#include <CLI/CLI.hpp>
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
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "hetglm/config.hpp"
#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/memory.hpp"
#include "hetglm/model.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/distributed.hpp"
#include "hetglm/train.hpp"

namespace {

using hetglm::CsrMatrix;
using hetglm::Dataset;
using hetglm::LinearModel;
using json = nlohmann::json;

constexpr int kExitTraining = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted.store(true); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Metrics of predictions against the labels of `data`: accuracy for classifiers, RMSE for regression.
json metrics(const LinearModel& model, const Dataset& data) {
  const std::vector<double> pred = hetglm::predict(model, data.X);
  json m;
  m["n_samples"] = data.y.size();
  if (model.is_classifier()) {
    std::size_t ok = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) ok += pred[i] == data.y[i];
    m["accuracy"] = pred.empty() ? 0.0 : double(ok) / pred.size();
  } else {
    double se = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) se += (pred[i] - data.y[i]) * (pred[i] - data.y[i]);
    m["rmse"] = pred.empty() ? 0.0 : std::sqrt(se / pred.size());
  }
  return m;
}

std::string metric_text(const json& m) {
  if (m.contains("accuracy")) return fmt::format("accuracy {:.4f}", m["accuracy"].get<double>());
  return fmt::format("rmse {:.6g}", m["rmse"].get<double>());
}

/// Warn once when a data file has features the model does not know (they are ignored, as in LIBLINEAR).
void warn_extra_features(const LinearModel& model, const Dataset& data, const std::string& file) {
  if (data.X.n_cols > model.nr_feature)
    fmt::print(stderr, "warning: '{}' has features up to index {} but the model has nr_feature {}: the extra features are ignored\n",
               file, data.X.n_cols, model.nr_feature);
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
    return fs::weakly_canonical(a, e1) == fs::weakly_canonical(b, e2);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [role, path] = outputs[i];
    if (path.empty()) continue;
    Files others = inputs;
    others.insert(others.end(), outputs.begin() + static_cast<std::ptrdiff_t>(i) + 1, outputs.end());
    for (const auto& [orole, opath] : others)
      if (!opath.empty() && same(path, opath))
        throw hetglm::InvalidArgument(
            fmt::format("{} '{}' is the same file as {} '{}': refusing to overwrite it", role, path, orole, opath));
  }
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
  for (const auto& r : h)
    a.push_back({{"epoch", r.epoch}, {"seconds", r.seconds}, {"primal", r.primal}, {"dual", r.dual},
                 {"gap", r.gap}, {"rel_gap", r.rel_gap}});
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
  std::string memory_limit;  ///< --memory-limit: the readers' budget ("" = automatic)
};

/// The strings of `a` into a.opt, then every check that needs no data (train.hpp check_options).
void parse_options(TrainArgs& a) {
  hetglm::TrainOptions& o = a.opt;
  o.problem.model = hetglm::model_spec(a.model, a.penalty);
  o.problem.C = a.C;
  o.problem.lambda = a.lambda;
  o.problem.formulation = hetglm::parse_formulation(a.formulation);
  o.solver.solver = hetglm::parse_solver_kind(a.solver);
  o.solver.seed = parse_seed(a.seed);
  o.solver.n_threads = a.threads;
  o.device.device = a.device == "auto" ? std::nullopt : std::optional<hetglm::Device>(hetglm::parse_device(a.device));
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
  hetglm::check_options(o);
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
  if (a.model_file.empty()) a.model_file = default_model_path(a.train_file);
  // Outputs must not overwrite an input or each other.
  check_outputs({{"TRAIN", a.train_file}, {"--test", a.test_file}},
                {{"MODEL", a.model_file}, {"--report-json", a.report_file}});
  if (a.distributed && a.opt.solver.solver != hetglm::SolverKind::automatic &&
      a.opt.solver.solver != hetglm::SolverKind::sequential)
    throw hetglm::InvalidArgument(fmt::format(
        "--solver {}: --distributed trains with the sequential local solver on every rank (CoCoA+); drop --solver",
        hetglm::solver_kind_name(a.opt.solver.solver)));
  if (a.distributed) {  // `mpirun -np K hetglm train --distributed ...` (solvers/src/distributed.cpp, docs/mpi.md)
#ifdef HETGLM_ENABLE_MPI
    if (!a.test_file.empty()) throw hetglm::InvalidArgument("--test is not supported with --distributed");
    hetglm::DistributedArgs d{a.train_file, a.model_file, a.report_file, a.opt, a.zero_based, a.n_features,
                              a.threads, a.local_epochs, a.quiet};
    return hetglm::train_distributed_main(d);
#else
    throw hetglm::InvalidArgument("--distributed: this hetglm was built without MPI (configure with -DHETGLM_ENABLE_MPI=ON)");
#endif
  }
  // From here on, Ctrl-C ends with exit code 130 after the current epoch and writes nothing, unless
  // --save-on-interrupt is given (then the model with its honest current certificate and the report are written).
  std::signal(SIGINT, on_sigint);

  hetglm::LibsvmOptions ro;
  ro.zero_based = a.zero_based;
  ro.n_features = a.n_features;
  ro.n_threads = a.threads;
  ro.memory_limit = memory_limit_option(a.memory_limit);
  ro.memory_limit_name = "--memory-limit";
  ro.should_stop = [] { return g_interrupted.load(); };  // Interrupted: "interrupted while loading", exit 130
  auto t0 = std::chrono::steady_clock::now();
  const Dataset data = hetglm::read_libsvm(a.train_file, ro);
  const double load_seconds = seconds_since(t0);
  if (g_interrupted.load()) {
    fmt::print(stderr, "interrupted while loading '{}'; nothing written\n", a.train_file);
    return kExitInterrupted;
  }
  std::optional<Dataset> test;
  if (!a.test_file.empty()) {
    hetglm::LibsvmOptions to = ro;
    to.n_features = -1;  // extra features in the test file are ignored, as in predict
    test = hetglm::read_libsvm(a.test_file, to);
  }
  if (!a.quiet)
    fmt::print("loaded '{}': {} samples, {} features, {} nonzeros in {:.3f}s\n", a.train_file, data.X.n_rows,
               data.X.n_cols, data.X.nnz(), load_seconds);

  a.opt.solver.should_stop = [] { return g_interrupted.load(); };
  bool multi_column = false;
  if (!a.quiet) {
    a.opt.on_epoch = [&multi_column](int, double label, const hetglm::EpochRecord& r) {
      const std::string prefix = multi_column ? fmt::format("[class {}] ", label) : std::string();
      fmt::print("{}epoch {:5d}  primal {:.10e}  gap {:.3e}  rel gap {:.3e}  {:8.3f}s\n", prefix, r.epoch, r.primal,
                 r.gap, r.rel_gap, r.seconds);
      std::fflush(stdout);
    };
  }
  // One-vs-rest prefixes progress lines with the class.
  {
    std::set<double> labels(data.y.begin(), data.y.end());
    multi_column = labels.size() > 2 && a.opt.problem.model.classifier;
  }
  t0 = std::chrono::steady_clock::now();
  // The process's one oneTBB arena (docs/conventions.md, "Threads"): the solver threads and one-vs-rest classes share it.
  const int cores = tbb::info::default_concurrency();
  tbb::task_arena arena(std::min(a.threads > 0 ? a.threads : cores, cores));
  hetglm::TrainResult res = arena.execute([&] { return hetglm::train(data, a.opt); });
  const double train_seconds = seconds_since(t0);

  if (res.interrupted) {
    double gap = 0, primal = 0;
    for (const auto& c : res.columns) gap += c.certificate.gap, primal += c.certificate.primal;
    const double rel = primal != 0 ? gap / std::fabs(primal) : gap;
    // One-vs-rest stops at the interrupted class: the classes after it have no weights, so no model is written.
    const std::size_t want = res.spec.classifier && res.model.nr_class > 2 ? std::size_t(res.model.nr_class) : 1;
    if (!a.save_on_interrupt || res.columns.size() < want) {
      fmt::print(stderr, "interrupted: stopped after the current epoch with relative gap {:.3e}; no model written{}\n",
                 rel,
                 a.save_on_interrupt ? fmt::format(" (--save-on-interrupt: only {} of {} one-vs-rest classes trained)",
                                                   res.columns.size(), want)
                                     : std::string());
      return kExitInterrupted;
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
  report["solver"] = res.solver == hetglm::SolverKind::automatic ? std::string("duhl")
                                                                  : std::string(hetglm::solver_kind_name(res.solver));
  report["device"] = a.device;
  if (!res.device_reason.empty()) {
    report["device_reason"] = res.device_reason;
    if (!a.quiet) fmt::print("{}\n", res.device_reason);
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
                                                                res.solver != hetglm::SolverKind::passcode_wild);
  report["lambda"] = res.lambda;
  report["l1_ratio"] = res.model.l1_ratio;
  report["tol"] = a.opt.solver.tol;
  report["max_epochs"] = a.opt.solver.max_epochs;
  report["seed"] = a.opt.solver.seed;
  report["bias"] = a.opt.problem.bias;
  report["n_samples"] = data.X.n_rows;
  report["n_features"] = data.X.n_cols;
  report["nnz"] = data.X.nnz();
  report["load_seconds"] = load_seconds;
  report["train_seconds"] = train_seconds;
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
    if (res.spec.classifier) cj["label"] = c.label;
    if (!c.rounds.empty()) {  // DuHL per-round records (duhl.hpp)
      json rj = json::array();
      for (const hetglm::DuhlRound& r : c.rounds) {
        json x = {{"round", r.round}, {"seconds", r.seconds}, {"working_set", r.working_set}, {"swaps", r.swaps},
                  {"bytes_copied", r.bytes_copied}, {"ws_gap_share", r.ws_gap_share},
                  {"accel_seconds", r.accel_seconds}, {"cpu_updates", r.cpu_updates}, {"exact", r.exact}};
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

  for (const auto& c : res.columns) {
    if (!c.converged && !res.interrupted) {
      const std::string who = res.spec.classifier && res.columns.size() > 1 ? fmt::format(" (class {})", c.label) : "";
      if (c.certificate.gap < 0)  // dual above primal beyond the tolerance: rounding, not convergence
        fmt::print(stderr,
                   "warning: the duality gap is negative beyond the tolerance{}: P - D = {:.3e} (relative {:.3e}); the "
                   "objective values lose precision on this data (extreme feature values or sample weights), so the "
                   "model is written without a certificate at tol {:.1e}\n",
                   who, c.certificate.gap, c.certificate.gap / std::fabs(c.certificate.primal), a.opt.solver.tol);
      else if (c.epochs < a.opt.solver.max_epochs)  // the Newton solver stops when no decrease is measurable any more
        fmt::print(stderr,
                   "warning: stopped after {} epochs before the tolerance{}: no further decrease of the objective is "
                   "measurable in double precision; relative gap {:.3e} > tol {:.1e}; the model and its certificate "
                   "are written\n",
                   c.epochs, who, c.certificate.gap / std::fabs(c.certificate.primal), a.opt.solver.tol);
      else
        fmt::print(stderr,
                   "warning: reached --max-epochs {} before the tolerance{}: relative gap {:.3e} > tol {:.1e}; "
                   "the model and its certificate are written\n",
                   a.opt.solver.max_epochs, who, c.certificate.gap / std::fabs(c.certificate.primal), a.opt.solver.tol);
    }
  }
  // The report first: if it cannot be written, the previous model stays untouched. Paths that are not UTF-8
  // are written with U+FFFD in the JSON.
  try {
    if (!a.report_file.empty())
      hetglm::write_file_atomic(a.report_file,
                                report.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    hetglm::save_model(a.model_file, res.model);
  } catch (const hetglm::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitTraining;
  }
  if (res.interrupted) {  // --save-on-interrupt: written, but still exit code 130
    fmt::print(stderr,
               "interrupted: stopped after the current epoch with relative gap {:.3e}; model '{}' written with this "
               "certificate (--save-on-interrupt)\n",
               report["rel_gap"].get<double>(), a.model_file);
    return kExitInterrupted;
  }
  if (!a.quiet) {
    fmt::print("model '{}' ({} {}, lambda {:.6g}): primal {:.10e}  dual {:.10e}  gap {:.3e}  rel gap {:.3e}  epochs {}  "
               "train {:.3f}s\n",
               res.spec.name, report["formulation"].get<std::string>(), res.model.penalty, res.lambda, P, D, G,
               report["rel_gap"].get<double>(), max_epochs_used, train_seconds);
    fmt::print("formulation {} (solver {}): {}\n", report["formulation"].get<std::string>(),
               report["solver"].get<std::string>(), res.formulation_reason);
    fmt::print("train {}", metric_text(report["train"]));
    if (test) fmt::print("  test {} on '{}'", metric_text(report["test"]), a.test_file);
    fmt::print("\nwrote '{}' in {:.3f}s total\n", a.model_file, seconds_since(t_start));
  }
  if (test) warn_extra_features(res.model, *test, a.test_file);
  return 0;
}

struct PredictArgs {
  std::string model_file, data_file, output_file, memory_limit;
  bool probability = false, quiet = false, zero_based = false;
  int threads = 0;
};

int run_predict(PredictArgs& a) {
  check_outputs({{"MODEL", a.model_file}, {"DATA", a.data_file}}, {{"OUTPUT", a.output_file}});
  hetglm::ModelLoadOptions mo;
  mo.memory_limit = memory_limit_option(a.memory_limit);
  mo.memory_limit_name = "--memory-limit";
  const LinearModel model = hetglm::load_model(a.model_file, mo);
  if (a.probability && model.model != "logistic")
    throw hetglm::InvalidArgument(fmt::format(
        "--probability: only logistic models give probabilities ('{}' is a {} model)", a.model_file, model.model));
  hetglm::LibsvmOptions ro;
  ro.zero_based = a.zero_based;
  ro.n_threads = a.threads;
  ro.memory_limit = mo.memory_limit;
  ro.memory_limit_name = mo.memory_limit_name;
  const Dataset data = hetglm::read_libsvm(a.data_file, ro);
  warn_extra_features(model, data, a.data_file);
  const std::vector<double> pred = hetglm::predict(model, data.X);
  std::string out;
  if (a.probability) {
    const std::vector<double> proba = hetglm::predict_proba(model, data.X);
    const std::size_t k = model.labels.size();
    out += "labels";
    for (double l : model.labels) out += fmt::format(" {:.17g}", l);
    out += "\n";
    for (std::size_t i = 0; i < pred.size(); ++i) {
      out += fmt::format("{:.17g}", pred[i]);
      for (std::size_t j = 0; j < k; ++j) out += fmt::format(" {:.17g}", proba[i * k + j]);
      out += "\n";
    }
  } else {
    for (double p : pred) out += fmt::format("{:.17g}\n", p);
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
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitTraining;
  }
  const json m = metrics(model, data);
  if (!a.quiet) {
    std::FILE* sink = a.output_file.empty() ? stderr : stdout;
    if (m.contains("accuracy"))
      fmt::print(sink, "Accuracy = {:.4f}% ({}/{})\n", 100.0 * m["accuracy"].get<double>(),
                 static_cast<long long>(std::llround(m["accuracy"].get<double>() * pred.size())), pred.size());
    else
      fmt::print(sink, "RMSE = {:.6g} ({} samples)\n", m["rmse"].get<double>(), pred.size());
  }
  return 0;
}

}  // namespace

/// The whole command line; main() calls it, and the option-parsing fuzzer (tests/fuzz) calls it directly.
int hetglm_cli_main(int argc, char** argv) {
  CLI::App app{"hetglm: generalized linear models with a certified duality gap", "hetglm"};
  app.set_version_flag("--version", std::string("hetglm ") + HETGLM_VERSION + " (backends: " + HETGLM_BACKENDS + ")");
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
  train->add_option("--threads", ta.threads, "threads for reading and for the solver (0 = all cores)")
      ->capture_default_str();
  train->add_option("--device", ta.device,
                    "cpu | opencl | cuda | fpga | fpga-sim | auto: accelerator for DuHL (cpu = the CPU solver, or the "
                    "cpu stand-in when --accel-memory is given)")
      ->capture_default_str();
  train->add_option("--accel-memory", ta.accel_memory,
                    "DuHL accelerator budget: bytes with K M G (10^3..) or Ki Mi Gi (2^10..), or a percentage such as 25%");
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
                    "auto | newton | sequential | syscd | passcode-atomic | passcode-wild (auto: newton for the primal "
                    "of logistic and squared hinge, else syscd, or sequential with --threads 1)")
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
                    "syscd with several threads: adaptive (a line search on the merged step, the default) | fixed "
                    "(the CoCoA+ step gamma = 1)")
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
                    "stop reading TRAIN / --test once the data kept would exceed SIZE bytes (K M G or Ki Mi Gi; "
                    "default: 90% of the cgroup limit or MemAvailable)");
  train->add_flag("--distributed", ta.distributed,
                  "CoCoA+ over MPI: run under `mpirun -np K`; each rank reads its byte range of TRAIN (docs/mpi.md)");
  train->add_option("--local-epochs", ta.local_epochs, "--distributed: local epochs per communication round")
      ->capture_default_str();

  PredictArgs pa;
  auto* pred = app.add_subcommand("predict", "predict with a trained model");
  pred->add_option("MODEL", pa.model_file, "model file written by `hetglm train`")->required();
  pred->add_option("DATA", pa.data_file, "libsvm file with labels")->required();
  pred->add_option("OUTPUT", pa.output_file, "predictions, one per line (default: standard output)");
  pred->add_flag("--probability", pa.probability, "write class probabilities (logistic models)");
  pred->add_flag("--zero-based", pa.zero_based, "feature indices start at 0");
  pred->add_option("--threads", pa.threads, "threads for reading (0 = all cores)");
  pred->add_flag("-q,--quiet", pa.quiet, "print nothing but errors");
  pred->add_option("--memory-limit", pa.memory_limit,
                   "stop reading MODEL / DATA once what is kept would exceed SIZE bytes (K M G or Ki Mi Gi)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "error: {}\nRun 'hetglm --help' or 'hetglm train --help' for usage.\n", e.what());
    return kExitUsage;
  }
  try {
    if (app.got_subcommand(train)) return run_train(ta);
    return run_predict(pa);
  } catch (const hetglm::TrainingError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitTraining;
  } catch (const hetglm::Interrupted& e) {  // Ctrl-C while a reader waited or read (LibsvmOptions::should_stop)
    fmt::print(stderr, "interrupted while loading '{}'; nothing written\n", e.file());
    return kExitInterrupted;
  } catch (const hetglm::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: out of memory\n");
    return kExitTraining;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitTraining;
  }
}

#ifndef HETGLM_CLI_NO_MAIN
int main(int argc, char** argv) { return hetglm_cli_main(argc, argv); }
#endif
