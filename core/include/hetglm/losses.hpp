// SPDX-License-Identifier: Apache-2.0
// C++ view of glm_math.h (the single copy of the math): the Loss and Penalty enums and their properties, generated
// from the tables of glm_math.h; precision overloads of the C functions (math::); and policy types whose loss or
// penalty id is a compile-time constant, so the dispatch switch folds away after inlining.
// Callable from host code and (through HETGLM_FN) CUDA device code.
#pragma once
#include <limits>
#include <type_traits>

#include "hetglm/glm_math.h"

namespace hetglm {

/// The losses of HETGLM_LOSS_TABLE (glm_math.h), one enumerator per row.
enum class Loss : int {
#define HETGLM_X_(ID, name, id, L, DUAL, PRIMAL, E) name = HETGLM_LOSS_##ID,
  HETGLM_LOSS_TABLE(HETGLM_X_)
#undef HETGLM_X_
};

/// The penalties of HETGLM_PENALTY_TABLE (glm_math.h).
enum class Penalty : int {
#define HETGLM_X_(ID, name, id, L1PART, E) name = HETGLM_PENALTY_##ID,
  HETGLM_PENALTY_TABLE(HETGLM_X_)
#undef HETGLM_X_
};

/// One row of HETGLM_LOSS_TABLE as C++ values.
struct LossInfo {
  Loss loss;
  double curvature_bound;  ///< L = sup phi''/c: 1 squared, 1/4 logistic, 2 squared hinge, 0 hinge (not smooth)
  bool dual_step;          ///< has an SDCA (dual) step
  bool smooth;             ///< primal coordinate descent and the Newton solver apply
};
inline constexpr LossInfo kLossTable[] = {
#define HETGLM_X_(ID, name, id, L, DUAL, PRIMAL, E) {Loss::name, L, DUAL != 0, PRIMAL != 0},
    HETGLM_LOSS_TABLE(HETGLM_X_)
#undef HETGLM_X_
};
/// The penalties' L1PART column: the penalty has an |w| part (soft-thresholding, the Lipschitzed conjugate).
struct PenaltyInfo {
  Penalty penalty;
  bool l1_part;
};
inline constexpr PenaltyInfo kPenaltyTable[] = {
#define HETGLM_X_(ID, name, id, L1PART, E) {Penalty::name, L1PART != 0},
    HETGLM_PENALTY_TABLE(HETGLM_X_)
#undef HETGLM_X_
};

constexpr LossInfo loss_info(Loss l) {
  for (const LossInfo& r : kLossTable)
    if (r.loss == l) return r;
  return {l, std::numeric_limits<double>::quiet_NaN(), false, false};
}
constexpr double curvature_bound(Loss l) { return loss_info(l).curvature_bound; }
constexpr bool has_dual_step(Loss l) { return loss_info(l).dual_step; }
constexpr bool is_smooth(Loss l) { return loss_info(l).smooth; }
/// Losses whose dual domain is an interval in b = y a with the optimum often at its ends (hinge: [0, c]; squared
/// hinge: [0, inf)): LIBLINEAR's shrinking serves them (the margin rule) and a merged step past 1 leaves their box.
constexpr bool is_box_dual(Loss l) { return l == Loss::hinge || l == Loss::squared_hinge; }
constexpr bool has_l1_part(Penalty p) {
  for (const PenaltyInfo& r : kPenaltyTable)
    if (r.penalty == p) return r.l1_part;
  return false;
}

/// The objective scalars of the coordinate kernel (glm_math.h hetglm_objective_d / _f).
using Objective = hetglm_objective_d;
using ObjectiveF = hetglm_objective_f;
template <class T>
using ObjectiveT = std::conditional_t<sizeof(T) == sizeof(double), hetglm_objective_d, hetglm_objective_f>;

namespace math {
// Precision dispatch: one overload per precision, forwarding to the C functions.
#define HETGLM_MATH_OVERLOADS(T, S)                                                                   \
  HETGLM_FN T sigmoid(T t) { return hetglm_sigmoid##S(t); }                                           \
  HETGLM_FN T softplus(T t) { return hetglm_softplus##S(t); }                                         \
  HETGLM_FN T loss_value(int l, T y, T z, T c) { return hetglm_loss_value##S(l, y, z, c); }           \
  HETGLM_FN T loss_derivative(int l, T y, T z, T c) { return hetglm_loss_derivative##S(l, y, z, c); } \
  HETGLM_FN T loss_curvature(int l, T y, T z, T c) { return hetglm_loss_curvature##S(l, y, z, c); }   \
  HETGLM_FN hetglm_loss3##S loss_terms(int l, T y, T z, T c) { return hetglm_loss_terms##S(l, y, z, c); } \
  HETGLM_FN T loss_conjugate(int l, T y, T a, T c) { return hetglm_loss_conjugate##S(l, y, a, c); }   \
  HETGLM_FN T dual_step(int l, T y, T a, T z, T q, T c) { return hetglm_dual_step##S(l, y, a, z, q, c); } \
  HETGLM_FN T dual_gap(int l, T y, T a, T z, T c) { return hetglm_dual_gap##S(l, y, a, z, c); }       \
  HETGLM_FN T penalty_value(int p, T w, T lam, T eta) { return hetglm_penalty_value##S(p, w, lam, eta); } \
  HETGLM_FN T penalty_conjugate(int p, T s, T lam, T eta, T b) {                                      \
    return hetglm_penalty_conjugate##S(p, s, lam, eta, b);                                            \
  }                                                                                                   \
  HETGLM_FN T penalty_step(int p, T w, T s, T h, T lam, T eta, T b) {                                 \
    return hetglm_penalty_step##S(p, w, s, h, lam, eta, b);                                           \
  }                                                                                                   \
  HETGLM_FN T primal_gap(int p, T w, T s, T lam, T eta, T b) { return hetglm_primal_gap##S(p, w, s, lam, eta, b); } \
  HETGLM_FN T lipschitz_bound(int p, T f0, T lam, T eta) { return hetglm_lipschitz_bound##S(p, f0, lam, eta); } \
  /* the softmax (multinomial) loss over K classes: value (p = softmax(z) when p != nullptr), conjugate at -a */   \
  HETGLM_FN T softmax_value(const T* z, int K, int y, T c, T* p) { return hetglm_softmax_value##S(z, K, y, c, p); } \
  HETGLM_FN T softmax_conjugate(const T* a, int K, int y, T c) { return hetglm_softmax_conjugate##S(a, K, y, c); } \
  HETGLM_FN hetglm_conj4##S scaled_conjugate(int l, T y, T z, T c, T f, T d) {                         \
    return hetglm_scaled_conjugate##S(l, y, z, c, f, d);                                              \
  }                                                                                                   \
  HETGLM_FN T shared_factor(hetglm_objective##S o, T v, T y, T c) { return hetglm_shared_factor##S(o, v, y, c); } \
  HETGLM_FN T coordinate_step(hetglm_objective##S o, T a, T r, T h, T y, T c, T sigma) {               \
    return hetglm_coordinate_step##S(o, a, r, h, y, c, sigma);                                        \
  }                                                                                                   \
  HETGLM_FN T coordinate_gap(hetglm_objective##S o, T a, T r, T y, T c) {                              \
    return hetglm_coordinate_gap##S(o, a, r, y, c);                                                   \
  }

HETGLM_MATH_OVERLOADS(double, _d)
HETGLM_MATH_OVERLOADS(float, _f)
#undef HETGLM_MATH_OVERLOADS

/// The objective scalars in precision T.
template <class T>
HETGLM_FN ObjectiveT<T> make_objective(int formulation, int loss, int penalty, T lambda, T eta, T bound, T inv_n,
                              T inv_lambda_n) {
  if constexpr (sizeof(T) == sizeof(double))
    return hetglm_objective_make_d(formulation, loss, penalty, lambda, eta, bound, inv_n, inv_lambda_n);
  else
    return hetglm_objective_make_f(formulation, loss, penalty, lambda, eta, bound, inv_n, inv_lambda_n);
}
}  // namespace math

/// Loss policy: phi(z) = c l(y, z) and its SDCA step. See glm_math.h for every formula.
template <Loss L>
struct LossPolicy {
  static constexpr Loss id = L;
  static constexpr int kid = static_cast<int>(L);
  template <class T> HETGLM_FN T value(T y, T z, T c) { return math::loss_value(kid, y, z, c); }
  template <class T> HETGLM_FN T derivative(T y, T z, T c) { return math::loss_derivative(kid, y, z, c); }
  template <class T> HETGLM_FN T curvature(T y, T z, T c) { return math::loss_curvature(kid, y, z, c); }
  /// value, derivative and curvature in one call (.value, .derivative, .curvature; one exponential for logistic).
  template <class T> HETGLM_FN auto terms(T y, T z, T c) { return math::loss_terms(kid, y, z, c); }
  template <class T> HETGLM_FN T conjugate(T y, T a, T c) { return math::loss_conjugate(kid, y, a, c); }
  template <class T> HETGLM_FN T dual_step(T y, T a, T z, T q, T c) { return math::dual_step(kid, y, a, z, q, c); }
  template <class T> HETGLM_FN T dual_gap(T y, T a, T z, T c) { return math::dual_gap(kid, y, a, z, c); }
  /// Coefficients of phi^*(t phi'(z)) <= k0 + k1 t + k2 t^2 + k3 t log t on [0, 1] (f = phi(z), d = phi'(z)).
  template <class T> HETGLM_FN auto scaled_conjugate(T y, T z, T c, T f, T d) {
    return math::scaled_conjugate(kid, y, z, c, f, d);
  }
};

/// Penalty policy: g(w) = lambda r(w), its Lipschitzed conjugate and the proximal coordinate step.
template <Penalty P>
struct PenaltyPolicy {
  static constexpr Penalty id = P;
  static constexpr int kid = static_cast<int>(P);
  template <class T> HETGLM_FN T value(T w, T lam, T eta) { return math::penalty_value(kid, w, lam, eta); }
  template <class T> HETGLM_FN T conjugate(T s, T lam, T eta, T b) { return math::penalty_conjugate(kid, s, lam, eta, b); }
  template <class T> HETGLM_FN T step(T w, T s, T h, T lam, T eta, T b) { return math::penalty_step(kid, w, s, h, lam, eta, b); }
  template <class T> HETGLM_FN T gap(T w, T s, T lam, T eta, T b) { return math::primal_gap(kid, w, s, lam, eta, b); }
};

}  // namespace hetglm
