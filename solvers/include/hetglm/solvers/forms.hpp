// SPDX-License-Identifier: Apache-2.0
// Formulations: the coordinate-level view every solver runs on (docs/algorithms.md, "The primal-dual form").
//
//   min_alpha  f(A alpha) + sum_i g_i(alpha_i),   shared vector v = A alpha
//
// DualForm (SDCA; Shalev-Shwartz & Zhang, JMLR 14, 2013) -- coordinates are samples:
//   A's columns are the rows x_i of X (stored as CSR rows), v = sum_i alpha_i x_i in R^d, w = v/(lambda n),
//   r_i = <x_i, v> (the margin is r_i / (lambda n)), curvature q_i = ||x_i||^2/(lambda n),
//   P(w) = (1/n) sum_i phi_i(x_i.w) + lambda/2 ||w||^2,  D(alpha) = -(1/n) sum_i phi_i^*(-alpha_i) - lambda/2 ||w||^2.
// PrimalForm (coordinate descent over features; Friedman, Hastie, Tibshirani, J. Stat. Softw. 33, 2010) --
//   coordinates are features: A = X, alpha = w, v = X w in R^n, r_j = sum_k x_kj phi_k'(v_k) (s_j = r_j / n),
//   curvature H_j = L (1/n) sum_k c_k x_kj^2 (L = the loss's curvature bound, exact for the squared loss),
//   P(w) = f(v) + sum_j g(w_j),  D = -f^*(grad f(v)) - sum_j g^*(-s_j),  f^*(grad f(v)) = (1/n) sum_k phi_k^*(phi_k'(v_k)),
//   the conjugate evaluated by the Fenchel-Young equality phi^*(phi'(z)) = z phi'(z) - phi(z) (exact at u = grad f(v)).
// The coordinate step and gap of both forms are glm_math.h's coordinate kernel (hetglm_coordinate_step,
// hetglm_coordinate_gap): the same function every device runs. PrimalForm::coordinate_step adds, for the
// non-quadratic losses, the exact coordinate curvature and an Armijo line search (Tseng & Yun, Math. Program. 117,
// 2009; LIBLINEAR newGLMNET's inner CD, Yuan, Ho, Lin, JMLR 13, 2012).
//
// One certificate: a form gives per-term sums (add_coordinate_terms over coordinates, add_shared_terms over the
// entries of v) and finish() turns them into (P, D, P - D); the sequential certificate() below, the parallel
// reduction (parallel_cpu.hpp), the Newton solver and the MPI allreduce (distributed.hpp) only add the sums.
// P - D equals the sum of the per-coordinate gaps when v = A alpha (Fenchel-Young equality for f at u = grad f(v);
// Duenner et al., ICML 2016). Certificates are accumulated in double.
#pragma once
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "hetglm/losses.hpp"
#include "hetglm/matrix.hpp"

namespace hetglm {

enum class Formulation { dual = HETGLM_FORM_DUAL, primal = HETGLM_FORM_PRIMAL };

/// A certificate for (alpha, v): objective values and the duality gap, all in the average-loss scaling.
struct Certificate {
  double primal = 0;    ///< P(w)
  double dual = 0;      ///< D(alpha)
  double gap = 0;       ///< P - D
  double gap_sum = 0;   ///< sum of per-coordinate gaps (equals gap up to rounding when v = A alpha); for the
                        ///< rescaled L1 dual point it includes the samples' Fenchel-Young term (PrimalForm::finish)
  double dual_scale = 1;  ///< primal with an L1 part: the dual point is dual_scale * grad f(v) (PrimalForm::finish)
};

/// (P - D) / |P|, the quantity compared with the tolerance (P - D itself when P = 0).
inline double relative_gap(const Certificate& c) {
  const double scale = c.primal < 0 ? -c.primal : c.primal;
  return scale > 0 ? c.gap / scale : c.gap;
}

/// The certificate proves the tolerance: |P - D| <= tol |P|. A gap below -tol |P| (the dual above the primal by more
/// than the tolerance) means the objective values lost that much precision (extreme values or sample weights), so it
/// certifies nothing; rounding-level negative gaps pass.
inline bool certified(const Certificate& c, double tol) {
  const double r = relative_gap(c);
  return r <= tol && r >= -tol;
}

/// Partial sums of a certificate, over coordinates or over entries of the shared vector. What each field holds is
/// the form's business (DualForm, PrimalForm below); sums of partial sums are partial sums.
/// Every field is a sum except smax, a maximum: the combination of partial terms is still operator+.
struct CertificateTerms {
  double value = 0;  ///< primal-objective part
  double conj = 0;   ///< conjugate (dual-objective) part
  double gap = 0;    ///< per-coordinate gaps
  double dot = 0;    ///< primal features: sum_j w_j s_j (= <grad f(v), v> when v = X w)
  double smax = 0;   ///< primal features: max_j |s_j| (the dual point's constraint violation; a max-reduction)
  /// primal samples with an L1 penalty: sums of the coefficients of n f^*(t grad f(v)) <= k0 + k1 t + k2 t^2 +
  /// k3 t log t (glm_math.h hetglm_scaled_conjugate), for the rescaled dual point
  double scaled[4] = {0, 0, 0, 0};
  CertificateTerms operator+(const CertificateTerms& o) const {
    return {value + o.value, conj + o.conj, gap + o.gap, dot + o.dot, smax > o.smax ? smax : o.smax,
            {scaled[0] + o.scaled[0], scaled[1] + o.scaled[1], scaled[2] + o.scaled[2], scaled[3] + o.scaled[3]}};
  }
  CertificateTerms& operator+=(const CertificateTerms& o) { return *this = *this + o; }
  /// The fields as numbers for a sum-reduction (MPI); smax is reduced apart, with a maximum.
  static constexpr int kSums = 8;
  void sums(double* out) const {
    const double s[kSums] = {value, conj, gap, dot, scaled[0], scaled[1], scaled[2], scaled[3]};
    for (int i = 0; i < kSums; ++i) out[i] = s[i];
  }
  static CertificateTerms from_sums(const double* in, double max_abs) {
    return {in[0], in[1], in[2], in[3], max_abs, {in[4], in[5], in[6], in[7]}};
  }
};

/// Data shared by every class of a one-vs-rest problem.
struct ProblemData {
  const CsrMatrix* X = nullptr;   ///< samples as rows (bias column already appended)
  const CsrMatrix* Xt = nullptr;  ///< X transposed (features as rows); needed by the primal form only
  std::vector<double> row_sq_norm;  ///< ||x_i||^2 (dual)
  /// (1/n) sum_k c_k x_kj^2 per feature (primal_column_curvature) for the weights the form is built with, or null:
  /// the form computes it (a pass over X^T). A regularization path computes it once (PathCache).
  const std::vector<double>* column_curvature = nullptr;
};

/// (1/n) sum_k c_k x_kj^2 for every row j of Xt (features as rows), n = Xt.n_cols unless n_total > 0; each on its
/// own (the same values for every thread count), features in parallel for large data.
std::vector<double> primal_column_curvature(const CsrMatrix& Xt, const double* c, index_t n_total = 0);

/// The tolerance below which the solvers read float64 input's values_lo (matrix.hpp): a tighter `tol` trains and
/// certifies the float64 problem; at this tolerance or looser they train on the float32 values, whose rounding moves
/// the objective by about 1e-9 relative (measured 2.5e-10 to 8.3e-10 on Gaussian data, docs/formulation.md "float64
/// data"), a thousandth of the tolerance, where the float64 values cost 1.2-2.3x the time of a Newton solve and 1.5x
/// the bytes (1.1-1.2x the time) of a coordinate-descent epoch (bench/results/float64.md). Read by the Newton solver
/// (newton.cpp), the multinomial solver (multinomial.cpp), the working-set solver (working_set.cpp) and the
/// coordinate-descent forms (read_float64_values).
inline constexpr double kFloat64Tol = 1e-6;

/// A's float64 remainders when a fit to `tol` reads them (A carries values_lo and tol < kFloat64Tol), else null:
/// the one rule behind every solver's `lo` (read_float64_values, newton.cpp, multinomial.cpp, working_set.cpp).
inline const float* values_lo_for(const CsrMatrix& A, double tol) {
  return A.has_lo() && tol < kFloat64Tol ? A.values_lo.data() : nullptr;
}

/// Stored entry k of A in double: values[k], plus values_lo[k] when lo (A.values_lo.data(): float64 data read as
/// such, a form's `lo`) is given.
inline double entry(const float* val, const float* lo, offset_t k) {
  return lo ? double(val[k]) + double(lo[k]) : double(val[k]);
}

namespace detail {
/// A row that stores every one of A's columns (its indices are then 0 .. n_cols - 1: sorted and unique, matrix.hpp)
/// and at least kDenseRowMin of them: row_dot and row_axpy read its values as a contiguous array with the
/// vectorized dense kernels (forms.cpp: dense::dot, dense::axpy of solvers/src/dense_kernels.hpp, the same bits on
/// every x86-64 instruction set) instead of the index loop, whose one chain of dependent additions and per-entry
/// index loads held an SDCA epoch on dense 50,000 x 500 data at 2.5-2.8x the time of the vector code
/// (bench/results/dense_dual.md).
inline constexpr index_t kDenseRowMin = 32;
inline bool full_row(const CsrMatrix& A, offset_t b, offset_t e) {
  return e - b == offset_t(A.n_cols) && A.n_cols >= kDenseRowMin;
}
/// sum_k x_k v_k and v_k += scale x_k over k < n (forms.cpp).
double dense_row_dot(const float* x, const double* v, index_t n);
void dense_row_axpy(const float* x, double scale, double* v, index_t n);
/// row_dot and row_axpy on the float64 values (out of line: the float32 loops stay as small as before); a full row
/// as two dense products, the float32 values' and the remainders'.
[[gnu::noinline]] inline double row_dot_lo(const CsrMatrix& A, index_t i, const double* v, const float* lo) {
  const offset_t b = A.offsets[i], e = A.offsets[i + 1];
  if (full_row(A, b, e)) return dense_row_dot(A.values.data() + b, v, A.n_cols) + dense_row_dot(lo + b, v, A.n_cols);
  double s = 0;
  const index_t* idx = A.indices.data();
  const float* val = A.values.data();
  for (offset_t k = b; k < e; ++k) s += entry(val, lo, k) * v[idx[k]];
  return s;
}
[[gnu::noinline]] inline void row_axpy_lo(const CsrMatrix& A, index_t i, double scale, double* v, const float* lo) {
  const offset_t b = A.offsets[i], e = A.offsets[i + 1];
  if (full_row(A, b, e)) {
    dense_row_axpy(A.values.data() + b, scale, v, A.n_cols);
    return dense_row_axpy(lo + b, scale, v, A.n_cols);
  }
  const index_t* idx = A.indices.data();
  const float* val = A.values.data();
  for (offset_t k = b; k < e; ++k) v[idx[k]] += scale * entry(val, lo, k);
}
}  // namespace detail

/// <row i of A, v> in double; with lo (A.values_lo.data()) on the float64 values.
inline double row_dot(const CsrMatrix& A, index_t i, const double* v, const float* lo = nullptr) {
  if (lo) [[unlikely]]
    return detail::row_dot_lo(A, i, v, lo);
  const offset_t b = A.offsets[i], e = A.offsets[i + 1];
  const float* val = A.values.data();
  if (detail::full_row(A, b, e)) return detail::dense_row_dot(val + b, v, A.n_cols);
  double s = 0;
  const index_t* idx = A.indices.data();
  for (offset_t k = b; k < e; ++k) s += double(val[k]) * v[idx[k]];
  return s;
}

/// v += scale * (row i of A); with lo (A.values_lo.data()) on the float64 values.
inline void row_axpy(const CsrMatrix& A, index_t i, double scale, double* v, const float* lo = nullptr) {
  if (lo) [[unlikely]]
    return detail::row_axpy_lo(A, i, scale, v, lo);
  const offset_t b = A.offsets[i], e = A.offsets[i + 1];
  const float* val = A.values.data();
  if (detail::full_row(A, b, e)) return detail::dense_row_axpy(val + b, scale, v, A.n_cols);
  const index_t* idx = A.indices.data();
  for (offset_t k = b; k < e; ++k) v[idx[k]] += scale * double(val[k]);
}

/// Software prefetch of row i of A into the cache (x86: prefetcht2): its values and its indices, up to 1 KiB of
/// each (a full row, whose indices row_dot does not read: its values, up to 4 KiB), and the float64 remainders `lo`
/// when given. For the loops that visit rows in a random order (the sequential solver, CoCoA+'s local loop, DuHL's
/// CPU unit), which call it kPrefetchRows rows ahead: on a 64 MB sparse set the row's first lines otherwise arrive one
/// memory latency after another (a hinge SDCA epoch on 100,000 x 50,000, 80 nonzeros a row, 1 thread: 45-60 ms
/// without, 30-33 ms at 4 to 16 rows ahead; bench/results/prefetch.md). Always inlined: GCC's interprocedural
/// pure-const analysis finds a function whose only effect is __builtin_prefetch to have none, and removes its calls
/// (GCC 12 had compiled the SySCD bucket prefetch away that way).
[[gnu::always_inline]] inline void prefetch_row(const CsrMatrix& A, index_t i, const float* lo = nullptr) {
  const offset_t b = A.offsets[i], e = A.offsets[i + 1];
  const bool full = detail::full_row(A, b, e);
  const std::size_t bytes = std::min<std::size_t>(static_cast<std::size_t>(e - b) * sizeof(float), full ? 4096 : 1024);
  const char* pv = reinterpret_cast<const char*>(A.values.data() + b);
  const char* pi = reinterpret_cast<const char*>(A.indices.data() + b);
  const char* pl = lo ? reinterpret_cast<const char*>(lo + b) : nullptr;
  for (std::size_t off = 0; off < bytes; off += 64) {
    __builtin_prefetch(pv + off, 0, 1);
    if (!full) __builtin_prefetch(pi + off, 0, 1);
    if (pl) __builtin_prefetch(pl + off, 0, 1);
  }
}
/// Rows ahead at which the random-order loops prefetch (prefetch_row): 4, 8 and 16 measured the same.
inline constexpr std::size_t kPrefetchRows = 8;

template <Loss L>
struct DualForm {
  static_assert(has_dual_step(L), "this loss has no SDCA step (HETGLM_LOSS_TABLE, column DUAL)");
  using LossP = LossPolicy<L>;
  static constexpr Formulation formulation = Formulation::dual;
  const CsrMatrix* A;      // rows = coordinates = samples
  const double* y;         // labels (+-1) or targets, size n
  const double* c;         // sample weights, size n
  const double* sq_norm;   // ||x_i||^2
  double lambda, inv_n, inv_lambda_n;
  Objective obj;           // the coordinate kernel's scalars
  /// A->values_lo.data() when the fit trains on float64 values (read_float64_values), else null: then every
  /// product with a row (inner, the updates of v, v = A alpha) reads the float64 values; the curvatures stay float32.
  const float* lo = nullptr;

  /// n_total: the number of samples of the objective's 1/n when d.X holds only some of them (an MPI rank's part;
  /// 0 = d.X->n_rows).
  DualForm(const ProblemData& d, const double* labels, const double* weights, double lam, index_t n_total = 0)
      : A(d.X), y(labels), c(weights), sq_norm(d.row_sq_norm.data()), lambda(lam),
        inv_n(1.0 / (n_total > 0 ? n_total : d.X->n_rows)),
        inv_lambda_n(1.0 / (lam * (n_total > 0 ? n_total : d.X->n_rows))),
        obj(math::make_objective(HETGLM_FORM_DUAL, LossP::kid, HETGLM_PENALTY_L2, lam, 0.0, 0.0, inv_n,
                                 inv_lambda_n)) {}

  index_t n_coords() const { return A->n_rows; }
  index_t dim() const { return A->n_cols; }

  /// r_i = <x_i, v> (the margin is r_i / (lambda n)).
  double inner(index_t i, const double* v) const { return row_dot(*A, i, v, lo); }
  /// q_i = ||x_i||^2 / (lambda n).
  double curvature(index_t i) const { return sq_norm[i] * inv_lambda_n; }
  /// The kernel's objective with the ids as compile-time constants (the same values as obj's), so that the kernel's
  /// dispatch folds away after inlining on the host.
  Objective kernel_objective() const {
    Objective o = obj;
    o.formulation = HETGLM_FORM_DUAL;
    o.loss = LossP::kid;
    return o;
  }
  /// The coordinate kernel: the new alpha_i from r_i (sigma' = CoCoA+ scaling, 1 sequentially).
  double step(index_t i, double a, double r, double sigma) const {
    return math::coordinate_step(kernel_objective(), a, r, curvature(i), y[i], c[i], sigma);
  }
  /// Coordinate i's share of the gap, (1/n)(phi_i(u_i) + phi_i^*(-a) + a u_i).
  double gap(index_t i, double a, double r) const { return math::coordinate_gap(kernel_objective(), a, r, y[i], c[i]); }
  /// The host solvers' step of coordinate i against the shared vector v (the kernel, exact for SDCA).
  double coordinate_step(index_t i, double a, const double* v, double sigma) const { return step(i, a, inner(i, v), sigma); }
  double coordinate_gap(index_t i, double a, const double* v) const { return gap(i, a, inner(i, v)); }

  /// Box duals (losses.hpp is_box_dual): the margin rule (solvers/src/shrinking.hpp MarginRule) and the box duals'
  /// merge (aggregation.hpp MergePlan) serve them.
  static constexpr bool kBoxDual = is_box_dual(L);
  /// Box duals: the dual objective's derivative in b = y alpha_i at r_i = <x_i, v> (LIBLINEAR's G, scaled by 1/C:
  /// glm_math.h hetglm_hinge_dual_gradient / hetglm_squared_hinge_dual_gradient). b moves against G.
  double dual_gradient(index_t i, double a, double r) const {
    if constexpr (L == Loss::hinge) return hetglm_hinge_dual_gradient_d(y[i], a, r * inv_lambda_n, c[i]);
    else return hetglm_squared_hinge_dual_gradient_d(y[i], a, r * inv_lambda_n, c[i]);
  }
  /// Box duals: the point of sample i's dual domain nearest to a: b = y a clipped to [0, c_i] (hinge) or [0, inf)
  /// (squared hinge), the domains of glm_math.h's conjugates (CoCoA+'s projected steps, aggregation.hpp).
  double project_box(index_t i, double a) const {
    const double b = std::max(y[i] * a, 0.0);
    if constexpr (L == Loss::hinge) return y[i] * std::min(b, c[i]);
    return y[i] * b;
  }
  /// Box duals: where b = y alpha_i stands: -1 at its lower end 0, +1 at its upper end (hinge: c_i), 0 inside.
  int dual_bound(index_t i, double a) const {
    const double b = y[i] * a;
    if (b <= 0) return -1;
    if constexpr (L == Loss::hinge) return b >= c[i] ? 1 : 0;
    return 0;
  }
  /// a, or 0 when a is outside the dual domain of sample i (a warm start from another problem).
  double feasible(index_t i, double a) const { return std::isfinite(LossP::conjugate(y[i], a, c[i])) ? a : 0.0; }

  /// Coordinate i's certificate terms: phi_i(u_i) to value, phi_i^*(-alpha_i) to conj (plus 0 * alpha_i, so that a
  /// non-finite alpha_i reaches the dual even where the conjugate clamps it), the unscaled gap term to gap.
  /// The gap term is glm_math.h's hetglm_dual_gap (value + conjugate + a z) from the same two evaluations. Returns
  /// the coordinate's share of P - D (the gap term times 1/n).
  double add_coordinate_terms(index_t i, double a, double r, CertificateTerms& t) const {
    const double z = r * inv_lambda_n;
    const double value = LossP::value(y[i], z, c[i]), conj = LossP::conjugate(y[i], a, c[i]);
    const double g = value + conj + a * z;
    t.value += value;
    t.conj += conj + 0.0 * a;
    t.gap += g;
    return g * inv_n;
  }
  /// Entry k of v: v_k^2 to value (lambda/2 ||w||^2 follows in finish).
  void add_shared_terms(index_t /*k*/, double vk, CertificateTerms& t) const { t.value += vk * vk; }
  Certificate finish(const CertificateTerms& coords, const CertificateTerms& shared) const {
    const double reg = 0.5 * lambda * shared.value * inv_lambda_n * inv_lambda_n;  // lambda/2 ||w||^2
    Certificate cert;
    cert.primal = coords.value * inv_n + reg;
    cert.dual = -coords.conj * inv_n - reg;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = coords.gap * inv_n;
    return cert;
  }

  /// Primal weights w = v / (lambda n).
  std::vector<double> weights(std::span<const double> /*alpha*/, std::span<const double> v) const {
    std::vector<double> w(v.begin(), v.end());
    for (double& x : w) x *= inv_lambda_n;
    return w;
  }
};

/// What one sample contributes to the primal certificate: phi_k(v_k), phi_k'(v_k) and the conjugate
/// phi_k^*(phi_k'(v_k)) = v_k phi_k'(v_k) - phi_k(v_k) (Fenchel-Young equality, no logarithm needed).
struct SampleTerms {
  double value, derivative, conj;
};

template <Loss L, Penalty P>
struct PrimalForm {
  static_assert(is_smooth(L), "this loss is not smooth: it has no primal coordinate-descent form (HETGLM_LOSS_TABLE)");
  using LossP = LossPolicy<L>;
  using PenP = PenaltyPolicy<P>;
  static constexpr Formulation formulation = Formulation::primal;
  static constexpr bool kBoxDual = false;  ///< no dual coordinates (DualForm::kBoxDual)
  /// Upper bound of phi''/c (HETGLM_LOSS_TABLE): 1 (squared), 1/4 (logistic), 2 (squared hinge).
  static constexpr double kCurvatureBound = curvature_bound(L);
  /// Armijo sufficient-decrease constant and the most halvings of the line search (LIBLINEAR newGLMNET values).
  static constexpr double kArmijo = 0.01;
  static constexpr int kMaxBacktrack = 30;
  /// Curvature floor for H_j (all-zero column, or squared hinge with no active sample on the column).
  static constexpr double kCurvatureFloor = 1e-12;
  const CsrMatrix* A;      // rows = coordinates = features (X transposed)
  const double* y;         // size n (samples)
  const double* c;
  double lambda, eta, bound, inv_n;
  double c_max = 0;        // max_k c_k (the dual's strong concavity, gap-safe screening)
  Objective obj;           // the coordinate kernel's scalars
  /// H_j^max = kCurvatureBound (1/n) sum_k c_k x_kj^2: the exact curvature for the squared loss and a
  /// coordinate-wise Lipschitz constant of the gradient for the other losses (used by step()).
  std::vector<double> h;
  /// A->values_lo.data() when the fit trains on float64 values (read_float64_values), else null (DualForm::lo).
  const float* lo = nullptr;

  /// d.Xt may be null (then A is null, h empty and only the scalars, y and c describe the problem): the primal
  /// Newton solver's rows-only path (newton.hpp), which never calls inner, step, coordinate_step or certificate.
  /// n_total > 0: the samples of the objective's 1/n when this process holds only some of them (distributed Newton,
  /// L2 only: the Lipschitzing bound then sees only the local samples).
  PrimalForm(const ProblemData& d, const double* labels, const double* weights, double lam, double l1_ratio,
             index_t n_total = 0)
      : A(d.Xt), y(labels), c(weights), lambda(lam), eta(l1_ratio),
        inv_n(1.0 / (n_total > 0 ? n_total : (d.Xt ? d.Xt->n_cols : d.X->n_rows))) {
    const index_t n_local = d.Xt ? d.Xt->n_cols : d.X->n_rows, n = n_total > 0 ? n_total : n_local;
    // The Lipschitzing bound B = f(0) / (lambda eta') (glm_math.h hetglm_lipschitz_bound).
    double f0 = 0;
    for (index_t k = 0; k < n_local; ++k) {
      f0 += LossP::value(y[k], 0.0, c[k]);
      c_max = std::max(c_max, c[k]);
    }
    bound = math::lipschitz_bound(PenP::kid, f0 * inv_n, lambda, eta);
    obj = math::make_objective(HETGLM_FORM_PRIMAL, LossP::kid, PenP::kid, lambda, eta, bound, inv_n,
                               1.0 / (lambda * double(n)));
    if (!A) return;
    // kCurvatureBound is a power of two: the product is exact, whichever side computed the sums.
    h = d.column_curvature && d.column_curvature->size() == static_cast<std::size_t>(A->n_rows)
            ? *d.column_curvature
            : primal_column_curvature(*A, c, n_total);
    for (double& hj : h) hj *= kCurvatureBound;
  }

  index_t n_coords() const { return A->n_rows; }
  index_t dim() const { return A->n_cols; }

  /// r_j = sum_k x_kj phi_k'(v_k) (the gradient is s_j = r_j / n).
  double inner(index_t j, const double* v) const {
    double s = 0;
    const index_t* idx = A->indices.data();
    const float* val = A->values.data();
    for (offset_t k = A->offsets[j]; k < A->offsets[j + 1]; ++k) {
      const index_t r = idx[k];
      s += entry(val, lo, k) * LossP::derivative(y[r], v[r], c[r]);
    }
    return s;
  }
  double curvature(index_t j) const { return h[j]; }
  /// The coordinate kernel with the curvature sigma' H_j^max: the exact coordinate minimizer for the squared loss;
  /// for logistic / squared hinge a majorization (prox-gradient) step that never increases the objective (what the
  /// devices run). Host solvers call coordinate_step.
  double step(index_t j, double w, double r, double sigma) const {
    return math::coordinate_step(kernel_objective(), w, r, h[j], 0.0, 1.0, sigma);
  }
  double gap(index_t /*j*/, double w, double r) const {
    return math::coordinate_gap(kernel_objective(), w, r, 0.0, 1.0);
  }
  /// The kernel's objective with compile-time ids (see DualForm::kernel_objective).
  Objective kernel_objective() const {
    Objective o = obj;
    o.formulation = HETGLM_FORM_PRIMAL;
    o.loss = LossP::kid;
    o.penalty = PenP::kid;
    return o;
  }
  double coordinate_gap(index_t j, double w, const double* v) const { return gap(j, w, inner(j, v)); }

  /// The new value of feature j given the shared vector v = X w (the replica's copy under sigma' > 1).
  /// Squared loss: exact minimization, step(j, w, inner(j, v), sigma').
  /// Logistic / squared hinge (Tseng & Yun 2009; Yuan et al. 2010, LIBLINEAR newGLMNET's inner CD): one pass
  /// over the column for s_j and H_j = (1/n) sum_k x_kj^2 phi_k''(v_k) (floored at kCurvatureFloor), the
  /// proximal Newton direction d = kernel(w, s_j, sigma' H_j) - w, then backtracking t = 1, 1/2, ...
  /// on the sigma'-scaled local model restricted to the coordinate
  ///   F(t) = (1/sigma') [f(v + sigma' t d x^(j)) - f(v)] + g(w + t d) - g(w)
  /// (curvature sigma' H_j, the CoCoA+ safe bound: with sigma' = K replicas, (1/K) sum_k f(v + K dv_k) >=
  /// f(v + sum_k dv_k) by convexity; sigma' = 1 is the true objective), accepting the first t with
  /// F(t) <= kArmijo t (s_j d + g(w + d) - g(w)). Each trial is one pass over the column's nonzeros.
  /// If no t passes (the decrease is below rounding) the coordinate is left unchanged.
  double coordinate_step(index_t j, double w, const double* v, double sigma) const {
    if constexpr (L == Loss::squared) {
      return step(j, w, inner(j, v), sigma);
    } else {
      const index_t* idx = A->indices.data();
      const float* val = A->values.data();
      const offset_t b = A->offsets[j], e = A->offsets[j + 1];
      double r = 0, hj = 0;
      for (offset_t k = b; k < e; ++k) {
        const index_t q = idx[k];
        const double x = entry(val, lo, k);
        r += x * LossP::derivative(y[q], v[q], c[q]);
        hj += x * x * LossP::curvature(y[q], v[q], c[q]);
      }
      hj = std::max(hj * inv_n, kCurvatureFloor);
      const double w_new = math::coordinate_step(kernel_objective(), w, r, hj, 0.0, 1.0, sigma);
      const double d = w_new - w;
      if (d == 0) return w;
      const double s = r * inv_n;
      const double g0 = PenP::value(w, lambda, eta);
      const double delta = s * d + PenP::value(w_new, lambda, eta) - g0;  // predicted decrease, <= 0
      double t = 1;
      for (int it = 0; it < kMaxBacktrack; ++it, t *= 0.5) {
        const double dz = sigma * t * d;
        double df = 0;
        for (offset_t k = b; k < e; ++k) {
          const index_t q = idx[k];
          df += LossP::value(y[q], v[q] + dz * entry(val, lo, k), c[q]) - LossP::value(y[q], v[q], c[q]);
        }
        const double wt = w + t * d;
        const double dF = df * inv_n / sigma + PenP::value(wt, lambda, eta) - g0;
        if (dF <= kArmijo * t * delta) return wt;
      }
      return w;
    }
  }

  /// Every weight is feasible (the Lipschitzed L1 box is enforced by the steps); a non-finite one becomes 0.
  double feasible(index_t /*j*/, double w) const {
    if (!std::isfinite(w)) return 0.0;
    return has_l1_part(P) && bound > 0 ? std::clamp(w, -bound, bound) : w;
  }

  /// Sample k's value, derivative and conjugate at v_k (SampleTerms), and the curvature phi_k''(v_k) to `curv`,
  /// from one evaluation (LossPolicy::terms: one exponential for logistic).
  SampleTerms sample(index_t k, double vk, double& curv) const {
    const auto t = LossP::terms(y[k], vk, c[k]);
    curv = t.curvature;
    return {t.value, t.derivative, t.derivative * vk - t.value};
  }
  SampleTerms sample(index_t k, double vk) const {
    double curv;
    return sample(k, vk, curv);
  }
  /// lambda eta': the bound |s_j| <= lambda eta' of a feature that is zero at the optimum (eta' = 1 for L1, the l1
  /// ratio for the elastic net; 0 without an L1 part).
  double l1_level() const {
    if constexpr (P == Penalty::l1) return lambda;
    else if constexpr (has_l1_part(P)) return lambda * eta;
    else return 0.0;
  }
  /// The dual objective is gamma-strongly concave in the dual point u, gamma = n / (L c_max) (phi_k^* is
  /// 1/(L c_k)-strongly convex for an L-smooth loss): ||u - u*||^2 <= 2 (P(w) - D(u)) / gamma for every dual point u
  /// and every w (gap-safe screening: Fercoq, Gramfort, Salmon, ICML 2015; Ndiaye et al., JMLR 18, 2017).
  double gap_safe_radius(double gap) const {
    const double g = gap > 0 ? gap : 0.0;
    return std::sqrt(2.0 * g * kCurvatureBound * c_max * inv_n);
  }
  /// Feature j's certificate terms from its gradient s_j: g(w_j) to value, the Lipschitzed g^*(s_j) to conj,
  /// gap_j = w_j s_j + g(w_j) + g^*(-s_j) to gap, w_j s_j to dot and |s_j| to the maximum smax.
  /// Returns gap_j (the Lipschitzed per-feature gap: the gap memory of shrinking).
  double add_penalty_terms(double w, double s, CertificateTerms& t) const {
    const double g = PenP::gap(w, s, lambda, eta, bound);
    t.value += PenP::value(w, lambda, eta);
    t.conj += PenP::conjugate(s, lambda, eta, bound);
    t.gap += g;
    if constexpr (has_l1_part(P)) {
      t.dot += w * s;
      const double a = std::fabs(s);
      t.smax = t.smax > a ? t.smax : a;  // a NaN s_j reaches the certificate through conj and gap
    }
    return g;
  }
  /// The same from r_j (s_j = r_j / n).
  double add_coordinate_terms(index_t /*j*/, double w, double r, CertificateTerms& t) const {
    return add_penalty_terms(w, r * inv_n, t);
  }
  /// Sample k from its evaluated SampleTerms s at v_k: phi_k(v_k) to value, phi_k^*(phi_k'(v_k)) to conj and, with an
  /// L1 part, the coefficients of the rescaled conjugate phi_k^*(t phi_k'(v_k)) (glm_math.h hetglm_scaled_conjugate).
  void add_sample_terms(index_t k, double vk, const SampleTerms& s, CertificateTerms& t) const {
    t.value += s.value;
    t.conj += s.conj;
    if constexpr (has_l1_part(P)) {
      const auto q = LossP::scaled_conjugate(y[k], vk, c[k], s.value, s.derivative);
      t.scaled[0] += q.k0;
      t.scaled[1] += q.k1;
      t.scaled[2] += q.k2;
      t.scaled[3] += q.k3;
    }
  }
  /// Sample k: phi_k(v_k) to value, phi_k^*(phi_k'(v_k)) to conj (and the rescaled conjugate's coefficients).
  void add_shared_terms(index_t k, double vk, CertificateTerms& t) const { add_sample_terms(k, vk, sample(k, vk), t); }

  /// The certificate from the reduced terms: P = f(v) + sum_j g(w_j) and the better of two dual values, both lower
  /// bounds of P* (so P - D bounds the suboptimality whichever is taken):
  ///   D1 = -f^*(u) - sum_j g^*(-s_j) at u = grad f(v), with the Lipschitzed conjugate for L1 (Duenner et al., ICML
  ///        2016) and the exact one for the elastic net (eta < 1);
  ///   D2 = -f^*(t u) at the rescaled point t u, t = min(1, lambda eta' / max_j |s_j|), which satisfies
  ///        ||X^T (t u)||_inf <= lambda eta', so g^*(-t s_j) = 0 (scikit-learn's and celer's dual point for the Lasso;
  ///        for the squared loss t is also optimized in [0, t_max]); f^*(t u) from the samples' coefficient sums,
  ///        exact for the quadratic losses and an upper bound for logistic (hetglm_scaled_conjugate).
  /// gap_sum: with D1 the per-feature gaps; with D2 the per-feature gaps at t u, g(w_j) + t w_j s_j, plus the
  /// samples' Fenchel-Young term f(v) + f^*(t u) - t <u, v>; either equals gap when v = X w.
  Certificate finish(const CertificateTerms& coords, const CertificateTerms& shared) const {
    Certificate cert;
    cert.primal = shared.value * inv_n + coords.value;
    cert.dual = -shared.conj * inv_n - coords.conj;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = coords.gap;
    if constexpr (has_l1_part(P)) {
      const double le = l1_level();
      if (le > 0 && std::isfinite(coords.smax)) {
        const double* k = shared.scaled;
        const double tmax = coords.smax > le ? le / coords.smax : 1.0;
        double t = tmax;
        if (k[3] == 0 && k[2] > 0) t = std::clamp(-k[1] / (2 * k[2]), 0.0, tmax);
        const double tlogt = t > 0 ? t * std::log(t) : 0.0;
        const double fstar = (k[0] + t * k[1] + t * t * k[2] + tlogt * k[3]) * inv_n;
        const double dual = -fstar;
        if (dual > cert.dual) {
          cert.dual = dual;
          cert.gap = cert.primal - cert.dual;
          cert.dual_scale = t;
          cert.gap_sum = shared.value * inv_n + fstar - t * (shared.conj + shared.value) * inv_n + coords.value +
                         t * coords.dot;
        }
      }
    }
    return cert;
  }

  std::vector<double> weights(std::span<const double> w, std::span<const double> /*v*/) const {
    return {w.begin(), w.end()};
  }
};

/// Certificate terms of coordinates [lo, hi) at (alpha, v), in order; with `gaps` (size n_coords), each coordinate's
/// share of P - D is stored there too (the gap memory of shrinking and of DuHL's selection); with `inners` (size
/// n_coords), each coordinate's r_i = <a_i, v> (the margin rule of the box duals' shrinking).
template <class Form>
CertificateTerms coordinate_terms(const Form& f, index_t lo, index_t hi, const double* alpha, const double* v,
                                  double* gaps = nullptr, double* inners = nullptr, const double* v2 = nullptr,
                                  double* inners2 = nullptr) {
  CertificateTerms t;
  for (index_t i = lo; i < hi; ++i) {
    const double r = f.inner(i, v);
    const double g = f.add_coordinate_terms(i, alpha[i], r, t);
    if (gaps) gaps[i] = g;
    if (inners) inners[i] = r;
    if (v2) inners2[i] = f.inner(i, v2);  // the row just read, against a second vector (best_primal.hpp's average)
  }
  return t;
}
/// Certificate terms of entries [lo, hi) of v, in order.
template <class Form>
CertificateTerms shared_terms(const Form& f, index_t lo, index_t hi, const double* v) {
  CertificateTerms t;
  for (index_t k = lo; k < hi; ++k) f.add_shared_terms(k, v[k], t);
  return t;
}
/// The exact certificate of (alpha, v) in one sequential pass; v should equal A alpha (shared_vector).
template <class Form>
Certificate certificate(const Form& f, std::span<const double> alpha, std::span<const double> v) {
  return f.finish(coordinate_terms(f, 0, f.n_coords(), alpha.data(), v.data()),
                  shared_terms(f, 0, f.dim(), v.data()));
}

/// A form whose coordinates are physically reordered: coordinate p of `form` is coordinate perm[p] of the original
/// (its row of A copied to row p of `A`, and its per-coordinate data with it). The parallel CPU solver trains it, so
/// that contiguous buckets and node blocks are random sets of coordinates while memory stays local.
template <class Form>
struct PermutedForm {
  CsrMatrix A;
  std::vector<double> y, c, sq_norm;  // dual: per coordinate (samples)
  Form form;

  PermutedForm(const Form& f, std::span<const index_t> perm)
      : PermutedForm(f, perm, [](std::size_t n, const auto& body) { body(std::size_t{0}, n); }) {}
  /// The same, the rows copied by `for_ranges(n, body)`, which must call body(lo, hi) once for each range of a
  /// partition of [0, n), in any order or in parallel (the parallel CPU solver passes its threads' ranges: the
  /// copy is a gather of random rows, bound by memory latency).
  template <class ForRanges>
  PermutedForm(const Form& f, std::span<const index_t> perm, const ForRanges& for_ranges) : form(f) {
    const CsrMatrix& src = *f.A;
    const auto m = static_cast<std::size_t>(src.n_rows);
    A.n_rows = src.n_rows;
    A.n_cols = src.n_cols;
    A.offsets.assign(m + 1, 0);
    for (std::size_t p = 0; p < m; ++p)
      A.offsets[p + 1] = A.offsets[p] + (src.offsets[perm[p] + 1] - src.offsets[perm[p]]);
    const auto nnz = static_cast<std::size_t>(A.offsets[m]);
    A.indices.reserve(nnz);
    A.values.reserve(nnz);
    A.indices.resize(nnz);
    A.values.resize(nnz);
    if (f.lo) A.values_lo.resize(nnz);  // the float64 values travel with their rows when the fit reads them
    for_ranges(m, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t p = lo; p < hi; ++p) {
        const offset_t b = src.offsets[perm[p]], e = src.offsets[perm[p] + 1];
        std::copy(src.indices.begin() + b, src.indices.begin() + e, A.indices.begin() + A.offsets[p]);
        std::copy(src.values.begin() + b, src.values.begin() + e, A.values.begin() + A.offsets[p]);
        if (f.lo) std::copy(f.lo + b, f.lo + e, A.values_lo.begin() + A.offsets[p]);
      }
    });
    form.A = &A;
    form.lo = f.lo ? A.values_lo.data() : nullptr;
    if constexpr (Form::formulation == Formulation::dual) {
      y.resize(m);
      c.resize(m);
      sq_norm.resize(m);
      for (std::size_t p = 0; p < m; ++p) {
        y[p] = f.y[perm[p]];
        c[p] = f.c[perm[p]];
        sq_norm[p] = f.sq_norm[perm[p]];
      }
      form.y = y.data();
      form.c = c.data();
      form.sq_norm = sq_norm.data();
    } else {
      for (std::size_t p = 0; p < m; ++p) form.h[p] = f.h[perm[p]];
    }
  }
  PermutedForm(const PermutedForm&) = delete;
  PermutedForm& operator=(const PermutedForm&) = delete;
};

/// The coordinate update of the host solvers (sequential, SySCD replicas, DuHL's CPU side, the test references):
/// alpha_i <- Form::coordinate_step(i, alpha_i, v, sigma'), then v += sigma' (alpha_i' - alpha_i) a_i.
/// Returns the change of alpha_i (0 when it did not move; v is then untouched).
template <class Form>
double update_coordinate(const Form& f, index_t i, double* alpha, double* v, double sigma) {
  const double a_new = f.coordinate_step(i, alpha[i], v, sigma);
  const double delta = a_new - alpha[i];
  if (delta == 0) return 0;
  alpha[i] = a_new;
  row_axpy(*f.A, i, sigma * delta, v, f.lo);
  return delta;
}

/// What a coordinate step of coordinate i reads at random places besides its row, prefetched for the loops that
/// visit coordinates in a random order, 2 kPrefetchRows steps ahead (prefetch_ahead): the row's two offsets (which
/// prefetch_row needs in order to find the row), alpha_i (for writing, when alpha is given) and the form's
/// per-coordinate scalars: the dual's y_i, c_i and ||x_i||^2, the primal's curvature bound h_j. Each of them is a
/// cache miss on sets larger than the cache, and a step waited for them after its row had arrived: on a set of
/// 200,000 rows (1.6 MB per array) the loads of y_i, c_i and ||x_i||^2, and then prefetch_row's own load of the
/// offsets, drew most of a hinge SDCA epoch's samples (perf; bench/results/prefetch.md, "The per-coordinate scalars").
template <class Form>
[[gnu::always_inline]] inline void prefetch_scalars(const Form& f, index_t i, const double* alpha) {
  __builtin_prefetch(f.A->offsets.data() + i, 0, 1);
  __builtin_prefetch(f.A->offsets.data() + i + 1, 0, 1);
  if (alpha) __builtin_prefetch(alpha + i, 1, 1);
  if constexpr (Form::formulation == Formulation::dual) {
    __builtin_prefetch(f.y + i, 0, 1);
    __builtin_prefetch(f.c + i, 0, 1);
    __builtin_prefetch(f.sq_norm + i, 0, 1);
  } else {
    if (!f.h.empty()) __builtin_prefetch(f.h.data() + i, 0, 1);
  }
}

/// The prefetches of step p of a loop over order[0 .. n): the scalars of the coordinate 2 kPrefetchRows steps ahead
/// (prefetch_scalars), the row of the one kPrefetchRows ahead (prefetch_row: its offsets are in the cache by then).
template <class Form>
[[gnu::always_inline]] inline void prefetch_ahead(const Form& f, const index_t* order, std::size_t p, std::size_t n,
                                                  const double* alpha) {
  if (p + 2 * kPrefetchRows < n) prefetch_scalars(f, order[p + 2 * kPrefetchRows], alpha);
  if (p + kPrefetchRows < n) prefetch_row(*f.A, order[p + kPrefetchRows], f.lo);
}

/// update_coordinate for the coordinates order[0 .. n) in turn, with prefetch_ahead.
template <class Form>
void update_coordinates(const Form& f, const index_t* order, std::size_t n, double* alpha, double* v, double sigma) {
  for (std::size_t p = 0; p < n; ++p) {
    prefetch_ahead(f, order, p, n, alpha);
    update_coordinate(f, order[p], alpha, v, sigma);
  }
}

/// v = A alpha recomputed from scratch in double (used for honest final certificates).
template <class Form>
std::vector<double> shared_vector(const Form& form, std::span<const double> alpha) {
  std::vector<double> v(static_cast<std::size_t>(form.dim()), 0.0);
  const CsrMatrix& A = *form.A;
  for (index_t i = 0; i < A.n_rows; ++i)
    if (alpha[i] != 0) row_axpy(A, i, alpha[i], v.data(), form.lo);
  return v;
}

/// A form of float64 data (A->values_lo, matrix.hpp) fitted to a tol below kFloat64Tol reads the float64 values:
/// sets f.lo (DualForm::lo, PrimalForm::lo) and returns true; otherwise leaves the form on the float32 values.
/// For the host coordinate-descent solvers (sequential, SySCD, PASSCoDe), which read rows only through the form's
/// inner, update_coordinate, shared_vector and PermutedForm, and for DuHL's host side (duhl.cpp: its accelerators
/// read float32 values, the host finishes where that stalls the certificate).
template <class Form>
bool read_float64_values(Form& f, double tol) {
  const float* lo = f.A ? values_lo_for(*f.A, tol) : nullptr;
  if (!lo) return false;
  f.lo = lo;
  return true;
}

// ------------------------------------------------------------------------------------------------------------------
// Every form a solver is instantiated for, from the tables of glm_math.h: HETGLM_FOR_EACH_FORM(X) expands X(Form)
// once per form: DualForm<L> for every loss with an SDCA step, PrimalForm<L, P> for every smooth loss and every
// penalty. X must be variadic because the primal forms' template arguments contain a comma, e.g.
//   #define HETGLM_INST(...) template SolveResult solve_sequential(const __VA_ARGS__&, const SolverOptions&);
//   HETGLM_FOR_EACH_FORM(HETGLM_INST)
// HETGLM_FOR_EACH_PRIMAL_FORM(X) and HETGLM_FOR_EACH_DUAL_FORM(X) expand the two halves.
#define HETGLM_FOR_EACH_FORM(X) HETGLM_FOR_EACH_DUAL_FORM(X) HETGLM_FOR_EACH_PRIMAL_FORM(X)
#define HETGLM_FOR_EACH_DUAL_FORM(X) HETGLM_LOSS_ROWS(HETGLM_DUAL_FORM_OF_LOSS_, X)
#define HETGLM_FOR_EACH_PRIMAL_FORM(X) HETGLM_LOSS_ROWS(HETGLM_PRIMAL_FORMS_OF_LOSS_, X)
#define HETGLM_DUAL_FORM_OF_LOSS_(ID, name, id, L, DUAL, PRIMAL, X) \
  HETGLM_IF(DUAL)(X(::hetglm::DualForm<::hetglm::Loss::name>))
#define HETGLM_PRIMAL_FORMS_OF_LOSS_(ID, name, id, L, DUAL, PRIMAL, X) \
  HETGLM_IF(PRIMAL)(HETGLM_PENALTY_ROWS(HETGLM_PRIMAL_FORM_, (X, ::hetglm::Loss::name)))
// (X, loss) travels as one parenthesized argument; HETGLM_PRIMAL_FORM_CALL_ unpacks it.
#define HETGLM_PRIMAL_FORM_(PID, pname, pid, L1PART, XL) HETGLM_PRIMAL_FORM_APPLY_((pname, HETGLM_UNPAREN_ XL))
#define HETGLM_UNPAREN_(...) __VA_ARGS__
#define HETGLM_PRIMAL_FORM_APPLY_(args) HETGLM_PRIMAL_FORM_CALL_ args
#define HETGLM_PRIMAL_FORM_CALL_(pname, X, L) X(::hetglm::PrimalForm<L, ::hetglm::Penalty::pname>)

}  // namespace hetglm
