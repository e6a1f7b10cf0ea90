// SPDX-License-Identifier: Apache-2.0
// The sequential SCD / SDCA solver (algorithm and sources in sequential.hpp).
#include "hetglm/solvers/sequential.hpp"

#include <limits>
#include <numeric>

#include "hetglm/rng.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "shrinking.hpp"

namespace hetglm {

template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options) {
  const index_t m = form.n_coords();
  const CsrMatrix& A = *form.A;
  SolveResult res;
  EpochDriver driver(options, res, Form::formulation);
  if (form.lo) driver.float64_values();
  driver.initial_alpha(form, res.alpha);
  std::vector<double> v = shared_vector(form, res.alpha);
  std::vector<double> gaps(static_cast<std::size_t>(m));
  SplitMix64 rng(options.seed);
  double* alpha = res.alpha.data();
  ActiveSet active;
  active.reset(0, m);
  std::vector<index_t> order = active.coords();
  CertificateSchedule schedule(options.certificate_every);

  // Box duals (hinge, squared hinge): the margin rule on top of the gap rule (shrinking.hpp MarginRule). The
  // active samples are order[0, n_active); one that leaves in an epoch is swapped behind them.
  constexpr bool kBoxDual = Form::kBoxDual;
  const bool pg_shrinking = kBoxDual && options.shrinking;
  MarginRule rule;
  std::size_t n_active = order.size();
  bool certify_now = false;  // the active samples' violations are within rule.tol
  std::vector<double> inners(pg_shrinking ? static_cast<std::size_t>(m) : 0);  // r_i at the last certificate

  int epoch = 0;
  // `cert` certifies (alpha, v = A alpha). No certificate of the start: the first certified epoch replaces it;
  // where no epoch runs (max_epochs 0), the final one below makes it.
  bool exact = false;
  Certificate cert;
  while (driver.budget_left(epoch)) {
    if constexpr (kBoxDual) {
      if (pg_shrinking) {
        shuffle(std::span<index_t>(order.data(), n_active), rng);
        double pg_max = -std::numeric_limits<double>::infinity(), pg_min = std::numeric_limits<double>::infinity();
        for (std::size_t p = 0; p < n_active; ++p) {
          prefetch_ahead(form, order.data(), p, n_active, alpha);
          if (!rule.step(form, order[p], alpha, v.data(), 1.0, pg_max, pg_min)) {  // out until the next certificate
            std::swap(order[p], order[--n_active]);
            --p;
          }
        }
        certify_now = rule.epoch_done(pg_max, pg_min);
      }
    }
    if (!pg_shrinking) {
      shuffle(std::span<index_t>(order), rng);
      update_coordinates(form, order.data(), order.size(), alpha, v.data(), 1.0);
    }
    ++epoch;
    exact = false;
    // Test hook (options.hpp) before the re-synchronization: a non-finite alpha_i then reaches v and the certificate.
    if (options.after_epoch) options.after_epoch(epoch, std::span<double>(res.alpha), std::span<double>(v));
    driver.check_state(epoch, res.alpha, v);
    const bool interrupt = driver.poll_interrupt();
    if (!schedule.due(epoch) && !certify_now && !interrupt && driver.budget_left(epoch)) continue;
    // Re-synchronize v = A alpha in double before certifying: incremental updates drift by rounding, and the
    // Lipschitzed L1 gap multiplies that drift by B. The certificate is then exact for (alpha, v), and it refreshes
    // every coordinate's gap.
    v = shared_vector(form, res.alpha);
    cert = form.finish(coordinate_terms(form, 0, m, alpha, v.data(), gaps.data(), pg_shrinking ? inners.data() : nullptr),
                       shared_terms(form, 0, form.dim(), v.data()));
    exact = true;
    if (driver.record(epoch, cert, res.alpha, v) != EpochDriver::Stop::none) break;
    const double target = options.tol * std::fabs(cert.primal);
    if constexpr (kBoxDual) {
      if (pg_shrinking) {
        if (certify_now) rule.missed();
        certify_now = false;
        active.update(0, m, gaps, cert.gap, target, true, [&](index_t i) {
          return rule.keep(form, i, alpha[i], inners[static_cast<std::size_t>(i)]);
        });
      }
    }
    if (!pg_shrinking) active.update(0, m, gaps, cert.gap, target, options.shrinking);
    order = active.coords();
    n_active = order.size();
    schedule.after_certificate(epoch, cert.gap, target, nnz_share(A, coords_nnz(A, order)));
  }
  if (!exact) {
    v = shared_vector(form, res.alpha);
    cert = certificate(form, res.alpha, v);
  }
  driver.finish(form, cert, v, epoch);
  return res;
}

// One instantiation per form; the list comes from the tables of glm_math.h (HETGLM_FOR_EACH_FORM, forms.hpp).
#define HETGLM_INSTANTIATE_SEQUENTIAL(...) template SolveResult solve_sequential(const __VA_ARGS__&, const SolverOptions&);
HETGLM_FOR_EACH_FORM(HETGLM_INSTANTIATE_SEQUENTIAL)
#undef HETGLM_INSTANTIATE_SEQUENTIAL

}  // namespace hetglm
