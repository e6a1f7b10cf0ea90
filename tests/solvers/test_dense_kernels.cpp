// SPDX-License-Identifier: Apache-2.0
// The solvers' private dense kernels (solvers/src/dense_kernels.hpp), tested directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../../solvers/src/dense_kernels.hpp"
#include "../../solvers/src/loss_batch.hpp"
#include "hetglm/glm_math.h"

using namespace hetglm;

// The dense row kernels (solvers/src/dense_kernels.hpp): a block of rows gives bit-identically what one call per
// row gives (dot_rows = dot, axpy_rows = axpy row after row), for every block height and lengths
// with and without a tail; the scalar fallback, the AVX2 + FMA and the AVX-512 versions agree bit for bit (those
// this machine runs); and the values are the float64 products (within 1e-12 of a long-double sum).
TEST(DenseKernels, BlocksEqualRowsAndEveryInstructionSetGivesTheSameBits) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  for (const std::int64_t n : {1, 7, 8, 19, 64, 203}) {
    const std::int64_t ld = n + 3;
    std::vector<float> x(static_cast<std::size_t>(4 * ld));
    std::vector<double> p(n), a(4), b(4);
    for (float& v : x) v = static_cast<float>(g(rng));
    for (double& v : p) v = g(rng);
    for (double& v : a) v = g(rng);
    for (double& v : b) v = std::fabs(g(rng));
    for (int rows = 1; rows <= dense::kBlockRows; ++rows) {
      SCOPED_TRACE("n " + std::to_string(n) + " rows " + std::to_string(rows));
      double out[4];
      dense::dot_rows(x.data(), ld, rows, p.data(), n, out);
      std::vector<double> g1(p);
      dense::axpy_rows(a.data(), x.data(), ld, rows, g1.data(), n);
      std::vector<double> gr(p), gs(p);
      for (int r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * ld;
        EXPECT_EQ(out[r], dense::dot(xr, p.data(), n));
        long double ref = 0;
        for (std::int64_t k = 0; k < n; ++k) ref += (long double)xr[k] * p[k];
        EXPECT_NEAR(out[r], double(ref), 1e-12 * n);
        dense::axpy(a[r], xr, gr.data(), n);
        for (std::int64_t k = 0; k < n; ++k) gs[k] = std::fma(a[r], double(xr[k]), gs[k]);
      }
      EXPECT_EQ(g1, gr);
      EXPECT_EQ(g1, gs);
      // The scalar fallback (the order the vector code keeps): the same bits.
      for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], dense::detail::dot_scalar(x.data() + r * ld, p.data(), n));
      // Every instruction set this machine has (the dispatch takes AVX-512 first): the same bits as the scalar code.
      auto same_bits = [&]<int R>(std::integral_constant<int, R>, auto axpy_r) {
        std::vector<double> ga(p);
        axpy_r.template operator()<R>(a.data(), x.data(), ld, ga.data(), n);
        EXPECT_EQ(ga, gr);
      };
      // The interleaved row dots (dot_rows: the rows' chains side by side): each row the scalar order's bits.
      auto dots_same_bits = [&]<int R>(std::integral_constant<int, R>, auto dot_r) {
        double o[4] = {0, 0, 0, 0};
        dot_r.template operator()<R>(x.data(), ld, p.data(), n, o);
        for (int r = 0; r < R; ++r) EXPECT_EQ(o[r], dense::detail::dot_scalar(x.data() + r * ld, p.data(), n));
      };
      // check(height, kernel) at the block height `rows` (a template argument of the kernels).
      auto at_height = [&](auto check, auto kernel) {
        switch (rows) {
          case 1: return check(std::integral_constant<int, 1>{}, kernel);
          case 2: return check(std::integral_constant<int, 2>{}, kernel);
          case 3: return check(std::integral_constant<int, 3>{}, kernel);
          default: return check(std::integral_constant<int, 4>{}, kernel);
        }
      };
#if defined(HETGLM_DENSE_AVX2)
      if (dense::detail::has_avx2()) {
        at_height(same_bits, []<int R>(auto... z) { dense::detail::axpy_rows_avx2<R>(z...); });
        at_height(dots_same_bits, []<int R>(auto... z) { dense::detail::dot_rows_avx2<R>(z...); });
      }
      if (dense::detail::has_avx512()) {
        at_height(same_bits, []<int R>(auto... z) { dense::detail::axpy_rows_avx512<R>(z...); });
        at_height(dots_same_bits, []<int R>(auto... z) { dense::detail::dot_rows_avx512<R>(z...); });
      }
#endif
    }
    const double d3 = dense::dot3(x.data(), p.data(), p.data(), n);
    EXPECT_EQ(d3, dense::detail::dot3_scalar(x.data(), p.data(), p.data(), n));
    long double r3 = 0;
    for (std::int64_t k = 0; k < n; ++k) r3 += (long double)x[k] * p[k] * p[k];
    EXPECT_NEAR(d3, double(r3), 1e-12 * n * 10);
    // The column kernels: every instruction set against the scalar order, bit for bit.
    std::vector<double> h(p);
    for (double& v : h) v = std::fabs(v);
    double sg0, sh0;
    dense::detail::dot2_scalar(x.data(), p.data(), h.data(), n, sg0, sh0);
    std::vector<double> ax0(p);
    dense::detail::axpy_scalar(0.7, x.data(), ax0.data(), n);
    const double dt0 = dense::detail::dot_scalar(x.data(), p.data(), n);
    auto columns_agree = [&](auto dot_f, auto axpy_f, auto dot2_f, auto dot3_f) {
      EXPECT_EQ(dot_f(x.data(), p.data(), n), dt0);
      std::vector<double> ax(p);
      axpy_f(0.7, x.data(), ax.data(), n);
      EXPECT_EQ(ax, ax0);
      double sg, sh;
      dot2_f(x.data(), p.data(), h.data(), n, sg, sh);
      EXPECT_EQ(sg, sg0);
      EXPECT_EQ(sh, sh0);
      EXPECT_EQ(dot3_f(x.data(), p.data(), p.data(), n), dense::detail::dot3_scalar(x.data(), p.data(), p.data(), n));
    };
    columns_agree(dense::dot, dense::axpy, dense::dot2, dense::dot3);
#if defined(HETGLM_DENSE_AVX2)
    if (dense::detail::has_avx2())
      columns_agree(dense::detail::dot_avx2, dense::detail::axpy_avx2, dense::detail::dot2_avx2,
                    dense::detail::dot3_avx2);
    if (dense::detail::has_avx512())
      columns_agree(dense::detail::dot_avx512, dense::detail::axpy_avx512, dense::detail::dot2_avx512,
                    dense::detail::dot3_avx512);
#endif
  }
}

// The float32 row sums (axpy_rows_f32, sq_rows_f32: the Newton solver's X^T D X p and preconditioner): a block of
// rows gives what the rows one at a time give, the AVX2 code the scalar code's bits (one fused multiply-add per entry
// and row, in row order), for every block height and lengths with and without a tail; and the values are the sums
// within float32 rounding (16 eps of the sum of absolute values over 256 rows, the solver's flush interval).
TEST(DenseKernels, Float32RowSumsAreTheScalarOrderAndWithinFloatRounding) {
  std::mt19937_64 rng(9);
  std::normal_distribution<float> g;
  constexpr int kRows = 256;
  for (const std::int64_t n : {1, 7, 8, 19, 64, 203}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const std::int64_t ld = n + 5;
    std::vector<float> x(static_cast<std::size_t>(kRows * ld)), a(kRows), c(kRows);
    for (float& v : x) v = g(rng);
    for (float& v : a) v = g(rng);
    for (float& v : c) v = std::fabs(g(rng));
    for (int rows = 1; rows <= dense::kBlockRows; ++rows) {
      SCOPED_TRACE("rows " + std::to_string(rows));
      // Blocks of `rows` rows over all kRows rows (the last block shorter), against one row at a time.
      std::vector<float> gb(n, 0.0f), hb(n, 0.0f), g1(n, 0.0f), h1(n, 0.0f);
      for (int i = 0; i < kRows; i += rows) {
        const int r = std::min(rows, kRows - i);
        dense::axpy_rows_f32(a.data() + i, x.data() + i * ld, ld, r, gb.data(), n);
        dense::sq_rows_f32(c.data() + i, x.data() + i * ld, ld, r, hb.data(), n);
      }
      for (int i = 0; i < kRows; ++i) {
        dense::axpy_rows_f32(a.data() + i, x.data() + i * ld, ld, 1, g1.data(), n);
        dense::sq_rows_f32(c.data() + i, x.data() + i * ld, ld, 1, h1.data(), n);
      }
      EXPECT_EQ(gb, g1);
      EXPECT_EQ(hb, h1);
      // The scalar code: the same bits.
      std::vector<float> gs(n, 0.0f), hs(n, 0.0f);
      for (int i = 0; i < kRows; ++i) {
        dense::detail::axpy_rows_f32_scalar<1>(a.data() + i, x.data() + i * ld, ld, gs.data(), n);
        dense::detail::sq_rows_f32_scalar<1>(c.data() + i, x.data() + i * ld, ld, hs.data(), n);
      }
      EXPECT_EQ(gs, g1);
      EXPECT_EQ(hs, h1);
#if defined(HETGLM_DENSE_AVX2)
      if (dense::detail::has_avx2()) {
        std::vector<float> gv(n, 0.0f), hv(n, 0.0f);
        for (int i = 0; i + 4 <= kRows; i += 4) {
          dense::detail::axpy_rows_f32_avx2<4>(a.data() + i, x.data() + i * ld, ld, gv.data(), n);
          dense::detail::sq_rows_f32_avx2<4>(c.data() + i, x.data() + i * ld, ld, hv.data(), n);
        }
        EXPECT_EQ(gv, g1);
        EXPECT_EQ(hv, h1);
      }
#endif
      // Within float32 rounding of the exact sums.
      const double eps = std::numeric_limits<float>::epsilon();
      for (std::int64_t k = 0; k < n; ++k) {
        long double eg = 0, eh = 0, ag = 0;
        for (int i = 0; i < kRows; ++i) {
          const long double xv = x[std::size_t(i * ld + k)];
          eg += (long double)a[i] * xv;
          ag += std::fabs((long double)a[i] * xv);
          eh += (long double)c[i] * xv * xv;
        }
        EXPECT_NEAR(g1[k], double(eg), 16 * eps * double(ag)) << k;
        EXPECT_NEAR(h1[k], double(eh), 16 * eps * double(eh)) << k;
      }
    }
  }
}

// The logistic terms over many samples (solvers/src/loss_batch.hpp): exp and log1p within 2 ulp of the C library's
// over their whole domains (tiny, subnormal and boundary arguments included), the special values, the terms within
// 4 ulp of glm_math.h's scalar hetglm_loss_terms, and the AVX2 + FMA loops bit-identical to the generic ones.
TEST(LossBatch, ExpLog1pAndLogisticTermsMatchTheCLibraryAndEveryVersionGivesTheSameBits) {
  auto ulps = [](double a, double b) -> std::int64_t {
    if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
    if (std::isnan(a) || std::isnan(b) || std::signbit(a) != std::signbit(b)) return INT64_MAX;
    std::int64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return x > y ? x - y : y - x;
  };
  auto bits_equal = [](const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), 8 * a.size()) == 0;
  };
  const bool vec = batch::detail::has_avx2_fma();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const std::size_t n = 200003;  // not a multiple of any vector width or block
  std::vector<double> x(n), e(n), e2(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = u(rng);
    x[i] = i % 4 == 0 ? -750 * r : i % 4 == 1 ? -40 * r : i % 4 == 2 ? -1e-3 * r : -std::pow(10.0, -300 * r);
  }
  const double specials[] = {0.0, -0.0, -708.0, std::nextafter(-708.0, -1000.0), -745.2, -1e-320,
                             -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  std::copy(std::begin(specials), std::end(specials), x.begin());
  batch::exp_nonpositive(x.data(), e.data(), static_cast<std::int64_t>(n));
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, x[i] >= -708.0 || std::isnan(x[i]) ? ulps(e[i], std::exp(x[i])) : ulps(e[i], 0.0));
  EXPECT_LE(worst, 2);
  EXPECT_EQ(e[0], 1.0);
  EXPECT_EQ(e[3], 0.0);  // below -708: 0 (the true value is below 3.4e-308)
  EXPECT_EQ(e[6], 0.0);
  EXPECT_TRUE(std::isnan(e[7]));
  batch::detail::exp_nonpositive(false, x.data(), e2.data(), static_cast<std::int64_t>(n));
  EXPECT_TRUE(bits_equal(e, e2));

  std::vector<double> l(n), l2(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = u(rng);
    x[i] = i % 3 == 0 ? r : i % 3 == 1 ? std::pow(10.0, -320 * r) : 0.5 + 1e-9 * (r - 0.5);
  }
  const double unit[] = {0.0, 1.0, 0.5, std::nextafter(0.5, 1.0), 4.9e-324, std::numeric_limits<double>::quiet_NaN()};
  std::copy(std::begin(unit), std::end(unit), x.begin());
  batch::log1p_unit(x.data(), l.data(), static_cast<std::int64_t>(n));
  worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, ulps(l[i], std::log1p(x[i])));
  EXPECT_LE(worst, 2);
  EXPECT_EQ(l[0], 0.0);
  EXPECT_EQ(l[1], std::log(2.0));
  batch::detail::log1p_unit(false, x.data(), l2.data(), static_cast<std::int64_t>(n));
  EXPECT_TRUE(bits_equal(l, l2));

  std::vector<double> y(n), z(n), c(n), val(n), der(n), cur(n), val2(n), der2(n), cur2(n);
  std::normal_distribution<double> g;
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = i % 2 ? 1.0 : -1.0;
    z[i] = g(rng) * (i % 5 == 0 ? 400.0 : 3.0);  // margins beyond +-708 included
    c[i] = i % 7 == 0 ? 2.5 : 1.0;
  }
  z[1] = 0.0;
  batch::logistic_terms(y.data(), z.data(), c.data(), static_cast<std::int64_t>(n), val.data(), der.data(),
                        cur.data());
  std::int64_t wv = 0, wd = 0, wc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = hetglm_loss_terms_d(HETGLM_LOSS_LOGISTIC, y[i], z[i], c[i]);
    // Beyond |m| = 708 the batch's exp is 0 where the C library's is below 3.4e-308: absolute differences there.
    if (std::fabs(z[i]) > 708) {
      EXPECT_NEAR(val[i], r.value, 1e-300 + 1e-16 * r.value);
      EXPECT_NEAR(der[i], r.derivative, 1e-300);
      EXPECT_NEAR(cur[i], r.curvature, 1e-300);
      continue;
    }
    wv = std::max(wv, ulps(val[i], r.value));
    wd = std::max(wd, ulps(der[i], r.derivative));
    wc = std::max(wc, ulps(cur[i], r.curvature));
  }
  EXPECT_LE(wv, 4);
  EXPECT_LE(wd, 4);
  EXPECT_LE(wc, 4);
  EXPECT_EQ(val[1], std::log(2.0));
  EXPECT_EQ(der[1], -0.5);  // y = +1
  EXPECT_EQ(cur[1], 0.25);
  batch::detail::logistic_terms(false, y.data(), z.data(), c.data(), static_cast<std::int64_t>(n), val2.data(),
                                der2.data(), cur2.data());
  EXPECT_TRUE(bits_equal(val, val2));
  EXPECT_TRUE(bits_equal(der, der2));
  EXPECT_TRUE(bits_equal(cur, cur2));
  if (!vec) GTEST_LOG_(INFO) << "no AVX2 + FMA on this machine: the generic loops were compared with themselves";
}
