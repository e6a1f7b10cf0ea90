// SPDX-License-Identifier: Apache-2.0
// A labelled data set: samples as rows of a CSR matrix plus one label (or target) per row.
#pragma once
#include <string>
#include <vector>

#include "hetglm/matrix.hpp"

namespace hetglm {

struct Dataset {
  CsrMatrix X;                ///< n_samples x n_features
  std::vector<double> y;      ///< labels or regression targets, size n_samples
  std::string source;         ///< file name (for messages); may be empty
};

}  // namespace hetglm
