// SPDX-License-Identifier: Apache-2.0
// The logistic terms over many samples (loss_batch.hpp). This file is compiled with -ffp-contract=off
// (solvers/CMakeLists.txt): every fused multiply-add is an explicit std::fma, so the AVX2 + FMA version and the
// generic one compute the same IEEE operations and give the same bits.
#include "loss_batch.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "hetglm/glm_math.h"

namespace hetglm::batch {
namespace {

constexpr double kLog2e = 0x1.71547652b82fep0;
constexpr double kLn2Hi = 0x1.62e42feep-1;        // ln 2 split as in fdlibm: k ln2_hi is exact for |k| < 2^11
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kShift = 0x1.8p52;               // x + kShift rounds x to an integer held in the low bits
constexpr double kExpMin = -708.0;                // exp(-708) = 3.3e-308: the smallest argument kept
constexpr std::int64_t kBlock = 256;              // samples per block of the two-stage loops (on the stack)

// exp(x), x <= 0: x = k ln 2 + r with |r| <= ln2 / 2, exp(r) by its Taylor polynomial of degree 13 (remainder
// r^14 / 14! < 5e-18), times 2^k built in the exponent bits (k >= -1022: a normal number).
[[gnu::always_inline]] inline double exp_np(double x) {
  const double xc = x < kExpMin ? kExpMin : x;
  const double kd = xc * kLog2e + kShift;
  const double k = kd - kShift;
  const double r = (xc - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0 / 6227020800.0;                  // 1/13!
  p = std::fma(p, r, 1.0 / 479001600.0);          // 1/12!
  p = std::fma(p, r, 1.0 / 39916800.0);
  p = std::fma(p, r, 1.0 / 3628800.0);
  p = std::fma(p, r, 1.0 / 362880.0);
  p = std::fma(p, r, 1.0 / 40320.0);
  p = std::fma(p, r, 1.0 / 5040.0);
  p = std::fma(p, r, 1.0 / 720.0);
  p = std::fma(p, r, 1.0 / 120.0);
  p = std::fma(p, r, 1.0 / 24.0);
  p = std::fma(p, r, 1.0 / 6.0);
  p = std::fma(p, r, 0.5);
  p = std::fma(p, r, 1.0);
  p = std::fma(p, r, 1.0);
  const std::int64_t bits = (std::bit_cast<std::int64_t>(kd) - std::bit_cast<std::int64_t>(kShift) + 1023) << 52;
  const double y = p * std::bit_cast<double>(bits);
  return x < kExpMin ? 0.0 : y;
}

// log1p(e), 0 <= e <= 1: with f = e (e <= 1/2) or f = (e - 1)/2 (exact; then 1 + e = 2 (1 + f)), log(1 + f) =
// 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ...), s = f / (2 + f), |s| <= 1/5: twelve terms (the next < 1e-18).
[[gnu::always_inline]] inline double log1p_u(double e) {
  const bool big = e > 0.5;
  const double f = big ? (e - 1.0) * 0.5 : e;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 25;
  p = std::fma(p, z, 1.0 / 23);
  p = std::fma(p, z, 1.0 / 21);
  p = std::fma(p, z, 1.0 / 19);
  p = std::fma(p, z, 1.0 / 17);
  p = std::fma(p, z, 1.0 / 15);
  p = std::fma(p, z, 1.0 / 13);
  p = std::fma(p, z, 1.0 / 11);
  p = std::fma(p, z, 1.0 / 9);
  p = std::fma(p, z, 1.0 / 7);
  p = std::fma(p, z, 1.0 / 5);
  p = std::fma(p, z, 1.0 / 3);
  const double s2 = s + s;
  const double lf = std::fma(s2, z * p, s2);
  return big ? (lf + kLn2Lo) + kLn2Hi : lf;
}

[[gnu::always_inline]] inline void exp_body(const double* __restrict x, double* __restrict e, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) e[k] = exp_np(x[k]);
}
[[gnu::always_inline]] inline void log1p_body(const double* __restrict e, double* __restrict l, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) l[k] = log1p_u(e[k]);
}
[[gnu::always_inline]] inline void terms_body(const double* __restrict y, const double* __restrict z,
                                              const double* __restrict c, std::int64_t n, double* __restrict value,
                                              double* __restrict derivative, double* __restrict curvature) {
  alignas(64) double a[kBlock], e[kBlock], l[kBlock];
  for (std::int64_t lo = 0; lo < n; lo += kBlock) {
    const std::int64_t m = std::min(kBlock, n - lo);
    for (std::int64_t k = 0; k < m; ++k) {
      const double t = -y[lo + k] * z[lo + k];  // the margin m = -y z of hetglm_loss_terms
      a[k] = t > 0.0 ? -t : t;
    }
    for (std::int64_t k = 0; k < m; ++k) e[k] = exp_np(a[k]);
    for (std::int64_t k = 0; k < m; ++k) l[k] = log1p_u(e[k]);
    for (std::int64_t k = 0; k < m; ++k) {
      const hetglm_loss3_d r = hetglm_logistic_terms_el_d(y[lo + k], z[lo + k], c[lo + k], e[k], l[k]);
      value[lo + k] = r.value;
      derivative[lo + k] = r.derivative;
      curvature[lo + k] = r.curvature;
    }
  }
}

#if defined(__x86_64__)
#define HETGLM_BATCH_AVX2 [[gnu::target("avx2,fma")]]
HETGLM_BATCH_AVX2 void exp_avx2(const double* x, double* e, std::int64_t n) { exp_body(x, e, n); }
HETGLM_BATCH_AVX2 void log1p_avx2(const double* e, double* l, std::int64_t n) { log1p_body(e, l, n); }
HETGLM_BATCH_AVX2 void terms_avx2(const double* y, const double* z, const double* c, std::int64_t n, double* value,
                                  double* derivative, double* curvature) {
  terms_body(y, z, c, n, value, derivative, curvature);
}
#undef HETGLM_BATCH_AVX2
#endif

}  // namespace

namespace detail {
bool has_avx2_fma() {
#if defined(__x86_64__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
#else
  return false;
#endif
}
void exp_nonpositive(bool vector, const double* x, double* e, std::int64_t n) {
#if defined(__x86_64__)
  if (vector) return exp_avx2(x, e, n);
#endif
  (void)vector;
  exp_body(x, e, n);
}
void log1p_unit(bool vector, const double* e, double* l, std::int64_t n) {
#if defined(__x86_64__)
  if (vector) return log1p_avx2(e, l, n);
#endif
  (void)vector;
  log1p_body(e, l, n);
}
void logistic_terms(bool vector, const double* y, const double* z, const double* c, std::int64_t n, double* value,
                    double* derivative, double* curvature) {
#if defined(__x86_64__)
  if (vector) return terms_avx2(y, z, c, n, value, derivative, curvature);
#endif
  (void)vector;
  terms_body(y, z, c, n, value, derivative, curvature);
}
}  // namespace detail

void exp_nonpositive(const double* x, double* e, std::int64_t n) {
  detail::exp_nonpositive(detail::has_avx2_fma(), x, e, n);
}
void log1p_unit(const double* e, double* l, std::int64_t n) { detail::log1p_unit(detail::has_avx2_fma(), e, l, n); }
void logistic_terms(const double* y, const double* z, const double* c, std::int64_t n, double* value,
                    double* derivative, double* curvature) {
  detail::logistic_terms(detail::has_avx2_fma(), y, z, c, n, value, derivative, curvature);
}

}  // namespace hetglm::batch
