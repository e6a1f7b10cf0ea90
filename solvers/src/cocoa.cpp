// SPDX-License-Identifier: Apache-2.0
// CoCoA+ across MPI ranks (algorithm and sources in cocoa.hpp).
#include "hetglm/solvers/cocoa.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/aggregation.hpp"
#include "hetglm/solvers/best_primal.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "hetglm/solvers/parallel_cpu.hpp"
#include "executor.hpp"
#include "shrinking.hpp"

namespace hetglm {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr int kGridPoints = 8;  // geometric trial steps over the plan's range (plus 1, (1 + far)/2, far)

int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of_world() {
  int k = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &k);
  return k;
}

/// The global certificate for (alpha, v): this rank's coordinate terms and its share of the shared-vector terms, one
/// MPI_Allreduce of the sums plus `local_error` and one of the maxima; `any_error` receives whether some rank raised its
/// flag. With `best` (dual): the certificate's P is that of the kept primal point after this round (best_primal.hpp),
/// its loss sums at the mixes reduced in the same allreduce (the certificate's pass writes the iterate's margins to
/// best->margins()). With `gaps`, each of this rank's coordinates' share of P - D is written there (shrinking).
template <class Form>
Certificate global_certificate(const Form& form, const CocoaOptions& co, std::span<const double> alpha,
                               std::span<const double> v, int local_error, int& any_error,
                               BestPrimal<Form>* best = nullptr, double* gaps = nullptr) {
  CertificateTerms coords, shared;
  constexpr int K = CertificateTerms::kSums, B = BestPrimal<Form>::kSums;
  double s[2 * K + 1 + B] = {};
  if (!local_error) {
    double* margins = best ? best->margins() : nullptr;
    const double* v2 = best ? best->average_to_refresh() : nullptr;  // the kept average's margins in the same pass
    double* margins2 = v2 ? best->average_margins() : nullptr;
    // A rank with threads (--threads T > 1, the SySCD local solver) computes its terms on them.
    coords = co.local_threads > 1
                 ? in_solver_arena(co.local_threads, [&](int) {
                     return parallel_coordinate_terms(form, alpha.data(), v.data(), gaps, margins, v2, margins2);
                   })
                 : coordinate_terms(form, 0, form.n_coords(), alpha.data(), v.data(), gaps, margins, v2, margins2);
    if (v2) best->average_refreshed();
    shared = shared_terms(form, co.shared_lo, co.shared_hi, v.data());
    if constexpr (Form::formulation == Formulation::dual)
      if (best) best->loss_sums(s + 2 * K + 1);
  }
  // The sums of both term sets, the error flag and the mixes' loss sums in one MPI_SUM allreduce; the maxima (smax)
  // in one MPI_MAX.
  coords.sums(s);
  shared.sums(s + K);
  s[2 * K] = double(local_error);
  MPI_Allreduce(MPI_IN_PLACE, s, 2 * K + 1 + (best ? B : 0), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double mx[2] = {coords.smax, shared.smax};
  MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  any_error = s[2 * K] > 0;
  const Certificate c =
      form.finish(CertificateTerms::from_sums(s, mx[0]), CertificateTerms::from_sums(s + K, mx[1]));
  if constexpr (Form::formulation == Formulation::dual)
    if (best && !any_error) return best->keep(c, std::span<const double>(s + 2 * K + 1, B), v);
  return c;
}
}  // namespace

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const TrainingError*>(&e)) return 1;
  if (dynamic_cast<const Error*>(&e)) return 2;
  return 1;
}

int agree_on_failure(int code, const std::string& msg, bool rank0_only) {
  const int rank = rank_of_world(), size = size_of_world();
  if (code != 0 && (!rank0_only || rank == 0)) {
    if (rank0_only || size == 1)
      eprint("error: {}\n", msg);
    else
      eprint("error: [rank {} of {}] {}\n", rank, size, msg);
    std::fflush(stderr);
  }
  int global = code;
  MPI_Allreduce(&code, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (global != 0 && code == 0 && rank == 0) {
    eprint("error: another rank failed (its message is above); no model written\n");
    std::fflush(stderr);
  }
  return global;
}

template <class Form>
CocoaResult solve_cocoa(const Form& form, const SolverOptions& o, const CocoaOptions& co) {
  const int rank = rank_of_world(), K = size_of_world();
  const double sigma = K;  // CoCoA+: sigma' = gamma K, gamma = 1
  // The rank's local solver: the sequential loop, or SySCD on local_threads threads, whose steps take sigma' = K x T
  // (SyscdLocalSolver, parallel_cpu.hpp; docs/mpi.md, "The hierarchy").
  std::unique_ptr<SyscdLocalSolver<Form>> local;
  if (co.local_threads > 1) {
    SolverOptions lo = o;
    lo.n_threads = co.local_threads;
    lo.seed = o.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank);
    local = std::make_unique<SyscdLocalSolver<Form>>(form, lo, sigma);
  }
  // The merge (aggregation.hpp cocoa_merge_plan): CoCoA+ over the blocks (K ranks x T replicas; local->step_sigma()
  // = K T), or, for the box duals and the logistic dual with adaptive aggregation and the sequential local loop,
  // local steps at sigma' = 1 and gamma searched from 1/K up.
  const MergePlan plan =
      cocoa_merge_plan(Form::kBoxDual, Form::formulation == Formulation::dual && Form::LossP::id == Loss::logistic, K,
                       local ? co.local_threads : 1, o.adaptive_aggregation,
                       co.nnz_per_rank > 0 ? co.nnz_per_rank / double(form.dim()) : INFINITY);
  const double step_sigma = plan.step_sigma;  // the sequential local loop's sigma'
  const index_t m = form.n_coords();
  const std::size_t dim = static_cast<std::size_t>(form.dim());
  CocoaResult out;
  EpochDriver driver(o, out, Form::formulation);
  if (form.lo) driver.float64_values();  // (the trainer's ranks agree on reading them, distributed.cpp)
  // Across ranks a stall is CoCoA+'s (the box duals' merged steps creep at tight tolerances: the hinge on mushrooms
  // at K = 2 stops at about 1e-7 where one process reaches 1e-12), not the values' rounding.
  if (K > 1)
    driver.stall_cause(fmt::format("with {} ranks (CoCoA+'s merged rounds stopped gaining here; one process, or "
                                   "fewer ranks, may reach it)",
                                   K));
  out.alpha.assign(static_cast<std::size_t>(m), 0.0);
  std::vector<double>& alpha = out.alpha;
  std::vector<double> v(dim, 0.0), p_old(dim, 0.0), p_new, dv(dim), v_loc;
  std::vector<index_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), index_t{0});
  SplitMix64 rng(o.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank));
  // Adaptive aggregation (aggregation.hpp): the new point alpha_old + gamma (alpha - alpha_old) + beta step, step =
  // the previous round's step, over a fixed grid of (gamma, beta); their partial objectives are summed over the
  // ranks by one allreduce, and every rank then picks the same pair.
  const bool adaptive = o.adaptive_aggregation && plan.searches();
  // The lookahead (aggregation.hpp kLookaheadChunks): the rank's epoch in parts, after each of which v_loc takes a
  // share of `others`, the other ranks' part of the previous round's step. Its local steps then no longer improve
  // CoCoA+'s local subproblem at v for sure, so the search also offers the current point (gamma = 0): a round never
  // lowers the dual objective, and a round after one that took gamma = 0 runs without the lookahead.
  const int chunks = !local && adaptive ? plan.lookahead_chunks : 0;
  std::vector<double> trials = adaptive ? aggregation_grid(plan, kGridPoints) : std::vector<double>{1.0};
  if (chunks > 0) trials.push_back(0.0);
  std::vector<double> others(chunks > 0 ? dim : 0);
  bool gamma_zero = false;  // the last search chose gamma = 0
  // The box duals' projected steps (aggregation.hpp kBoxExtrapolation): candidate e is alpha_old + g_e (alpha -
  // alpha_old) projected onto the box; xloc holds this rank's change of A_r alpha_r for each, the allreduce's buffer
  // `red` carries Δv and those E changes (after it, their sums over the ranks from red[dim] on). The E candidates
  // follow the plane's in fvals.
  constexpr bool kBoxDualForm = Form::kBoxDual && Form::formulation == Formulation::dual;
  const bool project = kBoxDualForm && adaptive && !local && plan.box_extrapolation;
  const std::size_t E = project ? kBoxExtrapolation.size() : 0;
  std::vector<double> xloc(E * dim), red(project ? (1 + E) * dim : 0), xal;
  std::vector<index_t> moved;  // the coordinates the local epochs changed (alpha_i != alpha_old_i)
  const std::size_t n_beta = adaptive ? kAggregationMomenta.size() : 1;
  const std::size_t n_plane = trials.size() * n_beta;
  std::vector<double> alpha_old, fvals(n_plane + E), ids(fvals.size());
  std::iota(ids.begin(), ids.end(), 0.0);  // candidate q < n_plane: gamma = trials[q % n_gamma], beta =
                                           // momenta[q / n_gamma]; q >= n_plane: projected step q - n_plane
  std::vector<double> astep(adaptive ? static_cast<std::size_t>(m) : 0), vstep(adaptive ? dim : 0),
      pstep(adaptive ? dim : 0);
  bool have_step = false;
  std::vector<index_t> changed, touched;
  // f(i, a) for each changed coordinate i, a its value at projected step e: xal on the moved coordinates, alpha_old
  // elsewhere (moved is a subsequence of changed, both in increasing order).
  auto for_projected = [&](std::size_t e, const auto& f) {
    std::size_t q = 0;
    for (index_t i : changed) {
      const bool mv = q < moved.size() && moved[q] == i;
      f(i, mv ? xal[e * moved.size() + q] : alpha_old[i]);
      q += mv;
    }
  };
  out.allreduce_doubles_per_round = dim * (1 + E) + 7 + (adaptive ? fvals.size() : 0) +
                                    (Form::formulation == Formulation::dual ? BestPrimal<Form>::kSums : 0);
  // The certificate's primal point (dual): the best of the rounds' primal points and their mixes (best_primal.hpp).
  std::unique_ptr<BestPrimal<Form>> best;
  if constexpr (Form::formulation == Formulation::dual) best = std::make_unique<BestPrimal<Form>>(form, dim, K > 1);
  // The certificate schedule (shrinking.hpp CertificateSchedule, as in the single-process solvers): the global
  // certificate after every k rounds, k from the cost model and the gaps seen so far. Its inputs (round, global gap
  // and P) are the same on every rank, so the ranks certify in the same rounds; a round without one agrees on the
  // ranks' error flags in one allreduce of an int. --certificate-every fixes the interval. (The dual certified every
  // round until the ranks' epochs shrank: a certificate is a pass over the rank's data, then up to 2/3 of a round,
  // and the schedule took 1.0-2.1x less time on label-sorted a9a and w7a at K = 1, 2, 4 for all four dual models,
  // bench/results/mpi.md, section 13; its cost, more rounds where the kept primal point or the shrinking's choice,
  // both refreshed at certificates only, would have closed the gap sooner: 22 -> 34 on the generated 2,000,000 x
  // 100,000 hinge at K = 2, the same wall time.)
  CertificateSchedule schedule(o.certificate_every);
  // Shrinking of the local epochs (the dual, either local solver; shrinking.hpp; docs/mpi.md, "Shrinking"; SySCD
  // visits the choice through SyscdLocalSolver::set_active, without the margin rule's in-epoch drops). One rank (K = 1)
  // shrinks as the single-process solvers do: after each certificate its epochs visit only the coordinates whose
  // share of the gap is above the threshold that leaves out at most ActiveSet::kTolShare tol |P| (the zero-gap ones
  // first: hinge samples at alpha = 0 with margin >= 1), plus the box duals' samples that LIBLINEAR's margin rule
  // keeps (MarginRule::keep); within an epoch the box duals drop the samples the margin rule removes, and when it
  // finds the active samples' violations within its tolerance it asks for a certificate (or, before a round's last
  // local epoch, makes every sample active again); an interval of several rounds that stalled is followed by one
  // over every sample. Across ranks (K > 1) the merged iterate jumps (gamma, momentum, projected steps), and those
  // rules cost rounds (the hinge on label-sorted a9a at K = 2: 1484 rounds against 506 without shrinking): there a
  // box-dual sample sits out the rounds up to the next certificate only when its margin clears its box's end by
  // MarginRule::kClear (MarginRule::clears). Every certificate refreshes the choice from the margins of its pass, so
  // a sample that v's move made a violator again is back after it; the stop is the full exact certificate.
  const bool shrink_one = o.shrinking && Form::formulation == Formulation::dual && K == 1;
  const bool shrink_clear = o.shrinking && kBoxDualForm && K > 1;
  constexpr bool kMarginRule = kBoxDualForm;
  std::vector<double> cgaps(shrink_one ? static_cast<std::size_t>(m) : 0);  // the gaps at the last certificate
  ActiveSet active_set;  // the rank's active coordinates after the last certificate (the single process's selection)
  MarginRule rule;
  // Every coordinate of the rank active again (LIBLINEAR's unshrinking), the margin rule's memory of the last
  // epoch's violations cleared.
  auto activate_all = [&] {
    active_set.reset(0, m);
    order = active_set.coords();
    if (local) local->set_active(order);
    rule.pg_max_old = INFINITY, rule.pg_min_old = -INFINITY;
  };
  std::vector<index_t> kept;  // K = 1, box duals: the active samples the margin rule kept in this epoch
  bool certify_now = false;   // K = 1, box duals: the margin rule asks for a certificate after this round
  int last_certified = 0;     // K = 1: the round of the last certificate, its gap, and whether the interval after
  double last_gap = 0;        // it started shrunk
  bool shrunk = false;
  int round = 0;
  std::int64_t active = 0;  // the coordinates the round's local epoch starts with
  while (driver.budget_left(round)) {
    const auto tr = Clock::now();
    int err = 0, code = 0;
    std::string msg;
    try {
      if (round + 1 == 2 && co.fail_rank == rank)
        throw TrainingError("injected failure in round 2 (HETGLM_TEST_FAIL_RANK)");
      active = static_cast<std::int64_t>(order.size());
      v_loc = v;
      if (adaptive) alpha_old = alpha;
      int parts = 1;
      if (local) {
        local->run(alpha, v_loc, co.local_epochs);
      } else {
        parts = chunks > 0 && have_step && !gamma_zero ? chunks : 1;
        if (parts > 1)  // the previous round's step of v less this rank's part of it, spread over the parts
          for (std::size_t k = 0; k < dim; ++k)
            others[k] = plan.lookahead_share * (vstep[k] - pstep[k]) / (double(parts) * double(co.local_epochs));
        for (int h = 0; h < co.local_epochs; ++h) {
          shuffle(std::span<index_t>(order), rng);
          // The local copy sees its own updates sigma'-scaled (CoCoA+ subproblem), and with the lookahead the
          // other ranks' predicted steps after each part.
          double pg_max = -INFINITY, pg_min = INFINITY;
          kept.clear();
          for (int c = 0; c < parts; ++c) {
            const std::size_t b = order.size() * std::size_t(c) / std::size_t(parts),
                              e = order.size() * std::size_t(c + 1) / std::size_t(parts);
            bool by_rule = false;
            if constexpr (kMarginRule)
              if ((by_rule = shrink_one))
                for (std::size_t p = b; p < e; ++p) {
                  prefetch_ahead(form, order.data(), p, e, alpha.data());
                  if (rule.step(form, order[p], alpha.data(), v_loc.data(), step_sigma, pg_max, pg_min))
                    kept.push_back(order[p]);
                }
            if (!by_rule) update_coordinates(form, order.data() + b, e - b, alpha.data(), v_loc.data(), step_sigma);
            if (parts > 1)
              for (std::size_t k = 0; k < dim; ++k) v_loc[k] += others[k];
          }
          if (kMarginRule && shrink_one) {
            order.swap(kept);
            // The active samples' violations all within rule.tol: as the sequential solver, a certificate at the end
            // of this round (certify_now); before the round's last local epoch (--local-epochs), LIBLINEAR's
            // unshrinking instead: every sample active again for the next epoch.
            if (rule.epoch_done(pg_max, pg_min)) {
              if (h + 1 == co.local_epochs) {
                certify_now = true;
              } else {
                activate_all();
              }
            }
          }
        }
      }
      // This rank's change of v, A_r (alpha_r - alpha_r,old), in double. The sequential local loop's copy took it
      // sigma'-scaled, plus the lookahead's additions: read off v_loc (no pass over the data); SySCD's merges added
      // sigma' = K times it to v_loc (SyscdLocalSolver), read off the same way (it was recomputed from alpha, a pass
      // over the rank's data every round whatever the shrinking). (SySCD runs no lookahead: parts = 1.)
      {
        const double scale = local ? sigma : step_sigma;  // what v_loc's copy of the change was multiplied by
        const double added = parts > 1 ? double(parts) * double(co.local_epochs) : 0.0;
        p_new.resize(dim);
        for (std::size_t k = 0; k < dim; ++k) {
          dv[k] = (v_loc[k] - v[k] - (parts > 1 ? added * others[k] : 0.0)) / scale;
          p_new[k] = p_old[k] + dv[k];
        }
      }
      if constexpr (kBoxDualForm)
        if (project) {  // the projected steps' points (xal, E x moved) and their changes of A_r alpha_r (xloc)
          moved.clear();
          for (index_t i = 0; i < m; ++i)
            if (alpha[i] != alpha_old[i]) moved.push_back(i);
          xal.resize(E * moved.size());
          std::fill(xloc.begin(), xloc.end(), 0.0);
          // Step e's change is g_e dv plus, for the coordinates the projection moved, (a_i - lin_i) a_i (lin_i =
          // alpha_old_i + g_e delta_i): one pass over the moved rows for all E steps (each x_e takes its rows in
          // the same order as in a pass of its own), reading a clipped row once, the row kPrefetchRows ahead
          // prefetched (the moved rows are a sparse subset: 11% of a K = 2 run's samples went to these
          // row reads when each step made its own pass).
          const std::size_t nm = moved.size();
          for (std::size_t q = 0; q < nm; ++q) {
            if (q + kPrefetchRows < nm) prefetch_row(*form.A, moved[q + kPrefetchRows], form.lo);
            const index_t i = moved[q];
            for (std::size_t e = 0; e < E; ++e) {
              const double lin = alpha_old[i] + kBoxExtrapolation[e] * (alpha[i] - alpha_old[i]),
                           a = form.project_box(i, lin);
              xal[e * nm + q] = a;
              if (a != lin) row_axpy(*form.A, i, a - lin, xloc.data() + e * dim, form.lo);
            }
          }
          for (std::size_t e = 0; e < E; ++e) {
            const double g = kBoxExtrapolation[e];
            double* x = xloc.data() + e * dim;
            for (std::size_t k = 0; k < dim; ++k) x[k] += g * dv[k];
          }
        }
    } catch (const std::exception& e) {
      err = 1;
      code = exit_code_of(e);
      msg = e.what();
      std::fill(dv.begin(), dv.end(), 0.0);
      std::fill(xloc.begin(), xloc.end(), 0.0);
    }
    double compute = since(tr);
    const auto tc = Clock::now();
    if (project) {  // Δv and the projected steps' changes in one allreduce
      std::copy(dv.begin(), dv.end(), red.begin());
      std::copy(xloc.begin(), xloc.end(), red.begin() + static_cast<std::ptrdiff_t>(dim));
      MPI_Allreduce(MPI_IN_PLACE, red.data(), static_cast<int>(red.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      std::copy(red.begin(), red.begin() + static_cast<std::ptrdiff_t>(dim), dv.begin());
    } else {
      MPI_Allreduce(MPI_IN_PLACE, dv.data(), static_cast<int>(dim), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double comm_s = since(tc);
    double gamma = 1.0, beta = 0.0;
    if (adaptive) {
      const auto ta = Clock::now();
      const std::size_t ng = trials.size();
      std::fill(fvals.begin(), fvals.end(), 0.0);
      changed.clear();
      touched.clear();
      const double* sa = have_step ? astep.data() : nullptr;
      const double* sv = have_step ? vstep.data() : nullptr;
      if (!err) {
        for (index_t i = 0; i < m; ++i)
          if (alpha[i] != alpha_old[i] || astep[i] != 0) changed.push_back(i);
        if constexpr (Form::formulation == Formulation::primal)
          for (index_t k = co.shared_lo; k < co.shared_hi; ++k)
            if (dv[k] != 0 || vstep[k] != 0) touched.push_back(k);
        plane_coordinate_terms_grid(form, changed, alpha_old.data(), alpha.data(), sa, trials,
                                    std::span<const double>(kAggregationMomenta), fvals.data());
        if constexpr (Form::formulation == Formulation::primal)
          for (std::size_t q = 0; q < n_plane; ++q) {
            const double g = trials[q % ng], b = kAggregationMomenta[q / ng];
            if (b != 0 && !have_step) continue;
            fvals[q] += plane_primal_losses(form, touched, v.data(), dv.data(), sv, g, b);
          }
        if constexpr (kBoxDualForm)
          for (std::size_t e = 0; e < E; ++e) {
            double acc = 0;
            for_projected(e, [&](index_t i, double a) { acc -= Form::LossP::conjugate(form.y[i], a, form.c[i]); });
            fvals[n_plane + e] = acc * form.inv_n;
          }
      }
      const auto tar = Clock::now();
      MPI_Allreduce(MPI_IN_PLACE, fvals.data(), static_cast<int>(fvals.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      const double ar = since(tar);
      comm_s += ar;
      if constexpr (Form::formulation == Formulation::dual) {
        PlaneDots p;  // v, dv and the previous step are global: the same sums on every rank
        for (std::size_t k = 0; k < dim; ++k) {
          p.vv += v[k] * v[k], p.vd += v[k] * dv[k], p.dd += dv[k] * dv[k];
          if (have_step) p.vs += v[k] * vstep[k], p.ds += dv[k] * vstep[k], p.ss += vstep[k] * vstep[k];
        }
        for (std::size_t q = 0; q < n_plane; ++q)
          fvals[q] += plane_dual_quadratic(form, p, trials[q % ng], kAggregationMomenta[q / ng]);
        for (std::size_t e = 0; e < E; ++e) {  // -lambda/2 ||(v + x_e)/(lambda n)||^2, x_e the summed change
          const double* x = red.data() + (1 + e) * dim;
          PlaneDots px;
          px.vv = p.vv;
          for (std::size_t k = 0; k < dim; ++k) px.vd += v[k] * x[k], px.dd += x[k] * x[k];
          fvals[n_plane + e] += plane_dual_quadratic(form, px, 1.0, 0.0);
        }
      }
      if (!have_step)  // no previous step yet: the line only
        for (std::size_t q = ng; q < n_plane; ++q) fvals[q] = -INFINITY;
      const auto best = static_cast<std::size_t>(aggregation_best(ids, fvals));
      if (best >= n_plane) {  // a projected step (box duals): the point itself, no momentum
        const std::size_t e = best - n_plane;
        gamma = kBoxExtrapolation[e], beta = 0;
        gamma_zero = false;
        for_projected(e, [&](index_t i, double a) {
          astep[i] = a - alpha_old[i];
          alpha[i] = a;
        });
        const double* x = red.data() + (1 + e) * dim;
        const double* xl = xloc.data() + e * dim;
        for (std::size_t k = 0; k < dim; ++k) {
          vstep[k] = x[k];
          v[k] += x[k];
          pstep[k] = xl[k];  // this rank's exact part of it
          p_old[k] += xl[k];
        }
      } else {
        gamma = trials[best % ng], beta = kAggregationMomenta[best / ng];
        gamma_zero = gamma == 0;
        for (index_t i : changed) {
          const double a = alpha_old[i] + gamma * (alpha[i] - alpha_old[i]) + beta * astep[i];
          astep[i] = a - alpha_old[i];
          alpha[i] = a;
        }
        for (std::size_t k = 0; k < dim; ++k) {
          vstep[k] = gamma * dv[k] + beta * vstep[k];
          v[k] += vstep[k];
        }
        if (!err)  // A_r alpha_r is linear in alpha_r: its new value is p_old + gamma (p_new - p_old) + beta pstep
          for (std::size_t k = 0; k < dim; ++k) {
            pstep[k] = gamma * (p_new[k] - p_old[k]) + beta * pstep[k];
            p_old[k] += pstep[k];
          }
      }
      have_step = true;
      compute += since(ta) - ar;  // the search's own arithmetic is computation
    } else {
      for (std::size_t k = 0; k < dim; ++k) v[k] += dv[k];
      if (!err) p_old.swap(p_new);
    }
    ++round;
    int any = 0;
    const auto tg = Clock::now();
    const bool certify = schedule.due(round) || certify_now || !driver.budget_left(round);
    Certificate cert;
    if (certify)
      cert = global_certificate(form, co, alpha, v, err, any, best.get(), shrink_one ? cgaps.data() : nullptr);
    else
      MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    comm_s += since(tg);
    if (any) throw RemoteFailure{agree_on_failure(err ? code : 0, msg)};
    out.compute_seconds += compute;
    out.comm_seconds += comm_s;
    out.rounds.push_back({round, driver.seconds(), compute, comm_s, gamma, beta, active});
    if (!certify) {
      if constexpr (Form::formulation == Formulation::dual) best->fold_round(v);
      continue;
    }
    if (driver.record(round, cert, alpha, v) != EpochDriver::Stop::none) break;
    if (certify_now) rule.missed();  // it asked for this certificate, which did not stop the run: a tighter tol
    certify_now = false;
    // K = 1: the single-process solvers' unshrinking across certificates (ActiveSet::update): after an interval of
    // several rounds (the schedule's, or --certificate-every) whose gap did not fall below ActiveSet::kStall of the
    // last certificate's, the next interval visits every sample. (With a certificate every round, each round's
    // refresh brings the violators back, and the rule would undo the shrinking of every other round.)
    const bool stalled = shrink_one && shrunk && round - last_certified > 1 && last_gap > 0 &&
                         cert.gap > ActiveSet::kStall * last_gap;
    last_certified = round, last_gap = cert.gap, shrunk = false;
    if (stalled) {
      activate_all();
    } else if (shrink_one || shrink_clear) {  // the next rounds' active coordinates, from this certificate's pass
      if constexpr (Form::formulation == Formulation::dual) {
        const double* r = best->margins();
        if (shrink_one) {  // the gap rule, and the margin rule's keep for the box duals
          const double threshold = ActiveSet::threshold(cgaps, ActiveSet::kTolShare * o.tol * std::fabs(cert.primal));
          active_set.select(0, m, cgaps, threshold, [&](index_t i) {
            if constexpr (kMarginRule) return !local && rule.keep(form, i, alpha[i], r[i]);
            return false;
          });
        } else {  // the clear rule: every sample but those it leaves out
          active_set.reset(0, m);
          active_set.keep_if([&](index_t i) {
            if constexpr (kMarginRule) return !MarginRule::clears(form, i, alpha[i], r[i]);
            return true;
          });
        }
      }
      if (active_set.size() == 0) active_set.reset(0, m);  // every gap within the budget but not certified: train all
      order = active_set.coords();
      if (local) local->set_active(order);
      shrunk = order.size() < static_cast<std::size_t>(m);
    }
    // The next certificate: the cost model's unit is one epoch over the rank's data, and a round is --local-epochs
    // epochs over the active coordinates. At K > 1 their share is taken as 1, the same on every rank, so the ranks
    // certify in the same rounds (from 4 local epochs on, every round). One rank (K = 1) of a box dual counts its
    // active nonzeros as the single-process solvers do, so a shrunk interval is longer and the unshrinking rule above
    // compares the gaps of intervals as long as theirs (with 4-round intervals it found a "stall" in every other
    // interval of the tail and undid the shrinking: 1.15-3.1x of the time, bench/results/mpi.md section 13); the
    // logistic dual's gap rule, without the margin rule's drops and certificate requests, went stale over the longer
    // intervals (label-sorted w7a 16 -> 55 rounds), so the others keep a share of 1.
    const double share =
        kMarginRule && K == 1 && !local && shrunk ? nnz_share(*form.A, coords_nnz(*form.A, order)) : 1.0;
    schedule.after_certificate(round, cert.gap, o.tol * std::fabs(cert.primal), double(co.local_epochs) * share);
  }
  // Exact final certificate: v = sum_r A_r alpha_r re-summed from the exact local parts, recomputed from alpha (one
  // more allreduce).
  p_old = shared_vector(form, alpha);
  std::copy(p_old.begin(), p_old.end(), v.begin());
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(dim), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int any = 0;
  Certificate final_cert = global_certificate(form, co, alpha, v, 0, any);
  if (best && !best->point().empty()) {  // the kept primal point where it is better, its P recomputed exactly
    const std::vector<double> vb(best->point().begin(), best->point().end());
    const double pb = global_certificate(form, co, alpha, vb, 0, any).primal;
    if (pb < final_cert.primal) {
      final_cert.primal = pb;
      final_cert.gap = final_cert.gap_sum = pb - final_cert.dual;
      std::copy(vb.begin(), vb.end(), v.begin());
    }
  }
  driver.finish(form, final_cert, v, round);
  if constexpr (Form::formulation == Formulation::primal) {
    const int total = std::accumulate(co.coord_counts.begin(), co.coord_counts.end(), 0);
    std::vector<double> w_all(rank == 0 ? static_cast<std::size_t>(total) : 0);
    MPI_Gatherv(alpha.data(), m, MPI_DOUBLE, w_all.data(), co.coord_counts.data(), co.coord_displs.data(),
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    out.w = std::move(w_all);
  }
  return out;
}

#define HETGLM_INSTANTIATE_COCOA(...) \
  template CocoaResult solve_cocoa(const __VA_ARGS__&, const SolverOptions&, const CocoaOptions&);
HETGLM_FOR_EACH_FORM(HETGLM_INSTANTIATE_COCOA)
#undef HETGLM_INSTANTIATE_COCOA

}  // namespace hetglm
