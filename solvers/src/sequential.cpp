// SPDX-License-Identifier: Apache-2.0
// The sequential SCD / SDCA solver (algorithm and sources in sequential.hpp).
#include "hetglm/solvers/sequential.hpp"

#include <numeric>

#include "hetglm/rng.hpp"
#include "hetglm/solvers/epoch_driver.hpp"

namespace hetglm {

template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options) {
  const index_t m = form.n_coords();
  SolveResult res;
  EpochDriver driver(options, res, Form::formulation);
  driver.initial_alpha(form, res.alpha);
  std::vector<double> v = shared_vector(form, res.alpha);
  std::vector<index_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), index_t{0});
  SplitMix64 rng(options.seed);
  double* alpha = res.alpha.data();

  int epoch = 0;
  Certificate cert = certificate(form, res.alpha, v);  // v = A alpha: exact
  while (driver.budget_left(epoch)) {
    shuffle(std::span<index_t>(order), rng);
    for (index_t i : order) update_coordinate(form, i, alpha, v.data(), 1.0);
    ++epoch;
    // Re-synchronize v = A alpha in double before certifying: incremental updates drift by rounding, and the
    // Lipschitzed L1 gap multiplies that drift by B. The certificate is then exact for (alpha, v).
    // Test hook (options.hpp) before the re-synchronization: a non-finite alpha_i then reaches v and the certificate.
    if (options.after_epoch) options.after_epoch(epoch, std::span<double>(res.alpha), std::span<double>(v));
    v = shared_vector(form, res.alpha);
    cert = certificate(form, res.alpha, v);
    if (driver.record(epoch, cert, res.alpha, v) != EpochDriver::Stop::none) break;
  }
  // v was re-synchronized with alpha after the last epoch: this certificate is exact for the returned model.
  driver.finish(form, cert, v, epoch);
  return res;
}

// One instantiation per form; the list comes from the tables of glm_math.h (HETGLM_FOR_EACH_FORM, forms.hpp).
#define HETGLM_INSTANTIATE_SEQUENTIAL(...) template SolveResult solve_sequential(const __VA_ARGS__&, const SolverOptions&);
HETGLM_FOR_EACH_FORM(HETGLM_INSTANTIATE_SEQUENTIAL)
#undef HETGLM_INSTANTIATE_SEQUENTIAL

}  // namespace hetglm
