// SPDX-License-Identifier: Apache-2.0
// The sequential stochastic coordinate descent solver: the reference every other solver is compared with.
//
//   repeat for epoch = 1, 2, ...:
//     draw a fresh random permutation of the coordinates (seeded; rng.hpp)
//     for each coordinate i in that order:
//       u     = <a_i, grad f(v)>               (Form::u)
//       a_new = argmin of the 1-D subproblem     (Form::step, closed form or safeguarded Newton)
//       v    += (a_new - alpha_i) a_i ; alpha_i = a_new
//     recompute v = A alpha exactly (no rounding drift), then the exact duality gap (Form::certificate);
//     stop when P - D <= tol |P|
// SDCA: Shalev-Shwartz & Zhang, JMLR 14 (2013), Procedure SDCA-Perm; primal CD: Friedman et al. 2010.
#pragma once
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Run the sequential solver on a formulation from alpha = 0 (v = 0).
/// Throws TrainingError if the objective becomes NaN or infinite (naming the epoch).
template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options);

}  // namespace hetglm
