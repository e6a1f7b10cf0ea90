// SPDX-License-Identifier: Apache-2.0
// The primal Newton solver (algorithm and sources in newton.hpp; docs/formulation.md).
#include "hetglm/solvers/newton.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>
#include <numeric>

#include "hetglm/error.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "dense_kernels.hpp"
#include "executor.hpp"
#include "loss_batch.hpp"

namespace hetglm {

namespace {

constexpr index_t kRowGrain = 1024;    // samples per task of the element-wise passes
constexpr index_t kFeatureGrain = 16;  // features per task of the per-feature passes (features can be long columns)
constexpr std::int64_t kChunk = 4096;  // samples per partial sum (fixed: sums never depend on the thread count)
constexpr double kRowsOnlyDoubles = 1 << 22;  // rows-only path: chunk buffers of at most this many doubles each
constexpr int kMaxInner = 100;         // inner coordinate-descent epochs per Newton iteration, at most
constexpr double kInnerStop = 1e-3;    // stop the inner epochs when one decreases the model by less than this share
constexpr double kArmijo = 0.01;       // sufficient decrease (LIBLINEAR newGLMNET's sigma)
constexpr int kMaxBacktrack = 40;      // step halvings before the iteration counts as stalled
constexpr double kNu = 1e-12;          // added to every H_j (LIBLINEAR newGLMNET's nu): all-zero columns
constexpr double kFlat = 1e-13;        // |F(w + d) - F(w)| below this share of |P|: the objective cannot resolve d
constexpr int kStall = 10;             // unresolved steps without a better relative gap before stopping
constexpr int kSlopeSteps = 30;        // regula falsi steps of the slope line search, at most
constexpr double kSlopeTol = 1e-3;     // ... until the slope is this share of the slope at t = 0
constexpr int kResyncEvery = 10;       // Newton iterations between exact re-synchronizations v = X w
constexpr double kCgTol = 0.1;         // L2: relative residual at which conjugate gradients stop (LIBLINEAR TRON's)
constexpr double kCgTolSmall = 1e-8;   // the same for small float64 data (exact_h in run_newton)
constexpr int kMaxCg = 250;            // L2: conjugate-gradient iterations per Newton iteration, at most
// L2: the Newton dual point (run_newton, step 2) is evaluated when the relative gap is at most this many times tol.
constexpr double kDualPointReach = 1e3;
constexpr double kDualRounding = 1e3;  // L2: the Newton dual point's rounding margin, in units of eps (run_newton)
constexpr std::int64_t kF32Rows = 256;  // rows summed in float32 before the sum joins the float64 chunk buffer
constexpr offset_t kDenseMin = 1 << 16;  // dense rows (nnz = n d) of at least this many entries: the dense kernels
// L1 / elastic net with a small active set: the quadratic model's Hessian X_A^T diag(D) X_A built explicitly (the
// Gram inner solve, run_newton step 2b) when it has at most kGramEntries entries and building it (one product per
// pair of active entries of a row) costs at most kGramPairs times the nonzeros of X.
constexpr double kGramEntries = 1 << 22;
constexpr double kGramPairs = 16;
constexpr int kMaxGramInner = 1000;    // coordinate-descent epochs on the Gram matrix per Newton iteration, at most
constexpr double kGramEpochBudget = 32;  // ... and at most this many nonzeros of X in multiply-adds, over all epochs
constexpr double kGramInnerStop = 1e-9;  // stop those epochs when one decreases the model by less than this share
constexpr int kFaceRounds = 8;         // Newton steps on the orthant face of the model's support, at most

/// body(ch, lo, hi) for the fixed chunks of kChunk entries of [0, n); chunk ch writes its own result slot, so the
/// caller's in-order sum of the slots is the same for every thread count (executor.hpp's parallel_chunks).
template <class Body>
void for_chunks(std::int64_t n, const Body& body) {
  parallel_chunks((n + kChunk - 1) / kChunk,
                  [&](std::int64_t c) { body(c, c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

/// Where the second of the two row streams of for_row_blocks starts in [lo, hi): after half the blocks (rounded
/// down), so the first stream holds whole blocks only.
inline std::int64_t second_stream(std::int64_t lo, std::int64_t hi) {
  const std::int64_t blocks = (hi - lo + dense::kBlockRows - 1) / dense::kBlockRows;
  return lo + (blocks / 2) * dense::kBlockRows;
}
/// Bytes ahead of a block of rows at which for_row_blocks prefetches its stream (a stream's rows are contiguous).
/// The hardware prefetcher alone left each core waiting for its rows while it computed (on an Intel Xeon host a pass
/// took the read time plus the compute time of the same rows from the cache); with the prefetch the solver's pass at
/// 2 threads took 11.6 -> 7.7 ms on 400,000 x 100, 5.5 -> 4.2 on 50,000 x 500, 3.8 -> 2.9 on 100,000 x 200
/// (bench/results/bandwidth_newton.md, "Software prefetch"; 2,048 and 4,096 bytes alike in a stand-alone copy of the
/// pass, 8,192 no better).
constexpr std::int64_t kRowPrefetchBytes = 2048;

/// Prefetch, kRowPrefetchBytes ahead, the bytes of `rows` rows from row i of a row-major float array x (leading
/// dimension ld) that lie before row `end` (the stream's end: nothing past the array is touched).
inline void prefetch_rows_ahead(const float* x, std::int64_t ld, std::int64_t i, int rows, std::int64_t end) {
  const std::int64_t row_bytes = ld * std::int64_t(sizeof(float));
  const std::int64_t to = std::min((i + rows) * row_bytes + kRowPrefetchBytes, end * row_bytes);
  const char* base = reinterpret_cast<const char*>(x);
  for (std::int64_t o = i * row_bytes + kRowPrefetchBytes; o < to; o += 64) __builtin_prefetch(base + o, 0, 3);
}

/// f(first, rows, stream) for the blocks of at most dense::kBlockRows consecutive rows of [lo, hi) of a dense
/// row-major x (and xl, the float64 remainders, when not null), read as two streams: the blocks of [lo, m) and of
/// [m, hi) (m = second_stream(lo, hi)) alternately, each stream in order and prefetched kRowPrefetchBytes ahead
/// (prefetch_rows_ahead). Two sequential streams keep more reads from memory in flight than one: the dense row
/// products over one stream took 1.33-1.45x the read time of the same bytes on the AMD EPYC of
/// bench/results/bandwidth_newton.md, over two 1.07-1.15x. The order is fixed by (lo, hi) alone, so sums stay
/// independent of the thread count.
template <class F>
void for_row_blocks(std::int64_t lo, std::int64_t hi, const float* x, const float* xl, std::int64_t ld, const F& f) {
  const std::int64_t m = second_stream(lo, hi);
  auto block = [&](std::int64_t i, int rows, std::int64_t end, int stream) {
    prefetch_rows_ahead(x, ld, i, rows, end);
    if (xl) prefetch_rows_ahead(xl, ld, i, rows, end);
    f(i, rows, stream);
  };
  for (std::int64_t i = lo, j = m; i < m || j < hi; i += dense::kBlockRows, j += dense::kBlockRows) {
    if (i < m) block(i, dense::kBlockRows, m, 0);
    if (j < hi) block(j, static_cast<int>(std::min<std::int64_t>(dense::kBlockRows, hi - j)), hi, 1);
  }
}

/// d float32 sums over rows (the dense passes' sums that no certificate reads: dense::axpy_rows_f32, sq_rows_f32)
/// that join a float64 buffer every kF32Rows rows, so each carries a relative error of about 1e-5 at most.
class Float32Sums {
 public:
  Float32Sums(double* target, std::size_t d) : target_(target), sums_(d, 0.0f) {}
  float* data() { return sums_.data(); }
  /// After `rows` more rows were added into data().
  void rows_done(int rows) {
    if ((since_ += rows) >= kF32Rows) flush();
  }
  /// target += the float32 sums, which restart from 0 (also once after the last rows).
  void flush() {
    for (std::size_t j = 0; j < sums_.size(); ++j) {
      target_[j] += double(sums_[j]);
      sums_[j] = 0.0f;
    }
    since_ = 0;
  }

 private:
  double* target_;
  std::vector<float> sums_;
  std::int64_t since_ = 0;
};

/// f(i) for every i in [0, n), each independent (no reduction), in parallel over ranges of `grain` indices.
template <class F>
void for_each_index(index_t n, index_t grain, const F& f) {
  parallel_chunks((std::int64_t(n) + grain - 1) / grain, [&](std::int64_t c) {
    const index_t hi = static_cast<index_t>(std::min<std::int64_t>(n, (c + 1) * std::int64_t(grain)));
    for (index_t i = static_cast<index_t>(c * grain); i < hi; ++i) f(i);
  });
}

/// The loss terms of the m samples lo, lo + 1, ... at margins z[0 .. m): value, derivative and curvature to
/// val, der, cur (indexed from 0 like z) as LossPolicy::terms gives them; the logistic loss through the vectorized
/// loops of loss_batch.hpp (its exp and log1p within 2 ulp of the C library's, about 8x faster). Every per-sample
/// loss evaluation of the solver but the slope's goes through here, so the terms a line search keeps are the ones
/// state() would compute.
template <class Form>
void sample_terms(const Form& form, std::int64_t lo, std::int64_t m, const double* z, double* val, double* der,
                  double* cur) {
  using LossP = typename Form::LossP;
  if constexpr (LossP::id == Loss::logistic) {
    batch::logistic_terms(form.y + lo, z, form.c + lo, m, val, der, cur);
  } else {
    for (std::int64_t k = 0; k < m; ++k) {
      const auto t = LossP::terms(form.y[lo + k], z[k], form.c[lo + k]);
      val[k] = t.value;
      der[k] = t.derivative;
      cur[k] = t.curvature;
    }
  }
}

/// Solves M x = b in place (b <- x) for the symmetric positive definite k x k matrix M (row-major, overwritten by
/// its Cholesky factor L, M = L L^T). Returns false when M is not numerically positive definite (a pivot at or below
/// 1e-14 of the largest diagonal entry): the caller then keeps its coordinate-descent direction.
bool cholesky_solve(std::vector<double>& M, std::size_t k, std::vector<double>& b) {
  double dmax = 0;
  for (std::size_t i = 0; i < k; ++i) dmax = std::max(dmax, M[i * k + i]);
  if (!(dmax > 0) || !std::isfinite(dmax)) return false;
  for (std::size_t j = 0; j < k; ++j) {
    double* Lj = M.data() + j * k;
    double djj = Lj[j];
    for (std::size_t p = 0; p < j; ++p) djj -= Lj[p] * Lj[p];
    if (!(djj > 1e-14 * dmax)) return false;
    const double ljj = std::sqrt(djj);
    Lj[j] = ljj;
    for (std::size_t i = j + 1; i < k; ++i) {
      double* Li = M.data() + i * k;
      double t = Li[j];
      for (std::size_t p = 0; p < j; ++p) t -= Li[p] * Lj[p];
      Li[j] = t / ljj;
    }
  }
  for (std::size_t i = 0; i < k; ++i) {  // L y = b
    const double* Li = M.data() + i * k;
    double t = b[i];
    for (std::size_t p = 0; p < i; ++p) t -= Li[p] * b[p];
    b[i] = t / Li[i];
  }
  for (std::size_t i = k; i-- > 0;) {  // L^T x = y
    double t = b[i];
    for (std::size_t p = i + 1; p < k; ++p) t -= M[p * k + i] * b[p];
    b[i] = t / M[i * k + i];
  }
  return true;
}

template <class Form>
SolveResult run_newton(const Form& form, const CsrMatrix& X, const SolverOptions& o) {
  using LossP = typename Form::LossP;
  using PenP = typename Form::PenP;
  // Rows-only (fused) path: no X^T; every X^T u is summed per chunk of kChunk rows into its own buffer of d
  // doubles, and the buffers are added in chunk order (deterministic). Otherwise X^T = form.A, features in parallel.
  const bool rows_only = form.A == nullptr;
  const CsrMatrix& A = rows_only ? X : *form.A;  // X^T: rows = features (unused on the rows-only path)
  const index_t d = X.n_cols, n = X.n_rows;
  const double lam = form.lambda, eta = form.eta, B = form.bound, inv_n = form.inv_n;
  const double* y = form.y;
  const double* c = form.c;
  const std::size_t N = static_cast<std::size_t>(n), Dn = static_cast<std::size_t>(d);
  const std::int64_t n_chunks = (std::int64_t(n) + kChunk - 1) / kChunk;
  const bool has_l1 = eta > 0;  // l1 (eta = 1) or elastic net with an L1 part
  // Dense rows: every row stores all d features (a dense array's conversion). With the CSR invariants of matrix.hpp
  // (indices sorted and unique in [0, d)) nnz = n d means exactly that, and row i is then values[i d, (i + 1) d)
  // at features 0 .. d - 1: a row-major float32 n x d matrix, which the products below read through the vectorized
  // kernels of dense_kernels.hpp (blocks of dense::kBlockRows rows) without reading the indices or offsets.
  // From kDenseMin entries on: below that X sits in the L2 cache and the CSR loops cost no more, and small fits keep
  // the rounding they always had (scikit-learn's sample-weight check compares two LinearSVC fits on 15 x 31 at rtol
  // 1e-7, beyond what tol 1e-12 certifies; with the kernels' summation order it missed by 7e-7).
  const bool dense_rows = d > 0 && X.nnz() == offset_t(n) * offset_t(d) && X.nnz() >= kDenseMin;
  const float* Xv = X.values.data();
  const std::int64_t ld = d;  // leading dimension of the dense rows
  // X^T path: full columns (all n samples stored) through the same kernels, from kDenseMin entries of X^T on.
  const bool dense_cols = !rows_only && A.nnz() >= kDenseMin;
  // float64 data (values_lo, matrix.hpp) and a tol below kFloat64Tol (forms.hpp): the products that decide the
  // fixed point and the certificate, v = X w and s = X^T grad, read values + values_lo; the Hessian's products (the
  // conjugate gradients, the preconditioner H, the L1 model's columns) read the float32 values alone: an inexact
  // Hessian changes the direction, not the optimum. q = X dir, which the conjugate gradients sum from the float32
  // values, is then recomputed on the float64 values once the direction is found (times_x: one pass), so that the
  // line search, its slope and v += t q are the float64 problem's; and the Newton dual point's X^T diag(D) q takes a
  // pass of its own (exact_hq).
  bool f64 = values_lo_for(X, o.tol) && (rows_only || values_lo_for(A, o.tol));
  // Distributed (o.sum_over_ranks): the float64 passes add allreduces (exact_hq), so every rank must take them or
  // none; a rank that holds no entry has no values_lo. float64 when no rank holds entries without values_lo and some
  // rank holds values_lo (one allreduce of 2 values; the trainer gives every rank values_lo or none,
  // distributed.cpp).
  if (o.sum_over_ranks && o.tol < kFloat64Tol) {
    double votes[2] = {X.nnz() > 0 && !f64 ? 1.0 : 0.0, f64 ? 1.0 : 0.0};
    o.sum_over_ranks(std::span<double>(votes, 2));
    f64 = votes[0] == 0 && votes[1] > 0;
  }
  const float* Xl = f64 ? X.values_lo.data() : nullptr;
  const float* Al = f64 && !rows_only ? A.values_lo.data() : nullptr;
  // Small float64 data (below kDenseMin entries, in the L2 cache, where the extra reads cost nothing measurable):
  // the Hessian's products read values_lo as well and the conjugate gradients run to kCgTolSmall, so that every
  // step is an exact Newton step. With the float32 Hessian and CG stopped at kCgTol the last iterates depend on
  // rounding that sample weights and repeated samples do differently: in scikit-learn's sample-weight check (two
  // LinearSVC fits on 15 x 31, rtol 1e-7 on the decision values) the two weight vectors differed by 7e-9 at tol
  // 1e-15, both certified.
  // (Not distributed: the conjugate gradients' tolerance must be the same on every rank, and a rank's X.nnz() is
  // its own.)
  const bool exact_h = f64 && !o.sum_over_ranks && X.nnz() < kDenseMin;

  SolveResult res;
  EpochDriver driver(o, res, Formulation::primal);
  if (f64) driver.float64_values();
  res.alpha.assign(Dn, 0.0);
  if (o.initial_alpha) {  // warm start (the feasibility rule of the epoch driver: finite values, the L1 box)
    if (o.initial_alpha->size() != Dn)
      throw InvalidArgument("warm start: " + std::to_string(o.initial_alpha->size()) + " values for " +
                            std::to_string(Dn) + " coordinates");
    for (std::size_t j = 0; j < Dn; ++j) res.alpha[j] = form.feasible(static_cast<index_t>(j), (*o.initial_alpha)[j]);
  }
  double* w = res.alpha.data();
  std::vector<double> v(N, 0.0), grad(N), curv(N), lossv(N), q(N);
  // The line search's per-sample terms at its trial point v + t q (value, derivative, curvature: sample_terms), kept
  // for the next state() when that trial is the step taken: the accepted point's terms are then not evaluated a
  // second time (for logistic an exponential and a logarithm per sample, a third of a dense iteration). L2 penalty
  // only (with an L1 part every iteration re-synchronizes v = X w), and not when after_epoch may change v. The
  // cached terms are the ones state() would compute (same sample_terms at the same v bit for bit).
  const bool cache_terms = PenP::id == Penalty::l2 && !o.after_epoch;
  std::vector<double> v_next(cache_terms ? N : 0), val_next(cache_terms ? N : 0), der_next(cache_terms ? N : 0),
      cur_next(cache_terms ? N : 0);
  double cached_t = 0;     // the trial step the *_next arrays hold (none: 0, never a step taken)
  bool from_cache = false;  // the next state() takes its sample terms from the cache (v already swapped in)
  std::vector<double> s(Dn), H(Dn), dir(Dn);
  std::vector<double> part_a(static_cast<std::size_t>(n_chunks));
  std::vector<CertificateTerms> part_terms(static_cast<std::size_t>(n_chunks));
  std::vector<index_t> active;
  active.reserve(Dn);
  std::vector<double> buf_a(rows_only ? static_cast<std::size_t>(n_chunks) * Dn : 0);
  std::vector<double> buf_b(rows_only ? static_cast<std::size_t>(n_chunks) * Dn : 0);
  // out[j] = sum over chunks of buf[ch][j] (+ add(j)), features in parallel.
  auto reduce_buffers = [&](const std::vector<double>& buf, std::vector<double>& out, auto add) {
    for_each_index(d, kFeatureGrain, [&](index_t j) {
      double t = 0;
      for (std::int64_t ch = 0; ch < n_chunks; ++ch) t += buf[std::size_t(ch) * Dn + j];
      out[j] = t + add(j);
    });
  };
  SplitMix64 rng(o.seed);
  // Distributed (o.sum_over_ranks): this process holds some of the samples; every sum over samples (s, H, the
  // certificate's sample terms, each X^T D X p, the line search's loss change) is completed by one allreduce, so the
  // d-vectors of the iteration (w, the CG vectors, dir) are the same on every process.
  std::vector<double> red;
  auto sum_over_ranks = [&](std::span<double> x) {
    if (o.sum_over_ranks) o.sum_over_ranks(x);
  };

  std::int64_t passes = 0;  // reads of every stored entry of X or X^T (EpochRecord::passes)
  // Stored entry p of X (x_at) or of X^T (a_at) in double, with values_lo when `lo` (forms.hpp entry).
  auto x_at = [&](offset_t p, bool lo) { return entry(Xv, lo ? Xl : nullptr, p); };
  auto a_at = [&](offset_t p, bool lo) { return entry(A.values.data(), lo ? Al : nullptr, p); };
  // x_k . u over the stored entries of row k of a CSR X, with values_lo when `lo` (forms.hpp row_dot).
  auto row_dot = [&](index_t k, const double* u, bool lo) { return hetglm::row_dot(X, k, u, lo ? Xl : nullptr); };
  // out = X u over the rows (with values_lo on float64 data): one pass.
  auto times_x = [&](const double* u, double* out) {
    ++passes;
    if (dense_rows) {
      for_each_index(n, kRowGrain, [&](index_t k) {
        out[k] = dense::dot(Xv + std::int64_t(k) * ld, u, ld);
        if (f64) out[k] += dense::dot(Xl + std::int64_t(k) * ld, u, ld);
      });
      return;
    }
    for_each_index(n, kRowGrain, [&](index_t k) { out[k] = row_dot(k, u, f64); });
  };
  auto recompute_v = [&] { times_x(w, v.data()); };
  // Step 1: per-sample derivatives and the certificate's sums, then s_j and H_j over the columns. On the dense
  // rows-only path H_j, which only preconditions the conjugate gradients there, is summed in float32
  // (dense::sq_rows_f32, joining its float64 buffer every kF32Rows rows); s_j, which the certificate reads, in
  // float64. exact_v: v = X w first (recompute_v, then this), fused on the rows-only dense path into the same pass:
  // per block of rows, v of the block, its samples' terms, then its share of s and H while the block is in the L1
  // cache (bit-identical to the two passes: dot_rows is dense::dot row by row, and the terms are added in the same
  // order).
  auto state = [&](bool exact_v = false) -> Certificate {
    const bool fused_v = exact_v && rows_only && dense_rows;
    const bool cached = from_cache && !exact_v;
    from_cache = false;
    if (exact_v && !fused_v) recompute_v();
    ++passes;
    for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      // The certificate's sums per row stream of for_row_blocks on the dense path (terms[0] over [lo, m), terms[1]
      // over [m, hi), added at the end), so the fused pass and the two passes add them in the same order.
      CertificateTerms terms[2];
      const std::int64_t m = dense_rows ? second_stream(lo, hi) : hi;
      // The per-sample terms: the accepted trial's when cached (lossv = value, der_next = derivative, cur_next =
      // curvature), else evaluated now into lossv, grad and curv; then the certificate's sample terms from them as
      // PrimalForm::sample forms them, and the derivative and curvature the solver needs (times 1/n).
      const double* der = cached ? der_next.data() : grad.data();
      const double* cur = cached ? cur_next.data() : curv.data();
      auto samples = [&](std::int64_t a, std::int64_t b, int stream) {
        if (!cached) sample_terms(form, a, b - a, v.data() + a, lossv.data() + a, grad.data() + a, curv.data() + a);
        for (std::int64_t k = a; k < b; ++k) {
          const double dk = der[k];
          const SampleTerms t{lossv[k], dk, dk * v[k] - lossv[k]};
          form.add_sample_terms(static_cast<index_t>(k), v[k], t, terms[stream]);
          grad[k] = dk * inv_n;
          curv[k] = cur[k] * inv_n;
        }
      };
      if (!fused_v) {
        samples(lo, m, 0);
        samples(m, hi, 1);
      }
      if (rows_only) {
        double* bs = buf_a.data() + std::size_t(ch) * Dn;
        double* bh = buf_b.data() + std::size_t(ch) * Dn;
        std::fill(bs, bs + Dn, 0.0);
        std::fill(bh, bh + Dn, 0.0);
        if (dense_rows) {
          Float32Sums hf(bh, Dn);
          for_row_blocks(lo, hi, Xv, f64 ? Xl : nullptr, ld, [&](std::int64_t i, int rows, int stream) {
            const float* xb = Xv + i * ld;
            const float* lb = f64 ? Xl + i * ld : nullptr;
            float c[dense::kBlockRows];
            if (fused_v) {
              dense::dot_rows(xb, ld, rows, w, ld, &v[i]);
              if (f64) {
                double vl[dense::kBlockRows];
                dense::dot_rows(lb, ld, rows, w, ld, vl);
                for (int r = 0; r < rows; ++r) v[i + r] += vl[r];
              }
              samples(i, i + rows, stream);
              dense::axpy_rows(&grad[i], xb, ld, rows, bs, ld);
              if (f64) dense::axpy_rows(&grad[i], lb, ld, rows, bs, ld);
            } else {
              for (int r = 0; r < rows; ++r) dense::axpy(grad[i + r], xb + r * ld, bs, ld);
              if (f64)
                for (int r = 0; r < rows; ++r) dense::axpy(grad[i + r], lb + r * ld, bs, ld);
            }
            for (int r = 0; r < rows; ++r) c[r] = static_cast<float>(curv[i + r]);
            dense::sq_rows_f32(c, xb, ld, rows, hf.data(), ld);
            hf.rows_done(rows);
          });
          hf.flush();
        } else for (std::int64_t k = lo; k < hi; ++k) {
          const double g = grad[k], h = curv[k];
          for (offset_t p = X.offsets[k]; p < X.offsets[k + 1]; ++p) {
            const double x = x_at(p, f64);
            bs[X.indices[p]] += x * g;
            bh[X.indices[p]] += x * x * h;
          }
        }
      }
      terms[0] += terms[1];
      part_terms[ch] = terms[0];
    });
    if (rows_only) {
      reduce_buffers(buf_a, s, [](index_t) { return 0.0; });
      reduce_buffers(buf_b, H, [](index_t) { return 0.0; });
    } else for_each_index(d, kFeatureGrain, [&](index_t j) {
      double sj = 0, hj = 0;
      // A full column: contiguous values at samples 0 .. n-1.
      if (dense_cols && A.offsets[j + 1] - A.offsets[j] == offset_t(n)) {
        dense::dot2(A.values.data() + A.offsets[j], grad.data(), curv.data(), n, s[j], H[j]);
        if (f64) s[j] += dense::dot(Al + A.offsets[j], grad.data(), n);
        return;
      }
      for (offset_t p = A.offsets[j]; p < A.offsets[j + 1]; ++p) {
        const index_t k = A.indices[p];
        const double x = a_at(p, f64);
        sj += x * grad[k];
        hj += x * x * curv[k];
      }
      s[j] = sj;
      H[j] = hj;
    });
    CertificateTerms samples, features;
    for (std::int64_t ch = 0; ch < n_chunks; ++ch) samples += part_terms[ch];
    if (o.sum_over_ranks) {  // s, H and the sample sums in one allreduce of 2 d + kSums values
      constexpr int K = CertificateTerms::kSums;
      red.resize(2 * Dn + K);
      std::copy(s.begin(), s.end(), red.begin());
      std::copy(H.begin(), H.end(), red.begin() + Dn);
      samples.sums(red.data() + 2 * Dn);
      sum_over_ranks(red);
      std::copy(red.begin(), red.begin() + Dn, s.begin());
      std::copy(red.begin() + Dn, red.begin() + 2 * Dn, H.begin());
      samples = CertificateTerms::from_sums(red.data() + 2 * Dn, samples.smax);
    }
    for (index_t j = 0; j < d; ++j) H[j] += kNu;
    for (index_t j = 0; j < d; ++j) form.add_penalty_terms(w[j], s[j], features);
    return form.finish(features, samples);
  };

  // Every stored value is 1 (one-hot / binary LIBSVM data): the fused CG pass then skips the values.
  const bool binary = rows_only && !dense_rows &&
                      std::all_of(X.values.begin(), X.values.end(), [](float x) { return x == 1.0f; });
  // Truncated Newton for L2 (Nocedal & Wright, Numerical Optimization, 2nd ed., Algorithm 7.1; LIBLINEAR -s 0/-s 2's
  // Hessian-vector products, Lin, Weng, Keerthi 2008, with the diagonal preconditioner of Hsia, Chiang, Lin 2018):
  // solve (X^T diag(D) X + lambda I) dir = -(s + lambda w) by PCG with M = diag(H_j + lambda) until
  // ||r|| <= kCgTol ||s + lambda w|| (at most kMaxCg iterations). Each CG iteration is one pass over X (X p, rows in
  // parallel) and one over X^T (X^T (D X p), features in parallel), or on the rows-only path a single fused pass over
  // X; q = X dir is accumulated from the X p.
  // exact = false (every direction but the Newton dual point's): on the dense rows-only path X^T (D X p) is summed
  // in float32 (dense::axpy_rows_f32 into a float32 buffer that joins the chunk's float64 buffer every kF32Rows
  // rows): a relative error of about 1e-5 at most in the Hessian that the conjugate gradients see, well inside what
  // their own stop at kCgTol = 0.1 leaves. X p stays float64, so q = X dir and v = X w stay exact to double rounding
  // (with X p in float32 as well, v drifted from X w by ~1e-7 of each step, and the certificates at that v went
  // wrong: a relative gap of -2.2e-10 on dense 50,000 x 500, the fit stopped there). The Newton dual point reads
  // hq = X^T diag(D) q: its direction takes exact = true, every product in float64.
  std::vector<double> r, z, pv, hp, xp, xdx, hq;
  auto cg_direction = [&](bool exact) {
    r.resize(Dn);
    z.resize(Dn);
    pv.resize(Dn);
    hp.resize(Dn);
    xdx.resize(Dn);
    xp.resize(N);
    std::fill(dir.begin(), dir.end(), 0.0);
    std::fill(q.begin(), q.end(), 0.0);
    hq.assign(Dn, 0.0);  // X^T diag(D) q, summed from the products X^T D X p (the Newton dual point's X^T part)
    double gnorm2 = 0, rz = 0;
    for (index_t j = 0; j < d; ++j) {
      r[j] = -(s[j] + lam * w[j]);
      z[j] = r[j] / (H[j] + lam);
      pv[j] = z[j];
      gnorm2 += r[j] * r[j];
      rz += r[j] * z[j];
    }
    const double cg_tol = exact_h ? kCgTolSmall : kCgTol;
    const double stop2 = cg_tol * cg_tol * gnorm2;
    for (int k = 0; k < kMaxCg && rz > 0; ++k) {
      if (rows_only) {
        // One pass over the rows: xp_i = x_i.p, then x_i D_i xp_i into the chunk's buffer. Binary data (every
        // value 1, as one-hot LIBSVM sets) skips loading the values.
        auto fused = [&]<bool kBinary, bool kLo>() {
          for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
            double* b = buf_a.data() + std::size_t(ch) * Dn;
            std::fill(b, b + Dn, 0.0);
            const index_t* idx = X.indices.data();
            auto x = [&](offset_t p) {
              if constexpr (kBinary) return 1.0;
              else return x_at(p, kLo);
            };
            for (std::int64_t i = lo; i < hi; ++i) {
              const offset_t pb = X.offsets[i], pe = X.offsets[i + 1];
              // Two accumulators: rows are short, and one chain of dependent additions bounds the loop by latency.
              double t0 = 0, t1 = 0;
              offset_t p = pb;
              for (; p + 1 < pe; p += 2) {
                t0 += x(p) * pv[idx[p]];
                t1 += x(p + 1) * pv[idx[p + 1]];
              }
              if (p < pe) t0 += x(p) * pv[idx[p]];
              const double t = t0 + t1;
              xp[i] = t;
              const double u = curv[i] * t;
              if (u != 0)
                for (offset_t q2 = pb; q2 < pe; ++q2) b[idx[q2]] += (kBinary ? u : x(q2) * u);
            }
          });
        };
        // Dense rows: per block of rows, the products x_i.p with p loaded once, then the block's sum of
        // x_i D_i xp_i into the chunk's buffer (the block stays in the L1 cache between the two).
        auto fused_dense = [&] {
          for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
            double* b = buf_a.data() + std::size_t(ch) * Dn;
            std::fill(b, b + Dn, 0.0);
            Float32Sums bf(b, exact ? 0 : Dn);
            for_row_blocks(lo, hi, Xv, nullptr, ld, [&](std::int64_t i, int rows, int) {
              const float* xb = Xv + i * ld;
              dense::dot_rows(xb, ld, rows, pv.data(), ld, &xp[i]);
              if (exact) {
                double u[dense::kBlockRows];
                for (int r = 0; r < rows; ++r) u[r] = curv[i + r] * xp[i + r];
                dense::axpy_rows(u, xb, ld, rows, b, ld);
              } else {
                float u[dense::kBlockRows];
                for (int r = 0; r < rows; ++r) u[r] = float(curv[i + r] * xp[i + r]);
                dense::axpy_rows_f32(u, xb, ld, rows, bf.data(), ld);
                bf.rows_done(rows);
              }
            });
            bf.flush();  // nothing to add when exact (no float32 sums)
          });
        };
        if (dense_rows)
          fused_dense();
        else if (exact_h)  // (before binary: values that round to 1.0f may have a nonzero values_lo)
          fused.template operator()<false, true>();
        else if (binary)
          fused.template operator()<true, false>();
        else
          fused.template operator()<false, false>();
        reduce_buffers(buf_a, hp, [](index_t) { return 0.0; });
        ++passes;
      } else {
      passes += 2;  // X p over the rows, then X^T over the features
      for_each_index(n, kRowGrain, [&](index_t i) {
        if (dense_rows) {
          xp[i] = dense::dot(Xv + std::int64_t(i) * ld, pv.data(), ld);
          return;
        }
        xp[i] = row_dot(i, pv.data(), exact_h);
      });
      for_each_index(d, kFeatureGrain, [&](index_t j) {
        if (dense_cols && A.offsets[j + 1] - A.offsets[j] == offset_t(n)) {
          hp[j] = dense::dot3(A.values.data() + A.offsets[j], curv.data(), xp.data(), n);
          return;
        }
        double t = 0;
        for (offset_t p = A.offsets[j]; p < A.offsets[j + 1]; ++p) {
          const index_t i = A.indices[p];
          t += a_at(p, exact_h) * curv[i] * xp[i];
        }
        hp[j] = t;
      });
      }
      sum_over_ranks(hp);  // X^T D X p over every process's samples: one allreduce of d values
      std::copy(hp.begin(), hp.end(), xdx.begin());
      for (index_t j = 0; j < d; ++j) hp[j] += lam * pv[j];
      double php = 0;
      for (index_t j = 0; j < d; ++j) php += pv[j] * hp[j];
      if (!(php > 0)) break;
      const double alpha = rz / php;
      double rr = 0, rz_new = 0;
      for (index_t j = 0; j < d; ++j) {
        dir[j] += alpha * pv[j];
        hq[j] += alpha * xdx[j];
        r[j] -= alpha * hp[j];
        z[j] = r[j] / (H[j] + lam);
        rr += r[j] * r[j];
        rz_new += r[j] * z[j];
      }
      for_each_index(n, kRowGrain, [&](index_t i) { q[i] += alpha * xp[i]; });
      if (rr <= stop2) break;
      const double beta = rz_new / rz;
      rz = rz_new;
      for (index_t j = 0; j < d; ++j) pv[j] = z[j] + beta * pv[j];
    }
  };

  // Step 2b, L1 / elastic net with a small active set A (kGramEntries, kGramPairs): the quadratic model's Hessian
  // Hg = X_A^T diag(D) X_A + nu I is built once per iteration from the rows, and the model is minimized on it:
  // coordinate descent epochs cost |A|^2 instead of a pass over X^T (so they can run to kGramInnerStop), then
  // Newton steps on the orthant face of the model's support S (the model is quadratic there: the L1 part is
  // linear, sigma_j lambda eta for sign sigma_j): (Hg_SS + lambda (1 - eta) I) delta = -(model gradient on S), by
  // Cholesky, shortened to keep every sign (a coordinate that would cross zero stops at zero), each followed by an
  // epoch that lets the zeros re-enter. This is the exact minimizer of the model once its support is found (the
  // subproblem solved to high accuracy, as in the proximal Newton analysis of Lee, Sun, Saunders, SIAM J. Optim.
  // 24 (2014): the outer iterations then converge superlinearly), where 100 coordinate-descent epochs on an
  // ill-conditioned model left the outer iterations linear: a9a at C = 100 took 2,400 Newton iterations.
  // Leaves dir and q = X dir; false when the Gram matrix is too large (the caller runs the column epochs).
  const bool gram_rows = [&] {
    if constexpr (PenP::id == Penalty::l2) return false;
    if (rows_only || o.sum_over_ranks) return false;
    double pairs = 0;
    for (index_t i = 0; i < n; ++i) {
      const double k = double(X.offsets[i + 1] - X.offsets[i]);
      pairs += 0.5 * k * (k + 1);
    }
    return pairs <= kGramPairs * double(std::max<offset_t>(X.nnz(), 1));
  }();
  const double lam1 = form.l1_level();  // the model's L1 and L2 coefficients
  const double lam2 = PenP::id == Penalty::l1 ? 0.0 : lam * (1 - eta);
  // One coordinate step on the quadratic model at a = w_j + dir_j with model gradient G and curvature h (the column
  // epochs and the Gram epochs): returns the move z of dir_j and adds the model's decrease to dec.
  auto model_step = [&](double a, double G, double h, double& dec) {
    const double a_new = PenP::step(a, G, h, lam, eta, B);
    const double z = a_new - a;
    if (z != 0) dec -= G * z + 0.5 * h * z * z + PenP::value(a_new, lam, eta) - PenP::value(a, lam, eta);
    return z;
  };
  std::vector<double> Hg, hd, dl, sa, wa, Mf, rhs;
  std::vector<index_t> pos, order, face;
  auto gram_direction = [&]() -> bool {
    const std::size_t W = active.size();
    if (!gram_rows || W == 0 || double(W) * double(W) > kGramEntries) return false;
    ++passes;  // the rows read once to build Hg
    std::sort(active.begin(), active.end());
    pos.assign(Dn, -1);
    for (std::size_t p = 0; p < W; ++p) pos[active[p]] = static_cast<index_t>(p);
    Hg.assign(W * W, 0.0);
    std::vector<std::pair<std::size_t, double>> row;
    for (index_t i = 0; i < n; ++i) {
      const double Di = curv[i];
      if (Di == 0) continue;
      row.clear();
      for (offset_t p = X.offsets[i]; p < X.offsets[i + 1]; ++p)
        if (const index_t a = pos[X.indices[p]]; a >= 0) row.emplace_back(std::size_t(a), double(X.values[p]));
      for (std::size_t a = 0; a < row.size(); ++a) {  // the upper triangle: positions ascend along a row
        const double xa = Di * row[a].second;
        double* Ha = Hg.data() + row[a].first * W;
        for (std::size_t b = a + 1; b < row.size(); ++b) Ha[row[b].first] += xa * row[b].second;
      }
    }
    hd.assign(W, 0.0);
    dl.assign(W, 0.0);
    sa.resize(W);
    wa.resize(W);
    for (std::size_t p = 0; p < W; ++p) {
      for (std::size_t r2 = p + 1; r2 < W; ++r2) Hg[r2 * W + p] = Hg[p * W + r2];
      Hg[p * W + p] = H[active[p]];  // <x^(j)^2, D> + nu, as the column epochs use
      sa[p] = s[active[p]];
      wa[p] = w[active[p]];
    }
    order.resize(W);
    std::iota(order.begin(), order.end(), index_t{0});
    // One epoch of coordinate descent on the model (the seeded order); returns the model's decrease.
    auto epoch = [&]() {
      shuffle(std::span<index_t>(order), rng);
      double dec = 0;
      for (const index_t pi : order) {
        const std::size_t p = static_cast<std::size_t>(pi);
        const double z = model_step(wa[p] + dl[p], sa[p] + hd[p], Hg[p * W + p], dec);
        if (z == 0) continue;
        dl[p] += z;
        const double* Hp = Hg.data() + p * W;  // symmetric: row p is column p
        for (std::size_t r2 = 0; r2 < W; ++r2) hd[r2] += z * Hp[r2];
      }
      return dec;
    };
    const int max_epochs = static_cast<int>(std::clamp(
        kGramEpochBudget * double(X.nnz()) / (double(W) * double(W)), 10.0, double(kMaxGramInner)));
    double total = 0;
    for (int e = 0; e < max_epochs; ++e) {
      const double dec = epoch();
      total += dec;
      if (!(dec > kGramInnerStop * total)) break;
    }
    for (int round = 0; round < kFaceRounds; ++round) {
      face.clear();
      for (std::size_t p = 0; p < W; ++p)
        if (wa[p] + dl[p] != 0) face.push_back(static_cast<index_t>(p));
      const std::size_t k = face.size();
      if (k == 0) break;
      Mf.resize(k * k);
      rhs.resize(k);
      for (std::size_t a = 0; a < k; ++a) {
        const std::size_t p = static_cast<std::size_t>(face[a]);
        const double x = wa[p] + dl[p];
        for (std::size_t b = 0; b < k; ++b) Mf[a * k + b] = Hg[p * W + std::size_t(face[b])];
        Mf[a * k + a] += lam2;
        rhs[a] = -(sa[p] + hd[p] + (x > 0 ? lam1 : -lam1) + lam2 * x);
      }
      if (!cholesky_solve(Mf, k, rhs)) break;
      double t = 1;  // the longest step that keeps every sign of the face (and the bound B of the L1 step)
      for (std::size_t a = 0; a < k; ++a) {
        const std::size_t p = static_cast<std::size_t>(face[a]);
        const double x = wa[p] + dl[p], x1 = x + rhs[a];
        if (x1 == 0 || (x1 > 0) != (x > 0)) t = std::min(t, x / (x - x1));
        else if (std::abs(x1) > B) t = std::min(t, (std::copysign(B, x) - x) / rhs[a]);
      }
      if (!(t > 0)) break;
      for (std::size_t a = 0; a < k; ++a) {
        const std::size_t p = static_cast<std::size_t>(face[a]);
        const double x = wa[p] + dl[p];
        double z = t * rhs[a];
        if (t < 1 && std::abs(x + z) <= 1e-15 * std::abs(x)) z = -x;  // the coordinate that reached zero
        if (z == 0) continue;
        dl[p] += z;
        const double* Hp = Hg.data() + p * W;
        for (std::size_t r2 = 0; r2 < W; ++r2) hd[r2] += z * Hp[r2];
      }
      const double dec = epoch();  // zeros that should enter, signs the face step could not change
      if (t == 1 && !(dec > kGramInnerStop * std::max(total, 0.0))) break;
      total += dec;
    }
    std::fill(dir.begin(), dir.end(), 0.0);
    std::fill(q.begin(), q.end(), 0.0);
    ++passes;  // q = X dir over the active columns
    for (std::size_t p = 0; p < W; ++p) {
      const double z = dl[p];
      if (z == 0) continue;
      const index_t j = active[p];
      dir[j] = z;
      const offset_t b = A.offsets[j], e = A.offsets[j + 1];
      if (dense_cols && e - b == offset_t(n))
        dense::axpy(z, A.values.data() + b, q.data(), n);
      else
        for (offset_t p2 = b; p2 < e; ++p2) q[A.indices[p2]] += z * double(A.values[p2]);
    }
    return true;
  };

  int it = 0;
  double best_gap = std::numeric_limits<double>::infinity();
  // L2, the Newton dual point: after the direction of step 2, the dual point u' = grad f(v) + diag(D) q (q = X dir),
  // the first-order model of grad f at v + q, whose weights -X^T u' / lambda are the Newton iterate w + dir when the
  // conjugate gradients solve the system exactly. The certificate's dual point grad f(v) maps to w - (s + lambda
  // w) / lambda, a step of ||grad P|| / lambda: its gap, ||grad P||^2 / (2 lambda) at v = X w, exceeds the
  // suboptimality by up to the ratio of the Hessian's largest eigenvalue to lambda (150x on dense 400,000 x 100 at
  // C = 1), so the loop needed one iteration more to certify what it had already reached. D(u') = -f^*(u') -
  // g^*(-X^T u') is computed exactly for that u' (X^T u' = s + X^T diag(D) q, the latter summed from the CG's
  // products, hq), and by weak duality every such value is a lower bound of P*: the largest one seen (dual2) serves
  // every later certificate, whichever w it is for. A u' outside the conjugate's domain (logistic, squared hinge:
  // a step that moves a sample's derivative past its range) gives -infinity and is not used.
  // Rounding: D(u') is evaluated in double, and X^T u' (s + hq, summed from different products than u' itself)
  // carries rounding errors that g^* amplifies by 1/lambda; unlike the certificate at grad f(v) (Fenchel-Young,
  // exact there), the conjugates are evaluated by their formulas, which lose about c_k eps each (logistic: log(1 -
  // t) with t near 0): with a sample weight of 1e15 the evaluated D(u') came out 1.3e-4 above the primal. The bound
  // used is D(u') minus kDualRounding eps (sum_k (|f_k^*| + c_k) / n + sum_j |g_j^*| + sum_k |v_k + q_k| |u'_k|),
  // the last sum standing for the error of <X^T u', w + dir> (X (w + dir) = v + q); on well-scaled data about
  // 1e-12 relative.
  // float64 data: hq = X^T diag(D) q on the float64 values, one pass (the conjugate gradients summed it from
  // the float32 values, which would make X^T u' another vector than the one u' maps to).
  auto exact_hq = [&] {
    ++passes;
    hq.assign(Dn, 0.0);
    if (rows_only) {
      for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
        double* b = buf_a.data() + std::size_t(ch) * Dn;
        std::fill(b, b + Dn, 0.0);
        for (std::int64_t i = lo; i < hi; ++i) {
          const double u = curv[i] * q[i];
          if (u == 0) continue;
          if (dense_rows) {
            dense::axpy(u, Xv + i * ld, b, ld);
            dense::axpy(u, Xl + i * ld, b, ld);
          } else {
            for (offset_t p = X.offsets[i]; p < X.offsets[i + 1]; ++p)
              b[X.indices[p]] += x_at(p, true) * u;
          }
        }
      });
      reduce_buffers(buf_a, hq, [](index_t) { return 0.0; });
    } else {
      for_each_index(d, kFeatureGrain, [&](index_t j) {
        const offset_t b = A.offsets[j], e = A.offsets[j + 1];
        if (dense_cols && e - b == offset_t(n)) {
          hq[j] = dense::dot3(A.values.data() + b, curv.data(), q.data(), n) +
                  dense::dot3(Al + b, curv.data(), q.data(), n);
          return;
        }
        double t = 0;
        for (offset_t p = b; p < e; ++p)
          t += a_at(p, true) * curv[A.indices[p]] * q[A.indices[p]];
        hq[j] = t;
      });
    }
    sum_over_ranks(hq);
  };
  double dual2 = -std::numeric_limits<double>::infinity();
  std::vector<double> part_d(3 * static_cast<std::size_t>(n_chunks));
  auto newton_dual = [&]() -> double {
    for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      double f = 0, fa = 0, m = 0;
      for (std::int64_t k = lo; k < hi; ++k) {  // phi_k^*(z) = LossP::conjugate(y, -z, c) at z = n u'_k
        const double u = grad[k] + curv[k] * q[k];
        const double fk = LossP::conjugate(y[k], -u / inv_n, c[k]);
        f += fk;
        fa += std::abs(fk) + c[k];  // c_k: the conjugate formulas lose c_k eps (logistic: log(1 - t))
        m += std::abs(v[k] + q[k]) * std::abs(u);
      }
      part_d[3 * ch] = f;
      part_d[3 * ch + 1] = fa;
      part_d[3 * ch + 2] = m;
    });
    double sums[3] = {0, 0, 0};
    for (std::int64_t ch = 0; ch < n_chunks; ++ch)
      for (int i = 0; i < 3; ++i) sums[i] += part_d[3 * ch + i];
    sum_over_ranks(std::span<double>(sums, 3));
    double g = 0, ga = 0;
    for (index_t j = 0; j < d; ++j) {
      const double gj = PenP::conjugate(s[j] + hq[j], lam, eta, B);
      g += gj;
      ga += std::abs(gj);
    }
    const double D = -sums[0] * inv_n - g;
    const double err = kDualRounding * std::numeric_limits<double>::epsilon() * (sums[1] * inv_n + ga + sums[2]);
    return std::isfinite(D) && std::isfinite(err) ? D - err : -std::numeric_limits<double>::infinity();
  };
  // cert with the dual replaced by dual2 where that is larger (no per-feature split of the gap then: gap_sum = gap).
  auto tightened = [&](Certificate c) {
    if (dual2 > c.dual) {
      c.dual = dual2;
      c.gap = c.primal - c.dual;
      c.gap_sum = c.gap;
      c.dual_scale = 1;
    }
    return c;
  };
  int since_best = 0;
  // The point with the smallest |relative gap| seen (an L1 gap near its rounding floor fluctuates): returned when
  // it certifies better than the last one.
  std::vector<double> best_w;
  double best_seen = std::numeric_limits<double>::infinity();
  bool resync = o.initial_alpha != nullptr;  // v = X w recomputed by the next state() (the warm start's v)
  // The loop's last certificate, and whether its v was recomputed: every exit below leaves w as that state() saw
  // it, so an exact last certificate is the returned one (with an L1 part, every iteration's is).
  Certificate last_cert;
  bool last_exact = false;
  double prev_rel = 0;  // |relative gap| of the previous iteration's certificate without dual2 (0: none yet)
  for (;;) {
    Certificate cert = state(resync);
    const Certificate loose = cert;  // before the Newton dual point (the prediction of exact_next)
    last_exact = resync;
    resync = false;
    if (it == 0) driver.check_finite(cert, it, res.alpha, v);
    // Step 2 (L2) ahead of the record when the gap is within reach of tol: the direction, then the Newton dual
    // point's certificate for this w, which the record then judges.
    bool have_dir = false;
    if constexpr (PenP::id == Penalty::l2) {
      const double rel = relative_gap(cert);
      if (it > 0 && rel > o.tol && rel <= kDualPointReach * o.tol) {
        cg_direction(true);
        have_dir = true;
        if (f64) {
          times_x(dir.data(), q.data());  // exact_q
          exact_hq();
        }
        dual2 = std::max(dual2, newton_dual());
      }
      cert = tightened(cert);
    }
    last_cert = cert;
    if (std::abs(relative_gap(cert)) < best_seen) {
      best_seen = std::abs(relative_gap(cert));
      best_w.assign(res.alpha.begin(), res.alpha.end());
    }
    // Iteration `it` is done: the epoch driver records it and applies the stop rule (converged, interrupted, budget).
    if (it > 0 && driver.record(it, cert, res.alpha, v, passes) != EpochDriver::Stop::none) break;
    if (it == 0 && relative_gap(cert) <= o.tol) break;

    // Step 2: the Newton direction. L2: preconditioned conjugate gradients on the Newton system; otherwise
    // coordinate descent on the quadratic model (sequential, seeded order). Both leave q = X dir.
    if constexpr (PenP::id == Penalty::l2) {
      if (!have_dir) cg_direction(false);
    } else {
    active.clear();
    for (index_t j = 0; j < d; ++j)
      if (!(has_l1 && w[j] == 0 && std::abs(s[j]) <= lam * eta)) active.push_back(j);
    if (!gram_direction()) {
    std::fill(dir.begin(), dir.end(), 0.0);
    std::fill(q.begin(), q.end(), 0.0);
    double total = 0;
    for (int inner = 0; inner < kMaxInner; ++inner) {
      shuffle(std::span<index_t>(active), rng);
      ++passes;  // every active column read twice (G, then q): counted as one pass
      double dec = 0;
      for (std::size_t pj = 0; pj < active.size(); ++pj) {
        if (pj + kPrefetchRows < active.size()) prefetch_row(A, active[pj + kPrefetchRows]);
        const index_t j = active[pj];
        const offset_t b = A.offsets[j], e = A.offsets[j + 1];
        const bool full = dense_cols && e - b == offset_t(n);  // a full column: contiguous values at samples 0 .. n-1
        double gq = 0;
        if (full)
          gq = dense::dot3(A.values.data() + b, curv.data(), q.data(), n);
        else
          for (offset_t p = b; p < e; ++p) gq += double(A.values[p]) * curv[A.indices[p]] * q[A.indices[p]];
        const double z = model_step(w[j] + dir[j], s[j] + gq, H[j], dec);
        if (z == 0) continue;
        dir[j] += z;
        if (full)
          dense::axpy(z, A.values.data() + b, q.data(), n);
        else
          for (offset_t p = b; p < e; ++p) q[A.indices[p]] += z * double(A.values[p]);
      }
      total += dec;
      if (!(dec > kInnerStop * total)) break;
    }
    }
    }

    if (f64 && !have_dir) times_x(dir.data(), q.data());  // exact_q: q = X dir on the float64 values

    // Step 3: Armijo backtracking on the true objective along dir (q = X dir).
    double delta = 0, g0 = 0;
    for (index_t j = 0; j < d; ++j) {
      if (dir[j] == 0) continue;
      delta += s[j] * dir[j] + PenP::value(w[j] + dir[j], lam, eta) - PenP::value(w[j], lam, eta);
      g0 += PenP::value(w[j], lam, eta);
    }
    // No measurable descent left: at the rounding level of P a nonzero direction is still taken (flat below), as it
    // reduces the optimality violations the certificate sees; otherwise stop.
    bool any = false;
    for (index_t j = 0; j < d && !any; ++j) any = dir[j] != 0;
    const bool flat = any && std::abs(delta) <= kFlat * std::abs(cert.primal);
    if (!(delta < 0) && !flat) {
      driver.mark_stalled(it, "the Newton direction predicts no decrease of the objective");
      break;
    }
    // The slope of the objective along dir at step t, d/dt F(w + t dir) = (1/n) sum_k q_k phi_k'(v_k + t q_k) +
    // lambda (w + t dir).dir (L2 penalty): it stays exact where the objective's values no longer resolve a step (an
    // unscaled X, issue 18: a9a x 1e6), since its terms do not cancel against P.
    auto slope = [&](double t) {
      for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
        double g = 0;
        for (std::int64_t k = lo; k < hi; ++k)
          if (q[k] != 0) g += q[k] * LossP::derivative(y[k], v[k] + t * q[k], c[k]);
        part_a[ch] = g;
      });
      double g = 0, r = 0;
      for (std::int64_t ch = 0; ch < n_chunks; ++ch) g += part_a[ch];
      sum_over_ranks(std::span<double>(&g, 1));
      for (index_t j = 0; j < d; ++j) r += (w[j] + t * dir[j]) * dir[j];
      return g * inv_n + lam * r;
    };
    // The line minimum by the slope's sign (it increases with t: F is convex along dir), by regula falsi with the
    // Illinois rule on [0, 1]; the full step when F still descends at t = 1.
    auto slope_step = [&]() {
      const double s0 = slope(0);
      if (!(s0 < 0)) return 0.0;
      double a = 0, b = 1, fa = s0, fb = slope(1);
      if (fb <= 0) return 1.0;
      for (int it = 0, side = 0; it < kSlopeSteps; ++it) {
        const double m = (a * fb - b * fa) / (fb - fa);
        const double fm = slope(m);
        if (std::abs(fm) <= kSlopeTol * -s0) return m;
        if (fm < 0) {
          a = m, fa = fm;
          if (side == -1) fb *= 0.5;
          side = -1;
        } else {
          b = m, fb = fm;
          if (side == 1) fa *= 0.5;
          side = 1;
        }
      }
      return a;  // the slope is still negative there: a descent step
    };
    // The next state() re-synchronizes v = X w when its certificate may stop the fit: the iteration budget reached,
    // or the relative gap predicted (falling at least by the factor of the last iteration: Newton's rate is
    // superlinear) to reach tol, or on the dense rows-only path, where the exact v costs no pass of its own
    // (fused_v), to come within reach of the Newton dual point (kDualPointReach). The stop then returns that
    // certificate as it is instead of reading X again for an exact one (state(true) after the loop). A wrong
    // prediction costs the pass of v = X w (on the fused path only the samples' terms, not taken from the cache).
    const double rel_now = std::abs(relative_gap(loose));
    const double reach = rows_only && dense_rows ? kDualPointReach : 1.0;
    const bool exact_next = PenP::id == Penalty::l2 &&
                            (it + 1 >= o.max_epochs ||
                             (prev_rel > 0 && rel_now * std::min(1.0, rel_now / prev_rel) <= reach * o.tol));
    prev_rel = rel_now;
    double t = 1;
    bool accepted = false, unresolved = false;
    // Keep the trial terms when the next state() would use them (not a re-synchronizing one).
    const bool keep = cache_terms && !exact_next && (it + 1) % kResyncEvery != 0;
    cached_t = 0;
    for (int bt = 0; bt < kMaxBacktrack && !accepted; ++bt, t *= 0.5) {
      for_chunks(n, [&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
        double df = 0;
        if (keep) {
          for (std::int64_t k = lo; k < hi; ++k) v_next[k] = v[k] + t * q[k];
          sample_terms(form, lo, hi - lo, v_next.data() + lo, val_next.data() + lo, der_next.data() + lo,
                       cur_next.data() + lo);
          for (std::int64_t k = lo; k < hi; ++k)
            if (q[k] != 0) df += val_next[k] - lossv[k];
        } else {
          // The trial's terms in blocks on the stack (sample_terms, as lossv was evaluated), only the values used.
          constexpr std::int64_t kB = 256;
          double zb[kB], vb[kB], db[kB], hb[kB];
          for (std::int64_t b0 = lo; b0 < hi; b0 += kB) {
            const std::int64_t m = std::min(kB, hi - b0);
            for (std::int64_t k = 0; k < m; ++k) zb[k] = v[b0 + k] + t * q[b0 + k];
            sample_terms(form, b0, m, zb, vb, db, hb);
            for (std::int64_t k = 0; k < m; ++k)
              if (q[b0 + k] != 0) df += vb[k] - lossv[b0 + k];
          }
        }
        part_a[ch] = df;
      });
      if (keep) cached_t = t;
      double df = 0, gt = 0;
      for (std::int64_t ch = 0; ch < n_chunks; ++ch) df += part_a[ch];
      sum_over_ranks(std::span<double>(&df, 1));
      for (index_t j = 0; j < d; ++j)
        if (dir[j] != 0) gt += PenP::value(w[j] + t * dir[j], lam, eta);
      const double dF = df * inv_n + gt - g0;
      if (dF <= kArmijo * t * delta) accepted = true;
      // Near the optimum the objective stops resolving the step (|dF| at rounding level of P) while the gradient
      // still shows it: take the full model step on that evidence (the certificate judges it next iteration).
      // With an L2 penalty the step is then chosen by the slope, which still resolves it (slope_step).
      // The same when a shorter step reaches that level after the full one overshot (a piecewise-quadratic loss
      // whose kinks the full step crosses): the slope finds the line minimum in [0, 1], where halving would accept
      // a step of 2^-25 on a rounding-level decrease (squared hinge on a9a x 1e6 stalled at relative gap 6.2).
      const bool unresolved_dF = std::abs(dF) <= kFlat * std::abs(cert.primal);
      if constexpr (PenP::id == Penalty::l2) {
        if (unresolved_dF) {
          t = slope_step();
          if (t > 0) {
            accepted = unresolved = true;
            break;
          }
        }
      } else if (bt == 0 && unresolved_dF && flat) {
        accepted = true;
      }
      if (accepted) {
        unresolved = dF > -kFlat * std::abs(cert.primal);
        break;
      }
    }
    if constexpr (PenP::id == Penalty::l2) {
      // No step length passes Armijo by the objective's values (its differences at rounding level, or the full step
      // overshooting and the shorter ones unresolved): the slope still shows the line minimum.
      if (!accepted) {
        t = slope_step();
        accepted = unresolved = t > 0;
      }
    }
    if (!accepted) {  // no decrease at any step length: stop with the current (certified) point
      driver.mark_stalled(it, "no step length along the Newton direction decreases the objective measurably");
      break;
    }
    // Stalled: kStall steps whose objective change the double precision could not resolve, with no better relative
    // gap in between (the certificate's rounding floor). Steps that still decrease the objective never count.
    if (relative_gap(cert) < best_gap) {
      best_gap = relative_gap(cert);
      since_best = 0;
    } else if (unresolved && ++since_best >= kStall) {
      driver.mark_stalled(it, fmt::format("{} Newton steps whose decrease of the objective double precision could not "
                                          "resolve, without a better gap", kStall));
      break;
    }
    for (index_t j = 0; j < d; ++j) w[j] += t * dir[j];
    ++it;
    // v += t X dir (q): no extra pass over X. Rounding drift is re-synchronized every kResyncEvery iterations (every
    // iteration with an L1 part) and before the returned certificate.
    if (cached_t != 0 && t == cached_t) {  // the kept trial is the step: its v + t q and its terms
      v.swap(v_next);
      lossv.swap(val_next);
      from_cache = true;
    } else {
      for_each_index(n, kRowGrain, [&](index_t k) { v[k] += t * q[k]; });
    }
    if (o.after_epoch) o.after_epoch(it, std::span<double>(res.alpha), std::span<double>(v));
    // With an L1 part the Lipschitzed gap multiplies any drift of v by B: re-synchronize every iteration.
    resync = has_l1 || it % kResyncEvery == 0 || exact_next;
  }
  res.certificate = last_exact ? last_cert : tightened(state(true));  // exact for (w, v = X w)
  if (!best_w.empty() && best_w != res.alpha && best_seen < std::abs(relative_gap(res.certificate))) {
    const std::vector<double> last_w = res.alpha;
    const Certificate last = res.certificate;
    res.alpha = best_w;
    w = res.alpha.data();
    res.certificate = tightened(state(true));
    if (std::abs(relative_gap(res.certificate)) > std::abs(relative_gap(last))) {  // the exact v disagreed: keep last
      res.alpha = last_w;
      w = res.alpha.data();
      res.certificate = tightened(state(true));
    }
  }
  driver.finish(form, res.certificate, v, it);
  return res;
}
}  // namespace

bool newton_rows_only(const CsrMatrix& X) {
  // Zeroing and adding the chunk buffers costs n_chunks x d per pass: worth it while that stays below half the
  // nonzeros (a pass over X^T is saved) and the buffers stay small.
  const double buffer = std::ceil(double(X.n_rows) / double(kChunk)) * double(X.n_cols);
  return buffer <= kRowsOnlyDoubles && buffer <= 0.5 * double(X.nnz());
}

template <class Form>
SolveResult solve_primal_newton(const Form& form, const CsrMatrix& X, const SolverOptions& o) {
  if (form.A && (X.n_rows != form.dim() || X.n_cols != form.n_coords()))
    throw InvalidArgument("solve_primal_newton: X does not match the formulation's transposed data");
  if (!form.A && (Form::PenP::id != Penalty::l2 || !newton_rows_only(X)))
    throw InvalidArgument("solve_primal_newton: the formulation has no X^T, which only the L2 rows-only path can do without");
  if (o.n_threads < 0) throw InvalidArgument(fmt::format("--threads: must be at least 0, got {}", o.n_threads));
  if (o.sum_over_ranks && Form::PenP::id != Penalty::l2)
    throw InvalidArgument("solve_primal_newton: the distributed Newton solver trains the L2 penalty only");
  return in_solver_arena(o.n_threads, [&](int) { return run_newton(form, X, o); });
}

#define HETGLM_INSTANTIATE_NEWTON(...) \
  template SolveResult solve_primal_newton(const __VA_ARGS__&, const CsrMatrix&, const SolverOptions&);
HETGLM_FOR_EACH_PRIMAL_FORM(HETGLM_INSTANTIATE_NEWTON)
#undef HETGLM_INSTANTIATE_NEWTON

}  // namespace hetglm
