// SPDX-License-Identifier: Apache-2.0
// Model names (CLI/file vocabulary) mapped to the loss and penalty of the objective
//   P(w) = (1/n) sum_i c_i loss(y_i, x_i.w) + lambda R(w)       (conventions.md)
#pragma once
#include <string>

#include "hetglm/losses.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

struct ModelSpec {
  std::string name;        ///< logistic | svm | squared-hinge | ridge | lasso | elastic-net
  Loss loss;
  Penalty penalty;
  bool classifier;         ///< labels become -1/+1 (one-vs-rest for more than two classes)
};

/// Resolve `--model` and `--penalty` ("" = the model's default). logistic and squared-hinge accept every
/// penalty (l1 / elastic-net train on the primal path: LIBLINEAR -s 6 L1R_LR and -s 5 L1R_L2LOSS_SVC); svm is
/// l2 only; ridge, lasso and elastic-net fix their penalty. Throws InvalidArgument naming the option for unknown
/// names or combinations that are not trained.
ModelSpec model_spec(const std::string& model, const std::string& penalty = "");

/// "l2" | "l1" | "elastic-net".
std::string penalty_name(Penalty p);
/// "dual" | "primal".
std::string formulation_name(Formulation f);

/// The error for --formulation dual on a non-L2 penalty: "--formulation dual: model 'lasso' has no dual (SDCA)
/// form; use primal" for lasso / elastic-net, "--formulation dual: penalty l1 of model 'logistic' has no dual
/// (SDCA) form; use primal" for logistic / squared-hinge with --penalty l1 or elastic-net.
std::string no_dual_form_message(const ModelSpec& spec);

/// Throws InvalidArgument "--formulation: unknown value 'X' (expected auto, dual or primal)" unless `name` is one of
/// them (the CLI checks before loading data; train() checks again).
void check_formulation_name(const std::string& name);

/// LIBLINEAR's solver_type name where one exists (L2R_LR, L2R_LR_DUAL, L2R_L1LOSS_SVC_DUAL,
/// L2R_L2LOSS_SVC_DUAL, L2R_L2LOSS_SVC, L1R_LR, L1R_L2LOSS_SVC), otherwise ours (RIDGE_DUAL, RIDGE_PRIMAL,
/// LASSO, ELASTIC_NET, ELASTIC_NET_LR, ELASTIC_NET_L2LOSS_SVC).
std::string solver_type_name(const ModelSpec& spec, Formulation f);

}  // namespace hetglm
