// SPDX-License-Identifier: Apache-2.0
// Adaptive aggregation: the step gamma along a merged CoCoA+ direction (alpha_old -> alpha, v_old -> v_old + dv) by a
// safeguarded line search on the exact objective (docs/parallel-cpu.md, "Adaptive aggregation"; docs/mpi.md). One
// copy of the math for its two users: SySCD's replicas (parallel_cpu.cpp) and CoCoA+ across MPI ranks (cocoa.cpp).
//
//   The objective along the line, as a value to maximize (dual: D; primal: -P), is the sum of
//     * the coordinate terms of the changed coordinates (line_coordinate_terms: -g_i(alpha_old_i + gamma delta_i),
//       times 1/n in the dual), and
//     * the shared-vector terms: dual, -lambda/2 ||(v + gamma dv)/(lambda n)||^2 from three dot products
//       (line_dual_quadratic); primal, -(1/n) sum_k loss(y_k, v_k + gamma dv_k) over the samples dv touches
//       (line_primal_losses).
//   Each is a plain sum, so a distributed caller adds its ranks' parts with one allreduce. Infeasible steps (a
//   conjugate outside its domain) give -inf and are never chosen; the safe merge (gamma = 1 for CoCoA+, sigma' / P
//   for MergePlan::between) is always among the candidates, so the step is never worse than it.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <vector>

#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// Sum over `changed` of the coordinate terms at alpha_old + gamma (alpha - alpha_old) + beta step (a point of the
/// plane spanned by the new direction and the previous step; step null: the line, beta unused); dual terms carry 1/n.
template <class Form>
double plane_coordinate_terms(const Form& form, std::span<const index_t> changed, const double* alpha_old,
                              const double* alpha, const double* step, double gamma, double beta) {
  double acc = 0;
  for (index_t i : changed) {
    double a = alpha_old[i] + gamma * (alpha[i] - alpha_old[i]);
    if (step) a += beta * step[i];
    if constexpr (Form::formulation == Formulation::dual)
      acc -= Form::LossP::conjugate(form.y[i], a, form.c[i]);
    else
      acc -= Form::PenP::value(a, form.lambda, form.eta);
  }
  if constexpr (Form::formulation == Formulation::dual) acc *= form.inv_n;
  return acc;
}

/// plane_coordinate_terms at every point of a grid, in one pass over `changed`: out[q] for gamma = gammas[q % G],
/// beta = betas[q / G], q < G x betas.size() (G = gammas.size()); step null: the line, out[q] = 0 for q >= G. Each
/// out[q] is summed in the order of `changed`, so it equals plane_coordinate_terms(.., gamma, beta) bit for bit; a
/// coordinate's values are read once for all points (CoCoA+'s 55-point search read them 55 times).
template <class Form>
void plane_coordinate_terms_grid(const Form& form, std::span<const index_t> changed, const double* alpha_old,
                                 const double* alpha, const double* step, std::span<const double> gammas,
                                 std::span<const double> betas, double* out) {
  const std::size_t G = gammas.size(), NB = step ? betas.size() : 1, Q = G * NB;
  std::fill(out, out + G * betas.size(), 0.0);
  for (index_t i : changed) {
    const double a0 = alpha_old[i], d = alpha[i] - a0, s = step ? step[i] : 0.0;
    for (std::size_t b = 0; b < NB; ++b)
      for (std::size_t g = 0; g < G; ++g) {  // q = b G + g
        double a = a0 + gammas[g] * d;
        if (step) a += betas[b] * s;
        if constexpr (Form::formulation == Formulation::dual)
          out[b * G + g] -= Form::LossP::conjugate(form.y[i], a, form.c[i]);
        else
          out[b * G + g] -= Form::PenP::value(a, form.lambda, form.eta);
      }
  }
  if constexpr (Form::formulation == Formulation::dual)
    for (std::size_t q = 0; q < Q; ++q) out[q] *= form.inv_n;
}

/// The same on the line alpha_old + gamma (alpha - alpha_old).
template <class Form>
double line_coordinate_terms(const Form& form, std::span<const index_t> changed, const double* alpha_old,
                             const double* alpha, double gamma) {
  return plane_coordinate_terms(form, changed, alpha_old, alpha, nullptr, gamma, 0.0);
}

/// Dot products of v, the new direction dv and the previous step s of v.
struct PlaneDots {
  double vv = 0, vd = 0, dd = 0, vs = 0, ds = 0, ss = 0;
};

/// Dual: -lambda/2 ||w||^2 at v + gamma dv + beta s.
template <class Form>
double plane_dual_quadratic(const Form& form, const PlaneDots& p, double gamma, double beta) {
  const double q = p.vv + gamma * (2 * p.vd + gamma * p.dd) + beta * (2 * p.vs + 2 * gamma * p.ds + beta * p.ss);
  return -0.5 * form.lambda * form.inv_lambda_n * form.inv_lambda_n * q;
}

/// Dual: -lambda/2 ||w||^2 at v + gamma dv, from vv = v.v, vd = v.dv, dd = dv.dv.
template <class Form>
double line_dual_quadratic(const Form& form, double vv, double vd, double dd, double gamma) {
  return plane_dual_quadratic(form, PlaneDots{vv, vd, dd, 0, 0, 0}, gamma, 0.0);
}

/// Primal: -(1/n) sum over `touched` of loss(y_k, v_k + gamma dv_k + beta s_k) (s null: the line).
template <class Form>
double plane_primal_losses(const Form& form, std::span<const index_t> touched, const double* v, const double* dv,
                           const double* s, double gamma, double beta) {
  double acc = 0;
  for (index_t k : touched) {
    double z = v[k] + gamma * dv[k];
    if (s) z += beta * s[k];
    acc -= Form::LossP::value(form.y[k], z, form.c[k]);
  }
  return acc * form.inv_n;
}

/// The same on the line v + gamma dv.
template <class Form>
double line_primal_losses(const Form& form, std::span<const index_t> touched, const double* v, const double* dv,
                          double gamma) {
  return plane_primal_losses(form, touched, v, dv, nullptr, gamma, 0.0);
}

/// Momentum weights of the plane search (the previous step's share): 0 first.
inline constexpr std::array<double, 5> kAggregationMomenta = {0.0, 0.5, 0.8, 0.9, 0.95};

/// How the P parts of a merge (SySCD's replicas, CoCoA+'s ranks) step and how far the merged step may go.
///  * CoCoA+ (Smith, Forte, Ma, Takac, Jordan, Jaggi, JMLR 2018, sec. 3 with gamma = 1, sigma' = P): each part steps
///    at sigma' = P; gamma = 1 (adding the parts) is safe, and the search covers [1/4, P].
///  * The box duals (hinge, squared hinge): a step past gamma = 1 leaves the dual's box wherever a part put a
///    coordinate on its bound, so a search from the CoCoA+ point never moves (measured: gamma 1.00 in every round).
///    Instead each part steps at sigma' = 1, as if alone, and gamma is searched in [1/P, 1]: gamma = 1/P is CoCoA's
///    averaging (Jaggi et al., NIPS 2014, with sigma' = 1), safe, and every point of the segment lies in the box by
///    convexity. docs/parallel-cpu.md, "The box duals' merge".
struct MergePlan {
  double step_sigma = 1;  ///< sigma' of each part's coordinate steps (and the divisor of their merged change)
  double far = 1;         ///< the trial step besides 1 and the midpoint: sigma' (CoCoA+) or sigma' / P (between)
  double lo = 1, hi = 1;  ///< the range of the searched step
  int lookahead_chunks = 0;  ///< CoCoA+ ranks only: the lookahead's parts per epoch (kLookaheadChunks), 0 = none
  double lookahead_share = 0;  ///< CoCoA+ ranks only: the share of the other ranks' last step it adds (2 / K)
  bool box_extrapolation = false;  ///< CoCoA+ ranks only: also try kBoxExtrapolation's projected steps

  /// CoCoA+ with sigma' = `sigma` (no search when sigma <= 1).
  static MergePlan cocoa(double sigma) { return {sigma, sigma, 0.25, std::max(sigma, 1.0)}; }
  /// Between the two (CoCoA+, Smith et al., JMLR 2018, Theorem 10 and Remark 11: with gamma in [1/P, 1], sigma' >=
  /// gamma P is safe): each part steps at sigma' = `sigma` in [1, P), so gamma = sigma / P is safe; the search covers
  /// [sigma / P, 1] for the box duals (both ends of that segment lie in the box) and [sigma / P, P] for the others.
  /// between(1, P, true) is the box duals' plan of the second bullet above.
  static MergePlan between(double sigma, int parts, bool box_dual) {
    const double P = parts;
    return {sigma, sigma / P, sigma / P, box_dual ? 1.0 : P};
  }
  /// True when there is something to search (the plan of one part has not).
  bool searches() const { return far != 1; }
};

/// sigma' of SySCD's T replicas in the dual with adaptive aggregation when SolverOptions::replica_sigma is 0 (by
/// loss, measured at T = 2: docs/parallel-cpu.md, "sigma' between 1 and T"): sqrt(T) for the hinge loss, T^(1/4) for
/// the logistic and squared hinge losses (their epochs to 1e-4 at 2 threads fell to 0.75-0.87x (hinge), 0.73-0.89x
/// (logistic) and 0.91-0.96x (squared hinge) of those of the earlier plans on the two generated sets of
/// bench/results/thread_scaling.md), T for the others (ridge needed more epochs below T).
inline double replica_sigma(Loss loss, int T) {
  if (T <= 1) return 1.0;
  if (loss == Loss::hinge) return std::sqrt(double(T));
  if (loss == Loss::logistic || loss == Loss::squared_hinge) return std::pow(double(T), 0.25);
  return double(T);
}

/// The plan of T replicas stepping at `sigma` (clamped to [1, T]): CoCoA+ at T, MergePlan::between below.
inline MergePlan replica_merge_plan(bool box_dual, int T, double sigma) {
  if (T <= 1) return MergePlan::cocoa(1.0);
  sigma = std::clamp(sigma, 1.0, double(T));
  if (sigma >= T) return MergePlan::cocoa(double(T));
  return MergePlan::between(sigma, T, box_dual);
}

/// The lookahead of the dual CoCoA+ ranks that step at sigma' = 1 (the logistic dual and the box duals; cocoa.cpp;
/// docs/mpi.md, "The lookahead"): a rank's epoch runs in this many equal parts of its random order, and after each
/// part its local copy of v takes 1 / parts of lookahead_share(K) times the other ranks' part of the previous
/// round's step (that step less the rank's own part of it), so that its later coordinates see an estimate of what
/// the other ranks are doing in this round, as the coordinates of one process's epoch see every earlier step.
/// Measured (bench/results/mpi.md, section 8; rounds to relative gap 1e-4, seeds 1-3, a9a, w7a and mushrooms, as
/// given and label-sorted): for the logistic dual at K = 2, 2, 3 and 4 parts cut the rounds from a median of 117-129
/// to 64-74 on a9a, 3 the best, 6 and more worse (its previous round's step, momentum included, overstates this
/// round's); the box duals, whose steps carry no momentum, gained with every count up to 8 (hinge, label-sorted
/// a9a at K = 2: 2 parts 2635 rounds, 3 1554, 4 939, 6 555, 8 510, 12 494; 437 at K = 1), and with the certificate's
/// kept primal point (best_primal.hpp) up to 32 (medians of seeds 1-3 at K = 2, label-sorted, bias 1, 8 / 16 / 32 /
/// 64 parts: a9a hinge 440 / 421 / 414 / 427, w7a hinge 851 / 799 / 751 / 700, a9a squared hinge 545 / 324 / 238 /
/// 228, w7a squared hinge 413 / 311 / 246 / 233; the generated 2,000,000 x 100,000 hinge 22 / 20 / 20 / 21 rounds;
/// bench/results/mpi.md, section 10). The logistic dual stays at 3 (a9a: 3 / 6 / 16 parts 58 / 70 / 95).
inline constexpr int kLookaheadChunks = 3;
inline constexpr int kLookaheadChunksBox = 32;
/// The parts of the lookahead on a rank whose part of the data holds `nnz_per_dim` nonzeros per entry of v: each
/// part adds a d-vector to the rank's copy of v, so at most nnz / (4 d) parts (a quarter of the epoch's nonzeros),
/// and none (0) below 2: on wide data (news20's 1.35 million features and 4.5 million nonzeros a rank at K = 2)
/// 32 parts would cost more than the epoch.
inline int lookahead_parts(int parts, double nnz_per_dim) {
  const double cap = std::floor(nnz_per_dim / 4);
  const int p = cap < parts ? static_cast<int>(cap) : parts;
  return p >= 2 ? p : 0;
}
/// The share of the other ranks' last step that the lookahead adds at K ranks: 1 at K = 2, 1/2 at K = 4 (measured at
/// those two: at K = 4 the whole step cost rounds where half of it gained; other K follow the rule untested).
inline double lookahead_share(int ranks) { return ranks > 1 ? 2.0 / ranks : 0.0; }

/// The projected steps past gamma = 1 that the box duals' ranks also try (cocoa.cpp; docs/mpi.md, "Projected
/// steps"): alpha_old + gamma (alpha - alpha_old) projected onto the box coordinate by coordinate. The plane search
/// cannot go past gamma = 1 inside a box (section 4 of bench/results/mpi.md: it chose 1 in most rounds), and the
/// projected points are no longer on the line, so each rank sends the change of A_r alpha_r for each of them with
/// Δv (the allreduce carries (1 + 3) d doubles) and their objectives join the search's sums.
inline constexpr std::array<double, 3> kBoxExtrapolation = {1.5, 2.0, 3.0};

/// The merge across `ranks` MPI ranks (CoCoA+, cocoa.cpp; the CLI's report states it): CoCoA+ over the ranks x
/// `local_threads` blocks when the ranks run SySCD on several threads or the aggregation is fixed; else, on the
/// sequential local loop, the ranks step at sigma' = 1 (MergePlan::between(1, K, .)) for the box duals (`box_dual`:
/// gamma in [1/K, 1], and the projected steps of kBoxExtrapolation) and the logistic dual (`logistic_dual`: gamma in
/// [1/K, K]), both with the lookahead at K > 1 (its parts capped by lookahead_parts for a rank's `nnz_per_dim`
/// nonzeros per entry of v), and at CoCoA+'s sigma' = K for the others (ridge: measured more rounds at sigma' = 1).
/// docs/mpi.md (the CoCoA+ entry at the top), measured in bench/results/mpi.md, sections 7, 8 and 10.
inline MergePlan cocoa_merge_plan(bool box_dual, bool logistic_dual, int ranks, int local_threads, bool adaptive,
                                  double nnz_per_dim = INFINITY) {
  if (local_threads > 1 || !adaptive) return MergePlan::cocoa(double(ranks) * double(local_threads));
  if (!box_dual && !logistic_dual) return MergePlan::cocoa(double(ranks));
  MergePlan p = replica_merge_plan(box_dual, ranks, 1.0);
  if (ranks > 1) {
    p.lookahead_chunks = lookahead_parts(box_dual ? kLookaheadChunksBox : kLookaheadChunks, nnz_per_dim);
    p.lookahead_share = lookahead_share(ranks);
    p.box_extrapolation = box_dual;
  }
  return p;
}

/// The first three trial steps: 1, (1 + far)/2, far.
inline std::array<double, 3> aggregation_trials(const MergePlan& plan) {
  return {1.0, 0.5 * (1.0 + plan.far), plan.far};
}

/// The vertex of the parabola through (g[k], f[k]), clamped to [plan.lo, plan.hi]; NaN when the three values are
/// not all finite or the points are collinear (exact for the losses whose conjugate is quadratic on its domain).
inline double aggregation_vertex(const std::array<double, 3>& g, const std::array<double, 3>& f, const MergePlan& plan) {
  if (!(std::isfinite(f[0]) && std::isfinite(f[1]) && std::isfinite(f[2]))) return NAN;
  const double num = (g[1] - g[0]) * (g[1] - g[0]) * (f[1] - f[2]) - (g[1] - g[2]) * (g[1] - g[2]) * (f[1] - f[0]);
  const double dnm = 2 * ((g[1] - g[0]) * (f[1] - f[2]) - (g[1] - g[2]) * (f[1] - f[0]));
  if (!(dnm < 0 || dnm > 0)) return NAN;
  return std::clamp(g[1] - num / dnm, plan.lo, plan.hi);
}

/// A fixed set of trial steps for a caller that evaluates them all at once (CoCoA+ across ranks: one allreduce of
/// their partial objectives): 1 first, the three trials, and `n_grid` geometric points from plan.lo to plan.hi.
inline std::vector<double> aggregation_grid(const MergePlan& plan, int n_grid) {
  std::vector<double> g;
  for (double x : aggregation_trials(plan)) g.push_back(x);
  for (int k = 0; k < n_grid; ++k)
    g.push_back(plan.lo * std::pow(plan.hi / plan.lo, n_grid > 1 ? double(k) / (n_grid - 1) : 1.0));
  return g;
}

/// The safeguarded choice: the candidate of largest objective; gamma = 1 on ties and when nothing beats it (NaN and
/// -inf objectives never win). g[0] must be 1. (For MergePlan::between, the safe step sigma' / P is among the
/// candidates, so the choice is never worse than it.)
inline double aggregation_best(std::span<const double> g, std::span<const double> f) {
  double best_g = g[0], best_f = f[0];
  for (std::size_t k = 1; k < g.size(); ++k)
    if (f[k] > best_f) best_g = g[k], best_f = f[k];
  return best_g;
}

}  // namespace hetglm
