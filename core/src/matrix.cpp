// SPDX-License-Identifier: Apache-2.0
// Compressed sparse matrix helpers (layout: see matrix.hpp).
#include "hetglm/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "hetglm/error.hpp"

namespace hetglm {

CsrMatrix transpose(const CsrMatrix& a) {
  CsrMatrix t;
  t.n_rows = a.n_cols;
  t.n_cols = a.n_rows;
  t.offsets.assign(static_cast<std::size_t>(a.n_cols) + 1, 0);
  for (index_t c : a.indices) ++t.offsets[static_cast<std::size_t>(c) + 1];
  for (index_t j = 0; j < a.n_cols; ++j) t.offsets[j + 1] += t.offsets[j];
  t.indices.resize(a.indices.size());
  t.values.resize(a.values.size());
  std::vector<offset_t> next(t.offsets.begin(), t.offsets.end() - 1);
  for (index_t r = 0; r < a.n_rows; ++r) {  // rows visited in order: output indices stay sorted
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      offset_t pos = next[a.indices[k]]++;
      t.indices[pos] = r;
      t.values[pos] = a.values[k];
    }
  }
  return t;
}

std::vector<double> row_sq_norms(const CsrMatrix& a) {
  std::vector<double> out(static_cast<std::size_t>(a.n_rows), 0.0);
  for (index_t r = 0; r < a.n_rows; ++r) {
    double s = 0;
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) s += double(a.values[k]) * a.values[k];
    out[r] = s;
  }
  return out;
}

CsrMatrix with_bias_column(const CsrMatrix& a, double bias) {
  if (bias < 0) return a;
  if (a.n_cols == std::numeric_limits<index_t>::max())
    throw InvalidArgument("cannot append the bias feature: the number of features is already 2^31-1");
  CsrMatrix b;
  b.n_rows = a.n_rows;
  b.n_cols = a.n_cols + 1;
  b.offsets.resize(a.offsets.size());
  b.indices.reserve(a.indices.size() + a.n_rows);
  b.values.reserve(a.values.size() + a.n_rows);
  b.offsets[0] = 0;
  for (index_t r = 0; r < a.n_rows; ++r) {
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      b.indices.push_back(a.indices[k]);
      b.values.push_back(a.values[k]);
    }
    b.indices.push_back(a.n_cols);
    b.values.push_back(static_cast<float>(bias));
    b.offsets[r + 1] = static_cast<offset_t>(b.indices.size());
  }
  return b;
}

void multiply(const CsrMatrix& a, std::span<const double> w, std::span<double> out) {
  const std::size_t limit = w.size();
  for (index_t r = 0; r < a.n_rows; ++r) {
    double s = 0;
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      const index_t j = a.indices[k];
      if (static_cast<std::size_t>(j) < limit) s += double(a.values[k]) * w[j];
    }
    out[r] = s;
  }
}

void validate(const CsrMatrix& a, const std::string& what) {
  auto fail = [&](const std::string& m) { throw InvalidArgument(fmt::format("{}: {}", what, m)); };
  if (a.n_rows < 0 || a.n_cols < 0) fail("negative shape");
  if (a.offsets.size() != static_cast<std::size_t>(a.n_rows) + 1) fail("offsets must have n_rows + 1 entries");
  if (a.offsets[0] != 0) fail("offsets[0] must be 0");
  if (a.indices.size() != static_cast<std::size_t>(a.nnz()) || a.values.size() != a.indices.size())
    fail("indices and values must have nnz entries");
  for (index_t r = 0; r < a.n_rows; ++r) {
    if (a.offsets[r + 1] < a.offsets[r]) fail(fmt::format("offsets decrease at row {}", r));
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      if (a.indices[k] < 0 || a.indices[k] >= a.n_cols)
        fail(fmt::format("row {}: column index {} out of range [0, {})", r, a.indices[k], a.n_cols));
      if (k > a.offsets[r] && a.indices[k] <= a.indices[k - 1])
        fail(fmt::format("row {}: column indices not strictly increasing", r));
    }
  }
}

}  // namespace hetglm
