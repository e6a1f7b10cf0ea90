// SPDX-License-Identifier: Apache-2.0
// Formulations: the coordinate-level view every solver (and later every device) runs on.
//
//   min_alpha  f(A alpha) + sum_i g_i(alpha_i),   shared vector v = A alpha
//
// DualForm (SDCA; Shalev-Shwartz & Zhang, JMLR 2013) -- coordinates are samples:
//   A's columns are the rows x_i of X (stored as CSR rows), v = sum_i alpha_i x_i in R^d, w = v/(lambda n),
//   u_i = x_i.w (the margin), step = hetglm_dual_step(..., q = sigma' ||x_i||^2/(lambda n)),
//   gap_i = (1/n)(phi_i(u_i) + phi_i^*(-alpha_i) + alpha_i u_i),
//   P(w) = (1/n) sum_i phi_i(x_i.w) + lambda/2 ||w||^2,
//   D(alpha) = -(1/n) sum_i phi_i^*(-alpha_i) - lambda/2 ||w(alpha)||^2.
// PrimalForm (coordinate descent over features; Friedman, Hastie, Tibshirani 2010 for the squared loss)
//   -- coordinates are features: A = X, alpha = w, v = X w in R^n,
//   s_j = <x^(j), grad f(v)>, grad f(v)_k = phi_k'(v_k)/n,
//   step = hetglm_penalty_step(w_j, s_j, H_j = sigma' (1/n) sum_k c_k x_kj^2, ...) (exact for the squared loss);
//   logistic / squared hinge: proximal Newton direction with H_j = (1/n) sum_k x_kj^2 phi_k''(v_k) and an Armijo
//   line search (Tseng & Yun 2009; LIBLINEAR newGLMNET, Yuan et al. 2010), see PrimalForm::coordinate_step,
//   gap_j = w_j s_j + g(w_j) + g^*(-s_j),
//   P(w) = f(v) + sum_j g(w_j),  D = -f^*(u) - sum_j g^*(-s_j),  f^*(u) = (1/n) sum_k phi_k^*(n u_k).
// Solvers and devices use one coordinate-level API: u(i, v), step(i, a, u, sigma'), coordinate_step(i, a, v, sigma')
// (u then step; a form whose step needs more than u, such as a line search, overrides it), gap(i, a, u),
// certificate(alpha, v), weights(alpha, v); A, n_coords() and dim() describe the coordinates.
// In both forms P - D equals the sum of the per-coordinate gaps when v = A alpha (Fenchel-Young equality
// for f at u = grad f(v); Duenner et al., ICML 2016). Certificates are accumulated in double.
#pragma once
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "hetglm/losses.hpp"
#include "hetglm/matrix.hpp"

namespace hetglm {

enum class Formulation { dual, primal };

/// A certificate for (alpha, v): objective values and the duality gap, all in the average-loss scaling.
struct Certificate {
  double primal = 0;    ///< P(w)
  double dual = 0;      ///< D(alpha)
  double gap = 0;       ///< P - D
  double gap_sum = 0;   ///< sum of per-coordinate gaps (equals gap up to rounding when v = A alpha)
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

/// Data shared by every class of a one-vs-rest problem.
struct ProblemData {
  const CsrMatrix* X = nullptr;   ///< samples as rows (bias column already appended)
  const CsrMatrix* Xt = nullptr;  ///< X transposed (features as rows); needed by the primal form only
  std::vector<double> row_sq_norm;  ///< ||x_i||^2 (dual)
};

template <Loss L>
struct DualForm {
  using LossP = LossPolicy<L>;
  static constexpr Formulation formulation = Formulation::dual;
  const CsrMatrix* A;      // rows = coordinates = samples
  const double* y;         // labels (+-1) or targets, size n
  const double* c;         // sample weights, size n
  const double* sq_norm;   // ||x_i||^2
  double lambda, inv_n, inv_lambda_n;

  DualForm(const ProblemData& d, const double* labels, const double* weights, double lam)
      : A(d.X), y(labels), c(weights), sq_norm(d.row_sq_norm.data()), lambda(lam),
        inv_n(1.0 / d.X->n_rows), inv_lambda_n(1.0 / (lam * d.X->n_rows)) {}

  index_t n_coords() const { return A->n_rows; }
  index_t dim() const { return A->n_cols; }

  /// u_i = x_i . w with w = v / (lambda n).
  double u(index_t i, const double* v) const {
    double s = 0;
    const index_t* idx = A->indices.data();
    const float* val = A->values.data();
    for (offset_t k = A->offsets[i]; k < A->offsets[i + 1]; ++k) s += double(val[k]) * v[idx[k]];
    return s * inv_lambda_n;
  }
  double step(index_t i, double a, double u, double sigma) const {
    return LossP::dual_step(y[i], a, u, sigma * sq_norm[i] * inv_lambda_n, c[i]);
  }
  double gap(index_t i, double a, double u) const { return LossP::dual_gap(y[i], a, u, c[i]) * inv_n; }
  /// The new value of coordinate i given the current shared vector (sigma' = CoCoA+ scaling, 1 sequentially).
  double coordinate_step(index_t i, double a, const double* v, double sigma) const { return step(i, a, u(i, v), sigma); }

  /// Exact certificate for (alpha, v); v should equal A alpha.
  Certificate certificate(std::span<const double> alpha, std::span<const double> v) const {
    double loss = 0, conj = 0, gsum = 0, vv = 0;
    for (double vk : v) vv += vk * vk;
    for (index_t i = 0; i < n_coords(); ++i) {
      const double z = u(i, v.data());
      loss += LossP::value(y[i], z, c[i]);
      conj += LossP::conjugate(y[i], alpha[i], c[i]);
      gsum += LossP::dual_gap(y[i], alpha[i], z, c[i]);
    }
    const double reg = 0.5 * lambda * vv * inv_lambda_n * inv_lambda_n;  // lambda/2 ||w||^2
    Certificate cert;
    cert.primal = loss * inv_n + reg;
    cert.dual = -conj * inv_n - reg;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = gsum * inv_n;
    return cert;
  }

  /// Primal weights w = v / (lambda n).
  std::vector<double> weights(std::span<const double> /*alpha*/, std::span<const double> v) const {
    std::vector<double> w(v.begin(), v.end());
    for (double& x : w) x *= inv_lambda_n;
    return w;
  }
};

template <Loss L, Penalty P>
struct PrimalForm {
  using LossP = LossPolicy<L>;
  using PenP = PenaltyPolicy<P>;
  static constexpr Formulation formulation = Formulation::primal;
  static_assert(L != Loss::hinge, "the hinge loss is not smooth: it has no primal coordinate-descent form");
  /// Upper bound of phi''/c: 1 (squared), 1/4 (logistic), 2 (squared hinge, generalized second derivative).
  static constexpr double kCurvatureBound = L == Loss::squared ? 1.0 : L == Loss::logistic ? 0.25 : 2.0;
  /// Armijo sufficient-decrease constant and the most halvings of the line search (LIBLINEAR newGLMNET values).
  static constexpr double kArmijo = 0.01;
  static constexpr int kMaxBacktrack = 30;
  /// Curvature floor for H_j (all-zero column, or squared hinge with no active sample on the column).
  static constexpr double kCurvatureFloor = 1e-12;
  const CsrMatrix* A;      // rows = coordinates = features (X transposed)
  const double* y;         // size n (samples)
  const double* c;
  double lambda, eta, bound, inv_n;
  /// H_j^max = kCurvatureBound (1/n) sum_k c_k x_kj^2: the exact curvature for the squared loss and a
  /// coordinate-wise Lipschitz constant of the gradient for the other losses (used by step()).
  std::vector<double> h;

  /// d.Xt may be null (then A is null, h empty and only the scalars, y and c describe the problem): the primal
  /// Newton solver's rows-only path (newton.hpp), which never calls u, step, coordinate_step or certificate.
  PrimalForm(const ProblemData& d, const double* labels, const double* weights, double lam, double l1_ratio)
      : A(d.Xt), y(labels), c(weights), lambda(lam), eta(l1_ratio),
        inv_n(1.0 / (d.Xt ? d.Xt->n_cols : d.X->n_rows)) {
    const index_t n = d.Xt ? d.Xt->n_cols : d.X->n_rows;
    // Lipschitzing bound B = f(0)/lambda (|w_j| <= B at the optimum since lambda ||w*||_1 <= P(0)):
    // (1/n) sum c_k log 2 / lambda for logistic, (1/n) sum c_k / lambda for squared hinge.
    double f0 = 0;
    for (index_t k = 0; k < n; ++k) f0 += LossP::value(y[k], 0.0, c[k]);
    bound = (P == Penalty::l2) ? 0.0 : f0 * inv_n / (lambda * (P == Penalty::l1 ? 1.0 : eta > 0 ? eta : 1.0));
    if (!A) return;
    h.resize(static_cast<std::size_t>(A->n_rows));
    for (index_t j = 0; j < A->n_rows; ++j) {
      double s = 0;
      for (offset_t k = A->offsets[j]; k < A->offsets[j + 1]; ++k)
        s += c[A->indices[k]] * double(A->values[k]) * A->values[k];
      h[j] = kCurvatureBound * s * inv_n;
    }
  }

  index_t n_coords() const { return A->n_rows; }
  index_t dim() const { return A->n_cols; }

  /// s_j = <x^(j), grad f(v)> = (1/n) sum_k x_kj phi_k'(v_k).
  double u(index_t j, const double* v) const {
    double s = 0;
    const index_t* idx = A->indices.data();
    const float* val = A->values.data();
    for (offset_t k = A->offsets[j]; k < A->offsets[j + 1]; ++k) {
      const index_t r = idx[k];
      s += double(val[k]) * LossP::derivative(y[r], v[r], c[r]);
    }
    return s * inv_n;
  }
  /// Proximal step from s_j alone with the curvature sigma' H_j^max: the exact coordinate minimizer for the
  /// squared loss; for logistic / squared hinge a majorization (prox-gradient) step that never increases the
  /// objective, for devices that only compute u. Solvers should call coordinate_step.
  double step(index_t j, double w, double s, double sigma) const {
    return PenP::step(w, s, sigma * h[j], lambda, eta, bound);
  }
  double gap(index_t /*j*/, double w, double s) const { return PenP::gap(w, s, lambda, eta, bound); }

  /// The new value of feature j given the shared vector v = X w (the replica's copy under sigma' > 1).
  /// Squared loss: exact minimization, step(j, w, u(j, v), sigma').
  /// Logistic / squared hinge (Tseng & Yun 2009; Yuan et al. 2010, LIBLINEAR newGLMNET's inner CD): one pass
  /// over the column for s_j and H_j = (1/n) sum_k x_kj^2 phi_k''(v_k) (floored at kCurvatureFloor), the
  /// proximal Newton direction d = penalty_step(w, s_j, sigma' H_j) - w, then backtracking t = 1, 1/2, ...
  /// on the sigma'-scaled local model restricted to the coordinate
  ///   F(t) = (1/sigma') [f(v + sigma' t d x^(j)) - f(v)] + g(w + t d) - g(w)
  /// (curvature sigma' H_j, the CoCoA+ safe bound: with sigma' = K replicas, (1/K) sum_k f(v + K dv_k) >=
  /// f(v + sum_k dv_k) by convexity; sigma' = 1 is the true objective), accepting the first t with
  /// F(t) <= kArmijo t (s_j d + g(w + d) - g(w)). Each trial is one pass over the column's nonzeros.
  /// If no t passes (the decrease is below rounding) the coordinate is left unchanged.
  double coordinate_step(index_t j, double w, const double* v, double sigma) const {
    if constexpr (L == Loss::squared) {
      return step(j, w, u(j, v), sigma);
    } else {
      const index_t* idx = A->indices.data();
      const float* val = A->values.data();
      const offset_t b = A->offsets[j], e = A->offsets[j + 1];
      double s = 0, hj = 0;
      for (offset_t k = b; k < e; ++k) {
        const index_t r = idx[k];
        const double x = val[k];
        s += x * LossP::derivative(y[r], v[r], c[r]);
        hj += x * x * LossP::curvature(y[r], v[r], c[r]);
      }
      s *= inv_n;
      hj = std::max(hj * inv_n, kCurvatureFloor);
      const double w_new = PenP::step(w, s, sigma * hj, lambda, eta, bound);
      const double d = w_new - w;
      if (d == 0) return w;
      const double g0 = PenP::value(w, lambda, eta);
      const double delta = s * d + PenP::value(w_new, lambda, eta) - g0;  // predicted decrease, <= 0
      double t = 1;
      for (int it = 0; it < kMaxBacktrack; ++it, t *= 0.5) {
        const double dz = sigma * t * d;
        double df = 0;
        for (offset_t k = b; k < e; ++k) {
          const index_t r = idx[k];
          df += LossP::value(y[r], v[r] + dz * double(val[k]), c[r]) - LossP::value(y[r], v[r], c[r]);
        }
        const double wt = w + t * d;
        const double dF = df * inv_n / sigma + PenP::value(wt, lambda, eta) - g0;
        if (dF <= kArmijo * t * delta) return wt;
      }
      return w;
    }
  }

  /// Feature j's share of the certificate's penalty sums: g(w_j) to g, the Lipschitzed g^*(s_j) to gconj and
  /// gap_j = w_j s_j + g(w_j) + g^*(-s_j) to gsum (certificate(), parallel_certificate, the Newton solver).
  void add_penalty_terms(double w, double s, double& g, double& gconj, double& gsum) const {
    g += PenP::value(w, lambda, eta);
    gconj += PenP::conjugate(s, lambda, eta, bound);
    gsum += PenP::gap(w, s, lambda, eta, bound);
  }

  /// Exact certificate for (w, v), v = X w: P = f(v) + sum_j g(w_j), D = -f^*(grad f(v)) - sum_j g^*(-s_j)
  /// with the Lipschitzed g^* for L1 (bound B above), so P - D = sum_j gap_j (Fenchel-Young for f).
  Certificate certificate(std::span<const double> w, std::span<const double> v) const {
    double loss = 0, fconj = 0;
    for (index_t k = 0; k < dim(); ++k) {
      loss += LossP::value(y[k], v[k], c[k]);
      fconj += LossP::conjugate(y[k], -LossP::derivative(y[k], v[k], c[k]), c[k]);
    }
    double g = 0, gconj = 0, gsum = 0;
    for (index_t j = 0; j < n_coords(); ++j) add_penalty_terms(w[j], u(j, v.data()), g, gconj, gsum);
    Certificate cert;
    cert.primal = loss * inv_n + g;
    cert.dual = -fconj * inv_n - gconj;
    cert.gap = cert.primal - cert.dual;
    cert.gap_sum = gsum;
    return cert;
  }

  std::vector<double> weights(std::span<const double> w, std::span<const double> /*v*/) const {
    return {w.begin(), w.end()};
  }
};

/// Every form a solver must be instantiated for: HETGLM_FOR_EACH_FORM(X) expands X(Form) once per form.
/// X must be variadic because the primal forms' template arguments contain a comma, e.g.
///   #define HETGLM_INST(...) template SolveResult solve_sequential(const __VA_ARGS__&, const SolverOptions&);
///   HETGLM_FOR_EACH_FORM(HETGLM_INST)
/// Dual: every loss. Primal: every smooth loss x every penalty (hinge is dual only).
#define HETGLM_FOR_EACH_FORM(X)                                    \
  X(::hetglm::DualForm<::hetglm::Loss::squared>)                   \
  X(::hetglm::DualForm<::hetglm::Loss::logistic>)                  \
  X(::hetglm::DualForm<::hetglm::Loss::hinge>)                     \
  X(::hetglm::DualForm<::hetglm::Loss::squared_hinge>)             \
  HETGLM_FOR_EACH_PRIMAL_PENALTY_(X, ::hetglm::Loss::squared)      \
  HETGLM_FOR_EACH_PRIMAL_PENALTY_(X, ::hetglm::Loss::logistic)     \
  HETGLM_FOR_EACH_PRIMAL_PENALTY_(X, ::hetglm::Loss::squared_hinge)
#define HETGLM_FOR_EACH_PRIMAL_PENALTY_(X, L)                      \
  X(::hetglm::PrimalForm<L, ::hetglm::Penalty::l2>)                \
  X(::hetglm::PrimalForm<L, ::hetglm::Penalty::l1>)                \
  X(::hetglm::PrimalForm<L, ::hetglm::Penalty::elastic_net>)

/// v = A alpha recomputed from scratch in double (used for honest final certificates).
template <class Form>
std::vector<double> shared_vector(const Form& form, std::span<const double> alpha) {
  std::vector<double> v(static_cast<std::size_t>(form.dim()), 0.0);
  const CsrMatrix& A = *form.A;
  for (index_t i = 0; i < A.n_rows; ++i) {
    if (alpha[i] == 0) continue;
    for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) v[A.indices[k]] += alpha[i] * double(A.values[k]);
  }
  return v;
}

}  // namespace hetglm
