// SPDX-License-Identifier: Apache-2.0
// A labelled data set: samples as rows of a CSR matrix plus one label (or target) per row; or, by feature, the
// transposed matrix (features as rows: the CSC of the data, e.g. from a column-major array or a scipy CSC matrix),
// which the primal coordinate-descent solvers use as it is (train.cpp builds the samples-as-rows copy only for what
// needs rows).
#pragma once
#include <string>
#include <vector>

#include "hetglm/matrix.hpp"

namespace hetglm {

struct Dataset {
  CsrMatrix X;                ///< n_samples x n_features (by_feature: n_features x n_samples, X^T)
  std::vector<double> y;      ///< labels or regression targets, size n_samples
  std::string source;         ///< file name (for messages); may be empty
  bool by_feature = false;    ///< X holds X^T (features as rows)
  /// X's last column is already the bias column (value TrainOptions' bias, samples as rows): train() uses X as it is
  /// instead of with_bias_column's copy (the Python estimators append it while converting a dense array).
  bool bias_included = false;

  index_t n_samples() const { return by_feature ? X.n_cols : X.n_rows; }
  /// Features of the data, the bias column not counted.
  index_t n_features() const { return by_feature ? X.n_rows : X.n_cols - (bias_included ? 1 : 0); }
};

}  // namespace hetglm
