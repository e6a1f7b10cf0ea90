// SPDX-License-Identifier: Apache-2.0
// Adaptive aggregation of a CoCoA+ merge (private to solvers/src: parallel_cpu.cpp for SySCD's replicas, duhl.cpp
// for the merge of the accelerator's and the CPU threads' updates). docs/parallel-cpu.md, "Adaptive aggregation".
//
// After the safe merge (gamma = 1 with sigma' = the number of parts, CoCoA+), the step gamma along the merged
// direction (alpha - alpha_old, dv) that maximizes the dual (minimizes the primal) objective: the objective at
// gamma = 1, (1 + sigma')/2 and sigma' and at the vertex of the parabola through them (in [1/4, sigma']); never
// worse than gamma = 1, and infeasible steps (a conjugate outside its domain) are refused by the objective itself
// (-inf). The objective along the line is evaluated exactly: the changed coordinates' terms and, dual, the quadratic
// ||v + gamma dv||^2 from three dot products; primal, the losses of the samples dv touches.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "executor.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// Scratch of aggregate_step, kept across calls so that a solve allocates it once.
struct AggregationScratch {
  std::vector<index_t> touched;
  std::vector<double> part;
};

/// The line search above. `changed`: the coordinates with alpha[i] != alpha_old[i] (every coordinate the merge moved);
/// v: the shared vector before the merge (dim() entries), dv: the merged change of v at gamma = 1. Returns gamma and
/// leaves alpha at alpha_old + gamma (alpha - alpha_old) on `changed`; v is not touched (the caller adds gamma dv).
/// Sums are over fixed chunks added in order: the result does not depend on the thread count or the schedule.
template <class Form>
double aggregate_step(const Form& form, std::span<const index_t> changed, const double* alpha_old, double* alpha,
                      std::span<const double> v, std::span<const double> dv, double sigma, AggregationScratch& s) {
  constexpr std::int64_t kGrain = 2048;
  using LossP = typename Form::LossP;
  if (changed.empty() || !(sigma > 1)) return 1.0;
  const std::size_t d = v.size();
  double vv = 0, vd = 0, dd = 0;
  s.touched.clear();
  for (std::size_t j = 0; j < d; ++j) {
    vv += v[j] * v[j];
    vd += v[j] * dv[j];
    dd += dv[j] * dv[j];
    if (dv[j] != 0) s.touched.push_back(static_cast<index_t>(j));
  }
  if (dd == 0) return 1.0;
  // Sum of term(q) over q in [0, n), in fixed chunks added in order.
  auto chunked_sum = [&](std::int64_t n, const auto& term) {
    s.part.assign(static_cast<std::size_t>((n + kGrain - 1) / kGrain), 0.0);
    parallel_chunks(static_cast<std::int64_t>(s.part.size()), [&](std::int64_t ch) {
      double acc = 0;
      const std::int64_t hi = std::min(n, (ch + 1) * kGrain);
      for (std::int64_t q = ch * kGrain; q < hi; ++q) acc += term(static_cast<std::size_t>(q));
      s.part[static_cast<std::size_t>(ch)] = acc;
    });
    double f = 0;
    for (double x : s.part) f += x;
    return f;
  };
  auto line_objective = [&](double gamma) {
    const double f = chunked_sum(static_cast<std::int64_t>(changed.size()), [&](std::size_t q) {
      const index_t i = changed[q];
      const double a = alpha_old[i] + gamma * (alpha[i] - alpha_old[i]);
      if constexpr (Form::formulation == Formulation::dual) {
        return -LossP::conjugate(form.y[i], a, form.c[i]);
      } else {
        return -Form::PenP::value(a, form.lambda, form.eta);
      }
    });
    if constexpr (Form::formulation == Formulation::dual) {
      return f * form.inv_n -
             0.5 * form.lambda * form.inv_lambda_n * form.inv_lambda_n * (vv + gamma * (2 * vd + gamma * dd));
    } else {
      const double l = chunked_sum(static_cast<std::int64_t>(s.touched.size()), [&](std::size_t q) {
        const index_t k = s.touched[q];
        return -LossP::value(form.y[k], v[k] + gamma * dv[k], form.c[k]);
      });
      return l * form.inv_n + f;
    }
  };
  // Three points 1, (1 + sigma')/2, sigma' and the vertex of the parabola through them (exact for the losses whose
  // conjugate is quadratic on its domain: squared, hinge, squared hinge); the best of the four.
  const double g1 = 1.0, g2 = 0.5 * (1.0 + sigma), g3 = sigma;
  const double f1 = line_objective(g1), f2 = line_objective(g2), f3 = line_objective(g3);
  double best_g = g1, best_f = f1;
  if (f2 > best_f) best_g = g2, best_f = f2;
  if (f3 > best_f) best_g = g3, best_f = f3;
  if (std::isfinite(f1) && std::isfinite(f2) && std::isfinite(f3)) {
    const double num = (g2 - g1) * (g2 - g1) * (f2 - f3) - (g2 - g3) * (g2 - g3) * (f2 - f1);
    const double dnm = 2 * ((g2 - g1) * (f2 - f3) - (g2 - g3) * (f2 - f1));
    if (dnm < 0 || dnm > 0) {
      const double gp = std::clamp(g2 - num / dnm, 0.25, sigma);
      if (gp != g1 && gp != g2 && gp != g3) {
        const double fp = line_objective(gp);
        if (fp > best_f) best_g = gp, best_f = fp;
      }
    }
  }
  if (best_g != 1.0)
    for (index_t i : changed) alpha[i] = alpha_old[i] + best_g * (alpha[i] - alpha_old[i]);
  return best_g;
}

}  // namespace hetglm
