/* SPDX-License-Identifier: Apache-2.0
 *
 * glm_math.h: THE one copy of hetglm's scalar math (losses, penalties, coordinate steps, gaps).
 *
 * Written as C-compatible inline functions so that the same text compiles as
 *   - host C++ (g++/clang),                       HETGLM_FN = static inline
 *   - CUDA (nvcc),                                 HETGLM_FN = static __host__ __device__ inline
 *   - OpenCL C (prepended to the program source),  HETGLM_FN = static inline (no fp64 unless
 *                                                  HETGLM_OPENCL_FP64 is defined)
 *   - Vitis HLS C++14 (no heap, no recursion, no exceptions).
 * The functions are generated once per precision by including glm_math_impl.h twice: names end in
 * _d (double) and _f (float). C++ code uses the wrappers in losses.hpp, never these names directly.
 *
 * Problem (conventions.md; Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate Ascent", JMLR 2013):
 *   P(w) = (1/n) sum_i c_i l(y_i, x_i.w) + lambda R(w)
 * Per-sample weighted loss phi_i(z) = c_i l(y_i, z), with
 *   squared        l = 1/2 (z - y)^2
 *   logistic       l = log(1 + exp(-y z))                       y in {-1, +1}
 *   hinge          l = max(0, 1 - y z)                          y in {-1, +1}
 *   squared hinge  l = max(0, 1 - y z)^2  (LIBLINEAR -s 1)      y in {-1, +1}
 * Dual (SDCA) coordinate i, shared vector v = sum_i alpha_i x_i, w = v / (lambda n):
 *   phi_i^*(-a) is the conjugate at -a; with b = y a (classification) the domains are
 *   hinge and logistic b in [0, c], squared hinge b >= 0, squared loss a in R.
 *   dual step: argmax_a' -phi^*(-a') - z (a' - a) - q/2 (a' - a)^2,  z = x_i.w,
 *              q = sigma' ||x_i||^2 / (lambda n)   (sigma' = 1 sequentially; CoCoA+ scaling otherwise)
 *   dual gap term: phi(z) + phi^*(-a) + a z >= 0   (Fenchel-Young), total gap = (1/n) sum of terms.
 * Primal coordinate j (penalties g(w) = lambda r(w), r = w^2/2 | |w| | eta|w| + (1-eta)/2 w^2):
 *   s = <x^(j), grad f(v)>, H = curvature of f along the coordinate (times sigma'),
 *   prox step: argmin_w' s (w' - w) + H/2 (w' - w)^2 + g(w'), L1 part clipped to |w'| <= B,
 *   primal gap term: w s + g(w) + g^*(-s) >= 0, with the Lipschitzed L1 conjugate
 *   g^*(s) = B max(0, |s| - lambda eta) (Duenner, Forte, Takac, Jaggi, ICML 2016, "Primal-Dual Rates
 *   and Certificates"), B = f(0)/lambda, and for eta < 1 the exact elastic-net conjugate
 *   max(0, |s| - lambda eta)^2 / (2 lambda (1 - eta)).
 */
#ifndef HETGLM_GLM_MATH_H
#define HETGLM_GLM_MATH_H

#if defined(__CUDACC__)
#define HETGLM_FN static __host__ __device__ inline
#else
#define HETGLM_FN static inline
#endif

#if !defined(__OPENCL_VERSION__)
#include <math.h>
#endif

/* Loss identifiers (stable: stored nowhere, but shared by every device). */
#define HETGLM_LOSS_SQUARED 0
#define HETGLM_LOSS_LOGISTIC 1
#define HETGLM_LOSS_HINGE 2
#define HETGLM_LOSS_SQUARED_HINGE 3
/* Penalty identifiers. */
#define HETGLM_PENALTY_L2 0
#define HETGLM_PENALTY_L1 1
#define HETGLM_PENALTY_ELASTIC_NET 2

#define HETGLM_CAT_(a, b) a##b
#define HETGLM_CAT(a, b) HETGLM_CAT_(a, b)

#if !defined(__OPENCL_VERSION__) || defined(HETGLM_OPENCL_FP64)
#define HETGLM_REAL double
#define HETGLM_SFX _d
#define HETGLM_NEWTON_TOL 1e-13
#define HETGLM_NEWTON_MAXIT 60
#include "glm_math_impl.h"
#undef HETGLM_REAL
#undef HETGLM_SFX
#undef HETGLM_NEWTON_TOL
#undef HETGLM_NEWTON_MAXIT
#endif

#define HETGLM_REAL float
#define HETGLM_SFX _f
#define HETGLM_NEWTON_TOL 1e-6f
#define HETGLM_NEWTON_MAXIT 40
#include "glm_math_impl.h"
#undef HETGLM_REAL
#undef HETGLM_SFX
#undef HETGLM_NEWTON_TOL
#undef HETGLM_NEWTON_MAXIT

#endif /* HETGLM_GLM_MATH_H */
