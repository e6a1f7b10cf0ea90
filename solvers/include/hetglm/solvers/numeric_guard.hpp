// SPDX-License-Identifier: Apache-2.0
// Numerical guard shared by the CPU solvers (sequential.cpp, parallel_cpu.cpp): when an epoch's certificate is
// not finite, find the first non-finite coordinate variable (alpha_i in the dual, w_j in the primal) or entry of
// the shared vector v and stop with a TrainingError naming the epoch and the coordinate, instead of writing a
// NaN model. The scan runs only when the certificate is already non-finite, so the normal path pays nothing.
// docs/robustness.md.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "hetglm/error.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// "nan", "inf" or "-inf" (fmt's spelling, fixed here so the messages never depend on the library version).
inline std::string nonfinite_name(double x) {
  if (std::isnan(x)) return "nan";
  return x > 0 ? "inf" : "-inf";
}

/// Throws TrainingError for the first non-finite entry of `alpha` (named `alpha_name`: "alpha" for the dual
/// formulation, "w" for the primal one), then of `v`:
///   "numerical failure at epoch E: alpha[i] = nan (coordinate i)"
///   "numerical failure at epoch E: v[k] = inf (entry k of the shared vector v = A alpha)"
/// Returns normally when every entry is finite (the caller then reports the non-finite objective itself).
/// "numerical failure at epoch E: alpha[i] = nan (coordinate i)" for coordinate i holding the non-finite x.
[[noreturn]] inline void throw_nonfinite_coordinate(int epoch, std::size_t i, double x, std::string_view alpha_name) {
  throw TrainingError(fmt::format("numerical failure at epoch {}: {}[{}] = {} (coordinate {})", epoch, alpha_name, i,
                                  nonfinite_name(x), i));
}

inline void throw_if_nonfinite_state(int epoch, std::span<const double> alpha, std::span<const double> v,
                                     std::string_view alpha_name = "alpha") {
  for (std::size_t i = 0; i < alpha.size(); ++i)
    if (!std::isfinite(alpha[i])) throw_nonfinite_coordinate(epoch, i, alpha[i], alpha_name);
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      throw TrainingError(fmt::format("numerical failure at epoch {}: v[{}] = {} (entry {} of the shared vector v = A {})",
                                      epoch, k, nonfinite_name(v[k]), k, alpha_name));
}

/// The per-epoch check of every CPU solver: a finite certificate passes; otherwise the state is scanned
/// (throw_if_nonfinite_state) and, when alpha and v are finite, the objective itself is reported:
///   "numerical failure at epoch E: the objective is not finite (primal P, dual D)".
inline void check_finite_certificate(const Certificate& c, int epoch, std::span<const double> alpha,
                                     std::span<const double> v, std::string_view alpha_name = "alpha") {
  if (std::isfinite(c.primal) && std::isfinite(c.dual)) return;
  throw_if_nonfinite_state(epoch, alpha, v, alpha_name);
  throw TrainingError(fmt::format("numerical failure at epoch {}: the objective is not finite (primal {}, dual {})",
                                  epoch, c.primal, c.dual));
}

}  // namespace hetglm
