// SPDX-License-Identifier: Apache-2.0
// Launchers of the TPA-SCD kernels (tpa_scd.cuh). Each returns the launch's status for HETGLM_CUDA_CHECK.
#include "tpa_scd.cuh"

namespace hetglm::cuda::detail {

namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int clamp_threads(int t) { return t < 32 ? 32 : (t > kMaxThreads ? kMaxThreads : (t + 31) / 32 * 32); }
}  // namespace

int launch_epoch_async(const KernelArgs& a, const std::int32_t* order, int count, int threads, void* stream) {
  if (count <= 0) return static_cast<int>(cudaSuccess);
  tpa_scd_async<<<count, clamp_threads(threads), 0, as_stream(stream)>>>(a, order);
  return static_cast<int>(cudaGetLastError());
}

int launch_epoch_sequential(const KernelArgs& a, const std::int32_t* order, int count, int threads, void* stream) {
  if (count <= 0) return static_cast<int>(cudaSuccess);
  tpa_scd_sequential<<<1, clamp_threads(threads), 0, as_stream(stream)>>>(a, order, count);
  return static_cast<int>(cudaGetLastError());
}

int launch_gaps(const KernelArgs& a, int count, int threads, double* gaps, double* gap_sum, void* stream) {
  if (count <= 0) return static_cast<int>(cudaSuccess);
  coordinate_gaps<<<count, clamp_threads(threads), 0, as_stream(stream)>>>(a, gaps, gap_sum);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace hetglm::cuda::detail
