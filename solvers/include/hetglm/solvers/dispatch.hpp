// SPDX-License-Identifier: Apache-2.0
// Runtime (model, formulation) -> formulation type, chosen once at the boundary over the closed list of forms that
// the tables of glm_math.h define (HETGLM_FOR_EACH_FORM, forms.hpp; docs/design.md, "One copy of the math"). Used by
// train(), the distributed trainer and the tests.
#pragma once
#include "hetglm/error.hpp"
#include "hetglm/solvers/forms.hpp"
#include "hetglm/solvers/objective.hpp"

namespace hetglm {

/// Calls fn.template operator()<Form>() with the Form type of (spec, f) and returns its result. Throws
/// InvalidArgument (no_dual_form_message / no_primal_form_message) for a combination the tables do not have.
template <class F>
auto with_form(const ModelSpec& spec, Formulation f, F&& fn) {
  using Result = decltype(fn.template operator()<DualForm<Loss::squared>>());
  if (f == Formulation::dual) {
    if (spec.penalty == Penalty::l2) switch (spec.loss) {
#define HETGLM_DUAL_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  HETGLM_IF(DUAL)(case Loss::name: return fn.template operator()<DualForm<Loss::name>>();)
        HETGLM_LOSS_TABLE(HETGLM_DUAL_CASE_)
#undef HETGLM_DUAL_CASE_
        default: break;
      }
    throw InvalidArgument(no_dual_form_message(spec));
  }
  auto by_penalty = [&]<Loss L>() -> Result {
    switch (spec.penalty) {
#define HETGLM_PENALTY_CASE_(ID, pname, pid, L1PART, E) \
  case Penalty::pname: return fn.template operator()<PrimalForm<L, Penalty::pname>>();
      HETGLM_PENALTY_TABLE(HETGLM_PENALTY_CASE_)
#undef HETGLM_PENALTY_CASE_
    }
    throw InvalidArgument("unknown penalty");
  };
  switch (spec.loss) {
#define HETGLM_PRIMAL_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  HETGLM_IF(PRIMAL)(case Loss::name: return by_penalty.template operator()<Loss::name>();)
    HETGLM_LOSS_TABLE(HETGLM_PRIMAL_CASE_)
#undef HETGLM_PRIMAL_CASE_
    default: break;
  }
  throw InvalidArgument(no_primal_form_message(spec));
}

}  // namespace hetglm
