// SPDX-License-Identifier: Apache-2.0
// Model file format (round trip, exact layout), strict loader error messages, atomic save, prediction.
#include "hetglm/io.hpp"
#include "hetglm/model.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <random>
#include <thread>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/memory.hpp"

namespace fs = std::filesystem;
using namespace hetglm;

namespace {

// ---------------------------------------------------------------------------------------------------
// Helpers

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

/// Valid binary logistic model file (line numbers in the comments are used by the error tests).
std::vector<std::string> binary_lines() {
  return {
      "format hetglm-1",     // 1
      "solver_type L2R_LR_DUAL",  // 2
      "nr_class 2",          // 3
      "label 1 -1",          // 4
      "nr_feature 3",        // 5
      "bias -1",             // 6
      "model logistic",      // 7
      "penalty l2",          // 8
      "lambda 0.01",         // 9
      "l1_ratio 0",          // 10
      "formulation dual",    // 11
      "primal 1.5",          // 12
      "dual 1.25",           // 13
      "gap 0.25",            // 14
      "w",                   // 15
      "0.5",                 // 16
      "-1",                  // 17
      "2",                   // 18
  };
}

/// Valid regression (ridge) model file.
std::vector<std::string> ridge_lines() {
  return {
      "format hetglm-1",    // 1
      "solver_type RIDGE_PRIMAL",  // 2
      "nr_class 2",         // 3
      "nr_feature 2",       // 4
      "bias -1",            // 5
      "model ridge",        // 6
      "penalty l2",         // 7
      "lambda 0.5",         // 8
      "l1_ratio 0",         // 9
      "formulation primal", // 10
      "primal 1",           // 11
      "dual 1",             // 12
      "gap 0",              // 13
      "w",                  // 14
      "1.5",                // 15
      "-2",                 // 16
  };
}

/// Valid multiclass (3 classes, bias) model file.
std::vector<std::string> multiclass_lines() {
  return {
      "format hetglm-1",          // 1
      "solver_type L2R_L1LOSS_SVC_DUAL",  // 2
      "nr_class 3",               // 3
      "label 1 2 3",              // 4
      "nr_feature 2",             // 5
      "bias 2",                   // 6
      "model svm",                // 7
      "penalty l2",               // 8
      "lambda 0.001",             // 9
      "l1_ratio 0",               // 10
      "formulation dual",         // 11
      "primal 3 2 1",             // 12
      "dual 2.5 1.5 0.5",         // 13
      "gap 0.5 0.5 0.5",          // 14
      "w",                        // 15
      "1 0 -1",                   // 16
      "0 1 0",                    // 17
      "0 0 0.5",                  // 18
  };
}

std::vector<std::string> replaced(std::vector<std::string> lines, int line_no, const std::string& text) {
  lines.at(line_no - 1) = text;
  return lines;
}
std::vector<std::string> erased(std::vector<std::string> lines, int line_no) {
  lines.erase(lines.begin() + (line_no - 1));
  return lines;
}
/// Insert `text` so that it becomes line `line_no`.
std::vector<std::string> inserted(std::vector<std::string> lines, int line_no, const std::string& text) {
  lines.insert(lines.begin() + (line_no - 1), text);
  return lines;
}
std::vector<std::string> first(std::vector<std::string> lines, int n) {
  lines.resize(n);
  return lines;
}

std::string parse_error(const std::string& text) {
  try {
    parse_model(text, "m");
  } catch (const ParseError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no error";
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

void expect_same_model(const LinearModel& a, const LinearModel& b) {
  EXPECT_EQ(a.solver_type, b.solver_type);
  EXPECT_EQ(a.nr_class, b.nr_class);
  EXPECT_TRUE(same_bits(a.labels, b.labels));
  EXPECT_EQ(a.nr_feature, b.nr_feature);
  EXPECT_TRUE(same_bits(a.bias, b.bias));
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.penalty, b.penalty);
  EXPECT_TRUE(same_bits(a.lambda, b.lambda));
  EXPECT_TRUE(same_bits(a.l1_ratio, b.l1_ratio));
  EXPECT_EQ(a.n_samples, b.n_samples);
  EXPECT_EQ(a.formulation, b.formulation);
  EXPECT_TRUE(same_bits(a.primal, b.primal));
  EXPECT_TRUE(same_bits(a.dual, b.dual));
  EXPECT_TRUE(same_bits(a.gap, b.gap));
  EXPECT_TRUE(same_bits(a.w, b.w));
}

LinearModel binary_model() {
  LinearModel m;
  m.solver_type = "L2R_LR_DUAL";
  m.nr_class = 2;
  m.labels = {1, -1};
  m.nr_feature = 3;
  m.bias = 1;
  m.model = "logistic";
  m.penalty = "l2";
  m.lambda = 0.1;
  m.l1_ratio = 0;
  m.formulation = "dual";
  m.primal = {1.5};
  m.dual = {1.25};
  m.gap = {0.25};
  m.w = {0.5, -1, 2, 0.25};  // features 0..2, then the bias row
  return m;
}

LinearModel multiclass_model() {
  LinearModel m;
  m.solver_type = "L2R_LR";
  m.nr_class = 3;
  m.labels = {1, 2, 3};
  m.nr_feature = 2;
  m.bias = 2;
  m.model = "logistic";
  m.penalty = "l2";
  m.lambda = 1e-3;
  m.l1_ratio = 0;
  m.formulation = "primal";
  m.primal = {3, 2, 1};
  m.dual = {2.5, 1.5, 0.5};
  m.gap = {0.5, 0.5, 0.5};
  m.w = {1, 0, -1,     // feature 0
         0, 1, 0,      // feature 1
         0, 0, 0.5};   // bias row
  return m;
}

LinearModel elastic_net_model() {
  LinearModel m;
  m.solver_type = "ELASTIC_NET";
  m.nr_class = 2;
  m.nr_feature = 2;
  m.bias = -1;
  m.model = "elastic-net";
  m.penalty = "elastic-net";
  m.lambda = 0.1;
  m.l1_ratio = 0.1;
  m.formulation = "primal";
  m.primal = {1e-300};
  m.dual = {-0.0};
  m.gap = {0.1};
  m.w = {1.5, -2};
  return m;
}

/// CSR matrix from per-row (index, value) lists.
CsrMatrix csr(index_t n_cols, const std::vector<std::vector<std::pair<index_t, float>>>& rows) {
  CsrMatrix X;
  X.n_rows = static_cast<index_t>(rows.size());
  X.n_cols = n_cols;
  for (const auto& row : rows) {
    for (auto [j, v] : row) {
      X.indices.push_back(j);
      X.values.push_back(v);
    }
    X.offsets.push_back(static_cast<offset_t>(X.indices.size()));
  }
  validate(X, "test matrix");
  return X;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh empty folder per test, removed afterwards.
class ModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("hetglm_test_model_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------------
// Formatting and round trips

TEST(ModelFormat, ExactLayoutBinaryWithBias) {
  LinearModel m = binary_model();
  m.w[1] = -0.0;
  EXPECT_EQ(format_model(m),
            "format hetglm-1\n"
            "solver_type L2R_LR_DUAL\n"
            "nr_class 2\n"
            "label 1 -1\n"
            "nr_feature 3\n"
            "bias 1\n"
            "model logistic\n"
            "penalty l2\n"
            "lambda 0.10000000000000001\n"
            "l1_ratio 0\n"
            "formulation dual\n"
            "primal 1.5\n"
            "dual 1.25\n"
            "gap 0.25\n"
            "w\n"
            "0.5\n"
            "-0\n"
            "2\n"
            "0.25\n");
}

TEST(ModelFormat, ExactLayoutRegressionHasNoLabelLine) {
  EXPECT_EQ(format_model(elastic_net_model()),
            "format hetglm-1\n"
            "solver_type ELASTIC_NET\n"
            "nr_class 2\n"
            "nr_feature 2\n"
            "bias -1\n"
            "model elastic-net\n"
            "penalty elastic-net\n"
            "lambda 0.10000000000000001\n"
            "l1_ratio 0.10000000000000001\n"
            "formulation primal\n"
            "primal 1e-300\n"
            "dual -0\n"
            "gap 0.10000000000000001\n"
            "w\n"
            "1.5\n"
            "-2\n");
}

TEST(ModelFormat, ExactLayoutMulticlassRows) {
  const std::string text = format_model(multiclass_model());
  EXPECT_NE(text.find("\nlabel 1 2 3\n"), std::string::npos);
  EXPECT_NE(text.find("\nprimal 3 2 1\ndual 2.5 1.5 0.5\ngap 0.5 0.5 0.5\nw\n1 0 -1\n0 1 0\n0 0 0.5\n"),
            std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 8), "0 0 0.5\n");  // no trailing space, final newline
}

TEST(ModelFormat, InconsistentInMemoryModelIsRejected) {
  LinearModel m = binary_model();
  m.w.pop_back();
  try {
    format_model(m);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "format_model: the model has 3 weights, expected 4 (4 rows x 1 columns)");
  }
}

void expect_round_trip(const LinearModel& m) {
  const std::string text = format_model(m);
  const LinearModel back = parse_model(text, "round-trip");
  expect_same_model(m, back);
  EXPECT_EQ(format_model(back), text);
}

// n_samples (so that C and Ridge's alpha can be restored) is written when known and optional on reading: a file
// without it, as written before the key existed, loads with n_samples 0.
TEST(ModelFormat, TheSampleCountIsWrittenWhenKnownAndOptional) {
  LinearModel m = binary_model();
  m.n_samples = 32561;
  const std::string text = format_model(m);
  EXPECT_NE(text.find("\nl1_ratio 0\nn_samples 32561\nformulation dual\n"), std::string::npos) << text;
  expect_round_trip(m);
  EXPECT_EQ(parse_model(format_model(binary_model()), "m").n_samples, 0);
  std::vector<std::string> lines = binary_lines();
  lines.insert(lines.begin() + 10, "n_samples 0");
  EXPECT_EQ(parse_error(join(lines)), "m:11:11: n_samples: expected an integer >= 1, found '0'");
  lines[10] = "n_samples 12.5";
  EXPECT_EQ(parse_error(join(lines)), "m:11:11: n_samples: expected an integer >= 1, found '12.5'");
}

TEST(ModelFormat, RoundTripBinary) {
  LinearModel m = binary_model();
  m.w = {0.1, -0.0, 1e-300, 4.9406564584124654e-324};
  m.lambda = 3.07e-05;
  expect_round_trip(m);
}

TEST(ModelFormat, RoundTripMulticlassWithBias) {
  LinearModel m = multiclass_model();
  m.w = {0.1, -0.0, 1e-300, std::numeric_limits<double>::max(), -std::numeric_limits<double>::min(),
         1.0 / 3.0, 2.5e-310, -123456789.123456789, 0};
  m.labels = {-7, 0.5, 1e20};
  expect_round_trip(m);
}

TEST(ModelFormat, RoundTripRegression) {
  LinearModel m = elastic_net_model();
  m.w = {1e-300, -0.0};
  m.bias = 0.1;  // >= 0: one more weight row
  m.w.push_back(0.1);
  expect_round_trip(m);
  EXPECT_EQ(parse_model(format_model(m), "r").labels.size(), 0u);
}

TEST(ModelFormat, ZeroFeatures) {
  LinearModel m = elastic_net_model();
  m.nr_feature = 0;
  m.w.clear();
  expect_round_trip(m);
  m.bias = 1;
  m.w = {0.75};
  expect_round_trip(m);
}

// ---------------------------------------------------------------------------------------------------
// Lenient layout accepted

TEST(ModelParse, AcceptsCrlfAndRejectsAMissingFinalNewline) {
  std::string text;
  for (const auto& l : binary_lines()) text += l + "\r\n";
  const LinearModel m = parse_model(text, "m");
  EXPECT_EQ(m.w, (std::vector<double>{0.5, -1, 2}));
  EXPECT_EQ(m.labels, (std::vector<double>{1, -1}));
  EXPECT_EQ(m.model, "logistic");
  EXPECT_EQ(m.nr_feature, 3);
  // The writer ends every line with a newline: without one the file was cut, maybe inside its last weight
  // ("2.25" cut to "2.2" would load silently otherwise).
  text.resize(text.size() - 2);
  try {
    parse_model(text, "m");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "m:" + std::to_string(binary_lines().size()) + ":0: truncated file: the last line does not end with a newline");
  }
}

TEST(ModelParse, RejectsANegativeGap) {
  std::string text = join(binary_lines());
  const auto pos = text.find("\ngap ");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, text.find('\n', pos + 1) - pos, "\ngap -5");
  try {
    parse_model(text, "m");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(": gap: a duality gap cannot be negative, found -5"), std::string::npos)
        << e.what();
  }
}

TEST(ModelParse, AcceptsKeysInAnyOrderAndTrailingBlankLines) {
  auto lines = binary_lines();
  std::reverse(lines.begin() + 1, lines.begin() + 14);  // keys 2..14 reversed
  std::string text = join(lines) + "\n  \n\r\n";
  const LinearModel m = parse_model(text, "m");
  expect_same_model(m, parse_model(join(binary_lines()), "m"));
  EXPECT_EQ(m.solver_type, "L2R_LR_DUAL");
  EXPECT_DOUBLE_EQ(m.lambda, 0.01);
  EXPECT_DOUBLE_EQ(m.bias, -1);
  EXPECT_EQ(m.formulation, "dual");
}

TEST(ModelParse, MulticlassValues) {
  const LinearModel m = parse_model(join(multiclass_lines()), "m");
  EXPECT_EQ(m.nr_class, 3);
  EXPECT_EQ(m.n_columns(), 3);
  EXPECT_EQ(m.n_rows(), 3);
  EXPECT_EQ(m.labels, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(m.w, (std::vector<double>{1, 0, -1, 0, 1, 0, 0, 0, 0.5}));
  EXPECT_EQ(m.primal, (std::vector<double>{3, 2, 1}));
}

// ---------------------------------------------------------------------------------------------------
// Corrupt files: exact messages

TEST(ModelParseErrors, EmptyFile) {
  EXPECT_EQ(parse_error(""), "m:1:0: empty file");
  EXPECT_EQ(parse_error("\n \r\n\t\n"), "m:1:0: empty file");
}

TEST(ModelParseErrors, MissingFormatLine) {
  EXPECT_EQ(parse_error(join(erased(binary_lines(), 1))),
            "m:1:1: expected 'format hetglm-1' as the first line, found 'solver_type' (a LIBLINEAR model file? hetglm "
            "reads only its own model files, which begin with that line)");
  EXPECT_EQ(parse_error("\nformat hetglm-1\n"),
            "m:1:0: expected 'format hetglm-1' as the first line, found an empty line");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 1, "format"))), "m:1:0: missing value for 'format'");
}

TEST(ModelParseErrors, WrongFormatVersion) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 1, "format hetglm-2"))),
            "m:1:8: unsupported format version 'hetglm-2' (expected 'hetglm-1')");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 1, "format hetglm-1 x"))),
            "m:1:17: unexpected 'x' after the value of 'format'");
}

TEST(ModelParseErrors, UnknownKey) {
  EXPECT_EQ(parse_error(join(inserted(binary_lines(), 3, "colour blue"))), "m:3:1: unknown key 'colour'");
}

TEST(ModelParseErrors, DuplicateKey) {
  EXPECT_EQ(parse_error(join(inserted(binary_lines(), 7, "bias 1"))),
            "m:7:1: duplicate key 'bias' (first given on line 6)");
  EXPECT_EQ(parse_error(join(inserted(binary_lines(), 2, "format hetglm-1"))),
            "m:2:1: duplicate key 'format' (first given on line 1)");
}

TEST(ModelParseErrors, MissingRequiredKey) {
  EXPECT_EQ(parse_error(join(erased(binary_lines(), 9))), "m:14:0: missing required key 'lambda'");
  EXPECT_EQ(parse_error(join(erased(binary_lines(), 14))), "m:14:0: missing required key 'gap'");
  EXPECT_EQ(parse_error(join(erased(binary_lines(), 4))),
            "m:14:0: missing required key 'label' (model 'logistic' is a classifier)");
}

TEST(ModelParseErrors, MissingOrExtraValue) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 6, "bias"))), "m:6:0: missing value for 'bias'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 6, "bias -1 2"))),
            "m:6:9: unexpected '2' after the value of 'bias'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 14, "gap"))), "m:14:0: missing value for 'gap'");
}

TEST(ModelParseErrors, NrClassNotANumber) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 3, "nr_class two"))),
            "m:3:10: nr_class: expected an integer in [2, 2147483647], found 'two'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 3, "nr_class 1"))),
            "m:3:10: nr_class: expected an integer in [2, 2147483647], found '1'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 3, "nr_class 2.0"))),
            "m:3:10: nr_class: expected an integer in [2, 2147483647], found '2.0'");
}

TEST(ModelParseErrors, LabelCountMismatch) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 4, "label 1 -1 2"))),
            "m:4:0: label: expected 2 values (nr_class 2), found 3");
  EXPECT_EQ(parse_error(join(replaced(multiclass_lines(), 4, "label 1 2"))),
            "m:4:0: label: expected 3 values (nr_class 3), found 2");
}

TEST(ModelParseErrors, BadLabels) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 4, "label 1 1"))), "m:4:9: label: duplicate label '1'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 4, "label 1 inf"))),
            "m:4:9: label: expected a finite number, found 'inf'");
}

TEST(ModelParseErrors, LabelOnRidgeModel) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 7, "model ridge"))),
            "m:4:1: label: not allowed for regression model 'ridge'");
  EXPECT_EQ(parse_error(join(inserted(ridge_lines(), 3, "label 1 -1"))),
            "m:3:1: label: not allowed for regression model 'ridge'");
}

// model, penalty, formulation, l1_ratio and solver_type must name one objective (kModels' row): each of these loaded
// before, and was then predicted or reported as another model than its weights solve.
TEST(ModelParseErrors, FieldsThatDescribeAnotherObjective) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 2, "solver_type BOGUS"))),
            "m:2:13: solver_type: expected 'L2R_LR_DUAL' for model 'logistic', penalty l2, formulation dual, found "
            "'BOGUS'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 11, "formulation primal"))),
            "m:2:13: solver_type: expected 'L2R_LR' for model 'logistic', penalty l2, formulation primal, found "
            "'L2R_LR_DUAL'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 7, "model svm"))),
            "m:2:13: solver_type: expected 'L2R_L1LOSS_SVC_DUAL' for model 'svm', penalty l2, formulation dual, "
            "found 'L2R_LR_DUAL'");
  EXPECT_EQ(parse_error(join(replaced(replaced(binary_lines(), 7, "model svm"), 8, "penalty l1"))),
            "m:8:9: penalty: model 'svm' has the l2 penalty only, found 'l1'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 8, "penalty l1"))),
            "m:11:13: formulation: model 'logistic' with penalty l1 has no dual formulation");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 10, "l1_ratio 0.5"))),
            "m:10:10: l1_ratio: penalty l2 means l1_ratio 0, found 0.5");
  auto l1 = replaced(replaced(replaced(binary_lines(), 2, "solver_type L1R_LR"), 8, "penalty l1"), 11,
                     "formulation primal");
  EXPECT_EQ(parse_model(join(replaced(l1, 10, "l1_ratio 1")), "m").penalty, "l1");
  EXPECT_EQ(parse_error(join(l1)), "m:10:10: l1_ratio: penalty l1 means l1_ratio 1, found 0");
  // The multinomial model's weights under another model's name.
  auto mn = replaced(replaced(multiclass_lines(), 2, "solver_type MULTINOMIAL_LR"), 11, "formulation primal");
  EXPECT_EQ(parse_model(join(replaced(mn, 7, "model multinomial")), "m").model, "multinomial");
  EXPECT_EQ(parse_error(join(replaced(mn, 7, "model logistic"))),
            "m:2:13: solver_type: expected 'L2R_LR' for model 'logistic', penalty l2, formulation primal, found "
            "'MULTINOMIAL_LR'");
}

TEST(ModelParseErrors, RegressionNeedsTwoClasses) {
  EXPECT_EQ(parse_error(join(replaced(ridge_lines(), 3, "nr_class 3"))),
            "m:3:10: nr_class: regression model 'ridge' needs nr_class 2, found '3'");
}

// A multinomial model has more than two classes (train refuses two: --model logistic); with nr_class 2 it loaded,
// predicted as a binary logistic model, and Python's predict_proba failed inside the softmax.
TEST(ModelParseErrors, MultinomialNeedsMoreThanTwoClasses) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 7, "model multinomial"))),
            "m:3:10: nr_class: model 'multinomial' needs more than two classes, found '2'");
}

TEST(ModelParseErrors, NrFeatureOutOfRange) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature 4000000000"))),
            "m:5:12: nr_feature: expected an integer in [0, 2147483646], found '4000000000'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature 2147483647"))),
            "m:5:12: nr_feature: expected an integer in [0, 2147483646], found '2147483647'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature -1"))),
            "m:5:12: nr_feature: expected an integer in [0, 2147483646], found '-1'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature 99999999999999999999999"))),
            "m:5:12: nr_feature: expected an integer in [0, 2147483646], found '99999999999999999999999'");
}

TEST(ModelParseErrors, HugeClaimedSizeWithShortBodyFailsFast) {
  // Nothing may be allocated from the claim: this would be 16 GB of weights.
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature 2000000000"))),
            "m:18:0: truncated weights: expected 2000000000 lines after 'w', found 3");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 5, "nr_feature 2147483646"))),
            "m:18:0: truncated weights: expected 2147483646 lines after 'w', found 3");
  // The same with the bias row: 2^31-1 rows.
  EXPECT_EQ(parse_error(join(replaced(replaced(binary_lines(), 5, "nr_feature 2147483646"), 6, "bias 1"))),
            "m:18:0: truncated weights: expected 2147483647 lines after 'w', found 3");
}

TEST(ModelParseErrors, TruncatedWeights) {
  // a9a has 123 features; only 1 weight line present.
  auto lines = first(replaced(binary_lines(), 5, "nr_feature 123"), 16);
  EXPECT_EQ(parse_error(join(lines)), "m:16:0: truncated weights: expected 123 lines after 'w', found 1");
  // Without the final newline, and with trailing blank lines: the same.
  std::string text = join(lines);
  text.pop_back();
  EXPECT_EQ(parse_error(text), "m:16:0: truncated weights: expected 123 lines after 'w', found 1");
  EXPECT_EQ(parse_error(join(lines) + "\n\n"), "m:16:0: truncated weights: expected 123 lines after 'w', found 1");
  // No weight line at all.
  EXPECT_EQ(parse_error(join(first(binary_lines(), 15))),
            "m:15:0: truncated weights: expected 3 lines after 'w', found 0");
}

TEST(ModelParseErrors, EndOfFileInHeader) {
  EXPECT_EQ(parse_error(join(first(binary_lines(), 10))),
            "m:10:0: unexpected end of file in the header (no 'w' line)");
  EXPECT_EQ(parse_error("format hetglm-1"), "m:1:0: unexpected end of file in the header (no 'w' line)");
}

TEST(ModelParseErrors, BlankLineInHeaderAndJunkAfterW) {
  EXPECT_EQ(parse_error(join(inserted(binary_lines(), 5, ""))), "m:5:0: blank line in the header");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 15, "w x"))), "m:15:3: unexpected 'x' after 'w'");
}

TEST(ModelParseErrors, ExtraWeightLine) {
  auto lines = binary_lines();
  lines.push_back("7");
  EXPECT_EQ(parse_error(join(lines)),
            "m:19:1: unexpected '7' after the last weight line (expected 3 weight lines)");
  lines.back() = "";
  lines.push_back("  x");
  EXPECT_EQ(parse_error(join(lines)),
            "m:20:3: unexpected 'x' after the last weight line (expected 3 weight lines)");
}

TEST(ModelParseErrors, NonNumericWeight) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, "abc"))),
            "m:17:1: weight line 2 of 3: expected a finite number, found 'abc'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, "0.5x"))),
            "m:17:1: weight line 2 of 3: expected a finite number, found '0.5x'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, "+1"))),
            "m:17:1: weight line 2 of 3: expected a finite number, found '+1'");
  EXPECT_EQ(parse_error(join(replaced(multiclass_lines(), 17, "0 1 zero"))),
            "m:17:5: weight line 2 of 3: expected a finite number, found 'zero'");
}

TEST(ModelParseErrors, NanAndInfiniteWeights) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, "nan"))),
            "m:17:1: weight line 2 of 3: expected a finite number, found 'nan'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, "NaN"))),
            "m:17:1: weight line 2 of 3: expected a finite number, found 'NaN'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 18, "-inf"))),
            "m:18:1: weight line 3 of 3: expected a finite number, found '-inf'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 16, "1e999"))),
            "m:16:1: weight line 1 of 3: expected a finite number, found '1e999'");
}

TEST(ModelParseErrors, WrongNumberOfValuesOnWeightLine) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 16, "0.5 0.5"))),
            "m:16:5: weight line 1 of 3: expected 1 value, found 2");
  EXPECT_EQ(parse_error(join(replaced(multiclass_lines(), 16, "1 0"))),
            "m:16:0: weight line 1 of 3: expected 3 values, found 2");
  EXPECT_EQ(parse_error(join(replaced(multiclass_lines(), 18, "0 0 0.5 1 2"))),
            "m:18:9: weight line 3 of 3: expected 3 values, found 5");
  // A blank line inside the weights (more weights follow) is a line with no value.
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 17, ""))),
            "m:17:0: weight line 2 of 3: expected 1 value, found 0");
}

TEST(ModelParseErrors, CertificateCountMismatch) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 12, "primal 1.5 2"))),
            "m:12:0: primal: expected 1 value (one per weight column), found 2");
  EXPECT_EQ(parse_error(join(replaced(multiclass_lines(), 13, "dual 1"))),
            "m:13:0: dual: expected 3 values (one per weight column), found 1");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 12, "primal 1.5 x"))),
            "m:12:12: primal: expected a finite number, found 'x'");
}

TEST(ModelParseErrors, LambdaNotPositive) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 9, "lambda 0"))),
            "m:9:8: lambda: expected a finite number > 0, found '0'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 9, "lambda -1e-3"))),
            "m:9:8: lambda: expected a finite number > 0, found '-1e-3'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 9, "lambda inf"))),
            "m:9:8: lambda: expected a finite number > 0, found 'inf'");
}

TEST(ModelParseErrors, OtherBadScalars) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 6, "bias nan"))),
            "m:6:6: bias: expected a finite number of magnitude at most 3.40282e+38 (the bias feature is float32), "
            "found 'nan'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 6, "bias 1e39"))),
            "m:6:6: bias: expected a finite number of magnitude at most 3.40282e+38 (the bias feature is float32), "
            "found '1e39'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 10, "l1_ratio 1.5"))),
            "m:10:10: l1_ratio: expected a number in [0, 1], found '1.5'");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 8, "penalty l3"))),
            "m:8:9: penalty: unknown penalty 'l3' (expected l2, l1 or elastic-net)");
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 11, "formulation both"))),
            "m:11:13: formulation: unknown formulation 'both' (expected dual or primal)");
}

TEST(ModelParseErrors, BadModelName) {
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 7, "model logit"))),
            "m:7:7: model: unknown model 'logit' (expected logistic, svm, squared-hinge, ridge, lasso, elastic-net, huber or "
            "multinomial)");
  // Long garbage is cut in the message.
  EXPECT_EQ(parse_error(join(replaced(binary_lines(), 7, "model " + std::string(100, 'a')))),
            "m:7:7: model: unknown model '" + std::string(40, 'a') +
                "...' (expected logistic, svm, squared-hinge, ridge, lasso, elastic-net, huber or multinomial)");
}

// ---------------------------------------------------------------------------------------------------
// Files

TEST(ModelLoad, FixtureMulticlass) {
  const LinearModel m = load_model(HETGLM_TEST_DATA_DIR "/model/multiclass_bias.model");
  expect_same_model(m, parse_model(join(multiclass_lines()), "m"));
}

TEST(ModelLoad, FixtureTruncated) {
  const std::string path = HETGLM_TEST_DATA_DIR "/model/truncated_a9a.model";
  try {
    load_model(path);
    FAIL() << "no exception";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":16:0: truncated weights: expected 123 lines after 'w', found 1");
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 16);
    EXPECT_EQ(e.column(), 0);
  }
}

TEST_F(ModelFiles, LoadMissingFile) {
  const std::string path = (dir_ / "absent.model").string();
  try {
    load_model(path);
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '" + path + "': No such file or directory");
  }
  try {
    load_model(dir_.string());
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '" + dir_.string() + "': Is a directory");
  }
}

TEST_F(ModelFiles, SaveThenLoad) {
  const std::string path = (dir_ / "m.model").string();
  for (const LinearModel& m : {binary_model(), multiclass_model(), elastic_net_model()}) {
    save_model(path, m);
    expect_same_model(load_model(path), m);
    EXPECT_EQ(slurp(path), format_model(m));
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const mode_t mask = ::umask(022);  // the umask, read by setting it (this test runs alone in its process)
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);
  EXPECT_EQ(entries(), std::vector<std::string>{"m.model"});
}

// The replacement keeps the permissions of the file it replaces (a model made private stays private, one made
// group-writable stays so); a new file gets 0666 less the umask, as open(2) would give it.
TEST_F(ModelFiles, SaveKeepsThePermissionsOfTheFileItReplaces) {
  const std::string path = (dir_ / "m.model").string();
  for (const mode_t mode : {0600u, 0664u, 0640u}) {
    save_model(path, binary_model());
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    save_model(path, elastic_net_model());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
    expect_same_model(load_model(path), elastic_net_model());
  }
  const std::string fresh = (dir_ / "new.model").string();
  const mode_t old = ::umask(077);
  save_model(fresh, binary_model());
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ModelFiles, SaveReplacesExistingFileAndLeavesNoTemporary) {
  const std::string path = (dir_ / "m.model").string();
  {
    std::ofstream out(path);
    out << "old contents, much longer than nothing at all ....................................\n";
  }
  save_model(path, binary_model());
  EXPECT_EQ(slurp(path), format_model(binary_model()));
  save_model(path, elastic_net_model());
  EXPECT_EQ(slurp(path), format_model(elastic_net_model()));
  for (const auto& name : entries()) EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
  EXPECT_EQ(entries(), std::vector<std::string>{"m.model"});
}

TEST_F(ModelFiles, SaveIntoMissingDirectoryThrows) {
  const std::string path = (dir_ / "no" / "such" / "m.model").string();
  try {
    save_model(path, binary_model());
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': No such file or directory");
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(ModelFiles, FailedRenameLeavesTargetAndNoTemporary) {
  // The target is a non-empty directory: the rename fails after the temporary file was written.
  const fs::path target = dir_ / "m.model";
  fs::create_directories(target);
  { std::ofstream(target / "keep") << "x"; }
  try {
    save_model(target.string(), binary_model());
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + target.string() + "': not a regular file");
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"m.model"});
  EXPECT_EQ(slurp(target / "keep"), "x");
}

TEST_F(ModelFiles, InconsistentModelIsNotWritten) {
  const std::string path = (dir_ / "m.model").string();
  save_model(path, binary_model());
  LinearModel bad = binary_model();
  bad.w.push_back(1);
  EXPECT_THROW(save_model(path, bad), InvalidArgument);
  EXPECT_EQ(slurp(path), format_model(binary_model()));
  EXPECT_EQ(entries(), std::vector<std::string>{"m.model"});
}

// ---------------------------------------------------------------------------------------------------
// Prediction

// Binary logistic, nr_feature 3, bias 1: w = (0.5, -1, 2), bias weight 0.25. X has 5 columns; columns
// 3 and 4 are unknown to the model and ignored (3 = nr_feature must not be taken for the bias).
CsrMatrix binary_X() {
  return csr(5, {
                    {{0, 1.f}, {1, 2.f}, {3, 100.f}, {4, 7.f}},  // 0.5 - 2 + 0.25 = -1.25
                    {{2, 1.f}},                                  // 2 + 0.25 = 2.25
                    {},                                          // 0.25 (bias only)
                    {{1, 0.25f}},                                // -0.25 + 0.25 = 0 -> negative class
                });
}

TEST(ModelPredict, BinaryDecisionAndLabels) {
  const LinearModel m = binary_model();
  const CsrMatrix X = binary_X();
  const auto dec = decision_function(m, X);
  ASSERT_EQ(dec.size(), 4u);
  EXPECT_DOUBLE_EQ(dec[0], -1.25);
  EXPECT_DOUBLE_EQ(dec[1], 2.25);
  EXPECT_DOUBLE_EQ(dec[2], 0.25);
  EXPECT_EQ(dec[3], 0.0);
  EXPECT_EQ(predict(m, X), (std::vector<double>{-1, 1, 1, -1}));
}

TEST(ModelPredict, BinaryBiasValueScalesBiasWeight) {
  LinearModel m = binary_model();
  m.bias = 4;  // constant feature 4 -> contributes 4 * 0.25 = 1
  const auto dec = decision_function(m, binary_X());
  EXPECT_DOUBLE_EQ(dec[0], -0.5);
  EXPECT_DOUBLE_EQ(dec[2], 1.0);
  // Without a bias feature the model has one row less.
  m.bias = -1;
  m.w.pop_back();
  const auto plain = decision_function(m, binary_X());
  EXPECT_DOUBLE_EQ(plain[0], -1.5);
  EXPECT_DOUBLE_EQ(plain[2], 0.0);
}

TEST(ModelPredict, BinaryProbabilities) {
  const auto p = predict_proba(binary_model(), binary_X());
  ASSERT_EQ(p.size(), 8u);
  EXPECT_NEAR(p[0], 0.22270013882530884, 1e-15);  // sigmoid(-1.25), for label 1
  EXPECT_NEAR(p[1], 0.7772998611746912, 1e-15);   // label -1
  EXPECT_NEAR(p[2], 0.9046505351008906, 1e-15);   // sigmoid(2.25)
  EXPECT_NEAR(p[4], 0.5621765008857981, 1e-15);   // sigmoid(0.25)
  EXPECT_NEAR(p[6], 0.5, 1e-15);
  for (std::size_t r = 0; r < 4; ++r) EXPECT_NEAR(p[2 * r] + p[2 * r + 1], 1.0, 1e-15);
}

// Multiclass: w rows (1, 0, -1), (0, 1, 0), bias row (0, 0, 0.5), bias value 2 -> (0, 0, 1) added.
CsrMatrix multiclass_X() {
  return csr(4, {
                    {{0, 2.f}},            // (2, 0, -1)  -> label 1
                    {{1, 3.f}, {2, 9.f}},  // (0, 3, 1)   -> label 2 (column 2 = nr_feature ignored)
                    {},                    // (0, 0, 1)   -> label 3
                    {{1, 1.f}},            // (0, 1, 1)   -> tie: the first maximum, label 2
                });
}

TEST(ModelPredict, MulticlassDecisionAndLabels) {
  const LinearModel m = multiclass_model();
  const auto dec = decision_function(m, multiclass_X());
  EXPECT_EQ(dec, (std::vector<double>{2, 0, -1, 0, 3, 1, 0, 0, 1, 0, 1, 1}));
  EXPECT_EQ(predict(m, multiclass_X()), (std::vector<double>{1, 2, 3, 2}));
}

TEST(ModelPredict, MulticlassProbabilities) {
  const auto p = predict_proba(multiclass_model(), multiclass_X());
  ASSERT_EQ(p.size(), 12u);
  EXPECT_NEAR(p[0], 0.5339010263299615, 1e-14);  // sigmoid(2), sigmoid(0), sigmoid(-1) normalized
  EXPECT_NEAR(p[1], 0.3030783364743226, 1e-14);
  EXPECT_NEAR(p[2], 0.16302063719571588, 1e-14);
  EXPECT_NEAR(p[9], 0.2548267814436845, 1e-14);  // sigmoid(0), sigmoid(1), sigmoid(1) normalized
  EXPECT_NEAR(p[10], 0.3725866092781578, 1e-14);
  EXPECT_NEAR(p[11], 0.3725866092781578, 1e-14);
  for (std::size_t r = 0; r < 4; ++r) EXPECT_NEAR(p[3 * r] + p[3 * r + 1] + p[3 * r + 2], 1.0, 1e-15);
}

TEST(ModelPredict, MulticlassProbabilitiesVeryNegativeDecisions) {
  LinearModel m = multiclass_model();
  m.w = {-1000, -1001, -1002, 0, 0, 0, 0, 0, 0};  // every sigmoid underflows to 0 in double
  const auto p = predict_proba(m, csr(1, {{{0, 1.f}}}));
  ASSERT_EQ(p.size(), 3u);
  // sigmoid(z) ~ exp(z): the normalized values are a softmax of (0, -1, -2).
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_NEAR(p[0], 1 / z, 1e-12);
  EXPECT_NEAR(p[1], std::exp(-1.0) / z, 1e-12);
  EXPECT_NEAR(p[2], std::exp(-2.0) / z, 1e-12);
}

TEST(ModelPredict, RegressionValues) {
  const LinearModel m = elastic_net_model();  // w = (1.5, -2), no bias
  const CsrMatrix X = csr(3, {{{0, 2.f}, {1, 1.f}, {2, 5.f}}, {{1, 0.5f}}, {}});
  EXPECT_EQ(decision_function(m, X), (std::vector<double>{1, -1, 0}));
  EXPECT_EQ(predict(m, X), (std::vector<double>{1, -1, 0}));
  // X with fewer columns than the model.
  EXPECT_EQ(predict(m, csr(1, {{{0, 4.f}}})), (std::vector<double>{6}));
  EXPECT_TRUE(predict(m, csr(1, {})).empty());
}

TEST(ModelPredict, ProbabilitiesOnlyForLogistic) {
  auto message = [](const LinearModel& m) -> std::string {
    try {
      predict_proba(m, csr(1, {{{0, 1.f}}}));
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  LinearModel svm = binary_model();
  svm.model = "svm";
  EXPECT_EQ(message(svm), "predict_proba: only logistic and multinomial models give probabilities (model is 'svm')");
  EXPECT_EQ(message(elastic_net_model()), "predict_proba: only logistic and multinomial models give probabilities (model is 'elastic-net')");
}

TEST(ModelPredict, InconsistentModelIsRejected) {
  LinearModel m = multiclass_model();
  m.labels.pop_back();
  try {
    predict(m, multiclass_X());
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "predict: the model has 2 labels, expected nr_class = 3");
  }
}

}  // namespace

// Found by tests/fuzz (fuzz_model): a solver_type holding carriage returns loaded but did not survive a
// format/parse round trip. The loader now accepts only names such as L2R_LR.
TEST(ModelParse, FuzzRegressionSolverTypeWithCarriageReturns) {
  const std::string text = hetglm::read_file(std::string(HETGLM_TEST_DATA_DIR) + "/model/fuzz_solver_type_cr.model");
  std::string shown = "'MCSVM_R";  // the first 40 bytes of the token, each \r escaped
  for (int i = 0; i < 33; ++i) shown += "\\x0d";
  shown += "...'";
  try {
    parse_model(text, "m");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "m:2:13: solver_type: expected a name of at most 64 upper-case letters, digits and '_', found " + shown);
  }
}

// ---------------------------------------------------------------------------------------------------
// Streaming loader (issue 18): bounded lines, the memory budget, interrupts.

namespace {

/// format_model of what the text loads to, or "ERROR what()": in memory, or streamed in `piece`-byte reads with
/// blocks of `block` bytes.
std::string outcome(const std::string& text, std::size_t block = 0, std::size_t piece = 0) {
  try {
    if (block == 0) return format_model(parse_model(text, "m"));
    ModelLoadOptions o;
    o.block_bytes = block;
    std::size_t pos = 0;
    return format_model(read_model_stream(
        [&](char* buf, std::size_t n) {
          const std::size_t k = std::min({n, piece, text.size() - pos});
          std::memcpy(buf, text.data() + pos, k);
          pos += k;
          return k;
        },
        "m", o));
  } catch (const ParseError& e) {
    return std::string("ERROR ") + e.what();
  }
}

}  // namespace

TEST(ModelStream, SameModelOrMessageInAnyBlocksAndPieces) {
  std::vector<std::string> texts = {
      join(binary_lines()), join(ridge_lines()), join(multiclass_lines()), "", "\n \r\n\t\n", "\nformat hetglm-1\n",
      join(erased(binary_lines(), 1)), join(replaced(binary_lines(), 1, "format hetglm-1 x")),
      join(first(replaced(binary_lines(), 5, "nr_feature 123"), 16)), join(first(binary_lines(), 15)),
      join(replaced(binary_lines(), 17, "")), join(first(binary_lines(), 10)), "format hetglm-1",
      join(replaced(binary_lines(), 5, "nr_feature 2000000000")), join(binary_lines()) + "\n  \n\r\n",
      join(binary_lines()) + "7\n", join(replaced(multiclass_lines(), 18, "0 0 0.5 1 2"))};
  std::string crlf;
  for (const auto& l : binary_lines()) crlf += l + "\r\n";
  texts.push_back(crlf);
  texts.push_back(crlf.substr(0, crlf.size() - 2));
  std::string cut = join(first(replaced(binary_lines(), 5, "nr_feature 123"), 16));
  cut.pop_back();
  texts.push_back(cut);
  // Random mutations of valid files.
  std::mt19937 rng(18);
  const char inserts[] = {' ', '\t', '\n', '\r', 'x', '0', '-', '.', 'e', '\0'};
  for (int i = 0; i < 400; ++i) {
    std::string t = i % 2 ? join(binary_lines()) : join(multiclass_lines());
    for (int m = 0; m < 1 + i % 3; ++m) {
      const std::size_t at = rng() % (t.size() + 1);
      switch (rng() % 3) {
        case 0: t.insert(at, 1, inserts[rng() % sizeof(inserts)]); break;
        case 1: if (at < t.size()) t.erase(at, 1 + rng() % 3); break;
        default: t.resize(at); break;
      }
    }
    texts.push_back(t);
  }
  int errors = 0;
  for (const std::string& t : texts) {
    const std::string ref = outcome(t);
    errors += ref.rfind("ERROR ", 0) == 0;
    for (std::size_t block : {1, 2, 7, 64, 4096})
      for (std::size_t piece : {1, 5, 4096}) ASSERT_EQ(outcome(t, block, piece), ref) << "block " << block << " piece " << piece << "\n" << t;
  }
  EXPECT_GT(errors, 100);
}

TEST(ModelStream, AFileOfNulBytesFailsAtTheFirstLineAfterOneBlock) {
  const std::string expected = "m:1:1: expected 'format hetglm-1' as the first line, found '" +
                               [] {
                                 std::string s;
                                 for (int i = 0; i < 40; ++i) s += "\\x00";
                                 return s;
                               }() +
                               "...'";
  std::uint64_t handed = 0;
  try {
    read_model_stream(
        [&](char* buf, std::size_t n) {
          std::memset(buf, 0, n);
          handed += n;
          return n;
        },
        "m");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_LE(handed, std::uint64_t{1} << 20);
  // The same for a 2 GB sparse file of zeros.
  const fs::path dir = fs::temp_directory_path() / ("hetglm_test_model_zeros_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "zeros.model").string();
  { std::ofstream(path, std::ios::binary); }
  fs::resize_file(path, std::uint64_t{2} << 30);
  try {
    load_model(path);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), path + expected.substr(1));
  }
  fs::remove_all(dir);
}

TEST(ModelStream, LongLinesAreBounded) {
  // The first line: 4 KiB. A token decided within them gives the usual message; otherwise the bound.
  EXPECT_EQ(outcome(std::string(10000, 'x') + "\n"),
            "ERROR m:1:1: expected 'format hetglm-1' as the first line, found '" + std::string(40, 'x') + "...'");
  EXPECT_EQ(outcome("format hetglm-2" + std::string(5000, ' ') + "\n"),
            "ERROR m:1:8: unsupported format version 'hetglm-2' (expected 'hetglm-1')");
  EXPECT_EQ(outcome("format hetglm-1" + std::string(5000, ' ') + "\n"),
            "ERROR m:1:0: expected 'format hetglm-1' as the first line, found a line longer than 4096 bytes");
  EXPECT_EQ(outcome(std::string(5000, ' ') + "format hetglm-1\n"),
            "ERROR m:1:0: expected 'format hetglm-1' as the first line, found a line longer than 4096 bytes");
  EXPECT_EQ(outcome(std::string(5000, ' ') + "\n\n"), "ERROR m:1:0: empty file");
  // Other lines: 1 MiB and 32 bytes a class.
  EXPECT_EQ(outcome(join(replaced(binary_lines(), 17, "1" + std::string(2 << 20, ' ')))),
            "ERROR m:17:0: line longer than 1048640 bytes (the model loader's limit for this line)");
  EXPECT_EQ(outcome(join(replaced(binary_lines(), 9, "lambda 0.01" + std::string(2 << 20, ' ')))),
            "ERROR m:9:0: line longer than 1048640 bytes (the model loader's limit for this line)");
  // Just below the bound still loads.
  const LinearModel m = parse_model(join(replaced(binary_lines(), 17, "-1" + std::string(1048600, ' '))), "m");
  EXPECT_EQ(m.w, (std::vector<double>{0.5, -1, 2}));
}

TEST(ModelStream, TheMemoryBudgetStopsTheWeights) {
  // 1,000,000 weight lines of "0"; checked every 65536 lines: at line 131071 of the weights, 1048568 bytes of
  // weights are over the limit of 1 MB.
  std::string text = join(replaced(first(binary_lines(), 15), 5, "nr_feature 1000000"));
  const std::size_t header = text.size();
  for (int i = 0; i < 1000000; ++i) text += "0\n";
  ModelLoadOptions o;
  o.memory_limit = 1000000;
  std::size_t pos = 0;
  try {
    read_model_stream(
        [&](char* buf, std::size_t n) {
          const std::size_t k = std::min(n, text.size() - pos);
          std::memcpy(buf, text.data() + pos, k);
          pos += k;
          return k;
        },
        "m", o);
    FAIL() << "no error";
  } catch (const MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()), "'m': stopped at line " + std::to_string(15 + 131071) + " (" +
                                         format_bytes(header + 2 * 131071) +
                                         " read): the weights kept would exceed the memory limit of 1.0 MB "
                                         "(memory_limit)");
  }
  o.memory_limit = 0;  // automatic: fits easily
  pos = 0;
  EXPECT_EQ(read_model_stream(
                [&](char* buf, std::size_t n) {
                  const std::size_t k = std::min(n, text.size() - pos);
                  std::memcpy(buf, text.data() + pos, k);
                  pos += k;
                  return k;
                },
                "m", o)
                .w.size(),
            1000000u);
}

TEST(ModelStream, AFifoWithoutWriterIsInterrupted) {
  const fs::path dir = fs::temp_directory_path() / ("hetglm_test_model_fifo_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::atomic<bool> stop{false};
  ModelLoadOptions o;
  o.should_stop = [&stop] { return stop.load(); };
  std::thread t([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  try {
    load_model(fifo, o);
    ADD_FAILURE() << "no error";
  } catch (const Interrupted& e) {
    EXPECT_EQ(std::string(e.what()), "interrupted while reading '" + fifo + "'");
  }
  t.join();
  // A writer: the model is read from the pipe.
  std::thread w([&] { std::ofstream(fifo, std::ios::binary) << join(multiclass_lines()); });
  expect_same_model(load_model(fifo), parse_model(join(multiclass_lines()), "m"));
  w.join();
  fs::remove_all(dir);
}

// read_file keeps at most max_bytes of text (0: what the process can still allocate): a stream without end (`yes |`
// into the Python reader) grew until the kernel killed the process. A regular file is refused from its size, a pipe
// once its text passes the bound; text within it reads whole.
TEST(ReadFile, RefusesTextBeyondItsBound) {
  namespace fs = std::filesystem;
  const fs::path p = fs::temp_directory_path() / ("hetglm_read_file_" + std::to_string(::getpid()));
  std::ofstream(p, std::ios::binary) << std::string(1000, 'x');
  EXPECT_EQ(hetglm::read_file(p.string(), 1000), std::string(1000, 'x'));
  EXPECT_EQ(hetglm::read_file(p.string()), std::string(1000, 'x'));
  try {
    hetglm::read_file(p.string(), 999);
    ADD_FAILURE() << "no MemoryLimitError";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()), "'" + p.string() + "': more than 999 bytes of text, the limit given");
  }
  const fs::path fifo = p.string() + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader closes the FIFO at 100,001 bytes, maybe before the writer is done: its write then fails (EPIPE)
  // instead of killing the test with SIGPIPE.
  const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << std::string(150000, 'y'); });
  try {
    hetglm::read_file(fifo.string(), 100000);
    ADD_FAILURE() << "no MemoryLimitError";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()), "'" + fifo.string() + "': more than 100.0 kB of text, the limit given");
  }
  writer.join();
  std::signal(SIGPIPE, old_pipe);
  fs::remove(fifo);
  fs::remove(p);
}
