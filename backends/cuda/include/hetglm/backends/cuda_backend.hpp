// SPDX-License-Identifier: Apache-2.0
// The CUDA backend (HETGLM_ENABLE_CUDA): TPA-SCD epochs on a GPU behind the Backend interface (backend.hpp).
// Pure C++: no CUDA header is needed to use it. docs/cuda.md describes the design.
//   - data, alpha and v in float32 on the device; gaps in double (glm_math.h _d functions in a kernel);
//   - working-set swaps: only columns that are not resident travel, from pinned host memory on a copy stream,
//     overlapped with the first epoch on the already-resident columns (async mode);
//   - memory budget: BackendOptions::memory_budget (--accel-memory) if given, else 80% of cudaMemGetInfo's free
//     memory at construction (CudaOptions::budget_fraction), and never more than that.
#pragma once
#include <memory>
#include <string>

#include "hetglm/backend.hpp"
#include "hetglm/backend_options.hpp"

namespace hetglm::cuda {

struct CudaOptions {
  /// false (default): TPA-SCD, one block per coordinate in the waves of the wave schedule (tpa_schedule.hpp).
  /// true: the same block code run by one block over the permutation in order = the exact sequential epoch
  /// (conformance tests).
  bool sequential = false;
  /// Threads per block; 0 = from the working set's mean nonzeros per column (32..512).
  int threads_per_block = 0;
  /// Fraction of the free device memory used as the default budget.
  double budget_fraction = 0.8;
  /// CUDA device ordinal.
  int device = 0;
  /// The wave schedule (hetglm/tpa_schedule.hpp): coordinates in flight (0 = the resident blocks of the wave
  /// kernel) and the safeguard (false: one wave of the whole concurrency at sigma' 1, the unsafe schedule).
  long tpa_concurrency = 0;
  bool tpa_safeguard = true;
  /// How the waves run: auto (one persistent cooperative launch when the device supports it, else two launches per
  /// wave), or either one forced (tests).
  enum class WaveMode { automatic, cooperative, launches };
  WaveMode wave_mode = WaveMode::automatic;
};

/// Seconds per device-to-device copy of `bytes` bytes on device `device` (median-free mean of `reps` event-timed
/// copies after a warm-up): the bandwidth reference of the GPU benchmark. Throws DeviceError.
double time_device_copy(std::size_t bytes, int reps, int device = 0);

/// Whether a GPU can be used; never throws. count 0 with the reason when cudaGetDeviceCount fails (no driver,
/// insufficient driver: error 35) or finds none.
struct DeviceProbe {
  int count = 0;
  std::string reason;  ///< e.g. "cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver version is ...)"
};
DeviceProbe probe();

/// Throws UnsupportedDevice "device 'cuda': no CUDA device is present (<reason>)" without a GPU, DeviceError
/// when a CUDA call fails.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options, const CudaOptions& cuda = {});

}  // namespace hetglm::cuda
