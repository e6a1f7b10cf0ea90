// SPDX-License-Identifier: Apache-2.0
// The out-of-line parts of the coordinate forms (forms.hpp).
#include "hetglm/solvers/forms.hpp"

#include "dense_kernels.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace hetglm {

namespace detail {
double dense_row_dot(const float* x, const double* v, index_t n) { return dense::dot(x, v, n); }
void dense_row_axpy(const float* x, double scale, double* v, index_t n) { dense::axpy(scale, x, v, n); }
}  // namespace detail

std::vector<double> primal_column_curvature(const CsrMatrix& Xt, const double* c, index_t n_total) {
  const double inv_n = 1.0 / (n_total > 0 ? n_total : Xt.n_cols);
  std::vector<double> q(static_cast<std::size_t>(Xt.n_rows));
  auto column = [&](index_t j) {
    double s = 0;
    for (offset_t k = Xt.offsets[j]; k < Xt.offsets[j + 1]; ++k)
      s += c[Xt.indices[k]] * double(Xt.values[k]) * Xt.values[k];
    q[j] = s * inv_n;
  };
#if defined(__SANITIZE_THREAD__)
  constexpr bool kParallel = false;  // Debian's oneTBB is not instrumented for ThreadSanitizer
#else
  constexpr bool kParallel = true;
#endif
  if (kParallel && Xt.nnz() >= (offset_t{1} << 20)) {
    tbb::parallel_for(tbb::blocked_range<index_t>(0, Xt.n_rows, 16), [&](const tbb::blocked_range<index_t>& r) {
      for (index_t j = r.begin(); j < r.end(); ++j) column(j);
    });
  } else {
    for (index_t j = 0; j < Xt.n_rows; ++j) column(j);
  }
  return q;
}

}  // namespace hetglm
