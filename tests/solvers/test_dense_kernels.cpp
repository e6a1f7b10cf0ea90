// SPDX-License-Identifier: Apache-2.0
// The solvers' private dense kernels (solvers/src/dense_kernels.hpp), tested directly.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../../solvers/src/dense_kernels.hpp"

using namespace hetglm;

// The dense row kernels (solvers/src/dense_kernels.hpp): a block of rows gives bit-identically what one call per
// row gives (dot_rows = dot, axpy_rows / axpy_sq_rows = axpy row after row), for every block height and lengths
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
      std::vector<double> g1(p), h1(p), g2(p), h2(p);
      dense::axpy_rows(a.data(), x.data(), ld, rows, g1.data(), n);
      dense::axpy_sq_rows(a.data(), b.data(), x.data(), ld, rows, g2.data(), h2.data(), n);
      std::vector<double> gr(p), gs(p), hs(p);
      for (int r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * ld;
        EXPECT_EQ(out[r], dense::dot(xr, p.data(), n));
        long double ref = 0;
        for (std::int64_t k = 0; k < n; ++k) ref += (long double)xr[k] * p[k];
        EXPECT_NEAR(out[r], double(ref), 1e-12 * n);
        dense::axpy(a[r], xr, gr.data(), n);
        for (std::int64_t k = 0; k < n; ++k) {
          gs[k] = std::fma(a[r], double(xr[k]), gs[k]);
          hs[k] = std::fma(double(xr[k]) * double(xr[k]), b[r], hs[k]);
        }
      }
      EXPECT_EQ(g1, gr);
      EXPECT_EQ(g2, gs);
      EXPECT_EQ(h2, hs);
      // The scalar fallback (the order the vector code keeps): the same bits.
      for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], dense::detail::dot_scalar(x.data() + r * ld, p.data(), n));
      // Every instruction set this machine has (the dispatch takes AVX-512 first): the same bits as the scalar code.
      auto same_bits = [&]<int R>(std::integral_constant<int, R>, auto axpy_r) {
        std::vector<double> ga(p);
        axpy_r.template operator()<R>(a.data(), x.data(), ld, ga.data(), n);
        EXPECT_EQ(ga, gr);
      };
      auto each_height = [&](auto axpy_r) {
        switch (rows) {
          case 1: return same_bits(std::integral_constant<int, 1>{}, axpy_r);
          case 2: return same_bits(std::integral_constant<int, 2>{}, axpy_r);
          case 3: return same_bits(std::integral_constant<int, 3>{}, axpy_r);
          default: return same_bits(std::integral_constant<int, 4>{}, axpy_r);
        }
      };
#if defined(HETGLM_DENSE_AVX2)
      if (dense::detail::has_avx2())
        each_height([]<int R>(auto... z) { dense::detail::axpy_rows_avx2<R>(z...); });
      if (dense::detail::has_avx512())
        each_height([]<int R>(auto... z) { dense::detail::axpy_rows_avx512<R>(z...); });
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
    std::vector<double> sg0v(p), sh0v(h);
    dense::detail::axpy_sq_scalar(0.7, 1.3, x.data(), sg0v.data(), sh0v.data(), n);
    auto columns_agree = [&](auto dot_f, auto axpy_f, auto dot2_f, auto dot3_f, auto axpy_sq_f) {
      std::vector<double> sgv(p), shv(h);
      axpy_sq_f(0.7, 1.3, x.data(), sgv.data(), shv.data(), n);
      EXPECT_EQ(sgv, sg0v);
      EXPECT_EQ(shv, sh0v);
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
    columns_agree(dense::dot, dense::axpy, dense::dot2, dense::dot3, dense::axpy_sq);
#if defined(HETGLM_DENSE_AVX2)
    if (dense::detail::has_avx2())
      columns_agree(dense::detail::dot_avx2, dense::detail::axpy_avx2, dense::detail::dot2_avx2,
                    dense::detail::dot3_avx2, dense::detail::axpy_sq_avx2);
    if (dense::detail::has_avx512())
      columns_agree(dense::detail::dot_avx512, dense::detail::axpy_avx512, dense::detail::dot2_avx512,
                    dense::detail::dot3_avx512, dense::detail::axpy_sq_avx512);
#endif
  }
}

