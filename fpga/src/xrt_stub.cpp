// SPDX-License-Identifier: Apache-2.0
// make_xrt_device when built without HETGLM_ENABLE_XRT: the rebuild hint (docs/design.md, "Devices that are not compiled in").
#include "hetglm/backend.hpp"
#include "hetglm/fpga/factory.hpp"
#include "hetglm/fpga/device.hpp"

namespace hetglm::fpga {
std::unique_ptr<Device> make_xrt_device(const std::string&, unsigned, const std::string&) {
  throw UnsupportedDevice("device 'fpga' is not compiled in: reconfigure with -DHETGLM_ENABLE_XRT=ON");
}
}  // namespace hetglm::fpga

namespace hetglm::detail {
unsigned fpga_board_count() { return 0; }
}  // namespace hetglm::detail
