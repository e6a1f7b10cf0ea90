// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's own tests, through the Backend interface only (so only the backend is nvcc-compiled). The
// shared bodies run it too: the epoch conformance of every formulation (tests/backends/test_backends.cpp, case
// "cuda": the exact sequential kernel) and the DuHL optimum (tests/solvers/test_duhl.cpp). Here: the asynchronous
// TPA-SCD kernel inside DuHL against the CPU solver's optimum (float32 paths within 1e-5, docs/conventions.md,
// "Precision"), the budget, and the registry's message without a GPU. Every GPU test skips with the reason when
// cudaGetDeviceCount fails or finds no device (error 35, insufficient driver, on machines without one).
#include <cmath>

#include <thread>

#include "conformance.hpp"
#include "tpa_cases.hpp"
#include "hetglm/backends/cuda_backend.hpp"
#include "hetglm/tpa_schedule.hpp"
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

TEST(CudaBackend, WaveKernelMatchesTheHostEmulation) {
  // The wave schedule on the GPU against its host emulation (the cpu stand-in in float with the same concurrency:
  // the same plan, waves, stale reads and sigma'), two epochs at DuHL's sigma' 1 then 2, for every formulation and
  // both ways of running the waves (one persistent cooperative launch; two launches per wave).
  HETGLM_REQUIRE_GPU();
  for (auto mode : {cuda::CudaOptions::WaveMode::cooperative, cuda::CudaOptions::WaveMode::launches}) {
    SCOPED_TRACE(mode == cuda::CudaOptions::WaveMode::cooperative ? "cooperative" : "launches");
    for (const ModelCase& mc : kEpochModels) {
      SCOPED_TRACE(mc.name());
      auto prob = make_problem(mc);
      with_form(*prob, [&](const auto& form) {
        cuda::CudaOptions co;
        co.tpa_concurrency = 64;
        co.wave_mode = mode;
        auto gpu = cuda::make_cuda_backend({}, co);
        BackendOptions eo;
        eo.cpu_precision = "float";
        eo.tpa_concurrency = 64;
        auto emu = make_backend("cpu", eo);
        std::vector<double> curv;
        const ObjectiveDesc desc = describe_objective(form, curv);
        const index_t m = form.n_coords();
        std::vector<index_t> ws;
        for (index_t i = 0; i < m; ++i) ws.push_back(i);
        std::vector<double> a0(ws.size(), 0.0), v0(static_cast<std::size_t>(form.dim()), 0.0);
        for (Backend* b : {gpu.get(), emu.get()}) {
          b->bind(desc);
          b->load_working_set(ws, *form.A, a0);
          b->set_shared_vector(v0);
          b->run_epochs(1, 42, 1.0);
          EXPECT_TRUE(b->run_epochs(1, 43, 2.0).numerics_ok);
        }
        std::vector<double> ag(ws.size()), ae(ws.size()), vg(v0.size()), ve(v0.size());
        gpu->get_alpha(ag);
        emu->get_alpha(ae);
        gpu->get_shared_vector(vg);
        emu->get_shared_vector(ve);
        double amax = 1, vmax = 1;
        for (double x : ae) amax = std::max(amax, std::fabs(x));
        for (double x : ve) vmax = std::max(vmax, std::fabs(x));
        for (std::size_t p = 0; p < ws.size(); ++p) ASSERT_LE(std::fabs(ag[p] - ae[p]), 1e-3 * amax) << "alpha at " << p;
        for (std::size_t k = 0; k < v0.size(); ++k) ASSERT_LE(std::fabs(vg[k] - ve[k]), 1e-3 * vmax) << "v[" << k << "]";
        EXPECT_NE(gpu->description().find("waves of"), std::string::npos) << gpu->description();
      });
    }
  }
}

TEST(CudaBackend, SafeguardedWavesReachGap1e4OnA9aW7aAndDenseAtTheDevicesConcurrency) {
  // The CI emulation's acceptance (test_tpa_schedule.cpp) on the real kernel, at the device's own concurrency (its
  // resident blocks), in both DuHL roles' sigma'; the unsafeguarded kernel (one wave of all resident blocks at
  // sigma' 1, as first written) is run and printed for the record.
  HETGLM_REQUIRE_GPU();
  for (const char* set : {"a9a", "w7a", "dense"}) {
    SCOPED_TRACE(set);
    auto prob = tpa_set_problem(set);
    with_form(*prob, [&](const auto& form) {
      for (double sigma : {1.0, 2.0}) {
        auto be = cuda::make_cuda_backend({});
        const EmulationRun r = run_rounds(form, *be, "cuda", sigma, static_cast<int>(sigma) * 800, 10);
        EXPECT_TRUE(r.reached) << be->description() << ": relative gap " << r.rel_gap << " after " << r.epochs;
        std::printf("[cuda %s sigma %.0f] %s: %s after %d epochs (rel gap %.3g)\n", set, sigma,
                    be->description().c_str(), r.reached ? "reached 1e-4" : "NOT reached", r.epochs, r.rel_gap);
      }
      cuda::CudaOptions unsafe;
      unsafe.tpa_safeguard = false;
      auto be = cuda::make_cuda_backend({}, unsafe);
      const EmulationRun r = run_rounds(form, *be, "cuda unsafeguarded", 1.0, 200, 10);
      std::printf("[cuda %s unsafeguarded] %s: %s after %d epochs (rel gap %.3g)\n", set, be->description().c_str(),
                  r.reached ? "reached 1e-4" : "NOT reached", r.epochs, r.rel_gap);
    });
  }
}

TEST(CudaBackend, HostAlphaStaysDoubleAndCallsFromAnotherThreadUseTheBackendsDevice) {
  // get_alpha returns the loaded double alpha plus the device's change (never float(alpha)); run_epochs and
  // get_alpha from a fresh std::thread (DuHL's accelerator thread) use the backend's device (cudaSetDevice).
  HETGLM_REQUIRE_GPU();
  const cuda::DeviceProbe dp = cuda::probe();
  auto prob = make_problem({"svm", "mushrooms", 300, 1e-3, Formulation::dual});
  with_form(*prob, [&](const auto& form) {
    cuda::CudaOptions co;
    co.device = dp.count - 1;
    auto be = cuda::make_cuda_backend({}, co);
    std::vector<double> curv;
    be->bind(describe_objective(form, curv));
    std::vector<index_t> ws;
    std::vector<double> a0;
    for (index_t i = 0; i < form.n_coords(); ++i) {
      ws.push_back(i);
      a0.push_back(prob->y[static_cast<std::size_t>(i)] * (i % 3 == 0 ? 0.0 : 1.0 / 3.0));
    }
    be->load_working_set(ws, *form.A, a0);
    be->set_shared_vector(shared_vector(form, a0));
    std::vector<double> got(a0.size());
    be->get_alpha(got);
    for (std::size_t p = 0; p < a0.size(); ++p) ASSERT_EQ(got[p], a0[p]) << "position " << p;
    EpochReport er;
    std::thread t([&] {
      er = be->run_epochs(1, 5, 1.0);
      be->get_alpha(got);
    });
    t.join();
    EXPECT_TRUE(er.numerics_ok);
    std::size_t moved = 0;
    for (std::size_t p = 0; p < a0.size(); ++p) {
      const double b = prob->y[p] * got[p];
      EXPECT_GE(b, 0.0);
      EXPECT_LE(b, 1.0);
      moved += got[p] != a0[p];
    }
    EXPECT_GT(moved, 0u);
  });
}

TEST(CudaBackend, DeviceCopyIsTimed) {
  HETGLM_REQUIRE_GPU();
  const double s = cuda::time_device_copy(std::size_t(256) << 20, 5);
  EXPECT_GT(s, 0.0);
  std::printf("[cuda] device-to-device copy of 256 MiB: %.3g ms, %.0f GB/s (read + write)\n", s * 1e3,
              2.0 * double(std::size_t(256) << 20) / s / 1e9);
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
