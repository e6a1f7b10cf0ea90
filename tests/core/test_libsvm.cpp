// SPDX-License-Identifier: Apache-2.0
// Tests of the libsvm / svmlight reader and writer (core/src/libsvm.cpp, docs/libsvm-format.md):
// accepted variants with exact arrays, a table of malformed inputs with exact messages, every bundled
// data set, gzip input, I/O errors, the writer's round trip, random mutations, and a throughput print.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/matrix.hpp"
#include "hetglm/memory.hpp"

namespace fs = std::filesystem;
using hetglm::Dataset;
using hetglm::IoError;
using hetglm::LibsvmOptions;
using hetglm::ParseError;

namespace {

const std::string kData = HETGLM_DATA_DIR;

LibsvmOptions opts(std::int64_t n_features = -1, bool zero_based = false, int n_threads = 0) {
  LibsvmOptions o;
  o.n_features = n_features;
  o.zero_based = zero_based;
  o.n_threads = n_threads;
  return o;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

/// Bitwise equality of two data sets (floats compared by bits, so -0 and 0 differ).
void expect_same(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.X.n_rows, b.X.n_rows);
  ASSERT_EQ(a.X.n_cols, b.X.n_cols);
  ASSERT_EQ(a.X.offsets, b.X.offsets);
  ASSERT_EQ(a.X.indices, b.X.indices);
  ASSERT_EQ(a.X.values.size(), b.X.values.size());
  ASSERT_EQ(0, std::memcmp(a.X.values.data(), b.X.values.data(), a.X.values.size() * sizeof(float)));
  ASSERT_EQ(a.y.size(), b.y.size());
  ASSERT_EQ(0, std::memcmp(a.y.data(), b.y.data(), a.y.size() * sizeof(double)));
}

struct Expected {
  int n_rows;
  int n_cols;
  std::vector<std::int64_t> offsets;
  std::vector<int> indices;
  std::vector<float> values;
  std::vector<double> y;
};

void expect_arrays(const Dataset& d, const Expected& e) {
  EXPECT_EQ(d.X.n_rows, e.n_rows);
  EXPECT_EQ(d.X.n_cols, e.n_cols);
  EXPECT_EQ(d.X.offsets, e.offsets);
  EXPECT_EQ(std::vector<hetglm::index_t>(d.X.indices.begin(), d.X.indices.end()), e.indices);
  EXPECT_EQ(std::vector<float>(d.X.values.begin(), d.X.values.end()), e.values);
  EXPECT_EQ(d.y, e.y);
  EXPECT_NO_THROW(hetglm::validate(d.X, "parsed"));
}

Dataset parse(const std::string& text, const LibsvmOptions& o = {}) { return hetglm::parse_libsvm(text, "t.svm", o); }

/// what() of the ParseError the text raises, or a marker when it parses.
std::string parse_error(const std::string& text, const LibsvmOptions& o = {}) {
  try {
    parse(text, o);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "<parsed>";
}

/// A fresh temporary folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() / ("hetglm_test_libsvm_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void gzip_file(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - pos, 1 << 20));
    ASSERT_EQ(gzwrite(f, bytes.data() + pos, n), static_cast<int>(n));
    pos += n;
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

// ---------------------------------------------------------------------------------------------------
// Accepted variants.

TEST(LibsvmAccept, Basic) {
  expect_arrays(parse("+1 1:0.5 3:2\n-1 2:1\n"), {2, 3, {0, 2, 3}, {0, 2, 1}, {0.5f, 2.f, 1.f}, {1, -1}});
}

TEST(LibsvmAccept, LabelConventions) {
  for (const char* text : {"+1 1:1\n-1 1:1\n", "1 1:1\n-1 1:1\n"})
    expect_arrays(parse(text), {2, 1, {0, 1, 2}, {0, 0}, {1, 1}, {1, -1}});
  expect_arrays(parse("0 1:1\n1 1:1\n"), {2, 1, {0, 1, 2}, {0, 0}, {1, 1}, {0, 1}});
  expect_arrays(parse("1 1:1\n2 1:1\n"), {2, 1, {0, 1, 2}, {0, 0}, {1, 1}, {1, 2}});
  expect_arrays(parse("2 1:1\n4 1:1\n"), {2, 1, {0, 1, 2}, {0, 0}, {1, 1}, {2, 4}});
  // Regression targets: decimals, exponents, a leading '+', ".5" and "5.", underflow to zero.
  const Dataset d = parse("2.5\n-3e2\n+4.25e-1\n.5\n5.\n1E+2\n-0.125\n1e-400\n24.000\n");
  EXPECT_EQ(d.y, (std::vector<double>{2.5, -300, 0.425, 0.5, 5, 100, -0.125, 0, 24}));
  EXPECT_EQ(d.X.n_rows, 9);
  EXPECT_EQ(d.X.nnz(), 0);
  // -0 (and -1e-400, which underflows to -0) is the label 0, sign and all: it was kept as -0.0, a class that
  // compared equal to 0 but was printed "-0" in the model's labels.
  const Dataset z = parse("-0 1:1\n0 1:2\n-1e-400 1:3\n-0.0 1:4\n");
  for (double y : z.y) {
    EXPECT_EQ(y, 0.0);
    EXPECT_FALSE(std::signbit(y));
  }
}

TEST(LibsvmAccept, Comments) {
  expect_arrays(parse("# header line\n1 1:1 # trailing comment\n#x:y\n-1 2:2#glued comment\n   # indented\n1 3:3 #\n"),
                {3, 3, {0, 1, 2, 3}, {0, 1, 2}, {1, 2, 3}, {1, -1, 1}});
  // Anything goes inside a comment, control bytes included.
  expect_arrays(parse(std::string("1 1:1 # \x01\x7f\0 \r x\n", 16)), {1, 1, {0, 1}, {0}, {1}, {1}});
}

TEST(LibsvmAccept, QidIgnored) {
  expect_arrays(parse("3 qid:1 1:1 2:2\n2 qid:12 2:1\n1 qid:-4\n0 qid:0 # c\n"),
                {4, 2, {0, 2, 3, 3, 3}, {0, 1, 1}, {1, 2, 1}, {3, 2, 1, 0}});
}

TEST(LibsvmAccept, WhitespaceTabsAndTrailingSpaces) {
  expect_arrays(parse("1 1:1   \n1\t2:3\t\n  -1  3:4 \t \n\t1\t\t1:2\n"),
                {4, 3, {0, 1, 2, 3, 4}, {0, 1, 2, 0}, {1, 3, 4, 2}, {1, 1, -1, 1}});
}

TEST(LibsvmAccept, CrLf) {
  expect_arrays(parse("1 1:1\r\n-1 2:2 \r\n\r\n1\r\n"), {3, 2, {0, 1, 2, 2}, {0, 1}, {1, 2}, {1, -1, 1}});
  expect_arrays(parse("1 1:1\r"), {1, 1, {0, 1}, {0}, {1}, {1}});  // CR of an unfinished last line
}

TEST(LibsvmAccept, MissingFinalNewline) {
  expect_arrays(parse("1 1:1\n-1 2:2"), {2, 2, {0, 1, 2}, {0, 1}, {1, 2}, {1, -1}});
  expect_arrays(parse("-1"), {1, 0, {0, 0}, {}, {}, {-1}});
  expect_arrays(parse("1 1:1 # no newline"), {1, 1, {0, 1}, {0}, {1}, {1}});
}

TEST(LibsvmAccept, ExponentNotation) {
  const Dataset d = parse("1 1:1e-3 2:-2.5E+2 3:1e-50 4:1e-40 5:3.4028235e38 6:+7e0 7:2.617300e+01\n");
  expect_arrays(d, {1, 7, {0, 7}, {0, 1, 2, 3, 4, 5, 6},
                    {1e-3f, -250.f, 0.f, 1e-40f, 3.4028235e38f, 7.f, 26.173f}, {1}});
}

TEST(LibsvmAccept, ExplicitZerosAreStored) {
  const Dataset d = parse("1 1:0 2:0.0 3:-0 4:0e5\n");
  expect_arrays(d, {1, 4, {0, 4}, {0, 1, 2, 3}, {0.f, 0.f, -0.f, 0.f}, {1}});
  EXPECT_TRUE(std::signbit(d.X.values[2]));
}

TEST(LibsvmAccept, LabelOnlyRows) {
  expect_arrays(parse("1\n-1 1:1\n2\n3 qid:7\n"), {4, 1, {0, 0, 1, 1, 1}, {0}, {1}, {1, -1, 2, 3}});
}

TEST(LibsvmAccept, BlankLinesAreSkipped) {
  expect_arrays(parse("\n\n1 1:1\n   \n\t\n\r\n-1 2:1\n\n"), {2, 2, {0, 1, 2}, {0, 1}, {1, 1}, {1, -1}});
}

TEST(LibsvmAccept, EmptyInputs) {
  for (const char* text : {"", "\n", "# only a comment\n", "\n \n#a\n\t# b\r\n"}) {
    SCOPED_TRACE(text);
    expect_arrays(parse(text), {0, 0, {0}, {}, {}, {}});
  }
  expect_arrays(parse("", opts(5)), {0, 5, {0}, {}, {}, {}});
}

TEST(LibsvmAccept, ZeroBased) {
  expect_arrays(parse("1 0:1 2:3\n-1 1:2\n", opts(-1, true)), {2, 3, {0, 2, 3}, {0, 2, 1}, {1, 3, 2}, {1, -1}});
}

TEST(LibsvmAccept, UnsortedIndicesAreSorted) {
  expect_arrays(parse("1 3:3 1:1 2:2\n-1 9:9 4:4\n1 1:1 2:2\n"),
                {3, 9, {0, 3, 5, 7}, {0, 1, 2, 3, 8, 0, 1}, {1, 2, 3, 4, 9, 1, 2}, {1, -1, 1}});
}

TEST(LibsvmAccept, NFeaturesWidensColumns) {
  expect_arrays(parse("1 1:1\n", opts(10)), {1, 10, {0, 1}, {0}, {1}, {1}});
  expect_arrays(parse("1 1:1 3:1\n", opts(3)), {1, 3, {0, 2}, {0, 2}, {1, 1}, {1}});
  expect_arrays(parse("1 0:1 2:1\n", opts(3, true)), {1, 3, {0, 2}, {0, 2}, {1, 1}, {1}});
}

TEST(LibsvmAccept, MiscellaneousSpellings) {
  // UTF-8 byte order mark, leading zeros of an index, the largest index, long digit strings.
  expect_arrays(parse("\xEF\xBB\xBF+1 001:1 0010:2\n"), {1, 10, {0, 2}, {0, 9}, {1, 2}, {1}});
  expect_arrays(parse("1 2147483646:1\n"), {1, 2147483646, {0, 1}, {2147483645}, {1}, {1}});
  expect_arrays(parse("1 2147483646:1\n", opts(-1, true)), {1, 2147483647, {0, 1}, {2147483646}, {1}, {1}});
  const std::string many_zeros = "0." + std::string(500, '0') + "1";
  expect_arrays(parse("1 1:" + many_zeros + " 2:1" + std::string(30, '0') + "\n"),
                {1, 2, {0, 2}, {0, 1}, {0.f, 1e30f}, {1}});
}

TEST(LibsvmAccept, FixtureFileWithMixedVariants) {
  // CRLF and LF lines, comments, qid, tabs, trailing spaces, unsorted indices, an explicit zero, a
  // label-only row, exponents, '+' signs and no final newline, in one file on disk.
  const std::string path = std::string(HETGLM_TEST_DATA_DIR) + "/libsvm/variants.svm";
  for (int threads : {1, 2}) {
    const Dataset d = hetglm::read_libsvm(path, opts(-1, false, threads));
    expect_arrays(d, {5, 6, {0, 2, 4, 6, 6, 7}, {0, 2, 1, 3, 0, 4, 5}, {0.5f, 2.f, 1e-3f, -250.f, 1.f, 0.f, 7.f},
                      {1, -1, 0, 25, 4}});
    EXPECT_EQ(d.source, path);
  }
}

TEST(LibsvmAccept, SourceIsTheName) {
  EXPECT_EQ(hetglm::parse_libsvm("1 1:1\n", "some/name.svm").source, "some/name.svm");
}

// ---------------------------------------------------------------------------------------------------
// Malformed inputs: every case asserts the exact message (docs/libsvm-format.md lists them).

struct Malformed {
  std::string text;
  LibsvmOptions options;
  std::string message;
};

const std::string kLong = std::string(100, 'x');
const std::string kZeroHint =
    " (libsvm indices start at 1; a file indexed from 0 is read with --zero-based, or zero_based=True in Python)";

const std::vector<Malformed>& malformed_cases() {
  static const std::vector<Malformed> cases = {
      // feature indices
      {"0 0:1\n", {}, "t.svm:1:3: feature index '0' in 1-based mode" + kZeroHint},
      {"1 2:1 00:1\n", {}, "t.svm:1:7: feature index '00' in 1-based mode" + kZeroHint},
      {"1 -1:1\n", {}, "t.svm:1:3: negative feature index '-1'"},
      {"1 -0:1\n", opts(-1, true), "t.svm:1:3: negative feature index '-0'"},
      {"1 a:1\n", {}, "t.svm:1:3: invalid feature index 'a'"},
      {"1 +1:1\n", {}, "t.svm:1:3: invalid feature index '+1'"},
      {"1 1.5:1\n", {}, "t.svm:1:3: invalid feature index '1.5'"},
      {"1 -:1\n", {}, "t.svm:1:3: invalid feature index '-'"},
      {"1 124:1\n", opts(123), "t.svm:1:3: feature index '124' out of range (n_features 123)"},
      {"1 0:1 5:1\n", opts(5, true), "t.svm:1:7: feature index '5' out of range (n_features 5)"},
      {"1 1:1\n", opts(0), "t.svm:1:3: feature index '1' out of range (n_features 0)"},
      {"1 4294967296:1\n", {}, "t.svm:1:3: feature index '4294967296' out of range (max 2147483646)"},
      {"1 2147483647:1\n", {}, "t.svm:1:3: feature index '2147483647' out of range (max 2147483646)"},
      {"1 2147483647:1\n", opts(-1, true), "t.svm:1:3: feature index '2147483647' out of range (max 2147483646)"},
      {"1 99999999999999999999999:1\n", {},
       "t.svm:1:3: feature index '99999999999999999999999' out of range (max 2147483646)"},
      {"1 " + std::string(60, '7') + ":1\n", {},
       "t.svm:1:3: feature index '" + std::string(40, '7') + "...' out of range (max 2147483646)"},
      // feature syntax
      {"1 3:\n", {}, "t.svm:1:3: missing feature value in '3:'"},
      {"1 1: 2\n", {}, "t.svm:1:3: missing feature value in '1:'"},
      {"1 :3\n", {}, "t.svm:1:3: missing feature index in ':3'"},
      {"1 :\n", {}, "t.svm:1:3: missing feature index in ':'"},
      {"1 3::4\n", {}, "t.svm:1:5: invalid feature value ':4'"},
      {"1 1:1:2\n", {}, "t.svm:1:5: invalid feature value '1:2'"},
      {"1 abc\n", {}, "t.svm:1:3: missing ':' in feature 'abc'"},
      {"1 1 :2\n", {}, "t.svm:1:3: missing ':' in feature '1'"},
      {"1\tx\n", {}, "t.svm:1:3: missing ':' in feature 'x'"},
      // feature values
      {"1 1:abc\n", {}, "t.svm:1:5: invalid feature value 'abc'"},
      {"1 1:1.0abc\n", {}, "t.svm:1:5: invalid feature value '1.0abc'"},
      {"1 1:3.4.5\n", {}, "t.svm:1:5: invalid feature value '3.4.5'"},
      {"1 1:1e\n", {}, "t.svm:1:5: invalid feature value '1e'"},
      {"1 1:0x10\n", {}, "t.svm:1:5: invalid feature value '0x10'"},
      {"1 1:++2\n", {}, "t.svm:1:5: invalid feature value '++2'"},
      {"1 1:+-2\n", {}, "t.svm:1:5: invalid feature value '+-2'"},
      {"1 1:+\n", {}, "t.svm:1:5: invalid feature value '+'"},
      {"1 1:nan\n", {}, "t.svm:1:5: non-finite feature value 'nan'"},
      {"1 1:-inf\n", {}, "t.svm:1:5: non-finite feature value '-inf'"},
      {"1 1:+Infinity\n", {}, "t.svm:1:5: non-finite feature value '+Infinity'"},
      {"1 1:nan(0x1)\n", {}, "t.svm:1:5: non-finite feature value 'nan(0x1)'"},
      {"1 1:1e39\n", {}, "t.svm:1:5: feature value '1e39' out of float range"},
      {"1 1:-3.5e38\n", {}, "t.svm:1:5: feature value '-3.5e38' out of float range"},
      {"1 1:1e400\n", {}, "t.svm:1:5: feature value '1e400' out of float range"},
      {"1 1:" + kLong + "\n", {}, "t.svm:1:5: invalid feature value '" + kLong.substr(0, 40) + "...'"},
      {"1 1:\xc3\xa9\n", {}, "t.svm:1:5: invalid feature value '\\xc3\\xa9'"},
      {"1 1:a\\b\n", {}, "t.svm:1:5: invalid feature value 'a\\\\b'"},
      // labels
      {"1:2 3:4\n", {}, "t.svm:1:1: missing label before '1:2'"},
      {"  qid:1 1:1\n", {}, "t.svm:1:3: missing label before 'qid:1'"},
      {"abc 1:1\n", {}, "t.svm:1:1: invalid label 'abc'"},
      {"++1 1:1\n", {}, "t.svm:1:1: invalid label '++1'"},
      {"- 1:1\n", {}, "t.svm:1:1: invalid label '-'"},
      {"1,5 1:1\n", {}, "t.svm:1:1: invalid label '1,5'"},
      {"inf 1:1\n", {}, "t.svm:1:1: non-finite label 'inf'"},
      {"NaN\n", {}, "t.svm:1:1: non-finite label 'NaN'"},
      {"-INFINITY 1:1\n", {}, "t.svm:1:1: non-finite label '-INFINITY'"},
      {"1e999 1:1\n", {}, "t.svm:1:1: label '1e999' out of range"},
      // qid
      {"1 qid:x 1:1\n", {}, "t.svm:1:3: invalid qid 'qid:x'"},
      {"1 qid:1.5\n", {}, "t.svm:1:3: invalid qid 'qid:1.5'"},
      {"1 qid:\n", {}, "t.svm:1:3: invalid qid 'qid:'"},
      {"1 qid:99999999999999999999\n", {}, "t.svm:1:3: invalid qid 'qid:99999999999999999999'"},
      {"1 1:1 qid:2\n", {}, "t.svm:1:7: misplaced qid 'qid:2' (must follow the label)"},
      {"1 qid:1 qid:2\n", {}, "t.svm:1:9: misplaced qid 'qid:2' (must follow the label)"},
      // duplicates
      {"1 5:1 5:2\n", {}, "t.svm:1:7: duplicate feature index '5'"},
      {"1 7:1 3:1 5:1 3:2\n", {}, "t.svm:1:15: duplicate feature index '3'"},
      {"1 9:1 4:1 9:2 4:2\n", {}, "t.svm:1:11: duplicate feature index '9'"},
      {"1 1:1 01:2\n", {}, "t.svm:1:7: duplicate feature index '01'"},
      {"1 2:1 2:1 x\n", {}, "t.svm:1:11: missing ':' in feature 'x'"},  // token errors come first
      // control bytes
      {std::string("1 1:1\0 2:1\n", 11), {}, "t.svm:1:6: control character '\\x00'"},
      {std::string("\0", 1), {}, "t.svm:1:1: control character '\\x00'"},
      {"1 1:1\r2:1\n", {}, "t.svm:1:6: control character '\\x0d'"},
      {"1 1:1\r\r\n", {}, "t.svm:1:6: control character '\\x0d'"},
      {"1 1:1\v2:2\n", {}, "t.svm:1:6: control character '\\x0b'"},
      {"1 1:1 \x7f\n", {}, "t.svm:1:7: control character '\\x7f'"},
      {"1\x1b 1:1\n", {}, "t.svm:1:2: control character '\\x1b'"},
      // line numbers: blank, comment, CRLF and unterminated lines all count
      {"# c\n\n1 1:1\n\n-1 0:1\n", {}, "t.svm:5:4: feature index '0' in 1-based mode" + kZeroHint},
      {"1 1:1\r\n1 1:1\r\n1 q\r\n", {}, "t.svm:3:3: missing ':' in feature 'q'"},
      {"1 1:1\n1 1:", {}, "t.svm:2:3: missing feature value in '1:'"},
      {"1 1:1 2:2\n1 1:1 x\n1 y\n", {}, "t.svm:2:7: missing ':' in feature 'x'"},
  };
  return cases;
}

TEST(LibsvmMalformed, AtLeastThirtyFiveDistinctCases) {
  const auto& cases = malformed_cases();
  std::vector<std::string> texts;
  for (const auto& c : cases) texts.push_back(c.text + "|" + std::to_string(c.options.n_features) + std::to_string(c.options.zero_based));
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(std::unique(texts.begin(), texts.end()), texts.end()) << "duplicate malformed case";
  std::printf("[ INFO     ] %zu malformed cases\n", cases.size());
  EXPECT_GE(cases.size(), 35u);
}

class LibsvmMalformedP : public ::testing::TestWithParam<std::size_t> {};

TEST_P(LibsvmMalformedP, ExactMessage) {
  const Malformed& c = malformed_cases()[GetParam()];
  for (int threads : {1, 2})
    for (const bool float64 : {false, true}) {  // reading the values to double precision: the same messages
      LibsvmOptions o = c.options;
      o.n_threads = threads;
      o.float64 = float64;
      EXPECT_EQ(parse_error(c.text, o), c.message) << "threads " << threads << " float64 " << float64;
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, LibsvmMalformedP, ::testing::Range<std::size_t>(0, malformed_cases().size()));

TEST(LibsvmMalformed, ParseErrorFields) {
  try {
    hetglm::parse_libsvm("1 1:1\n\n1 5:1 5:2\n", "a.svm");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "a.svm");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 7);
    EXPECT_EQ(e.message(), "duplicate feature index '5'");
    EXPECT_STREQ(e.what(), "a.svm:3:7: duplicate feature index '5'");
  }
}

TEST(LibsvmMalformed, BadOptions) {
  EXPECT_THROW(parse("1 1:1\n", opts(std::int64_t{1} << 31)), hetglm::InvalidArgument);
  EXPECT_THROW(parse("1 1:1\n", opts(-1, false, -1)), hetglm::InvalidArgument);
}

/// Many lines, so that the text is split into several chunks; errors keep global line numbers and the
/// earliest one is reported whatever the thread count.
TEST(LibsvmChunks, GlobalLineNumbersAndEarliestError) {
  std::string text;
  for (int i = 0; i < 40000; ++i) {
    text += (i % 3 == 0) ? "+1 1:0.5 7:1 12:-3e-2\n" : (i % 7 == 0 ? "\n# comment\n" : "-1 2:1 3:1\r\n");
  }
  const std::int64_t lines = std::count(text.begin(), text.end(), '\n');
  const Dataset ref = parse(text, opts(-1, false, 1));
  for (int threads : {0, 2, 3, 8}) expect_same(parse(text, opts(-1, false, threads)), ref);

  // An error in the last line, then one more earlier; the earlier one wins.
  std::string bad = text + "1 5:1 x\n";
  for (int threads : {1, 2, 3, 8})
    EXPECT_EQ(parse_error(bad, opts(-1, false, threads)), "t.svm:" + std::to_string(lines + 1) + ":7: missing ':' in feature 'x'");
  const std::size_t mid = bad.find('\n', bad.size() / 2) + 1;
  const std::int64_t mid_line = std::count(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(mid), '\n') + 1;
  bad.insert(mid, "1 0:1\n");
  for (int threads : {1, 2, 3, 8})
    EXPECT_EQ(parse_error(bad, opts(-1, false, threads)),
              "t.svm:" + std::to_string(mid_line) + ":3: feature index '0' in 1-based mode" + kZeroHint);
  const std::size_t early = bad.find('\n', 1000) + 1;
  const std::int64_t early_line = std::count(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(early), '\n') + 1;
  bad.insert(early, "abc\n");
  for (int threads : {1, 2, 3, 8})
    EXPECT_EQ(parse_error(bad, opts(-1, false, threads)), "t.svm:" + std::to_string(early_line) + ":1: invalid label 'abc'");
}

// ---------------------------------------------------------------------------------------------------
// Bundled data sets (data/SOURCES.md).

struct DataFile {
  const char* name;
  int rows;
  int max_index;
  std::int64_t nnz;
  std::map<double, int> label_counts;  // classification; empty for regression
  int distinct_labels;
  double min_label, max_label;
};

const std::vector<DataFile>& data_files() {
  static const std::vector<DataFile> files = {
      {"a9a", 32561, 123, 451592, {{-1, 24720}, {1, 7841}}, 2, -1, 1},
      {"a9a.t", 16281, 122, 225731, {{-1, 12435}, {1, 3846}}, 2, -1, 1},
      {"breast-cancer_scale", 683, 10, 6830, {{2, 444}, {4, 239}}, 2, 2, 4},
      {"german.numer_scale", 1000, 24, 23001, {{-1, 700}, {1, 300}}, 2, -1, 1},
      {"heart_scale", 270, 13, 3378, {{-1, 150}, {1, 120}}, 2, -1, 1},
      {"mushrooms", 8124, 112, 170604, {{1, 3916}, {2, 4208}}, 2, 1, 2},
      {"svmguide1", 3089, 4, 12356, {{0, 1089}, {1, 2000}}, 2, 0, 1},
      {"svmguide1.t", 4000, 4, 16000, {{0, 2000}, {1, 2000}}, 2, 0, 1},
      {"w7a", 24692, 300, 288148, {{-1, 23952}, {1, 740}}, 2, -1, 1},
      {"w7a.t", 25057, 300, 291438, {{-1, 24318}, {1, 739}}, 2, -1, 1},
      {"housing_scale", 506, 13, 6578, {}, 229, 5, 50},
      {"dna.scale", 2000, 180, 91233, {{1, 464}, {2, 485}, {3, 1051}}, 3, 1, 3},
      {"dna.scale.t", 1186, 180, 53669, {{1, 303}, {2, 280}, {3, 603}}, 3, 1, 3},
      {"iris.scale", 150, 4, 587, {{1, 50}, {2, 50}, {3, 50}}, 3, 1, 3},
      {"diabetes.svm", 442, 10, 4420, {}, 214, 25, 346},
  };
  return files;
}

TEST(LibsvmData, EveryBundledFileIsListed) {
  for (const auto& entry : fs::directory_iterator(kData)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".md")) continue;
    EXPECT_TRUE(std::any_of(data_files().begin(), data_files().end(), [&](const DataFile& f) { return name == f.name; }))
        << name;
  }
}

TEST(LibsvmData, ShapesAndLabelsMatchSources) {
  for (const DataFile& f : data_files()) {
    SCOPED_TRACE(f.name);
    const std::string path = kData + "/" + f.name;
    const Dataset d = hetglm::read_libsvm(path, opts(-1, false, 1));
    EXPECT_EQ(d.source, path);
    EXPECT_EQ(d.X.n_rows, f.rows);
    EXPECT_EQ(d.X.n_cols, f.max_index);
    EXPECT_EQ(d.X.nnz(), f.nnz);
    EXPECT_NO_THROW(hetglm::validate(d.X, f.name));
    std::map<double, int> counts;
    for (double y : d.y) ++counts[y];
    EXPECT_EQ(static_cast<int>(counts.size()), f.distinct_labels);
    if (!f.label_counts.empty()) {
      EXPECT_EQ(counts, f.label_counts);
    }
    EXPECT_EQ(counts.begin()->first, f.min_label);
    EXPECT_EQ(counts.rbegin()->first, f.max_label);
    for (int threads : {2, 3, 0}) expect_same(hetglm::read_libsvm(path, opts(-1, false, threads)), d);
  }
}

TEST(LibsvmData, NFeaturesLinesUpTestFiles) {
  const Dataset d = hetglm::read_libsvm(kData + "/a9a.t", opts(123));
  EXPECT_EQ(d.X.n_cols, 123);
  const std::string path = kData + "/a9a";
  EXPECT_EQ(hetglm::read_libsvm(path, opts(123)).X.n_cols, 123);
  try {
    hetglm::read_libsvm(path, opts(122));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    // The first row of a9a that uses feature 123.
    const std::string text = slurp(path);
    const std::size_t at = text.find(" 123:");
    ASSERT_NE(at, std::string::npos);
    const std::size_t line_start = text.rfind('\n', at) + 1;
    const std::int64_t line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
    EXPECT_EQ(std::string(e.what()), path + ":" + std::to_string(line) + ":" + std::to_string(at + 2 - line_start) +
                                         ": feature index '123' out of range (n_features 122)");
  }
}

TEST(LibsvmData, SpotValues) {
  // First line of heart_scale: "+1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1 8:-0.419847 ..."
  const Dataset d = hetglm::read_libsvm(kData + "/heart_scale");
  ASSERT_GE(d.X.nnz(), 4);
  EXPECT_EQ(d.y[0], 1.0);
  EXPECT_EQ(d.X.indices[0], 0);
  EXPECT_EQ(d.X.values[0], 0.708333f);
  EXPECT_EQ(d.X.values[3], -0.320755f);
  // svmguide1 uses exponent notation: "1 1:2.617300e+01 2:5.886700e+01 3:-1.894697e-01 4:1.251225e+02".
  const Dataset g = hetglm::read_libsvm(kData + "/svmguide1");
  EXPECT_EQ(g.X.values[0], 26.173f);
  EXPECT_EQ(g.X.values[2], -0.1894697f);
  EXPECT_EQ(g.X.values[3], 125.1225f);
}

// ---------------------------------------------------------------------------------------------------
// gzip input and I/O errors.

TEST(LibsvmGzip, ReadsGzipLikePlain) {
  TempDir dir;
  const std::string plain = slurp(kData + "/a9a");
  const std::string gz = dir.file("a9a.gz");
  gzip_file(gz, plain);
  const Dataset ref = hetglm::read_libsvm(kData + "/a9a");
  for (int threads : {1, 2}) {
    const Dataset d = hetglm::read_libsvm(gz, opts(-1, false, threads));
    expect_same(d, ref);
    EXPECT_EQ(d.source, gz);
  }
  // Gzip is recognised by its magic bytes, not by the name; concatenated members are read in turn.
  const std::string renamed = dir.file("a9a.txt");
  fs::copy_file(gz, renamed);
  expect_same(hetglm::read_libsvm(renamed), ref);
  const std::string twice = dir.file("twice.gz");
  spit(twice, slurp(gz) + slurp(gz));
  const Dataset d2 = hetglm::read_libsvm(twice);
  EXPECT_EQ(d2.X.n_rows, 2 * ref.X.n_rows);
  EXPECT_EQ(d2.X.nnz(), 2 * ref.X.nnz());
  // Empty compressed content; errors inside compressed text name the file and line.
  const std::string empty = dir.file("empty.gz");
  gzip_file(empty, "");
  EXPECT_EQ(hetglm::read_libsvm(empty).X.n_rows, 0);
  const std::string bad = dir.file("bad.gz");
  gzip_file(bad, "1 1:1\n1 2:x\n");
  try {
    hetglm::read_libsvm(bad);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), bad + ":2:5: invalid feature value 'x'");
  }
}

namespace {
/// Writes `bytes` to `path` and expects read_libsvm to throw IoError "cannot read 'PATH': MESSAGE".
void expect_io_error(const std::string& path, const std::string& bytes, const std::string& message) {
  spit(path, bytes);
  try {
    hetglm::read_libsvm(path);
    ADD_FAILURE() << "no error for " << message;
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + path + "': " + message);
  }
}
}  // namespace

// Data compressed with another tool are named by their magic bytes instead of failing at 1:1 or 1:2 with a
// "control character" (a bzip2 file read as text said "control character '\x00'" further on; the bytes below are
// the first bytes of real bzip2, xz, zstd and zip files).
TEST(LibsvmGzip, OtherCompressorsAreNamed) {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {std::string("BZh91AY&SY\x12\x34", 12), "bzip2-compressed data; only gzip is read as it is: decompress it first (bunzip2 -k)"},
      {std::string("\xFD" "7zXZ\x00\x00\x04", 9), "xz-compressed data; only gzip is read as it is: decompress it first (unxz -k)"},
      {std::string("\x28\xB5\x2F\xFD\x04\x00", 6), "zstd-compressed data; only gzip is read as it is: decompress it first (unzstd)"},
      {std::string("PK\x03\x04\x14\x00", 6), "zip-compressed data; only gzip is read as it is: decompress it first (unzip)"},
  };
  for (const auto& [bytes, message] : cases) expect_io_error(dir.file("data"), bytes, message);
  spit(dir.file("b.svm"), "B 1:1\n");  // two bytes that are not a magic number: the parser's message as before
  EXPECT_THROW(hetglm::read_libsvm(dir.file("b.svm")), ParseError);
}

TEST(LibsvmGzip, CorruptOrTruncatedGzipIsIoError) {
  TempDir dir;
  const std::string src = dir.file("src.gz");
  gzip_file(src, slurp(kData + "/heart_scale"));
  const std::string gz = slurp(src);
  ASSERT_GT(gz.size(), 100u);
  auto expect_io = [&](const std::string& bytes, const std::string& message) {
    expect_io_error(dir.file("x.gz"), bytes, message);
  };
  std::string crc = gz;
  crc[crc.size() - 8] ^= 0x55;  // CRC-32 of the trailer
  expect_io(crc, "corrupt gzip data (incorrect data check)");
  std::string method = gz;
  method[2] = 7;  // compression method must be 8 (deflate)
  expect_io(method, "corrupt gzip data (unknown compression method)");
  expect_io(gz.substr(0, gz.size() / 2), "truncated gzip data");
  expect_io(gz.substr(0, 2), "truncated gzip data");
  expect_io(gz.substr(0, gz.size() - 1), "truncated gzip data");
  expect_io(gz + "garbage", "corrupt gzip data (trailing garbage)");
  // Scrambled compressed bytes: some IoError, never a crash.
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    std::string s = gz;
    for (int k = 0; k < 5; ++k) s[10 + rng() % (s.size() - 18)] = static_cast<char>(rng());
    const std::string path = dir.file("scrambled.gz");
    spit(path, s);
    try {
      hetglm::read_libsvm(path);
    } catch (const IoError&) {
    } catch (const ParseError&) {
    }
  }
}

TEST(LibsvmIo, MissingFileAndDirectory) {
  TempDir dir;
  const std::string missing = dir.file("nope.svm");
  try {
    hetglm::read_libsvm(missing);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '" + missing + "': No such file or directory");
  }
  try {
    hetglm::read_libsvm(dir.path().string());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '" + dir.path().string() + "': Is a directory");
  }
}

// ---------------------------------------------------------------------------------------------------
// Writer.

Dataset random_dataset(std::mt19937& rng, int rows, int cols) {
  Dataset d;
  d.X.n_rows = rows;
  d.X.n_cols = cols;
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<float> specials = {0.f, -0.f, 1e-40f, -3.4028235e38f, 3.4028235e38f, 1.17549435e-38f, 0.1f, 1.f / 3};
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < cols; ++j) {
      if (rng() % 3 != 0) continue;
      d.X.indices.push_back(j);
      float v;
      switch (rng() % 4) {
        case 0: v = specials[rng() % specials.size()]; break;
        case 1: v = static_cast<float>(std::ldexp(u(rng), static_cast<int>(rng() % 200) - 100)); break;
        default: v = static_cast<float>(u(rng)); break;
      }
      d.X.values.push_back(v);
    }
    d.X.offsets.push_back(static_cast<std::int64_t>(d.X.indices.size()));
    const double labels[] = {1, -1, 0, 2, 0.1, 1.0 / 3, -1e300, 5e-324, std::ldexp(u(rng), 40)};
    d.y.push_back(labels[rng() % std::size(labels)]);
  }
  return d;
}

TEST(LibsvmWrite, RoundTripIsExact) {
  TempDir dir;
  std::mt19937 rng(42);
  for (bool zero_based : {false, true}) {
    for (int rep = 0; rep < 5; ++rep) {
      const Dataset d = random_dataset(rng, 50 + rep * 40, 1 + rep * 7);
      const std::string path = dir.file("rt.svm");
      hetglm::write_libsvm(path, d, zero_based);
      const Dataset back = hetglm::read_libsvm(path, opts(d.X.n_cols, zero_based));
      expect_same(back, d);
    }
  }
  // A real data set, written over an existing file.
  const Dataset a = hetglm::read_libsvm(kData + "/housing_scale");
  const std::string path = dir.file("rt.svm");
  hetglm::write_libsvm(path, a);
  expect_same(hetglm::read_libsvm(path, opts(a.X.n_cols)), a);
  // Only the written file remains in the folder (the temporary file was renamed).
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(LibsvmWrite, Format) {
  TempDir dir;
  const Dataset d = parse("+1 1:0.5 3:2\n-1\n0.1 2:1e-40\n");
  const std::string path = dir.file("f.svm");
  hetglm::write_libsvm(path, d);
  EXPECT_EQ(slurp(path), "1 1:0.5 3:2\n-1\n0.10000000000000001 2:1e-40\n");
  hetglm::write_libsvm(path, d, true);
  EXPECT_EQ(slurp(path), "1 0:0.5 2:2\n-1\n0.10000000000000001 1:1e-40\n");
}

TEST(LibsvmWrite, Errors) {
  TempDir dir;
  const Dataset d = parse("1 1:1\n");
  const std::string path = dir.file("no/such/folder/x.svm");
  try {
    hetglm::write_libsvm(path, d);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': No such file or directory");
  }
  Dataset bad = d;
  bad.y[0] = std::nan("");
  EXPECT_THROW(hetglm::write_libsvm(dir.file("nan.svm"), bad), hetglm::InvalidArgument);
  bad = d;
  bad.y.push_back(1);
  EXPECT_THROW(hetglm::write_libsvm(dir.file("rows.svm"), bad), hetglm::InvalidArgument);
  EXPECT_FALSE(fs::exists(dir.file("nan.svm")));
}

// ---------------------------------------------------------------------------------------------------
// Robustness: random mutations of small valid inputs parse or raise ParseError, never anything else.

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

TEST(LibsvmRobustness, RandomMutationsNeverCrash) {
  const std::vector<std::string> seeds = {
      "+1 1:0.5 3:2\n-1 2:1\n",
      "1 qid:3 1:1e-3 7:-2.5E+2 # c\n\n0 2:1\r\n",
      "2.5\n-3 4:0 9:1\n1 1:1 2:2 3:3",
      "# only\n1 10:1 2:2 5:5\n",
      "1 2147483646:1\n4 1:-0\t2:+7\n",
  };
  const char inserts[] = {':', '-', '+', 'e', 'E', '.', '0', '9', ' ', '\t', '\n', '\r', '#', '\0', 'q', '\x80'};
  std::mt19937 rng(12345);
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = seeds[rng() % seeds.size()];
    const int n_mut = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < n_mut && !s.empty(); ++m) {
      const std::size_t pos = rng() % (s.size() + 1);
      switch (rng() % 6) {
        case 0: if (pos < s.size()) s[pos] = static_cast<char>(rng()); break;                // byte flip
        case 1: s.insert(pos, 1, inserts[rng() % sizeof(inserts)]); break;                   // insertion
        case 2: s.resize(pos); break;                                                        // truncation
        case 3: if (pos < s.size()) s.erase(pos, 1 + rng() % 3); break;                      // deletion
        case 4: s.insert(pos, s.substr(rng() % s.size(), rng() % 8)); break;                 // duplication
        default: if (pos < s.size()) s[pos] = inserts[rng() % sizeof(inserts)]; break;       // replacement
      }
    }
    LibsvmOptions o;
    o.zero_based = rng() % 4 == 0;
    o.n_features = rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % 12) : -1;
    o.n_threads = 1;
    try {
      const Dataset d = hetglm::parse_libsvm(s, "m.svm", o);
      hetglm::validate(d.X, "mutated");
      ASSERT_EQ(d.y.size(), static_cast<std::size_t>(d.X.n_rows));
      for (double y : d.y) ASSERT_TRUE(std::isfinite(y));
      for (float v : d.X.values) ASSERT_TRUE(std::isfinite(v));
      if (o.n_features >= 0) {
        ASSERT_GE(d.X.n_cols, o.n_features);
      }
      ++parsed;
    } catch (const ParseError& e) {
      const std::string w = e.what();
      ASSERT_EQ(w.rfind("m.svm:", 0), 0u) << w;
      ASSERT_TRUE(printable(w)) << w;
      ASSERT_GE(e.line(), 1);
      ASSERT_GE(e.column(), 1);
      ++failed;
    }
  }
  std::printf("[ INFO     ] mutations: %d parsed, %d ParseError\n", parsed, failed);
  EXPECT_GT(parsed, 1000);
  EXPECT_GT(failed, 1000);
}

/// Mutations of a text large enough to be split into chunks: the result (data or message) does not
/// depend on the thread count.
TEST(LibsvmRobustness, MutatedLargeInputSameForAnyThreadCount) {
  const std::string base = slurp(kData + "/a9a").substr(0, 300000);
  std::mt19937 rng(99);
  const char inserts[] = {':', '-', 'e', '\0', '\n', ' ', 'x', '#'};
  for (int iter = 0; iter < 12; ++iter) {
    std::string s = base;
    for (int m = 0; m < iter % 4; ++m) s[rng() % s.size()] = inserts[rng() % sizeof(inserts)];
    std::string ref_msg;
    Dataset ref;
    try {
      ref = hetglm::parse_libsvm(s, "big.svm", opts(-1, false, 1));
    } catch (const ParseError& e) {
      ref_msg = e.what();
    }
    for (int threads : {2, 5}) {
      try {
        const Dataset d = hetglm::parse_libsvm(s, "big.svm", opts(-1, false, threads));
        EXPECT_EQ(ref_msg, "");
        expect_same(d, ref);
      } catch (const ParseError& e) {
        EXPECT_EQ(std::string(e.what()), ref_msg);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Throughput (prints only; no assertion on timing).

TEST(LibsvmThroughput, A9a) {
  const std::string text = slurp(kData + "/a9a");
  const double mb = static_cast<double>(text.size()) / 1e6;
  for (int threads : {1, 2}) {
    double best = 1e300;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      const Dataset d = hetglm::parse_libsvm(text, "a9a", opts(-1, false, threads));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_EQ(d.X.n_rows, 32561);
      best = std::min(best, s);
    }
    std::printf("[ INFO     ] a9a parse, %d thread(s): %.1f MB/s (%.2f MB in %.2f ms, best of 5)\n", threads,
                mb / best, mb, best * 1e3);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Streaming (issue 18): blocks, carried-over lines, the line bound, gzip bombs, the memory budget, interrupts.

namespace {

/// A read function over `text` giving at most `piece` bytes a call; counts the bytes handed out.
struct Pieces {
  std::string_view text;
  std::size_t piece;
  std::size_t pos = 0;
  std::size_t operator()(char* buf, std::size_t n) {
    const std::size_t k = std::min({n, piece, text.size() - pos});
    std::memcpy(buf, text.data() + pos, k);
    pos += k;
    return k;
  }
};

/// The data set, or "ERROR what()", of reading `text` through read_libsvm_stream.
std::string stream_error(const std::string& text, LibsvmOptions o, std::size_t block, std::size_t piece) {
  o.block_bytes = block;
  Pieces p{text, piece};
  try {
    hetglm::read_libsvm_stream(std::ref(p), "t.svm", o);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "<parsed>";
}

/// gzip (deflate level `level`) of `bytes`, made in memory.
std::string gzip_string(const std::string& bytes, int level) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, bytes.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// An endless stream of the same line.
struct Endless {
  std::string line;
  std::size_t pos = 0;
  std::uint64_t calls = 0;
  std::size_t operator()(char* buf, std::size_t n) {
    ++calls;
    for (std::size_t i = 0; i < n; ++i, pos = (pos + 1) % line.size()) buf[i] = line[pos];
    return n;
  }
};

}  // namespace

TEST(LibsvmStream, MalformedCasesGiveTheSameMessageInAnyBlocksAndPieces) {
  for (const Malformed& c : malformed_cases()) {
    for (std::size_t block : {1, 2, 5, 64}) {
      for (std::size_t piece : {1, 3, 7}) {
        for (int threads : {1, 2}) {
          LibsvmOptions o = c.options;
          o.n_threads = threads;
          EXPECT_EQ(stream_error(c.text, o, block, piece), c.message)
              << "block " << block << " piece " << piece << " threads " << threads;
          o.block_bytes = block;
          EXPECT_EQ(parse_error(c.text, o), c.message) << "parse_libsvm, block " << block;
        }
      }
    }
  }
}

TEST(LibsvmStream, BundledFilesAreTheSameInAnyBlocks) {
  for (const char* name : {"a9a", "heart_scale", "dna.scale", "housing_scale"}) {
    SCOPED_TRACE(name);
    const std::string path = kData + "/" + name;
    const Dataset ref = hetglm::read_libsvm(path, opts(-1, false, 1));
    const std::string text = slurp(path);
    for (std::size_t block : {std::size_t{1000}, std::size_t{65536}, std::size_t{1} << 20}) {
      for (int threads : {1, 2, 0}) {
        LibsvmOptions o = opts(-1, false, threads);
        o.block_bytes = block;
        expect_same(hetglm::read_libsvm(path, o), ref);
        expect_same(hetglm::parse_libsvm(text, path, o), ref);
        Pieces p{text, 4093};
        const Dataset d = hetglm::read_libsvm_stream(std::ref(p), "s", o);
        expect_same(d, ref);
        EXPECT_EQ(d.source, "s");
      }
    }
  }
  // gzip inflated block by block, in pieces, concatenated members included.
  TempDir dir;
  const std::string plain = slurp(kData + "/a9a");
  const std::string gz = gzip_string(plain, 6);
  const Dataset ref = hetglm::read_libsvm(kData + "/a9a");
  for (std::size_t piece : {std::size_t{1}, std::size_t{777}, std::size_t{1} << 20}) {
    LibsvmOptions o = opts(-1, false, 2);
    o.block_bytes = 100000;
    const std::string twice = gz + gz;
    Pieces p{twice, piece};
    const Dataset d = hetglm::read_libsvm_stream(std::ref(p), "a9a.gz", o);
    ASSERT_EQ(d.X.n_rows, 2 * ref.X.n_rows);
    ASSERT_EQ(d.X.nnz(), 2 * ref.X.nnz());
    EXPECT_TRUE(std::equal(ref.X.indices.begin(), ref.X.indices.end(), d.X.indices.begin() + ref.X.nnz()));
  }
}

TEST(LibsvmStream, ALineLongerThanTheBoundIsAnErrorAfterAnyEarlierError) {
  const std::size_t max = hetglm::kMaxLibsvmLineBytes;
  EXPECT_EQ(max, std::size_t{64} << 20);
  const std::string bound = "line longer than the limit of 67108864 bytes (64 MiB)";
  // Exactly the bound is fine (a comment fills it), one byte more is not.
  std::string exact = "1 1:1 #";
  exact.resize(max, 'x');
  const std::string over = exact + "x";
  TempDir dir;
  for (int threads : {1, 2}) {
    LibsvmOptions o = opts(-1, false, threads);
    EXPECT_EQ(parse(exact + "\n-1 2:1\n", o).X.n_rows, 2);
    EXPECT_EQ(parse_error("1 1:1\n" + over + "\n-1 2:1\n", o), "t.svm:2:0: " + bound);
    EXPECT_EQ(parse_error("1 1:1\n" + over, o), "t.svm:2:0: " + bound);  // unterminated last line
    EXPECT_EQ(stream_error("1 1:1\n" + over + "\n", o, 0, std::size_t{1} << 20), "t.svm:2:0: " + bound);
    EXPECT_EQ(stream_error("1 1:1\n" + over, o, 1 << 20, 1 << 16), "t.svm:2:0: " + bound);
    // An error in the line's first 64 MiB comes first, found as soon as a block holds it.
    std::string early = "1 1:1 abc ";
    early.resize(max + 100, ' ');
    EXPECT_EQ(parse_error(early + "\n", o), "t.svm:1:7: missing ':' in feature 'abc'");
    EXPECT_EQ(stream_error(early + "\n", o, 0, std::size_t{1} << 20), "t.svm:1:7: missing ':' in feature 'abc'");
    // A control byte in a token cut by the bound is certain; the token itself is not.
    std::string cut(max - 2, ' ');
    cut = "1" + cut + "\x01z 2:1\n";
    EXPECT_EQ(parse_error(cut, o), "t.svm:1:" + std::to_string(max) + ": control character '\\x01'");
    std::string cut_token(max - 1, ' ');
    cut_token = "1" + cut_token + "1:1 x\n";  // "1:1" starts at the bound's last byte
    EXPECT_EQ(parse_error(cut_token, o), "t.svm:1:0: " + bound);
    const std::string path = dir.file("long.svm");
    spit(path, "1 1:1\n" + over + "\n");
    try {
      hetglm::read_libsvm(path, o);
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(std::string(e.what()), path + ":2:0: " + bound);
    }
  }
}

TEST(LibsvmStream, GzipBombOfZerosFailsInTheFirstBlock) {
  const std::string gz = gzip_string(std::string(std::size_t{256} << 20, '\0'), 1);  // 256 MiB of NUL bytes
  Pieces p{gz, std::size_t{1} << 30};
  try {
    hetglm::read_libsvm_stream(std::ref(p), "bomb.gz");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "bomb.gz:1:1: control character '\\x00'");
  }
  EXPECT_LE(p.pos, std::size_t{1} << 20) << "compressed bytes read of " << gz.size();
  TempDir dir;
  const std::string path = dir.file("bomb.gz");
  spit(path, gz);
  try {
    hetglm::read_libsvm(path);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":1:1: control character '\\x00'");
  }
}

TEST(LibsvmStream, GzipOfBlankLinesOnlyIsRefusedAsABomb) {
  const std::string gz = gzip_string(std::string(std::size_t{160} << 20, '\n'), 1);
  Pieces p{gz, std::size_t{1} << 30};
  try {
    hetglm::read_libsvm_stream(std::ref(p), "blank.gz");
    FAIL() << "no error";
  } catch (const IoError& e) {
    const std::string w = e.what();
    EXPECT_EQ(w.rfind("cannot read 'blank.gz': gzip data expanding more than 100:1 (", 0), 0u) << w;
    EXPECT_TRUE(w.ends_with(" compressed) without a single sample; refusing it as a decompression bomb")) << w;
  }
  EXPECT_LT(p.pos, gz.size());
  // The same text uncompressed is an empty data set, and so is a small gzip of blank lines.
  EXPECT_EQ(hetglm::read_libsvm_stream(Pieces{gzip_string(std::string(1 << 20, '\n'), 9), 4096}, "b.gz").X.n_rows, 0);
}

TEST(LibsvmStream, CorruptGzipMessagesAreKeptWhenStreamedInPieces) {
  const std::string gz = gzip_string(slurp(kData + "/heart_scale"), 6);
  auto io_error = [](const std::string& bytes, std::size_t piece) {
    Pieces p{bytes, piece};
    try {
      hetglm::read_libsvm_stream(std::ref(p), "x.gz");
    } catch (const IoError& e) {
      return std::string(e.what());
    }
    return std::string("<no IoError>");
  };
  for (std::size_t piece : {1, 5, 4096}) {
    std::string crc = gz;
    crc[crc.size() - 8] ^= 0x55;
    EXPECT_EQ(io_error(crc, piece), "cannot read 'x.gz': corrupt gzip data (incorrect data check)");
    EXPECT_EQ(io_error(gz.substr(0, gz.size() / 2), piece), "cannot read 'x.gz': truncated gzip data");
    EXPECT_EQ(io_error(gz.substr(0, 2), piece), "cannot read 'x.gz': truncated gzip data");
    EXPECT_EQ(io_error(gz + "garbage", piece), "cannot read 'x.gz': corrupt gzip data (trailing garbage)");
    EXPECT_EQ(io_error(gz + "\x1f", piece), "cannot read 'x.gz': corrupt gzip data (trailing garbage)");
  }
}

TEST(LibsvmMemory, AnExplicitLimitStopsAnEndlessStreamWithTheMessage) {
  // "1 1:1\n" keeps 24 bytes a row; blocks of 1 MiB hold 174762 or 174763 lines. After the second block
  // 349525 rows take 8388608 bytes, over the limit of 8 MB.
  LibsvmOptions o = opts(-1, false, 1);
  o.block_bytes = std::size_t{1} << 20;
  o.memory_limit = 8000000;
  Endless gen{"1 1:1\n"};
  try {
    hetglm::read_libsvm_stream(std::ref(gen), "gen", o);
    FAIL() << "no error";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()),
              "'gen': stopped at line 349525 (2.1 MB read): the data kept would exceed the memory limit of 8.0 MB "
              "(memory_limit)");
  }
  // The same numbers for any thread count, and the name of the limit as the caller gives it.
  o.n_threads = 2;
  o.memory_limit_name = "--memory-limit";
  Endless gen2{"1 1:1\n"};
  try {
    hetglm::read_libsvm_stream(std::ref(gen2), "gen", o);
    FAIL() << "no error";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()),
              "'gen': stopped at line 349525 (2.1 MB read): the data kept would exceed the memory limit of 8.0 MB "
              "(--memory-limit)");
  }
  // parse_libsvm checks the same budget batch by batch.
  std::string text;
  for (int i = 0; i < 400000; ++i) text += "1 1:1\n";
  o.n_threads = 1;
  o.memory_limit_name = "memory_limit";
  try {
    hetglm::parse_libsvm(text, "mem", o);
    FAIL() << "no error";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_EQ(std::string(e.what()),
              "'mem': stopped at line 349526 (2.1 MB read): the data kept would exceed the memory limit of 8.0 MB "
              "(memory_limit)");
  }
  o.memory_limit = UINT64_MAX;  // no limit
  EXPECT_EQ(hetglm::parse_libsvm(text, "mem", o).X.n_rows, 400000);
}

namespace {

/// A fake /proc and /sys below a temporary folder.
class FakeRoot {
 public:
  void put(const std::string& rel, const std::string& text) {
    const fs::path p = dir_.path() / rel;
    fs::create_directories(p.parent_path());
    spit(p.string(), text);
  }
  std::string root() const { return dir_.path().string(); }

 private:
  TempDir dir_;
};

}  // namespace

TEST(LibsvmMemory, MemoryLimitReadsCgroupV2AndItsAncestors) {
  FakeRoot r;
  r.put("proc/self/cgroup", "0::/a/b\n");
  r.put("proc/self/mountinfo",
        "25 30 0:23 / /proc rw - proc proc rw\n"
        "31 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  r.put("sys/fs/cgroup/a/b/memory.max", "max\n");
  r.put("sys/fs/cgroup/a/b/memory.current", "123\n");
  r.put("sys/fs/cgroup/a/memory.max", "1500000000\n");
  r.put("sys/fs/cgroup/a/memory.current", "300000000\n");
  r.put("sys/fs/cgroup/a/memory.stat", "anon 150000000\nfile 150000000\nactive_file 100000000\ninactive_file 50000000\n");
  r.put("proc/meminfo", "MemTotal:       24684084 kB\nMemFree:        24200204 kB\nMemAvailable:   20000000 kB\n");
  hetglm::MemoryLimit m = hetglm::memory_limit_at(r.root());
  EXPECT_EQ(m.bytes, 1350000000u);
  EXPECT_EQ(m.source, "cgroup memory.max of /a: 1.5 GB, 150.0 MB in use");
  // MemAvailable when it is the smaller.
  r.put("proc/meminfo", "MemAvailable:   1000000 kB\n");
  m = hetglm::memory_limit_at(r.root());
  EXPECT_EQ(m.bytes, 1024000000u);
  EXPECT_EQ(m.source, "MemAvailable");
  // Usage beyond the limit: 1 byte left (0 would mean unknown).
  r.put("sys/fs/cgroup/a/memory.current", "1700000000\n");
  EXPECT_EQ(hetglm::memory_limit_at(r.root()).bytes, 1u);
}

TEST(LibsvmMemory, MemoryLimitReadsCgroupV1AndKnowsNoLimit) {
  FakeRoot r;
  r.put("proc/self/cgroup", "5:devices:/x\n4:memory:/x/y\n0::/\n");
  r.put("proc/self/mountinfo",
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  r.put("sys/fs/cgroup/memory/x/y/memory.limit_in_bytes", "9223372036854771712\n");  // v1's "no limit"
  r.put("sys/fs/cgroup/memory/x/memory.limit_in_bytes", "1000000000\n");
  r.put("sys/fs/cgroup/memory/x/memory.usage_in_bytes", "400000000\n");
  r.put("sys/fs/cgroup/memory/x/memory.stat", "cache 1\ninactive_file 7\ntotal_inactive_file 100000000\ntotal_active_file 0\n");
  r.put("proc/meminfo", "MemAvailable:   20000000 kB\n");
  hetglm::MemoryLimit m = hetglm::memory_limit_at(r.root());
  EXPECT_EQ(m.bytes, 700000000u);
  EXPECT_EQ(m.source, "cgroup memory.limit_in_bytes of /x: 1.0 GB, 300.0 MB in use");
  // No limit anywhere: MemAvailable; nothing readable: unknown.
  r.put("sys/fs/cgroup/memory/x/memory.limit_in_bytes", "9223372036854771712\n");
  m = hetglm::memory_limit_at(r.root());
  EXPECT_EQ(m.bytes, 20480000000u);
  EXPECT_EQ(m.source, "MemAvailable");
  TempDir empty;
  EXPECT_EQ(hetglm::memory_limit_at(empty.path().string()).bytes, 0u);
  // A container's mount shows its own cgroup at the mount point (mount root /x/y).
  FakeRoot c;
  c.put("proc/self/cgroup", "4:memory:/x/y\n");
  c.put("proc/self/mountinfo", "35 31 0:32 /x/y /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  c.put("sys/fs/cgroup/memory/memory.limit_in_bytes", "2000000000\n");
  c.put("sys/fs/cgroup/memory/memory.usage_in_bytes", "0\n");
  m = hetglm::memory_limit_at(c.root());
  EXPECT_EQ(m.bytes, 2000000000u);
  EXPECT_EQ(m.source, "cgroup memory.limit_in_bytes of /x/y: 2.0 GB, 0 bytes in use");
  // This machine: something is known (at least MemAvailable).
  EXPECT_GT(hetglm::memory_limit_bytes(), 0u);
}

TEST(LibsvmMemory, ByteSizesAsTextAndBack) {
  EXPECT_EQ(hetglm::parse_byte_size("150M", "--memory-limit"), 150000000u);
  EXPECT_EQ(hetglm::parse_byte_size("64Mi", "x"), 67108864u);
  EXPECT_EQ(hetglm::parse_byte_size("1.5G", "x"), 1500000000u);
  EXPECT_EQ(hetglm::parse_byte_size("2Gi", "x"), 2147483648u);
  EXPECT_EQ(hetglm::parse_byte_size("1000", "x"), 1000u);
  EXPECT_EQ(hetglm::parse_byte_size("512B", "x"), 512u);
  EXPECT_EQ(hetglm::parse_byte_size("3K", "x"), 3000u);
  EXPECT_EQ(hetglm::parse_byte_size("1T", "x"), 1000000000000u);
  EXPECT_EQ(hetglm::parse_byte_size("18446744073709551615", "x"), 18446744073709551615u);  // 2^64 - 1, exactly
  EXPECT_EQ(hetglm::parse_byte_size("18446744073709551615B", "x"), 18446744073709551615u);
  EXPECT_EQ(hetglm::parse_byte_size("2.5K", "x"), 2500u);
  EXPECT_EQ(hetglm::parse_byte_size("18446744073709551615.000", "x"), 18446744073709551615u);
  EXPECT_EQ(hetglm::parse_byte_size("1024.", "x"), 1024u);
  // parse_byte_size(text) throws InvalidArgument with exactly `message`.
  auto expect_error = [](const std::string& text, const std::string& message) {
    try {
      hetglm::parse_byte_size(text, "--memory-limit");
      ADD_FAILURE() << text;
    } catch (const hetglm::InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), message) << text;
    }
  };
  const std::string nines(400, '9'), tiny = "0." + std::string(400, '0') + "1";
  for (const std::string& small : {std::string("0"), std::string("0.1"), std::string("0K"), std::string(".0"), tiny,
                                    tiny + "K"})
    expect_error(small, "--memory-limit: must be at least 1 byte, got " + hetglm::quote_token(small) +
                            " (a limit of no bytes keeps no data)");
  for (const std::string& big : {std::string("18446744073709551616"), std::string("99999999999999999999999"),
                                  std::string("20000000T"), std::string("16777216Ti"), nines, nines + ".0",
                                  nines + "Ki"})
    expect_error(big, "--memory-limit: " + hetglm::quote_token(big) +
                          " is too large (at most 18446744073709551615 bytes)");
  for (const char* frac : {"1.9", "2.5B", "1000.5", "9007199254740993.5", "1.0000000000000000000000000000001"})
    expect_error(frac, "--memory-limit: a number of bytes must be whole, got " + hetglm::quote_token(frac));
  for (const char* bad : {"", "M", "12X", "-5M", "1e3", "1 M", "nan", "inf", "1.2.3", ".", "1..5"})
    expect_error(bad, "--memory-limit: cannot parse " + hetglm::quote_token(bad) +
                          " (expected a positive number of bytes with an optional K M G T or Ki Mi Gi Ti suffix, such "
                          "as 512M or 2Gi)");
  EXPECT_EQ(hetglm::format_bytes(0), "0 bytes");
  EXPECT_EQ(hetglm::format_bytes(999), "999 bytes");
  EXPECT_EQ(hetglm::format_bytes(1000), "1.0 kB");
  EXPECT_EQ(hetglm::format_bytes(67108864), "67.1 MB");
  EXPECT_EQ(hetglm::format_bytes(999999999), "1.0 GB");
  EXPECT_EQ(hetglm::format_bytes(1500000000), "1.5 GB");
  EXPECT_EQ(hetglm::format_bytes(3000000000000), "3.0 TB");
}

TEST(LibsvmInterrupt, ShouldStopIsPolledBetweenBlocks) {
  LibsvmOptions o = opts(-1, false, 1);
  o.block_bytes = 4096;
  int polls = 0;
  o.should_stop = [&polls] { return ++polls == 5; };
  Endless gen{"1 1:1\n"};
  try {
    hetglm::read_libsvm_stream(std::ref(gen), "gen", o);
    FAIL() << "no error";
  } catch (const hetglm::Interrupted& e) {
    EXPECT_EQ(std::string(e.what()), "interrupted while reading 'gen'");
    EXPECT_EQ(e.file(), "gen");
  }
  EXPECT_EQ(polls, 5);
  EXPECT_LE(gen.calls, 5u);
}

TEST(LibsvmInterrupt, AFifoWithoutWriterIsInterrupted) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::atomic<bool> stop{false};
  LibsvmOptions o;
  o.should_stop = [&stop] { return stop.load(); };
  std::thread t([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    hetglm::read_libsvm(fifo, o);
    ADD_FAILURE() << "no error";
  } catch (const hetglm::Interrupted& e) {
    EXPECT_EQ(e.file(), fifo);
  }
  t.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  // A writer that comes later is read to its end.
  const std::string text = slurp(kData + "/heart_scale");
  std::thread w([&] { spit(fifo, text); });
  const Dataset d = hetglm::read_libsvm(fifo, opts(-1, false, 1));
  w.join();
  expect_same(d, hetglm::parse_libsvm(text, "x", opts(-1, false, 1)));
}

TEST(LibsvmIo, DevicesAreRefused) {
  try {
    hetglm::read_libsvm("/dev/zero");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '/dev/zero': not a regular file or pipe");
  }
}

// with_bias_column (the bias feature of -B / fit_intercept): the parallel copy of a large matrix (1 M nonzeros and up)
// and the sequential one of a small matrix both equal a row-by-row construction, empty rows included.
TEST(Matrix, BiasColumnEqualsARowByRowConstructionForSmallAndLargeMatrices) {
  for (const hetglm::index_t rows : {50, 60000}) {
    std::mt19937 gen(static_cast<unsigned>(rows));
    hetglm::CsrMatrix a;
    a.n_rows = rows;
    a.n_cols = 3000;
    std::vector<hetglm::index_t> idx;
    std::vector<float> val;
    for (hetglm::index_t r = 0; r < rows; ++r) {
      const int k = r % 7 == 3 ? 0 : static_cast<int>(gen() % 60);  // every 7th row empty
      const auto start = static_cast<hetglm::index_t>(gen() % 50), stride = static_cast<hetglm::index_t>(1 + gen() % 40);
      for (int j = 0; j < k; ++j) {  // sorted, distinct columns below 50 + 59 * 40 < 3000
        idx.push_back(start + j * stride);
        val.push_back(static_cast<float>(gen() % 1000) / 7.0f - 50.0f);
      }
      a.offsets.push_back(static_cast<hetglm::offset_t>(idx.size()));
    }
    a.indices.assign(idx.begin(), idx.end());
    a.values.assign(val.begin(), val.end());
    if (rows > 1000) {
      ASSERT_GE(a.nnz(), hetglm::offset_t{1} << 20);  // the parallel path
    }
    const hetglm::CsrMatrix b = hetglm::with_bias_column(a, 2.5);
    std::vector<hetglm::offset_t> off{0};
    std::vector<hetglm::index_t> bi;
    std::vector<float> bv;
    for (hetglm::index_t r = 0; r < rows; ++r) {
      for (auto k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
        bi.push_back(a.indices[static_cast<std::size_t>(k)]);
        bv.push_back(a.values[static_cast<std::size_t>(k)]);
      }
      bi.push_back(3000);
      bv.push_back(2.5f);
      off.push_back(static_cast<hetglm::offset_t>(bi.size()));
    }
    EXPECT_EQ(b.n_rows, rows);
    EXPECT_EQ(b.n_cols, 3001);
    EXPECT_EQ(b.offsets, off);
    EXPECT_TRUE(std::equal(b.indices.begin(), b.indices.end(), bi.begin(), bi.end()));
    EXPECT_TRUE(std::equal(b.values.begin(), b.values.end(), bv.begin(), bv.end()));
    hetglm::validate(b, "with_bias_column");
  }
}

// LibsvmOptions::float64: values read to double precision, values_lo = what the float32 rounding drops
// (double(values[k]) + double(values_lo[k]) is the written value to 2^-48), the same in any blocks, threads and
// pieces (the chunks' and batches' copies carry it, unsorted rows are sorted with it); none for a file whose values
// float32 holds exactly, nor for one holding a value below kValuesLoMin; out of float range stays an error; the
// float32 values are those of the default read.
TEST(LibsvmFloat64, ValuesLoIsWhatFloat32Drops) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  std::string text;
  std::vector<std::vector<std::pair<int, double>>> rows;
  for (int i = 0; i < 3000; ++i) {
    text += i % 2 ? "+1" : "-1";
    std::vector<std::pair<int, double>> r;
    for (int j : {7, 2, 11, 5}) {  // unsorted: the reader sorts each row
      const double v = g(rng) * 1e3;
      char num[32];
      std::snprintf(num, sizeof num, "%.17g", v);
      text += " " + std::to_string(j + i % 3) + ":" + num;
      r.emplace_back(j + i % 3 - 1, std::strtod(num, nullptr));
    }
    text += "\n";
    std::sort(r.begin(), r.end());
    rows.push_back(r);
  }
  LibsvmOptions o = opts(-1, false, 1);
  const Dataset f32 = hetglm::parse_libsvm(text, "t", o);
  EXPECT_FALSE(f32.X.has_lo());
  o.float64 = true;
  const Dataset ref = hetglm::parse_libsvm(text, "t", o);
  ASSERT_TRUE(ref.X.has_lo());
  EXPECT_EQ(ref.X.values, f32.X.values);
  EXPECT_EQ(ref.X.indices, f32.X.indices);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t k = 0; k < rows[i].size(); ++k) {
      const auto p = static_cast<std::size_t>(ref.X.offsets[i]) + k;
      ASSERT_EQ(ref.X.indices[p], rows[i][k].first);
      const double x = rows[i][k].second;
      EXPECT_NEAR(double(ref.X.values[p]) + double(ref.X.values_lo[p]), x, 0x1p-48 * std::fabs(x));
      EXPECT_NE(double(ref.X.values[p]), x);
    }
  for (std::size_t block : {std::size_t{1000}, std::size_t{65536}}) {
    for (int threads : {1, 2}) {
      LibsvmOptions b = opts(-1, false, threads);
      b.float64 = true;
      b.block_bytes = block;
      const Dataset d = hetglm::parse_libsvm(text, "t", b);
      expect_same(d, ref);
      EXPECT_EQ(d.X.values_lo, ref.X.values_lo);
      Pieces p{text, 4093};
      EXPECT_EQ(hetglm::read_libsvm_stream(std::ref(p), "s", b).X.values_lo, ref.X.values_lo);
    }
  }
  // values_lo_tiny tells the two kinds of empty values_lo apart (the distributed trainer's ranks agree on it)
  bool tiny = false;
  o.values_lo_tiny = &tiny;
  EXPECT_FALSE(hetglm::parse_libsvm("1 1:0.5 2:3\n-1 1:0.25\n", "t", o).X.has_lo());  // float32 values exactly
  EXPECT_FALSE(tiny);
  EXPECT_TRUE(hetglm::parse_libsvm("1 1:0.1 2:1e-29\n", "t", o).X.has_lo());
  EXPECT_FALSE(tiny);
  EXPECT_FALSE(hetglm::parse_libsvm("1 1:0.1 2:1e-35\n", "t", o).X.has_lo());  // below kValuesLoMin
  EXPECT_TRUE(tiny);
  EXPECT_TRUE(hetglm::parse_libsvm("1 1:0.1 2:1e-29\n", "t", o).X.has_lo());
  EXPECT_TRUE(tiny);  // set, never reset
  o.values_lo_tiny = nullptr;
  LibsvmOptions small = o;  // the memory budget counts the remainders, and its message says so
  small.memory_limit = 1000;
  small.block_bytes = 1000;
  try {
    hetglm::parse_libsvm(text, "t", small);
    ADD_FAILURE() << "no error";
  } catch (const hetglm::MemoryLimitError& e) {
    EXPECT_NE(std::string(e.what()).find(" (memory_limit); the values are kept to double precision (12 bytes a nonzero "
                                         "instead of 8), as a tol below 1e-6 asks"),
              std::string::npos)
        << e.what();
  }
  try {
    hetglm::parse_libsvm("1 1:0.1 2:1e39\n", "t", o);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "t:1:11: feature value '1e39' out of float range");
  }
}
