// SPDX-License-Identifier: Apache-2.0
// Gap-driven shrinking and the certificate schedule of the coordinate-descent solvers (private to solvers/src:
// sequential.cpp and parallel_cpu.cpp). docs/parallel-cpu.md, "Shrinking and the certificate schedule".
//
// Shrinking (DuHL's selection with the CPU's cache as the small memory; Duenner, Parnell, Jaggi, NeurIPS 2017): every
// exact certificate also gives each coordinate's share gap_i of P - D (forms.hpp coordinate_terms). The coordinates
// whose gap is 0 (they satisfy their optimality conditions for the current v: hinge samples with margin >= 1 and
// alpha = 0, the ones LIBLINEAR's shrinking removes; L1 weights at 0 with |s_j| <= lambda) and those with the
// smallest gaps up to a total of kTolShare tol |P| are left out of the following epochs; the others (the active set)
// are trained until the next certificate, which refreshes every gap. When an interval with shrinking did not reduce
// the gap enough (the left-out gaps grew as v moved), the next interval visits every coordinate (LIBLINEAR's
// unshrinking). The stop is decided only by the full exact certificate. The hinge and squared hinge duals add
// LIBLINEAR's rule by margin within each epoch (MarginRule, below).
// The certificate schedule: the next certificate comes after k epochs, k chosen from a cost model in nonzeros (so
// that it is the same on every run) to keep certificates at about 10% of the work, and earlier when the gaps seen so
// far predict convergence sooner (geometric fit of the last two certificates).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "hetglm/matrix.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// Nonzeros of the coordinates `coords` (rows of A): the work of an epoch over them.
inline offset_t coords_nnz(const CsrMatrix& A, std::span<const index_t> coords) {
  offset_t nnz = 0;
  for (const index_t i : coords) nnz += A.offsets[i + 1] - A.offsets[i];
  return nnz;
}
/// Their share of A's nonzeros (1 for A without any): CertificateSchedule::after_certificate's `active_share`.
inline double nnz_share(const CsrMatrix& A, offset_t nnz) { return A.nnz() > 0 ? double(nnz) / double(A.nnz()) : 1.0; }

/// Which coordinates the next epochs visit.
class ActiveSet {
 public:
  static constexpr double kTolShare = 0.1;  ///< of tol |P|: the gap the left-out coordinates may hold at selection
  static constexpr double kStall = 0.7;     ///< an interval whose gap did not fall below this share of the last one
                                            ///< is followed by one over every coordinate (unshrinking)

  /// The order in which the coordinates are listed: position q holds coordinate order[q] (a permutation of the
  /// coordinates; SySCD on long rows lists them in its seeded random order instead of copying the rows into it,
  /// parallel_cpu.cpp listed_order). Empty (the default): index order. The positions below ([lo, hi)) are positions
  /// of this order.
  void set_order(std::vector<index_t> order) { order_ = std::move(order); }
  /// All of positions [lo, hi) active.
  void reset(index_t lo, index_t hi) {
    active_.resize(static_cast<std::size_t>(hi - lo));
    for (index_t q = lo; q < hi; ++q) active_[static_cast<std::size_t>(q - lo)] = at(q);
  }
  /// The coordinates of positions [lo, hi) whose gap is above `threshold`, and those at or below it for which keep(i)
  /// holds, in the order's order.
  template <class Keep>
  void select(index_t lo, index_t hi, std::span<const double> gaps, double threshold, const Keep& keep) {
    active_.clear();
    for (index_t q = lo; q < hi; ++q) {
      const index_t i = at(q);
      if (gaps[static_cast<std::size_t>(i)] > threshold || keep(i)) active_.push_back(i);
    }
  }
  /// Keeps the active coordinates for which pred(i) holds (in order).
  template <class Pred>
  void keep_if(const Pred& pred) {
    std::erase_if(active_, [&](index_t i) { return !pred(i); });
  }
  const std::vector<index_t>& coords() const { return active_; }
  std::size_t size() const { return active_.size(); }

  /// The largest threshold t such that the positive gaps at or below t sum to at most `budget`; gaps <= 0 (a
  /// coordinate that satisfies its optimality conditions for the current v: hinge samples with margin >= 1 and
  /// alpha = 0, L1 weights at 0 with |s_j| <= lambda) are always below it. One pass: the gaps are binned by binary
  /// exponent and t is the lower edge of the first bin whose cumulative sum would exceed the budget.
  static double threshold(std::span<const double> gaps, double budget) {
    constexpr int kBins = 2100;  // exponents -1074 .. 1024 of double
    std::vector<double> sum(kBins, 0.0);
    for (double g : gaps) {
      if (!(g > 0)) continue;
      int e = 0;
      std::frexp(g, &e);
      sum[static_cast<std::size_t>(std::clamp(e + 1074, 0, kBins - 1))] += g;
    }
    double acc = 0;
    for (int b = 0; b < kBins; ++b) {
      if (acc + sum[static_cast<std::size_t>(b)] > budget) return b == 0 ? 0.0 : std::ldexp(0.5, b - 1074);
      acc += sum[static_cast<std::size_t>(b)];
    }
    return std::numeric_limits<double>::infinity();  // every gap fits the budget
  }

  /// After a certificate with total gap `gap` and per-coordinate `gaps` over positions [lo, hi): the next interval's
  /// coordinates. Shrinks (gaps <= the threshold of kTolShare tol |P| left out) unless the last shrunk interval
  /// stalled (gap above kStall times the previous certificate's), in which case every coordinate is active once.
  /// keep(i): a coordinate within the threshold that stays active all the same (the box duals' margin rule,
  /// MarginRule::keep).
  template <class Keep = bool (*)(index_t)>
  void update(index_t lo, index_t hi, std::span<const double> gaps, double gap, double target, bool shrinking,
              const Keep& keep = [](index_t) { return false; }) {
    const bool stalled = shrunk_ && last_gap_ > 0 && gap > kStall * last_gap_;
    last_gap_ = gap;
    shrunk_ = false;
    if (!shrinking || stalled) {
      reset(lo, hi);
      return;
    }
    select(lo, hi, gaps, threshold(gaps, kTolShare * target), keep);
    shrunk_ = active_.size() < static_cast<std::size_t>(hi - lo);
    if (active_.empty()) reset(lo, hi);  // every gap within the budget but not certified: train all
  }

 private:
  index_t at(index_t q) const { return order_.empty() ? q : order_[static_cast<std::size_t>(q)]; }
  std::vector<index_t> active_;
  std::vector<index_t> order_;
  bool shrunk_ = false;
  double last_gap_ = 0;
};

/// The margin rule of the box duals (hinge, squared hinge), on top of ActiveSet's gap rule, in the sequential solver
/// and SySCD (docs/parallel-cpu.md, "The margin rule of the box duals"). Their dual is an interval in b = y alpha_i
/// and G is its derivative (forms.hpp DualForm::dual_gradient, LIBLINEAR's G). As LIBLINEAR shrinks (Hsieh et al.,
/// ICML 2008, Sec. 3.2; liblinear's solve_l2r_l1l2_svc): in an epoch, a sample at an end of its interval whose G
/// points out of it by more than the previous epoch's largest violation (pg_max_old / pg_min_old) leaves the active
/// set until the next certificate. At a certificate a zero-gap sample at an end stays active while its G is within
/// kKeepShare of that violation: the gap rule alone left out every sample with margin >= 1 however slightly it met
/// its margin, and w7a (hinge) stayed at suboptimality 8e-2 for its first 60 epochs. When the active samples'
/// violations all lie within `tol`, a certificate follows at once, and tol shrinks by kTighten when that
/// certificate does not reach the solver's tolerance. The constants were chosen on a9a, w7a and mushrooms (hinge,
/// time to suboptimality 1e-3 and 1e-4).
struct MarginRule {
  static constexpr double kTol0 = 0.3;       ///< the first tolerance on the violations' range, in units of G
  static constexpr double kTighten = 0.3;
  static constexpr double kKeepShare = 0.05;
  double pg_max_old = std::numeric_limits<double>::infinity();
  double pg_min_old = -std::numeric_limits<double>::infinity();
  double tol = kTol0;

  /// The coordinate step of sample i on v under the rule (update_coordinate's step and v update, from the r_i that
  /// G needs as well): false when the sample leaves the active set instead; else its projected G (0 where G points
  /// out of its interval, and then no step) widens [lo, hi].
  template <class Form>
  bool step(const Form& f, index_t i, double* alpha, double* v, double sigma, double& hi, double& lo) const {
    const double r = f.inner(i, v);
    const double G = f.dual_gradient(i, alpha[i], r);
    double pg = G;
    if (const int end = f.dual_bound(i, alpha[i]); end != 0) {
      if (end < 0 ? G > pg_max_old : G < pg_min_old) return false;
      pg = end < 0 ? std::min(G, 0.0) : std::max(G, 0.0);
    }
    hi = std::max(hi, pg);
    lo = std::min(lo, pg);
    if (pg == 0) return true;
    const double a_new = f.step(i, alpha[i], r, sigma);
    if (a_new != alpha[i]) {
      row_axpy(*f.A, i, sigma * (a_new - alpha[i]), v, f.lo);
      alpha[i] = a_new;
    }
    return true;
  }
  /// At a certificate: whether a sample within the gap threshold stays active (r = <a_i, v>).
  template <class Form>
  bool keep(const Form& f, index_t i, double a, double r) const {
    const int end = f.dual_bound(i, a);
    if (end == 0) return false;
    const double G = f.dual_gradient(i, a, r);
    return end < 0 ? G <= kKeepShare * pg_max_old : G >= kKeepShare * pg_min_old;
  }
  /// After an epoch whose active samples' projected G spanned [lo, hi]: whether a certificate is due now.
  bool epoch_done(double hi, double lo) {
    pg_max_old = hi > 0 ? hi : std::numeric_limits<double>::infinity();
    pg_min_old = lo < 0 ? lo : -std::numeric_limits<double>::infinity();
    return hi - lo <= tol;
  }
  /// After the certificate that epoch_done asked for did not reach the solver's tolerance.
  void missed() { tol *= kTighten; }

  /// CoCoA+ ranks at K > 1 (cocoa.cpp): how far, in units of G, a sample's G must point out of its interval at an
  /// end for it to sit out the next round. Measured (hinge, K = 2, seed 1, bench/results/mpi.md section 12): label-
  /// sorted a9a to 1e-4 in 643 / 533 / 464 rounds at 0.2 / 0.5 / 1 (506 without shrinking); the generated 2,000,000
  /// x 100,000 set to 1e-3 in 24 / 22 rounds at 0.5 / 1 (20 without).
  static constexpr double kClear = 1.0;
  /// Whether sample i (r = <a_i, v>) is at an end of its interval with G pointing out of it by more than kClear: at
  /// the hinge's lower end (alpha_i = 0), a margin y <x_i, w> above 1 + kClear.
  template <class Form>
  static bool clears(const Form& f, index_t i, double a, double r) {
    const int end = f.dual_bound(i, a);
    if (end == 0) return false;
    const double G = f.dual_gradient(i, a, r);
    return end < 0 ? G > kClear : G < -kClear;
  }
};

/// When the next exact certificate is due.
class CertificateSchedule {
 public:
  static constexpr double kShare = 0.1;         ///< certificates at most this share of the work
  static constexpr double kCertToEpoch = 0.4;   ///< a certificate costs about this share of a full epoch (measured)
  static constexpr int kMaxInterval = 64;

  /// `every` > 0: a certificate every `every` epochs, no adaptation.
  explicit CertificateSchedule(int every = 0) : fixed_(every) {}

  bool due(int epoch) const { return epoch >= next_; }

  /// After the certificate of epoch `epoch` with gap `gap` (target `target` = tol |P|): the next one, from the share
  /// of nonzeros the active set holds (active_nnz / total_nnz) and the convergence rate seen so far.
  void after_certificate(int epoch, double gap, double target, double active_share) {
    int k = 1;
    if (fixed_ > 0) {
      k = fixed_;
    } else {
      const double share = std::max(active_share, 1e-3);
      k = static_cast<int>(std::ceil((1 - kShare) / kShare * kCertToEpoch / share));
      // Geometric fit of the last two certificates or, when the gap did not fall since the last one (the duality
      // gap of SDCA is not monotone: SySCD ridge on dense 50,000 x 500 at 2 threads had 1.2e-4 at epoch 14 and
      // 2.0e-4 at 15, after which the cost model's interval of 4 overshot the target by several epochs), of the
      // first certificate and this one: epochs until the gap reaches the target.
      double rate = NAN;
      if (last_epoch_ >= 0 && gap > 0 && last_gap_ > gap)
        rate = std::log(gap / last_gap_) / double(epoch - last_epoch_);
      else if (first_epoch_ >= 0 && epoch > first_epoch_ && gap > 0 && first_gap_ > gap)
        rate = std::log(gap / first_gap_) / double(epoch - first_epoch_);
      if (gap > target && rate < 0) {
        const double left = std::log(target / gap) / rate;
        if (std::isfinite(left)) k = std::min(k, std::max(1, static_cast<int>(std::ceil(left))));
      }
      k = std::clamp(k, 1, kMaxInterval);
    }
    if (first_epoch_ < 0) first_epoch_ = epoch, first_gap_ = gap;
    last_epoch_ = epoch;
    last_gap_ = gap;
    next_ = epoch + k;
  }

 private:
  int fixed_ = 0;
  int next_ = 1;
  int last_epoch_ = -1, first_epoch_ = -1;
  double last_gap_ = 0, first_gap_ = 0;
};

}  // namespace hetglm
