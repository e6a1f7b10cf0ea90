// SPDX-License-Identifier: Apache-2.0
// Linear model text format (layout: see model.hpp), its strict loader, the atomic writer and prediction.
//
// Loader design: the file is read block by block and scanned line by line (input.hpp LineReader), each line
// bounded (the first at 4 KiB: a file of NUL bytes or a huge first line fails after reading one block; the others
// at 1 MiB plus 32 bytes per class, at most 64 MiB); nothing is allocated from the header's claims (nr_feature,
// nr_class) — the weight vector grows as lines arrive, its reservation capped by the number of bytes left in the
// file and by the memory budget — so a header claiming billions of features with a short body fails fast in tiny
// memory, and the weights kept are checked against the memory budget as they grow.
#include "hetglm/model.hpp"
#include "hetglm/losses.hpp"
#include "hetglm/models.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/memory.hpp"
#include "input.hpp"

namespace hetglm {
namespace {

constexpr std::string_view kFormatVersion = "hetglm-1";
constexpr std::size_t kMaxFirstLine = 4096;                    ///< "format hetglm-1" needs 15
constexpr std::size_t kMaxLine = std::size_t{64} << 20;        ///< any other line (1 MiB + 32 bytes per class)
constexpr std::int64_t kMaxClass = std::numeric_limits<index_t>::max();
constexpr std::int64_t kMaxFeature = std::int64_t{std::numeric_limits<index_t>::max()} - 1;  // + bias fits

bool is_classifier_model(std::string_view m) {
  const ModelRow* r = find_model(m);
  return r && r->classifier;
}
bool is_regression_model(std::string_view m) {
  const ModelRow* r = find_model(m);
  return r && !r->classifier;
}

std::int64_t columns_of(std::int64_t nr_class) { return nr_class > 2 ? nr_class : 1; }
std::int64_t rows_of(const LinearModel& m) { return std::int64_t{m.nr_feature} + (m.bias >= 0 ? 1 : 0); }

std::string plural(std::int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// ------------------------------------------------------------------------------------------------
// Formatting

void put_double(fmt::memory_buffer& out, double v) { fmt::format_to(std::back_inserter(out), "{:.17g}", v); }

void put_list(fmt::memory_buffer& out, std::string_view key, const std::vector<double>& values) {
  out.append(key);
  for (double v : values) {
    out.push_back(' ');
    put_double(out, v);
  }
  out.push_back('\n');
}

void put_line(fmt::memory_buffer& out, std::string_view key, std::string_view value) {
  out.append(key);
  out.push_back(' ');
  out.append(value);
  out.push_back('\n');
}

// Shape checks for an in-memory model handed to the writer or to prediction (the loader guarantees
// them for loaded models). Prevents out-of-bounds reads on a hand-built inconsistent model.
void check_shape(const LinearModel& m, std::string_view what) {
  if (m.nr_class < 2)
    throw InvalidArgument(fmt::format("{}: nr_class must be >= 2, found {}", what, m.nr_class));
  if (m.nr_feature < 0 || m.nr_feature > kMaxFeature)
    throw InvalidArgument(fmt::format("{}: nr_feature must be in [0, {}], found {}", what, kMaxFeature, m.nr_feature));
  const std::int64_t expected = rows_of(m) * columns_of(m.nr_class);
  if (static_cast<std::int64_t>(m.w.size()) != expected)
    throw InvalidArgument(fmt::format("{}: the model has {} weights, expected {} ({} rows x {} columns)", what,
                                      m.w.size(), expected, rows_of(m), columns_of(m.nr_class)));
  if (m.is_classifier() && static_cast<std::int64_t>(m.labels.size()) != m.nr_class)
    throw InvalidArgument(
        fmt::format("{}: the model has {} labels, expected nr_class = {}", what, m.labels.size(), m.nr_class));
}

// ------------------------------------------------------------------------------------------------
// Parsing helpers

struct Token {
  std::string_view text;
  std::int64_t column = 0;  // 1-based
};

/// Whitespace-separated tokens of one line (spaces and tabs), with their 1-based columns.
class Tokens {
 public:
  explicit Tokens(std::string_view line) : line_(line) {}
  bool next(Token& t) {
    while (pos_ < line_.size() && is_space(line_[pos_])) ++pos_;
    if (pos_ >= line_.size()) return false;
    const std::size_t start = pos_;
    while (pos_ < line_.size() && !is_space(line_[pos_])) ++pos_;
    t.text = line_.substr(start, pos_ - start);
    t.column = static_cast<std::int64_t>(start) + 1;
    return true;
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t'; }
  std::string_view line_;
  std::size_t pos_ = 0;
};

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

enum Key : int {
  kFormat, kSolverType, kNrClass, kLabel, kNrFeature, kBias, kModel, kPenalty, kLambda, kL1Ratio,
  kFormulation, kPrimal, kDual, kGap, kNSamples, kZeroBased, kNumKeys
};
constexpr std::array<std::string_view, kNumKeys> kKeyNames = {
    "format", "solver_type", "nr_class", "label", "nr_feature", "bias", "model", "penalty", "lambda",
    "l1_ratio", "formulation", "primal", "dual", "gap", "n_samples", "zero_based"};

bool is_list_key(int k) { return k == kLabel || k == kPrimal || k == kDual || k == kGap; }

class Parser {
 public:
  Parser(detail::LineReader& lines, const std::string& name, const ModelLoadOptions& options)
      : name_(name), lines_(lines), options_(options), budget_(options.memory_limit, options.memory_limit_name) {}

  LinearModel run() {
    parse_format_line();
    parse_header();
    check_header();
    parse_weights();
    // The writer ends every line with a newline: a file that does not was cut, possibly inside its last number.
    if (!lines_.last_line_terminated())
      fail(lines_.number(), 0, "truncated file: the last line does not end with a newline");
    return std::move(m_);
  }

 private:
  [[noreturn]] void fail(std::int64_t line, std::int64_t column, const std::string& message) const {
    throw ParseError(name_, line, column, message);
  }

  /// The bound of every line after the first: 1 MiB and 32 bytes for each class (header lists, weight rows).
  std::size_t line_bound() const {
    return std::min(kMaxLine, (std::size_t{1} << 20) + 32 * static_cast<std::size_t>(std::max(m_.nr_class, 2)));
  }

  /// The next line (false at the end of the file); a line beyond line_bound() is an error.
  bool next_line(std::string_view& line) {
    const std::size_t bound = line_bound();
    const auto st = lines_.next(line, bound);
    if (st == detail::LineReader::Status::too_long)
      fail(lines_.number(), 0, fmt::format("line longer than {} bytes (the model loader's limit for this line)", bound));
    return st == detail::LineReader::Status::line;
  }

  void parse_format_line() {
    std::string_view view;
    const auto st = lines_.next(view, kMaxFirstLine);
    if (st == detail::LineReader::Status::end) fail(1, 0, "empty file");
    const std::string line(view);  // rest_is_blank() reads on, which may move the buffer
    if (line.find_first_not_of(" \t\r") == std::string::npos && lines_.rest_is_blank()) fail(1, 0, "empty file");
    // A first line longer than kMaxFirstLine: only its first kMaxFirstLine bytes were read. A token that ends
    // inside them, or one longer than the 40 bytes a message shows, gives the message the whole line would.
    const bool cut = st == detail::LineReader::Status::too_long;
    auto decided = [&](const Token& t) {
      return !cut || static_cast<std::size_t>(t.column - 1) + t.text.size() < line.size() || t.text.size() > 40;
    };
    auto too_long = [&] {
      fail(1, 0, fmt::format("expected 'format {}' as the first line, found a line longer than {} bytes",
                             kFormatVersion, kMaxFirstLine));
    };
    // A compressed model file: say so (the message quoted its first bytes, "found '\x1f\x8b\x08...'"); the
    // readers' table of magic bytes (input.hpp compressed_format).
    if (const detail::CompressedFormat* f = detail::compressed_format(line))
      fail(1, 0, fmt::format("a {}-compressed file; model files are read as plain text: decompress it first", f->name));
    Tokens toks(line);
    Token key, value, extra;
    if (!toks.next(key)) {
      if (cut) too_long();
      fail(1, 0, fmt::format("expected 'format {}' as the first line, found an empty line", kFormatVersion));
    }
    if (!decided(key)) too_long();
    if (key.text != kKeyNames[kFormat])
      fail(1, key.column,
           fmt::format("expected 'format {}' as the first line, found {}{}", kFormatVersion, quote_token(key.text),
                       key.text == "solver_type" ? " (a LIBLINEAR model file? hetglm reads only its own model "
                                                   "files, which begin with that line)"
                                                 : ""));
    if (!toks.next(value)) {
      if (cut) too_long();
      fail(1, 0, "missing value for 'format'");
    }
    if (!decided(value)) too_long();
    if (value.text != kFormatVersion)
      fail(1, value.column,
           fmt::format("unsupported format version {} (expected '{}')", quote_token(value.text), kFormatVersion));
    if (toks.next(extra)) {
      if (!decided(extra)) too_long();
      fail(1, extra.column, fmt::format("unexpected {} after the value of 'format'", quote_token(extra.text)));
    }
    if (cut) too_long();
    seen_[kFormat] = 1;
  }

  void parse_header() {
    std::string_view line;
    while (true) {
      if (!next_line(line))
        fail(lines_.number(), 0, "unexpected end of file in the header (no 'w' line)");
      const std::int64_t ln = lines_.number();
      Tokens toks(line);
      Token key;
      if (!toks.next(key)) fail(ln, 0, "blank line in the header");
      if (key.text == "w") {
        Token extra;
        if (toks.next(extra)) fail(ln, extra.column, fmt::format("unexpected {} after 'w'", quote_token(extra.text)));
        w_line_ = ln;
        return;
      }
      const auto it = std::find(kKeyNames.begin(), kKeyNames.end(), key.text);
      if (it == kKeyNames.end()) fail(ln, key.column, fmt::format("unknown key {}", quote_token(key.text)));
      const int k = static_cast<int>(it - kKeyNames.begin());
      if (seen_[k] != 0)
        fail(ln, key.column, fmt::format("duplicate key {} (first given on line {})", quote_token(key.text), seen_[k]));
      seen_[k] = ln;
      key_column_[k] = key.column;
      if (is_list_key(k))
        parse_list(k, toks, ln);
      else
        parse_scalar(k, toks, ln);
    }
  }

  void parse_scalar(int k, Tokens& toks, std::int64_t ln) {
    const std::string_view key = kKeyNames[k];
    Token v, extra;
    if (!toks.next(v)) fail(ln, 0, fmt::format("missing value for '{}'", key));
    if (toks.next(extra))
      fail(ln, extra.column, fmt::format("unexpected {} after the value of '{}'", quote_token(extra.text), key));
    value_column_[k] = v.column;
    auto bad = [&](std::string_view expected) {
      fail(ln, v.column, fmt::format("{}: expected {}, found {}", key, expected, quote_token(v.text)));
    };
    switch (k) {
      case kSolverType:
        // A name such as L2R_LR: upper-case letters, digits and '_' (anything else could not round-trip).
        if (v.text.size() > 64 || !std::all_of(v.text.begin(), v.text.end(), [](char ch) {
              return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
            }))
          bad("a name of at most 64 upper-case letters, digits and '_'");
        m_.solver_type = std::string(v.text);
        break;
      case kNrClass: {
        const auto n = to_int(v.text);
        if (!n || *n < 2 || *n > kMaxClass) bad(fmt::format("an integer in [2, {}]", kMaxClass));
        m_.nr_class = static_cast<int>(*n);
        break;
      }
      case kNrFeature: {
        const auto n = to_int(v.text);
        if (!n || *n < 0 || *n > kMaxFeature) bad(fmt::format("an integer in [0, {}]", kMaxFeature));
        m_.nr_feature = static_cast<index_t>(*n);
        break;
      }
      case kBias: {
        // The trainers append the bias as a float32 feature (train refuses -B beyond float32's range), so a model
        // file with a larger bias was not written by them and could not be retrained from.
        const auto x = to_double(v.text);
        if (!x || !(std::fabs(*x) <= std::numeric_limits<float>::max()))
          bad(fmt::format("a finite number of magnitude at most {:g} (the bias feature is float32)",
                          double(std::numeric_limits<float>::max())));
        m_.bias = *x;
        break;
      }
      case kLambda: {
        const auto x = to_double(v.text);
        if (!x || !(*x > 0)) bad("a finite number > 0");
        m_.lambda = *x;
        break;
      }
      case kNSamples: {
        const auto n = to_int(v.text);
        if (!n || *n < 1) bad("an integer >= 1");
        m_.n_samples = *n;
        break;
      }
      case kZeroBased: {
        const auto n = to_int(v.text);
        if (!n || (*n != 0 && *n != 1)) bad("0 or 1");
        m_.zero_based = *n == 1;
        break;
      }
      case kL1Ratio: {
        const auto x = to_double(v.text);
        if (!x || *x < 0 || *x > 1) bad("a number in [0, 1]");
        m_.l1_ratio = *x;
        break;
      }
      case kModel:
        if (!is_classifier_model(v.text) && !is_regression_model(v.text))
          fail(ln, v.column, fmt::format("model: unknown model {} (expected {})", quote_token(v.text), model_names()));
        m_.model = std::string(v.text);
        break;
      case kPenalty:
        if (v.text != "l2" && v.text != "l1" && v.text != "elastic-net")
          fail(ln, v.column,
               fmt::format("penalty: unknown penalty {} (expected l2, l1 or elastic-net)", quote_token(v.text)));
        m_.penalty = std::string(v.text);
        break;
      case kFormulation:
        if (v.text != "dual" && v.text != "primal")
          fail(ln, v.column,
               fmt::format("formulation: unknown formulation {} (expected dual or primal)", quote_token(v.text)));
        m_.formulation = std::string(v.text);
        break;
      default:  // kFormat is handled as a duplicate before reaching here
        fail(ln, v.column, fmt::format("unexpected key '{}'", key));
    }
  }

  void parse_list(int k, Tokens& toks, std::int64_t ln) {
    const std::string_view key = kKeyNames[k];
    std::vector<double>& out = k == kLabel ? m_.labels : k == kPrimal ? m_.primal : k == kDual ? m_.dual : m_.gap;
    std::unordered_set<double> distinct;  // labels only; hash(0.0) == hash(-0.0), and they compare equal
    Token v;
    while (toks.next(v)) {
      const auto x = to_double(v.text);
      if (!x) fail(ln, v.column, fmt::format("{}: expected a finite number, found {}", key, quote_token(v.text)));
      if (k == kLabel && !distinct.insert(*x).second)
        fail(ln, v.column, fmt::format("label: duplicate label {}", quote_token(v.text)));
      out.push_back(*x);
    }
    if (out.empty()) fail(ln, 0, fmt::format("missing value for '{}'", key));
  }

  // Cross-field checks once the whole header is known (keys may come in any order).
  void check_header() {
    for (int k = 0; k < kNumKeys; ++k)
      if (k != kLabel && k != kNSamples && k != kZeroBased && seen_[k] == 0)
        fail(w_line_, 0, fmt::format("missing required key '{}'", kKeyNames[k]));
    const bool regression = is_regression_model(m_.model);
    if (regression && m_.nr_class != 2)
      fail(seen_[kNrClass], value_column_[kNrClass],
           fmt::format("nr_class: regression model '{}' needs nr_class 2, found '{}'", m_.model, m_.nr_class));
    if (m_.model == "multinomial" && m_.nr_class < 3)  // (train refuses it: two classes are --model logistic)
      fail(seen_[kNrClass], value_column_[kNrClass],
           fmt::format("nr_class: model 'multinomial' needs more than two classes, found '{}'", m_.nr_class));
    if (!regression && seen_[kLabel] == 0)
      fail(w_line_, 0, fmt::format("missing required key 'label' (model '{}' is a classifier)", m_.model));
    if (regression && seen_[kLabel] != 0)
      fail(seen_[kLabel], key_column_[kLabel],
           fmt::format("label: not allowed for regression model '{}'", m_.model));
    if (!regression && static_cast<std::int64_t>(m_.labels.size()) != m_.nr_class)
      fail(seen_[kLabel], 0,
           fmt::format("label: expected {} (nr_class {}), found {}", plural(m_.nr_class, "value"), m_.nr_class,
                       m_.labels.size()));
    const std::int64_t nc = columns_of(m_.nr_class);
    for (int k : {kPrimal, kDual, kGap}) {
      const auto& v = k == kPrimal ? m_.primal : k == kDual ? m_.dual : m_.gap;
      if (static_cast<std::int64_t>(v.size()) != nc)
        fail(seen_[k], 0,
             fmt::format("{}: expected {} (one per weight column), found {}", kKeyNames[k], plural(nc, "value"),
                         v.size()));
    }
    check_model_fields();
    // A duality gap is P - D >= 0; rounding can make it a few ulps negative, never more.
    for (std::size_t c = 0; c < m_.gap.size(); ++c)
      if (m_.gap[c] < -1e-12 * std::max(1.0, std::fabs(m_.primal[c])))
        fail(seen_[kGap], 0, fmt::format("gap: a duality gap cannot be negative, found {:.17g}", m_.gap[c]));
  }

  /// model, penalty, formulation, l1_ratio and solver_type describe one trained objective (kModels' row): the
  /// trainers write them so, and a file where they disagree would be predicted, reported or retrained as another
  /// model than the one its weights solve.
  void check_model_fields() {
    const ModelRow* row = find_model(m_.model);  // (parse_scalar checked the name)
    const Penalty pen = m_.penalty == "l1" ? Penalty::l1 : m_.penalty == "l2" ? Penalty::l2 : Penalty::elastic_net;
    if (!row->any_penalty && pen != row->default_penalty)
      fail(seen_[kPenalty], value_column_[kPenalty],
           fmt::format("penalty: model '{}' has the {} penalty only, found '{}'", m_.model,
                       penalty_word(row->default_penalty), m_.penalty));
    const char* expected = solver_type_of(*row, pen, m_.formulation == "dual");
    if (!expected)
      fail(seen_[kFormulation], value_column_[kFormulation],
           fmt::format("formulation: model '{}' with penalty {} has no {} formulation", m_.model, m_.penalty,
                       m_.formulation));
    if (m_.solver_type != expected)
      fail(seen_[kSolverType], value_column_[kSolverType],
           fmt::format("solver_type: expected '{}' for model '{}', penalty {}, formulation {}, found '{}'", expected,
                       m_.model, m_.penalty, m_.formulation, m_.solver_type));
    // l1_ratio is the L1 share of the penalty: 0 for l2, 1 for l1, the mix for the elastic net.
    if ((pen == Penalty::l2 && m_.l1_ratio != 0) || (pen == Penalty::l1 && m_.l1_ratio != 1))
      fail(seen_[kL1Ratio], value_column_[kL1Ratio],
           fmt::format("l1_ratio: penalty {} means l1_ratio {}, found {:.17g}", m_.penalty, pen == Penalty::l1 ? 1 : 0,
                       m_.l1_ratio));
  }

  void parse_weights() {
    const std::int64_t nc = columns_of(m_.nr_class);
    const std::int64_t rows = rows_of(m_);
    // Never trust the header for memory: every value takes at least 2 bytes ("0\n" or "0 "), and the reservation
    // stays within the memory budget (unknown size, a pipe: grow as the lines come).
    const std::uint64_t claimed = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(nc);
    const auto left = lines_.bytes_left();
    std::uint64_t reserve = std::min<std::uint64_t>(claimed, left ? *left / 2 + 1 : std::uint64_t{1} << 16);
    if (reserve * sizeof(double) > (std::uint64_t{32} << 20))
      reserve = std::min<std::uint64_t>(reserve, budget_.limit_now() / sizeof(double) + 1);
    m_.w.reserve(static_cast<std::size_t>(reserve));
    auto truncated = [&](std::int64_t found) {
      fail(w_line_ + found, 0,
           fmt::format("truncated weights: expected {} after 'w', found {}", plural(rows, "line"), found));
    };
    std::string_view line;
    for (std::int64_t row = 0; row < rows; ++row) {
      if ((row & 0xffff) == 0xffff) check_progress();
      if (!next_line(line)) truncated(row);
      const std::int64_t ln = lines_.number();
      Tokens toks(line);
      Token v;
      std::int64_t count = 0;
      std::int64_t extra_column = 0;
      while (toks.next(v)) {
        if (count < nc) {
          const auto x = to_double(v.text);
          if (!x)
            fail(ln, v.column,
                 fmt::format("weight line {} of {}: expected a finite number, found {}", row + 1, rows,
                             quote_token(v.text)));
          m_.w.push_back(*x);
        } else if (extra_column == 0) {
          extra_column = v.column;
        }
        ++count;
      }
      if (count == 0 && lines_.rest_is_blank()) truncated(row);
      if (count != nc)
        fail(ln, extra_column,
             fmt::format("weight line {} of {}: expected {}, found {}", row + 1, rows, plural(nc, "value"), count));
    }
    check_progress();  // the whole weight matrix against the budget (the loop checks every 65536 lines only)
    while (next_line(line)) {
      Tokens toks(line);
      Token v;
      if (toks.next(v))
        fail(lines_.number(), v.column,
             fmt::format("unexpected {} after the last weight line (expected {})", quote_token(v.text),
                         plural(rows, "weight line")));
    }
  }

  /// Every 65536 weight lines: a stop request, and the weights kept against the memory budget.
  void check_progress() {
    if (options_.should_stop && options_.should_stop()) throw Interrupted(name_);
    if (!budget_.fits(m_.w.size() * sizeof(double)))
      throw MemoryLimitError(fmt::format(
          "'{}': stopped at line {} ({} read): the weights kept would exceed the memory limit of {} ({})", name_,
          lines_.number(), format_bytes(lines_.bytes_consumed()), format_bytes(budget_.limit()), budget_.source()));
  }

  const std::string& name_;
  detail::LineReader& lines_;
  const ModelLoadOptions& options_;
  detail::MemoryBudget budget_;
  LinearModel m_;
  std::array<std::int64_t, kNumKeys> seen_{};          // line where each key was given, 0 = not given
  std::array<std::int64_t, kNumKeys> key_column_{};    // column of the key token
  std::array<std::int64_t, kNumKeys> value_column_{};  // column of a scalar key's value
  std::int64_t w_line_ = 0;
};

// ------------------------------------------------------------------------------------------------
// Files

// The sigmoid and log-sigmoid of glm_math.h (the one copy of the math).
double log_sigmoid(double z) { return -math::softplus(-z); }
double sigmoid(double z) { return math::sigmoid(z); }

}  // namespace

// --------------------------------------------------------------------------------------------------

std::string format_model(const LinearModel& m) {
  check_shape(m, "format_model");
  fmt::memory_buffer out;
  put_line(out, "format", kFormatVersion);
  put_line(out, "solver_type", m.solver_type);
  fmt::format_to(std::back_inserter(out), "nr_class {}\n", m.nr_class);
  if (!m.labels.empty()) put_list(out, "label", m.labels);
  fmt::format_to(std::back_inserter(out), "nr_feature {}\n", m.nr_feature);
  fmt::format_to(std::back_inserter(out), "bias {:.17g}\n", m.bias);
  put_line(out, "model", m.model);
  put_line(out, "penalty", m.penalty);
  fmt::format_to(std::back_inserter(out), "lambda {:.17g}\n", m.lambda);
  fmt::format_to(std::back_inserter(out), "l1_ratio {:.17g}\n", m.l1_ratio);
  if (m.n_samples > 0) fmt::format_to(std::back_inserter(out), "n_samples {}\n", m.n_samples);
  if (m.zero_based) fmt::format_to(std::back_inserter(out), "zero_based 1\n");
  put_line(out, "formulation", m.formulation);
  put_list(out, "primal", m.primal);
  put_list(out, "dual", m.dual);
  put_list(out, "gap", m.gap);
  out.append(std::string_view("w\n"));
  const std::size_t nc = static_cast<std::size_t>(m.n_columns());
  for (std::size_t i = 0; i < m.w.size(); i += nc) {
    for (std::size_t k = 0; k < nc; ++k) {
      if (k) out.push_back(' ');
      put_double(out, m.w[i + k]);
    }
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

LinearModel parse_model(const std::string& text, const std::string& name) {
  detail::LineReader lines(text);
  const ModelLoadOptions options;
  try {
    return Parser(lines, name, options).run();
  } catch (const std::bad_alloc&) {
    throw IoError(fmt::format("cannot read '{}': out of memory at line {} ({} read)", name, lines.number(),
                              format_bytes(lines.bytes_consumed())));
  }
}

namespace {
LinearModel load_from(detail::ByteReader& src, std::optional<std::uint64_t> size, const std::string& name,
                      const ModelLoadOptions& options) {
  detail::LineReader lines(src, size, options.block_bytes);
  try {
    return Parser(lines, name, options).run();
  } catch (const std::bad_alloc&) {
    throw IoError(fmt::format("cannot read '{}': out of memory at line {} ({} read)", name, lines.number(),
                              format_bytes(lines.bytes_consumed())));
  }
}
}  // namespace

LinearModel load_model(const std::string& path, const ModelLoadOptions& options) {
  detail::FileReader file(path, options.should_stop);
  return load_from(file, file.size(), path, options);
}

LinearModel read_model_stream(const std::function<std::size_t(char*, std::size_t)>& read, const std::string& name,
                              const ModelLoadOptions& options) {
  detail::FunctionReader f(read);
  return load_from(f, std::nullopt, name, options);
}

void save_model(const std::string& path, const LinearModel& model) {
  write_file_atomic(path, format_model(model));  // format_model may throw before anything touches the disk
}

namespace {
/// Row r's decision values (m.n_columns() of them) into o, zeroed first.
void decision_row(const LinearModel& m, const CsrMatrix& X, index_t r, double* o) {
  const std::size_t nc = static_cast<std::size_t>(m.n_columns());
  const index_t nf = m.nr_feature;
  const double* w = m.w.data();
  std::fill(o, o + nc, 0.0);
  for (offset_t e = X.offsets[r]; e < X.offsets[r + 1]; ++e) {
    const index_t j = X.indices[e];
    if (j < 0 || j >= nf) continue;  // features unknown to the model are ignored
    const double x = X.has_lo() ? double(X.values[e]) + double(X.values_lo[e]) : double(X.values[e]);
    const double* wj = w + static_cast<std::size_t>(j) * nc;
    for (std::size_t k = 0; k < nc; ++k) o[k] += x * wj[k];
  }
  if (m.bias >= 0) {
    const double* wb = w + static_cast<std::size_t>(nf) * nc;
    for (std::size_t k = 0; k < nc; ++k) o[k] += m.bias * wb[k];
  }
}
}  // namespace

std::vector<double> decision_function(const LinearModel& m, const CsrMatrix& X) {
  check_shape(m, "decision_function");
  const std::size_t nc = static_cast<std::size_t>(m.n_columns());
  std::vector<double> out(static_cast<std::size_t>(std::max<index_t>(X.n_rows, 0)) * nc, 0.0);
  tbb::parallel_for(tbb::blocked_range<index_t>(0, std::max<index_t>(X.n_rows, 0), 512),
                    [&](const tbb::blocked_range<index_t>& range) {
                      for (index_t r = range.begin(); r != range.end(); ++r)
                        decision_row(m, X, r, out.data() + static_cast<std::size_t>(r) * nc);
                    });
  return out;
}

/// Row by row (one row's decision values at a time, not the n x classes matrix: a one-vs-rest model of 1000
/// classes on 20,000 samples held 160 MB of them to print the training accuracy).
std::vector<double> predict(const LinearModel& m, const CsrMatrix& X, std::int64_t* first_nonfinite) {
  check_shape(m, "predict");
  const std::size_t nc = static_cast<std::size_t>(m.n_columns());
  std::atomic<std::int64_t> bad{std::numeric_limits<std::int64_t>::max()};  // the smallest such row
  auto note = [&](index_t r, const double* d) {
    if (!first_nonfinite) return;
    for (std::size_t k = 0; k < nc; ++k)
      if (!std::isfinite(d[k])) {
        std::int64_t cur = bad.load();
        while (r < cur && !bad.compare_exchange_weak(cur, r)) {
        }
        return;
      }
  };
  auto finish = [&] {
    if (first_nonfinite) *first_nonfinite = bad.load() == std::numeric_limits<std::int64_t>::max() ? -1 : bad.load();
  };
  if (!m.is_classifier()) {  // regression: one column, the value itself
    std::vector<double> out = decision_function(m, X);
    for (std::size_t r = 0; r < out.size(); ++r) note(static_cast<index_t>(r), &out[r]);
    finish();
    return out;
  }
  std::vector<double> out(static_cast<std::size_t>(std::max<index_t>(X.n_rows, 0)));
  tbb::parallel_for(tbb::blocked_range<index_t>(0, std::max<index_t>(X.n_rows, 0), 512),
                    [&](const tbb::blocked_range<index_t>& range) {
                      std::vector<double> dec(nc);
                      for (index_t r = range.begin(); r != range.end(); ++r) {
                        const double* d = dec.data();
                        decision_row(m, X, r, dec.data());
                        note(r, d);
                        if (nc == 1) {
                          out[std::size_t(r)] = d[0] > 0 ? m.labels[0] : m.labels[1];
                        } else {
                          std::size_t best = 0;
                          for (std::size_t k = 1; k < nc; ++k)
                            if (d[k] > d[best]) best = k;  // strict: the first maximum wins
                          out[std::size_t(r)] = m.labels[best];
                        }
                      }
                    });
  finish();
  return out;
}

std::vector<double> predict_proba(const LinearModel& m, const CsrMatrix& X) {
  const bool softmax = m.model == "multinomial";
  if (m.model != "logistic" && !softmax)
    throw InvalidArgument(fmt::format(
        "predict_proba: only logistic and multinomial models give probabilities (model is '{}')", m.model));
  if (!m.is_classifier()) throw InvalidArgument("predict_proba: the logistic model has no labels");
  std::vector<double> dec = decision_function(m, X);
  const std::size_t nc = static_cast<std::size_t>(m.n_columns());
  const std::size_t n = dec.size() / nc;
  if (nc == 1) {
    std::vector<double> out(n * 2);
    for (std::size_t r = 0; r < n; ++r) {
      const double p = sigmoid(dec[r]);
      out[2 * r] = p;
      out[2 * r + 1] = 1.0 - p;
    }
    return out;
  }
  if (softmax) {  // the multinomial model's probabilities: softmax of the decision values (glm_math_impl.h)
    std::vector<double> p(nc);
    for (std::size_t r = 0; r < n; ++r) {
      double* d = dec.data() + r * nc;
      math::softmax_value(d, static_cast<int>(nc), 0, 1.0, p.data());
      std::copy(p.begin(), p.end(), d);
    }
    return dec;
  }
  // One-vs-rest sigmoids normalized to sum 1, in log space so that very negative decision values
  // (every sigmoid underflowing to 0) still give a proper distribution.
  for (std::size_t r = 0; r < n; ++r) {
    double* d = dec.data() + r * nc;
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < nc; ++k) {
      d[k] = log_sigmoid(d[k]);
      top = std::max(top, d[k]);
    }
    double sum = 0;
    for (std::size_t k = 0; k < nc; ++k) {
      d[k] = std::exp(d[k] - top);
      sum += d[k];
    }
    for (std::size_t k = 0; k < nc; ++k) d[k] /= sum;
  }
  return dec;
}

}  // namespace hetglm
