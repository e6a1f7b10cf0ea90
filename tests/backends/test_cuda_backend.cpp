// SPDX-License-Identifier: Apache-2.0
// GPU conformance of the CUDA backend, through the Backend interface only (so only the backend is nvcc-compiled):
// the same checks as test_backends.cpp's conformance body (reference epoch of conformance.hpp, sigma' handling,
// working-set swaps, device gaps) for the exact sequential kernel, and the asynchronous TPA-SCD kernel inside DuHL
// against the CPU solver's optimum (float32 paths within 1e-5, conventions.md). Every GPU test skips with the
// reason when cudaGetDeviceCount fails or finds no device (error 35, insufficient driver, on machines without one).
// The registry tests always run.
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

TEST(CudaBackend, SequentialEpochsSwapsAndGapsMatchTheReferenceEpoch) {
  HETGLM_REQUIRE_GPU();
  const double tol = 2e-4;  // float32 (test_backends.cpp uses the same bound for its float32 backends)
  for (const ModelCase& mc : kEpochModels) {
    SCOPED_TRACE(mc.model);
    auto prob = make_problem(mc.model, mc.file, mc.rows, mc.lambda);
    with_form(*prob, [&](const auto& form) {
      const CsrMatrix& A = *form.A;
      const index_t m = form.n_coords();
      cuda::CudaOptions co;
      co.sequential = true;
      auto be = cuda::make_cuda_backend({}, co);
      EXPECT_EQ(be->device(), Device::cuda);
      std::vector<double> curv;
      const ObjectiveDesc desc = describe_objective(form, curv);
      be->bind(desc);
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
      auto compare = [&](const std::vector<index_t>& ws) {
        std::vector<double> got(ws.size()), gv(v.size());
        be->get_alpha(got);
        be->get_shared_vector(gv);
        double amax = 0, vmax = 0;
        for (double a : alpha) amax = std::max(amax, std::fabs(a));
        for (double x : v) vmax = std::max(vmax, std::fabs(x));
        for (std::size_t p = 0; p < ws.size(); ++p)
          ASSERT_LE(std::fabs(got[p] - alpha[ws[p]]), tol * std::max(1.0, amax)) << "alpha at position " << p;
        for (std::size_t k = 0; k < v.size(); ++k)
          ASSERT_LE(std::fabs(gv[k] - v[k]), tol * std::max(1.0, vmax)) << "v[" << k << "]";
        std::vector<double> gaps(ws.size());
        ASSERT_TRUE(be->coordinate_gaps(gaps));
        for (std::size_t p = 0; p < ws.size(); ++p) {
          const double ref = form.gap(ws[p], alpha[ws[p]], form.u(ws[p], v.data()));
          ASSERT_LE(std::fabs(gaps[p] - ref), 1e-3 * std::max(1e-3, std::fabs(ref)) + 1e-5 * (1 + desc.bound))
              << "gap at position " << p;
        }
      };
      compare(ws1);
      // Swap to ws2: only the columns not resident travel; alpha of the new set comes from the host.
      std::vector<double> aws2;
      std::size_t fresh = 0;
      for (index_t i : ws2) {
        aws2.push_back(alpha[i]);
        fresh += (i % 2 != 0) ? 1 : 0;
      }
      const LoadReport r2 = be->load_working_set(ws2, A, aws2);
      EXPECT_EQ(r2.columns_copied, fresh);
      be->set_shared_vector(v);
      be->run_epochs(2, 44, 1.0);
      reference_epoch(form, ws2, alpha, v, 44, 0, 1.0);
      reference_epoch(form, ws2, alpha, v, 44, 1, 1.0);
      compare(ws2);
    });
  }
}

TEST(CudaBackend, AsyncTpaScdInDuhlReachesTheCpuOptimum) {
  HETGLM_REQUIRE_GPU();
  for (const ModelCase& mc : kEpochModels) {
    SCOPED_TRACE(mc.model);
    auto prob = make_problem(mc.model, mc.file, mc.rows, mc.lambda);
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
  auto prob = make_problem("ridge", "housing_scale", 506, 1e-2);
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
