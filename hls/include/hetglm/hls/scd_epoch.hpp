// SPDX-License-Identifier: Apache-2.0
// The FPGA kernel body: `epochs` passes of stochastic coordinate descent over the resident coordinates (the
// working set P of DuHL), in HLS-friendly C++14: no heap, no recursion, no STL, no exceptions; fixed maximum sizes
// are template parameters; every pragma goes through HETGLM_HLS (portable.hpp).
//
// Problem (backend.hpp; docs/algorithms.md, "The primal-dual form"):  min_alpha f(A alpha) + sum_i g_i(alpha_i),  v = A alpha.
//   For each position p in the visiting order (given by the host: epoch_order() of backend.hpp):
//     stream column i = P[p] from the memory ports (values and indices) into an on-chip buffer while reducing
//       r = sum_k x_k f_k, f_k = hetglm_shared_factor_f (dual v_k; primal phi_k'(v_k))
//     with kPartials interleaved partial sums (hides the float adder latency: the loop pipelines at II = 1),
//     summed in a fixed order at the end;
//     step: glm_math.h's coordinate kernel (the single copy of the math, float)
//       a' = hetglm_coordinate_step_f(objective, a, r, curvature_i, y_i, c_i, sigma')
//     axpy from the on-chip buffer: v += sigma' (a' - a) x_i  (indices distinct within a column: no dependence).
//   v and alpha stay on chip for the whole call (loaded at the start, written back at the end).
// ColumnML (Kara, Alonso, Zhang et al., "ColumnML: Column-Store Machine Learning with On-The-Fly Data
// Transformation", PVLDB 12(4), 2018; docs/algorithms.md, "ColumnML and the FPGA kernel") is the model: columns streamed, the model on
// chip.
// The host reference of exactly this algorithm (same order, same partial-sum order) is scd_epoch_host() in
// hls/tests/csim_scd_epoch.cpp.
#ifndef HETGLM_HLS_SCD_EPOCH_HPP
#define HETGLM_HLS_SCD_EPOCH_HPP

#include "hetglm/hls/kernel_abi.hpp"
#include "hetglm/glm_math.h"
#include "hetglm/hls/portable.hpp"

namespace hetglm {
namespace hls {

/// On-chip memories of one kernel call.
template <int kMaxDim, int kMaxCoords>
struct OnChip {
  float v[kMaxDim];        ///< the shared vector
  float alpha[kMaxCoords]; ///< alpha of the working set
  float col_val[kMaxDim];  ///< the current column (values)
  int col_idx[kMaxDim];    ///< the current column (indices)
};

/// Stream one column (len nonzeros from offset `begin` of the pool) into the on-chip buffer and reduce it against
/// v (dual) or the loss derivative at v (primal), with kPartials interleaved partial sums.
template <int kMaxDim, int kPartials>
float stream_and_reduce(const float* pool_val, const int* pool_idx, int begin, int len, const float* v,
                        const float* row, const hetglm_objective_f& obj, float* buf_val, int* buf_idx) {
  float part[kPartials];
  HETGLM_HLS(HLS ARRAY_PARTITION variable=part complete)
init_partials:
  for (int q = 0; q < kPartials; ++q) {
    HETGLM_HLS(HLS UNROLL)
    part[q] = 0.0f;
  }
stream_column:
  for (int k = 0; k < len; ++k) {
    HETGLM_HLS(HLS PIPELINE II=1)
    HETGLM_HLS(HLS DEPENDENCE variable=part inter distance=8 true)
    const float x = pool_val[begin + k];
    const int r = pool_idx[begin + k];
    buf_val[k] = x;
    buf_idx[k] = r;
    part[k % kPartials] += x * hetglm_shared_factor_f(obj, v[r], row[2 * r], row[2 * r + 1]);
  }
  float sum = 0.0f;
reduce_partials:
  for (int q = 0; q < kPartials; ++q) {
    HETGLM_HLS(HLS UNROLL)
    sum += part[q];
  }
  return sum;
}

/// The kernel body (see the file comment). Arguments as in kernel_abi.hpp; `m` holds the on-chip memories (the
/// top function owns them). Writes status[]; on a refused call (sizes over the maxima) changes nothing else.
template <int kMaxDim, int kMaxCoords, int kPartials>
void scd_epochs(const float* pool_val, const int* pool_idx, const int* col_ptr, const float* coord, float* alpha,
                float* v, const float* row, const int* order, int* status, int ws, int dim, int epochs,
                int formulation, int loss, int penalty, float scale, float sigma, float lambda, float eta,
                float bound, OnChip<kMaxDim, kMaxCoords>& m) {
  status[hls::abi::kStatusUpdates] = 0;
  status[hls::abi::kStatusNonFinite] = 0;
  status[hls::abi::kStatusError] = hls::abi::kErrNone;
  status[3] = 0;
  if (dim > kMaxDim) {
    status[hls::abi::kStatusError] = hls::abi::kErrDimTooLarge;
    return;
  }
  if (ws > kMaxCoords) {
    status[hls::abi::kStatusError] = hls::abi::kErrTooManyCoords;
    return;
  }
  if (ws < 0 || dim < 0 || epochs < 0) {
    status[hls::abi::kStatusError] = hls::abi::kErrBadArgument;
    return;
  }
load_v:
  for (int k = 0; k < dim; ++k) {
    HETGLM_HLS(HLS PIPELINE II=1)
    m.v[k] = v[k];
  }
load_alpha:
  for (int p = 0; p < ws; ++p) {
    HETGLM_HLS(HLS PIPELINE II=1)
    m.alpha[p] = alpha[p];
  }
  // The coordinate kernel's objective (glm_math.h). The ABI passes the step's scale (dual 1/(lambda n), primal 1/n);
  // inv_n only scales gaps, which this kernel does not compute.
  const hetglm_objective_f obj = hetglm_objective_make_f(formulation, loss, penalty, lambda, eta, bound, scale, scale);
  int updates = 0, nonfinite = 0;
epochs_loop:
  for (int e = 0; e < epochs; ++e) {
  coordinates:
    for (int t = 0; t < ws; ++t) {
      const int p = order[e * ws + t];
      const int begin = col_ptr[2 * p];
      const int len = col_ptr[2 * p + 1];
      const float y = coord[4 * p];
      const float c = coord[4 * p + 1];
      const float h = coord[4 * p + 2];
      const float r =
          stream_and_reduce<kMaxDim, kPartials>(pool_val, pool_idx, begin, len, m.v, row, obj, m.col_val, m.col_idx);
      const float a = m.alpha[p];
      const float an = hetglm_coordinate_step_f(obj, a, r, h, y, c, sigma);
      ++updates;
      if (!(an - an == 0.0f)) ++nonfinite;  // NaN or inf (no <cmath> classification needed)
      const float delta = an - a;
      if (delta == 0.0f) continue;
      m.alpha[p] = an;
      const float sd = sigma * delta;
    axpy:
      for (int k = 0; k < len; ++k) {
        HETGLM_HLS(HLS PIPELINE II=1)
        HETGLM_HLS(HLS DEPENDENCE variable=m.v inter false)
        m.v[m.col_idx[k]] += sd * m.col_val[k];
      }
    }
  }
store_v:
  for (int k = 0; k < dim; ++k) {
    HETGLM_HLS(HLS PIPELINE II=1)
    v[k] = m.v[k];
  }
store_alpha:
  for (int p = 0; p < ws; ++p) {
    HETGLM_HLS(HLS PIPELINE II=1)
    alpha[p] = m.alpha[p];
  }
  status[hls::abi::kStatusUpdates] = updates;
  status[hls::abi::kStatusNonFinite] = nonfinite;
}

}  // namespace hls
}  // namespace hetglm

#endif  // HETGLM_HLS_SCD_EPOCH_HPP
