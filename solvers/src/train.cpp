// SPDX-License-Identifier: Apache-2.0
#include "hetglm/solvers/train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "hetglm/error.hpp"
#include "hetglm/solvers/sequential.hpp"

namespace hetglm {

double resolve_lambda(const TrainOptions& o, const ModelSpec& spec, std::int64_t n) {
  if (o.C && o.lambda) throw InvalidArgument("-c and --lambda are mutually exclusive: give one of them");
  if (o.C) {
    if (!(std::isfinite(*o.C) && *o.C > 0)) throw InvalidArgument(fmt::format("-c: C must be a positive number, got {}", *o.C));
    return 1.0 / (*o.C * static_cast<double>(n));
  }
  if (o.lambda) {
    if (!(std::isfinite(*o.lambda) && *o.lambda > 0))
      throw InvalidArgument(fmt::format("--lambda: lambda must be a positive number, got {}", *o.lambda));
    return *o.lambda;
  }
  if (spec.classifier || spec.name == "ridge") return 1.0 / static_cast<double>(n);
  return 1.0;
}

namespace {

Formulation resolve_formulation(const TrainOptions& o, const ModelSpec& spec, const CsrMatrix& X) {
  const bool l2 = spec.penalty == Penalty::l2;
  const bool primal_ok = spec.loss == Loss::squared;  // primal CD: squared loss in this version
  if (o.formulation == "dual") {
    if (!l2) throw InvalidArgument(fmt::format("--formulation dual: model '{}' has no dual (SDCA) form; use primal", spec.name));
    return Formulation::dual;
  }
  if (o.formulation == "primal") {
    if (spec.loss == Loss::hinge)
      throw InvalidArgument("--formulation primal: the hinge loss is not smooth, so svm trains in the dual only");
    if (!primal_ok)
      throw InvalidArgument(fmt::format("--formulation primal: not available for model '{}' in this version; use dual", spec.name));
    return Formulation::primal;
  }
  if (o.formulation != "auto")
    throw InvalidArgument(fmt::format("--formulation: unknown value '{}' (expected auto, dual or primal)", o.formulation));
  if (!l2) return Formulation::primal;
  if (!primal_ok) return Formulation::dual;
  // Ridge: coordinates along the short side (features when n >= d, samples otherwise).
  return X.n_rows >= X.n_cols ? Formulation::primal : Formulation::dual;
}

template <class F>
auto with_form(const ModelSpec& spec, Formulation f, F&& fn) {
  if (f == Formulation::dual) {
    switch (spec.loss) {
      case Loss::logistic: return fn.template operator()<DualForm<Loss::logistic>>();
      case Loss::hinge: return fn.template operator()<DualForm<Loss::hinge>>();
      case Loss::squared_hinge: return fn.template operator()<DualForm<Loss::squared_hinge>>();
      default: return fn.template operator()<DualForm<Loss::squared>>();
    }
  }
  switch (spec.penalty) {
    case Penalty::l1: return fn.template operator()<PrimalForm<Loss::squared, Penalty::l1>>();
    case Penalty::elastic_net: return fn.template operator()<PrimalForm<Loss::squared, Penalty::elastic_net>>();
    default: return fn.template operator()<PrimalForm<Loss::squared, Penalty::l2>>();
  }
}

}  // namespace

TrainResult train(const Dataset& data, const TrainOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  TrainResult res;
  res.spec = model_spec(o.model, o.penalty);
  const ModelSpec& spec = res.spec;
  const CsrMatrix& X0 = data.X;
  const std::string src = data.source.empty() ? std::string("training data") : "'" + data.source + "'";
  if (X0.n_rows == 0) throw InvalidArgument(fmt::format("{}: no samples to train on", src));
  if (data.y.size() != static_cast<std::size_t>(X0.n_rows))
    throw InvalidArgument(fmt::format("{}: {} labels for {} samples", src, data.y.size(), X0.n_rows));
  for (std::size_t i = 0; i < data.y.size(); ++i)
    if (!std::isfinite(data.y[i])) throw InvalidArgument(fmt::format("{}: label of sample {} is not finite", src, i + 1));
  if (!(o.tol > 0 && std::isfinite(o.tol))) throw InvalidArgument(fmt::format("--tol: must be a positive number, got {}", o.tol));
  if (o.max_epochs < 1) throw InvalidArgument(fmt::format("--max-epochs: must be at least 1, got {}", o.max_epochs));
  if (!(o.l1_ratio >= 0 && o.l1_ratio <= 1)) throw InvalidArgument(fmt::format("--l1-ratio: must be in [0, 1], got {}", o.l1_ratio));
  if (!std::isfinite(o.bias)) throw InvalidArgument("-B: bias must be a finite number");
  std::vector<double> c = o.sample_weight;
  if (c.empty()) c.assign(data.y.size(), 1.0);
  if (c.size() != data.y.size())
    throw InvalidArgument(fmt::format("sample weights: {} weights for {} samples", c.size(), data.y.size()));
  for (double ci : c)
    if (!(ci > 0 && std::isfinite(ci))) throw InvalidArgument("sample weights must be positive and finite");

  const double lambda = resolve_lambda(o, spec, X0.n_rows);
  res.lambda = lambda;
  const double eta = spec.penalty == Penalty::l2 ? 0.0 : spec.penalty == Penalty::l1 ? 1.0 : o.l1_ratio;
  const CsrMatrix X = with_bias_column(X0, o.bias);
  const Formulation form_kind = resolve_formulation(o, spec, X);
  res.formulation = form_kind;

  ProblemData pd;
  pd.X = &X;
  CsrMatrix Xt;
  if (form_kind == Formulation::primal) {
    Xt = transpose(X);
    pd.Xt = &Xt;
  } else {
    pd.row_sq_norm = row_sq_norms(X);
  }

  // Labels: binary -> the larger label is the positive class; k > 2 -> one-vs-rest, ascending.
  LinearModel& model = res.model;
  std::vector<double> positives;  // positive class of each weight column
  if (spec.classifier) {
    std::set<double> uniq(data.y.begin(), data.y.end());
    if (uniq.size() < 2)
      throw InvalidArgument(fmt::format("{}: all samples have the same label {}; a classifier needs two classes", src,
                                        *uniq.begin()));
    std::vector<double> classes(uniq.begin(), uniq.end());
    if (classes.size() == 2) {
      model.labels = {classes[1], classes[0]};
      positives = {classes[1]};
    } else {
      model.labels = classes;
      positives = classes;
    }
    model.nr_class = static_cast<int>(classes.size());
  } else {
    model.nr_class = 2;
    positives = {std::numeric_limits<double>::quiet_NaN()};
  }

  const int ncol = static_cast<int>(positives.size());
  const index_t nrows_w = X.n_cols;
  model.w.assign(static_cast<std::size_t>(nrows_w) * ncol, 0.0);
  res.converged = true;
  for (int k = 0; k < ncol && !res.interrupted; ++k) {
    std::vector<double> y(data.y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = spec.classifier ? (data.y[i] == positives[k] ? 1.0 : -1.0) : data.y[i];
    SolverOptions so;
    so.tol = o.tol;
    so.max_epochs = o.max_epochs;
    so.seed = o.seed;
    so.should_stop = o.should_stop;
    if (o.on_epoch) so.on_epoch = [&, k](const EpochRecord& r) { o.on_epoch(k, positives[k], r); };
    SolveResult sr = with_form(spec, form_kind, [&]<class Form>() {
      if constexpr (Form::formulation == Formulation::dual) {
        return solve_sequential(Form(pd, y.data(), c.data(), lambda), so);
      } else {
        return solve_sequential(Form(pd, y.data(), c.data(), lambda, eta), so);
      }
    });
    for (index_t j = 0; j < nrows_w; ++j) model.w[static_cast<std::size_t>(j) * ncol + k] = sr.w[j];
    ColumnReport cr;
    cr.label = positives[k];
    cr.certificate = sr.certificate;
    cr.epochs = sr.epochs;
    cr.converged = sr.converged;
    cr.seconds = sr.seconds;
    cr.history = std::move(sr.history);
    res.converged = res.converged && sr.converged;
    res.interrupted = res.interrupted || sr.interrupted;
    model.primal.push_back(sr.certificate.primal);
    model.dual.push_back(sr.certificate.dual);
    model.gap.push_back(sr.certificate.gap);
    res.columns.push_back(std::move(cr));
  }

  model.solver_type = solver_type_name(spec, form_kind);
  model.nr_feature = X0.n_cols;
  model.bias = o.bias;
  model.model = spec.name;
  model.penalty = penalty_name(spec.penalty);
  model.lambda = lambda;
  model.l1_ratio = eta;
  model.formulation = formulation_name(form_kind);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace hetglm
