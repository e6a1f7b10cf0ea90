// SPDX-License-Identifier: Apache-2.0
// TPA-SCD kernels (docs/algorithms.md, "TPA-SCD: one thread block per coordinate"; Parnell et al., "Tera-scale coordinate descent on GPUs", FGCS 2018):
// one thread block per coordinate; the block's threads stride over the coordinate's nonzeros (CSR row of the
// coordinate matrix: dual rows = samples of X, primal rows = features, i.e. rows of X^T), reduce the inner product
// with warp shuffles and shared memory, ONE thread computes the step with glm_math.h (hetglm_dual_step_f /
// hetglm_penalty_step_f: the same code the CPU runs, HETGLM_FN = static __host__ __device__ inline), and all threads
// apply the axpy to v in global memory with atomicAdd. No loss or penalty formula lives here: the step is glm_math.h's
// coordinate kernel (hetglm_coordinate_step_f, from the inner product of hetglm_shared_factor_f), the gap its
// hetglm_coordinate_gap_d.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "hetglm/glm_math.h"
#include "tpa_scd.hpp"

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
  const bool dual = a.obj.formulation == HETGLM_FORM_DUAL;
  float part = 0.0f;
  if (dual) {
    for (int k = threadIdx.x; k < len; k += blockDim.x) part += val[k] * load_v(a.v, idx[k]);
  } else {
    for (int k = threadIdx.x; k < len; k += blockDim.x) {
      const std::int32_t r = idx[k];
      part += val[k] * hetglm_shared_factor_f(a.obj, load_v(a.v, r), a.row_labels[r], a.row_weights[r]);
    }
  }
  const float s = block_sum(part, scratch);
  if (threadIdx.x == 0) {
    const int i = a.col_coord[pos];
    const float al = a.alpha[pos];
    // labels / weights are per coordinate (dual y_i, c_i; unused by the primal step).
    const float an = hetglm_coordinate_step_f(a.obj, al, s, a.curvature[i], a.labels[i], a.weights[i], a.sigma);
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

/// Gaps of the resident coordinates in double (glm_math.h hetglm_coordinate_gap_d): one block per position.
__global__ void coordinate_gaps(KernelArgs a, double* gaps, double* gap_sum) {
  __shared__ double scratch[32];
  const int pos = blockIdx.x;
  const std::int64_t off = a.col_off[pos];
  const int len = a.col_len[pos];
  double part = 0.0;
  for (int k = threadIdx.x; k < len; k += blockDim.x) {
    const std::int32_t r = a.idx[off + k];
    const double x = a.val[off + k];
    part += x * (a.obj_d.formulation == HETGLM_FORM_DUAL
                     ? double(a.v[r])
                     : hetglm_shared_factor_d(a.obj_d, a.v[r], a.row_labels[r], a.row_weights[r]));
  }
  const double s = block_sum(part, scratch);
  if (threadIdx.x == 0) {
    const int i = a.col_coord[pos];
    const double g = hetglm_coordinate_gap_d(a.obj_d, a.alpha[pos], s, a.labels[i], a.weights[i]);
    gaps[pos] = g;
    atomicAdd(gap_sum, g);
  }
}

}  // namespace hetglm::cuda::detail
