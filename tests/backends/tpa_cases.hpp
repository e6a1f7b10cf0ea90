// SPDX-License-Identifier: Apache-2.0
// Shared by the wave-schedule tests (test_tpa_schedule.cpp: the host emulation, in CI) and the CUDA tests
// (test_cuda_backend.cpp: the real kernel on a GPU): the problems (L2 logistic regression in the dual at C = 1 on the
// whole of a9a and w7a, and a dense Gaussian set) and the round loop that runs a backend to relative gap 1e-4.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "conformance.hpp"
#include "hetglm/solvers/duhl.hpp"

namespace hetglm::testing {

/// L2 logistic regression in the dual at C = 1 on a whole bundled set.
inline std::unique_ptr<TestProblem> logistic_problem(const char* file) {
  const index_t n = bundled(file).X.n_rows;
  return make_problem({"logistic", file, n, 1.0 / double(n), Formulation::dual});
}

/// A dense Gaussian set: x_ij ~ N(0, 1/d), labels from a planted model.
inline std::unique_ptr<TestProblem> dense_problem(index_t n, index_t d) {
  auto p = std::make_unique<TestProblem>();
  p->mc = {"logistic", "dense", n, 1.0 / double(n), Formulation::dual};
  p->spec = model_spec("logistic");
  p->formulation = Formulation::dual;
  SplitMix64 rng(17);
  auto normal = [&]() {
    const double u1 = (double(rng.next() >> 11) + 0.5) * 0x1.0p-53, u2 = (double(rng.next() >> 11) + 0.5) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  std::vector<double> w(static_cast<std::size_t>(d));
  for (double& x : w) x = normal();
  CsrMatrix& X = p->X;
  X.n_rows = n;
  X.n_cols = d;
  for (index_t i = 0; i < n; ++i) {
    double z = 0;
    for (index_t j = 0; j < d; ++j) {
      const auto x = static_cast<float>(normal() / std::sqrt(double(d)));
      X.indices.push_back(j);
      X.values.push_back(x);
      z += x * w[j];
    }
    X.offsets.push_back(static_cast<offset_t>(X.indices.size()));
    p->y.push_back(z > 0 ? 1.0 : -1.0);
  }
  p->c.assign(static_cast<std::size_t>(n), 1.0);
  p->lambda = 1.0 / double(n);
  p->pd.X = &p->X;
  p->pd.row_sq_norm = row_sq_norms(p->X);
  return p;
}

struct EmulationRun {
  bool reached = false;
  int epochs = 0;
  double rel_gap = 0;
  std::string schedule;
};

/// Runs backend `be` (an emulated or a real TPA-SCD device) on the whole problem in rounds as DuHL does at a 100%
/// budget: each round the host's double alpha and v = A alpha are loaded, the device runs `every` epochs at DuHL's
/// `sigma`, and the exact relative gap is computed; at most `max_epochs` epochs, stopping at relative gap 1e-4. At
/// sigma' 2 this is the solve role with a CPU part that does nothing, so it needs about twice the epochs.
template <class Form>
EmulationRun run_rounds(const Form& form, Backend& be, const std::string& schedule, double sigma, int max_epochs,
                        int every) {
  std::vector<double> curv;
  be.bind(describe_objective(form, curv));
  const index_t m = form.n_coords();
  std::vector<index_t> ws(static_cast<std::size_t>(m));
  for (index_t i = 0; i < m; ++i) ws[static_cast<std::size_t>(i)] = i;
  std::vector<double> alpha(static_cast<std::size_t>(m), 0.0), v(static_cast<std::size_t>(form.dim()), 0.0);
  EmulationRun run;
  run.schedule = schedule;
  for (int e = 0; e < max_epochs; e += every) {
    be.load_working_set(ws, *form.A, alpha);  // resident after the first round: nothing travels
    be.set_shared_vector(v);
    const EpochReport er = be.run_epochs(every, 1000 + static_cast<std::uint64_t>(e), sigma);
    run.epochs = e + every;
    be.get_alpha(alpha);
    v = shared_vector(form, alpha);
    run.rel_gap = relative_gap(certificate(form, alpha, v));
    if (!er.numerics_ok || !std::isfinite(run.rel_gap)) break;
    if (run.rel_gap <= 1e-4) {
      run.reached = true;
      break;
    }
  }
  if (std::getenv("HETGLM_TEST_VERBOSE"))
    std::printf("  %s sigma %.0f: %s, rel gap %.3g after %d epochs\n", run.schedule.c_str(), sigma,
                run.reached ? "reached 1e-4" : "stalled", run.rel_gap, run.epochs);
  return run;
}


/// The three sets of the wave-schedule acceptance: a9a, w7a (whole, C = 1) and "dense" (2000 x 50 Gaussian).
inline std::unique_ptr<TestProblem> tpa_set_problem(const std::string& name) {
  return name == "dense" ? dense_problem(2000, 50) : logistic_problem(name.c_str());
}

}  // namespace hetglm::testing
