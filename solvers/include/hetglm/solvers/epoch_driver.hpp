// SPDX-License-Identifier: Apache-2.0
// The epoch driver: what every solver does around its epochs, written once (sequential, SySCD / PASSCoDe, the Newton
// solver, DuHL, the MPI trainer). After an epoch (a Newton iteration, a DuHL or CoCoA+ round) the solver hands its
// certificate to record(), which
//   1. checks that the certificate is finite, else throws TrainingError naming the first non-finite coordinate
//      variable or entry of the shared vector (numeric_guard.hpp, docs/robustness.md);
//   2. appends the history row and calls the progress callback (SolverOptions::on_epoch);
//   3. applies the stop rule: converged when P - D <= tol |P| (docs/conventions.md, "Tolerance: the relative duality gap"), interrupted when
//      SolverOptions::should_stop() asks (Ctrl-C), out of budget at max_epochs, stalled when the certificates show no
//      measurable progress any more (below);
// finish() fills the SolveResult from the final certificate, which must be exact for the returned model.
//
// The stall rule (docs/conventions.md, "Stalls"). A certificate shows measurable progress when the objective the
// solver optimizes (P for the primal formulation, which it descends; D for the dual, which it ascends) is better than
// at the last progress by more than kStallFloor |P|, or when the gap P - D has moved (either way: on the way down it
// can rise for a while) by more than kStallFloor |P|. Below that, the double-precision sums of P and D over float32
// data are at their rounding level. The objective alone is not enough: on L1 logistic with duplicated columns
// (heart_scale, C = 1e12) P stays flat to 1e-13 for 500 epochs while the gap wanders, plateaus for 150 epochs and
// then falls to the tolerance. After kStallCertificates certificates and at least kStallEpochs epochs (iterations,
// rounds) without measurable progress, the gap still above tol, the fit stops: the certificate is at its rounding
// floor. The Newton solvers, whose line search already sees the objective's rounding, report their own stop through
// mark_stalled().
//
// The rate rule (same section of docs/conventions.md): a gap that still moves, but too slowly to matter. From epoch
// kRateMinEpochs on, at every certificate of epoch e, over the window from the last certificate at or before e/2
// (epoch e0) to e, split at the last certificate at or before (e0 + e)/2 (epoch em): g0 is the relative gap at e0,
// gm and g1 the smallest relative gaps in [e0, em] and [e0, e]. r1 = ln(g0/gm)/(em - e0) and r2 = ln(gm/g1)/(e - em)
// are the per-epoch rates of the gap's logarithm in the two halves, r = ln(g0/g1)/(e - e0) the window's. Over the
// horizon H = max(epochs left in the budget, kRateMultiple e), the log gap is extrapolated to fall by r H when the
// second half is not faster (r2 <= r1; a gap that bounces has no new smallest value for a while, hence the window's
// rate, not the second half's), else by r2 h (q + q^2 + ... + q^(H/h)) with q = r2/r1 per half window of h = e - em
// epochs (the rate growing as it just did; without limit when r1 = 0). The fit stops when that is less than
// ln(g1/tol) and the objective the solver optimizes, at its pace over the window, would not move by tol |P| within H
// either. L1 logistic on a9a with duplicated columns at C = 1e12 (SySCD), whose gap creeps by 1e-6 of itself per
// epoch (P flat to 1e-16 from epoch 450, which ran to the budget): stopped at epoch 293; heart_scale with duplicated
// columns (the plateau above) leaves its plateau at a rate that grows with every half window: not stopped (certified
// at epoch 520).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "hetglm/error.hpp"

#include "hetglm/solvers/numeric_guard.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

class EpochDriver {
 public:
  using Clock = std::chrono::steady_clock;
  /// Why record() asks the solver to stop.
  enum class Stop { none, converged, interrupted, budget, stalled };
  /// A certificate improves the best P or D by more than this share of |P|: measurable progress.
  static constexpr double kStallFloor = 1e-13;
  /// Certificates, and epochs, without measurable progress before the stall stop.
  static constexpr int kStallCertificates = 10, kStallEpochs = 20;
  /// The rate rule (top of this file): from this epoch on, with a horizon of at least this many times the epochs so far.
  static constexpr int kRateMinEpochs = 100, kRateMultiple = 100;

  /// `res` receives the history now and the final fields in finish(); `formulation` names the coordinate variables
  /// in error messages ("alpha" dual, "w" primal).
  EpochDriver(const SolverOptions& options, SolveResult& res, Formulation formulation)
      : o_(options), res_(res), t0_(Clock::now()),
        alpha_name_(formulation == Formulation::dual ? "alpha" : "w"), dual_(formulation == Formulation::dual) {}

  const SolverOptions& options() const { return o_; }
  /// Seconds since the start of the solve, minus excluded() time.
  double seconds() const { return std::chrono::duration<double>(Clock::now() - t0_).count() - excluded_; }
  /// Time spent measuring rather than training (DuHL's exact certificates), left out of seconds().
  void exclude(double s) { excluded_ += s; }

  /// The finite check alone (1.): for solvers that look at a certificate without recording it.
  void check_finite(const Certificate& c, int epoch, std::span<const double> alpha, std::span<const double> v) const {
    check_finite_certificate(c, epoch, alpha, v, alpha_name_);
  }
  /// The state check alone: throws naming the first non-finite alpha_i / w_j or v_k (returns when all are finite).
  /// Every coordinate-descent solver runs it after each epoch (O(n_coords + dim)), so a failure names its epoch even
  /// between certificates.
  void check_state(int epoch, std::span<const double> alpha, std::span<const double> v) const {
    throw_if_nonfinite_state(epoch, alpha, v, alpha_name_);
  }
  /// The same for coordinate `index` (an original index, where the solver reorders coordinates) holding x.
  void check_coordinate(int epoch, std::size_t index, double x) const {
    if (!std::isfinite(x)) throw_nonfinite_coordinate(epoch, index, x, alpha_name_);
  }

  /// Steps 1-3 after epoch `epoch` (1-based) with certificate `c` of the state (alpha, v); `passes`: the Newton
  /// solver's passes over the data so far (EpochRecord::passes).
  Stop record(int epoch, const Certificate& c, std::span<const double> alpha, std::span<const double> v,
              std::int64_t passes = 0) {
    check_finite(c, epoch, alpha, v);
    const EpochRecord r{epoch, seconds(), c.primal, c.dual, c.gap, relative_gap(c), passes};
    res_.history.push_back(r);
    if (o_.on_epoch) o_.on_epoch(r);
    const bool interrupt = polled_ ? interrupt_ : poll_interrupt();
    polled_ = false;
    if (r.rel_gap <= o_.tol) return stopped(Stop::converged);
    if (interrupt) return stopped(Stop::interrupted);
    best_rel_gap_ = std::min(best_rel_gap_, r.rel_gap);
    best_ = std::max(best_, dual_ ? c.dual : -c.primal);
    track_.push_back({epoch - base_epoch_, r.rel_gap, best_});
    if (!own_stall_rules_ && (no_progress(epoch, c) || out_of_reach(epoch - base_epoch_, c)))
      return stopped(Stop::stalled);
    if (epoch >= o_.max_epochs) return stopped(Stop::budget);
    return Stop::none;
  }
  /// A solver's own stall stop (the Newton solver: no measurable decrease of the objective along its direction);
  /// `what` says what was not measurable. finish() then reports it as the stall rule's stop.
  void mark_stalled(int epoch, std::string_view what) {
    stall_what_ = fmt::format("after {} iterations ({})", epoch, what);
    stopped(Stop::stalled);
  }
  Stop stop() const { return stop_; }
  /// A new phase of the same solve from epoch `epoch` on (DuHL's host finish on float64 values, duhl.cpp): the stall
  /// and rate rules start over, as at the first certificate, since the certificates before measured the progress of
  /// the previous phase; the history, the best relative gap and the epoch count go on.
  void restart_stall_rules(int epoch) {
    stop_ = Stop::none;
    ref_ = -std::numeric_limits<double>::infinity();
    ref_gap_ = std::numeric_limits<double>::infinity();
    progress_epoch_ = epoch;
    quiet_ = 0;
    track_.clear();
    base_epoch_ = epoch;
  }
  /// The solver stops on its own evidence alone (mark_stalled) and the budget: record() applies neither the stall
  /// rule nor the rate rule (the multinomial proximal Newton solver, whose rescaled dual point leaves the gap flat
  /// for many iterations at weak regularization while W still converges; multinomial.cpp).
  void own_stall_rules() { own_stall_rules_ = true; }
  /// The solver trains on float64 values (matrix.hpp values_lo): the stall messages say so. Call before record().
  void float64_values() {
    stall_why_ = values_why_ = "on this data (float64 values, certificates in double precision)";
  }
  /// The stall messages' reason why the tolerance is out of reach, where it is the solver's and not the values'
  /// rounding (CoCoA+ across several ranks, cocoa.cpp): "tolerance T is not reachable <why>". Call before record().
  void stall_cause(std::string why) {
    cause_ = std::move(why);
    stall_why_ = values_why_ = cause_;
  }
  /// SolveResult::stalled for the final certificate `c`: the stall's message when the fit stalled and `c` neither
  /// certifies the tolerance nor is negative beyond it (a warning of its own), else empty.
  std::string stall_report(const Certificate& c) const {
    return stop_ == Stop::stalled && !certified(c, o_.tol) && c.gap >= 0 ? stall_message(c) : std::string();
  }
  /// Polls SolverOptions::should_stop (once per epoch: a solver that needs the answer before record() polls here,
  /// and record() then uses this answer instead of polling again).
  bool poll_interrupt() {
    interrupt_ = o_.should_stop && o_.should_stop();
    polled_ = true;
    return interrupt_;
  }
  /// An interrupt seen by poll_interrupt() in an epoch the solver does not record (DuHL's rounds without an exact
  /// certificate).
  void mark_interrupted() {
    polled_ = false;
    stopped(Stop::interrupted);
  }
  bool budget_left(int epoch) const { return epoch < o_.max_epochs; }

  /// The starting point: alpha = 0, or the warm start of SolverOptions::initial_alpha (entries outside the form's
  /// dual domain set to 0: Form::feasible). Throws InvalidArgument when its size is not n_coords.
  template <class Form>
  void initial_alpha(const Form& form, std::vector<double>& alpha) const {
    const auto m = static_cast<std::size_t>(form.n_coords());
    alpha.assign(m, 0.0);
    if (!o_.initial_alpha) return;
    if (o_.initial_alpha->size() != m)
      throw InvalidArgument("warm start: " + std::to_string(o_.initial_alpha->size()) + " values for " +
                            std::to_string(m) + " coordinates");
    for (std::size_t i = 0; i < m; ++i) alpha[i] = form.feasible(static_cast<index_t>(i), (*o_.initial_alpha)[i]);
  }

  /// The result's final fields: `c` must be exact for (alpha, v = A alpha) of the returned model; converged means
  /// certified at the tolerance (a negative gap beyond it certifies nothing: forms.hpp certified()).
  template <class Form>
  void finish(const Form& form, const Certificate& c, std::span<const double> v, int epochs) {
    check_finite(c, epochs, res_.alpha, v);
    res_.certificate = c;
    res_.converged = certified(c, o_.tol);
    res_.interrupted = stop_ == Stop::interrupted && !res_.converged;
    res_.stalled = stall_report(c);
    res_.w = form.weights(res_.alpha, v);
    res_.epochs = epochs;
    res_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  }

 private:
  Stop stopped(Stop s) { return stop_ = s; }

  /// The stall rule (see the top of this file) after the certificate of epoch `epoch`.
  bool no_progress(int epoch, const Certificate& c) {
    const double floor = kStallFloor * std::fabs(c.primal);
    if (!(best_ - ref_ <= floor && std::fabs(c.gap - ref_gap_) <= floor)) {  // progress (or the first certificate)
      ref_ = best_;
      ref_gap_ = c.gap;
      progress_epoch_ = epoch;
      quiet_ = 0;
      return false;
    }
    ++quiet_;
    if (quiet_ < kStallCertificates || epoch - progress_epoch_ < kStallEpochs) return false;
    stall_what_ = fmt::format("in the last {} epochs ({} did not improve and the gap P - D did not change by more than {:.0e} |P|)",
                              epoch - progress_epoch_, dual_ ? "the dual objective D" : "the primal objective P",
                              kStallFloor);
    stall_why_ = values_why_;
    return true;
  }
  /// The rate rule (see the top of this file) after the certificate of epoch `epoch` (the last of track_), both
  /// counted from base_epoch_ (restart_stall_rules; 0 otherwise).
  bool out_of_reach(int epoch, const Certificate& c) {
    if (epoch < kRateMinEpochs || !(o_.tol > 0)) return false;
    const auto at_or_before = [&](double e) {  // index of the last certificate at or before epoch e
      const auto it = std::upper_bound(track_.begin(), track_.end(), e,
                                       [](double x, const Track& t) { return x < double(t.epoch); });
      return static_cast<std::ptrdiff_t>(it - track_.begin()) - 1;
    };
    const std::ptrdiff_t last = std::ssize(track_) - 1, j0 = at_or_before(epoch / 2.0);
    if (j0 < 0) return false;
    const std::ptrdiff_t jm = at_or_before((track_[j0].epoch + epoch) / 2.0);
    if (jm <= j0 || jm >= last) return false;  // a certificate strictly inside each half of the window
    const int e0 = track_[j0].epoch, em = track_[jm].epoch, h = epoch - em;
    double gm = track_[j0].rel_gap;
    for (std::ptrdiff_t j = j0; j <= jm; ++j) gm = std::min(gm, track_[j].rel_gap);
    double g1 = gm;
    for (std::ptrdiff_t j = jm; j <= last; ++j) g1 = std::min(g1, track_[j].rel_gap);
    const double g0 = track_[j0].rel_gap;
    const double horizon = std::max(double(o_.max_epochs - base_epoch_) - epoch, double(kRateMultiple) * epoch);
    // The objective at its pace over the window: would it move by tol |P| within the horizon?
    const double moved = (track_[last].best - track_[j0].best) / std::fabs(c.primal);
    if (!(moved / (epoch - e0) * horizon < o_.tol)) return false;
    const double needed = std::log(g1 / o_.tol);
    const double r1 = std::log(g0 / gm) / (em - e0), r2 = std::log(gm / g1) / h, r = std::log(g0 / g1) / (epoch - e0);
    const bool faster = r2 > r1 && r2 > 0;  // accelerating: the second half's rate above the first's
    double reach = r * horizon;             // the extrapolated fall of ln(relative gap) over the horizon
    if (faster && !(r1 > 0)) {
      reach = std::numeric_limits<double>::infinity();  // from no fall to a fall: any growth
    } else if (faster) {  // r2 h (q + ... + q^n), q = r2 / r1, n = horizon / h; beyond double range: anything
      const double q = r2 / r1, n = horizon / h;
      reach = n * std::log(q) > 700 ? std::numeric_limits<double>::infinity()
                                    : r2 * h * q * std::expm1(n * std::log(q)) / (q - 1);
    }
    if (!(reach < needed)) return false;
    const std::string fall =
        !(r > 0) ? fmt::format("the relative gap was {:.6e} at epoch {} and not smaller since", g0, e0 + base_epoch_)
        : faster ? fmt::format("the relative gap went from {:.6e} at epoch {} to {:.6e} at its smallest, falling by "
                               "{:.1e} of its logarithm per epoch in the last {} epochs, {:.3f} times the rate of the "
                               "{} before",
                               g0, e0 + base_epoch_, g1, r2, h, r2 / r1, em - e0)
                 : fmt::format("the relative gap went from {:.6e} at epoch {} to {:.6e} at its smallest, falling by "
                               "{:.1e} of its logarithm per epoch, not faster in the last {} epochs than in the {} "
                               "before",
                               g0, e0 + base_epoch_, g1, r, h, em - e0);
    stall_what_ = fmt::format(
        "in the last {} epochs ({}; extrapolated, it reaches {:.6e} in the next {:.0f} epochs, the larger of {} times "
        "the {} so far and the budget left, and {} moves by {:.1e} |P| in them, {:.1e} |P| in the last {})",
        epoch - e0, fall, g1 * std::exp(-reach), horizon, kRateMultiple, epoch,
        dual_ ? "the dual objective D" : "the primal objective P", moved / (epoch - e0) * horizon, moved, epoch - e0);
    stall_why_ = "at this rate";
    return true;
  }
  /// SolveResult::stalled: what stopped the fit, the gap it reached and the tolerance it could not.
  std::string stall_message(const Certificate& c) const {
    return fmt::format(
        "no measurable progress {}: relative gap {:.3e}, tolerance {:.1e} is not reachable {}; the smallest relative "
        "gap reached is {:.1e}",
        stall_what_, relative_gap(c), o_.tol, stall_why_, std::min(best_rel_gap_, relative_gap(c)));
  }

  const SolverOptions& o_;
  SolveResult& res_;
  Clock::time_point t0_;
  std::string_view alpha_name_;
  double excluded_ = 0;
  Stop stop_ = Stop::none;
  bool polled_ = false, interrupt_ = false;
  // The stall rule: the solver's objective (D, or -P for the primal) at its best, at the last measurable progress,
  // and that epoch.
  bool dual_ = false;
  bool own_stall_rules_ = false;
  double best_ = -std::numeric_limits<double>::infinity(), ref_ = -std::numeric_limits<double>::infinity();
  double ref_gap_ = std::numeric_limits<double>::infinity();
  double best_rel_gap_ = std::numeric_limits<double>::infinity();
  int progress_epoch_ = 0, quiet_ = 0;
  int base_epoch_ = 0;  // the rate rule counts epochs from here (restart_stall_rules)
  // The rate rule: per certificate, its epoch, relative gap and best_ then.
  struct Track {
    int epoch;
    double rel_gap, best;
  };
  std::vector<Track> track_;
  std::string stall_what_;
  std::string cause_;  // stall_cause's text (values_why_ and stall_why_ view it then)
  std::string_view values_why_ = "on this data (float32 values, certificates in double precision)";
  std::string_view stall_why_ = values_why_;
};

}  // namespace hetglm
