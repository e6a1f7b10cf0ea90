// SPDX-License-Identifier: Apache-2.0
// C++ policy types over glm_math.h (the single copy of the math). Each policy is an empty, trivially
// copyable type whose static members forward to the C functions of the right precision; the loss id is a
// compile-time constant, so the switch inside the C function folds away after inlining.
// Callable from host code and (through HETGLM_FN) CUDA device code.
#pragma once
#include "hetglm/glm_math.h"

namespace hetglm {

enum class Loss : int {
  squared = HETGLM_LOSS_SQUARED,
  logistic = HETGLM_LOSS_LOGISTIC,
  hinge = HETGLM_LOSS_HINGE,
  squared_hinge = HETGLM_LOSS_SQUARED_HINGE,
};

enum class Penalty : int {
  l2 = HETGLM_PENALTY_L2,
  l1 = HETGLM_PENALTY_L1,
  elastic_net = HETGLM_PENALTY_ELASTIC_NET,
};

namespace math {
// Precision dispatch: one overload per precision, forwarding to the C functions.
#define HETGLM_MATH_OVERLOADS(T, S)                                                                   \
  HETGLM_FN T loss_value(int l, T y, T z, T c) { return hetglm_loss_value##S(l, y, z, c); }           \
  HETGLM_FN T loss_derivative(int l, T y, T z, T c) { return hetglm_loss_derivative##S(l, y, z, c); } \
  HETGLM_FN T loss_curvature(int l, T y, T z, T c) { return hetglm_loss_curvature##S(l, y, z, c); }   \
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
  HETGLM_FN T primal_gap(int p, T w, T s, T lam, T eta, T b) { return hetglm_primal_gap##S(p, w, s, lam, eta, b); }

HETGLM_MATH_OVERLOADS(double, _d)
HETGLM_MATH_OVERLOADS(float, _f)
#undef HETGLM_MATH_OVERLOADS
}  // namespace math

/// Loss policy: phi(z) = c l(y, z) and its SDCA step. See glm_math.h for every formula.
template <Loss L>
struct LossPolicy {
  static constexpr Loss id = L;
  static constexpr int kid = static_cast<int>(L);
  template <class T> HETGLM_FN T value(T y, T z, T c) { return math::loss_value(kid, y, z, c); }
  template <class T> HETGLM_FN T derivative(T y, T z, T c) { return math::loss_derivative(kid, y, z, c); }
  template <class T> HETGLM_FN T curvature(T y, T z, T c) { return math::loss_curvature(kid, y, z, c); }
  template <class T> HETGLM_FN T conjugate(T y, T a, T c) { return math::loss_conjugate(kid, y, a, c); }
  template <class T> HETGLM_FN T dual_step(T y, T a, T z, T q, T c) { return math::dual_step(kid, y, a, z, q, c); }
  template <class T> HETGLM_FN T dual_gap(T y, T a, T z, T c) { return math::dual_gap(kid, y, a, z, c); }
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

/// True for the losses whose labels are converted to -1/+1.
constexpr bool is_classification(Loss l) { return l != Loss::squared; }

}  // namespace hetglm
