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
      double outs[4];
      switch (rows) {
        case 1: dense::detail::dot_rows_scalar<1>(x.data(), ld, p.data(), n, outs); break;
        case 2: dense::detail::dot_rows_scalar<2>(x.data(), ld, p.data(), n, outs); break;
        case 3: dense::detail::dot_rows_scalar<3>(x.data(), ld, p.data(), n, outs); break;
        default: dense::detail::dot_rows_scalar<4>(x.data(), ld, p.data(), n, outs); break;
      }
      for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], outs[r]);
      // Every instruction set this machine has (the dispatch takes AVX-512 first): the same bits as the scalar code.
      auto same_bits = [&]<int R>(std::integral_constant<int, R>, auto dot_r, auto axpy_r, auto axpy_sq_r) {
        double o[4];
        dot_r.template operator()<R>(x.data(), ld, p.data(), n, o);
        std::vector<double> ga(p), gb(p), hb(p);
        axpy_r.template operator()<R>(a.data(), x.data(), ld, ga.data(), n);
        axpy_sq_r.template operator()<R>(a.data(), b.data(), x.data(), ld, gb.data(), hb.data(), n);
        for (int r = 0; r < R; ++r) EXPECT_EQ(o[r], outs[r]);
        EXPECT_EQ(ga, gr);
        EXPECT_EQ(gb, gs);
        EXPECT_EQ(hb, hs);
      };
      auto each_height = [&](auto dot_r, auto axpy_r, auto axpy_sq_r) {
        switch (rows) {
          case 1: return same_bits(std::integral_constant<int, 1>{}, dot_r, axpy_r, axpy_sq_r);
          case 2: return same_bits(std::integral_constant<int, 2>{}, dot_r, axpy_r, axpy_sq_r);
          case 3: return same_bits(std::integral_constant<int, 3>{}, dot_r, axpy_r, axpy_sq_r);
          default: return same_bits(std::integral_constant<int, 4>{}, dot_r, axpy_r, axpy_sq_r);
        }
      };
#if defined(HETGLM_DENSE_AVX2)
      if (dense::detail::has_avx2())
        each_height([]<int R>(auto... z) { dense::detail::dot_rows_avx2<R>(z...); },
                    []<int R>(auto... z) { dense::detail::axpy_rows_avx2<R>(z...); },
                    []<int R>(auto... z) { dense::detail::axpy_sq_rows_avx2<R>(z...); });
      if (dense::detail::has_avx512())
        each_height([]<int R>(auto... z) { dense::detail::dot_rows_avx512<R>(z...); },
                    []<int R>(auto... z) { dense::detail::axpy_rows_avx512<R>(z...); },
                    []<int R>(auto... z) { dense::detail::axpy_sq_rows_avx512<R>(z...); });
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
