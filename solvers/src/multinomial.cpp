// SPDX-License-Identifier: Apache-2.0
// The multinomial (softmax) Newton-CG solver (algorithm, certificate and sources in multinomial.hpp).
#include "hetglm/solvers/multinomial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "hetglm/error.hpp"
#include "hetglm/losses.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "anderson.hpp"
#include "executor.hpp"

namespace hetglm {

namespace {

constexpr std::int64_t kChunk = 4096;        // rows per partial sum (fixed: sums never depend on the thread count)
constexpr double kBufferDoubles = 1 << 24;   // the per-chunk d x K buffers together hold at most this many doubles
constexpr double kArmijo = 0.01;
constexpr int kMaxBacktrack = 40;
constexpr double kMaxExpand = 1024;  // the proximal Newton step's largest multiple tried past a full step
constexpr double kFlat = 1e-13;
constexpr int kStall = 10;
constexpr double kCgTol = 0.1;
constexpr int kMaxCg = 250;
constexpr int kMaxInner = 100;    // passes over the features per proximal Newton direction
constexpr int kBlockSweeps = 10;           // coordinate sweeps of one feature's K x K block
constexpr double kBlockDoubles = 1 << 26;  // the stored K x K blocks of the features together (512 MiB)

struct Multinomial {
  const CsrMatrix& X;
  const std::vector<int>& y;
  const int K;
  const std::vector<double>& c;
  const double lam;
  const Penalty pen;
  const double eta;
  /// The penalty is smooth (L2, or the elastic net at eta = 0): Newton-CG; else proximal Newton (multinomial.hpp).
  const bool smooth;
  const SolverOptions& o;
  const std::size_t n, d, DK;
  const double inv_n;
  std::int64_t chunk, n_chunks;
  std::vector<double> W, Z, Pr, G, Hd, S, U, buf, part;  // Pr = softmax(Z); U = X S
  /// float64 data at tol < kFloat64Tol (forms.hpp): X.values_lo, read by every product with X (so the fixed point
  /// and the certificate are the float64 problem's); else null (the float32 values alone).
  const float* lo;
  double x_at(offset_t p) const { return entry(X.values.data(), lo, p); }

  Multinomial(const CsrMatrix& X_, const std::vector<int>& y_, int K_, const std::vector<double>& c_, double lam_,
              Penalty pen_, double eta_, const SolverOptions& o_)
      : X(X_), y(y_), K(K_), c(c_), lam(lam_), pen(pen_), eta(pen_ == Penalty::l2 ? 0.0 : eta_),
        smooth(pen_ == Penalty::l2 || eta_ <= 0), o(o_), n(std::size_t(X_.n_rows)), d(std::size_t(X_.n_cols)),
        DK(d * std::size_t(K_)), inv_n(1.0 / double(X_.n_rows)),
        lo(values_lo_for(X_, o_.tol)) {
    // Chunks of at least kChunk rows, fewer when their buffers of d x K doubles would exceed kBufferDoubles.
    const std::int64_t by_memory = std::max<std::int64_t>(1, std::int64_t(kBufferDoubles / double(std::max<std::size_t>(DK, 1))));
    n_chunks = std::max<std::int64_t>(1, std::min<std::int64_t>((std::int64_t(n) + kChunk - 1) / kChunk, by_memory));
    chunk = (std::int64_t(n) + n_chunks - 1) / n_chunks;
    n_chunks = (std::int64_t(n) + chunk - 1) / chunk;
    W.assign(DK, 0.0);
    Z.assign(n * K, 0.0);
    Pr.assign(n * K, 0.0);
    G.assign(DK, 0.0);
    Hd.assign(DK, 0.0);
    S.assign(DK, 0.0);
    U.assign(n * K, 0.0);
    buf.assign(std::size_t(n_chunks) * DK, 0.0);
    part.assign(std::size_t(n_chunks) * 2, 0.0);
  }

  template <class Body>
  void for_chunks(const Body& body) {
    parallel_chunks(n_chunks, [&](std::int64_t ch) {
      body(ch, ch * chunk, std::min<std::int64_t>(std::int64_t(n), (ch + 1) * chunk));
    });
  }
  /// out[jk] = sum over chunks of buf (in chunk order) + add * in[jk].
  void reduce(std::vector<double>& out, double add, const std::vector<double>& in) {
    parallel_chunks((std::int64_t(DK) + 4095) / 4096, [&](std::int64_t b) {
      const std::size_t lo = std::size_t(b) * 4096, hi = std::min(DK, lo + 4096);
      for (std::size_t t = lo; t < hi; ++t) {
        double s = 0;
        for (std::int64_t ch = 0; ch < n_chunks; ++ch) s += buf[std::size_t(ch) * DK + t];
        out[t] = s + add * in[t];
      }
    });
  }
  /// Row i of X M (M: d x K) into out[i * K ...].
  void row_product(std::int64_t i, const std::vector<double>& M, std::vector<double>& out) const {
    double* z = out.data() + std::size_t(i) * K;
    std::fill(z, z + K, 0.0);
    for (offset_t p = X.offsets[i]; p < X.offsets[i + 1]; ++p) {
      const double x = x_at(p);
      const double* m = M.data() + std::size_t(X.indices[p]) * K;
      for (int k = 0; k < K; ++k) z[k] += x * m[k];
    }
  }
  /// out (n x K) = X M.
  void multiply(const std::vector<double>& M, std::vector<double>& out) {
    for_chunks([&](std::int64_t, std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) row_product(i, M, out);
    });
  }

  /// Step 1 and the certificate at W (Z = X W exact): Pr, G, Hd and (P, D).
  Certificate state() {
    multiply(W, Z);
    for_chunks([&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      double* bg = buf.data() + std::size_t(ch) * DK;
      std::fill(bg, bg + DK, 0.0);
      std::vector<double> a(static_cast<std::size_t>(K));
      double loss = 0, conj = 0;
      for (std::int64_t i = lo; i < hi; ++i) {
        const double* z = Z.data() + std::size_t(i) * K;
        double* p = Pr.data() + std::size_t(i) * K;
        const int yi = y[std::size_t(i)];
        const double ci = c[std::size_t(i)];
        loss += math::softmax_value(z, K, yi, ci, p);
        for (int k = 0; k < K; ++k) a[std::size_t(k)] = ci * ((k == yi ? 1.0 : 0.0) - p[k]);  // alpha_i
        conj += math::softmax_conjugate(a.data(), K, yi, ci);
        for (offset_t q = X.offsets[i]; q < X.offsets[i + 1]; ++q) {
          const double x = x_at(q);
          double* g = bg + std::size_t(X.indices[q]) * K;
          for (int k = 0; k < K; ++k) g[k] -= x * a[std::size_t(k)];
        }
      }
      part[2 * std::size_t(ch)] = loss;
      part[2 * std::size_t(ch) + 1] = conj;
    });
    reduce(G, 0.0, W);
    double loss = 0, conj = 0, w2 = 0, wa2 = 0;
    for (std::int64_t ch = 0; ch < n_chunks; ++ch) {
      loss += part[2 * std::size_t(ch)];
      conj += part[2 * std::size_t(ch) + 1];
    }
    if (!smooth) {  // G: the loss's gradient alone (g is not differentiated)
      for (std::size_t t = 0; t < DK; ++t) G[t] *= inv_n;
      return proximal_certificate(loss, conj);
    }
    for (std::size_t t = 0; t < DK; ++t) {
      G[t] = G[t] * inv_n + lam * W[t];
      const double wa = W[t] - G[t] / lam;  // W(A) = X^T A / (lambda n)
      w2 += W[t] * W[t];
      wa2 += wa * wa;
    }
    Certificate cert;
    cert.primal = loss * inv_n + 0.5 * lam * w2;
    // The dual point A = 0 (q_i = e_{y_i}) has D = 0, also a lower bound of P*: it stands in where D(A) overflows to
    // -inf (lambda near the smallest double, W(A) = X^T A / (lambda n) beyond its range: -c 1e300 failed at epoch 0).
    cert.dual = std::max(-conj * inv_n - 0.5 * lam * wa2, 0.0);
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = cert.gap;
    return cert;
  }

  /// g(W + t S) = sum_jk g(W_jk + t S_jk), the L1 / elastic-net penalty (glm_math_impl.h).
  double penalty_at(double t) const {
    double r = 0;
    for (std::size_t jk = 0; jk < DK; ++jk) r += math::penalty_value(int(pen), W[jk] + t * S[jk], lam, eta);
    return r;
  }

  /// (1/n) sum_i phi_i^*(-s alpha_i) with alpha_i = c_i (e_{y_i} - p_i): the scaled dual point s alpha_i is the
  /// convex combination q_i = (1 - s) e_{y_i} + s p_i of two points of the simplex, so its conjugate is finite.
  double conjugate_sum(double s) {
    for_chunks([&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      std::vector<double> a(static_cast<std::size_t>(K));
      double conj = 0;
      for (std::int64_t i = lo; i < hi; ++i) {
        const double* p = Pr.data() + std::size_t(i) * K;
        const int yi = y[std::size_t(i)];
        const double ci = c[std::size_t(i)];
        for (int k = 0; k < K; ++k) a[std::size_t(k)] = s * ci * ((k == yi ? 1.0 : 0.0) - p[k]);
        conj += math::softmax_conjugate(a.data(), K, yi, ci);
      }
      part[2 * std::size_t(ch) + 1] = conj;
    });
    double conj = 0;
    for (std::int64_t ch = 0; ch < n_chunks; ++ch) conj += part[2 * std::size_t(ch) + 1];
    return conj * inv_n;
  }

  /// The certificate of the L1 / elastic-net model at W, with G = the loss's gradient (1/n) X^T (-A) and the sums of
  /// the loss and of phi^*(-alpha_i) over the samples. The dual point V(s) = s X^T A / n = -s G for the scale s:
  ///   D(s) = -(1/n) sum_i phi_i^*(-s alpha_i) - sum_jk g^*(s V_jk),
  /// g^*(v) = max(0, |v| - lambda eta)^2 / (2 lambda (1 - eta)) (0 inside the box |v| <= lambda eta; the L1
  /// penalty's conjugate is its indicator). s_box = min(1, lambda eta / max |G|) puts V into the box (the residual
  /// rescaling of scikit-learn's Lasso gap and of celer, Massias, Gramfort, Salmon, ICML 2018, Section 3): D(s_box)
  /// for L1; the better of D(1) and D(s_box) for the elastic net. Both are dual feasible, so P - D is an upper bound
  /// on P - P*.
  Certificate proximal_certificate(double loss, double conj1) {
    double gmax = 0, pen_sum = 0;
    for (std::size_t jk = 0; jk < DK; ++jk) {
      gmax = std::max(gmax, std::fabs(G[jk]));
      pen_sum += math::penalty_value(int(pen), W[jk], lam, eta);
    }
    const double box = lam * eta;
    const double s_box = gmax > box ? box / gmax : 1.0;
    auto conj_penalty = [&](double s) {
      if (eta >= 1) return 0.0;  // (s = s_box: inside the box)
      double r = 0;
      for (std::size_t jk = 0; jk < DK; ++jk) r += math::penalty_conjugate(int(pen), s * G[jk], lam, eta, 0.0);
      return r;
    };
    double dual = -std::numeric_limits<double>::infinity();
    if (eta < 1 || s_box >= 1) dual = -conj1 * inv_n - conj_penalty(1.0);
    if (s_box < 1) dual = std::max(dual, -conjugate_sum(s_box) - conj_penalty(s_box));
    Certificate cert;
    cert.primal = loss * inv_n + pen_sum;
    cert.dual = dual;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = cert.gap;
    return cert;
  }

  /// The preconditioner: diag of the Hessian at Pr.
  void hessian_diagonal() {
    for_chunks([&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      double* bh = buf.data() + std::size_t(ch) * DK;
      std::fill(bh, bh + DK, 0.0);
      for (std::int64_t i = lo; i < hi; ++i) {
        const double* p = Pr.data() + std::size_t(i) * K;
        const double ci = c[std::size_t(i)];
        for (offset_t q = X.offsets[i]; q < X.offsets[i + 1]; ++q) {
          const double x = x_at(q), x2 = x * x * ci;
          double* h = bh + std::size_t(X.indices[q]) * K;
          for (int k = 0; k < K; ++k) h[k] += x2 * p[k] * (1 - p[k]);
        }
      }
    });
    std::vector<double> ones(DK, 1.0);
    reduce(Hd, lam, ones);
    const double l2 = smooth ? lam : 0.0;  // (the proximal step adds the elastic net's L2 part itself)
    for (std::size_t t = 0; t < DK; ++t) Hd[t] = (Hd[t] - lam) * inv_n + l2;
  }

  /// out = H V (one fused pass over the rows); U_out = X V.
  void hessian_times(const std::vector<double>& V, std::vector<double>& out, std::vector<double>& XV) {
    for_chunks([&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      double* bh = buf.data() + std::size_t(ch) * DK;
      std::fill(bh, bh + DK, 0.0);
      std::vector<double> r(static_cast<std::size_t>(K));
      for (std::int64_t i = lo; i < hi; ++i) {
        row_product(i, V, XV);
        const double* u = XV.data() + std::size_t(i) * K;
        const double* p = Pr.data() + std::size_t(i) * K;
        double pu = 0;
        for (int k = 0; k < K; ++k) pu += p[k] * u[k];
        const double ci = c[std::size_t(i)];
        for (int k = 0; k < K; ++k) r[std::size_t(k)] = ci * p[k] * (u[k] - pu);
        for (offset_t q = X.offsets[i]; q < X.offsets[i + 1]; ++q) {
          const double x = x_at(q);
          double* h = bh + std::size_t(X.indices[q]) * K;
          for (int k = 0; k < K; ++k) h[k] += x * r[std::size_t(k)];
        }
      }
    });
    reduce(out, 0.0, V);
    for (std::size_t t = 0; t < DK; ++t) out[t] = out[t] * inv_n + lam * V[t];
  }

  /// Step 3: S by PCG on H S = -G; U = X S.
  void direction(double gnorm) {
    std::vector<double> r(DK), zz(DK), pv(DK), hp(DK), xp(n * K);
    std::fill(S.begin(), S.end(), 0.0);
    std::fill(U.begin(), U.end(), 0.0);
    double rz = 0;
    for (std::size_t t = 0; t < DK; ++t) {
      r[t] = -G[t];
      zz[t] = r[t] / Hd[t];
      pv[t] = zz[t];
      rz += r[t] * zz[t];
    }
    const double forcing = std::min(kCgTol, std::sqrt(gnorm));
    const double stop2 = forcing * forcing * gnorm * gnorm;
    for (int it = 0; it < kMaxCg && rz > 0; ++it) {
      if (asked_to_stop()) return;
      hessian_times(pv, hp, xp);
      double php = 0;
      for (std::size_t t = 0; t < DK; ++t) php += pv[t] * hp[t];
      if (!(php > 0)) break;
      const double step = rz / php;
      double rr = 0, rz_new = 0;
      for (std::size_t t = 0; t < DK; ++t) {
        S[t] += step * pv[t];
        r[t] -= step * hp[t];
        rr += r[t] * r[t];
      }
      for (std::size_t t = 0; t < n * K; ++t) U[t] += step * xp[t];
      if (rr <= stop2) break;
      for (std::size_t t = 0; t < DK; ++t) {
        zz[t] = r[t] / Hd[t];
        rz_new += r[t] * zz[t];
      }
      const double beta = rz_new / rz;
      rz = rz_new;
      for (std::size_t t = 0; t < DK; ++t) pv[t] = zz[t] + beta * pv[t];
    }
  }

  /// P(W + t S) from Z + t U.
  double objective_at(double t) {
    for_chunks([&](std::int64_t ch, std::int64_t lo, std::int64_t hi) {
      std::vector<double> z(static_cast<std::size_t>(K));
      double loss = 0;
      for (std::int64_t i = lo; i < hi; ++i) {
        for (int k = 0; k < K; ++k) z[std::size_t(k)] = Z[std::size_t(i) * K + k] + t * U[std::size_t(i) * K + k];
        loss += math::softmax_value(z.data(), K, y[std::size_t(i)], c[std::size_t(i)], static_cast<double*>(nullptr));
      }
      part[2 * std::size_t(ch)] = loss;
    });
    double loss = 0, w2 = 0;
    for (std::int64_t ch = 0; ch < n_chunks; ++ch) loss += part[2 * std::size_t(ch)];
    if (!smooth) return loss * inv_n + penalty_at(t);
    for (std::size_t j = 0; j < DK; ++j) {
      const double w = W[j] + t * S[j];
      w2 += w * w;
    }
    return loss * inv_n + 0.5 * lam * w2;
  }

  /// The min-norm subgradient of s.w + g at w, |.|, for the quadratic model's gradient s at coordinate value w
  /// (its optimality violation; 0 at the coordinate's minimizer).
  double violation(double s, double w) const {
    const double sl = s + lam * (1 - eta) * w;  // with the elastic net's L2 part
    const double box = lam * eta;
    if (w > 0) return std::fabs(sl + box);
    if (w < 0) return std::fabs(sl - box);
    return std::max(0.0, std::fabs(sl) - box);
  }

  /// The proximal solver's state: X by columns (with its float64 remainders when X's are read), the model's
  /// coordinates (active, 0 / 1 per coordinate) and features, their K x K blocks A_j of H, T_i = p_i.u_i, the
  /// feature order and the inner tolerance.
  struct Proximal {
    CsrMatrix Xt;
    const float* lot;
    std::vector<char> active;
    std::vector<std::size_t> features;
    std::vector<double> A, T;
    std::vector<double> Sa, Ua, acc;  // the extrapolated S, X S and its active entries (extrapolate())
    std::mt19937_64 rng;
    double inner_eps = 0.1;
    Proximal(const CsrMatrix& X, const float* lo, std::size_t n, std::uint64_t seed)
        : Xt(transpose(X)), lot(lo ? Xt.values_lo.data() : nullptr), T(n), rng(seed) {}
  };

  /// The proximal Newton direction S (U = X S): block coordinate descent on the quadratic model of the loss at W
  /// plus g,
  ///   min_S G.S + 1/2 S.H S + g(W + S),
  /// one block per feature j (its K classes), over the coordinates not screened: W_jk != 0 or |G_jk| >= lambda eta
  /// (at W_jk = 0 inside the box the coordinate is optimal for the model's first order; newGLMNET's shrinking, Yuan,
  /// Ho, Lin, JMLR 13 (2012), Section 3). A feature's K x K block of H,
  ///   A_j = (1/n) sum_i c_i x_ij^2 (diag(p_i) - p_i p_i^T),
  /// is singular along (1, ..., 1) (the softmax is unchanged by a common shift of a feature's weights), so a
  /// coordinate at a time couples the classes of one feature badly; each block is solved on its own (coordinate
  /// sweeps over its K classes with A_j, K^2 operations a sweep) from the model's block gradient
  ///   b_jk = G_jk + (H S)_jk = G_jk + (1/n) sum_i c_i x_ij p_ik (u_ik - p_i.u_i),
  /// with U = X S and T_i = p_i.u_i kept as S changes: one pass over column j (Xt) for b, one for the update. Where
  /// the blocks do not fit in memory, coordinate by coordinate instead (coordinate_visit).
  /// Passes over the features in a seeded random order until the violation sum falls below inner_eps of the first
  /// pass's, at most kMaxInner passes. Returns the number of passes.
  int proximal_direction(Proximal& px) {
    const CsrMatrix& Xt = px.Xt;
    const float* lot = px.lot;
    const std::size_t KK = std::size_t(K) * std::size_t(K);
    const double box = lam * eta;
    // The blocks' coordinates (active) and features (a feature with at least one), and each feature's A_j.
    px.active.assign(DK, 0);
    px.features.clear();
    for (std::size_t j = 0; j < d; ++j) {
      bool any = false;
      for (int k = 0; k < K; ++k) {
        const std::size_t jk = j * std::size_t(K) + std::size_t(k);
        if (W[jk] != 0 || std::fabs(G[jk]) >= box) px.active[jk] = 1, any = true;
      }
      if (any) px.features.push_back(j);
    }
    // Every block stored when they fit in kBlockDoubles. Where they do not (many classes), the features are visited
    // coordinate by coordinate (coordinate_visit: 2 K nnz_j operations a visit, where recomputing a block at each
    // visit cost K^2 nnz_j: 1000 classes, 200 dense features, 2000 samples, the first iteration took 384 s, the whole
    // fit 9 iterations in 69 s now). Blocks pay wherever they are stored: with 50 classes (make_classification
    // 10,000 x 100) the coordinate visits took 6x the time per iteration (against the blocks built one sample at a
    // time, before the grouping below), their passes coupling a feature's classes through the common shift as badly
    // as described above. The memory stays d x K plus n x K whatever K.
    const bool stored = double(px.features.size()) * double(KK) <= kBlockDoubles;
    const bool by_coordinate = o.multinomial_blocks ? !*o.multinomial_blocks : !stored;
    // A_j's upper triangle, four samples at a time (one load and store of A per four rank-one terms: the update of
    // A, not the arithmetic, bounds this loop: 50 classes, dense 10,000 x 100, 1 thread, 3 iterations 3.0-3.4 s ->
    // 1.4 s; eight at a time 1.5-1.6 s), then mirrored.
    // Ctrl-C while the blocks are built (with many classes a block takes seconds): the solver's thread polls
    // should_stop (asked_to_stop) every 64 groups of samples, every thread reads the flag it sets.
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> stop{false};
    auto stopping = [&] {
      if (std::this_thread::get_id() == caller && asked_to_stop()) stop.store(true, std::memory_order_relaxed);
      return stop.load(std::memory_order_relaxed);
    };
    auto block = [&](std::size_t j, double* A) {
      std::fill(A, A + KK, 0.0);
      constexpr int G4 = 4;
      const double* p[G4];
      double w[G4];
      const offset_t q1 = Xt.offsets[j + 1];
      for (offset_t q = Xt.offsets[j]; q < q1; q += G4) {
        if (((q - Xt.offsets[j]) & (64 * G4 - 1)) == 0 && stopping()) return;
        const int g = int(std::min<offset_t>(G4, q1 - q));
        for (int t = 0; t < G4; ++t) {  // a short group is padded with weight 0
          const offset_t qt = q + std::min(t, g - 1);
          const std::size_t i = std::size_t(Xt.indices[qt]);
          const double x = entry(Xt.values.data(), lot, qt);
          w[t] = t < g ? c[i] * x * x : 0.0;
          p[t] = Pr.data() + i * std::size_t(K);
        }
        for (int k = 0; k < K; ++k) {
          const double a0 = w[0] * p[0][k], a1 = w[1] * p[1][k], a2 = w[2] * p[2][k], a3 = w[3] * p[3][k];
          double* row = A + std::size_t(k) * K;
          row[k] += (a0 + a1) + (a2 + a3);
          for (int l = k; l < K; ++l) row[l] -= (a0 * p[0][l] + a1 * p[1][l]) + (a2 * p[2][l] + a3 * p[3][l]);
        }
      }
      for (int k = 0; k < K; ++k) {
        A[std::size_t(k) * K + k] *= inv_n;
        for (int l = k + 1; l < K; ++l) A[std::size_t(l) * K + k] = A[std::size_t(k) * K + l] *= inv_n;
      }
    };
    px.A.assign(by_coordinate ? 0 : stored ? px.features.size() * KK : KK, 0.0);
    if (stored && !by_coordinate) {  // one task a feature (64 to a task left 60 features to one thread)
      parallel_chunks(std::int64_t(px.features.size()),
                      [&](std::int64_t f) { block(px.features[std::size_t(f)], px.A.data() + std::size_t(f) * KK); });
      if (stop_asked) return 0;
    }
    std::fill(S.begin(), S.end(), 0.0);
    std::fill(U.begin(), U.end(), 0.0);
    std::fill(px.T.begin(), px.T.end(), 0.0);
    std::vector<double> bj(static_cast<std::size_t>(K)), sj(bj), As(bj);
    std::vector<std::size_t> order(px.features.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    double first = 0;
    int pass = 0;
    // One seeded random order for every pass of this direction, so that the passes are one fixed map whose iterates
    // Anderson extrapolation can combine (anderson.hpp).
    std::shuffle(order.begin(), order.end(), px.rng);
    const std::size_t na = px.features.size() * std::size_t(K);
    AndersonHistory hist(na);
    auto push = [&] {
      hist.push([&](double* x) {
        for (std::size_t f = 0; f < px.features.size(); ++f)
          std::copy_n(S.data() + px.features[f] * std::size_t(K), K, x + f * std::size_t(K));
      });
    };
    push();
    while (pass < kMaxInner) {
      ++pass;
      double viol = 0;
      for (const std::size_t f : order) {
        if (asked_to_stop()) return pass;
        const std::size_t j = px.features[f], j0 = j * std::size_t(K);
        if (by_coordinate) {
          viol += coordinate_visit(px, j);
          continue;
        }
        if (!stored) block(j, px.A.data());
        if (stop_asked) return pass;
        const double* A = px.A.data() + (stored ? f * KK : 0);
        std::fill(bj.begin(), bj.end(), 0.0);
        for (offset_t q = Xt.offsets[j]; q < Xt.offsets[j + 1]; ++q) {
          const std::size_t i = std::size_t(Xt.indices[q]);
          const double cx = c[i] * entry(Xt.values.data(), lot, q);
          const double* p = Pr.data() + i * std::size_t(K);
          const double* u = U.data() + i * std::size_t(K);
          for (int k = 0; k < K; ++k) bj[std::size_t(k)] += cx * p[k] * (u[k] - px.T[i]);
        }
        for (int k = 0; k < K; ++k) {
          bj[std::size_t(k)] = G[j0 + std::size_t(k)] + bj[std::size_t(k)] * inv_n;
          if (px.active[j0 + std::size_t(k)])
            viol += violation(bj[std::size_t(k)], W[j0 + std::size_t(k)] + S[j0 + std::size_t(k)]);
        }
        // the block: min_s (b + A s / 2).s + sum_k g(W_jk + S_jk + s_k), at most kBlockSweeps coordinate sweeps,
        // until no coordinate moves by more than 1e-12 of the block's largest weight
        std::fill(sj.begin(), sj.end(), 0.0);
        std::fill(As.begin(), As.end(), 0.0);
        bool moved = false;
        for (int sweep = 0; sweep < kBlockSweeps; ++sweep) {
          double change = 0, scale = 0;
          for (int k = 0; k < K; ++k) {
            const std::size_t jk = j0 + std::size_t(k);
            if (!px.active[jk]) continue;
            const double w = W[jk] + S[jk] + sj[std::size_t(k)];
            const double next = math::penalty_step(int(pen), w, bj[std::size_t(k)] + As[std::size_t(k)],
                                                   A[std::size_t(k) * K + k], lam, eta,
                                                   std::numeric_limits<double>::infinity());
            const double delta = next - w;
            scale = std::max(scale, std::fabs(next));
            if (delta == 0 || !std::isfinite(delta)) continue;
            sj[std::size_t(k)] += delta;
            for (int l = 0; l < K; ++l) As[std::size_t(l)] += delta * A[std::size_t(l) * K + k];
            change = std::max(change, std::fabs(delta));
            moved = true;
          }
          if (change <= 1e-12 * scale) break;
        }
        if (!moved) continue;
        for (int k = 0; k < K; ++k) S[j0 + std::size_t(k)] += sj[std::size_t(k)];
        for (offset_t q = Xt.offsets[j]; q < Xt.offsets[j + 1]; ++q) {
          const std::size_t i = std::size_t(Xt.indices[q]);
          const double x = entry(Xt.values.data(), lot, q);
          const double* p = Pr.data() + i * std::size_t(K);
          double* u = U.data() + i * std::size_t(K);
          double pt = 0;
          for (int k = 0; k < K; ++k) {
            u[k] += x * sj[std::size_t(k)];
            pt += p[k] * sj[std::size_t(k)];
          }
          px.T[i] += x * pt;
        }
      }
      if (pass == 1) first = viol;
      if (viol <= px.inner_eps * first) break;
      push();
      if (hist.full() && (hist.filled - 1) % kAndersonDepth == 0 && extrapolate(px, hist)) {
        hist.reset();
        push();
      }
    }
    return pass;
  }

  /// One visit of feature j coordinate by coordinate (proximal_direction's by_coordinate): for each active class k,
  /// the model's gradient b_jk = G_jk + (1/n) sum_i c_i x_ij p_ik (u_ik - T_i) and curvature
  /// h_jk = (1/n) sum_i c_i x_ij^2 p_ik (1 - p_ik) (the diagonal of A_j) from one pass over column j, the penalty's
  /// step, and U, T updated with a second pass: 2 K nnz_j operations a visit, where the block costs K^2 nnz_j to
  /// build. Returns the violations' sum at the coordinates' values before their steps.
  double coordinate_visit(Proximal& px, std::size_t j) {
    const CsrMatrix& Xt = px.Xt;
    const float* lot = px.lot;
    const std::size_t j0 = j * std::size_t(K);
    const offset_t q0 = Xt.offsets[j], q1 = Xt.offsets[j + 1];
    double viol = 0;
    for (int k = 0; k < K; ++k) {
      const std::size_t jk = j0 + std::size_t(k);
      if (!px.active[jk]) continue;
      double b = 0, h = 0;
      for (offset_t q = q0; q < q1; ++q) {
        const std::size_t i = std::size_t(Xt.indices[q]);
        const double x = entry(Xt.values.data(), lot, q), cx = c[i] * x;
        const double p = Pr[i * std::size_t(K) + std::size_t(k)];
        b += cx * p * (U[i * std::size_t(K) + std::size_t(k)] - px.T[i]);
        h += cx * x * p * (1 - p);
      }
      b = G[jk] + b * inv_n;
      h *= inv_n;
      const double w = W[jk] + S[jk];
      viol += violation(b, w);
      const double next =
          math::penalty_step(int(pen), w, b, h, lam, eta, std::numeric_limits<double>::infinity());
      const double delta = next - w;
      if (delta == 0 || !std::isfinite(delta)) continue;
      S[jk] += delta;
      for (offset_t q = q0; q < q1; ++q) {
        const std::size_t i = std::size_t(Xt.indices[q]);
        const double x = entry(Xt.values.data(), lot, q);
        U[i * std::size_t(K) + std::size_t(k)] += x * delta;
        px.T[i] += x * Pr[i * std::size_t(K) + std::size_t(k)] * delta;
      }
    }
    return viol;
  }

  /// The quadratic model's value at S (U = X S) over the direction's features:
  ///   G.S + 1/2 S.H S + g(W + S) - g(W),  S.H S = (1/n) sum_i c_i (sum_k p_ik u_ik^2 - (p_i.u_i)^2).
  double model_value(const Proximal& px, const std::vector<double>& Sv, const std::vector<double>& Uv) {
    for_chunks([&](std::int64_t ch, std::int64_t lo_r, std::int64_t hi_r) {
      double quad = 0;
      for (std::int64_t i = lo_r; i < hi_r; ++i) {
        const double* p = Pr.data() + std::size_t(i) * K;
        const double* u = Uv.data() + std::size_t(i) * K;
        double pu = 0, puu = 0;
        for (int k = 0; k < K; ++k) pu += p[k] * u[k], puu += p[k] * u[k] * u[k];
        quad += c[std::size_t(i)] * (puu - pu * pu);
      }
      part[2 * std::size_t(ch)] = quad;
    });
    double quad = 0, lin = 0;
    for (std::int64_t ch = 0; ch < n_chunks; ++ch) quad += part[2 * std::size_t(ch)];
    for (std::size_t j : px.features)
      for (std::size_t jk = j * std::size_t(K); jk < (j + 1) * std::size_t(K); ++jk)
        if (Sv[jk] != 0)
          lin += G[jk] * Sv[jk] + math::penalty_value(int(pen), W[jk] + Sv[jk], lam, eta) -
                 math::penalty_value(int(pen), W[jk], lam, eta);
    return lin + 0.5 * inv_n * quad;
  }

  /// Anderson extrapolation of the last kAndersonDepth + 1 passes' S (anderson.hpp; skglm's acceleration of
  /// coordinate descent, Bertrand et al., NeurIPS 2022, Algorithm 2): taken, with U = X S and T recomputed, when the
  /// quadratic model is lower there. On correlated features (a feature that is a combination of others: the model
  /// is flat along that combination, and the L1 term alone moves the weights along it, a little each pass) the
  /// passes drift along one direction that the extrapolation follows at once: on scikit-learn's
  /// make_classification(20000, 100, n_informative=30, n_classes=5, random_state=0), L1, C 0.5, tol 1e-6, 305
  /// proximal Newton iterations without it, 80 with it, 29 with it and the expanding step of run().
  bool extrapolate(Proximal& px, const AndersonHistory& hist) {
    const std::size_t na = px.features.size() * std::size_t(K);
    double Gm[kAndersonDepth][kAndersonDepth], cf[kAndersonDepth];
    hist.gram(Gm, [&](const double* a0, const double* a1, const double* b0, const double* b1) {
      double g = 0;
      for (std::size_t t = 0; t < na; ++t) g += (a1[t] - a0[t]) * (b1[t] - b0[t]);
      return g;
    });
    if (!anderson_coefficients(Gm, cf)) return false;
    px.Sa.assign(DK, 0.0);
    px.acc.resize(na);
    hist.combine(cf, px.acc.data(), na);
    for (std::size_t f = 0; f < px.features.size(); ++f)
      std::copy_n(px.acc.data() + f * std::size_t(K), K, px.Sa.data() + px.features[f] * std::size_t(K));
    px.Ua.resize(n * std::size_t(K));
    multiply(px.Sa, px.Ua);
    if (!(model_value(px, px.Sa, px.Ua) < model_value(px, S, U))) return false;
    S.swap(px.Sa);
    U.swap(px.Ua);
    for (std::size_t i = 0; i < n; ++i) {
      double pu = 0;
      for (int k = 0; k < K; ++k) pu += Pr[i * K + k] * U[i * K + k];
      px.T[i] = pu;
    }
    return true;
  }

  /// The direction S (U = X S) at W and the model's predicted decrease along it (< 0 unless W is optimal):
  /// Newton-CG's G.S for the smooth penalty; proximal Newton's G.S + g(W + S) - g(W) otherwise, summed over the
  /// moved coordinates only (near the optimum it is far below the rounding of g(W) itself). The proximal state
  /// (Xt and the rest) is built on first use.
  double newton_direction() {
    if (smooth) {
      hessian_diagonal();
      double gnorm = 0;
      for (double g : G) gnorm += g * g;
      direction(std::sqrt(gnorm));
      double gs = 0;
      for (std::size_t t = 0; t < DK; ++t) gs += G[t] * S[t];
      return gs;
    }
    if (!prox) prox = std::make_unique<Proximal>(X, lo, n, o.seed);
    // A model solved in one pass is solved too loosely to give Newton's rate: tighten (LIBLINEAR's newGLMNET).
    if (proximal_direction(*prox) == 1) prox->inner_eps *= 0.25;
    double delta = 0;
    for (std::size_t jk = 0; jk < DK; ++jk)
      if (S[jk] != 0)
        delta += G[jk] * S[jk] + math::penalty_value(int(pen), W[jk] + S[jk], lam, eta) -
                 math::penalty_value(int(pen), W[jk], lam, eta);
    return delta;
  }

  std::unique_ptr<Proximal> prox;

  /// SolverOptions::should_stop (Ctrl-C), polled inside a direction's inner passes too: with many classes one
  /// iteration takes long (1000 classes, 2000 x 200 dense: the interrupt acted after 376 s, at the end of the first
  /// iteration, when polled once per iteration). Once it answers yes, the direction is abandoned and run() stops at
  /// the last certified W. From the solver's thread only (the Python binding's takes the GIL).
  bool stop_asked = false;
  bool asked_to_stop() {
    if (!stop_asked && o.should_stop && o.should_stop()) stop_asked = true;
    return stop_asked;
  }

  SolveResult run() {
    SolveResult res;
    EpochDriver driver(o, res, Formulation::primal);
    if (lo) driver.float64_values();
    if (!smooth) driver.own_stall_rules();  // (EpochDriver::own_stall_rules: the gap plateaus while W converges)
    if (o.initial_alpha) {
      if (o.initial_alpha->size() != DK)
        throw InvalidArgument(fmt::format("warm start: {} values for {} coordinates", o.initial_alpha->size(), DK));
      for (std::size_t t = 0; t < DK; ++t) W[t] = std::isfinite((*o.initial_alpha)[t]) ? (*o.initial_alpha)[t] : 0.0;
    }
    Certificate cert = state();
    int epoch = 0, stalled = 0;
    bool interrupted = false;
    double best_rel = relative_gap(cert);
    driver.check_finite(cert, 0, W, Z);
    while (relative_gap(cert) > o.tol && driver.budget_left(epoch)) {
      ++epoch;
      const double decrease = std::min(newton_direction(), 0.0);
      if (stop_asked) {  // (asked_to_stop: the direction is unfinished; W and cert are the last iteration's)
        --epoch;
        driver.mark_interrupted();
        interrupted = true;
        break;
      }
      const bool moved = std::any_of(S.begin(), S.end(), [](double v) { return v != 0; });
      const double P0 = cert.primal;
      double t = 1, P_taken = P0;
      bool accepted = false, unresolved = false;
      for (int b = 0; moved && b < kMaxBacktrack; ++b, t *= 0.5) {
        const double P1 = P_taken = objective_at(t);
        if (std::fabs(P1 - P0) <= kFlat * std::fabs(P0) && t == 1) {  // P cannot resolve the step: take it
          accepted = unresolved = true;
          break;
        }
        if (P1 - P0 <= kArmijo * t * decrease) {
          accepted = true;
          break;
        }
      }
      if (!accepted) t = 0;
      // Proximal Newton: a full step the objective takes is followed further while it keeps decreasing (t = 2, 4,
      // ..., kMaxExpand; each trial one pass over Z + t U, no product with X). Where the model is flat along a
      // combination of correlated features its step is short however well it is solved (with the same
      // make_classification set as in extrapolate(): 93 iterations with this alone, 29 with the extrapolation).
      if (accepted && !unresolved && t == 1 && !smooth) {
        double P_best = P_taken;
        for (double tt = 2; tt <= kMaxExpand; tt *= 2) {
          const double Pt = objective_at(tt);
          if (!(Pt < P_best)) break;
          P_best = Pt, t = tt;
        }
      }
      for (std::size_t j = 0; j < DK; ++j) W[j] += t * S[j];
      cert = state();
      const double rel = relative_gap(cert);
      if (rel < best_rel) {
        best_rel = rel;
        stalled = 0;
      } else if (unresolved || !accepted) {
        ++stalled;
      }
      const EpochDriver::Stop stop = driver.record(epoch, cert, W, Z);
      interrupted = stop == EpochDriver::Stop::interrupted;
      if (stop != EpochDriver::Stop::none) break;
      if (stalled >= kStall) {
        driver.mark_stalled(epoch, fmt::format("{} {} steps whose decrease of the objective double precision could "
                                               "not resolve, or no step at all, without a better gap",
                                               kStall, smooth ? "Newton-CG" : "proximal Newton"));
        break;
      }
    }
    res.certificate = cert;
    res.converged = certified(cert, o.tol);
    res.interrupted = interrupted && !res.converged;
    res.stalled = driver.stall_report(cert);
    res.epochs = epoch;
    res.seconds = driver.seconds();
    res.alpha = W;
    res.w = W;
    return res;
  }
};

}  // namespace

SolveResult solve_multinomial(const CsrMatrix& X, const std::vector<int>& y, int K, const std::vector<double>& c,
                              double lambda, Penalty penalty, double eta, const SolverOptions& o) {
  if (K < 2) throw InvalidArgument(fmt::format("multinomial: needs at least 2 classes, got {}", K));
  if (y.size() != std::size_t(X.n_rows) || c.size() != std::size_t(X.n_rows))
    throw InvalidArgument("multinomial: labels or weights do not match the number of samples");
  for (int yi : y)
    if (yi < 0 || yi >= K) throw InvalidArgument(fmt::format("multinomial: class index {} outside 0..{}", yi, K - 1));
  if (!(lambda > 0)) throw InvalidArgument(fmt::format("multinomial: lambda must be positive, got {}", lambda));
  if (penalty == Penalty::elastic_net && !(eta >= 0 && eta <= 1))
    throw InvalidArgument(fmt::format("multinomial: the l1 ratio must be in [0, 1], got {}", eta));
  if (o.n_threads < 0) throw InvalidArgument(fmt::format("--threads: must be at least 0, got {}", o.n_threads));
  return in_solver_arena(o.n_threads, [&](int) { return Multinomial(X, y, K, c, lambda, penalty, eta, o).run(); });
}

}  // namespace hetglm
