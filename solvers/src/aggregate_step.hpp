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
/// v is not touched (the caller adds gamma dv). Every pass runs in parallel over fixed chunks whose sums are added in
/// order: the result does not depend on the thread count or the schedule. The three trials are summed in one pass
/// over `changed` (plane_coordinate_terms_grid: bit for bit the three separate sums); the dot products of v and dv
/// in chunks of kVecChunk entries.
template <class Form>
double aggregate_step(const Form& form, std::span<const index_t> changed, const double* alpha_old, double* alpha,
                      std::span<const double> v, std::span<const double> dv, const MergePlan& plan,
                      AggregationScratch& s) {
  constexpr std::int64_t kGrain = 2048, kVecChunk = 4096;
  if (changed.empty() || !plan.searches()) return 1.0;
  const std::size_t d = v.size();
  const std::int64_t n_vc = static_cast<std::int64_t>((d + kVecChunk - 1) / kVecChunk);
  s.part.assign(static_cast<std::size_t>(3 * n_vc), 0.0);
  parallel_chunks(n_vc, [&](std::int64_t ch) {
    const std::size_t lo = static_cast<std::size_t>(ch * kVecChunk), hi = std::min(d, lo + std::size_t(kVecChunk));
    double a = 0, b = 0, c = 0;
    for (std::size_t j = lo; j < hi; ++j) {
      a += v[j] * v[j];
      b += v[j] * dv[j];
      c += dv[j] * dv[j];
    }
    double* out = s.part.data() + 3 * ch;
    out[0] = a, out[1] = b, out[2] = c;
  });
  double vv = 0, vd = 0, dd = 0;
  for (std::int64_t ch = 0; ch < n_vc; ++ch) {
    vv += s.part[std::size_t(3 * ch)];
    vd += s.part[std::size_t(3 * ch + 1)];
    dd += s.part[std::size_t(3 * ch + 2)];
  }
  if (dd == 0) return 1.0;
  if constexpr (Form::formulation == Formulation::primal) {
    s.touched.clear();
    for (std::size_t j = 0; j < d; ++j)
      if (dv[j] != 0) s.touched.push_back(static_cast<index_t>(j));
  }
  // sum over chunks of `list` of the G values part(chunk, out[G]), in fixed chunks added in order.
  auto chunked = [&]<std::size_t G>(std::span<const index_t> list, const auto& part) {
    const std::int64_t n = static_cast<std::int64_t>(list.size()), n_ch = (n + kGrain - 1) / kGrain;
    s.part.assign(static_cast<std::size_t>(n_ch) * G, 0.0);
    parallel_chunks(n_ch, [&](std::int64_t ch) {
      const std::int64_t lo = ch * kGrain, hi = std::min(n, lo + kGrain);
      part(list.subspan(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi - lo)),
           s.part.data() + static_cast<std::size_t>(ch) * G);
    });
    std::array<double, G> f{};
    for (std::int64_t ch = 0; ch < n_ch; ++ch)
      for (std::size_t q = 0; q < G; ++q) f[q] += s.part[static_cast<std::size_t>(ch) * G + q];
    return f;
  };
  const double no_beta = 0.0;
  // The objective along the line at the G steps `gammas`.
  auto line_objectives = [&]<std::size_t G>(const std::array<double, G>& gammas) {
    std::array<double, G> f = chunked.template operator()<G>(changed, [&](std::span<const index_t> c, double* out) {
      plane_coordinate_terms_grid(form, c, alpha_old, alpha, nullptr, gammas, std::span<const double>(&no_beta, 1),
                                  out);
    });
    for (std::size_t q = 0; q < G; ++q) {
      if constexpr (Form::formulation == Formulation::dual) {
        f[q] += line_dual_quadratic(form, vv, vd, dd, gammas[q]);
      } else {
        f[q] += chunked.template operator()<1>(s.touched, [&](std::span<const index_t> t, double* out) {
          out[0] = line_primal_losses(form, t, v.data(), dv.data(), gammas[q]);
        })[0];
      }
    }
    return f;
  };
  const std::array<double, 3> g = aggregation_trials(plan);
  const std::array<double, 3> f3 = line_objectives(g);
  std::array<double, 4> gs{g[0], g[1], g[2], NAN}, fs{f3[0], f3[1], f3[2], 0.0};
  const double gp = aggregation_vertex(g, f3, plan);
  std::size_t nk = 3;
  if (std::isfinite(gp) && gp != g[0] && gp != g[1] && gp != g[2]) {
    gs[3] = gp, fs[3] = line_objectives(std::array<double, 1>{gp})[0];
    nk = 4;
  }
  const double best =
      aggregation_best(std::span<const double>(gs.data(), nk), std::span<const double>(fs.data(), nk));
  if (best != 1.0) {
    const std::int64_t n = static_cast<std::int64_t>(changed.size());
    parallel_chunks((n + kGrain - 1) / kGrain, [&](std::int64_t ch) {
      for (std::int64_t k = ch * kGrain, hi = std::min(n, k + kGrain); k < hi; ++k) {
        const index_t i = changed[static_cast<std::size_t>(k)];
        alpha[i] = alpha_old[i] + best * (alpha[i] - alpha_old[i]);
      }
    });
  }
  return best;
}

}  // namespace hetglm
