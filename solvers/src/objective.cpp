// SPDX-License-Identifier: Apache-2.0
#include "hetglm/solvers/objective.hpp"

#include <fmt/format.h>

#include "hetglm/error.hpp"

namespace hetglm {

ModelSpec model_spec(const std::string& model, const std::string& penalty) {
  ModelSpec s;
  s.name = model;
  if (model == "logistic") {
    s.loss = Loss::logistic;
  } else if (model == "svm") {
    s.loss = Loss::hinge;
  } else if (model == "squared-hinge") {
    s.loss = Loss::squared_hinge;
  } else if (model == "ridge") {
    s.loss = Loss::squared;
  } else if (model == "lasso") {
    s.loss = Loss::squared;
  } else if (model == "elastic-net") {
    s.loss = Loss::squared;
  } else {
    throw InvalidArgument(fmt::format(
        "--model: unknown model '{}' (expected logistic, svm, squared-hinge, ridge, lasso or elastic-net)", model));
  }
  s.classifier = s.loss != Loss::squared;
  const Penalty def = model == "lasso" ? Penalty::l1 : model == "elastic-net" ? Penalty::elastic_net : Penalty::l2;
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
  // L1 and elastic net for logistic and squared hinge train on the primal path (conventions.md); the hinge
  // loss (svm) is dual only, and ridge / lasso / elastic-net name their penalty.
  const bool smooth_classifier = s.loss == Loss::logistic || s.loss == Loss::squared_hinge;
  if (s.penalty != def && !smooth_classifier) {
    // For the squared loss the penalty is the model: point at the model that has it.
    const char* other = s.penalty == Penalty::l1 ? "lasso" : s.penalty == Penalty::elastic_net ? "elastic-net" : "ridge";
    throw InvalidArgument(fmt::format("--penalty {} is not available for --model {} (it uses {}){}", penalty, model,
                                      penalty_name(def),
                                      s.loss == Loss::squared ? fmt::format("; use --model {}", other) : std::string()));
  }
  return s;
}

std::string penalty_name(Penalty p) {
  switch (p) {
    case Penalty::l2: return "l2";
    case Penalty::l1: return "l1";
    default: return "elastic-net";
  }
}

std::string formulation_name(Formulation f) { return f == Formulation::dual ? "dual" : "primal"; }

std::string solver_type_name(const ModelSpec& spec, Formulation f) {
  const bool dual = f == Formulation::dual;
  switch (spec.loss) {
    case Loss::logistic:
      if (spec.penalty == Penalty::l1) return "L1R_LR";
      if (spec.penalty == Penalty::elastic_net) return "ELASTIC_NET_LR";
      return dual ? "L2R_LR_DUAL" : "L2R_LR";
    case Loss::hinge:
      return "L2R_L1LOSS_SVC_DUAL";
    case Loss::squared_hinge:
      if (spec.penalty == Penalty::l1) return "L1R_L2LOSS_SVC";
      if (spec.penalty == Penalty::elastic_net) return "ELASTIC_NET_L2LOSS_SVC";
      return dual ? "L2R_L2LOSS_SVC_DUAL" : "L2R_L2LOSS_SVC";
    default:
      if (spec.penalty == Penalty::l1) return "LASSO";
      if (spec.penalty == Penalty::elastic_net) return "ELASTIC_NET";
      return dual ? "RIDGE_DUAL" : "RIDGE_PRIMAL";
  }
}

std::string no_dual_form_message(const ModelSpec& spec) {
  if (spec.name == "logistic" || spec.name == "squared-hinge")
    return fmt::format("--formulation dual: penalty {} of model '{}' has no dual (SDCA) form; use primal",
                       penalty_name(spec.penalty), spec.name);
  return fmt::format("--formulation dual: model '{}' has no dual (SDCA) form; use primal", spec.name);
}

void check_formulation_name(const std::string& name) {
  if (name != "auto" && name != "dual" && name != "primal")
    throw InvalidArgument(fmt::format("--formulation: unknown value '{}' (expected auto, dual or primal)", name));
}

}  // namespace hetglm
