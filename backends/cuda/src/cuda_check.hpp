// SPDX-License-Identifier: Apache-2.0
// HETGLM_CUDA_CHECK(call): every CUDA runtime call and every kernel launch (its launcher returns
// cudaGetLastError()) goes through it; a failure becomes DeviceError naming the call, the call site and CUDA's
// error name and text, e.g. "CUDA call cudaMalloc(&p, bytes) failed at cuda_backend.cpp:120: cudaErrorMemoryAllocation
// (out of memory)".
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "hetglm/backend.hpp"

namespace hetglm::cuda::detail {

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

inline void check(int status, const char* call, const char* file, int line) {
  const auto e = static_cast<cudaError_t>(status);
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so the next call does not report it again
  std::string f(file);
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  throw DeviceError("CUDA call " + std::string(call) + " failed at " + f + ":" + std::to_string(line) + ": " +
                    cuda_error_text(e));
}

}  // namespace hetglm::cuda::detail

#define HETGLM_CUDA_CHECK(call) ::hetglm::cuda::detail::check(static_cast<int>(call), #call, __FILE__, __LINE__)
