// SPDX-License-Identifier: Apache-2.0
// The simulated FPGA: buffers are host memory, and run() calls the HLS top function (hls/src/scd_epoch_top.cpp,
// compiled as C++) with the buffers in kernel_abi.hpp order, exactly as the card's kernel receives them.
#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/fpga/device.hpp"
#include "hetglm/hls/scd_epoch_top.hpp"

namespace hetglm::fpga {
namespace {

// One compute unit: the kernel's on-chip memories are static, so calls are serialized (as on the card).
std::mutex& kernel_mutex() {
  static std::mutex m;
  return m;
}

class SimDevice final : public Device {
 public:
  explicit SimDevice(std::size_t bytes) : capacity_(bytes ? bytes : (std::size_t(4) << 30)) {}
  std::string description() const override { return "simulated FPGA (HLS kernel " HETGLM_FPGA_KERNEL_NAME " as C++)"; }
  std::size_t memory_bytes() const override { return capacity_; }

  BufferId alloc(std::size_t bytes, int arg) override {
    if (arg < 0 || arg >= abi::kNumBufferArgs) throw InvalidArgument(fmt::format("fpga-sim: argument {} is not a buffer", arg));
    if (used_ + bytes > capacity_)
      throw DeviceError(fmt::format("fpga-sim: out of device memory ({} bytes in use, {} requested, {} total)", used_,
                                    bytes, capacity_));
    // Words, so that float/int views are aligned.
    bufs_.push_back(std::vector<std::uint32_t>((bytes + 3) / 4 + 1, 0u));
    sizes_.push_back(bytes);
    used_ += bytes;
    return static_cast<BufferId>(bufs_.size() - 1);
  }
  void free(BufferId b) override {
    check(b, 0, 0);
    used_ -= sizes_[b];
    sizes_[b] = 0;
    bufs_[b].clear();
    bufs_[b].shrink_to_fit();
  }
  void write(BufferId b, const void* src, std::size_t bytes, std::size_t offset) override {
    check(b, bytes, offset);
    if (bytes) std::memcpy(reinterpret_cast<char*>(bufs_[b].data()) + offset, src, bytes);
  }
  void read(BufferId b, void* dst, std::size_t bytes, std::size_t offset) override {
    check(b, bytes, offset);
    if (bytes) std::memcpy(dst, reinterpret_cast<const char*>(bufs_[b].data()) + offset, bytes);
  }
  void run(const RunArgs& a) override {
    for (int k = 0; k < abi::kNumBufferArgs; ++k) check(a.buffers[k], 0, 0);
    auto f = [&](int k) { return reinterpret_cast<float*>(bufs_[a.buffers[k]].data()); };
    auto i = [&](int k) { return reinterpret_cast<int*>(bufs_[a.buffers[k]].data()); };
    const abi::Scalars& s = a.scalars;
    std::lock_guard<std::mutex> lock(kernel_mutex());
    hetglm_scd_epoch(f(abi::kArgColVal), i(abi::kArgColIdx), i(abi::kArgColPtr), f(abi::kArgCoord),
                     f(abi::kArgAlpha), f(abi::kArgV), f(abi::kArgRow), i(abi::kArgOrder), i(abi::kArgStatus), s.ws,
                     s.dim, s.epochs, s.formulation, s.loss, s.penalty, s.scale, s.sigma, s.lambda, s.eta, s.bound);
  }
  void wait() override {}

 private:
  void check(BufferId b, std::size_t bytes, std::size_t offset) const {
    if (b < 0 || static_cast<std::size_t>(b) >= bufs_.size() || (sizes_[b] == 0 && bufs_[b].empty()))
      throw DeviceError(fmt::format("fpga-sim: invalid buffer {}", b));
    if (offset + bytes > sizes_[b])
      throw DeviceError(fmt::format("fpga-sim: copy of {} bytes at offset {} overruns a buffer of {} bytes", bytes,
                                    offset, sizes_[b]));
  }
  std::size_t capacity_, used_ = 0;
  std::vector<std::vector<std::uint32_t>> bufs_;
  std::vector<std::size_t> sizes_;
};

}  // namespace

std::unique_ptr<Device> make_sim_device(std::size_t bytes) { return std::make_unique<SimDevice>(bytes); }

}  // namespace hetglm::fpga
