// SPDX-License-Identifier: Apache-2.0
// The FPGA backends' factory, for the registry (backends/src/registry.cpp): `fpga` (the card through XRT, needs
// BackendOptions::xclbin) and `fpga-sim` (the HLS kernel of hls/ compiled as C++). docs/fpga.md.
#pragma once
#include <memory>

#include "hetglm/backend.hpp"
#include "hetglm/backend_options.hpp"

namespace hetglm::detail {

/// fpga (XRT device; needs options.xclbin) and fpga-sim. Throws InvalidArgument for a missing xclbin,
/// UnsupportedDevice without XRT or without a board, DeviceError for a bad xclbin.
std::unique_ptr<Backend> make_fpga_backend(Device kind, const BackendOptions& options);
/// FPGA boards XRT sees (0 without HETGLM_ENABLE_XRT or without a board).
unsigned fpga_board_count();

}  // namespace hetglm::detail
