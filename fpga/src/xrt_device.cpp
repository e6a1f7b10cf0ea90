// SPDX-License-Identifier: Apache-2.0
// The XRT device: the native C++ API (xrt::device, xrt::xclbin / load_xclbin, xrt::kernel, xrt::bo, xrt::run) of
// Debian's libxrt-dev 2.13 (docs/conventions.md, "XRT": include <xrt/xrt_*.h> from -I/usr/include/xrt, link xrt_coreutil).
// Compiled only with HETGLM_ENABLE_XRT. Checks happen before the card is touched where they can, so that a bad
// --xclbin is reported as such on a machine without a board too:
//   1. the file exists                    InvalidArgument "device 'fpga': xclbin file 'F' does not exist"
//   2. XRT parses it as an xclbin         InvalidArgument "device 'fpga': 'F' is not a valid xclbin (XRT: ...)"
//   3. it holds the kernel                InvalidArgument "device 'fpga': xclbin 'F' has no kernel 'K' (it has: ...)"
//   4. a card is present                  UnsupportedDevice "device 'fpga': no FPGA board is present (XRT: ...)"
//   5. the card accepts the xclbin        DeviceError "device 'fpga': loading xclbin 'F' failed (XRT: ...)"
#include <fmt/format.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/fpga/factory.hpp"
#include "hetglm/fpga/device.hpp"

namespace hetglm::fpga {
namespace {

class XrtDevice final : public Device {
 public:
  XrtDevice(const std::string& path, unsigned index, const std::string& kernel_name) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw InvalidArgument(fmt::format("device 'fpga': xclbin file '{}' does not exist", path));
    xrt::xclbin xb;
    try {
      xb = xrt::xclbin(path);
    } catch (const std::exception& e) {
      throw InvalidArgument(fmt::format("device 'fpga': '{}' is not a valid xclbin (XRT: {})", path, e.what()));
    }
    std::vector<std::string> names;
    bool found = false;
    try {
      for (const auto& k : xb.get_kernels()) {
        names.push_back(k.get_name());
        found = found || k.get_name() == kernel_name;
      }
    } catch (const std::exception& e) {
      throw InvalidArgument(fmt::format("device 'fpga': '{}' is not a valid xclbin (XRT: {})", path, e.what()));
    }
    if (!found)
      throw InvalidArgument(fmt::format("device 'fpga': xclbin '{}' has no kernel '{}' (it has: {})", path, kernel_name,
                                        names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    try {
      device_ = xrt::device(index);
    } catch (const std::exception& e) {
      throw UnsupportedDevice(fmt::format("device 'fpga': no FPGA board is present (XRT: {})", e.what()));
    }
    try {
      const xrt::uuid uuid = device_.load_xclbin(xb);
      kernel_ = xrt::kernel(device_, uuid, kernel_name);
      name_ = device_.get_info<xrt::info::device::name>();
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': loading xclbin '{}' failed (XRT: {})", path, e.what()));
    }
    // Device memory: the xclbin's memory topology is what the kernel reaches; XRT reports no total through the
    // native API in 2.13, so take the smallest bank used by a column buffer as the budget's ceiling.
    memory_ = std::size_t(16) << 30;
  }

  std::string description() const override { return fmt::format("{} (xrt, {})", name_, path_); }
  std::size_t memory_bytes() const override { return memory_; }

  BufferId alloc(std::size_t bytes, int arg) override {
    try {
      bos_.emplace_back(xrt::bo(device_, std::max<std::size_t>(bytes, 4), kernel_.group_id(arg)));
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': xrt::bo of {} bytes for argument {} failed (XRT: {})", bytes, arg,
                                    e.what()));
    }
    return static_cast<BufferId>(bos_.size() - 1);
  }
  void free(BufferId b) override { bo(b) = xrt::bo(); }
  void write(BufferId b, const void* src, std::size_t bytes, std::size_t offset) override {
    if (!bytes) return;
    try {
      bo(b).write(src, bytes, offset);
      bo(b).sync(XCL_BO_SYNC_BO_TO_DEVICE, bytes, offset);
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': xrt::bo::write/sync of {} bytes failed (XRT: {})", bytes, e.what()));
    }
  }
  void read(BufferId b, void* dst, std::size_t bytes, std::size_t offset) override {
    if (!bytes) return;
    try {
      bo(b).sync(XCL_BO_SYNC_BO_FROM_DEVICE, bytes, offset);
      bo(b).read(dst, bytes, offset);
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': xrt::bo::sync/read of {} bytes failed (XRT: {})", bytes, e.what()));
    }
  }
  void run(const RunArgs& a) override {
    try {
      run_ = xrt::run(kernel_);
      for (int k = 0; k < abi::kNumBufferArgs; ++k) run_.set_arg(k, bo(a.buffers[k]));
      const abi::Scalars& s = a.scalars;
      run_.set_arg(abi::kArgWs, s.ws);
      run_.set_arg(abi::kArgDim, s.dim);
      run_.set_arg(abi::kArgEpochs, s.epochs);
      run_.set_arg(abi::kArgFormulation, s.formulation);
      run_.set_arg(abi::kArgLoss, s.loss);
      run_.set_arg(abi::kArgPenalty, s.penalty);
      run_.set_arg(abi::kArgScale, s.scale);
      run_.set_arg(abi::kArgSigma, s.sigma);
      run_.set_arg(abi::kArgLambda, s.lambda);
      run_.set_arg(abi::kArgEta, s.eta);
      run_.set_arg(abi::kArgBound, s.bound);
      run_.start();
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': xrt::run of kernel " HETGLM_FPGA_KERNEL_NAME " failed (XRT: {})",
                                    e.what()));
    }
  }
  void wait() override {
    ert_cmd_state st;
    try {
      st = run_.wait();
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("device 'fpga': xrt::run::wait failed (XRT: {})", e.what()));
    }
    if (st != ERT_CMD_STATE_COMPLETED)
      throw DeviceError(fmt::format("device 'fpga': kernel " HETGLM_FPGA_KERNEL_NAME " ended in state {}", int(st)));
  }

 private:
  xrt::bo& bo(BufferId b) {
    if (b < 0 || static_cast<std::size_t>(b) >= bos_.size()) throw DeviceError(fmt::format("device 'fpga': invalid buffer {}", b));
    return bos_[b];
  }
  std::string path_, name_;
  std::size_t memory_ = 0;
  xrt::device device_;
  xrt::kernel kernel_;
  xrt::run run_;
  std::vector<xrt::bo> bos_;
};

}  // namespace

std::unique_ptr<Device> make_xrt_device(const std::string& xclbin, unsigned index, const std::string& kernel_name) {
  return std::make_unique<XrtDevice>(xclbin, index, kernel_name);
}

}  // namespace hetglm::fpga

namespace hetglm::detail {
unsigned fpga_board_count() {
  try {
    xrt::device d(0);  // throws without a board ("XILINX_XRT not set" with Debian's XRT and no driver)
    return 1;
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace hetglm::detail
