// SPDX-License-Identifier: Apache-2.0
// The models: one row per `--model` name, with its loss, default penalty, whether --penalty may change it, whether it
// is a classifier, and the model file's solver_type names. The model loader (model.cpp), model_spec()
// (solvers/objective.hpp), the CLI and the help texts all read this table; the losses and penalties are the tables of
// glm_math.h. Adding a model (or a loss: docs/adding-a-loss.md) adds a row here.
#pragma once
#include <iterator>
#include <string>
#include <string_view>

#include "hetglm/losses.hpp"

namespace hetglm {

/// One model: its name, loss, default penalty, and LIBLINEAR's solver_type names (ours where LIBLINEAR has none;
/// nullptr where the combination is not trained).
struct ModelRow {
  const char* name;           ///< --model
  Loss loss;
  Penalty default_penalty;
  bool any_penalty;           ///< --penalty may change it (else the penalty is the model's own)
  bool classifier;            ///< labels become -1/+1 (one-vs-rest for more than two classes)
  const char* type_dual_l2;   ///< solver_type of the dual (L2 penalty)
  const char* type_primal_l2;
  const char* type_primal_l1;
  const char* type_primal_elastic_net;
  /// The softmax loss over all classes at once (one weight column per class, trained together by the Newton-CG
  /// or proximal Newton solver of solvers/src/multinomial.cpp; the loss column is then the binary loss it generalizes).
  bool multinomial = false;
};

inline constexpr ModelRow kModels[] = {
    {"logistic", Loss::logistic, Penalty::l2, true, true, "L2R_LR_DUAL", "L2R_LR", "L1R_LR", "ELASTIC_NET_LR"},
    {"svm", Loss::hinge, Penalty::l2, false, true, "L2R_L1LOSS_SVC_DUAL", nullptr, nullptr, nullptr},
    {"squared-hinge", Loss::squared_hinge, Penalty::l2, true, true, "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC",
     "L1R_L2LOSS_SVC", "ELASTIC_NET_L2LOSS_SVC"},
    {"ridge", Loss::squared, Penalty::l2, false, false, "RIDGE_DUAL", "RIDGE_PRIMAL", nullptr, nullptr},
    {"lasso", Loss::squared, Penalty::l1, false, false, nullptr, nullptr, "LASSO", nullptr},
    {"elastic-net", Loss::squared, Penalty::elastic_net, false, false, nullptr, nullptr, nullptr, "ELASTIC_NET"},
    {"huber", Loss::huber, Penalty::l2, true, false, "HUBER_DUAL", "HUBER_PRIMAL", "L1R_HUBER", "ELASTIC_NET_HUBER"},
    {"multinomial", Loss::logistic, Penalty::l2, true, true, nullptr, "MULTINOMIAL_LR", "MULTINOMIAL_L1R_LR",
     "MULTINOMIAL_ELASTIC_NET_LR", true},
};

/// The row of `name`, or nullptr.
inline const ModelRow* find_model(std::string_view name) {
  for (const ModelRow& r : kModels)
    if (name == r.name) return &r;
  return nullptr;
}

/// The model file's and the CLI's word for a penalty: "l2", "l1" or "elastic-net".
inline std::string_view penalty_word(Penalty p) {
  return p == Penalty::l2 ? "l2" : p == Penalty::l1 ? "l1" : "elastic-net";
}

/// The solver_type name of model `r` trained with penalty `p` in the dual (`dual`) or the primal formulation, or
/// nullptr where that combination is not trained (the dual has the L2 penalty only). The trainers write it
/// (solver_type_name, solvers/objective.hpp) and the model loader checks it (model.cpp).
inline const char* solver_type_of(const ModelRow& r, Penalty p, bool dual) {
  if (dual) return p == Penalty::l2 ? r.type_dual_l2 : nullptr;
  return p == Penalty::l2 ? r.type_primal_l2 : p == Penalty::l1 ? r.type_primal_l1 : r.type_primal_elastic_net;
}

/// "logistic, svm, squared-hinge, ridge, lasso or elastic-net" (from kModels, for messages and help texts).
inline std::string model_names(std::string_view last_separator = " or ", std::string_view separator = ", ") {
  std::string s;
  const std::size_t n = std::size(kModels);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? std::string(last_separator) : std::string(separator);
    s += kModels[i].name;
  }
  return s;
}

}  // namespace hetglm
