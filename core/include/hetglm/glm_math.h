/* SPDX-License-Identifier: Apache-2.0
 *
 * glm_math.h: THE one copy of hetglm's scalar math: the table of losses and penalties, their values,
 * derivatives and conjugates, the coordinate kernel (one coordinate's new value) and the per-coordinate gap.
 *
 * Written as C-compatible inline functions so that the same text compiles as
 *   - host C++ (g++/clang),                       HETGLM_FN = static inline
 *   - CUDA (nvcc),                                 HETGLM_FN = static __host__ __device__ inline
 *   - OpenCL C (prepended to the program source),  HETGLM_FN = static inline (no fp64 unless
 *                                                  HETGLM_OPENCL_FP64 is defined)
 *   - Vitis HLS C++14 (no heap, no recursion, no exceptions).
 * The functions are generated once per precision by including glm_math_impl.h twice: names end in
 * _d (double) and _f (float). C++ code uses the wrappers in losses.hpp.
 *
 * Problem (docs/conventions.md, "Objective and scaling"; Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate Ascent
 * Methods for Regularized Loss Minimization", JMLR 14, 2013):
 *   P(w) = (1/n) sum_i c_i l(y_i, x_i.w) + lambda R(w)
 * in the primal-dual form  min_alpha f(A alpha) + sum_i g_i(alpha_i)  with shared vector v = A alpha:
 *   dual   (SDCA; coordinates = samples)  v = sum_i alpha_i x_i, w = v / (lambda n),
 *          margin u_i = x_i.w = r / (lambda n) with r = <x_i, v>,
 *          step   argmax_a' -phi^*(-a') - u (a' - a) - q/2 (a' - a)^2,  q = sigma' ||x_i||^2 / (lambda n),
 *          gap    (1/n) (phi(u) + phi^*(-a) + a u) >= 0 (Fenchel-Young);
 *   primal (CD; coordinates = features)   v = X w,
 *          gradient s_j = <x^(j), grad f(v)> = r / n with r = sum_k x_kj phi_k'(v_k),
 *          step   argmin_w' s (w' - w) + H/2 (w' - w)^2 + g(w'),  H = sigma' H_j (H_j bounds the curvature),
 *          gap    w s + g(w) + g^*(-s) >= 0,
 *          L1 parts Lipschitzed: |w| <= B = f(0) / (lambda eta), so g^*(s) = B max(0, |s| - lambda eta)
 *          (Duenner, Forte, Takac, Jaggi, "Primal-Dual Rates and Certificates", ICML 2016).
 * Derivations: docs/math.md; the algorithms that call the kernel: docs/algorithms.md.
 *
 * Adding a loss: one row in HETGLM_LOSS_TABLE below, its five functions in glm_math_impl.h, and a model row in
 * solvers/include/hetglm/solvers/objective.hpp (docs/adding-a-loss.md). Everything else (the C and C++ ids, the
 * dispatch switches, the solver instantiations, the device kernels) follows from the table.
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

/* ------------------------------------------------------------------------------------------------ the tables */

/* One row per loss: X(ID, name, id, L, DUAL, PRIMAL, E)
 *   ID      the C id HETGLM_LOSS_<ID>
 *   name    the suffix of its functions hetglm_<name>_* (glm_math_impl.h) and the C++ enumerator Loss::name
 *   id      the stable integer (device kernels and the FPGA ABI receive it)
 *   L       the curvature bound sup_z phi''(z) / c (the smoothness constant; 0 for a non-smooth loss)
 *   DUAL    1 when the loss has an SDCA (dual) step
 *   PRIMAL  1 when the loss is smooth, so that primal coordinate descent and Newton apply
 *   E       a context argument passed through to X (see HETGLM_LOSS_TABLE) */
#define HETGLM_LOSS_ROWS(X, E)                           \
  X(SQUARED, squared, 0, 1.0, 1, 1, E)                   \
  X(LOGISTIC, logistic, 1, 0.25, 1, 1, E)                \
  X(HINGE, hinge, 2, 0.0, 1, 0, E)                       \
  X(SQUARED_HINGE, squared_hinge, 3, 2.0, 1, 1, E)    \
  X(HUBER, huber, 4, 1.0, 1, 1, E)
/* HETGLM_LOSS_TABLE(X) calls X once per row; the seventh argument E is empty (HETGLM_LOSS_ROWS passes a context,
 * as HETGLM_FOR_EACH_FORM in forms.hpp does). */
#define HETGLM_LOSS_TABLE(X) HETGLM_LOSS_ROWS(X, )

/* One row per penalty g(w) = lambda r(w): X(ID, name, id, L1PART, E)
 *   L1PART  1 when r has an |w| part (soft-thresholding; the Lipschitzed conjugate needs the bound B)
 *   E       a context argument, as for the losses */
#define HETGLM_PENALTY_ROWS(X, E)       \
  X(L2, l2, 0, 0, E)                    \
  X(L1, l1, 1, 1, E)                    \
  X(ELASTIC_NET, elastic_net, 2, 1, E)
#define HETGLM_PENALTY_TABLE(X) HETGLM_PENALTY_ROWS(X, )

/* The C ids: HETGLM_LOSS_SQUARED = 0, ...; HETGLM_PENALTY_L2 = 0, ...; the formulations. */
#define HETGLM_LOSS_ENUM_(ID, name, id, L, DUAL, PRIMAL, E) HETGLM_LOSS_##ID = id,
#define HETGLM_PENALTY_ENUM_(ID, name, id, L1PART, E) HETGLM_PENALTY_##ID = id,
enum hetglm_loss_id { HETGLM_LOSS_TABLE(HETGLM_LOSS_ENUM_) HETGLM_LOSS_COUNT };
enum hetglm_penalty_id { HETGLM_PENALTY_TABLE(HETGLM_PENALTY_ENUM_) HETGLM_PENALTY_COUNT };
#undef HETGLM_LOSS_ENUM_
#undef HETGLM_PENALTY_ENUM_
/* Formulation ids: coordinates are samples (dual, SDCA) or features (primal, CD). */
enum hetglm_formulation_id { HETGLM_FORM_DUAL = 0, HETGLM_FORM_PRIMAL = 1 };

#define HETGLM_CAT_(a, b) a##b
#define HETGLM_CAT(a, b) HETGLM_CAT_(a, b)
/* HETGLM_IF(flag)(code): code when flag is 1, nothing when 0 (for the table's flag columns). */
#define HETGLM_IF(flag) HETGLM_CAT(HETGLM_IF_, flag)
#define HETGLM_IF_1(...) __VA_ARGS__
#define HETGLM_IF_0(...)

/* ----------------------------------------------------------------------------------- the two precisions */

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
