// SPDX-License-Identifier: Apache-2.0
// The primal Newton solver (`--solver newton`): a Newton outer loop whose direction comes from conjugate gradients
// (L2) or from coordinate descent over features on the quadratic model (L1 / elastic net: newGLMNET, Yuan, Ho, Lin,
// "An Improved GLMNET for L1-regularized Logistic Regression", JMLR 13 (2012), Algorithm 3, the solver of LIBLINEAR
// -s 6), for every smooth loss and every penalty of PrimalForm. Per Newton iteration t, at w with v = X w (kept
// exact in double: updated by t X d and recomputed every 10 iterations, every iteration with an L1 part, and before
// the returned certificate):
//   1. per sample  grad_k = phi_k'(v_k)/n, D_k = phi_k''(v_k)/n  (one loss evaluation per sample, not per nonzero);
//      per feature s_j = <x^(j), grad>, H_j = <x^(j)^2, D> + nu   (one pass over X or X^T) -- the same s_j give the
//      exact duality gap of PrimalForm (P - D = sum_j gap_j): it is recorded, and the solve stops when
//      P - D <= tol |P|;
//   2. the direction d, minimizer of the quadratic model  s.d + 1/2 d^T X^T diag(D) X d + sum_j g(w_j + d_j):
//      L2 -> preconditioned conjugate gradients on (X^T diag(D) X + lambda I) d = -(s + lambda w), M = diag(H_j +
//      lambda), stopped at ||r|| <= 0.1 ||s + lambda w|| (truncated Newton: Nocedal & Wright, Numerical Optimization,
//      Algorithm 7.1; LIBLINEAR -s 0 / -s 2 use it inside a trust region, Lin, Weng, Keerthi, JMLR 9 (2008));
//      L1 / elastic net -> randomized coordinate descent over the features (inner epochs): coordinate j's step is
//      hetglm_penalty_step at the model gradient s_j + <x^(j), D (X d)> with curvature H_j (exact for the quadratic
//      model, L1 by soft-thresholding); only multiply-adds, no exp or log; inner epochs stop when an epoch decreases
//      the model by less than 1e-3 of the total decrease so far (at most 100); features with w_j = 0 and
//      |s_j| <= lambda eta (optimal at zero for the linear term) are left out of this iteration's inner epochs
//      (LIBLINEAR's shrinking; step 1 checks every feature again at the next iteration);
//      with few features (the active set's Hessian X_A^T diag(D) X_A within 2^22 entries and at most 16 passes over
//      X to build from the rows) the model is solved on that explicit Hessian instead: epochs of the same steps at
//      |A|^2 multiply-adds each (to a 1e-9 share), then Newton steps on the orthant face of the model's support by
//      Cholesky, shortened so no weight changes sign (an accurate subproblem: superlinear outer convergence, Lee,
//      Sun, Saunders, SIAM J. Optim. 24 (2014); newton.cpp, step 2b);
//   3. Armijo backtracking t = 1, 1/2, ... on the true objective: F(w + t d) - F(w) <= 0.01 t (s.d + g(w+d) - g(w))
//      (one loss evaluation per sample per trial); w += t d.
// L2: once the relative gap is within 1e3 tol, step 2 runs before the stop test, and the dual objective is also
// evaluated at the Newton dual point u' = grad f(v) + diag(D) X d (X^T u' from the CG's products); the largest such
// value, a lower bound of P* by weak duality, replaces the certificate's dual where larger (docs/algorithms.md).
// One "epoch" of the history is one Newton iteration. For the squared loss the model is exact and t = 1.
// Near the optimum, when the objective can no longer resolve the step (change below 1e-13 |P|), the full step is
// taken on the gradient's evidence; the solve stops after 10 such unresolved steps without a better gap.
// Threads: the per-sample and per-feature passes run in parallel over fixed chunks summed in chunk order, the inner
// coordinate descent is sequential; the result is bit-identical for every thread count (same seed).
// L2 rows-only path (newton_rows_only): X^T u is accumulated per chunk of 4096 rows into a buffer of d doubles while
// the rows are read (one pass over X per CG iteration for X p and X^T D X p together), and no X^T is built;
// form.A is then null.
#pragma once
#include "hetglm/matrix.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// True when the L2 Newton solver runs from the rows of X alone (no X^T): its per-chunk buffers of n_cols doubles
/// (one per 4096 rows) stay within 4 Mi doubles and within half the nonzeros (their zeroing and reduction then cost
/// less than the pass over X^T they save). train() then skips the transposed copy.
bool newton_rows_only(const CsrMatrix& X);

/// Run the primal Newton solver on `form` (a PrimalForm<L, P>, L any smooth loss) from w = 0. `X` is the data with
/// samples as rows (form.A is its transpose). options: tol, max_epochs (Newton iterations), seed (inner order),
/// n_threads (0 = the current arena's concurrency), on_epoch, should_stop. form.A may be null for an L2 penalty
/// when newton_rows_only(X) holds. Returns the certificate exact for (w, v = X w). Throws TrainingError if the
/// objective becomes NaN or infinite; InvalidArgument for negative n_threads or an X that does not match the form.
template <class Form>
SolveResult solve_primal_newton(const Form& form, const CsrMatrix& X, const SolverOptions& options);

}  // namespace hetglm
