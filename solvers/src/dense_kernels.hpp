// SPDX-License-Identifier: Apache-2.0
// Vectorized kernels of the primal solvers on contiguous float32 data with float64 vectors (private to solvers/src):
// the column operations of primal coordinate descent on a full column (working_set.cpp, newton.cpp) and the row
// operations of the Newton solver on full rows. Data stay float32 (as stored) and every product and sum is float64.
//
// The build carries no -march flag, so the AVX2 + FMA versions are compiled with a target attribute and chosen at
// run time (__builtin_cpu_supports). The summation order is fixed by the kernel, not by the instruction set: element
// k goes to partial sum k mod 8, each partial sum is updated with a fused multiply-add, and the partial sums are
// added in a fixed tree, the tail last; the scalar fallback does exactly that with std::fma, so both give
// bit-identical results (the same model on every x86-64 machine).
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && !defined(HETGLM_NO_AVX2)
#include <immintrin.h>
#define HETGLM_DENSE_AVX2 1
#endif

namespace hetglm::dense {

namespace detail {
inline double combine8(const double* p) { return ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7])); }

inline double dot_scalar(const float* x, const double* g, std::int64_t n) {
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int l = 0; l < 8; ++l) p[l] = std::fma(double(x[k + l]), g[k + l], p[l]);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]), g[k], s);
  return s;
}
inline void axpy_scalar(double a, const float* x, double* g, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) g[k] = std::fma(a, double(x[k]), g[k]);
}
/// sum_k x_k^2 d_k z_k style products are not needed; dot2: (sum x_k g_k, sum x_k^2 h_k) in one pass.
inline void dot2_scalar(const float* x, const double* g, const double* h, std::int64_t n, double& sg, double& sh) {
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0}, q[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int l = 0; l < 8; ++l) {
      const double xv = double(x[k + l]);
      p[l] = std::fma(xv, g[k + l], p[l]);
      q[l] = std::fma(xv * xv, h[k + l], q[l]);
    }
  double a = combine8(p), b = combine8(q);
  for (; k < n; ++k) {
    const double xv = double(x[k]);
    a = std::fma(xv, g[k], a);
    b = std::fma(xv * xv, h[k], b);
  }
  sg = a;
  sh = b;
}

#if defined(HETGLM_DENSE_AVX2)
__attribute__((target("avx2,fma"))) inline double dot_avx2(const float* x, const double* g, std::int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 xf = _mm256_loadu_ps(x + k);
    a0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(xf)), _mm256_loadu_pd(g + k), a0);
    a1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1)), _mm256_loadu_pd(g + k + 4), a1);
  }
  alignas(32) double p[8];
  _mm256_store_pd(p, a0);
  _mm256_store_pd(p + 4, a1);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]), g[k], s);
  return s;
}
__attribute__((target("avx2,fma"))) inline void axpy_avx2(double a, const float* x, double* g, std::int64_t n) {
  const __m256d av = _mm256_set1_pd(a);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 xf = _mm256_loadu_ps(x + k);
    _mm256_storeu_pd(g + k, _mm256_fmadd_pd(av, _mm256_cvtps_pd(_mm256_castps256_ps128(xf)), _mm256_loadu_pd(g + k)));
    _mm256_storeu_pd(g + k + 4,
                     _mm256_fmadd_pd(av, _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1)), _mm256_loadu_pd(g + k + 4)));
  }
  for (; k < n; ++k) g[k] = std::fma(a, double(x[k]), g[k]);
}
__attribute__((target("avx2,fma"))) inline void dot2_avx2(const float* x, const double* g, const double* h,
                                                          std::int64_t n, double& sg, double& sh) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 xf = _mm256_loadu_ps(x + k);
    const __m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(xf)), x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
    a0 = _mm256_fmadd_pd(x0, _mm256_loadu_pd(g + k), a0);
    a1 = _mm256_fmadd_pd(x1, _mm256_loadu_pd(g + k + 4), a1);
    b0 = _mm256_fmadd_pd(_mm256_mul_pd(x0, x0), _mm256_loadu_pd(h + k), b0);
    b1 = _mm256_fmadd_pd(_mm256_mul_pd(x1, x1), _mm256_loadu_pd(h + k + 4), b1);
  }
  alignas(32) double p[8], q[8];
  _mm256_store_pd(p, a0);
  _mm256_store_pd(p + 4, a1);
  _mm256_store_pd(q, b0);
  _mm256_store_pd(q + 4, b1);
  double a = combine8(p), b = combine8(q);
  for (; k < n; ++k) {
    const double xv = double(x[k]);
    a = std::fma(xv, g[k], a);
    b = std::fma(xv * xv, h[k], b);
  }
  sg = a;
  sh = b;
}
inline bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}
#endif
}  // namespace detail

/// sum_k x_k g_k (x float32, g float64), in the fixed order above.
inline double dot(const float* x, const double* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx2()) return detail::dot_avx2(x, g, n);
#endif
  return detail::dot_scalar(x, g, n);
}
/// g_k += a x_k (one fused multiply-add per element).
inline void axpy(double a, const float* x, double* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx2()) return detail::axpy_avx2(a, x, g, n);
#endif
  detail::axpy_scalar(a, x, g, n);
}
/// (sum_k x_k g_k, sum_k x_k^2 h_k) in one pass over x.
inline void dot2(const float* x, const double* g, const double* h, std::int64_t n, double& sg, double& sh) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx2()) return detail::dot2_avx2(x, g, h, n, sg, sh);
#endif
  detail::dot2_scalar(x, g, h, n, sg, sh);
}

}  // namespace hetglm::dense
