// SPDX-License-Identifier: Apache-2.0
// Backend conformance: one test body runs against every backend compiled into this build (cpu double, cpu float,
// opencl, fpga-sim, cuda; a device that is not present skips) and compares its epochs, sigma' handling, working-set
// swaps and gaps with the reference epoch (conformance.hpp) for every formulation. Also the registry: device
// strings, budgets, and the exact error messages.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include <sys/wait.h>

#include "hetglm/io.hpp"

#include "conformance.hpp"
#include "hetglm/solvers/duhl.hpp"

namespace hetglm::testing {
namespace {


class Conformance : public ::testing::TestWithParam<BackendCase> {};

double rel_err(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

TEST_P(Conformance, EpochsMatchTheReferenceEpoch) {
  const BackendCase& bc = GetParam();
  HETGLM_SKIP_UNLESS_PRESENT(bc);
  const double tol = bc.float32 ? 2e-4 : 1e-11;
  for (const ModelCase& mc : kEpochModels) {
    SCOPED_TRACE(mc.name());
    auto prob = make_problem(mc);
    with_form(*prob, [&](const auto& form) {
      const CsrMatrix& A = *form.A;
      const index_t m = form.n_coords();
      auto be = make_backend(bc.device, bc.options);
      EXPECT_EQ(device_name(be->device()), bc.device);
      std::vector<double> curv;
      const ObjectiveDesc desc = describe_objective(form, curv);
      be->bind(desc);
      // Working set 1: every other coordinate; working set 2 overlaps it by half.
      std::vector<index_t> ws1, ws2;
      for (index_t i = 0; i < m; i += 2) ws1.push_back(i);
      for (index_t i = m / 2; i < m; ++i) ws2.push_back(i);
      std::vector<double> alpha(static_cast<std::size_t>(m), 0.0), v(static_cast<std::size_t>(form.dim()), 0.0);
      std::vector<double> aws(ws1.size(), 0.0);
      const LoadReport r1 = be->load_working_set(ws1, A, aws);
      EXPECT_EQ(r1.columns_copied, ws1.size());
      be->set_shared_vector(v);
      // One plain epoch (sigma' = 1), then one CoCoA+ epoch (sigma' = 2).
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
      // Fresh gaps of the working set against the device's v equal the host's (same v).
      std::vector<double> gaps(ws1.size());
      if (be->coordinate_gaps(gaps)) {
        for (std::size_t p = 0; p < ws1.size(); ++p) {
          const index_t i = ws1[p];
          const double ref = form.coordinate_gap(i, alpha[i], v.data());
          // The Lipschitzed L1 gap multiplies the rounding of s_j by the bound B: float32, of the values; double,
          // of v's sums, which the host's full-row kernels (forms.hpp full_row) add in another order than the
          // backend's loop (1.2e-12 at B = 5921 on lasso_primal).
          ASSERT_LE(std::fabs(gaps[p] - ref), (bc.float32 ? 1e-3 : 1e-10) * std::max(1e-3, std::fabs(ref)) +
                                                  (bc.float32 ? 1e-5 : 1e-15) * (1 + desc.obj.bound))
              << "gap at position " << p;
        }
      }
      // Swap: only the columns not already resident travel; alpha and v continue from the host's values.
      aws.assign(ws2.size(), 0.0);
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
      // Many swaps through the device's column storage (pools are compacted or reused): every resident column
      // stays right. The device's v drifts from the host's by rounding; the host resets it each round, as DuHL does.
      for (int round = 0; round < 6; ++round) {
        std::vector<index_t> ws;
        for (index_t i = round % 3; i < m; i += 3) ws.push_back(i);
        std::vector<double> a(ws.size());
        for (std::size_t p = 0; p < ws.size(); ++p) a[p] = alpha[ws[p]];
        be->load_working_set(ws, A, a);
        be->set_shared_vector(v);
        be->run_epochs(1, 100 + round, 1.0);
        std::vector<double> expect = alpha, vexp = v;
        reference_epoch(form, ws, expect, vexp, 100 + round, 0, 1.0);
        std::vector<double> g(ws.size());
        be->get_alpha(g);
        for (std::size_t p = 0; p < ws.size(); ++p)
          ASSERT_LE(std::fabs(g[p] - expect[ws[p]]), 10 * tol * std::max(1.0, amax)) << "round " << round << ", position " << p;
        for (std::size_t p = 0; p < ws.size(); ++p) alpha[ws[p]] = g[p];
        v = shared_vector(form, alpha);
      }
      (void)rel_err;
    });
  }
}

TEST_P(Conformance, RefusesAWorkingSetOverItsBudget) {
  BackendCase bc = GetParam();
  HETGLM_SKIP_UNLESS_PRESENT(bc);
  auto prob = make_problem({"ridge", "housing_scale", 506, 1e-2, Formulation::primal});
  with_form(*prob, [&](const auto& form) {
    bc.options.memory_budget = column_bytes(*form.A, 0) * 2;
    auto be = make_backend(bc.device, bc.options);
    std::vector<double> curv;
    be->bind(describe_objective(form, curv));
    std::vector<index_t> ws{0, 1, 2};
    std::vector<double> a(3, 0.0);
    const std::size_t need = column_bytes(*form.A, 0) + column_bytes(*form.A, 1) + column_bytes(*form.A, 2);
    try {
      be->load_working_set(ws, *form.A, a);
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), "working set of " + std::to_string(need) +
                                           " bytes exceeds the accelerator budget of " +
                                           std::to_string(bc.options.memory_budget) + " bytes");
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backend_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Registry, DeviceStringsAndErrors) {
  EXPECT_EQ(parse_device("cpu"), Device::cpu);
  EXPECT_EQ(parse_device("fpga-sim"), Device::fpga_sim);
  try {
    parse_device("tpu");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "--device: unknown device 'tpu' (expected cpu, opencl, cuda, fpga, fpga-sim or auto)");
  }
#if !defined(HETGLM_WITH_CUDA)  // compiled in: tests/backends/test_cuda_backend.cpp checks the no-GPU message
  try {
    make_backend("cuda");
    FAIL();
  } catch (const UnsupportedDevice& e) {
    EXPECT_STREQ(e.what(), "device 'cuda' is not compiled in: reconfigure with -DHETGLM_ENABLE_CUDA=ON");
  }
#endif
#if !defined(HETGLM_WITH_XRT)  // compiled in: tests/backends/test_fpga.cpp checks the xclbin and no-board messages
  try {
    make_backend("fpga");
    FAIL();
  } catch (const UnsupportedDevice& e) {
    EXPECT_STREQ(e.what(), "device 'fpga' is not compiled in: reconfigure with -DHETGLM_ENABLE_XRT=ON");
  }
#endif
  // auto never picks PoCL's CPU device: here (no GPU, no FPGA) it is the cpu backend.
  std::string why;
  EXPECT_EQ(resolve_device("auto", &why), Device::cpu);
  EXPECT_EQ(why, "auto: chose cpu (no CUDA, FPGA or non-CPU OpenCL device is present)");
  EXPECT_EQ(available_devices().front(), Device::cpu);
}

TEST(Registry, MemorySizes) {
  EXPECT_EQ(parse_memory_size("1000", 0), 1000u);
  EXPECT_EQ(parse_memory_size("64M", 0), 64000000u);
  EXPECT_EQ(parse_memory_size("2G", 0), 2000000000u);
  EXPECT_EQ(parse_memory_size("3K", 0), 3000u);
  EXPECT_EQ(parse_memory_size("1Ki", 0), 1024u);
  EXPECT_EQ(parse_memory_size("2Mi", 0), 2u * 1024 * 1024);
  EXPECT_EQ(parse_memory_size("1Gi", 0), 1024u * 1024 * 1024);
  EXPECT_EQ(parse_memory_size("25%", 1000), 250u);
  EXPECT_EQ(parse_memory_size("100%", 1234), 1234u);
  // Bytes as --memory-limit reads them: exact up to 2^64 - 1 (it was capped at 2^63), T and Ti, no fraction of a byte.
  EXPECT_EQ(parse_memory_size("2T", 0), 2000000000000u);
  EXPECT_EQ(parse_memory_size("1Ti", 0), 1099511627776u);
  EXPECT_EQ(parse_memory_size("18446744073709551615", 0), std::numeric_limits<std::size_t>::max());
  for (const auto& [text, msg] : std::vector<std::pair<std::string, std::string>>{
           {"1e3", "--accel-memory: cannot parse '1e3' (expected bytes with an optional K M G T Ki Mi Gi Ti suffix, or "
                   "a percentage such as 25%)"},
           {"1.9", "--accel-memory: a number of bytes must be whole, got '1.9'"},
           {"18446744073709551616",
            "--accel-memory: '18446744073709551616' is too large (at most 18446744073709551615 bytes)"}}) {
    try {
      parse_memory_size(text, 100);
      FAIL() << text;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), msg);
    }
  }
  for (const char* bad : {"", "abc", "12X", "0Q"}) {
    try {
      parse_memory_size(bad, 100);
      FAIL() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--accel-memory: cannot parse '") + bad +
                                           "' (expected bytes with an optional K M G T Ki Mi Gi Ti suffix, or "
                                           "a percentage such as 25%)");
    }
  }
  // Zero and negative sizes parse: the message says what is wrong with them (issue 18).
  for (const char* bad : {"0", "-5M", "0%", "0Gi"}) {
    try {
      parse_memory_size(bad, 100);
      FAIL() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--accel-memory: must be positive, got '") + bad +
                                           "' (a budget of no bytes holds no coordinate: give bytes such as 64M or a "
                                           "percentage such as 25%, or leave --accel-memory out for the device's own "
                                           "memory)");
    }
  }
}

/// Runs the CLI with `args` (stdout discarded); returns the exit code and stderr.
std::pair<int, std::string> run_cli(const std::string& args, const std::string& env = "") {
  const std::string err = test_temp_path("cli.err");
  const std::string cmd = env + " " + HETGLM_CLI + " " + args + " >/dev/null 2>" + err;
  const int st = std::system(cmd.c_str());
  std::string text = read_file(err);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, text};
}

TEST(Cli, BadDeviceConfigurationExitsWith2AndAClearMessage) {
  const std::string data = std::string(HETGLM_DATA_DIR) + "/housing_scale";
  const std::string model = test_temp_path("cli.model");
  const std::string base = "train -q --model ridge --formulation primal " + data + " " + model + " ";
  auto r = run_cli(base + "--device tpu");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: --device: unknown device 'tpu' (expected cpu, opencl, cuda, fpga, fpga-sim or auto)");
  r = run_cli(base + "--device cuda");
  EXPECT_EQ(r.first, 2);
#if !defined(HETGLM_WITH_CUDA)
  EXPECT_EQ(r.second, "error: device 'cuda' is not compiled in: reconfigure with -DHETGLM_ENABLE_CUDA=ON");
#endif
  // housing: 506 samples, ridge trains in the primal: a feature column is 506 * 8 + 32 = 4080 bytes.
  // The error names the formulation that trains, its largest column, the least budget that holds it, and the other
  // formulation where the model has one whose largest column (a sample: 136 bytes) the budget holds.
  r = run_cli(base + "--device cpu --accel-memory 1K");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: --accel-memory: a budget of 1000 bytes is smaller than the largest column of the primal "
            "formulation (a feature: 4080 bytes); give at least 4080 bytes, or --formulation dual, whose largest "
            "column (a sample: 136 bytes) the budget holds");
  // A percentage is named as given (13 features of 4080 bytes: 53040 bytes; 7.7% of them is 4085 bytes).
  r = run_cli(base + "--device cpu --accel-memory 1%");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: --accel-memory: 1% of the primal formulation's 53040 bytes is 531 bytes, smaller than its largest "
            "column (a feature: 4080 bytes); give at least 7.7% (4080 bytes), or --formulation dual, whose largest "
            "column (a sample: 136 bytes) the budget holds");
  r = run_cli(base + "--device cpu --accel-memory 7.7%");
  EXPECT_EQ(r.first, 0) << r.second;
  // The percentage as typed; where LIBLINEAR's -s chose the formulation (-s and --formulation together are refused),
  // its solver of the other one.
  r = run_cli("train -q -s 11 -p 0 " + data + " " + model + " --device cpu --accel-memory .5%");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: --accel-memory: .5% of the primal formulation's 53040 bytes is 266 bytes, smaller than its largest "
            "column (a feature: 4080 bytes); give at least 7.7% (4080 bytes), or -s 12 (the dual formulation), whose "
            "largest column (a sample: 136 bytes) the budget holds");
  // Cross-validation checks each fold's training part (2 folds of 253 rows: a feature of 2056 bytes).
  r = run_cli("train -q --model ridge --formulation primal -v 2 " + data + " --device cpu --accel-memory 1%");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: --accel-memory: in cross-validation each fold's training part resolves the budget and has its own "
            "largest column, so another fold may need more; the first that failed: 1% of the primal formulation's "
            "26728 bytes is 268 bytes, smaller than its largest column (a feature: 2056 bytes); give at least 7.7% "
            "(2056 bytes), or --formulation dual, whose largest column (a sample: 136 bytes) the budget holds");
  // A missing device is said before the budget.
  r = run_cli(base + "--device fpga --accel-memory 1");
  EXPECT_EQ(r.first, 2);
#if defined(HETGLM_WITH_XRT)
  EXPECT_EQ(r.second,
            "error: device 'fpga' needs an xclbin: pass --xclbin FILE (the kernel built from hls/ with Vitis, "
            "docs/fpga.md)");
#else
  EXPECT_EQ(r.second, "error: device 'fpga' is not compiled in: reconfigure with -DHETGLM_ENABLE_XRT=ON");
#endif
  // The Lasso has no dual: no other formulation to offer.
  r = run_cli("train -q --model lasso " + data + " " + model + " --device cpu --accel-memory 1%");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second,
            "error: --accel-memory: 1% of the primal formulation's 53040 bytes is 531 bytes, smaller than its largest "
            "column (a feature: 4080 bytes); give at least 7.7% (4080 bytes)");
  r = run_cli(base + "--device cpu --accel-memory 12Q");
  EXPECT_EQ(r.first, 2);
  EXPECT_EQ(r.second, "error: --accel-memory: cannot parse '12Q' (expected bytes with an optional K M G T Ki Mi Gi "
                      "Ti suffix, or a percentage such as 25%)");
  r = run_cli(base + "--device cpu --accel-memory 25% --cpu-role solve --link-bandwidth 16");
  EXPECT_EQ(r.first, 0) << r.second;
#if defined(HETGLM_WITH_OPENCL)
  if (detail::opencl_device_count(false) > 0) {
    r = run_cli(base + "--device opencl --accel-memory 25%", "HETGLM_OPENCL_OPTIONS=-DHETGLM_TEST_BUILD_FAILURE");
    EXPECT_EQ(r.first, 2);
    EXPECT_NE(r.second.find("error: OpenCL program build failed on '"), std::string::npos) << r.second;
    EXPECT_NE(r.second.find("build failure requested by -DHETGLM_TEST_BUILD_FAILURE"), std::string::npos) << r.second;
  }
#endif
}

#if defined(HETGLM_WITH_OPENCL)
TEST(OpenCl, BuildFailureIsAClearDeviceError) {
  if (detail::opencl_device_count(false) == 0) GTEST_SKIP() << "no OpenCL device";
  BackendOptions o;
  o.opencl_build_options = "-DHETGLM_TEST_BUILD_FAILURE";
  try {
    make_backend("opencl", o);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("OpenCL program build failed on '", 0), 0u) << msg;
    EXPECT_NE(msg.find("build failure requested by -DHETGLM_TEST_BUILD_FAILURE"), std::string::npos) << msg;
  }
}
#endif

}  // namespace
}  // namespace hetglm::testing
