// SPDX-License-Identifier: Apache-2.0
// Launchers of the TPA-SCD kernels (tpa_scd.cuh). Each returns the launch's status for HETGLM_CUDA_CHECK.
#include "tpa_scd.cuh"

namespace hetglm::cuda::detail {

namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int clamp_threads(int t) { return t < 32 ? 32 : (t > kMaxThreads ? kMaxThreads : (t + 31) / 32 * 32); }
}  // namespace

int launch_epoch_waves(const KernelArgs& a, const std::int32_t* order, int count, int wave, int threads, int grid,
                       bool cooperative, void* stream) {
  if (count <= 0) return static_cast<int>(cudaSuccess);
  if (wave < 1) wave = 1;
  if (grid < 1) grid = 1;
  if (grid > wave) grid = wave;
  const int t = clamp_threads(threads);
  if (cooperative) {
    KernelArgs args = a;
    const std::int32_t* ord = order;
    void* params[] = {&args, &ord, &count, &wave};
    return static_cast<int>(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&tpa_scd_waves), dim3(grid),
                                                        dim3(t), params, 0, as_stream(stream)));
  }
  for (int first = 0; first < count; first += wave) {
    const int end = first + wave < count ? first + wave : count;
    const int g = end - first < grid ? end - first : grid;
    tpa_wave_read<<<g, t, 0, as_stream(stream)>>>(a, order, first, end);
    tpa_wave_write<<<g, t, 0, as_stream(stream)>>>(a, order, first, end);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return static_cast<int>(cudaSuccess);
}

int wave_capacity(int threads, int* blocks, bool* cooperative) {
  int dev = 0, sms = 0, coop = 0, per_sm = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tpa_scd_waves, clamp_threads(threads), 0);
  *blocks = per_sm * sms > 0 ? per_sm * sms : 1;
  *cooperative = coop != 0 && per_sm > 0;
  return static_cast<int>(e);
}

int time_device_copy(std::size_t bytes, int reps, double* seconds) {
  void *src = nullptr, *dst = nullptr;
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  cudaError_t e = cudaMalloc(&src, bytes);
  if (e == cudaSuccess) e = cudaMalloc(&dst, bytes);
  if (e == cudaSuccess) e = cudaMemset(src, 1, bytes);  // not zeros
  if (e == cudaSuccess) e = cudaEventCreate(&t0);
  if (e == cudaSuccess) e = cudaEventCreate(&t1);
  if (e == cudaSuccess) e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);  // warm-up
  if (e == cudaSuccess) e = cudaEventRecord(t0);
  for (int r = 0; r < reps && e == cudaSuccess; ++r) e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice);
  if (e == cudaSuccess) e = cudaEventRecord(t1);
  if (e == cudaSuccess) e = cudaEventSynchronize(t1);
  float ms = 0;
  if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, t0, t1);
  *seconds = e == cudaSuccess ? double(ms) * 1e-3 / double(reps > 0 ? reps : 1) : 0.0;
  if (t0) (void)cudaEventDestroy(t0);
  if (t1) (void)cudaEventDestroy(t1);
  if (src) (void)cudaFree(src);
  if (dst) (void)cudaFree(dst);
  return static_cast<int>(e);
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
