// SPDX-License-Identifier: Apache-2.0
// Backend factory and device strings (registry.hpp).
#include "hetglm/backends/registry.hpp"
#include "hetglm/fpga/factory.hpp"

#include <fmt/format.h>

#if defined(HETGLM_WITH_CUDA)
#include "hetglm/backends/cuda_backend.hpp"
#endif


namespace hetglm {

Device parse_device(const std::string& name) {
  if (name == "cpu") return Device::cpu;
  if (name == "opencl") return Device::opencl;
  if (name == "cuda") return Device::cuda;
  if (name == "fpga") return Device::fpga;
  if (name == "fpga-sim") return Device::fpga_sim;
  throw InvalidArgument(
      fmt::format("--device: unknown device '{}' (expected cpu, opencl, cuda, fpga, fpga-sim or auto)", name));
}

std::vector<Device> compiled_devices() {
  std::vector<Device> d{Device::cpu};
#if defined(HETGLM_WITH_OPENCL)
  d.push_back(Device::opencl);
#endif
#if defined(HETGLM_WITH_CUDA)
  d.push_back(Device::cuda);
#endif
#if defined(HETGLM_WITH_XRT)
  d.push_back(Device::fpga);
#endif
#if defined(HETGLM_WITH_FPGA_SIM)
  d.push_back(Device::fpga_sim);
#endif
  return d;
}

std::vector<Device> available_devices() {
  std::vector<Device> d{Device::cpu};
#if defined(HETGLM_WITH_OPENCL)
  if (detail::opencl_device_count(false) > 0) d.push_back(Device::opencl);
#endif
#if defined(HETGLM_WITH_CUDA)
  if (cuda::probe().count > 0) d.push_back(Device::cuda);
#endif
#if defined(HETGLM_WITH_XRT)
  if (detail::fpga_board_count() > 0) d.push_back(Device::fpga);
#endif
#if defined(HETGLM_WITH_FPGA_SIM)
  d.push_back(Device::fpga_sim);  // the simulated FPGA is always present (never chosen by auto)
#endif
  return d;
}

Device resolve_device(const std::string& name, std::string* why) {
  if (name != "auto") return parse_device(name);
  // docs/conventions.md, "Devices": cuda, then opencl on a non-CPU OpenCL device, then cpu. An FPGA needs its xclbin,
  // so it is chosen by --device fpga --xclbin FILE, never by auto.
#if defined(HETGLM_WITH_CUDA)
  if (cuda::probe().count > 0) {
    if (why) *why = "auto: chose cuda (a CUDA device is present)";
    return Device::cuda;
  }
#endif
#if defined(HETGLM_WITH_OPENCL)
  if (detail::opencl_device_count(true) > 0) {
    if (why) *why = "auto: chose opencl (a non-CPU OpenCL device is present; no CUDA or FPGA device)";
    return Device::opencl;
  }
#endif
  if (why) *why = "auto: chose cpu (no CUDA, FPGA or non-CPU OpenCL device is present)";
  return Device::cpu;
}

namespace {
[[noreturn, maybe_unused]] void not_compiled(Device d, const char* option) {
  throw UnsupportedDevice(
      fmt::format("device '{}' is not compiled in: reconfigure with -D{}=ON", device_name(d), option));
}
}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
  const Device d = resolve_device(name);
  switch (d) {
    case Device::cpu: return detail::make_cpu_backend(options);
    case Device::opencl:
#if defined(HETGLM_WITH_OPENCL)
      return detail::make_opencl_backend(options);
#else
      not_compiled(d, "HETGLM_ENABLE_OPENCL");
#endif
    case Device::cuda:
#if defined(HETGLM_WITH_CUDA)
      return cuda::make_cuda_backend(options, cuda::CudaOptions{.sequential = options.cuda_sequential,
                                                                  .device = options.cuda_device,
                                                                  .tpa_concurrency = options.tpa_concurrency,
                                                                  .tpa_safeguard = options.tpa_safeguard});
#else
      not_compiled(d, "HETGLM_ENABLE_CUDA");
#endif
    case Device::fpga:
#if defined(HETGLM_WITH_XRT)
      return detail::make_fpga_backend(d, options);
#else
      not_compiled(d, "HETGLM_ENABLE_XRT");
#endif
    default:
#if defined(HETGLM_WITH_FPGA_SIM)
      return detail::make_fpga_backend(d, options);
#else
      throw UnsupportedDevice("device 'fpga-sim' is not compiled in: it needs the HLS kernel library of this build");
#endif
  }
}

}  // namespace hetglm
