// SPDX-License-Identifier: Apache-2.0
// Backend factory: device strings (conventions.md "Devices"), what is compiled in and present, and budgets.
//   cpu      the CPU stand-in accelerator (backends/cpu): configurable budget and emulated link
//   opencl   the OpenCL backend on any OpenCL device (PoCL's CPU device in CI); HETGLM_ENABLE_OPENCL
//   cuda     the CUDA backend; HETGLM_ENABLE_CUDA
//   fpga     XRT native API with an xclbin; HETGLM_ENABLE_XRT
//   fpga-sim the HLS kernel compiled as C++ in process
//   auto     cuda, then fpga, then opencl on a non-CPU OpenCL device, then cpu (PoCL's CPU device is never
//            chosen by auto)
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hetglm/backend.hpp"

namespace hetglm {

struct BackendOptions {
  /// Bytes for resident coordinates (column_bytes each). 0 = the device's own limit (cpu: unlimited;
  /// opencl: 3/4 of CL_DEVICE_GLOBAL_MEM_SIZE and at most CL_DEVICE_MAX_MEM_ALLOC_SIZE of nonzeros).
  std::size_t memory_budget = 0;
  /// cpu stand-in only: emulated host<->device link in GB/s (10^9 bytes/s); 0 = no link cost. Every copy
  /// (columns, alpha, v, both directions) is charged bytes / bandwidth of wall time by sleeping.
  double link_bandwidth_gbps = 0;
  /// cpu stand-in only: "double" (default) or "float" storage and arithmetic.
  std::string cpu_precision = "double";
  /// opencl: platform and device index (-1 = the first device; auto uses the first non-CPU device).
  int opencl_platform = -1;
  int opencl_device = -1;
  /// opencl: extra clBuildProgram options (appended; the environment variable HETGLM_OPENCL_OPTIONS is
  /// appended too). Used by tests to provoke a build failure.
  std::string opencl_build_options;
  /// fpga: the xclbin to program the card with (`--xclbin FILE`; the kernel built from hls/, docs/fpga.md).
  std::string xclbin;
};

/// Parse a device string. Throws InvalidArgument
/// "--device: unknown device 'X' (expected cpu, opencl, cuda, fpga, fpga-sim or auto)". "auto" is not a Device:
/// use resolve_device().
Device parse_device(const std::string& name);

/// Devices compiled into this build ("cpu" always).
std::vector<Device> compiled_devices();
/// Devices compiled in AND present now (cpu always; opencl when a platform with a device answers).
std::vector<Device> available_devices();

/// The device `name` stands for: parse_device(name), or for "auto" the conventions.md order among the available
/// devices. `why` (optional) receives a sentence saying what auto chose and why.
Device resolve_device(const std::string& name, std::string* why = nullptr);

/// Create a backend. `device` is a device string ("auto" allowed). Throws InvalidArgument for an unknown name,
/// UnsupportedDevice "device 'cuda' is not compiled in: reconfigure with -DHETGLM_ENABLE_CUDA=ON" or
/// "device 'opencl': no OpenCL device is present (...)", DeviceError for a failed device setup (e.g. the OpenCL
/// program does not build: the message carries the build log).
std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options = {});

/// Parse an accelerator memory size (conventions.md `--accel-memory`): a byte count with an optional decimal
/// suffix K M G (10^3, 10^6, 10^9) or binary Ki Mi Gi (2^10...), or a percentage of `total_bytes` ("25%").
/// Throws InvalidArgument "--accel-memory: cannot parse 'X' (expected bytes with an optional K M G Ki Mi Gi
/// suffix, or a percentage such as 25%)".
std::size_t parse_memory_size(const std::string& text, std::size_t total_bytes);

namespace detail {
// Factories of the compiled-in backends (defined in their own translation units).
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);
/// fpga (XRT device; needs options.xclbin) and fpga-sim (the HLS kernel as C++): fpga/src/fpga_backend.cpp.
std::unique_ptr<Backend> make_fpga_backend(Device kind, const BackendOptions& options);
/// FPGA boards XRT sees (0 without HETGLM_ENABLE_XRT or without a board): fpga/src/xrt_device.cpp.
unsigned fpga_board_count();
#if defined(HETGLM_WITH_OPENCL)
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options);
/// Number of OpenCL devices; `non_cpu` counts only those that are not CL_DEVICE_TYPE_CPU.
int opencl_device_count(bool non_cpu);
#endif
}  // namespace detail

}  // namespace hetglm
