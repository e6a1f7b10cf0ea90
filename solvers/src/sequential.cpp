// SPDX-License-Identifier: Apache-2.0
// The sequential SCD / SDCA solver (algorithm and sources in sequential.hpp).
#include "hetglm/solvers/sequential.hpp"

#include <limits>
#include <numeric>

#include "hetglm/rng.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "shrinking.hpp"

namespace hetglm {

namespace {
// Box duals (hinge, squared hinge): the shrinking of solve_sequential, in units of G (margins). Chosen on a9a, w7a
// and mushrooms (hinge, time to suboptimality 1e-3 and 1e-4; docs/parallel-cpu.md).
constexpr double kPgTol0 = 0.3;     // the first tolerance on the active samples' violations (pg_max - pg_min)
constexpr double kPgTighten = 0.3;  // its factor after a certificate that it triggered did not reach tol
constexpr double kKeepShare = 0.05; // a sample at an end stays active at a certificate while its G is within this
                                    // share of the last epoch's largest violation
}  // namespace

template <class Form>
SolveResult solve_sequential(const Form& form, const SolverOptions& options) {
  const index_t m = form.n_coords();
  const CsrMatrix& A = *form.A;
  SolveResult res;
  EpochDriver driver(options, res, Form::formulation);
  driver.initial_alpha(form, res.alpha);
  std::vector<double> v = shared_vector(form, res.alpha);
  std::vector<double> gaps(static_cast<std::size_t>(m));
  SplitMix64 rng(options.seed);
  double* alpha = res.alpha.data();
  ActiveSet active;
  active.reset(0, m);
  std::vector<index_t> order = active.coords();
  CertificateSchedule schedule(options.certificate_every);

  // Box duals (hinge, squared hinge) also shrink within the interval, as LIBLINEAR does (Hsieh et al., ICML 2008,
  // Sec. 3.2; liblinear's solve_l2r_l1l2_svc): a sample at an end of its interval whose G points out of it by more
  // than the largest violation of the previous epoch (pg_max_old / pg_min_old) leaves the active set
  // (order[0, n_active)) until the next certificate. The certificate then selects by the gaps (shrinking.hpp), except
  // that a sample at an end whose G is within kKeepShare of that violation stays active: the gap rule alone left out
  // every sample with margin >= 1 (gap 0), however slightly it met its margin, and w7a stayed at suboptimality 8e-2
  // for 60 epochs. When the active samples' violations all lie within pg_tol, a certificate follows at once, and
  // pg_tol shrinks by kPgTighten when that certificate does not reach tol. The stop is still the exact certificate.
  constexpr bool kBoxDual = [] {
    if constexpr (requires { Form::kBoxDual; }) return Form::kBoxDual;
    else return false;
  }();
  const bool pg_shrinking = kBoxDual && options.shrinking;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double pg_max_old = kInf, pg_min_old = -kInf, pg_tol = kPgTol0;
  std::size_t n_active = order.size();
  bool certify_now = false;  // the active samples' violations are within pg_tol
  std::vector<double> inners(pg_shrinking ? static_cast<std::size_t>(m) : 0);  // r_i at the last certificate

  int epoch = 0;
  bool exact = true;  // `cert` certifies (alpha, v = A alpha)
  Certificate cert = certificate(form, res.alpha, v);
  while (driver.budget_left(epoch)) {
    if constexpr (kBoxDual) {
      if (pg_shrinking) {
        shuffle(std::span<index_t>(order.data(), n_active), rng);
        double pg_max = -kInf, pg_min = kInf;
        for (std::size_t p = 0; p < n_active; ++p) {
          const index_t i = order[p];
          const double r = form.inner(i, v.data());
          const double G = form.dual_gradient(i, alpha[i], r);
          double pg = G;
          if (const int end = form.dual_bound(i, alpha[i]); end != 0) {
            if (end < 0 ? G > pg_max_old : G < pg_min_old) {  // out of the active set until the next certificate
              std::swap(order[p], order[--n_active]);
              --p;
              continue;
            }
            pg = end < 0 ? std::min(G, 0.0) : std::max(G, 0.0);
          }
          pg_max = std::max(pg_max, pg);
          pg_min = std::min(pg_min, pg);
          if (pg == 0) continue;
          const double a_new = form.step(i, alpha[i], r, 1.0);
          if (a_new != alpha[i]) {
            row_axpy(A, i, a_new - alpha[i], v.data());
            alpha[i] = a_new;
          }
        }
        if (pg_max - pg_min <= pg_tol) certify_now = true;
        pg_max_old = pg_max > 0 ? pg_max : kInf;
        pg_min_old = pg_min < 0 ? pg_min : -kInf;
      }
    }
    if (!pg_shrinking) {
      shuffle(std::span<index_t>(order), rng);
      for (index_t i : order) update_coordinate(form, i, alpha, v.data(), 1.0);
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
        if (certify_now) pg_tol *= kPgTighten;  // the violations were within pg_tol, the gap not within tol
        certify_now = false;
        active.update(0, m, gaps, cert.gap, target, true, [&](index_t i) {
          const int end = form.dual_bound(i, alpha[i]);
          if (end == 0) return false;
          const double G = form.dual_gradient(i, alpha[i], inners[static_cast<std::size_t>(i)]);
          return end < 0 ? G <= kKeepShare * pg_max_old : G >= kKeepShare * pg_min_old;
        });
      }
    }
    if (!pg_shrinking) active.update(0, m, gaps, cert.gap, target, options.shrinking);
    order = active.coords();
    n_active = order.size();
    offset_t nnz = 0;
    for (index_t i : order) nnz += A.offsets[i + 1] - A.offsets[i];
    schedule.after_certificate(epoch, cert.gap, target, A.nnz() > 0 ? double(nnz) / double(A.nnz()) : 1.0);
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
