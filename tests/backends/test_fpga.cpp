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
#include "hetglm/io.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/sequential.hpp"
#if defined(HETGLM_WITH_XRT)
#include <xclbin.h>
#endif

namespace hetglm::testing {
namespace {

struct ModelCase {
  const char* model;
  const char* file;
  index_t rows;
  double lambda;
};
// The models and data of tests/solvers/test_duhl.cpp.
const ModelCase kModels[] = {
    {"logistic", "w7a", 600, 1e-3},       {"svm", "mushrooms", 300, 1e-2},
    {"squared-hinge", "w7a", 600, 1e-3},  {"ridge", "housing_scale", 506, 1e-2},
    {"lasso", "housing_scale", 506, 0.05}, {"elastic-net", "housing_scale", 506, 0.05},
};

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

// The conformance checks of tests/backends/test_backends.cpp (Conformance.EpochsMatchTheReferenceEpoch) on
// fpga-sim: epochs with sigma' = 1 and 2, a swap that moves only the new columns, alpha and v against the reference
// epoch within the float32 tolerance.
TEST(FpgaSim, EpochsMatchTheReferenceEpoch) {
  const double tol = 2e-4;
  for (const ModelCase& mc : kModels) {
    SCOPED_TRACE(mc.model);
    auto prob = make_problem(mc.model, mc.file, mc.rows, mc.lambda);
    with_form(*prob, [&](const auto& form) {
      const CsrMatrix& A = *form.A;
      const index_t m = form.n_coords();
      auto be = make_backend(kSim.device, kSim.options);
      std::vector<double> curv;
      be->bind(describe_objective(form, curv));
      std::vector<index_t> ws1, ws2;
      for (index_t i = 0; i < m; i += 2) ws1.push_back(i);
      for (index_t i = m / 2; i < m; ++i) ws2.push_back(i);
      std::vector<double> alpha(static_cast<std::size_t>(m), 0.0), v(static_cast<std::size_t>(form.dim()), 0.0);
      const LoadReport r1 = be->load_working_set(ws1, A, std::vector<double>(ws1.size(), 0.0));
      EXPECT_EQ(r1.columns_copied, ws1.size());
      be->set_shared_vector(v);
      be->run_epochs(1, 42, 1.0);
      reference_epoch(form, ws1, alpha, v, 42, 0, 1.0);
      const EpochReport er = be->run_epochs(1, 43, 2.0);
      EXPECT_TRUE(er.numerics_ok);
      EXPECT_EQ(er.updates, ws1.size());
      reference_epoch(form, ws1, alpha, v, 43, 0, 2.0);
      std::vector<double> got(ws1.size()), gv(v.size());
      be->get_alpha(got);
      be->get_shared_vector(gv);
      double amax = 0, vmax = 0;
      for (double a : alpha) amax = std::max(amax, std::fabs(a));
      for (double x : v) vmax = std::max(vmax, std::fabs(x));
      for (std::size_t p = 0; p < ws1.size(); ++p)
        ASSERT_LE(std::fabs(got[p] - alpha[ws1[p]]), tol * std::max(1.0, amax)) << "alpha at position " << p;
      for (std::size_t k = 0; k < v.size(); ++k) ASSERT_LE(std::fabs(gv[k] - v[k]), tol * std::max(1.0, vmax)) << "v[" << k << "]";
      std::vector<double> aws(ws2.size());
      for (std::size_t p = 0; p < ws2.size(); ++p) aws[p] = alpha[ws2[p]];
      std::size_t fresh = 0;
      for (index_t i : ws2) fresh += (i % 2 != 0);
      const LoadReport r2 = be->load_working_set(ws2, A, aws);
      EXPECT_EQ(r2.columns_copied, fresh);
      be->set_shared_vector(v);
      be->run_epochs(2, 7, 1.0);
      reference_epoch(form, ws2, alpha, v, 7, 0, 1.0);
      reference_epoch(form, ws2, alpha, v, 7, 1, 1.0);
      got.assign(ws2.size(), 0.0);
      be->get_alpha(got);
      for (std::size_t p = 0; p < ws2.size(); ++p)
        ASSERT_LE(std::fabs(got[p] - alpha[ws2[p]]), 10 * tol * std::max(1.0, amax)) << "after swap, position " << p;
      // Many swaps through a small pool: compaction keeps every resident column right.
      for (int round = 0; round < 6; ++round) {
        std::vector<index_t> ws;
        for (index_t i = round % 3; i < m; i += 3) ws.push_back(i);
        std::vector<double> a(ws.size());
        for (std::size_t p = 0; p < ws.size(); ++p) a[p] = alpha[ws[p]];
        be->load_working_set(ws, A, a);
        be->set_shared_vector(v);
        be->run_epochs(1, 100 + round, 1.0);
        reference_epoch(form, ws, alpha, v, 100 + round, 0, 1.0);
        std::vector<double> g(ws.size());
        be->get_alpha(g);
        // The device's v drifts from the host's by float rounding; the host resets it each round, as DuHL does.
        for (std::size_t p = 0; p < ws.size(); ++p) alpha[ws[p]] = g[p];
        v = shared_vector(form, alpha);
      }
    });
  }
}

TEST(FpgaSim, RefusesAWorkingSetOverItsBudget) {
  auto prob = make_problem("ridge", "housing_scale", 506, 1e-2);
  with_form(*prob, [&](const auto& form) {
    BackendOptions o;
    o.memory_budget = column_bytes(*form.A, 0) * 2;
    auto be = make_backend("fpga-sim", o);
    std::vector<double> curv;
    be->bind(describe_objective(form, curv));
    std::vector<index_t> ws{0, 1, 2};
    const std::size_t need = column_bytes(*form.A, 0) + column_bytes(*form.A, 1) + column_bytes(*form.A, 2);
    try {
      be->load_working_set(ws, *form.A, std::vector<double>(3, 0.0));
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), "working set of " + std::to_string(need) +
                                           " bytes exceeds the accelerator budget of " +
                                           std::to_string(o.memory_budget) + " bytes");
    }
  });
}

double reference_primal(const TestProblem& p) {
  SolverOptions so;
  so.tol = 1e-11;
  so.max_epochs = 200000;
  return with_form(p, [&](const auto& form) { return solve_sequential(form, so).certificate.primal; });
}

class FpgaDuhl : public ::testing::TestWithParam<ModelCase> {};

// DuHL with the simulated FPGA as the accelerator, budget 25%, both CPU roles: the sequential optimum within the
// issue's bar, 1e-6 relative objective difference, although the kernel is float32 (conventions.md only asks 1e-5 of
// float32 accelerators): the host re-synchronizes v in double every round and the certificate is exact, so a run
// that converges at tol 1e-6 is within 1e-6 of the optimum. Lasso's Lipschitzed L1 certificate does not reach 1e-6
// in float32 (B times the rounding of s_j; docs/duhl.md) and stops at max_epochs, at an objective within 1e-9.
TEST_P(FpgaDuhl, ReachesTheSequentialOptimumAtBudget25Percent) {
  const ModelCase& mc = GetParam();
  auto prob = make_problem(mc.model, mc.file, mc.rows, mc.lambda);
  const double P_ref = reference_primal(*prob);
  with_form(*prob, [&](const auto& form) {
    for (CpuRole role : {CpuRole::gaps, CpuRole::solve}) {
      SCOPED_TRACE(cpu_role_name(role));
      BackendOptions bo;
      bo.memory_budget = parse_memory_size("25%", data_bytes(*form.A));
      auto be = make_backend("fpga-sim", bo);
      SolverOptions so;
      so.tol = 1e-6;
      so.max_epochs = 1000;
      so.seed = 3;
      DuhlOptions o;
      o.cpu_role = role;
      const DuhlResult r = solve_duhl(form, *be, so, o);
      const double diff = std::fabs(r.certificate.primal - P_ref) / std::fabs(P_ref);
      std::printf("fpga-sim %s 25%% %s: rounds %d rel_gap %.3g diff %.3g converged %d\n", mc.model,
                  cpu_role_name(role), r.epochs, r.certificate.gap / std::fabs(r.certificate.primal), diff,
                  int(r.converged));
      EXPECT_LE(diff, 1e-6) << "P " << r.certificate.primal << " vs " << P_ref;
      if (std::string(mc.model) != "lasso") EXPECT_TRUE(r.converged);
      EXPECT_LE(r.budget_bytes, bo.memory_budget);
      ASSERT_FALSE(r.rounds.empty());
      EXPECT_LT(r.rounds.front().working_set, static_cast<std::size_t>(form.n_coords()));
      const auto v = shared_vector(form, r.alpha);
      EXPECT_NEAR(form.certificate(r.alpha, v).gap, r.certificate.gap, 1e-12 * std::max(1.0, std::fabs(P_ref)));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Models, FpgaDuhl, ::testing::ValuesIn(kModels), [](const auto& info) {
  std::string n = info.param.model;
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

/// Runs the CLI with `args` (stdout discarded); returns the exit code and stderr.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string err = ::testing::TempDir() + "hetglm_fpga_cli.err";
  const std::string cmd = std::string(HETGLM_CLI) + " " + args + " >/dev/null 2>" + err;
  const int st = std::system(cmd.c_str());
  std::string text = read_file(err);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, text};
}

const std::string kHeart = std::string(HETGLM_DATA_DIR) + "/heart_scale";

TEST(FpgaCli, SimulatedFpgaTrainsAndBadXclbinExitsWith2) {
  const std::string model = ::testing::TempDir() + "hetglm_fpga_cli.model";
  auto r = run_cli("train -q --device fpga-sim --accel-memory 25% " + kHeart + " " + model);
  EXPECT_EQ(r.first, 0) << r.second;
#if defined(HETGLM_WITH_XRT)
  r = run_cli("train --device fpga --xclbin /nonexistent " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: device 'fpga': xclbin file '/nonexistent' does not exist");
  r = run_cli("train --device fpga " + kHeart + " " + model);
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: device 'fpga' needs an xclbin: pass --xclbin FILE (the kernel built from hls/ with Vitis, "
            "docs/fpga.md)");
  const std::string bad = ::testing::TempDir() + "hetglm_not_an.xclbin";
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
  const std::string path = ::testing::TempDir() + "hetglm_" + name + ".xclbin";
  std::ofstream(path, std::ios::binary).write(buf.data(), static_cast<std::streamsize>(buf.size()));
  return path;
}

TEST(FpgaXrt, KernelNameMismatchAndNoBoardAreClearErrors) {
  const std::string model = ::testing::TempDir() + "hetglm_fpga_cli.model";
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
