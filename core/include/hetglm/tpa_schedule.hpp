// SPDX-License-Identifier: Apache-2.0
// The TPA-SCD wave schedule: the one place that decides how many coordinates a parallel device (the CUDA kernel,
// and its host emulation in the cpu stand-in) updates from the same shared vector, and with which CoCoA+ sigma'.
// docs/cuda.md, "The wave schedule"; docs/algorithms.md, "TPA-SCD".
//
// Why: TPA-SCD (Parnell et al., "Tera-scale coordinate descent on GPUs", FGCS 2018) runs one thread block per
// coordinate; an H200 holds about 4,224 resident blocks of 32 threads, so thousands of coordinates read v before
// any of them writes. With sigma' = 1 that is CoCoA+ adding S parts without the safe sigma' (Ma et al., ICML 2015):
// on low-dimensional data (a9a: 123 features, w7a: 300) the updates of correlated coordinates overshoot and the
// solver stalls (a host model at S = 32 on a9a already does not converge).
//
// The schedule: an epoch's order is cut into WAVES of `wave` consecutive positions; every coordinate of a wave
// reads the same v (the value after the previous wave), computes its step with the curvature scaled by
// sigma'_wave (times the caller's sigma', e.g. DuHL's 2 in the solve role), and only then do all of them add
// their (unscaled by sigma'_wave) updates to v. This is CoCoA+ with one part per coordinate of the wave, gamma = 1,
// and it is safe when
//     sigma'_wave >= max_delta ||sum_{i in wave} delta_i a_i||_c^2 / sum_i delta_i^2 ||a_i||_c^2
//                 = lambda_max(D^-1/2 G D^-1/2),   G = the wave's Gram matrix in the c-weighted norm, D = diag(G),
// which is at most `wave` (Cauchy-Schwarz). plan() estimates it by power iteration on random blocks of the working
// set for wave sizes 1, 2, 4, ..., min(concurrency, size); each block's Rayleigh quotient is a lower bound of its
// lambda_max, so the estimate is multiplied by `margin` and clamped to [1, wave]. A wave of W coordinates at sigma'
// does about the work of W / sigma' sequential steps (its "effective parallelism"); plan() takes the smallest W
// whose effective parallelism is within `efficiency` of the best, so high-dimensional sparse data (nearly orthogonal
// columns: sigma' near 1) runs waves as wide as the device, and low-dimensional data runs narrow waves.
// Without the safeguard (tests, and the kernel as first written) the wave is the whole concurrency at sigma' 1.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hetglm/matrix.hpp"

namespace hetglm::tpa {

struct ScheduleOptions {
  /// Coordinates the device can have in flight at once (the CUDA kernel: resident blocks); >= 1.
  std::int64_t concurrency = 4096;
  /// false: one wave of min(concurrency, size) at sigma' 1 (the unsafe schedule; the stall tests).
  bool safeguard = true;
  int samples = 2;          ///< random blocks per wave size; the largest estimate counts
  int iterations = 20;      ///< power iterations per block
  double margin = 1.2;      ///< safety factor on the estimated lambda_max
  double efficiency = 0.9;  ///< smallest wave whose W / sigma' is within this share of the best
  std::uint64_t seed = 0x7a5c5cedull;
};

/// One rung of the ladder: wave size and its sigma'.
struct WaveSigma {
  std::int64_t wave = 1;
  double sigma = 1;
};

struct Schedule {
  std::int64_t wave = 1;  ///< coordinates per wave (>= 1)
  double sigma = 1;       ///< sigma' of a wave: scales the curvature (times the caller's sigma'); in [1, wave]
  std::vector<WaveSigma> ladder;  ///< every wave size estimated (empty without the safeguard)
  std::string describe() const;   ///< "waves of W, sigma' S"
};

/// lambda_max of D^-1/2 G D^-1/2 for the rows `block` of A, G_ij = sum_k w_k A_ik A_jk (w = row_weights over the
/// columns of A, null = 1), by `iterations` power iterations from a positive start; returns the Rayleigh quotient
/// (a lower bound, >= 1 when the block has a nonzero row; empty rows count as absent). `scratch` has A.n_cols
/// zeros on entry and on return.
double normalized_gram_bound(const CsrMatrix& A, std::span<const index_t> block, const double* row_weights,
                             int iterations, std::uint64_t seed, std::vector<double>& scratch);

/// The schedule for the working set `ws` (rows of A) on a device of `o.concurrency`.
Schedule plan(const CsrMatrix& A, std::span<const index_t> ws, const double* row_weights, const ScheduleOptions& o);

}  // namespace hetglm::tpa
