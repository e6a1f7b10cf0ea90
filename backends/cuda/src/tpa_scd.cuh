// SPDX-License-Identifier: Apache-2.0
// TPA-SCD kernels (docs/algorithms.md, "TPA-SCD: one thread block per coordinate"; Parnell et al., "Tera-scale
// coordinate descent on GPUs", FGCS 2018): one thread block per coordinate; the block's threads stride over the
// coordinate's nonzeros (CSR row of the coordinate matrix: dual rows = samples of X, primal rows = features, i.e.
// rows of X^T), reduce the inner product with warp shuffles and shared memory, ONE thread computes the step with
// glm_math.h's coordinate kernel (hetglm_coordinate_step_f from the inner product of hetglm_shared_factor_f; the
// same code the CPU runs, HETGLM_FN = static __host__ __device__ inline), and all threads apply the axpy to v in
// global memory with atomicAdd. No loss or penalty formula lives here; the gap is hetglm_coordinate_gap_d.
// Across coordinates the blocks follow the wave schedule of hetglm/tpa_schedule.hpp (tpa_scd_waves: every
// coordinate of a wave reads the same v, then all write), the schedule the cpu stand-in emulates on the host; the
// sequential kernel (one block, the permutation in order) is the exact reference epoch.
#pragma once
#include <cooperative_groups.h>
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

/// The raw inner product r of position `pos`'s column with v (glm_math.h hetglm_shared_factor), by the whole block;
/// every thread gets it.
__device__ inline float block_inner(const KernelArgs& a, int pos, float* scratch) {
  const std::int64_t off = a.col_off[pos];
  const int len = a.col_len[pos];
  const std::int32_t* idx = a.idx + off;
  const float* val = a.val + off;
  float part = 0.0f;
  if (a.obj.formulation == HETGLM_FORM_DUAL) {
    for (int k = threadIdx.x; k < len; k += blockDim.x) part += val[k] * load_v(a.v, idx[k]);
  } else {
    for (int k = threadIdx.x; k < len; k += blockDim.x) {
      const std::int32_t r = idx[k];
      part += val[k] * hetglm_shared_factor_f(a.obj, load_v(a.v, r), a.row_labels[r], a.row_weights[r]);
    }
  }
  return block_sum(part, scratch);
}

/// Thread 0: the coordinate kernel of glm_math.h at position `pos` from r (curvature x a.sigma); stores the new
/// alpha and returns its change.
__device__ inline float coordinate_change(const KernelArgs& a, int pos, float r) {
  const int i = a.col_coord[pos];
  const float al = __ldcg(a.alpha + pos);  // L2: another multiprocessor may have written it in this launch
  // labels / weights are per coordinate (dual y_i, c_i; unused by the primal step).
  const float an = hetglm_coordinate_step_f(a.obj, al, r, a.curvature[i], a.labels[i], a.weights[i], a.sigma);
  if (!isfinite(an)) atomicExch(a.nonfinite, 1);
  const float d = an - al;
  if (d != 0.0f) a.alpha[pos] = an;
  return d;
}

/// v += sd x column of position `pos`, by the whole block (atomicAdd: other blocks update v concurrently).
__device__ inline void block_axpy(const KernelArgs& a, int pos, float sd) {
  if (sd == 0.0f) return;
  const std::int64_t off = a.col_off[pos];
  const int len = a.col_len[pos];
  for (int k = threadIdx.x; k < len; k += blockDim.x) atomicAdd(a.v + a.idx[off + k], sd * a.val[off + k]);
}

/// One coordinate step by the whole block at working-set position `pos` (the sequential kernel).
__device__ inline void block_step(const KernelArgs& a, int pos, float* scratch, float* delta_sh) {
  const float s = block_inner(a, pos, scratch);
  if (threadIdx.x == 0) *delta_sh = a.sigma_v * coordinate_change(a, pos, s);
  __syncthreads();
  block_axpy(a, pos, *delta_sh);
  __syncthreads();  // the next step of this block (sequential kernel) reads v and reuses delta_sh
}

/// Read phase of the wave [first, end) of `order`: block b takes positions first + b, first + b + gridDim.x, ...;
/// each reads v (not yet changed by this wave) and stores its change of alpha in wave_delta[t - first].
__device__ inline void wave_read(const KernelArgs& a, const std::int32_t* order, int first, int end, float* scratch) {
  for (int t = first + static_cast<int>(blockIdx.x); t < end; t += static_cast<int>(gridDim.x)) {
    const int pos = order[t];
    const float s = block_inner(a, pos, scratch);
    if (threadIdx.x == 0) a.wave_delta[t - first] = coordinate_change(a, pos, s);
  }
}

/// Write phase of the wave [first, end): v += sigma_v x delta x column for every position of the wave.
__device__ inline void wave_write(const KernelArgs& a, const std::int32_t* order, int first, int end) {
  for (int t = first + static_cast<int>(blockIdx.x); t < end; t += static_cast<int>(gridDim.x))
    block_axpy(a, order[t], a.sigma_v * __ldcg(a.wave_delta + (t - first)));  // written before the barrier
}

/// The wave schedule in one persistent cooperative launch: read phase, grid barrier, write phase, grid barrier, per
/// wave. The barrier orders every block's reads of v before any write of the wave, and the writes before the next
/// wave's reads (it is also a memory fence for wave_delta and v).
__global__ void tpa_scd_waves(KernelArgs a, const std::int32_t* order, int count, int wave) {
  __shared__ float scratch[32];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int first = 0; first < count; first += wave) {
    const int end = first + wave < count ? first + wave : count;
    wave_read(a, order, first, end, scratch);
    grid.sync();
    wave_write(a, order, first, end);
    grid.sync();
  }
}

/// The same phases as separate launches (two per wave; the stream orders them): devices without cooperative launch.
__global__ void tpa_wave_read(KernelArgs a, const std::int32_t* order, int first, int end) {
  __shared__ float scratch[32];
  wave_read(a, order, first, end, scratch);
}
__global__ void tpa_wave_write(KernelArgs a, const std::int32_t* order, int first, int end) {
  wave_write(a, order, first, end);
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
