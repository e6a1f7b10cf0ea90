// SPDX-License-Identifier: Apache-2.0
// The primal point of a dual solver's certificate: the best of the iterates' primal points and their mixes.
//
// A dual iterate alpha maps to the primal point w(alpha) = A alpha / (lambda n) (v = A alpha), and the certificate
// P(w) - D(alpha) is an upper bound on both suboptimalities for *any* w (weak duality), not only for w(alpha). Across
// ranks (CoCoA+, cocoa.cpp) w(alpha) jumps from round to round: the merged step (gamma below 1, momentum, the box duals'
// projected steps) raises D in every round, but P(w(alpha)) goes up by 10x-1000x the gap in one round and down the
// next (bench/results/mpi.md, section 9), so the gap of the last iterate reaches the tolerance only once D alone is
// within it, in a round where P happens to be low. Averaging the primal points of the iterates is the classical
// remedy for the non-smooth losses (Shalev-Shwartz and Zhang, JMLR 2013, "Stochastic Dual Coordinate Ascent Methods
// for Regularized Loss Minimization", Theorem 2 and its averaged output w-bar): here, after each certificate,
// the kept point w_b becomes the best point of two segments that end at the iterate's own point w(alpha), one from
// w_b and one from a running average w_e of the iterates' points, at s = 0, 1/N, ..., 1. P is convex, so a segment's
// best point is never worse than its ends, and the kept point's P never rises.
//
// The cost is no pass over the data: the certificate's pass computes the margins r_i = <x_i, v> of the iterate, and
// the kept point's margins z_i = <x_i, v_b> (and the average's) are updated by the same mixes (z_i <- z_i + s (r_i -
// z_i)), so P at every mix is the sum of the samples' losses at z_i + s (r_i - z_i) (2N - 1 sums, reduced with the
// certificate's own sums) plus lambda/2 ||w||^2 from three dot products of d-vectors per segment. Memory: two
// n-vectors of margins and two d-vectors. Used by CoCoA+ (cocoa.cpp); the single-process solvers' iterates do not
// jump (mushrooms, hinge: the same epochs with it), so they certify w(alpha).
#pragma once
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// The grid of the mixes: s = j / N for j = 0 .. N - 1 on each segment. N = 10: on label-sorted a9a (hinge, bias 1,
/// K = 2 ranks, seed 1), with the kept point's segment alone, the rounds to relative gap 1e-4 were 2190 without a kept
/// point, 981 with N = 4, 942 with N = 10, 925 with N = 20 (bench/results/mpi.md, section 9).
inline constexpr int kPrimalMixes = 10;

/// The kept primal point of a dual solver's certificate (DualForm only), in the units of v: w_b = v_b / (lambda n).
/// Two segments end at the iterate's point w_t = v / (lambda n): one from the kept point w_b, one from the running
/// average w_e of the earlier certified iterates' points (w_e <- (w_e + w_t) / 2 after each certificate: the
/// iterates' points jump about the optimum, and their average lies closer to it than the kept point's segment reaches
/// in one round). The kept point's segment needs the iterate's margins, so only certified iterates are kept; with
/// `every_round` (CoCoA+ at K > 1, which certifies every few rounds) the rounds between enter the average in O(d)
/// (fold_round), and the next certificate's pass computes the average's margins from the same row reads
/// (average_to_refresh). Without it, K = 2 runs stopped by a budget of 7 or 20 rounds certified relative gaps 1.25-3.3x
/// those of certifying every round (label-sorted w7a, hinge and ridge; with it 1.0-1.45x).
template <class Form>
class BestPrimal {
 public:
  /// loss sums per certificate: the kept point's segment at s = 1/N .. (N - 1)/N (s = 0 is the kept point, whose P
  /// is known), the average's at s = 0 .. (N - 1)/N
  static constexpr int kSums = 2 * kPrimalMixes - 1;

  /// `every_round`: fold_round() adds the rounds without a certificate to the average (CoCoA+ at K > 1).
  BestPrimal(const Form& form, std::size_t dim, bool every_round = false)
      : form_(form), vb_(dim, 0.0), ve_(dim, 0.0), r_(static_cast<std::size_t>(form.n_coords())),
        every_round_(every_round) {}

  /// Where the certificate's pass writes the iterate's margins r_i = <a_i, v> (size n_coords; coordinate_terms'
  /// `inners`) before loss_sums() and keep().
  double* margins() { return r_.data(); }

  /// This process's (rank's) part of the loss sums at the segments' points: the kept point's, out[j - 1] = sum_i
  /// phi_i((z_i + s_j (r_i - z_i)) / (lambda n)) for j = 1 .. N - 1, s_j = j / N, and the average's, out[N - 1 + j]
  /// with its margins e_i for j = 0 .. N - 1; over this part's coordinates, r_i the iterate's margins (margins()).
  /// Before the first keep() there is no kept point: zeros.
  void loss_sums(double* out) {
    for (int j = 0; j < kSums; ++j) out[j] = 0;
    if (!have_) return;
    if (stale_) {  // not refreshed by the certificate's pass (average_to_refresh): a pass of its own
      for (std::size_t i = 0; i < ze_.size(); ++i) ze_[i] = form_.inner(static_cast<index_t>(i), ve_.data());
      stale_ = false;
    }
    const std::vector<double>& r = r_;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const index_t c = static_cast<index_t>(i);
      const double y = form_.y[c], ci = form_.c[c], z = zb_[i], dz = r[i] - z, e = ze_[i], de = r[i] - e;
      for (int j = 1; j < kPrimalMixes; ++j)
        out[j - 1] += Form::LossP::value(y, (z + mix(j) * dz) * form_.inv_lambda_n, ci);
      for (int j = 0; j < kPrimalMixes; ++j)
        out[kPrimalMixes - 1 + j] += Form::LossP::value(y, (e + mix(j) * de) * form_.inv_lambda_n, ci);
    }
  }

  /// After the certificate `cert` of the iterate (v, margins()): `sums` are loss_sums() summed over every rank.
  /// Keeps the best point of the two segments (the iterate's own point included) and returns the certificate with its
  /// P (P - D, with the iterate's D). Then folds the iterate into the average.
  Certificate keep(const Certificate& cert, std::span<const double> sums, std::span<const double> v) {
    const std::vector<double>& r = r_;
    double best = cert.primal, s_best = 1;
    bool from_avg = false;
    if (have_) {
      const double reg = 0.5 * form_.lambda * form_.inv_lambda_n * form_.inv_lambda_n;
      if (p_ < best) best = p_, s_best = 0;
      for (int seg = 0; seg < 2; ++seg) {
        const std::vector<double>& u = seg == 0 ? vb_ : ve_;
        double uu = 0, ud = 0, dd = 0;  // u.u, u.(v - u), (v - u).(v - u): ||u + s (v - u)||^2
        for (std::size_t k = 0; k < u.size(); ++k) {
          const double d = v[k] - u[k];
          uu += u[k] * u[k], ud += u[k] * d, dd += d * d;
        }
        for (int j = seg == 0 ? 1 : 0; j < kPrimalMixes; ++j) {
          const double s = mix(j);
          const double loss = sums[seg == 0 ? j - 1 : kPrimalMixes - 1 + j];
          const double p = loss * form_.inv_n + reg * (uu + s * (2 * ud + s * dd));
          if (p < best) best = p, s_best = s, from_avg = seg == 1;
        }
      }
    }
    if (s_best == 1) {
      vb_.assign(v.begin(), v.end());
      zb_.assign(r.begin(), r.end());
    } else if (from_avg || s_best > 0) {  // u + s (v - u) from the segment's start u (elementwise: u may be vb_)
      const std::vector<double>& uv = from_avg ? ve_ : vb_;
      const std::vector<double>& uz = from_avg ? ze_ : zb_;
      for (std::size_t k = 0; k < vb_.size(); ++k) vb_[k] = uv[k] + s_best * (v[k] - uv[k]);
      for (std::size_t i = 0; i < zb_.size(); ++i) zb_[i] = uz[i] + s_best * (r[i] - uz[i]);
    }
    if (!have_) {
      ve_.assign(v.begin(), v.end());
      ze_.assign(r.begin(), r.end());
    } else {
      for (std::size_t k = 0; k < ve_.size(); ++k) ve_[k] = 0.5 * (ve_[k] + v[k]);
      for (std::size_t i = 0; i < ze_.size(); ++i) ze_[i] = 0.5 * (ze_[i] + r[i]);
    }
    have_ = true;
    p_ = best;
    Certificate c = cert;
    c.primal = best;
    c.gap = best - cert.dual;
    c.gap_sum = c.gap;  // (the per-coordinate gaps describe w(alpha), not the kept point)
    return c;
  }

  /// A round without a certificate (with every_round): its iterate's point v joins the running average, O(d); the
  /// average's margins come with the next certificate's pass (average_to_refresh), from the same row reads.
  void fold_round(std::span<const double> v) {
    if (!have_ || !every_round_) return;
    for (std::size_t k = 0; k < ve_.size(); ++k) ve_[k] = 0.5 * (ve_[k] + v[k]);
    stale_ = true;
  }
  /// The average's point where rounds without a certificate moved it (else nullptr): the certificate's pass writes
  /// its margins <a_i, v_e> to average_margins() from the same row reads, then calls average_refreshed().
  const double* average_to_refresh() const { return stale_ ? ve_.data() : nullptr; }
  double* average_margins() { return ze_.data(); }
  void average_refreshed() { stale_ = false; }

  /// The kept point, in the units of v (empty before the first keep()).
  std::span<const double> point() const { return have_ ? std::span<const double>(vb_) : std::span<const double>(); }

 private:
  static double mix(int j) { return double(j) / kPrimalMixes; }
  const Form& form_;
  std::vector<double> vb_, zb_, ve_, ze_, r_;
  double p_ = INFINITY;
  bool have_ = false, stale_ = false, every_round_ = false;
};

}  // namespace hetglm
