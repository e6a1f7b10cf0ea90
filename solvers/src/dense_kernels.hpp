// SPDX-License-Identifier: Apache-2.0
// Vectorized kernels of the primal solvers on contiguous float32 data with float64 vectors (private to solvers/src):
// the column operations of primal coordinate descent on a full column (working_set.cpp, newton.cpp) and the row
// operations of the Newton solver on full rows. Data stay float32 (as stored) and every product and sum is float64,
// except in the float32 kernels at the end (axpy_rows_f32, sq_rows_f32), which the Newton solver uses for sums that
// no certificate reads: X^T (D X p) of its conjugate gradients and its diagonal preconditioner (newton.cpp).
//
// The build carries no -march flag, so the AVX2 + FMA and the AVX-512 versions are compiled with a target attribute
// and chosen at run time (__builtin_cpu_supports; AVX-512 first). The summation order is fixed by the kernel, not by
// the instruction set: element k goes to partial sum k mod 8, each partial sum is updated with a fused multiply-add,
// and the partial sums are added in a fixed tree, the tail last; the scalar fallback does exactly that with
// std::fma, so all three give bit-identical results (the same model on every x86-64 machine).
#pragma once
#include <algorithm>
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

inline double dot3_scalar(const float* x, const double* a, const double* b, std::int64_t n) {
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int l = 0; l < 8; ++l) p[l] = std::fma(double(x[k + l]) * a[k + l], b[k + l], p[l]);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]) * a[k], b[k], s);
  return s;
}

// Blocks of R rows (R <= 4) of a row-major float32 matrix with leading dimension ld: the same order per entry as R
// axpy calls row after row (so a block gives them bit-identically), with g loaded and stored once per block instead
// of once per row. For rows that the caller has just read (dot_rows): the rows' loads interleave here, which only
// costs where they come from memory.
template <int R>
inline void axpy_rows_scalar(const double* a, const float* x, std::int64_t ld, double* g, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) {
    double t = g[k];
    for (int r = 0; r < R; ++r) t = std::fma(a[r], double(x[r * ld + k]), t);
    g[k] = t;
  }
}

#if defined(HETGLM_DENSE_AVX2)
/// Four float32 values converted to float64 (one load and one conversion: no 256-bit load and extract).
__attribute__((target("avx2,fma"))) inline __m256d cvt4(const float* x) { return _mm256_cvtps_pd(_mm_loadu_ps(x)); }
__attribute__((target("avx2,fma"))) inline double dot_avx2(const float* x, const double* g, std::int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    a0 = _mm256_fmadd_pd(cvt4(x + k), _mm256_loadu_pd(g + k), a0);
    a1 = _mm256_fmadd_pd(cvt4(x + k + 4), _mm256_loadu_pd(g + k + 4), a1);
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
    _mm256_storeu_pd(g + k, _mm256_fmadd_pd(av, cvt4(x + k), _mm256_loadu_pd(g + k)));
    _mm256_storeu_pd(g + k + 4, _mm256_fmadd_pd(av, cvt4(x + k + 4), _mm256_loadu_pd(g + k + 4)));
  }
  for (; k < n; ++k) g[k] = std::fma(a, double(x[k]), g[k]);
}
__attribute__((target("avx2,fma"))) inline void dot2_avx2(const float* x, const double* g, const double* h,
                                                          std::int64_t n, double& sg, double& sh) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256d x0 = cvt4(x + k), x1 = cvt4(x + k + 4);
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
__attribute__((target("avx2,fma"))) inline double dot3_avx2(const float* x, const double* a, const double* b,
                                                          std::int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256d x0 = _mm256_mul_pd(cvt4(x + k), _mm256_loadu_pd(a + k));
    const __m256d x1 = _mm256_mul_pd(cvt4(x + k + 4), _mm256_loadu_pd(a + k + 4));
    a0 = _mm256_fmadd_pd(x0, _mm256_loadu_pd(b + k), a0);
    a1 = _mm256_fmadd_pd(x1, _mm256_loadu_pd(b + k + 4), a1);
  }
  alignas(32) double p[8];
  _mm256_store_pd(p, a0);
  _mm256_store_pd(p + 4, a1);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]) * a[k], b[k], s);
  return s;
}
/// dot_avx2 of R rows at once (row r at x + r ld): the rows' dependent chains of multiply-adds interleaved, each
/// row's partial sums and combine exactly dot_avx2's, so out[r] = dot_avx2(x + r ld, g, n) bit for bit.
template <int R>
__attribute__((target("avx2,fma"))) inline void dot_rows_avx2(const float* x, std::int64_t ld, const double* g,
                                                              std::int64_t n, double* out) {
  __m256d a0[R], a1[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm256_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256d g0 = _mm256_loadu_pd(g + k), g1 = _mm256_loadu_pd(g + k + 4);
    for (int r = 0; r < R; ++r) {
      a0[r] = _mm256_fmadd_pd(cvt4(x + r * ld + k), g0, a0[r]);
      a1[r] = _mm256_fmadd_pd(cvt4(x + r * ld + k + 4), g1, a1[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    alignas(32) double p[8];
    _mm256_store_pd(p, a0[r]);
    _mm256_store_pd(p + 4, a1[r]);
    double s = combine8(p);
    for (std::int64_t j = k; j < n; ++j) s = std::fma(double(x[r * ld + j]), g[j], s);
    out[r] = s;
  }
}
template <int R>
__attribute__((target("avx2,fma"))) inline void axpy_rows_avx2(const double* a, const float* x, std::int64_t ld,
                                                               double* g, std::int64_t n) {
  __m256d av[R];
  for (int r = 0; r < R; ++r) av[r] = _mm256_set1_pd(a[r]);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256d g0 = _mm256_loadu_pd(g + k), g1 = _mm256_loadu_pd(g + k + 4);
    for (int r = 0; r < R; ++r) {
      g0 = _mm256_fmadd_pd(av[r], cvt4(x + r * ld + k), g0);
      g1 = _mm256_fmadd_pd(av[r], cvt4(x + r * ld + k + 4), g1);
    }
    _mm256_storeu_pd(g + k, g0);
    _mm256_storeu_pd(g + k + 4, g1);
  }
  axpy_rows_scalar<R>(a, x + k, ld, g + k, n - k);  // the tail: elementwise, the same fma per entry
}
inline bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}
// AVX-512 versions (one 512-bit register holds the 8 partial sums that the AVX2 code keeps in two: lane l is still
// partial sum k mod 8 = l, and the combine is the same, so the bits are the same as the AVX2 and scalar versions).
// They halve the conversions and multiply-adds per element, which is what bounds the AVX2 row kernels on
// machines that have AVX-512 (bench/results/bandwidth_newton.md).
// _mm512_cvtps_pd itself starts from _mm512_undefined_pd, which GCC 12 reports as maybe uninitialized once inlined;
// the zero-masked form with every lane selected is the same conversion.
__attribute__((target("avx512f"))) inline __m512d cvt8(__m256 x) { return _mm512_maskz_cvtps_pd(__mmask8(0xFF), x); }
__attribute__((target("avx512f"))) inline double dot_avx512(const float* x, const double* g, std::int64_t n) {
  __m512d a = _mm512_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) a = _mm512_fmadd_pd(cvt8(_mm256_loadu_ps(x + k)), _mm512_loadu_pd(g + k), a);
  alignas(64) double p[8];
  _mm512_store_pd(p, a);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]), g[k], s);
  return s;
}
__attribute__((target("avx512f"))) inline void axpy_avx512(double a, const float* x, double* g, std::int64_t n) {
  const __m512d av = _mm512_set1_pd(a);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    _mm512_storeu_pd(g + k, _mm512_fmadd_pd(av, cvt8(_mm256_loadu_ps(x + k)), _mm512_loadu_pd(g + k)));
  for (; k < n; ++k) g[k] = std::fma(a, double(x[k]), g[k]);
}
__attribute__((target("avx512f"))) inline void dot2_avx512(const float* x, const double* g, const double* h,
                                                            std::int64_t n, double& sg, double& sh) {
  __m512d a = _mm512_setzero_pd(), b = _mm512_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d xd = cvt8(_mm256_loadu_ps(x + k));
    a = _mm512_fmadd_pd(xd, _mm512_loadu_pd(g + k), a);
    b = _mm512_fmadd_pd(_mm512_mul_pd(xd, xd), _mm512_loadu_pd(h + k), b);
  }
  alignas(64) double p[8], q[8];
  _mm512_store_pd(p, a);
  _mm512_store_pd(q, b);
  double s = combine8(p), t = combine8(q);
  for (; k < n; ++k) {
    const double xv = double(x[k]);
    s = std::fma(xv, g[k], s);
    t = std::fma(xv * xv, h[k], t);
  }
  sg = s;
  sh = t;
}
__attribute__((target("avx512f"))) inline double dot3_avx512(const float* x, const double* a, const double* b,
                                                              std::int64_t n) {
  __m512d s8 = _mm512_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    s8 = _mm512_fmadd_pd(_mm512_mul_pd(cvt8(_mm256_loadu_ps(x + k)), _mm512_loadu_pd(a + k)),
                         _mm512_loadu_pd(b + k), s8);
  alignas(64) double p[8];
  _mm512_store_pd(p, s8);
  double s = combine8(p);
  for (; k < n; ++k) s = std::fma(double(x[k]) * a[k], b[k], s);
  return s;
}
/// dot_avx512 of R rows at once, bit for bit (as dot_rows_avx2).
template <int R>
__attribute__((target("avx512f"))) inline void dot_rows_avx512(const float* x, std::int64_t ld, const double* g,
                                                                std::int64_t n, double* out) {
  __m512d a[R];
  for (int r = 0; r < R; ++r) a[r] = _mm512_setzero_pd();
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d g8 = _mm512_loadu_pd(g + k);
    for (int r = 0; r < R; ++r) a[r] = _mm512_fmadd_pd(cvt8(_mm256_loadu_ps(x + r * ld + k)), g8, a[r]);
  }
  for (int r = 0; r < R; ++r) {
    alignas(64) double p[8];
    _mm512_store_pd(p, a[r]);
    double s = combine8(p);
    for (std::int64_t j = k; j < n; ++j) s = std::fma(double(x[r * ld + j]), g[j], s);
    out[r] = s;
  }
}
template <int R>
__attribute__((target("avx512f"))) inline void axpy_rows_avx512(const double* a, const float* x, std::int64_t ld,
                                                                 double* g, std::int64_t n) {
  __m512d av[R];
  for (int r = 0; r < R; ++r) av[r] = _mm512_set1_pd(a[r]);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m512d g8 = _mm512_loadu_pd(g + k);
    for (int r = 0; r < R; ++r) g8 = _mm512_fmadd_pd(av[r], cvt8(_mm256_loadu_ps(x + r * ld + k)), g8);
    _mm512_storeu_pd(g + k, g8);
  }
  axpy_rows_scalar<R>(a, x + k, ld, g + k, n - k);
}
inline bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
  }();
  return yes;
}
#endif
}  // namespace detail

/// sum_k x_k g_k (x float32, g float64), in the fixed order above.
inline double dot(const float* x, const double* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx512()) return detail::dot_avx512(x, g, n);
  if (detail::has_avx2()) return detail::dot_avx2(x, g, n);
#endif
  return detail::dot_scalar(x, g, n);
}
/// g_k += a x_k (one fused multiply-add per element).
inline void axpy(double a, const float* x, double* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx512()) return detail::axpy_avx512(a, x, g, n);
  if (detail::has_avx2()) return detail::axpy_avx2(a, x, g, n);
#endif
  detail::axpy_scalar(a, x, g, n);
}
/// (sum_k x_k g_k, sum_k x_k^2 h_k) in one pass over x.
inline void dot2(const float* x, const double* g, const double* h, std::int64_t n, double& sg, double& sh) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx512()) return detail::dot2_avx512(x, g, h, n, sg, sh);
  if (detail::has_avx2()) return detail::dot2_avx2(x, g, h, n, sg, sh);
#endif
  detail::dot2_scalar(x, g, h, n, sg, sh);
}



/// sum_k x_k a_k b_k (x float32; x_k a_k rounded once, then fused into the fixed-order sum).
inline double dot3(const float* x, const double* a, const double* b, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (detail::has_avx512()) return detail::dot3_avx512(x, a, b, n);
  if (detail::has_avx2()) return detail::dot3_avx2(x, a, b, n);
#endif
  return detail::dot3_scalar(x, a, b, n);
}

/// Rows per block of the row kernels below.
inline constexpr int kBlockRows = 4;

namespace detail {
template <int R>
inline void axpy_rows_r(const double* a, const float* x, std::int64_t ld, double* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (has_avx512()) return axpy_rows_avx512<R>(a, x, ld, g, n);
  if (has_avx2()) return axpy_rows_avx2<R>(a, x, ld, g, n);
#endif
  axpy_rows_scalar<R>(a, x, ld, g, n);
}
}  // namespace detail

namespace detail {
template <int R>
inline void dot_rows_r(const float* x, std::int64_t ld, const double* g, std::int64_t n, double* out) {
#if defined(HETGLM_DENSE_AVX2)
  if (has_avx512()) return dot_rows_avx512<R>(x, ld, g, n, out);
  if (has_avx2()) return dot_rows_avx2<R>(x, ld, g, n, out);
#endif
  for (int r = 0; r < R; ++r) out[r] = dot_scalar(x + r * ld, g, n);
}
}  // namespace detail

/// out[r] = dot(x + r ld, g, n) for the `rows` rows of a row-major block, bit for bit: the rows' chains of
/// multiply-adds interleaved (8 entries of each row in turn, one load of g for all), so that a row's dependent
/// additions no longer bound the block. Interleaved, the rows are 4 streams of loads; the Newton solver's passes
/// prefetch their blocks ahead in software (newton.cpp for_row_blocks), without which the AMD EPYC of
/// bench/results/bandwidth_newton.md read interleaved rows at 1.5-2.3x the time of the same bytes. With the prefetch,
/// on an Intel Xeon host, the solver's pass on 50,000 x 500 took 4.22 -> 3.64 ms at 2 threads and 9.46 -> 8.50 at 1
/// interleaved (row after row -> interleaved; 400,000 x 100, 100 entries a row: 7.72 -> 7.63 and 15.33 -> 15.20).
inline void dot_rows(const float* x, std::int64_t ld, int rows, const double* g, std::int64_t n, double* out) {
  switch (rows) {
    case 1: return detail::dot_rows_r<1>(x, ld, g, n, out);
    case 2: return detail::dot_rows_r<2>(x, ld, g, n, out);
    case 3: return detail::dot_rows_r<3>(x, ld, g, n, out);
    default: return detail::dot_rows_r<4>(x, ld, g, n, out);
  }
}
/// g_k += a_r x_{r,k} for r = 0 .. rows - 1 in order (= axpy(a_r, x + r ld, g, n) row after row, bit-identically).
inline void axpy_rows(const double* a, const float* x, std::int64_t ld, int rows, double* g, std::int64_t n) {
  switch (rows) {
    case 1: return detail::axpy_rows_r<1>(a, x, ld, g, n);
    case 2: return detail::axpy_rows_r<2>(a, x, ld, g, n);
    case 3: return detail::axpy_rows_r<3>(a, x, ld, g, n);
    default: return detail::axpy_rows_r<4>(a, x, ld, g, n);
  }
}

// ---- float32 sums over rows: g_k += a_r x_{r,k} and h_k += (c_r x_{r,k}) x_{r,k} with float32 factors and
// float32 sums, for blocks of rows that the caller has just read (in the L1 cache). No conversion and 8 entries per
// instruction: a quarter of the float64 kernels' vector work per entry (measured on the AMD EPYC of
// bench/results/bandwidth_newton.md: the conjugate gradients' fused pass 1.5-1.65x the read time of its bytes instead
// of 1.6-1.9x, the derivative pass 1.8-1.9x instead of 2.1-2.4x). The Newton solver adds these sums into its float64
// buffers every 256 rows, so each carries a relative error of about 1e-5 at most, in sums that only steer the
// conjugate gradients (newton.cpp). Each entry gets one fused multiply-add per row in row order, so the scalar code
// (std::fma on floats) and the AVX2 code give the same bits; machines with AVX-512 run the AVX2 code (these passes
// are bound by the memory, not by the vector width).
namespace detail {
template <int R>
inline void axpy_rows_f32_scalar(const float* a, const float* x, std::int64_t ld, float* g, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) {
    float t = g[k];
    for (int r = 0; r < R; ++r) t = std::fma(a[r], x[r * ld + k], t);
    g[k] = t;
  }
}
template <int R>
inline void sq_rows_f32_scalar(const float* c, const float* x, std::int64_t ld, float* h, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) {
    float t = h[k];
    for (int r = 0; r < R; ++r) t = std::fma(c[r] * x[r * ld + k], x[r * ld + k], t);
    h[k] = t;
  }
}
#if defined(HETGLM_DENSE_AVX2)
template <int R>
__attribute__((target("avx2,fma"))) inline void sq_rows_f32_avx2(const float* c, const float* x, std::int64_t ld,
                                                                 float* h, std::int64_t n) {
  __m256 cv[R];
  for (int r = 0; r < R; ++r) cv[r] = _mm256_set1_ps(c[r]);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256 t = _mm256_loadu_ps(h + k);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * ld + k);
      t = _mm256_fmadd_ps(_mm256_mul_ps(cv[r], xv), xv, t);
    }
    _mm256_storeu_ps(h + k, t);
  }
  sq_rows_f32_scalar<R>(c, x + k, ld, h + k, n - k);
}
template <int R>
__attribute__((target("avx2,fma"))) inline void axpy_rows_f32_avx2(const float* a, const float* x, std::int64_t ld,
                                                                   float* g, std::int64_t n) {
  __m256 av[R];
  for (int r = 0; r < R; ++r) av[r] = _mm256_set1_ps(a[r]);
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256 t = _mm256_loadu_ps(g + k);
    for (int r = 0; r < R; ++r) t = _mm256_fmadd_ps(av[r], _mm256_loadu_ps(x + r * ld + k), t);
    _mm256_storeu_ps(g + k, t);
  }
  axpy_rows_f32_scalar<R>(a, x + k, ld, g + k, n - k);
}
#endif
template <int R>
inline void axpy_rows_f32_r(const float* a, const float* x, std::int64_t ld, float* g, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (has_avx2()) return axpy_rows_f32_avx2<R>(a, x, ld, g, n);
#endif
  axpy_rows_f32_scalar<R>(a, x, ld, g, n);
}
template <int R>
inline void sq_rows_f32_r(const float* c, const float* x, std::int64_t ld, float* h, std::int64_t n) {
#if defined(HETGLM_DENSE_AVX2)
  if (has_avx2()) return sq_rows_f32_avx2<R>(c, x, ld, h, n);
#endif
  sq_rows_f32_scalar<R>(c, x, ld, h, n);
}
}  // namespace detail

/// g_k += a_r x_{r,k} in float32 for r = 0 .. rows - 1 in order (one fused multiply-add per entry).
inline void axpy_rows_f32(const float* a, const float* x, std::int64_t ld, int rows, float* g, std::int64_t n) {
  switch (rows) {
    case 1: return detail::axpy_rows_f32_r<1>(a, x, ld, g, n);
    case 2: return detail::axpy_rows_f32_r<2>(a, x, ld, g, n);
    case 3: return detail::axpy_rows_f32_r<3>(a, x, ld, g, n);
    default: return detail::axpy_rows_f32_r<4>(a, x, ld, g, n);
  }
}

/// h_k += (c_r x_{r,k}) x_{r,k} in float32 for r = 0 .. rows - 1 in order (c_r x rounded, then one fused
/// multiply-add per entry): the diagonal preconditioner's sums of the Newton solver.
inline void sq_rows_f32(const float* c, const float* x, std::int64_t ld, int rows, float* h, std::int64_t n) {
  switch (rows) {
    case 1: return detail::sq_rows_f32_r<1>(c, x, ld, h, n);
    case 2: return detail::sq_rows_f32_r<2>(c, x, ld, h, n);
    case 3: return detail::sq_rows_f32_r<3>(c, x, ld, h, n);
    default: return detail::sq_rows_f32_r<4>(c, x, ld, h, n);
  }
}

}  // namespace hetglm::dense
