// SPDX-License-Identifier: Apache-2.0
// Backend factory: device strings (docs/conventions.md, "Devices"), what is compiled in and present. The options
// (BackendOptions, the --accel-memory grammar) are core/include/hetglm/backend_options.hpp.
//   cpu      the CPU stand-in accelerator (backends/cpu): configurable budget and emulated link
//   opencl   the OpenCL backend on any OpenCL device (PoCL's CPU device in CI); HETGLM_ENABLE_OPENCL
//   cuda     the CUDA backend; HETGLM_ENABLE_CUDA
//   fpga     XRT native API with an xclbin; HETGLM_ENABLE_XRT
//   fpga-sim the HLS kernel compiled as C++ in process
//   auto     cuda, then opencl on a non-CPU OpenCL device, then cpu (PoCL's CPU device is never chosen by auto;
//            an FPGA needs its xclbin, so it is chosen with --device fpga --xclbin FILE)
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/backend_options.hpp"

namespace hetglm {

/// Parse a device string. Throws InvalidArgument
/// "--device: unknown device 'X' (expected cpu, opencl, cuda, fpga, fpga-sim or auto)". "auto" is not a Device:
/// use resolve_device().
Device parse_device(const std::string& name);

/// Devices compiled into this build ("cpu" always).
std::vector<Device> compiled_devices();
/// Devices compiled in AND present now (cpu always; opencl when a platform with a device answers).
std::vector<Device> available_devices();

/// The device `name` stands for: parse_device(name), or for "auto" the order of docs/conventions.md, "Devices", among the available
/// devices. `why` (optional) receives a sentence saying what auto chose and why.
Device resolve_device(const std::string& name, std::string* why = nullptr);

/// Create a backend. `device` is a device string ("auto" allowed). Throws InvalidArgument for an unknown name,
/// UnsupportedDevice "device 'cuda' is not compiled in: reconfigure with -DHETGLM_ENABLE_CUDA=ON" or
/// "device 'opencl': no OpenCL device is present (...)", DeviceError for a failed device setup (e.g. the OpenCL
/// program does not build: the message carries the build log).
std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options = {});

namespace detail {
// Factories of the compiled-in backends (defined in their own translation units).
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);
// The FPGA factory: fpga/include/hetglm/fpga/factory.hpp.
#if defined(HETGLM_WITH_OPENCL)
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options);
/// Number of OpenCL devices; `non_cpu` counts only those that are not CL_DEVICE_TYPE_CPU.
int opencl_device_count(bool non_cpu);
#endif
}  // namespace detail

}  // namespace hetglm
