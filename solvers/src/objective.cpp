// SPDX-License-Identifier: Apache-2.0
// Models and their names (objective.hpp).
#include "hetglm/solvers/objective.hpp"

#include <fmt/format.h>

#include <cmath>

#include "hetglm/error.hpp"

namespace hetglm {

namespace {
/// The model whose own penalty is `p` among those that fix their penalty, for the squared loss (ridge, lasso,
/// elastic-net): the model to point a user at.
const ModelRow* model_with_penalty(Loss loss, Penalty p) {
  for (const ModelRow& r : kModels)
    if (r.loss == loss && !r.any_penalty && r.default_penalty == p) return &r;
  return nullptr;
}
}  // namespace

ModelSpec model_spec(const std::string& model, const std::string& penalty) {
  const ModelRow* row = find_model(model);
  if (!row) throw InvalidArgument(fmt::format("--model: unknown model '{}' (expected {})", model, model_names()));
  ModelSpec s;
  s.name = model;
  s.loss = row->loss;
  s.classifier = row->classifier;
  s.multinomial = row->multinomial;
  const Penalty def = row->default_penalty;
  if (penalty.empty()) {
    s.penalty = def;
  } else if (penalty == "l2") {
    s.penalty = Penalty::l2;
  } else if (penalty == "l1") {
    s.penalty = Penalty::l1;
  } else if (penalty == "elastic-net") {
    s.penalty = Penalty::elastic_net;
  } else {
    throw InvalidArgument(fmt::format("--penalty: unknown penalty '{}' (expected l2, l1 or elastic-net)", penalty));
  }
  if (s.penalty != def && !row->any_penalty) {
    // Where another model has this penalty as its own (ridge / lasso / elastic-net), point at it.
    const ModelRow* other = model_with_penalty(row->loss, s.penalty);
    throw InvalidArgument(fmt::format("--penalty {} is not available for --model {} (it uses {}){}", penalty, model,
                                      penalty_name(def),
                                      other ? fmt::format("; use --model {}", other->name) : std::string()));
  }
  return s;
}

std::string penalty_name(Penalty p) { return std::string(penalty_word(p)); }

std::string formulation_name(Formulation f) { return f == Formulation::dual ? "dual" : "primal"; }

FormulationRequest parse_formulation(std::string_view name) {
  if (name == "auto") return FormulationRequest::automatic;
  if (name == "dual") return FormulationRequest::dual;
  if (name == "primal") return FormulationRequest::primal;
  throw InvalidArgument(fmt::format("--formulation: unknown value '{}' (expected auto, dual or primal)", name));
}

std::string_view formulation_request_name(FormulationRequest f) {
  switch (f) {
    case FormulationRequest::automatic: return "auto";
    case FormulationRequest::dual: return "dual";
    case FormulationRequest::primal: return "primal";
  }
  return "unknown";
}

std::string no_dual_form_message(const ModelSpec& spec) {
  const ModelRow* row = find_model(spec.name);
  if (row && row->any_penalty && !row->multinomial)
    return fmt::format("--formulation dual: penalty {} of model '{}' has no dual (SDCA) form; use primal",
                       penalty_name(spec.penalty), spec.name);
  return fmt::format("--formulation dual: model '{}' has no dual (SDCA) form; use primal", spec.name);
}

std::string no_primal_form_message(const ModelSpec& spec) {
  return fmt::format("--formulation primal: the {} loss is not smooth, so {} trains in the dual only",
                     spec.loss == Loss::hinge ? "hinge" : "model's", spec.name);
}

std::optional<Formulation> forced_formulation(const ModelSpec& spec, FormulationRequest request) {
  const bool dual_ok = spec.penalty == Penalty::l2 && has_dual_step(spec.loss) && !spec.multinomial;
  const bool primal_ok = is_smooth(spec.loss);
  switch (request) {
    case FormulationRequest::dual:
      if (!dual_ok) throw InvalidArgument(no_dual_form_message(spec));
      return Formulation::dual;
    case FormulationRequest::primal:
      if (!primal_ok) throw InvalidArgument(no_primal_form_message(spec));
      return Formulation::primal;
    case FormulationRequest::automatic:
      if (!dual_ok) return Formulation::primal;
      if (!primal_ok) return Formulation::dual;
      return std::nullopt;
  }
  return std::nullopt;
}

std::string solver_type_name(const ModelSpec& spec, Formulation f) {
  const ModelRow* row = find_model(spec.name);
  const char* name = row ? solver_type_of(*row, spec.penalty, f == Formulation::dual) : nullptr;
  if (!name)
    throw InvalidArgument(fmt::format("model '{}' with penalty {} has no {} formulation", spec.name,
                                      penalty_name(spec.penalty), formulation_name(f)));
  return name;
}

double resolve_lambda(const ModelSpec& spec, std::optional<double> C, std::optional<double> lambda,
                      std::int64_t n) {
  if (C && lambda) throw InvalidArgument("-c and --lambda are mutually exclusive: give one of them");
  // lambda must leave 1/(lambda n) finite (the SDCA scaling w = v/(lambda n)) and lambda itself finite.
  auto usable = [n](double lam) { return std::isfinite(lam) && lam > 0 && std::isfinite(1.0 / (lam * double(n))); };
  if (C) {
    if (!(std::isfinite(*C) && *C > 0)) throw InvalidArgument(fmt::format("-c: C must be a positive number, got {}", *C));
    const double lam = 1.0 / (*C * static_cast<double>(n));
    if (!usable(lam))
      throw InvalidArgument(fmt::format("-c: C = {} makes lambda = 1/(C n) = {} out of double range", *C, lam));
    return lam;
  }
  if (lambda) {
    if (!(std::isfinite(*lambda) && *lambda > 0))
      throw InvalidArgument(fmt::format("--lambda: lambda must be a positive number, got {}", *lambda));
    if (!usable(*lambda))
      throw InvalidArgument(fmt::format("--lambda: lambda = {} is too small: 1/(lambda n) overflows", *lambda));
    return *lambda;
  }
  // C = 1 for the classifiers and the L2 models (ridge: scikit-learn's alpha = 1); 1.0 for lasso and elastic net.
  const ModelRow* row = find_model(spec.name);
  if (spec.classifier || (row && row->default_penalty == Penalty::l2)) return 1.0 / static_cast<double>(n);
  return 1.0;
}

double l1_share(Penalty p, double l1_ratio) {
  switch (p) {
    case Penalty::l2: return 0.0;
    case Penalty::l1: return 1.0;
    case Penalty::elastic_net: return l1_ratio;
  }
  return 0.0;
}

}  // namespace hetglm
