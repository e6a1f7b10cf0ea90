// SPDX-License-Identifier: Apache-2.0
// The logistic loss's per-sample terms over many samples at once (private to solvers/src): the primal Newton
// solver's derivative pass and line search evaluate them for every sample of every iteration, where the scalar
// exp and log1p of the C library were about a fifth of a dense solve (bench/results/bandwidth_newton.md).
//
// The two elementary functions, e = exp(-|m|) and l = log1p(e) with m = -y z, are evaluated by the vectorizable
// loops of loss_batch.cpp; the loss formulas themselves are glm_math.h's (hetglm_logistic_terms_el, the one copy of
// the math). The results are the same bits on every x86-64 machine (the AVX2 + FMA clone and the generic one
// execute the same IEEE operations, with std::fma where a fused multiply-add is meant and no contraction
// elsewhere), and within 2 ulp of the C library's exp and log1p (LossBatch.* in tests/solvers/test_dense_kernels.cpp).
#pragma once
#include <cstdint>

namespace hetglm::batch {

/// e_k = exp(x_k) for x_k <= 0 (and NaN for NaN). Arguments below -708 give 0 (the true value is below 3.4e-308,
/// where the logistic loss's terms no longer change a double sum). Used by logistic_terms; exposed for the tests.
void exp_nonpositive(const double* x, double* e, std::int64_t n);

/// l_k = log1p(e_k) for e_k in [0, 1] (and NaN for NaN). Used by logistic_terms; exposed for the tests.
void log1p_unit(const double* e, double* l, std::int64_t n);

/// The logistic terms of samples k = 0 .. n - 1 at margins z_k with labels y_k and weights c_k: value_k = c_k
/// log(1 + exp(-y_k z_k)), derivative_k and curvature_k (glm_math.h hetglm_logistic_terms_el). Outputs may alias
/// no input.
void logistic_terms(const double* y, const double* z, const double* c, std::int64_t n, double* value,
                    double* derivative, double* curvature);

namespace detail {
/// The machine runs the AVX2 + FMA versions (the public functions above call them when it does).
bool has_avx2_fma();
/// The functions above with the version chosen by the caller (vector: AVX2 + FMA, on x86-64 machines that have it;
/// otherwise the generic loops): the tests compare the two bit for bit.
void exp_nonpositive(bool vector, const double* x, double* e, std::int64_t n);
void log1p_unit(bool vector, const double* e, double* l, std::int64_t n);
void logistic_terms(bool vector, const double* y, const double* z, const double* c, std::int64_t n, double* value,
                    double* derivative, double* curvature);
}  // namespace detail

}  // namespace hetglm::batch
