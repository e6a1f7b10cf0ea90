// SPDX-License-Identifier: Apache-2.0
// Sequential SCD / SDCA solver (algorithm in sequential.hpp).
#include "hetglm/solvers/sequential.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include "hetglm/error.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/numeric_guard.hpp"

namespace hetglm {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }


}  // namespace

template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options) {
  const auto t0 = Clock::now();
  const index_t m = form.n_coords();
  const CsrMatrix& A = *form.A;
  SolveResult res;
  res.alpha.assign(static_cast<std::size_t>(m), 0.0);
  std::vector<double> v(static_cast<std::size_t>(form.dim()), 0.0);
  std::vector<index_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), index_t{0});
  SplitMix64 rng(options.seed);
  double* alpha = res.alpha.data();
  // A non-finite certificate names the first non-finite alpha_i (w_j in the primal) or v_k (numeric_guard.hpp).
  const char* alpha_name = Form::formulation == Formulation::dual ? "alpha" : "w";
  auto check_finite = [&](const Certificate& c, int e) { check_finite_certificate(c, e, res.alpha, v, alpha_name); };

  auto record = [&](int epoch, const Certificate& c) {
    EpochRecord r{epoch, since(t0), c.primal, c.dual, c.gap, relative_gap(c)};
    res.history.push_back(r);
    if (options.on_epoch) options.on_epoch(r);
    return r;
  };

  int epoch = 0;
  while (epoch < options.max_epochs) {
    shuffle(std::span<index_t>(order), rng);
    for (index_t i : order) {
      const double a_new = form.coordinate_step(i, alpha[i], v.data(), 1.0);
      const double delta = a_new - alpha[i];
      if (delta == 0) continue;
      alpha[i] = a_new;
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) v[A.indices[k]] += delta * double(A.values[k]);
    }
    ++epoch;
    // Re-synchronize v = A alpha in double before certifying: incremental updates drift by rounding, and the
    // Lipschitzed L1 gap multiplies that drift by B. The certificate is then exact for (alpha, v).
    // Test hook (options.hpp) before the re-synchronization: a non-finite alpha_i then reaches v and the certificate.
    if (options.after_epoch) options.after_epoch(epoch, std::span<double>(res.alpha), std::span<double>(v));
    v = shared_vector(form, res.alpha);
    const Certificate c = form.certificate(res.alpha, v);
    check_finite(c, epoch);
    const EpochRecord r = record(epoch, c);
    if (r.rel_gap <= options.tol) {
      res.converged = true;
      break;
    }
    if (options.should_stop && options.should_stop()) {
      res.interrupted = true;
      break;
    }
  }
  // v was re-synchronized with alpha after the last epoch: this certificate is exact for the returned model.
  res.certificate = form.certificate(res.alpha, v);
  check_finite(res.certificate, epoch);
  res.converged = certified(res.certificate, options.tol);
  res.w = form.weights(res.alpha, v);
  res.epochs = epoch;
  res.seconds = since(t0);
  return res;
}

// One instantiation per form; the list lives in forms.hpp (HETGLM_FOR_EACH_FORM) so every solver mirrors it.
#define HETGLM_INSTANTIATE_SEQUENTIAL(...) template SolveResult solve_sequential(const __VA_ARGS__&, const SolverOptions&);
HETGLM_FOR_EACH_FORM(HETGLM_INSTANTIATE_SEQUENTIAL)
#undef HETGLM_INSTANTIATE_SEQUENTIAL

}  // namespace hetglm
