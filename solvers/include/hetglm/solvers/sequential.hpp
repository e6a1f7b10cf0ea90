// SPDX-License-Identifier: Apache-2.0
// The sequential stochastic coordinate descent solver: the reference every other solver is compared with.
//
//   repeat for epoch = 1, 2, ...:
//     draw a fresh random permutation of the coordinates (seeded; rng.hpp)
//     for each coordinate i in that order:                                  (update_coordinate, forms.hpp)
//       r     = <a_i, v> (dual) or sum_k a_ki phi_k'(v_k) (primal)         (Form::inner)
//       a_new = the coordinate kernel of glm_math.h                         (Form::coordinate_step)
//       v    += (a_new - alpha_i) a_i ; alpha_i = a_new
//     recompute v = A alpha exactly (no rounding drift), then the exact duality gap (certificate(), forms.hpp);
//     the epoch driver records it and stops when P - D <= tol |P| (epoch_driver.hpp)
// SDCA: Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate Ascent Methods for Regularized Loss Minimization",
// JMLR 14 (2013), Procedure SDCA-Perm; primal CD: Friedman, Hastie, Tibshirani, "Regularization Paths for
// Generalized Linear Models via Coordinate Descent", J. Stat. Softw. 33 (2010).
#pragma once
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Run the sequential solver on a formulation from alpha = 0 (v = 0).
/// Throws TrainingError if the objective becomes NaN or infinite (naming the epoch).
template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options);

}  // namespace hetglm
