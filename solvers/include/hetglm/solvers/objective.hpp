// SPDX-License-Identifier: Apache-2.0
// Models: the CLI / model-file vocabulary (`--model`, `--penalty`, `solver_type`) mapped to the loss and penalty of
//   P(w) = (1/n) sum_i c_i loss(y_i, x_i.w) + lambda R(w)       (docs/conventions.md, "Objective and scaling")
// The models are the table kModels of core/include/hetglm/models.hpp; the losses and penalties the tables of glm_math.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hetglm/losses.hpp"
#include "hetglm/models.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

struct ModelSpec {
  std::string name;        ///< a kModels name
  Loss loss = Loss::logistic;
  Penalty penalty = Penalty::l2;
  bool classifier = true;  ///< labels become -1/+1 (one-vs-rest for more than two classes)
  bool multinomial = false;  ///< the softmax loss over all classes (ModelRow::multinomial): primal Newton-CG only
};

/// Resolve `--model` and `--penalty` ("" = the model's default). Models with any_penalty accept every penalty (l1 /
/// elastic-net train on the primal path: LIBLINEAR -s 6 L1R_LR and -s 5 L1R_L2LOSS_SVC); the others fix it. Throws
/// InvalidArgument naming the option for unknown names or combinations that are not trained.
ModelSpec model_spec(const std::string& model, const std::string& penalty = "");

/// "l2" | "l1" | "elastic-net".
std::string penalty_name(Penalty p);
/// "dual" | "primal".
std::string formulation_name(Formulation f);

/// --formulation: auto (train() estimates which is faster, docs/formulation.md), dual or primal.
enum class FormulationRequest { automatic, dual, primal };
/// "auto" | "dual" | "primal"; throws InvalidArgument "--formulation: unknown value 'X' (expected auto, dual or
/// primal)".
FormulationRequest parse_formulation(std::string_view name);
std::string_view formulation_request_name(FormulationRequest f);

/// The error for --formulation dual on a non-L2 penalty: "--formulation dual: model 'lasso' has no dual (SDCA)
/// form; use primal" for lasso / elastic-net, "--formulation dual: penalty l1 of model 'logistic' has no dual
/// (SDCA) form; use primal" for logistic / squared-hinge with --penalty l1 or elastic-net.
std::string no_dual_form_message(const ModelSpec& spec);
/// The error for --formulation primal on a loss that is not smooth.
std::string no_primal_form_message(const ModelSpec& spec);

/// The formulation `request` asks for, checked against the model (InvalidArgument with the messages above), or
/// nullopt for auto where both exist. Non-L2 penalties have only the primal; non-smooth losses only the dual.
std::optional<Formulation> forced_formulation(const ModelSpec& spec, FormulationRequest request);

/// LIBLINEAR's solver_type name where one exists (L2R_LR, L2R_LR_DUAL, L2R_L1LOSS_SVC_DUAL, L2R_L2LOSS_SVC_DUAL,
/// L2R_L2LOSS_SVC, L1R_LR, L1R_L2LOSS_SVC), otherwise ours (RIDGE_DUAL, RIDGE_PRIMAL, LASSO, ELASTIC_NET,
/// ELASTIC_NET_LR, ELASTIC_NET_L2LOSS_SVC).
std::string solver_type_name(const ModelSpec& spec, Formulation f);

/// The lambda of `n_samples` samples from LIBLINEAR's C (lambda = 1/(C n)) or lambda itself, else the default
/// (docs/conventions.md, "Objective and scaling": classifiers C = 1, ridge 1/n, lasso and elastic net 1.0). Throws InvalidArgument on both,
/// on non-positive or non-finite values, and when 1/(lambda n) overflows.
double resolve_lambda(const ModelSpec& spec, std::optional<double> C, std::optional<double> lambda,
                      std::int64_t n_samples);

/// The l1 share eta of the penalty: 0 for l2, 1 for l1, `l1_ratio` for the elastic net.
double l1_share(Penalty p, double l1_ratio);

}  // namespace hetglm
