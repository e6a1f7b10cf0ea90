// SPDX-License-Identifier: Apache-2.0
// Multinomial (softmax) logistic regression (`--model multinomial`), K > 2 classes:
//   P(W) = (1/n) sum_i c_i (logsumexp(x_i W) - x_i W_{:,y_i}) + sum_jk g(W_jk),        W: d x K
// with g the L2 penalty lambda/2 w^2 (the default), L1 lambda |w| or the elastic net lambda (eta |w| + (1 - eta)/2
// w^2) (scikit-learn's multinomial LogisticRegression at lambda = 1/(C n), eta = l1_ratio; the loss and its conjugate
// are the softmax functions of core/include/hetglm/glm_math_impl.h, the penalties its penalty table).
//
// L2 (and the elastic net at eta = 0): Newton-CG, below. L1 and the elastic net: proximal Newton (newGLMNET, Yuan,
// Ho, Lin, "An improved GLMNET for L1-regularized logistic regression", JMLR 13 (2012); Lee, Sun, Saunders,
// "Proximal Newton-type methods", SIAM J. Optim. 24 (2014)): at W, the direction S minimizes the quadratic model of
// the loss plus g(W + S) by coordinate descent over the (feature, class) coordinates with the full softmax Hessian
// (cross-class terms included; its passes accelerated by Anderson extrapolation, skglm's, Bertrand et al., NeurIPS
// 2022), then Armijo backtracking on P(W + t S) <= P(W) + 0.01 t (G.S + g(W + S) - g(W)), or past t = 1 while P
// keeps falling (docs/algorithms.md, the multinomial model).
// Its duality gap uses the dual point s alpha_i, s rescaling X^T A / n into the L1 box (multinomial.cpp,
// proximal_certificate); one epoch of the history is one proximal Newton iteration.
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

#include "hetglm/losses.hpp"
#include "hetglm/matrix.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Train W (returned in SolveResult::w and ::alpha, row-major d x K: w[j * K + k]) on X (samples as rows, the bias
/// column already appended), labels y_i in 0..K-1, weights c_i > 0, lambda > 0, the penalty and its l1 ratio eta
/// (l1_share: 0 for l2, 1 for l1, in [0, 1] for the elastic net). options: tol, max_epochs (Newton iterations),
/// n_threads, seed (the proximal solver's coordinate order), on_epoch, should_stop, initial_alpha (a warm start: d x K
/// values). Throws InvalidArgument for mismatched sizes or an eta outside [0, 1], TrainingError when the objective
/// becomes NaN or infinite.
SolveResult solve_multinomial(const CsrMatrix& X, const std::vector<int>& y, int K, const std::vector<double>& c,
                              double lambda, Penalty penalty, double eta, const SolverOptions& options);

}  // namespace hetglm
