// SPDX-License-Identifier: Apache-2.0
// The primal working-set solver (algorithm and sources in working_set.hpp).
#include "hetglm/solvers/working_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <thread>

#include "hetglm/error.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "anderson.hpp"
#include "dense_kernels.hpp"
#include "executor.hpp"

namespace hetglm {

namespace {

constexpr index_t kMinWorkingSet = 100;      // the smallest working set
constexpr double kInnerShare = 0.3;          // inner problems are solved to this share of the outer gap (celer)
constexpr int kMaxInnerEpochs = 20000;       // inner epochs per outer iteration, at most
constexpr std::int64_t kSampleChunk = 4096;  // samples per partial sum (fixed: sums never depend on the thread count)
constexpr index_t kFeatureChunk = 64;        // features per partial sum
constexpr std::int64_t kRowBlock = 8192;     // rows per partial dot of the row-split epoch (fixed, as kSampleChunk)
constexpr std::int64_t kRowSplitMin = 4 * kRowBlock;  // the row-split epoch from this many samples on
constexpr double kGramEpochs = 30;           // Gram mode when building the Gram costs less than this many epochs
constexpr double kGramMaxEntries = 1 << 23;  // and it has at most this many entries (64 MiB)
// Gap-safe screening tests |<x^(j), theta>| + R ||x^(j)|| < lambda eta' (1 - kScreenMargin): the computed
// correlations and gap carry rounding errors, and a feature of the support sits at |<x^(j), theta>| = lambda eta'
// at the optimum with R -> 0 as the gap does (at a gap rounded to 0, R = 0 would screen it on a rounding error).
constexpr double kScreenMargin = 1e-9;
// Relative rounding allowance of the correlation bounds, per nonzero of a product (and once on a distance). The
// rounding of the norms and distances themselves (relative n eps at most, against a bound of at most lambda eta')
// stays far inside the kScreenMargin the bounds are compared with.
constexpr double kBoundSlack = 4e-16;

/// A barrier for threads that all run at once and meet every few microseconds (row_split_epoch): they spin on the
/// phase counter, and yield the core after a while (a loaded machine). std::barrier sleeps in the kernel, and its
/// wake-up cost (about 30 us here) was as long as the work between two meetings.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n), left_(n) {}
  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_relaxed);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      left_.store(n_, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins)
      if (spins >= 1 << 14) std::this_thread::yield();
  }

 private:
  const int n_;
  std::atomic<int> left_;
  std::atomic<unsigned> phase_{0};
};

/// f(j) for every j in [0, m), in parallel over ranges of kFeatureChunk.
template <class F>
void for_features(index_t m, const F& f) {
  parallel_chunks((std::int64_t(m) + kFeatureChunk - 1) / kFeatureChunk, [&](std::int64_t c) {
    const index_t hi = static_cast<index_t>(std::min<std::int64_t>(m, (c + 1) * std::int64_t(kFeatureChunk)));
    for (index_t j = static_cast<index_t>(c * kFeatureChunk); j < hi; ++j) f(j);
  });
}

template <class Form>
class WorkingSet {
 public:
  WorkingSet(const Form& form, const SolverOptions& o, int threads)
      : f_(form), o_(o), A_(*form.A), m_(form.n_coords()), n_(form.dim()), le_(form.l1_level()),
        threads_(std::max(1, threads)), trace_(std::getenv("HETGLM_WS_TRACE") != nullptr),
        lo_(values_lo_for(A_, o.tol)) {}

  SolveResult run();

 private:
  using LossP = typename Form::LossP;
  using PenP = typename Form::PenP;
  static constexpr bool kSquared = LossP::id == Loss::squared;

  bool full(index_t j) const { return A_.offsets[j + 1] - A_.offsets[j] == offset_t(n_); }

  /// u_k = phi_k'(vv_k) for every sample and the samples' certificate terms at vv (chunks in parallel, summed in
  /// chunk order).
  CertificateTerms sample_pass(const double* vv, double* u) const {
    const std::int64_t chunks = (std::int64_t(n_) + kSampleChunk - 1) / kSampleChunk;
    std::vector<CertificateTerms> part(static_cast<std::size_t>(chunks));
    parallel_chunks(chunks, [&](std::int64_t ch) {
      CertificateTerms t;
      const std::int64_t hi = std::min<std::int64_t>(n_, (ch + 1) * kSampleChunk);
      for (std::int64_t k = ch * kSampleChunk; k < hi; ++k) {
        const SampleTerms st = f_.sample(static_cast<index_t>(k), vv[k]);
        f_.add_sample_terms(static_cast<index_t>(k), vv[k], st, t);
        u[k] = st.derivative;
      }
      part[ch] = t;
    });
    CertificateTerms total;
    for (const CertificateTerms& p : part) total += p;
    return total;
  }

  /// <x^(j), u> and out += a x^(j), on the float64 values with lo_: forms.hpp row_dot / row_axpy on the rows of
  /// X^T (a full column of at least 32 samples through the dense kernels, its two halves one after the other).
  double column_dot(index_t j, const double* u) const { return row_dot(A_, j, u, lo_); }
  void column_axpy(index_t j, double a, double* out) const { row_axpy(A_, j, a, out, lo_); }

  /// The certificate terms of the features of `list`: feature(j, t) adds feature j's to t and says whether it
  /// computed a product (counted into *products when given). Chunks of kFeatureChunk in parallel, summed in order.
  template <class F>
  CertificateTerms reduce_features(const std::vector<index_t>& list, const F& feature,
                                   std::int64_t* products = nullptr) const {
    const std::int64_t L = static_cast<std::int64_t>(list.size());
    const std::int64_t chunks = (L + kFeatureChunk - 1) / kFeatureChunk;
    std::vector<CertificateTerms> part(static_cast<std::size_t>(chunks));
    std::vector<std::int64_t> done(static_cast<std::size_t>(chunks), 0);
    parallel_chunks(chunks, [&](std::int64_t ch) {
      CertificateTerms t;
      const std::int64_t hi = std::min<std::int64_t>(L, (ch + 1) * kFeatureChunk);
      for (std::int64_t p = ch * kFeatureChunk; p < hi; ++p) done[ch] += feature(list[p], t);
      part[ch] = t;
    });
    CertificateTerms total;
    for (const CertificateTerms& p : part) total += p;
    if (products)
      for (std::int64_t d : done) *products += d;
    return total;
  }

  /// s_j = <x^(j), u> / n for the features of `list` and their certificate terms at the weights ww.
  CertificateTerms feature_pass(const std::vector<index_t>& list, const double* u, double* s, const double* ww) const {
    return reduce_features(list, [&](index_t j, CertificateTerms& t) {
      const double sj = column_dot(j, u) * f_.inv_n;
      s[j] = sj;
      f_.add_penalty_terms(ww[j], sj, t);
      return true;
    });
  }

  /// ||a - b|| / n (n-vectors).
  double distance(const double* a, const double* b) const {
    double q = 0;
    for (index_t k = 0; k < n_; ++k) q += (a[k] - b[k]) * (a[k] - b[k]);
    return std::sqrt(q) * f_.inv_n * (1 + kBoundSlack);
  }
  /// Moves the correlation bounds' reference to the derivative vector u (working_set.hpp, "Correlation bounds"):
  /// the drift grows by ||u - u_ref|| / n, so base_j + ||x^(j)|| (drift - anchor_j) bounds |<x^(j), u>| / n.
  void advance_bounds(const double* u) {
    if (!(le_ > 0)) return;
    if (bound_u_.empty()) {  // no reference yet: every bound unknown
      bound_base_.assign(static_cast<std::size_t>(m_), std::numeric_limits<double>::infinity());
      bound_anchor_.assign(static_cast<std::size_t>(m_), 0.0);
      bound_drift_ = 0;
    } else {
      bound_drift_ += distance(u, bound_u_.data());
    }
    bound_u_.assign(u, u + n_);
  }
  /// The certificate pass over the alive features at a derivative vector u within `extra` (a distance as above) of
  /// the bounds' reference: a feature with w_j = 0 whose bound (plus ||x^(j)|| extra) is at most lambda eta'
  /// (1 - kScreenMargin) adds exactly nothing to the certificate (its g, g^* and per-feature gap are 0 and its |s_j|
  /// cannot raise the dual point's scale), so its product is skipped and s_j holds the bound instead (an upper bound
  /// of |s_j|: screening and the violator count stay safe, the working set's ranking takes it as is). The others
  /// are computed exactly as by feature_pass; with `refresh` their bounds restart at the computed value (plus the
  /// product's rounding, ||x^(j)|| ||u|| nnz_j eps / n).
  CertificateTerms bounded_feature_pass(const double* u, double* s, double extra, bool refresh) {
    if (!(le_ > 0) || bound_u_.empty()) return feature_pass(alive_, u, s, w_);
    const double inv_n = f_.inv_n, level = le_ * (1 - kScreenMargin);
    double unorm = 0;
    if (refresh) {
      for (index_t k = 0; k < n_; ++k) unorm += u[k] * u[k];
      unorm = std::sqrt(unorm) * inv_n;
    }
    std::int64_t computed = 0;
    const CertificateTerms total = reduce_features(alive_, [&](index_t j, CertificateTerms& t) {
      const double nrm = col_norm_[j];
      const double bound = bound_base_[j] + nrm * (bound_drift_ - bound_anchor_[j] + extra);
      if (w_[j] == 0 && bound <= level) {
        s[j] = bound;
        return false;
      }
      const double sj = column_dot(j, u) * inv_n;
      s[j] = sj;
      f_.add_penalty_terms(w_[j], sj, t);
      if (refresh) {
        const double nnz = double(A_.offsets[j + 1] - A_.offsets[j]);
        bound_base_[j] = std::fabs(sj) + nrm * unorm * (nnz + 2) * kBoundSlack;
        bound_anchor_[j] = bound_drift_;
      }
      return true;
    }, &computed);
    const std::int64_t L = static_cast<std::int64_t>(alive_.size());
    bound_computed_ += computed;
    bound_visits_ += L;
    if (trace_)
      std::fprintf(stderr, "  bounded pass: %lld of %lld computed (drift %.3e extra %.3e le %.3e refresh %d)\n",
                   static_cast<long long>(computed), static_cast<long long>(L), bound_drift_, extra, le_, int(refresh));
    return total;
  }

  /// out = X ww over the features of `list` (exactly, in double): full columns in parallel blocks of rows (the
  /// same order of features for every entry), the others after them in order.
  void multiply(const std::vector<index_t>& list, const double* ww, std::vector<double>& out) const {
    std::fill(out.begin(), out.end(), 0.0);
    std::vector<index_t> dense_cols, sparse_cols;
    for (index_t j : list)
      if (ww[j] != 0) (full(j) ? dense_cols : sparse_cols).push_back(j);
    if (!dense_cols.empty()) {
      parallel_chunks((std::int64_t(n_) + kSampleChunk - 1) / kSampleChunk, [&](std::int64_t ch) {
        const std::int64_t lo = ch * kSampleChunk, hi = std::min<std::int64_t>(n_, lo + kSampleChunk);
        for (index_t j : dense_cols) {
          dense::axpy(ww[j], A_.values.data() + A_.offsets[j] + lo, out.data() + lo, hi - lo);
          if (lo_) dense::axpy(ww[j], lo_ + A_.offsets[j] + lo, out.data() + lo, hi - lo);
        }
      });
    }
    for (index_t j : sparse_cols) column_axpy(j, ww[j], out.data());
  }
  void resync() { multiply(support_candidates(), w_, v_); }
  /// The features that may be nonzero: the alive ones (screened features have w_j = 0).
  const std::vector<index_t>& support_candidates() const { return alive_; }

  /// The certificate of (w, v) (v exact) with the better of the residual's and the inner loop's best dual point;
  /// leaves that point's scale, s and gap (for screening and the ranking) in center_*.
  Certificate certify() {
    const CertificateTerms sh = sample_pass(v_.data(), u_.data());
    advance_bounds(u_.data());
    const CertificateTerms co = bounded_feature_pass(u_.data(), s_.data(), 0.0, true);
    Certificate cert = f_.finish(co, sh);
    center_s_ = &s_;
    center_scale_ = cert.dual_scale;
    center_gap_ = cert.gap;
    if (have_dual_point_) {
      multiply(ws_, dual_w_.data(), vd_);
      const CertificateTerms sh2 = sample_pass(vd_.data(), ud_.data());
      const CertificateTerms co2 = bounded_feature_pass(ud_.data(), sd_.data(), distance(ud_.data(), u_.data()), false);
      const Certificate c2 = f_.finish(co2, sh2);
      merge_dual(cert, c2, &sd_);
    }
    return cert;
  }
  /// Takes the dual value of `other` (a certificate of another point) when it is better: the primal stays cert's.
  /// There is no per-feature split of such a gap at w: gap_sum = gap.
  void merge_dual(Certificate& cert, const Certificate& other, const std::vector<double>* s) {
    if (!(other.dual > cert.dual) || !std::isfinite(other.dual)) return;
    cert.dual = other.dual;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = cert.gap;
    cert.dual_scale = other.dual_scale;
    if (s) {
      center_s_ = s;
      center_scale_ = other.dual_scale;
      center_gap_ = cert.gap;
    }
  }

  /// Gap-safe screening with the certificate's dual point (center_*): removes provably-zero features from alive_.
  /// Returns whether features were removed. incremental: v follows the zeroed weights by column updates (the inner
  /// loop), else by a re-synchronization.
  bool screen(bool incremental = false) {
    if (!(le_ > 0)) return false;
    const double R = f_.gap_safe_radius(center_gap_);
    std::vector<index_t> keep;
    keep.reserve(alive_.size());
    bool changed = false;
    for (index_t j : alive_) {
      if (provably_zero(j, R)) {
        if (w_[j] != 0) {  // zero at the optimum: drop it from the model (v follows)
          if (incremental) column_axpy(j, -w_[j], v_.data());
          w_[j] = 0;
          changed = true;
        }
        continue;
      }
      keep.push_back(j);
    }
    const bool removed = keep.size() != alive_.size();
    alive_.swap(keep);
    if (changed && !incremental) resync();
    return removed;
  }

  /// The features the gap-safe rule proves zero at the optimum: those screened out during the solve and those the
  /// certificate's dual point (center_*) rules out now (counted only: w is not changed).
  std::int64_t count_screened() const {
    if (!(le_ > 0)) return 0;
    const double R = f_.gap_safe_radius(center_gap_);
    std::int64_t n = static_cast<std::int64_t>(m_) - static_cast<std::int64_t>(alive_.size());
    for (index_t j : alive_) n += provably_zero(j, R);
    return n;
  }
  /// The gap-safe rule for feature j with the dual point center_* and its radius R.
  bool provably_zero(index_t j, double R) const {
    return center_scale_ * std::fabs((*center_s_)[j]) + R * col_norm_[j] < le_ * (1 - kScreenMargin);
  }

  /// The next working set (working_set.hpp, step 3).
  void choose_working_set() {
    const std::vector<double>& s = *center_s_;
    index_t support = 0, violators = 0;
    for (index_t j : alive_) {
      if (w_[j] != 0) ++support;
      else if (std::fabs(s_[j]) > le_) ++violators;
    }
    const index_t alive = static_cast<index_t>(alive_.size());
    index_t size = std::max({kMinWorkingSet, 2 * support, support + violators, index_t(ws_.size())});
    if (2 * size >= alive) size = alive;  // most of the problem: all of it (one outer certificate fewer)
    score_.resize(alive_.size());
    std::vector<index_t> order(alive_.size());
    std::iota(order.begin(), order.end(), index_t{0});
    for (std::size_t p = 0; p < alive_.size(); ++p) {
      const index_t j = alive_[p];
      score_[p] = w_[j] != 0 ? -std::numeric_limits<double>::infinity()
                  : col_norm_[j] > 0 ? (le_ - center_scale_ * std::fabs(s[j])) / col_norm_[j]
                                     : std::numeric_limits<double>::infinity();
    }
    auto by_score = [&](index_t a, index_t b) { return score_[a] < score_[b] || (score_[a] == score_[b] && a < b); };
    if (size < alive) std::nth_element(order.begin(), order.begin() + size, order.end(), by_score);
    ws_.clear();
    for (index_t p = 0; p < size; ++p) ws_.push_back(alive_[order[p]]);
    std::sort(ws_.begin(), ws_.end());
  }

  /// The inner loop on the working set until its gap is at most tol_in (or kMaxInnerEpochs). Returns a certificate
  /// valid for the whole problem when it computed one (the working set is every alive feature and v was exact).
  std::optional<Certificate> inner(double tol_in, double tol_whole);
  std::optional<Certificate> inner_residual(double tol_in, double tol_whole);
  std::optional<Certificate> inner_gram(double tol_in);
  bool use_gram() const;

  /// One coordinate step of feature j against v (squared loss with unit weights: r_j = <x^(j), v> - <x^(j), y>;
  /// otherwise Form::coordinate_step). Returns the exact objective change for the squared loss (0 otherwise).
  double step(index_t j) {
    const double wj = w_[j];
    if constexpr (kSquared) {
      if (unit_weights_) {
        const double r = column_dot(j, v_.data()) - xy_[j];
        const double w_new = f_.step(j, wj, r, 1.0);
        const double d = w_new - wj;
        if (d == 0) return 0;
        w_[j] = w_new;
        column_axpy(j, d, v_.data());
        return squared_change(j, wj, w_new, r);
      }
    }
    update_coordinate(f_, j, w_, v_.data(), 1.0);
    return 0;
  }

  /// The exact objective change of the squared loss (unit weights) when w_j moves from wj to w_new, r_j as in step().
  double squared_change(index_t j, double wj, double w_new, double r) const {
    const double s = r * f_.inv_n, d = w_new - wj;
    return s * d + 0.5 * f_.h[j] * d * d + PenP::value(w_new, f_.lambda, f_.eta) - PenP::value(wj, f_.lambda, f_.eta);
  }

  /// Whether an epoch runs row-split: the squared loss with unit weights on a working set of full columns (dense
  /// data) and at least kRowSplitMin samples.
  bool row_split() const {
    if (!kSquared || !unit_weights_ || std::int64_t(n_) < kRowSplitMin) return false;
    return std::all_of(ws_.begin(), ws_.end(), [&](index_t j) { return full(j); });
  }

  /// One epoch of coordinate steps over the working set, in its order. Returns the objective's decrease (exact for
  /// the squared loss with unit weights, else 0).
  double epoch() {
    if (row_split()) return row_split_epoch();
    double decrease = 0;
    for (index_t j : ws_) decrease -= step(j);
    return decrease;
  }

  /// The epoch of step() on dense data with the rows split among threads: the samples form fixed blocks of
  /// kRowBlock rows, thread t owns a contiguous run of them (its part of v stays in its cache). For each feature of
  /// the working set every thread computes its blocks' partial dots <x^(j)_b, v_b>, one barrier, then every thread
  /// adds all of them in block order, takes the same step and updates its own rows of v. The step therefore depends
  /// on the block partition only, never on the thread count (1 thread runs the same sums), and no thread writes
  /// what another reads: each keeps its own copy of the working set's weights; the partial dots alternate between
  /// two arrays, which one barrier per step makes safe. std::thread, not oneTBB tasks: the barrier needs every
  /// thread running at once, which oneTBB does not promise for its tasks.
  double row_split_epoch() {
    const std::int64_t N = n_, B = (N + kRowBlock - 1) / kRowBlock;
    const int T = static_cast<int>(std::min<std::int64_t>(threads_, B));
    const std::size_t W = ws_.size();
    std::vector<double> part[2] = {std::vector<double>(static_cast<std::size_t>(B)),
                                   std::vector<double>(static_cast<std::size_t>(B))};
    std::vector<double> w0(W);
    for (std::size_t p = 0; p < W; ++p) w0[p] = w_[ws_[p]];
    SpinBarrier sync(T);
    double decrease = 0;
    const float* val = A_.values.data();
    double* v = v_.data();
    auto worker = [&](int t) {
      const std::int64_t b0 = B * t / T, b1 = B * (t + 1) / T;
      const std::int64_t lo = b0 * kRowBlock, hi = std::min(N, b1 * kRowBlock);
      std::vector<double> wl = w0;
      double dec = 0;
      for (std::size_t p = 0; p < W; ++p) {
        const index_t j = ws_[p];
        const float* col = val + A_.offsets[j];
        const float* col_lo = lo_ ? lo_ + A_.offsets[j] : nullptr;
        std::vector<double>& pj = part[p & 1];
        for (std::int64_t b = b0; b < b1; ++b) {
          const std::int64_t r0 = b * kRowBlock, len = std::min(N, r0 + kRowBlock) - r0;
          pj[static_cast<std::size_t>(b)] =
              dense::dot(col + r0, v + r0, len) + (col_lo ? dense::dot(col_lo + r0, v + r0, len) : 0.0);
        }
        if (T > 1) sync.arrive_and_wait();
        double dot = 0;
        for (std::int64_t b = 0; b < B; ++b) dot += pj[static_cast<std::size_t>(b)];
        const double wj = wl[p], r = dot - xy_[j];
        const double w_new = f_.step(j, wj, r, 1.0), d = w_new - wj;
        if (d == 0) continue;
        wl[p] = w_new;
        dense::axpy(d, col + lo, v + lo, hi - lo);
        if (col_lo) dense::axpy(d, col_lo + lo, v + lo, hi - lo);
        dec -= squared_change(j, wj, w_new, r);
      }
      if (t == 0) {
        for (std::size_t p = 0; p < W; ++p) w_[ws_[p]] = wl[p];
        decrease = dec;
      }
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(T - 1));
    for (int t = 1; t < T; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (std::thread& th : pool) th.join();
    return decrease;
  }

  const Form& f_;
  const SolverOptions& o_;
  const CsrMatrix& A_;
  const index_t m_, n_;
  const double le_;
  const int threads_;                     // the solver's threads (row_split_epoch)
  const bool trace_;
  /// float64 data at tol < kFloat64Tol (forms.hpp): A_.values_lo, read wherever the fixed point or the certificate
  /// is decided (column_dot, column_axpy, multiply, row_split_epoch, the Gram matrix and X^T y, the column norms of
  /// the bounds and of screening); else null (the float32 values alone).
  const float* lo_;
  double* w_ = nullptr;                   // res.alpha
  bool unit_weights_ = false;
  std::vector<double> xy_;                // <x^(j), y> (squared loss, unit weights)
  std::vector<double> v_, u_, s_;         // shared vector, derivatives, feature gradients at (w, v)
  std::vector<double> dual_w_;            // the inner loop's best dual point is grad f(X dual_w_)
  std::vector<double> vd_, ud_, sd_;      // its shared vector, derivatives, gradients
  bool have_dual_point_ = false;
  const std::vector<double>* center_s_ = nullptr;
  double center_scale_ = 1, center_gap_ = 0;
  std::vector<double> col_norm_;          // ||x^(j)||
  std::vector<double> bound_base_, bound_anchor_, bound_u_;  // the correlation bounds (bounded_feature_pass)
  double bound_drift_ = 0;
  std::int64_t bound_computed_ = 0;       // products the certificates computed (the others were bounded)
  std::int64_t bound_visits_ = 0;         // alive features the bounded certificates visited
  std::vector<index_t> alive_, ws_;       // features not screened; the working set
  std::vector<double> score_;
  int inner_epochs_ = 0;
  bool last_gram_ = false;
  std::vector<index_t> gram_feats_;       // the features of the cached Gram matrix (sorted)
  std::vector<double> gram_Q_, gram_b_;   // X_G^T C X_G / n and X_G^T C y / n
};

template <class Form>
bool WorkingSet<Form>::use_gram() const {
  if constexpr (!kSquared) {
    return false;
  } else {
    // An epoch on the Gram matrix costs |W|^2 instead of nnz(W) (glmnet's covariance updates, Friedman, Hastie,
    // Tibshirani 2010); building its rows for the features not cached from the previous working set costs
    // sum over samples of (the sample's working-set entries) x (its new ones).
    // A full column adds 1 to every sample's count: those are counted once (full, full_new), not per entry (the
    // per-entry count of a dense working set cost about as much as an epoch).
    const double W = double(ws_.size());
    if (W * W > kGramMaxEntries) return false;
    double nnz = 0, full_cols = 0, full_new = 0;
    bool sparse = false;
    for (index_t j : ws_) {
      nnz += double(A_.offsets[j + 1] - A_.offsets[j]);
      if (full(j)) {
        full_cols += 1;
        full_new += !std::binary_search(gram_feats_.begin(), gram_feats_.end(), j);
      } else {
        sparse = true;
      }
    }
    if (W * W > 0.25 * nnz) return false;
    const double budget = kGramEpochs * nnz;
    if (!sparse) return double(n_) * full_cols * full_new <= budget;
    std::vector<std::int32_t> per_row(static_cast<std::size_t>(n_), 0), per_row_new(per_row.size(), 0);
    for (index_t j : ws_) {
      if (full(j)) continue;
      const bool fresh = !std::binary_search(gram_feats_.begin(), gram_feats_.end(), j);
      for (offset_t p = A_.offsets[j]; p < A_.offsets[j + 1]; ++p) {
        ++per_row[A_.indices[p]];
        if (fresh) ++per_row_new[A_.indices[p]];
      }
    }
    double build = 0;
    for (std::size_t k = 0; k < per_row.size(); ++k)
      build += (double(per_row[k]) + full_cols) * (double(per_row_new[k]) + full_new);
    return build <= budget;
  }
}

template <class Form>
std::optional<Certificate> WorkingSet<Form>::inner(double tol_in, double tol_whole) {
  have_dual_point_ = false;
  last_gram_ = use_gram();
  // On the Gram matrix an epoch costs |W|^2: solve the inner problem much further (fewer outer iterations, each a
  // pass over the data).
  return last_gram_ ? inner_gram(std::max(0.3 * tol_whole, tol_in / 300)) : inner_residual(tol_in, tol_whole);
}

template <class Form>
std::optional<Certificate> WorkingSet<Form>::inner_residual(double tol_in, double tol_whole) {
  std::size_t W = ws_.size();
  const std::size_t N = static_cast<std::size_t>(n_), M = static_cast<std::size_t>(m_);
  // The working set is the whole (screened) problem: solve it to the final tolerance, screening as it goes.
  const bool whole = ws_.size() == alive_.size();
  if (whole) tol_in = tol_whole;
  AndersonHistory hv(N), hw(W);
  std::vector<double> v_acc(N), w_acc(M, 0.0), wa(W), w_ws(W);
  double best_dual = -std::numeric_limits<double>::infinity();
  auto push = [&] {
    hv.push([&](double* x) { std::copy(v_.begin(), v_.end(), x); });
    hw.push([&](double* x) {
      for (std::size_t p = 0; p < W; ++p) x[p] = w_[ws_[p]];
    });
  };
  auto keep_dual = [&](const double* ww_ws, double dual) {  // ww_ws: the weights of the working set
    if (!(dual > best_dual)) return;
    best_dual = dual;
    std::fill(dual_w_.begin(), dual_w_.end(), 0.0);
    for (std::size_t p = 0; p < W; ++p) dual_w_[ws_[p]] = ww_ws[p];
    have_dual_point_ = true;
  };
  push();
  // Checks triggered by a small epoch decrease back off geometrically when they fail, and skip the first half of
  // the epochs the gap's own rate of decrease between the last two failed checks predicts it still needs (a check
  // costs about one pass over the working set, as much as an epoch: late on a path the decrease passed the trigger
  // at nearly every epoch while the gap fell by about 0.4 per epoch).
  double trigger = tol_in;
  int next_check = 0, e_last = 0;
  double g_last = std::numeric_limits<double>::infinity();
  for (int e = 1; e <= kMaxInnerEpochs; ++e) {
    const auto te = std::chrono::steady_clock::now();
    const double decrease = epoch();
    const double epoch_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - te).count();
    ++inner_epochs_;
    push();
    const bool extrapolate = hv.full() && (hv.filled - 1) % kAndersonDepth == 0;
    // A check costs about one pass over the working set: at the extrapolation cadence, and when the epoch's decrease
    // (exact for the squared loss) says the gap may be within reach.
    const bool by_decrease = kSquared && unit_weights_ && decrease <= trigger && e >= next_check;
    if (!extrapolate && !by_decrease) continue;
    if (by_decrease) trigger = 0.3 * std::min(trigger, decrease);
    // The current point: gradients in s_, derivatives in u_ (the outer loop's arrays).
    auto current = [&] {
      const CertificateTerms sh = sample_pass(v_.data(), u_.data());
      const CertificateTerms co = feature_pass(ws_, u_.data(), s_.data(), w_);
      return f_.finish(co, sh);
    };
    Certificate cur = current();
    center_s_ = &s_;
    center_scale_ = cur.dual_scale;
    center_gap_ = cur.gap;
    for (std::size_t p = 0; p < W; ++p) w_ws[p] = w_[ws_[p]];
    keep_dual(w_ws.data(), cur.dual);
    if (extrapolate) {
      double G[kAndersonDepth][kAndersonDepth], c[kAndersonDepth];
      hv.gram(G, [&](const double* a0, const double* a1, const double* b0, const double* b1) {
        double g = 0;
        for (std::size_t k = 0; k < N; ++k) g += (a1[k] - a0[k]) * (b1[k] - b0[k]);
        return g;
      });
      if (anderson_coefficients(G, c)) {
        hv.combine(c, v_acc.data(), N);
        hw.combine(c, wa.data(), W);
        for (std::size_t p = 0; p < W; ++p) w_acc[ws_[p]] = wa[p] = f_.feasible(ws_[p], wa[p]);
        // The extrapolated point: gradients in sd_, derivatives in ud_.
        const CertificateTerms sh2 = sample_pass(v_acc.data(), ud_.data());
        const CertificateTerms co2 = feature_pass(ws_, ud_.data(), sd_.data(), w_acc.data());
        const Certificate acc = f_.finish(co2, sh2);
        keep_dual(wa.data(), acc.dual);
        if (std::isfinite(acc.primal) && acc.primal < cur.primal) {  // skglm: take the extrapolated point when better
          for (index_t j : ws_) w_[j] = w_acc[j];
          v_.swap(v_acc);
          s_.swap(sd_);  // s_ and u_ stay the current point's
          u_.swap(ud_);
          Certificate moved = acc;
          center_s_ = &s_;
          center_scale_ = acc.dual_scale;
          center_gap_ = acc.gap;
          merge_dual(moved, cur, &sd_);
          cur = moved;
          hv.reset();
          hw.reset();
          push();
        } else {
          merge_dual(cur, acc, &sd_);
        }
        for (index_t j : ws_) w_acc[j] = 0;
      }
    }
    if (trace_)
      std::fprintf(stderr, "    inner epoch %d P %.12g D %.12g gap %.3e (tol_in %.3e)%s, steps %.4f s%s\n", e, cur.primal,
                   cur.dual, cur.gap, tol_in, extrapolate ? " extrapolated" : "", epoch_s,
                   row_split() ? " (row-split)" : "");
    if (cur.gap > tol_in) {
      if (std::isfinite(g_last) && cur.gap < g_last && e > e_last) {
        const double rate = std::pow(cur.gap / g_last, 1.0 / double(e - e_last));
        const double need = std::log(tol_in / cur.gap) / std::log(rate);  // epochs, at that rate
        if (rate > 0 && rate < 1 && std::isfinite(need)) next_check = e + std::clamp(int(0.5 * need), 1, 50);
      }
      e_last = e;
      g_last = cur.gap;
    }
    if (cur.gap <= tol_in) {
      if (!whole) break;
      // The whole problem's certificate: the primal at v = X w recomputed exactly (a dual value is valid at any
      // dual point, so the extrapolated one still counts).
      const Certificate checked = cur;
      multiply(ws_, w_, v_);
      cur = current();
      center_s_ = &s_;  // screening uses a dual point with its own gap
      center_scale_ = cur.dual_scale;
      center_gap_ = cur.gap;
      merge_dual(cur, checked, nullptr);
      if (cur.gap <= tol_in) return cur;
    }
    if (whole && screen(true)) {  // features provably zero leave the problem (the history restarts)
      ws_ = alive_;
      W = ws_.size();
      hv.reset();
      hw = AndersonHistory(W);
      wa.resize(W);
      w_ws.resize(W);
      push();
    }
  }
  return std::nullopt;
}

template <class Form>
std::optional<Certificate> WorkingSet<Form>::inner_gram(double tol_in) {
  if constexpr (!kSquared) {
    return inner_residual(tol_in, tol_in);
  } else {
    // Q = X_W^T C X_W / n and b = X_W^T C y / n: the entries of features of the previous working set are kept, the
    // rows of new features come from the working set's rows (a transposed copy of its columns).
    const auto t_build = std::chrono::steady_clock::now();
    const std::size_t W = ws_.size();
    const index_t Wi = static_cast<index_t>(W);
    std::vector<index_t> old_pos(W, -1);
    for (index_t p = 0; p < Wi; ++p) {
      const auto it = std::lower_bound(gram_feats_.begin(), gram_feats_.end(), ws_[p]);
      if (it != gram_feats_.end() && *it == ws_[p]) old_pos[p] = static_cast<index_t>(it - gram_feats_.begin());
    }
    // The working set's entries by sample (row_off, row_col, row_val), built in parallel over blocks of samples:
    // each block takes, from every column (its indices are sorted), the entries of its own samples, features in
    // working-set order, so every row lists its entries in that order whatever the blocks.
    const std::int64_t N = n_;
    const std::int64_t rows_per_block = std::max<std::int64_t>(kSampleChunk, (N + 63) / 64);
    const std::int64_t NB = (N + rows_per_block - 1) / rows_per_block;
    const std::size_t NB1 = static_cast<std::size_t>(NB) + 1;
    const index_t* aidx = A_.indices.data();
    const float* aval = A_.values.data();
    std::vector<offset_t> bpos(W * NB1);  // bpos[p NB1 + b]: column p's first entry in block b
    for_features(Wi, [&](index_t pi) {
      const std::size_t p = static_cast<std::size_t>(pi);
      const index_t j = ws_[p];
      const index_t* first = aidx + A_.offsets[j];
      const index_t* last = aidx + A_.offsets[j + 1];
      for (std::int64_t bl = 0; bl < NB; ++bl)
        bpos[p * NB1 + std::size_t(bl)] =
            static_cast<offset_t>(std::lower_bound(first, last, static_cast<index_t>(bl * rows_per_block)) - aidx);
      bpos[p * NB1 + std::size_t(NB)] = A_.offsets[j + 1];
    });
    std::vector<offset_t> row_off(static_cast<std::size_t>(n_) + 1, 0);
    parallel_chunks(NB, [&](std::int64_t bl) {
      for (std::size_t p = 0; p < W; ++p)
        for (offset_t q = bpos[p * NB1 + std::size_t(bl)]; q < bpos[p * NB1 + std::size_t(bl) + 1]; ++q)
          ++row_off[std::size_t(aidx[q]) + 1];
    });
    for (index_t k = 0; k < n_; ++k) row_off[k + 1] += row_off[k];
    std::vector<index_t> row_col(static_cast<std::size_t>(row_off[n_]));
    std::vector<double> row_val(row_col.size());
    parallel_chunks(NB, [&](std::int64_t bl) {
      const std::int64_t r0 = bl * rows_per_block, r1 = std::min(N, r0 + rows_per_block);
      std::vector<offset_t> next(row_off.begin() + r0, row_off.begin() + r1);
      for (std::size_t p = 0; p < W; ++p)
        for (offset_t q = bpos[p * NB1 + std::size_t(bl)]; q < bpos[p * NB1 + std::size_t(bl) + 1]; ++q) {
          const offset_t at = next[std::size_t(aidx[q] - r0)]++;
          row_col[at] = static_cast<index_t>(p);
          row_val[at] = entry(aval, lo_, q);
        }
    });
    const auto t_rows = std::chrono::steady_clock::now();
    std::vector<double> Q(W * W, 0.0), b(W, 0.0);
    const double inv_n = f_.inv_n;
    const std::size_t G = gram_feats_.size();
    for (std::size_t p = 0; p < W; ++p) {
      if (old_pos[p] < 0) continue;
      b[p] = gram_b_[old_pos[p]];
      for (std::size_t q = 0; q < W; ++q)
        if (old_pos[q] >= 0) Q[p * W + q] = gram_Q_[std::size_t(old_pos[p]) * G + old_pos[q]];
    }
    // The rows of the new features, from a pass over the samples (each row of the working set lists its features in
    // working-set order): Q is symmetric, so an entry adds to the rows of the kept features and to those of the new
    // ones from its own position on, and the rest is mirrored below. The samples are cut into a fixed number of
    // parts (from n and |W| only, never the thread count), each summed into its own matrix in parallel, and the
    // parts are added in order.
    const bool all_new = std::none_of(old_pos.begin(), old_pos.end(), [](index_t o) { return o >= 0; });
    const std::int64_t parts =
        std::clamp<std::int64_t>(std::int64_t(kGramMaxEntries / 2) / std::max<std::int64_t>(1, std::int64_t(W * W)),
                                 1, std::min<std::int64_t>(NB, 16));
    const std::int64_t rows_per_part = (N + parts - 1) / parts;
    std::vector<std::vector<double>> Qs(static_cast<std::size_t>(parts)), bs(static_cast<std::size_t>(parts));
    parallel_chunks(parts, [&](std::int64_t pt) {
      std::vector<double>& Qt = Qs[static_cast<std::size_t>(pt)];
      std::vector<double>& bt = bs[static_cast<std::size_t>(pt)];
      Qt.assign(W * W, 0.0);
      bt.assign(W, 0.0);
      const std::int64_t k0 = pt * rows_per_part, k1 = std::min(N, k0 + rows_per_part);
      for (std::int64_t k = k0; k < k1; ++k) {
        const double ck = f_.c[k], yk = f_.y[k];
        const offset_t r0 = row_off[k], r1 = row_off[k + 1];
        for (offset_t p = r0; p < r1; ++p) {
          const index_t pp = row_col[p];
          if (old_pos[pp] >= 0) continue;
          const double xp = ck * row_val[p] * inv_n;
          bt[pp] += xp * yk;
          double* Qp = Qt.data() + std::size_t(pp) * W;
          if (all_new) {
            for (offset_t q = p; q < r1; ++q) Qp[row_col[q]] += xp * row_val[q];
          } else {
            for (offset_t q = r0; q < r1; ++q) {
              const index_t c = row_col[q];
              if (old_pos[c] < 0 && c < pp) continue;
              Qp[c] += xp * row_val[q];
            }
          }
        }
      }
    });
    for_features(Wi, [&](index_t pi) {
      const std::size_t p = static_cast<std::size_t>(pi);
      if (old_pos[p] >= 0) return;
      for (const std::vector<double>& bt : bs) b[p] += bt[p];
      for (const std::vector<double>& Qt : Qs)
        for (std::size_t q = 0; q < W; ++q) Q[p * W + q] += Qt[p * W + q];
    });
    // Row p of a new feature holds Q[p][q] for the kept features and for the new ones from p on: mirror those.
    for (std::size_t p = 0; p < W; ++p)
      if (old_pos[p] < 0)
        for (std::size_t q = 0; q < W; ++q)
          if (old_pos[q] >= 0 || q > p) Q[q * W + p] = Q[p * W + q];
    double yy = 0;  // (1/2n) sum_k c_k y_k^2
    for (index_t k = 0; k < n_; ++k) yy += f_.c[k] * f_.y[k] * f_.y[k];
    yy *= 0.5 * inv_n;
    if (trace_)
      std::fprintf(stderr, "    gram matrix of %zu features (%lld entries of the data): %.4f s (by sample %.4f s)\n", W,
                   static_cast<long long>(row_col.size()),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count(),
                   std::chrono::duration<double>(t_rows - t_build).count());
    gram_feats_ = ws_;
    gram_Q_ = Q;
    gram_b_ = b;
    // q = Q w - b, the working set's gradients s_j.
    std::vector<double> wv(W), g(W);
    for (std::size_t p = 0; p < W; ++p) wv[p] = w_[ws_[p]];
    auto gradient = [&](const std::vector<double>& x, std::vector<double>& out) {
      for (std::size_t p = 0; p < W; ++p) {
        const double* Qp = Q.data() + p * W;
        double t = 0;
        for (std::size_t q = 0; q < W; ++q) t += Qp[q] * x[q];
        out[p] = t - b[p];
      }
    };
    gradient(wv, g);
    // The certificate of x (the working set's weights) with gradients gx, through the form's terms: the samples'
    // sums are those of the squared loss at v = X x: n f(v) = n (x.(gx - b)/2 + yy), sum_k a_k y_k = n (b.x - 2 yy),
    // sum_k a_k^2 / (2 c_k) = n f(v), with a = C (v - y).
    const double n = double(n_);
    auto certificate_of = [&](const std::vector<double>& x, const std::vector<double>& gx) {
      CertificateTerms co, sh;
      double xg = 0, xb = 0;
      for (std::size_t p = 0; p < W; ++p) {
        f_.add_penalty_terms(x[p], gx[p], co);
        xg += x[p] * gx[p];
        xb += x[p] * b[p];
      }
      const double fv = 0.5 * (xg - xb) + yy;
      sh.value = n * fv;
      sh.conj = n * (fv + xb - 2 * yy);
      sh.scaled[1] = n * (xb - 2 * yy);
      sh.scaled[2] = n * fv;
      return f_.finish(co, sh);
    };
    std::vector<double> hist_buf;
    AndersonHistory hw(W);
    hw.push([&](double* x) { std::copy(wv.begin(), wv.end(), x); });
    double best_dual = -std::numeric_limits<double>::infinity();
    std::vector<double> wa(W), ga(W);
    auto keep_dual = [&](const std::vector<double>& x, double dual) {
      if (!(dual > best_dual)) return;
      best_dual = dual;
      std::fill(dual_w_.begin(), dual_w_.end(), 0.0);
      for (std::size_t p = 0; p < W; ++p) dual_w_[ws_[p]] = x[p];
      have_dual_point_ = true;
    };
    for (int e = 1; e <= kMaxInnerEpochs; ++e) {
      for (std::size_t p = 0; p < W; ++p) {
        const index_t j = ws_[p];
        const double w_new = PenP::step(wv[p], g[p], Q[p * W + p], f_.lambda, f_.eta, f_.bound);
        const double d = w_new - wv[p];
        if (d == 0) continue;
        wv[p] = w_new;
        const double* Qp = Q.data() + p * W;  // symmetric: row p is column p
        for (std::size_t q = 0; q < W; ++q) g[q] += d * Qp[q];
        (void)j;
      }
      ++inner_epochs_;
      hw.push([&](double* x) { std::copy(wv.begin(), wv.end(), x); });
      Certificate cur = certificate_of(wv, g);
      keep_dual(wv, cur.dual);
      if (hw.full() && (hw.filled - 1) % kAndersonDepth == 0) {
        double G[kAndersonDepth][kAndersonDepth], c[kAndersonDepth];
        hw.gram(G, [&](const double* a0, const double* a1, const double* b0, const double* b1) {
          double t = 0;
          for (std::size_t p = 0; p < W; ++p) t += (a1[p] - a0[p]) * (b1[p] - b0[p]);
          return t;
        });
        if (anderson_coefficients(G, c)) {
          hw.combine(c, wa.data(), W);
          for (std::size_t p = 0; p < W; ++p) wa[p] = f_.feasible(ws_[p], wa[p]);
          gradient(wa, ga);
          const Certificate acc = certificate_of(wa, ga);
          keep_dual(wa, acc.dual);
          if (std::isfinite(acc.primal) && acc.primal < cur.primal) {
            wv = wa;
            g = ga;
            Certificate moved = acc;
            merge_dual(moved, cur, nullptr);
            cur = moved;
            hw.reset();
            hw.push([&](double* x) { std::copy(wv.begin(), wv.end(), x); });
          } else {
            merge_dual(cur, acc, nullptr);
          }
        }
      }
      if (trace_ && (e % 10 == 0 || cur.gap <= tol_in))
        std::fprintf(stderr, "    gram epoch %d P %.12g D %.12g gap %.3e (tol_in %.3e)\n", e, cur.primal, cur.dual,
                     cur.gap, tol_in);
      if (cur.gap <= tol_in) break;
    }
    for (std::size_t p = 0; p < W; ++p) w_[ws_[p]] = wv[p];
    resync();
    return std::nullopt;
  }
}

template <class Form>
SolveResult WorkingSet<Form>::run() {
  SolveResult res;
  const auto t_setup = std::chrono::steady_clock::now();
  EpochDriver driver(o_, res, Formulation::primal);
  if (lo_) driver.float64_values();
  driver.initial_alpha(f_, res.alpha);
  w_ = res.alpha.data();
  const std::size_t N = static_cast<std::size_t>(n_), M = static_cast<std::size_t>(m_);
  v_.assign(N, 0.0);
  u_.assign(N, 0.0);
  s_.assign(M, 0.0);
  vd_.assign(N, 0.0);
  ud_.assign(N, 0.0);
  sd_.assign(M, 0.0);
  dual_w_.assign(M, 0.0);
  col_norm_.assign(M, 0.0);
  unit_weights_ = std::all_of(f_.c, f_.c + n_, [](double c) { return c == 1.0; });
  const bool need_xy = kSquared && unit_weights_;
  // A path's later points reuse the column norms and X^T y of its first (PathCache: the same X^T and targets).
  PathCache* cache = o_.path_cache.get();
  const PathCache::MatrixId x_id = PathCache::MatrixId::of(A_, lo_);
  const bool same_x = cache && cache->x == x_id && cache->col_norm.size() == M;
  const bool hit =
      same_x && (!need_xy || (cache->y.size() == N && std::equal(cache->y.begin(), cache->y.end(), f_.y)));
  if (same_x && le_ > 0 && cache->bound_u.size() == N && cache->bound_base.size() == M) {
    bound_base_ = cache->bound_base;  // valid for any u: the next certificate adds ||u - bound_u|| / n
    bound_anchor_ = cache->bound_anchor;
    bound_u_ = cache->bound_u;
    bound_drift_ = cache->bound_drift;
  }
  if (hit) {
    col_norm_ = cache->col_norm;
    if (need_xy) xy_ = cache->xy;
    ++cache->reused;
  } else {
    if (need_xy) xy_.assign(M, 0.0);
    for_features(m_, [&](index_t j) {
      const offset_t b = A_.offsets[j], e = A_.offsets[j + 1];
      double q = 0;
      for (offset_t p = b; p < e; ++p) q += entry(A_.values.data(), lo_, p) * entry(A_.values.data(), lo_, p);
      col_norm_[j] = std::sqrt(q);
      if (!xy_.empty()) xy_[j] = column_dot(j, f_.y);
    });
    if (cache) {
      cache->x = x_id;
      cache->col_norm = col_norm_;
      if (need_xy) cache->y.assign(f_.y, f_.y + n_);
      else cache->y.clear();
      cache->xy = xy_;
    }
  }
  alive_.resize(M);
  std::iota(alive_.begin(), alive_.end(), index_t{0});
  const auto t_norms = std::chrono::steady_clock::now();
  resync();
  Certificate cert = certify();
  driver.check_finite(cert, 0, res.alpha, v_);
  int it = 0;
  using clk = std::chrono::steady_clock;
  if (trace_)
    std::fprintf(stderr, "ws setup %.4f s (norms %.4f, first certificate %.4f)\n",
                 std::chrono::duration<double>(clk::now() - t_setup).count(),
                 std::chrono::duration<double>(t_norms - t_setup).count(),
                 std::chrono::duration<double>(clk::now() - t_norms).count());
  if (relative_gap(cert) > o_.tol) {
    for (;;) {
      const auto t0 = clk::now();
      screen();
      choose_working_set();
      const auto t1 = clk::now();
      const int e0 = inner_epochs_;
      const double tol_in = kInnerShare * std::max(0.0, cert.gap);
      std::optional<Certificate> whole = inner(tol_in, 0.9 * o_.tol * std::fabs(cert.primal));
      const auto t2 = clk::now();
      ++it;
      if (o_.after_epoch) o_.after_epoch(it, std::span<double>(res.alpha), std::span<double>(v_));
      if (whole && !o_.after_epoch) {
        // The inner loop's last check was on the whole problem with v = X w recomputed: that is the certificate
        // (and its dual point is center_*, for the screening of the next iteration).
        cert = *whole;
      } else {
        resync();  // v = X w exactly before the certificate (incremental updates drift)
        cert = certify();
      }
      if (trace_)
        std::fprintf(stderr, "ws it %d alive %zu ws %zu %s inner epochs %d screen+ws %.4f inner %.4f certify %.4f\n", it,
                     alive_.size(), ws_.size(), last_gram_ ? "gram" : "residual", inner_epochs_ - e0,
                     std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                     std::chrono::duration<double>(clk::now() - t2).count());
      if (driver.record(it, cert, res.alpha, v_) != EpochDriver::Stop::none) break;
    }
  }
  driver.finish(f_, cert, v_, it);
  res.screened = count_screened();
  if (cache && le_ > 0 && !bound_u_.empty()) {
    cache->bound_base = bound_base_;
    cache->bound_anchor = bound_anchor_;
    cache->bound_u = bound_u_;
    cache->bound_drift = bound_drift_;
  }
  if (cache) cache->bound_skipped += bound_visits_ - bound_computed_;
  if (trace_)
    std::fprintf(stderr, "ws done: %lld certificate products of %lld alive-feature visits\n",
                 static_cast<long long>(bound_computed_), static_cast<long long>(bound_visits_));
  return res;
}

}  // namespace

template <class Form>
SolveResult solve_working_set(const Form& form, const SolverOptions& o) {
  if constexpr (!has_l1_part(Form::PenP::id)) {
    throw InvalidArgument("--solver working-set: needs a penalty with an L1 part (l1 or elastic-net); the l2 models "
                          "train with newton, sequential or syscd");
  } else {
    if (!form.A) throw InvalidArgument("solve_working_set: the formulation has no X^T");
    if (o.n_threads < 0) throw InvalidArgument(fmt::format("--threads: must be at least 0, got {}", o.n_threads));
    return in_solver_arena(o.n_threads, [&](int T) { return WorkingSet<Form>(form, o, T).run(); });
  }
}

#define HETGLM_INSTANTIATE_WORKING_SET(...) \
  template SolveResult solve_working_set(const __VA_ARGS__&, const SolverOptions&);
HETGLM_FOR_EACH_PRIMAL_FORM(HETGLM_INSTANTIATE_WORKING_SET)
#undef HETGLM_INSTANTIATE_WORKING_SET

}  // namespace hetglm
