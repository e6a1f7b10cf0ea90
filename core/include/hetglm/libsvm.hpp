// SPDX-License-Identifier: Apache-2.0
// libsvm / svmlight text format reader and writer.
//
// Grammar of one line (after removing a trailing "\r" and everything from the first '#'):
//   LABEL ( WS "qid:" INT )? ( WS INDEX ":" VALUE )* WS*
// LABEL and VALUE are decimal floating-point numbers (exponent notation allowed, NaN/Inf rejected);
// INDEX is a decimal integer, 1-based by default (0-based with `zero_based`). Blank lines and comment-only
// lines are skipped. `qid:` is accepted and ignored (ranking data trains as ordinary samples). Unsorted
// indices are sorted; duplicates are an error. A `.gz` file is decompressed through zlib.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "hetglm/dataset.hpp"

namespace hetglm {

struct LibsvmOptions {
  bool zero_based = false;         ///< indices start at 0 (scikit-learn's dump_svmlight_file default)
  std::int64_t n_features = -1;    ///< >= 0: the number of features; a larger index is an error
  int n_threads = 0;               ///< parser threads; 0 = all cores
};

/// Read a libsvm file (plain or .gz). Throws IoError if it cannot be read, ParseError
/// ("FILE:LINE:COLUMN: message") on malformed content. n_cols = max(n_features, largest index + 1).
Dataset read_libsvm(const std::string& path, const LibsvmOptions& options = {});

/// Parse libsvm text held in memory; `name` is used in error messages.
Dataset parse_libsvm(std::string_view text, const std::string& name, const LibsvmOptions& options = {});

/// Write a data set in libsvm format (1-based unless zero_based), atomically: labels as %.17g, values as the
/// shortest text that reads back to the same float32.
void write_libsvm(const std::string& path, const Dataset& data, bool zero_based = false);

}  // namespace hetglm
