// SPDX-License-Identifier: Apache-2.0
// The TPA-SCD wave schedule (tpa_schedule.hpp).
#include "hetglm/tpa_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hetglm/rng.hpp"

namespace hetglm::tpa {

std::string Schedule::describe() const { return fmt::format("waves of {}, sigma' {:.3g}", wave, sigma); }

double normalized_gram_bound(const CsrMatrix& A, std::span<const index_t> block, const double* row_weights,
                             int iterations, std::uint64_t seed, std::vector<double>& t) {
  const std::size_t b = block.size();
  std::vector<double> inv_norm(b, 0.0), x(b), y(b);
  std::size_t live = 0;
  for (std::size_t p = 0; p < b; ++p) {
    const index_t i = block[p];
    double d = 0;
    for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) {
      const double a = A.values[k];
      d += (row_weights ? row_weights[A.indices[k]] : 1.0) * a * a;
    }
    if (d > 0) {
      inv_norm[p] = 1.0 / std::sqrt(d);
      ++live;
    }
  }
  if (live <= 1) return 1.0;
  // Positive start (the top eigenvector of a nonnegative Gram matrix is nonnegative), slightly randomized.
  SplitMix64 rng(seed);
  for (std::size_t p = 0; p < b; ++p)
    x[p] = inv_norm[p] > 0 ? 1.0 + 0.5 * (double(rng.next() >> 11) * 0x1.0p-53) : 0.0;
  auto normalize = [&](std::vector<double>& z) {
    double s = 0;
    for (double e : z) s += e * e;
    s = std::sqrt(s);
    if (s > 0)
      for (double& e : z) e /= s;
    return s;
  };
  normalize(x);
  // y = M x with M = D^-1/2 A_B W A_B^T D^-1/2: t = A_B^T D^-1/2 x (length n_cols, touched entries only), then
  // y_p = inv_norm_p sum_k w_k A_pk t_k; t is cleared on the way back.
  auto apply = [&](const std::vector<double>& in, std::vector<double>& out) {
    for (std::size_t p = 0; p < b; ++p) {
      if (inv_norm[p] == 0) continue;
      const index_t i = block[p];
      const double s = in[p] * inv_norm[p];
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) t[A.indices[k]] += s * A.values[k];
    }
    for (std::size_t p = 0; p < b; ++p) {
      out[p] = 0;
      if (inv_norm[p] == 0) continue;
      const index_t i = block[p];
      double s = 0;
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) {
        const index_t q = A.indices[k];
        s += (row_weights ? row_weights[q] : 1.0) * A.values[k] * t[q];
      }
      out[p] = s * inv_norm[p];
    }
    for (std::size_t p = 0; p < b; ++p) {
      const index_t i = block[p];
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) t[A.indices[k]] = 0;
    }
  };
  double rayleigh = 1.0;
  for (int it = 0; it < std::max(1, iterations); ++it) {
    apply(x, y);
    double xy = 0;
    for (std::size_t p = 0; p < b; ++p) xy += x[p] * y[p];
    rayleigh = std::max(rayleigh, xy);  // x has unit norm: x.Mx <= lambda_max
    x.swap(y);
    if (normalize(x) == 0) break;
  }
  return rayleigh;
}

Schedule plan(const CsrMatrix& A, std::span<const index_t> ws, const double* row_weights, const ScheduleOptions& o) {
  Schedule s;
  const std::int64_t m = static_cast<std::int64_t>(ws.size());
  const std::int64_t wmax = std::max<std::int64_t>(1, std::min<std::int64_t>(std::max<std::int64_t>(o.concurrency, 1), m));
  if (!o.safeguard) {
    s.wave = wmax;
    s.sigma = 1;
    return s;
  }
  std::vector<std::int64_t> sizes;
  for (std::int64_t w = 1; w < wmax; w *= 2) sizes.push_back(w);
  sizes.push_back(wmax);
  std::vector<index_t> perm(ws.begin(), ws.end());
  SplitMix64 rng(o.seed ^ static_cast<std::uint64_t>(m));
  std::vector<double> scratch(static_cast<std::size_t>(std::max<index_t>(A.n_cols, 1)), 0.0);
  double best = 0;
  for (std::int64_t w : sizes) {
    double lam = 1.0;
    if (w > 1) {
      for (int smp = 0; smp < std::max(1, o.samples); ++smp) {
        // A random block of w working-set coordinates: the first w of a partial Fisher-Yates shuffle, i.e. what a
        // wave of a random epoch order holds.
        for (std::int64_t k = 0; k < w; ++k) {
          const auto j = static_cast<std::size_t>(k + static_cast<std::int64_t>(rng.below(std::uint64_t(m - k))));
          std::swap(perm[static_cast<std::size_t>(k)], perm[j]);
        }
        lam = std::max(lam, normalized_gram_bound(A, std::span<const index_t>(perm.data(), std::size_t(w)),
                                                  row_weights, o.iterations, rng.next(), scratch));
      }
    }
    const double sigma = std::clamp(o.margin * lam, 1.0, double(w));
    s.ladder.push_back({w, w > 1 ? sigma : 1.0});
    best = std::max(best, double(w) / s.ladder.back().sigma);
  }
  for (const WaveSigma& r : s.ladder) {
    if (double(r.wave) / r.sigma >= o.efficiency * best) {
      s.wave = r.wave;
      s.sigma = r.sigma;
      break;
    }
  }
  return s;
}

}  // namespace hetglm::tpa
