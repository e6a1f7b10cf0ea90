// SPDX-License-Identifier: Apache-2.0
// Runtime (model, formulation) -> formulation type, chosen once at the boundary (design.md 5.4 "visit") over the
// closed list of forms (HETGLM_FOR_EACH_FORM). Used by train() and the distributed trainer.
#pragma once
#include "hetglm/error.hpp"
#include "hetglm/solvers/forms.hpp"
#include "hetglm/solvers/objective.hpp"

namespace hetglm {

/// Calls fn.template operator()<Form>() with the Form type of (spec, f) and returns its result. Throws
/// InvalidArgument for the hinge loss in the primal (it is not smooth).
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
  auto by_penalty = [&]<Loss L>() {
    switch (spec.penalty) {
      case Penalty::l1: return fn.template operator()<PrimalForm<L, Penalty::l1>>();
      case Penalty::elastic_net: return fn.template operator()<PrimalForm<L, Penalty::elastic_net>>();
      default: return fn.template operator()<PrimalForm<L, Penalty::l2>>();
    }
  };
  switch (spec.loss) {
    case Loss::logistic: return by_penalty.template operator()<Loss::logistic>();
    case Loss::squared_hinge: return by_penalty.template operator()<Loss::squared_hinge>();
    case Loss::hinge: throw InvalidArgument("--formulation primal: the hinge loss is not smooth, so svm trains in the dual only");
    default: return by_penalty.template operator()<Loss::squared>();
  }
}

}  // namespace hetglm
