// SPDX-License-Identifier: Apache-2.0
// Host-side interface of the TPA-SCD kernels (tpa_scd.cuh, compiled by nvcc in tpa_scd.cu). Plain C++17 with no
// CUDA headers, so cuda_backend.cpp (g++, C++20) can call it. Every launcher returns the cudaError_t of the launch
// (cudaGetLastError() right after it, as an int) for HETGLM_CUDA_CHECK at the call site.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hetglm/glm_math.h"

namespace hetglm::cuda::detail {

/// Everything one coordinate step needs; passed to the kernels by value. Device pointers.
struct KernelArgs {
  /// The coordinate kernel's scalars (glm_math.h): float32 for the steps (the device arithmetic), double for the
  /// certificate terms.
  hetglm_objective_f obj{};
  hetglm_objective_d obj_d{};
  float sigma = 1;    ///< sigma' of the curvature: DuHL's sigma' x the wave schedule's (tpa_schedule.hpp)
  float sigma_v = 1;  ///< sigma' of the update of v: DuHL's sigma' (the waves add their updates unscaled)
  // Working set, by position p: the column's range in the arena, its coordinate id, alpha.
  const std::int64_t* col_off = nullptr;
  const std::int32_t* col_len = nullptr;
  const std::int32_t* col_coord = nullptr;
  float* alpha = nullptr;
  // Arena of resident nonzeros (CSR rows of the coordinate matrix: dual X, primal X^T).
  const std::int32_t* idx = nullptr;
  const float* val = nullptr;
  // Shared vector (size dim) and per-coordinate / per-entry data.
  float* v = nullptr;
  const float* labels = nullptr;      ///< per coordinate (dual y_i)
  const float* weights = nullptr;     ///< per coordinate (dual c_i)
  const float* curvature = nullptr;   ///< per coordinate (q_i or H_j)
  const float* row_labels = nullptr;  ///< per entry of v (primal y_k)
  const float* row_weights = nullptr; ///< per entry of v (primal c_k)
  int* nonfinite = nullptr;           ///< set to 1 when a step gives NaN/inf
  float* wave_delta = nullptr;        ///< the wave kernels' alpha changes, one per position of the current wave
};

/// The same block code run by ONE block over order[0..count) in sequence: the exact sequential epoch
/// (deterministic up to the float reduction order), used by the conformance tests.
int launch_epoch_sequential(const KernelArgs& a, const std::int32_t* order, int count, int threads, void* stream);
/// The TPA-SCD wave schedule (hetglm/tpa_schedule.hpp): order[0..count) in waves of `wave` positions; every
/// position of a wave reads the same v (the read phase computes all the wave's steps into wave_delta), then all of
/// them add sigma_v x delta x column to v (the write phase, atomicAdd). `grid` blocks stride over a wave's
/// positions. cooperative: one persistent launch whose phases are separated by grid-wide barriers (grid must not
/// exceed wave_capacity); else two launches per wave on `stream`.
int launch_epoch_waves(const KernelArgs& a, const std::int32_t* order, int count, int wave, int threads, int grid,
                       bool cooperative, void* stream);
/// Blocks of `threads` threads of the persistent wave kernel that can be resident at once on the current device
/// (occupancy x multiprocessors), and whether the device supports cooperative launches.
int wave_capacity(int threads, int* blocks, bool* cooperative);
/// Device-to-device copy of `bytes` bytes, timed with events over `reps` copies after one warm-up: seconds per
/// copy in *seconds (the bandwidth reference of bench/device/gpu_bench.cpp).
int time_device_copy(std::size_t bytes, int reps, double* seconds);
/// Gaps of positions 0..count): gaps[p] in double (scaled so they sum to the total gap), and their sum added to
/// *gap_sum (double atomics).
int launch_gaps(const KernelArgs& a, int count, int threads, double* gaps, double* gap_sum, void* stream);

}  // namespace hetglm::cuda::detail
