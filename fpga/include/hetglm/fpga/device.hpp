// SPDX-License-Identifier: Apache-2.0
// The FPGA host runtime's device abstraction (Vitis L3 layer; docs/design.md, "The FPGA path: kernel, ABI, host runtime"): buffers bound to kernel arguments,
// host<->device copies, and one kernel run at a time. Two implementations:
//   XrtDevice (xrt_device.cpp; HETGLM_ENABLE_XRT): the XRT native C++ API with an xclbin on an Alveo card;
//   SimDevice (sim_device.cpp; always built): the HLS top function compiled as C++, run in process through the
//     same buffers and argument ABI (kernel_abi.hpp), so the whole control path is tested without a board.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "hetglm/hls/kernel_abi.hpp"

namespace hetglm::fpga {

namespace abi = ::hetglm::hls::abi;  ///< the kernel's ABI (hls/include/hetglm/hls/kernel_abi.hpp)

/// A device buffer handle (an index into the device's own table; -1 = none).
using BufferId = int;

/// The buffer arguments of one kernel run, in kernel_abi.hpp order (kArgColVal..kArgStatus).
struct RunArgs {
  BufferId buffers[abi::kNumBufferArgs] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
  abi::Scalars scalars{};
};

class Device {
 public:
  virtual ~Device() = default;
  /// "xilinx_u250 (xrt, FILE)" or "simulated (HLS kernel as C++)".
  virtual std::string description() const = 0;
  /// Device memory for buffers, bytes.
  virtual std::size_t memory_bytes() const = 0;
  /// A buffer of `bytes` for kernel argument `arg` (its memory bank comes from the kernel's connectivity).
  virtual BufferId alloc(std::size_t bytes, int arg) = 0;
  virtual void free(BufferId b) = 0;
  /// Host -> device: `bytes` from `src` at byte `offset` of the buffer.
  virtual void write(BufferId b, const void* src, std::size_t bytes, std::size_t offset = 0) = 0;
  /// Device -> host.
  virtual void read(BufferId b, void* dst, std::size_t bytes, std::size_t offset = 0) = 0;
  /// Start the kernel with these arguments (asynchronous on a card).
  virtual void run(const RunArgs& args) = 0;
  /// Wait for the run started last. Throws DeviceError on a failed or timed-out run.
  virtual void wait() = 0;
};

/// The simulated device: `memory_bytes` of emulated device memory (0 = 4 GiB).
std::unique_ptr<Device> make_sim_device(std::size_t memory_bytes = 0);

/// The XRT device: card `index`, programmed with `xclbin`, kernel `kernel_name`. Checks, in this order, with a
/// message naming what is missing: the file exists (InvalidArgument), it is an xclbin (InvalidArgument), it holds
/// the kernel (InvalidArgument), a card is present (UnsupportedDevice), the card accepts it (DeviceError).
/// Throws UnsupportedDevice when built without HETGLM_ENABLE_XRT.
std::unique_ptr<Device> make_xrt_device(const std::string& xclbin, unsigned index = 0,
                                        const std::string& kernel_name = HETGLM_FPGA_KERNEL_NAME);

}  // namespace hetglm::fpga
