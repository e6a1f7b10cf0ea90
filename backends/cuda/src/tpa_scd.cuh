// SPDX-License-Identifier: Apache-2.0
// TPA-SCD kernels (algorithms.md 3a-3c; Parnell et al., "Tera-scale coordinate descent on GPUs", FGCS 2018):
// one thread block per coordinate; the block's threads stride over the coordinate's nonzeros (CSR row of the
// coordinate matrix: dual rows = samples of X, primal rows = features, i.e. rows of X^T), reduce the inner product
// with warp shuffles and shared memory, ONE thread computes the step with glm_math.h (hetglm_dual_step_f /
// hetglm_penalty_step_f: the same code the CPU runs, HETGLM_FN = static __host__ __device__ inline), and all threads
// apply the axpy to v in global memory with atomicAdd. No loss or penalty formula lives here: every scalar of the
// model comes from glm_math.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "hetglm/glm_math.h"
#include "tpa_scd.hpp"

#define HETGLM_FORM_DUAL_ 0  // == HETGLM_FORM_DUAL of backend.hpp (not includable here: C++20)

namespace hetglm::cuda::detail {

constexpr int kMaxThreads = 1024;

/// Sum over the block (blockDim.x a multiple of 32): warp shuffles, then one value per warp in shared memory.
/// Every thread gets the result. `scratch` holds at least 32 values.
template <class T>
__device__ inline T block_sum(T x, T* scratch) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  __syncthreads();  // scratch may still be read by the previous call
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  if (warp == 0) {
    x = lane < nwarps ? scratch[lane] : T(0);
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if (lane == 0) scratch[0] = x;
  }
  __syncthreads();
  return scratch[0];
}

/// v is written by other blocks' atomics during the launch: read it from L2 (ld.global.cg), never a stale L1 line.
__device__ inline float load_v(const float* v, std::int32_t r) { return __ldcg(v + r); }

/// One coordinate step by the whole block at working-set position `pos`.
__device__ inline void block_step(const KernelArgs& a, int pos, float* scratch, float* delta_sh) {
  const std::int64_t off = a.col_off[pos];
  const int len = a.col_len[pos];
  const std::int32_t* idx = a.idx + off;
  const float* val = a.val + off;
  const bool dual = a.formulation == HETGLM_FORM_DUAL_;
  float part = 0.0f;
  if (dual) {
    for (int k = threadIdx.x; k < len; k += blockDim.x) part += val[k] * load_v(a.v, idx[k]);
  } else {
    for (int k = threadIdx.x; k < len; k += blockDim.x) {
      const std::int32_t r = idx[k];
      part += val[k] * hetglm_loss_derivative_f(a.loss, a.row_labels[r], load_v(a.v, r), a.row_weights[r]);
    }
  }
  const float s = block_sum(part, scratch);
  if (threadIdx.x == 0) {
    const int i = a.col_coord[pos];
    const float al = a.alpha[pos];
    float an;
    if (dual)
      an = hetglm_dual_step_f(a.loss, a.labels[i], al, s * a.inv_ln, a.sigma * a.curvature[i], a.weights[i]);
    else
      an = hetglm_penalty_step_f(a.penalty, al, s * a.inv_n, a.sigma * a.curvature[i], a.lambda, a.eta, a.bound);
    if (!isfinite(an)) atomicExch(a.nonfinite, 1);
    const float d = an - al;
    if (d != 0.0f) a.alpha[pos] = an;
    *delta_sh = a.sigma * d;
  }
  __syncthreads();
  const float sd = *delta_sh;
  if (sd != 0.0f)
    for (int k = threadIdx.x; k < len; k += blockDim.x) atomicAdd(a.v + idx[k], sd * val[k]);
  __syncthreads();  // the next step of this block (sequential kernel) reads v and reuses delta_sh
}

__global__ void tpa_scd_async(KernelArgs a, const std::int32_t* order) {
  __shared__ float scratch[32];
  __shared__ float delta_sh;
  block_step(a, order[blockIdx.x], scratch, &delta_sh);
}

__global__ void tpa_scd_sequential(KernelArgs a, const std::int32_t* order, int count) {
  __shared__ float scratch[32];
  __shared__ float delta_sh;
  for (int t = 0; t < count; ++t) block_step(a, order[t], scratch, &delta_sh);
}

/// Certificate terms of the resident coordinates in double (glm_math.h _d functions): one block per position.
__global__ void coordinate_gaps(KernelArgs a, double* gaps, double* gap_sum) {
  __shared__ double scratch[32];
  const int pos = blockIdx.x;
  const std::int64_t off = a.col_off[pos];
  const int len = a.col_len[pos];
  const bool dual = a.formulation == HETGLM_FORM_DUAL_;
  double part = 0.0;
  for (int k = threadIdx.x; k < len; k += blockDim.x) {
    const std::int32_t r = a.idx[off + k];
    const double x = a.val[off + k], vr = a.v[r];
    part += dual ? x * vr : x * hetglm_loss_derivative_d(a.loss, a.row_labels[r], vr, a.row_weights[r]);
  }
  const double s = block_sum(part, scratch);
  if (threadIdx.x == 0) {
    const int i = a.col_coord[pos];
    const double al = a.alpha[pos];
    const double g = dual ? hetglm_dual_gap_d(a.loss, a.labels[i], al, s * a.inv_ln_d, a.weights[i]) * a.inv_n_d
                          : hetglm_primal_gap_d(a.penalty, al, s * a.inv_n_d, a.lambda_d, a.eta_d, a.bound_d);
    gaps[pos] = g;
    atomicAdd(gap_sum, g);
  }
}

}  // namespace hetglm::cuda::detail
