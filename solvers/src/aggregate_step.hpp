// SPDX-License-Identifier: Apache-2.0
// Adaptive aggregation of a CoCoA+ merge in one process (private to solvers/src: parallel_cpu.cpp for SySCD's
// replicas, duhl.cpp for the merge of the accelerator's and the CPU threads' updates). docs/parallel-cpu.md,
// "Adaptive aggregation". The terms of the objective along the line, the trial steps, the vertex and the safeguarded
// choice are those of hetglm/solvers/aggregation.hpp, which CoCoA+ across MPI ranks (cocoa.cpp) uses as well; this
// file only sums them in parallel and runs the search.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "executor.hpp"
#include "hetglm/solvers/aggregation.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// Scratch of aggregate_step, kept across calls so that a solve allocates it once.
struct AggregationScratch {
  std::vector<index_t> touched;
  std::vector<double> part;
};

/// The line search. `changed`: the coordinates with alpha[i] != alpha_old[i] (every coordinate the merge moved);
/// v: the shared vector before the merge (dim() entries), dv: the merged change of v at gamma = 1. Tries gamma = 1,
/// (1 + far)/2, far and the vertex of the parabola through them (in [plan.lo, plan.hi]; MergePlan); returns the best
/// (never worse than the plan's safe step, infeasible steps score -inf) and leaves alpha at alpha_old + gamma (alpha -
/// alpha_old) on `changed`;
/// v is not touched (the caller adds gamma dv). Sums are over fixed chunks added in order: the result does not depend
/// on the thread count or the schedule.
template <class Form>
double aggregate_step(const Form& form, std::span<const index_t> changed, const double* alpha_old, double* alpha,
                      std::span<const double> v, std::span<const double> dv, const MergePlan& plan,
                      AggregationScratch& s) {
  constexpr std::int64_t kGrain = 2048;
  if (changed.empty() || !plan.searches()) return 1.0;
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
  // sum over chunks of `list` of part(chunk), in fixed chunks added in order.
  auto chunked = [&](std::span<const index_t> list, const auto& part) {
    const std::int64_t n = static_cast<std::int64_t>(list.size());
    s.part.assign(static_cast<std::size_t>((n + kGrain - 1) / kGrain), 0.0);
    parallel_chunks(static_cast<std::int64_t>(s.part.size()), [&](std::int64_t ch) {
      const std::int64_t lo = ch * kGrain, hi = std::min(n, lo + kGrain);
      s.part[static_cast<std::size_t>(ch)] = part(list.subspan(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi - lo)));
    });
    double f = 0;
    for (double x : s.part) f += x;
    return f;
  };
  auto line_objective = [&](double gamma) {
    const double f = chunked(changed, [&](std::span<const index_t> c) {
      return line_coordinate_terms(form, c, alpha_old, alpha, gamma);
    });
    if constexpr (Form::formulation == Formulation::dual) {
      return f + line_dual_quadratic(form, vv, vd, dd, gamma);
    } else {
      return f + chunked(s.touched, [&](std::span<const index_t> t) {
               return line_primal_losses(form, t, v.data(), dv.data(), gamma);
             });
    }
  };
  const std::array<double, 3> g = aggregation_trials(plan);
  std::array<double, 4> gs{g[0], g[1], g[2], NAN}, fs{};
  for (int k = 0; k < 3; ++k) fs[k] = line_objective(g[k]);
  const double gp = aggregation_vertex(g, {fs[0], fs[1], fs[2]}, plan);
  std::size_t nk = 3;
  if (std::isfinite(gp) && gp != g[0] && gp != g[1] && gp != g[2]) {
    gs[3] = gp, fs[3] = line_objective(gp);
    nk = 4;
  }
  const double best =
      aggregation_best(std::span<const double>(gs.data(), nk), std::span<const double>(fs.data(), nk));
  if (best != 1.0)
    for (index_t i : changed) alpha[i] = alpha_old[i] + best * (alpha[i] - alpha_old[i]);
  return best;
}

}  // namespace hetglm
