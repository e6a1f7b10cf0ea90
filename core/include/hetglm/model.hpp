// SPDX-License-Identifier: Apache-2.0
// A trained linear model, its text file format (LIBLINEAR's layout, docs/conventions.md, "Model file") and prediction.
//
// File layout (one "key value..." per header line, keys in this order):
//   format hetglm-1
//   solver_type L2R_LR            LIBLINEAR's name where one exists, else ours (see solver_type_name)
//   nr_class 2                    number of classes (2 for binary and for regression, as LIBLINEAR)
//   label 1 -1                    classifiers only: binary lists the positive class first; multiclass
//                                 lists the classes ascending (one-vs-rest, one weight column each)
//   nr_feature 123
//   bias -1                       LIBLINEAR's -B: >= 0 means a constant feature of that value was appended
//   model logistic                logistic | svm | squared-hinge | ridge | lasso | elastic-net
//   penalty l2                    l2 | l1 | elastic-net
//   lambda 3.07e-05
//   l1_ratio 0
//   n_samples 32561               training samples n (lambda = 1/(C n)); optional on reading (0 = not recorded)
//   formulation dual              dual | primal
//   primal P1 [P2 ...]            certificate, one value per weight column
//   dual D1 [D2 ...]
//   gap G1 [G2 ...]               P - D (absolute), one per weight column
//   w
//   then nr_feature (+1 when bias >= 0) lines of n_columns values each, %.17g, the bias row last.
// n_columns = nr_class for multiclass (> 2), 1 otherwise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hetglm/io.hpp"
#include "hetglm/matrix.hpp"

namespace hetglm {

struct LinearModel {
  std::string solver_type;        ///< e.g. "L2R_LR"
  int nr_class = 2;               ///< 2 for binary and regression, k > 2 for one-vs-rest
  std::vector<double> labels;     ///< empty for regression; binary: positive first; multiclass: ascending
  index_t nr_feature = 0;         ///< number of features, without the bias feature
  double bias = -1;               ///< LIBLINEAR -B value; < 0: no bias feature
  std::string model;              ///< logistic | svm | squared-hinge | ridge | lasso | elastic-net
  std::string penalty = "l2";     ///< l2 | l1 | elastic-net
  double lambda = 0;              ///< regularization strength of P(w) (docs/conventions.md, "Objective and scaling")
  double l1_ratio = 0;            ///< elastic-net mixing, 0 for pure L2, 1 for pure L1
  /// Training samples n, so that C = 1/(lambda n) and Ridge's alpha = lambda n can be restored from the file; 0 when
  /// not recorded (files written before the field existed, where the key is absent).
  std::int64_t n_samples = 0;
  /// The training file's feature indices started at 0 (`train --zero-based`; key `zero_based 1`, absent otherwise):
  /// `predict` reads its data so too, where a 1-based read shifted every feature silently.
  bool zero_based = false;
  std::string formulation;        ///< dual | primal
  std::vector<double> primal, dual, gap;  ///< certificate per weight column
  /// Weights, row-major: w[j * n_columns() + k] for feature j (the bias feature is j = nr_feature).
  std::vector<double> w;

  bool is_classifier() const noexcept { return !labels.empty(); }
  int n_columns() const noexcept { return nr_class > 2 ? nr_class : 1; }
  index_t n_rows() const noexcept { return nr_feature + (bias >= 0 ? 1 : 0); }
};

/// Write atomically: a temporary file in the same folder, flushed, then renamed over `path`.
/// Throws IoError naming the path on failure; `path` is untouched then.
void save_model(const std::string& path, const LinearModel& model);

struct ModelLoadOptions {
  /// Budget in bytes for the weights kept while loading (8 bytes each), as LibsvmOptions::memory_limit (0 =
  /// automatic); checked every 65536 weight lines: MemoryLimitError once exceeded.
  std::uint64_t memory_limit = 0;
  const char* memory_limit_name = "memory_limit";  ///< how the message names an explicit limit
  /// As LibsvmOptions::should_stop: polled every 65536 weight lines and while a pipe has no data; Interrupted.
  StopCallback should_stop;
  /// Bytes read at a time (0 = 1 MiB); a test knob.
  std::size_t block_bytes = 0;
};

/// Load and validate a model file (a regular file or a pipe), reading it block by block with every line bounded
/// (the first at 4 KiB). Throws ParseError ("FILE:LINE:COLUMN: message") on a truncated, inconsistent or
/// malformed file; IoError if it cannot be read (also "cannot read 'FILE': out of memory at line L (X read)");
/// MemoryLimitError, Interrupted as the options say.
LinearModel load_model(const std::string& path, const ModelLoadOptions& options = {});

/// The same from a caller's read function (read(buf, n): up to n bytes, at least 1; 0 at the end).
LinearModel read_model_stream(const std::function<std::size_t(char*, std::size_t)>& read, const std::string& name,
                              const ModelLoadOptions& options = {});

/// Serialize / parse in memory (`name` appears in error messages).
std::string format_model(const LinearModel& model);
LinearModel parse_model(const std::string& text, const std::string& name);

/// Decision values, row-major n_rows x n_columns. Features with index >= nr_feature are ignored
/// (LIBLINEAR's behaviour); `X` may have fewer columns than the model.
std::vector<double> decision_function(const LinearModel& model, const CsrMatrix& X);

/// Predicted label (classifier) or value (regression) of every row. Binary: positive class when the
/// decision value is > 0; multiclass: the class with the largest decision value. With `first_nonfinite`: the first
/// row whose decision values are not all finite (weights times values beyond double range), or -1.
std::vector<double> predict(const LinearModel& model, const CsrMatrix& X, std::int64_t* first_nonfinite = nullptr);

/// Logistic models only: probabilities, row-major n_rows x n_classes in `labels` order; multiclass
/// probabilities are the one-vs-rest sigmoids normalized to sum 1 (LIBLINEAR -b 1).
std::vector<double> predict_proba(const LinearModel& model, const CsrMatrix& X);

}  // namespace hetglm
