// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's own tests, through the Backend interface only (so only the backend is nvcc-compiled). The
// shared bodies run it too: the epoch conformance of every formulation (tests/backends/test_backends.cpp, case
// "cuda": the exact sequential kernel) and the DuHL optimum (tests/solvers/test_duhl.cpp). Here: the asynchronous
// TPA-SCD kernel inside DuHL against the CPU solver's optimum (float32 paths within 1e-5, docs/conventions.md,
// "Precision"), the budget, and the registry's message without a GPU. Every GPU test skips with the reason when
// cudaGetDeviceCount fails or finds no device (error 35, insufficient driver, on machines without one).
#include <cmath>

#include "conformance.hpp"
#include "hetglm/backends/cuda_backend.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/sequential.hpp"

namespace hetglm::testing {
namespace {

#define HETGLM_REQUIRE_GPU()                                                              \
  do {                                                                                    \
    const cuda::DeviceProbe probe_ = cuda::probe();                                       \
    if (probe_.count == 0) GTEST_SKIP() << "no CUDA device is present: " << probe_.reason; \
  } while (0)


TEST(CudaRegistry, CompiledInAndClearErrorWithoutDevice) {
  const auto compiled = compiled_devices();
  EXPECT_NE(std::find(compiled.begin(), compiled.end(), Device::cuda), compiled.end());
  const cuda::DeviceProbe p = cuda::probe();
  if (p.count > 0) GTEST_SKIP() << "a CUDA device is present: the no-device message is not reachable";
  EXPECT_FALSE(p.reason.empty());
  try {
    make_backend("cuda");
    FAIL() << "make_backend(\"cuda\") succeeded without a device";
  } catch (const UnsupportedDevice& e) {
    EXPECT_EQ(std::string(e.what()).rfind("device 'cuda': no CUDA device is present (", 0), 0u) << e.what();
  }
  const auto avail = available_devices();
  EXPECT_EQ(std::find(avail.begin(), avail.end(), Device::cuda), avail.end());
  EXPECT_NE(resolve_device("auto"), Device::cuda);
}

TEST(CudaBackend, AsyncTpaScdInDuhlReachesTheCpuOptimum) {
  HETGLM_REQUIRE_GPU();
  for (const ModelCase& mc : kEpochModels) {
    SCOPED_TRACE(mc.name());
    auto prob = make_problem(mc);
    with_form(*prob, [&](const auto& form) {
      SolverOptions ref_opt;
      ref_opt.tol = 1e-10;
      ref_opt.max_epochs = 20000;
      const double P_ref = solve_sequential(form, ref_opt).certificate.primal;
      for (const char* budget : {"25%", "100%"}) {
        SCOPED_TRACE(budget);
        BackendOptions bo;
        bo.memory_budget = parse_memory_size(budget, data_bytes(*form.A));
        auto be = cuda::make_cuda_backend(bo);
        SolverOptions so;
        so.tol = 1e-6;
        so.max_epochs = 1000;
        so.seed = 3;
        const DuhlResult r = solve_duhl(form, *be, so, DuhlOptions{});
        const double diff = std::fabs(r.certificate.primal - P_ref) / std::fabs(P_ref);
        EXPECT_LE(diff, 1e-5) << "P " << r.certificate.primal << " vs " << P_ref << " after " << r.epochs << " rounds";
        ASSERT_FALSE(r.rounds.empty());
        EXPECT_EQ(r.rounds.front().swaps, r.rounds.front().working_set);
      }
    });
  }
}

TEST(CudaBackend, BudgetHonoursAccelMemoryAndRejectsOversizedWorkingSets) {
  HETGLM_REQUIRE_GPU();
  BackendOptions bo;
  bo.memory_budget = 1000;
  auto be = cuda::make_cuda_backend(bo);
  EXPECT_EQ(be->memory_budget(), 1000u);
  auto prob = make_problem({"ridge", "housing_scale", 506, 1e-2, Formulation::primal});
  with_form(*prob, [&](const auto& form) {
    std::vector<double> curv;
    be->bind(describe_objective(form, curv));
    std::vector<index_t> all;
    for (index_t i = 0; i < form.n_coords(); ++i) all.push_back(i);
    EXPECT_THROW(be->load_working_set(all, *form.A, std::vector<double>(all.size(), 0.0)), InvalidArgument);
  });
  auto dflt = cuda::make_cuda_backend({});
  EXPECT_GT(dflt->memory_budget(), 0u);
  EXPECT_NE(dflt->description().find("CUDA"), std::string::npos);
}

}  // namespace
}  // namespace hetglm::testing
