// SPDX-License-Identifier: Apache-2.0
// Multinomial (softmax) logistic regression with an L2 penalty (`--model multinomial`), K > 2 classes:
//   P(W) = (1/n) sum_i c_i (logsumexp(x_i W) - x_i W_{:,y_i}) + lambda/2 ||W||_F^2,        W: d x K
// (scikit-learn's multinomial LogisticRegression at lambda = 1/(C n); the loss and its conjugate are the softmax
// functions of core/include/hetglm/glm_math_impl.h).
//
// Solver: truncated Newton (line-search Newton-CG; Nocedal & Wright, Numerical Optimization, 2nd ed., Algorithm
// 7.1, as scikit-learn's solver='newton-cg' and LIBLINEAR's TRON, Lin, Weng, Keerthi, JMLR 9 (2008)). Per Newton
// iteration at W, with Z = X W (kept in double):
//   1. p_i = softmax(z_i), the gradient G = (1/n) X^T C (P - Y) + lambda W, and the diagonal of the Hessian
//      (1/n) sum_i c_i x_ij^2 p_ik (1 - p_ik) + lambda (the CG preconditioner), in one pass over the rows;
//   2. the certificate (below); stop when P - D <= tol |P|;
//   3. the direction S from preconditioned CG on H S = -G, H V = (1/n) X^T [c_i (p_i o u_i - p_i (p_i . u_i))]
//      + lambda V with u_i = x_i V (one fused pass over the rows per CG iteration), stopped at
//      ||r|| <= min(0.1, sqrt(||G||)) ||G|| (inexact Newton's forcing term: superlinear near the optimum);
//   4. Armijo backtracking t = 1, 1/2, ... on P(W + t S) <= P(W) + 0.01 t G.S with Z + t X S (one loss evaluation
//      per sample per trial). When P cannot resolve the step any more (change below 1e-13 |P|) the full step is taken
//      on the gradient's evidence; the solve stops after 10 such steps without a better gap.
// Duality gap: the dual variables of W are alpha_i = -grad phi_i(z_i) = c_i (e_{y_i} - p_i) (on the simplex by
// construction), D(A) = -(1/n) sum_i phi_i^*(-alpha_i) - lambda/2 ||W(A)||^2 with W(A) = X^T A / (lambda n)
// = W - G / lambda, phi^* the negative entropy; P - D = lambda/2 ||W - W(A)||^2 + (Fenchel-Young terms) >= 0 is
// computed in double from (W, Z = X W recomputed exactly every iteration).
// One "epoch" of the history is one Newton iteration. Rows are processed in fixed chunks whose partial sums are added
// in chunk order: the result is bit-identical for every thread count.
#pragma once
#include <vector>

#include "hetglm/matrix.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Train W (returned in SolveResult::w and ::alpha, row-major d x K: w[j * K + k]) on X (samples as rows, the bias
/// column already appended), labels y_i in 0..K-1, weights c_i > 0, lambda > 0. options: tol, max_epochs (Newton
/// iterations), n_threads, on_epoch, should_stop, initial_alpha (a warm start: d x K values). Throws InvalidArgument
/// for mismatched sizes, TrainingError when the objective becomes NaN or infinite.
SolveResult solve_multinomial(const CsrMatrix& X, const std::vector<int>& y, int K, const std::vector<double>& c,
                              double lambda, const SolverOptions& options);

}  // namespace hetglm
