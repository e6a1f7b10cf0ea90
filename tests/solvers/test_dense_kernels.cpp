// SPDX-License-Identifier: Apache-2.0
// The solvers' private dense kernels (solvers/src/dense_kernels.hpp), tested directly.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../../solvers/src/dense_kernels.hpp"

using namespace hetglm;

// The dense row kernels (solvers/src/dense_kernels.hpp): a block of rows gives bit-identically what one call per
// row gives (dot_rows = dot, axpy_rows / axpy_sq_rows = axpy row after row), for every block height and lengths
// with and without a tail; the scalar fallback and the AVX2 + FMA version agree bit for bit; and the values are
// the float64 products (within 1e-12 of a long-double sum).
TEST(DenseKernels, BlocksEqualRowsAndScalarEqualsAvx2) {
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
    }
    const double d3 = dense::dot3(x.data(), p.data(), p.data(), n);
    EXPECT_EQ(d3, dense::detail::dot3_scalar(x.data(), p.data(), p.data(), n));
    long double r3 = 0;
    for (std::int64_t k = 0; k < n; ++k) r3 += (long double)x[k] * p[k] * p[k];
    EXPECT_NEAR(d3, double(r3), 1e-12 * n * 10);
  }
}
