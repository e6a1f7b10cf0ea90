// SPDX-License-Identifier: Apache-2.0
// Anderson extrapolation of a sequence of iterates (private to solvers/src): the working-set solver's primal iterates
// and dual extrapolation (working_set.cpp; celer, Massias, Gramfort, Salmon, ICML 2018; skglm, Bertrand et al.,
// NeurIPS 2022) and the multinomial proximal Newton solver's inner coordinate-descent passes (multinomial.cpp).
// Given the last kAndersonDepth + 1 iterates x_0..x_K and their differences d_i = x_{i+1} - x_i, the extrapolated point is
// sum_i c_i x_{i+1} with c minimizing |sum_i c_i d_i| subject to sum_i c_i = 1: c = z / sum z, (D^T D) z = 1. The
// caller evaluates its objective there and keeps the point only when it is better.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace hetglm {

inline constexpr int kAndersonDepth = 5;  ///< Anderson / dual-extrapolation depth K (celer, skglm)

/// Solves (G + eps I) z = 1 for the kAndersonDepth x kAndersonDepth Gram matrix G of the Anderson differences (eps = 1e-10 of its
/// mean diagonal) by Cholesky; false when G is not positive definite (stalled iterates).
inline bool solve_spd(const double (&G)[kAndersonDepth][kAndersonDepth], double (&z)[kAndersonDepth]) {
  double L[kAndersonDepth][kAndersonDepth] = {};
  double tr = 0;
  for (int i = 0; i < kAndersonDepth; ++i) tr += G[i][i];
  if (!(tr > 0) || !std::isfinite(tr)) return false;
  const double eps = 1e-10 * tr / kAndersonDepth;
  for (int i = 0; i < kAndersonDepth; ++i) {
    for (int j = 0; j <= i; ++j) {
      double s = G[i][j] + (i == j ? eps : 0.0);
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      if (i == j) {
        if (!(s > 0)) return false;
        L[i][i] = std::sqrt(s);
      } else {
        L[i][j] = s / L[j][j];
      }
    }
  }
  double t[kAndersonDepth];
  for (int i = 0; i < kAndersonDepth; ++i) {
    double s = 1;
    for (int k = 0; k < i; ++k) s -= L[i][k] * t[k];
    t[i] = s / L[i][i];
  }
  for (int i = kAndersonDepth; i-- > 0;) {
    double s = t[i];
    for (int k = i + 1; k < kAndersonDepth; ++k) s -= L[k][i] * z[k];
    z[i] = s / L[i][i];
  }
  return true;
}

/// Anderson coefficients c (sum 1) from the Gram matrix of the kAndersonDepth differences of the last kAndersonDepth + 1 iterates;
/// false when they do not exist.
inline bool anderson_coefficients(const double (&G)[kAndersonDepth][kAndersonDepth], double (&c)[kAndersonDepth]) {
  double z[kAndersonDepth];
  if (!solve_spd(G, z)) return false;
  double zs = 0;
  for (double x : z) zs += x;
  if (!std::isfinite(zs) || zs == 0) return false;
  for (int i = 0; i < kAndersonDepth; ++i) c[i] = z[i] / zs;
  return true;
}

/// Ring of the last kAndersonDepth + 1 iterates (vectors of `size` doubles), oldest first by slot().
struct AndersonHistory {
  std::vector<std::vector<double>> x;
  int filled = 0;
  explicit AndersonHistory(std::size_t size) : x(kAndersonDepth + 1, std::vector<double>(size)) {}
  void reset() { filled = 0; }
  template <class F>
  void push(const F& fill) {
    fill(x[static_cast<std::size_t>(filled % (kAndersonDepth + 1))].data());
    ++filled;
  }
  bool full() const { return filled >= kAndersonDepth + 1; }
  /// The i-th of the last kAndersonDepth + 1 iterates, i = 0 oldest.
  const double* at(int i) const { return x[static_cast<std::size_t>((filled - 1 - kAndersonDepth + i) % (kAndersonDepth + 1))].data(); }
  /// Gram matrix of the differences d_i = at(i + 1) - at(i) in the inner product dot(a0, a1, b0, b1).
  template <class Dot>
  void gram(double (&G)[kAndersonDepth][kAndersonDepth], const Dot& dot) const {
    for (int a = 0; a < kAndersonDepth; ++a)
      for (int b = a; b < kAndersonDepth; ++b) G[a][b] = G[b][a] = dot(at(a), at(a + 1), at(b), at(b + 1));
  }
  /// out = sum_i c_i at(i + 1).
  void combine(const double (&c)[kAndersonDepth], double* out, std::size_t size) const {
    std::fill(out, out + size, 0.0);
    for (int i = 0; i < kAndersonDepth; ++i) {
      const double* xi = at(i + 1);
      for (std::size_t k = 0; k < size; ++k) out[k] += c[i] * xi[k];
    }
  }
};

}  // namespace hetglm
