// SPDX-License-Identifier: Apache-2.0
// The primal working-set solver (`--solver working-set`): coordinate descent over features on a small working set,
// for every primal form with an L1 part (Lasso, elastic net, L1 / elastic-net logistic and squared hinge).
// celer (Massias, Gramfort, Salmon, "Celer: a Fast Solver for the Lasso with Dual Extrapolation", ICML 2018) and
// skglm (Bertrand, Klopfenstein, Massias et al., "Beyond L1: Faster and Better Sparse Models with skglm",
// NeurIPS 2022) with gap-safe screening (Fercoq, Gramfort, Salmon, ICML 2015; Ndiaye, Fercoq, Gramfort, Salmon,
// "Gap Safe Screening Rules for Sparsity Enforcing Penalties", JMLR 18, 2017). Per outer iteration, at w with
// v = X w (re-synchronized exactly):
//   1. certificate: u = grad f(v) and s_j = <x^(j), u> for every feature not screened (features in parallel), the
//      form's certificate (forms.hpp PrimalForm::finish: the better of the Lipschitzed dual and the rescaled dual
//      point t u with ||X^T (t u)||_inf <= lambda eta'), and the same for the inner loop's best extrapolated dual
//      point; the better dual value is the certificate's. It is recorded as this iteration's epoch and the solve
//      stops when P - D <= tol |P|.
//      Correlation bounds spare most products of these passes where they can: each certificate at u moves a
//      reference (drift += ||u - u_ref|| / n), and every feature keeps base_j + ||x^(j)|| (drift - anchor_j) >=
//      |<x^(j), u>| / n (the triangle and Cauchy-Schwarz inequalities; base_j is |s_j| plus its product's rounding
//      at the last certificate that computed it). A feature with w_j = 0 whose bound is at most lambda eta'
//      (1 - 1e-9) adds exactly nothing to the certificate (g, g^* and its gap are 0, and it cannot raise the dual
//      point's scale), so its product is skipped and its s_j is replaced by the bound (screening and the ranking of
//      step 3 read it as an upper bound). The certificate is the same number as with every product computed. The
//      bounds pay off at the first certificate of a path's point, whose derivatives are those of the previous
//      point's last certificate (same w): only lambda changed, and the bounds carry over in the PathCache (test:
//      WorkingSetSolver.CorrelationBoundsKeepEveryCertificateHonest, which fails when the drift is not added);
//   2. gap-safe screening: with the dual point theta of the better certificate and its gap G, every feature with
//      |<x^(j), theta>| + sqrt(2 G / gamma) ||x^(j)|| < lambda eta' is zero at the optimum (gamma = n / (L c_max),
//      the dual's strong concavity; PrimalForm::gap_safe_radius) and is removed for the rest of the solve (its
//      weight set to 0): the remaining problem has the same optimum, and its dual certifies it. The test keeps a
//      relative margin of 1e-9 below lambda eta' against rounding (a support feature sits at the threshold when the
//      gap, hence R, rounds to 0). With a warm start (a path: the previous lambda's solution) the first screening
//      uses that solution's residual rescaled into this lambda's dual domain: the sequential gap-safe rule (Ndiaye
//      et al. 2017). SolveResult::screened counts the features removed plus those the final certificate's dual
//      point rules out;
//   3. the working set: the support (w_j != 0) first, then the features closest to their dual constraint,
//      (lambda eta' - |<x^(j), theta>|) / ||x^(j)|| ascending (celer's ranking; violators first); its size is
//      max(100, 2 |support|, |support| + #violators), never smaller than the previous one (geometric growth);
//   4. the inner loop: cyclic coordinate descent epochs over the working set (Form::coordinate_step: the exact step
//      for the squared loss, the proximal Newton step with line search for logistic / squared hinge), every 5 epochs
//      Anderson extrapolation of the last 5 differences of v (coefficients c = z / sum z, (U^T U) z = 1): the
//      extrapolated w_acc = sum c_i w_i (v_acc = X w_acc) replaces w when its objective is lower (skglm), and
//      grad f(v_acc) is the extrapolated dual point (celer); the inner loop stops when its gap (the working set's
//      dual constraints only) is at most 0.3 x the outer gap.
//      For the squared loss a working set that is cheap to square (building its Gram matrix costs at most 30
//      epochs, and it has at most 2^23 entries and a quarter of the working set's nonzeros) runs the inner loop on
//      Q = X_W^T C X_W / n instead (glmnet's covariance updates), built in parallel from fixed parts of the samples
//      and added in order.
// One epoch of the history is one outer iteration; SolveResult::epochs counts them. The inner loop is sequential
// over features; the full passes run in parallel over fixed chunks summed in order, so the result is the same for
// every thread count. Dense data (every column full): the column operations run on contiguous values, and for the
// squared loss with unit weights and at least 32,768 samples an inner epoch splits the samples into fixed blocks of
// 8,192 shared among the threads (one barrier per coordinate step; the step adds the blocks' partial dots in
// block order), so it too gives the same model for every thread count.
#pragma once
#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Run the working-set solver on a PrimalForm whose penalty has an L1 part (form.A = X^T must be present).
/// options: tol, max_epochs (outer iterations), n_threads (full passes; 0 = the current arena's), initial_alpha,
/// on_epoch, should_stop, after_epoch. Throws InvalidArgument for an L2 penalty or negative n_threads,
/// TrainingError if the objective becomes NaN or infinite.
template <class Form>
SolveResult solve_working_set(const Form& form, const SolverOptions& options);

}  // namespace hetglm
