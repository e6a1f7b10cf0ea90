// SPDX-License-Identifier: Apache-2.0
// The epoch driver: what every solver does around its epochs, written once (sequential, SySCD / PASSCoDe, the Newton
// solver, DuHL, the MPI trainer). After an epoch (a Newton iteration, a DuHL or CoCoA+ round) the solver hands its
// certificate to record(), which
//   1. checks that the certificate is finite, else throws TrainingError naming the first non-finite coordinate
//      variable or entry of the shared vector (numeric_guard.hpp, docs/robustness.md);
//   2. appends the history row and calls the progress callback (SolverOptions::on_epoch);
//   3. applies the stop rule: converged when P - D <= tol |P| (docs/conventions.md, "Tolerance: the relative duality gap"), interrupted when
//      SolverOptions::should_stop() asks (Ctrl-C), out of budget at max_epochs.
// finish() fills the SolveResult from the final certificate, which must be exact for the returned model.
#pragma once
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetglm/error.hpp"

#include "hetglm/solvers/numeric_guard.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

class EpochDriver {
 public:
  using Clock = std::chrono::steady_clock;
  /// Why record() asks the solver to stop.
  enum class Stop { none, converged, interrupted, budget };

  /// `res` receives the history now and the final fields in finish(); `formulation` names the coordinate variables
  /// in error messages ("alpha" dual, "w" primal).
  EpochDriver(const SolverOptions& options, SolveResult& res, Formulation formulation)
      : o_(options), res_(res), t0_(Clock::now()),
        alpha_name_(formulation == Formulation::dual ? "alpha" : "w") {}

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
    if (epoch >= o_.max_epochs) return stopped(Stop::budget);
    return Stop::none;
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
    res_.w = form.weights(res_.alpha, v);
    res_.epochs = epochs;
    res_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  }

 private:
  Stop stopped(Stop s) { return stop_ = s; }

  const SolverOptions& o_;
  SolveResult& res_;
  Clock::time_point t0_;
  std::string_view alpha_name_;
  double excluded_ = 0;
  Stop stop_ = Stop::none;
  bool polled_ = false, interrupt_ = false;
};

}  // namespace hetglm
