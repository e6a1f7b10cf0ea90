// SPDX-License-Identifier: Apache-2.0
// The FPGA backend (issue 7, docs/fpga.md): fpga-sim (the HLS kernel as C++ behind the simulated device) against
// the reference epoch, DuHL with fpga-sim as the accelerator at a 25% budget reaching the sequential optimum for
// every model, and the exact errors of the XRT path (missing/invalid xclbin, kernel name mismatch, no board, no
// --xclbin) from the library and from the CLI.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "conformance.hpp"
#include "hetglm/fpga/factory.hpp"
#include "hetglm/io.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/sequential.hpp"
#if defined(HETGLM_WITH_XRT)
#include <xclbin.h>
#endif

namespace hetglm::testing {
namespace {


const BackendCase kSim{"fpga-sim", "fpga-sim", {}, true};

TEST(FpgaSim, IsCompiledInAndPresent) {
  bool c = false, a = false;
  for (Device d : compiled_devices()) c = c || d == Device::fpga_sim;
  for (Device d : available_devices()) a = a || d == Device::fpga_sim;
  EXPECT_TRUE(c);
  EXPECT_TRUE(a);
  auto be = make_backend("fpga-sim");
  EXPECT_EQ(be->device(), Device::fpga_sim);
  EXPECT_EQ(be->description().rfind("simulated FPGA (HLS kernel hetglm_scd_epoch as C++)", 0), 0u) << be->description();
}

// The epoch conformance (tests/backends/test_backends.cpp, Conformance) and DuHL at 10/25/100% budgets
// (tests/solvers/test_duhl.cpp, DuhlOptimum, bar 1e-6 for fpga-sim) run on fpga-sim through the shared bodies.


/// Runs the CLI with `args` (stdout discarded); returns the exit code and stderr.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string err = test_temp_path("cli.err");
  const std::string cmd = std::string(HETGLM_CLI) + " " + args + " >/dev/null 2>" + err;
  const int st = std::system(cmd.c_str());
  std::string text = read_file(err);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, text};
}

const std::string kHeart = std::string(HETGLM_DATA_DIR) + "/heart_scale";

TEST(FpgaCli, SimulatedFpgaTrainsAndBadXclbinExitsWith2) {
  const std::string model = test_temp_path("cli.model");
  auto r = run_cli("train -q --device fpga-sim --accel-memory 25% " + kHeart + " " + model);
  EXPECT_EQ(r.first, 0) << r.second;
#if defined(HETGLM_WITH_XRT)
  r = run_cli("train --device fpga --xclbin /nonexistent " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);  // checked with the other options, before the data is read (issue 18)
  EXPECT_EQ(r.second, "error: --xclbin: cannot open '/nonexistent': No such file or directory");
  r = run_cli("train --device fpga " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: device 'fpga' needs an xclbin: pass --xclbin FILE (the kernel built from hls/ with Vitis, "
            "docs/fpga.md)");
  const std::string bad = test_temp_path("not_an.xclbin");
  std::ofstream(bad) << "not an xclbin\n";
  r = run_cli("train --device fpga --xclbin " + bad + " " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: device 'fpga': '" + bad + "' is not a valid xclbin (XRT: Invalid xclbin)");
#else
  r = run_cli("train --device fpga --xclbin /nonexistent " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: device 'fpga' is not compiled in: reconfigure with -DHETGLM_ENABLE_XRT=ON");
#endif
}

#if defined(HETGLM_WITH_XRT)
/// A minimal, well-formed xclbin (axlf with IP_LAYOUT and EMBEDDED_METADATA sections) declaring one kernel `name`.
/// It has no bitstream: XRT parses it and lists the kernel, and only a card could reject it.
std::string craft_xclbin(const std::string& name) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><project name=\"hetglm_test\"><platform><device name=\"fpga0\">"
      "<core name=\"OCL_REGION_0\"><kernel name=\"" + name + "\" language=\"c\" vlnv=\"xilinx.com:hls:" + name +
      ":1.0\" preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"true\" "
      "hwControlProtocol=\"ap_ctrl_hs\"><port name=\"S_AXI_CONTROL\" mode=\"slave\" range=\"0x1000\" "
      "dataWidth=\"32\" portType=\"addressable\" base=\"0x0\"/><instance name=\"" + name + "_1\"><addrRemap "
      "base=\"0x0\" port=\"S_AXI_CONTROL\"/></instance></kernel></core></device></platform></project>";
  const std::size_t ip_off = sizeof(axlf) + sizeof(axlf_section_header), xml_off = ip_off + sizeof(ip_layout);
  std::vector<char> buf(xml_off + xml.size(), 0);
  auto* a = reinterpret_cast<axlf*>(buf.data());
  std::memcpy(a->m_magic, "xclbin2", 8);
  a->m_signature_length = -1;
  std::memset(a->reserved, 0xff, sizeof a->reserved);
  a->m_header.m_length = buf.size();
  a->m_header.m_numSections = 2;
  a->m_header.m_versionMajor = 2;
  a->m_sections[0].m_sectionKind = IP_LAYOUT;
  a->m_sections[0].m_sectionOffset = ip_off;
  a->m_sections[0].m_sectionSize = sizeof(ip_layout);
  a->m_sections[1].m_sectionKind = EMBEDDED_METADATA;
  a->m_sections[1].m_sectionOffset = xml_off;
  a->m_sections[1].m_sectionSize = xml.size();
  auto* ip = reinterpret_cast<ip_layout*>(buf.data() + ip_off);
  ip->m_count = 1;
  ip->m_ip_data[0].m_type = IP_KERNEL;
  std::snprintf(reinterpret_cast<char*>(ip->m_ip_data[0].m_name), sizeof ip->m_ip_data[0].m_name, "%s:%s_1",
                name.c_str(), name.c_str());
  std::memcpy(buf.data() + xml_off, xml.data(), xml.size());
  const std::string path = test_temp_path(name + ".xclbin");
  std::ofstream(path, std::ios::binary).write(buf.data(), static_cast<std::streamsize>(buf.size()));
  return path;
}

TEST(FpgaXrt, KernelNameMismatchAndNoBoardAreClearErrors) {
  const std::string model = test_temp_path("cli.model");
  const std::string other = craft_xclbin("vadd");
  BackendOptions o;
  o.xclbin = other;
  try {
    make_backend("fpga", o);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "device 'fpga': xclbin '" + other + "' has no kernel 'hetglm_scd_epoch' (it has: vadd)");
  }
  auto r = run_cli("train --device fpga --xclbin " + other + " " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: device 'fpga': xclbin '" + other + "' has no kernel 'hetglm_scd_epoch' (it has: vadd)");
  // The right kernel name: everything checks out until the card, which this machine does not have.
  if (detail::fpga_board_count() > 0) GTEST_SKIP() << "an FPGA board is present";
  o.xclbin = craft_xclbin("hetglm_scd_epoch");
  try {
    make_backend("fpga", o);
    FAIL() << "expected UnsupportedDevice";
  } catch (const UnsupportedDevice& e) {
    EXPECT_EQ(std::string(e.what()), "device 'fpga': no FPGA board is present (XRT: XILINX_XRT not set)");
  }
  r = run_cli("train --device fpga --xclbin " + o.xclbin + " " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: device 'fpga': no FPGA board is present (XRT: XILINX_XRT not set)");
}
#endif

}  // namespace
}  // namespace hetglm::testing
