// SPDX-License-Identifier: Apache-2.0
// libsvm / svmlight reader and writer. The grammar and every error message are documented in
// docs/libsvm-format.md; tests/core/test_libsvm.cpp asserts the messages exactly.
//
// Parsing: the text is split at line boundaries into chunks that are parsed in parallel (oneTBB), each
// into local CSR pieces, which are then concatenated in order. A chunk that meets an error stops there;
// the error of the earliest chunk is reported, with its global line number (chunk start lines are the
// prefix sums of the newline counts of the chunks before it, all of which parsed completely).
#include "hetglm/libsvm.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <system_error>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/io.hpp"

namespace hetglm {
namespace {

/// Largest feature index accepted as written in the file, in either base: keeps n_cols = index + 1
/// within int32 in 0-based mode (and leaves the same limit in 1-based mode, for one rule).
constexpr std::uint64_t kMaxIndex = 2147483646;
constexpr std::size_t kMinChunkBytes = 16 * 1024;  ///< smaller inputs are not split further
constexpr std::size_t kMaxChunks = 4096;


inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Decimal order of magnitude of a syntactically valid number that std::from_chars reported out of
/// range: negative means it underflows (read as zero), otherwise it overflows.
bool underflows(const char* b, const char* e) {
  const char* p = b;
  if (p != e && *p == '-') ++p;
  while (p != e && *p == '0') ++p;
  const char* q = p;
  while (q != e && is_digit(*q)) ++q;
  std::int64_t lead;  // decimal exponent of the leading significant digit, before the exponent part
  if (q != p) {
    lead = std::min<std::int64_t>(q - p, std::int64_t{1} << 40) - 1;
  } else {
    lead = -1;
    if (q != e && *q == '.') {
      ++q;
      std::int64_t zeros = 0;
      while (q != e && *q == '0') ++q, ++zeros;
      lead = -std::min<std::int64_t>(zeros, std::int64_t{1} << 40) - 1;
    }
  }
  std::int64_t exp = 0;
  const char* x = std::find_if(b, e, [](char c) { return c == 'e' || c == 'E'; });
  if (x != e) {
    ++x;
    bool neg = false;
    if (x != e && (*x == '+' || *x == '-')) neg = (*x++ == '-');
    for (; x != e && is_digit(*x); ++x) exp = std::min<std::int64_t>(exp * 10 + (*x - '0'), std::int64_t{1} << 40);
    if (neg) exp = -exp;
  }
  return lead + exp < 0;
}

enum class Num { ok, invalid, non_finite, out_of_range };

/// A decimal floating-point number filling all of `t` (optional leading '+', exponent notation);
/// NaN and infinities are reported as non_finite, magnitudes beyond T as out_of_range, underflow is 0.
template <class T>
Num parse_real(std::string_view t, T& out) {
  if (t.size() <= 7) {  // fast path: a small unsigned integer, exact in float and double
    std::uint32_t v = 0;
    std::size_t i = 0;
    for (; i < t.size(); ++i) {
      const auto d = static_cast<unsigned>(static_cast<unsigned char>(t[i]) - '0');
      if (d > 9) break;
      v = v * 10 + d;
    }
    if (i == t.size() && i > 0) {
      out = static_cast<T>(v);
      return Num::ok;
    }
  }
  const char* b = t.data();
  const char* e = b + t.size();
  if (b != e && *b == '+') {
    ++b;
    if (b != e && (*b == '+' || *b == '-')) return Num::invalid;
  }
  if (b == e) return Num::invalid;
  T v{};
  const auto [p, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec == std::errc::invalid_argument || p != e) return Num::invalid;
  if (ec == std::errc::result_out_of_range) {
    if (!underflows(b, e)) return Num::out_of_range;
    v = (*b == '-') ? -T(0) : T(0);
  }
  if (!std::isfinite(v)) return Num::non_finite;
  out = v;
  return Num::ok;
}

enum class Idx { ok, invalid, negative, too_large };

/// A feature index as written: decimal digits only, at most kMaxIndex.
Idx parse_index(std::string_view t, std::uint64_t& out) {
  const char* p = t.data();
  const char* const e = p + t.size();
  const bool negative = p != e && *p == '-';
  if (negative) ++p;
  if (p == e) return Idx::invalid;
  std::uint64_t v = 0;
  bool too_large = false;
  for (; p != e; ++p) {
    const auto d = static_cast<unsigned>(static_cast<unsigned char>(*p) - '0');
    if (d > 9) return Idx::invalid;
    if (!too_large) {
      v = v * 10 + d;
      too_large = v > kMaxIndex;
    }
  }
  if (negative) return Idx::negative;
  if (too_large) return Idx::too_large;
  out = v;
  return Idx::ok;
}

/// What one chunk produced: rows in local CSR form, or the first error it met.
struct Chunk {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::vector<double> y;
  std::vector<offset_t> row_end;  ///< local nnz after each row
  std::vector<index_t> indices;
  std::vector<float> values;
  index_t max_index = -1;
  std::int64_t newlines = 0;  ///< '\n' bytes in the chunk (valid when it parsed completely)
  bool failed = false;
  bool aborted = false;  ///< stopped because an earlier chunk failed; its contents are meaningless
  std::int64_t error_line = 0;  ///< 1-based, local to the chunk
  std::int64_t error_column = 0;
  std::string error_message;
};

class ChunkParser {
 public:
  ChunkParser(Chunk& out, const LibsvmOptions& options, std::size_t chunk_id,
              std::atomic<std::size_t>& first_failed)
      : out_(out), options_(options), chunk_id_(chunk_id), first_failed_(first_failed) {}

  void run(std::size_t skip_first) {
    const char* p = out_.begin;
    const char* const end = out_.end;
    std::int64_t line = 1;
    std::size_t skip = skip_first;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* le = nl ? nl : end;
      if (le > p && le[-1] == '\r') --le;
      if (!parse_line(p, le, skip)) {
        out_.failed = true;
        out_.error_line = line;
        std::size_t cur = first_failed_.load(std::memory_order_relaxed);
        while (chunk_id_ < cur && !first_failed_.compare_exchange_weak(cur, chunk_id_)) {
        }
        return;
      }
      skip = 0;
      if (!nl) break;
      ++out_.newlines;
      ++line;
      p = nl + 1;
      if ((line & 1023) == 0 && first_failed_.load(std::memory_order_relaxed) < chunk_id_) {
        out_.aborted = true;
        return;
      }
    }
  }

 private:
  bool fail(const char* at, std::string message) {
    out_.error_column = (at - line_start_) + 1;
    out_.error_message = std::move(message);
    return false;
  }

  /// Next whitespace-separated token of the line into tok: 1 = token, 0 = end of data (end of line or
  /// start of a comment), -1 = error (a control byte).
  int next_token(std::string_view& tok) {
    while (p_ < le_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
    if (p_ == le_ || *p_ == '#') return 0;
    const char* s = p_;
    for (; p_ < le_; ++p_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == ' ' || c == '\t' || c == '#') break;
      if (c < 0x20 || c == 0x7f) {
        fail(p_, "control character " + quote_token(std::string_view(p_, 1)));
        return -1;
      }
    }
    tok = std::string_view(s, static_cast<std::size_t>(p_ - s));
    return 1;
  }

  bool parse_line(const char* ls, const char* le, std::size_t skip) {
    line_start_ = ls;
    p_ = ls + skip;
    le_ = le;
    std::string_view tok;
    int r = next_token(tok);
    if (r <= 0) return r == 0;  // blank or comment-only line, or a control byte

    // Label.
    if (tok.find(':') != std::string_view::npos) return fail(tok.data(), "missing label before " + quote_token(tok));
    double label = 0;
    switch (parse_real(tok, label)) {
      case Num::ok: break;
      case Num::invalid: return fail(tok.data(), "invalid label " + quote_token(tok));
      case Num::non_finite: return fail(tok.data(), "non-finite label " + quote_token(tok));
      case Num::out_of_range: return fail(tok.data(), "label " + quote_token(tok) + " out of range");
    }

    // Features.
    const std::size_t row_begin = out_.indices.size();
    columns_.clear();
    bool sorted = true;
    std::int64_t prev = -1;
    bool first = true;
    while ((r = next_token(tok)) == 1) {
      const bool was_first = first;
      first = false;
      if (tok.size() >= 4 && tok.substr(0, 4) == "qid:") {
        if (!was_first) return fail(tok.data(), "misplaced qid " + quote_token(tok) + " (must follow the label)");
        const std::string_view q = tok.substr(4);
        std::int64_t qid = 0;
        const auto [qp, qec] = std::from_chars(q.data(), q.data() + q.size(), qid);
        if (q.empty() || qec != std::errc() || qp != q.data() + q.size())
          return fail(tok.data(), "invalid qid " + quote_token(tok));
        continue;
      }
      const std::size_t colon = tok.find(':');
      if (colon == std::string_view::npos) return fail(tok.data(), "missing ':' in feature " + quote_token(tok));
      if (colon == 0) return fail(tok.data(), "missing feature index in " + quote_token(tok));
      if (colon + 1 == tok.size()) return fail(tok.data(), "missing feature value in " + quote_token(tok));
      const std::string_view is = tok.substr(0, colon);
      const std::string_view vs = tok.substr(colon + 1);
      std::uint64_t raw = 0;
      switch (parse_index(is, raw)) {
        case Idx::ok: break;
        case Idx::invalid: return fail(is.data(), "invalid feature index " + quote_token(is));
        case Idx::negative: return fail(is.data(), "negative feature index " + quote_token(is));
        case Idx::too_large:
          return fail(is.data(), fmt::format("feature index {} out of range (max {})", quote_token(is), kMaxIndex));
      }
      if (raw == 0 && !options_.zero_based)
        return fail(is.data(), "feature index " + quote_token(is) + " in 1-based mode");
      const auto j = static_cast<std::int64_t>(options_.zero_based ? raw : raw - 1);
      if (options_.n_features >= 0 && j >= options_.n_features)
        return fail(is.data(),
                    fmt::format("feature index {} out of range (n_features {})", quote_token(is), options_.n_features));
      float v = 0;
      switch (parse_real(vs, v)) {
        case Num::ok: break;
        case Num::invalid: return fail(vs.data(), "invalid feature value " + quote_token(vs));
        case Num::non_finite: return fail(vs.data(), "non-finite feature value " + quote_token(vs));
        case Num::out_of_range: return fail(vs.data(), "feature value " + quote_token(vs) + " out of float range");
      }
      out_.indices.push_back(static_cast<index_t>(j));
      out_.values.push_back(v);
      columns_.push_back(tok.data());
      if (j <= prev) sorted = false;
      prev = std::max(prev, j);
    }
    if (r < 0) return false;
    if (!sorted && !sort_row(row_begin)) return false;
    if (prev > out_.max_index) out_.max_index = static_cast<index_t>(prev);
    out_.y.push_back(label);
    out_.row_end.push_back(static_cast<offset_t>(out_.indices.size()));
    return true;
  }

  /// Sorts the entries of the current row by index and rejects duplicates, naming the duplicate that
  /// appears first in the line (at the position of its second occurrence).
  bool sort_row(std::size_t row_begin) {
    const std::size_t n = out_.indices.size() - row_begin;
    const index_t* idx = out_.indices.data() + row_begin;
    perm_.resize(n);
    std::iota(perm_.begin(), perm_.end(), std::size_t{0});
    std::stable_sort(perm_.begin(), perm_.end(), [idx](std::size_t a, std::size_t b) { return idx[a] < idx[b]; });
    const char* dup = nullptr;
    for (std::size_t k = 1; k < n; ++k)
      if (idx[perm_[k]] == idx[perm_[k - 1]] && (!dup || columns_[perm_[k]] < dup)) dup = columns_[perm_[k]];
    if (dup) {
      const char* colon = static_cast<const char*>(std::memchr(dup, ':', static_cast<std::size_t>(le_ - dup)));
      return fail(dup, "duplicate feature index " + quote_token(std::string_view(dup, static_cast<std::size_t>(colon - dup))));
    }
    sorted_idx_.resize(n);
    sorted_val_.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      sorted_idx_[k] = idx[perm_[k]];
      sorted_val_[k] = out_.values[row_begin + perm_[k]];
    }
    std::copy(sorted_idx_.begin(), sorted_idx_.end(), out_.indices.begin() + static_cast<std::ptrdiff_t>(row_begin));
    std::copy(sorted_val_.begin(), sorted_val_.end(), out_.values.begin() + static_cast<std::ptrdiff_t>(row_begin));
    return true;
  }

  Chunk& out_;
  const LibsvmOptions& options_;
  std::size_t chunk_id_;
  std::atomic<std::size_t>& first_failed_;
  const char* line_start_ = nullptr;
  const char* p_ = nullptr;
  const char* le_ = nullptr;
  std::vector<const char*> columns_;  ///< token start of each entry of the current row
  std::vector<std::size_t> perm_;
  std::vector<index_t> sorted_idx_;
  std::vector<float> sorted_val_;
};

/// Runs f() in the default arena (n_threads 0) or in an arena of n_threads threads (at most the
/// machine's concurrency: more threads than cores gain nothing here).
template <class F>
void in_arena(int n_threads, F&& f) {
  if (n_threads == 0) {
    f();
  } else {
    tbb::task_arena arena(std::max(1, std::min(n_threads, tbb::info::default_concurrency())));
    arena.execute(f);
  }
}

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

/// Decompresses gzip data (one or more concatenated members).
std::string gunzip(const std::string& in, const std::string& path) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK)
    throw IoError(fmt::format("cannot read '{}': cannot initialise zlib", path));
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  auto corrupt = [&](const char* why) {
    return IoError(fmt::format("cannot read '{}': corrupt gzip data ({})", path, why));
  };
  std::string out;
  out.resize(std::clamp<std::size_t>(in.size() * 4, 1 << 16, std::size_t{1} << 30));  // then doubled as needed
  std::size_t in_pos = 0, out_pos = 0;
  constexpr std::size_t kStep = 1u << 30;  // zlib counts in uInt
  for (;;) {
    if (out_pos == out.size()) out.resize(out.size() * 2);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(std::min(in.size() - in_pos, kStep));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - out_pos, kStep));
    const uInt avail_in = zs.avail_in, avail_out = zs.avail_out;
    const int ret = inflate(&zs, Z_NO_FLUSH);
    in_pos += avail_in - zs.avail_in;
    out_pos += avail_out - zs.avail_out;
    if (ret == Z_STREAM_END) {
      if (in_pos == in.size()) break;
      if (!is_gzip(std::string_view(in).substr(in_pos))) throw corrupt("trailing garbage");
      if (inflateReset(&zs) != Z_OK) throw corrupt("cannot restart");
      continue;
    }
    if (ret == Z_OK) continue;
    if (ret == Z_BUF_ERROR) {
      if (in_pos == in.size()) throw IoError(fmt::format("cannot read '{}': truncated gzip data", path));
      continue;  // no progress possible only for lack of output room, which the next pass provides
    }
    if (ret == Z_MEM_ERROR) throw IoError(fmt::format("cannot read '{}': out of memory", path));
    throw corrupt(zs.msg ? zs.msg : "invalid data");
  }
  out.resize(out_pos);
  return out;
}


}  // namespace

Dataset parse_libsvm(std::string_view text, const std::string& name, const LibsvmOptions& options) {
  if (options.n_features > std::numeric_limits<index_t>::max())
    throw InvalidArgument(fmt::format("n_features must be at most {}, got {}", std::numeric_limits<index_t>::max(),
                                      options.n_features));
  if (options.n_threads < 0)
    throw InvalidArgument(fmt::format("n_threads must be >= 0, got {}", options.n_threads));

  // Chunks: about 4 per thread, cut after a '\n', none smaller than kMinChunkBytes.
  const std::size_t threads = options.n_threads > 0
                                  ? static_cast<std::size_t>(options.n_threads)
                                  : static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
  std::size_t n_chunks = threads == 1 ? 1 : std::min(threads * 4, kMaxChunks);
  n_chunks = std::max<std::size_t>(1, std::min(n_chunks, text.size() / kMinChunkBytes));
  const char* const base = text.data();
  const char* const end = base + text.size();
  std::vector<Chunk> chunks;
  chunks.reserve(n_chunks);
  const char* cut = base;
  for (std::size_t i = 0; i < n_chunks && cut < end; ++i) {
    const char* next = end;
    if (i + 1 < n_chunks) {
      const char* target = base + text.size() / n_chunks * (i + 1);
      if (target < cut) target = cut;
      const void* nl = std::memchr(target, '\n', static_cast<std::size_t>(end - target));
      next = nl ? static_cast<const char*>(nl) + 1 : end;
    }
    if (next == cut) continue;
    Chunk c;
    c.begin = cut;
    c.end = next;
    chunks.push_back(std::move(c));
    cut = next;
  }

  // A UTF-8 byte order mark at the start of the text is skipped (columns still count its bytes).
  const std::size_t bom = text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  std::atomic<std::size_t> first_failed{chunks.size()};
  auto parse_chunk = [&](std::size_t i) {
    ChunkParser(chunks[i], options, i, first_failed).run(i == 0 ? bom : 0);
  };
  if (chunks.size() <= 1 || options.n_threads == 1) {
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      parse_chunk(i);
      if (chunks[i].failed) break;
    }
  } else {
    in_arena(options.n_threads, [&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) parse_chunk(i);
      });
    });
  }

  // The earliest error, with its global line number.
  std::int64_t line_base = 1;
  for (const Chunk& c : chunks) {
    if (c.failed) throw ParseError(name, line_base + c.error_line - 1, c.error_column, c.error_message);
    line_base += c.newlines;
  }

  // Concatenate.
  std::size_t rows = 0, nnz = 0;
  index_t max_index = -1;
  std::vector<std::size_t> row_base(chunks.size()), nnz_base(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    row_base[i] = rows;
    nnz_base[i] = nnz;
    rows += chunks[i].y.size();
    nnz += chunks[i].indices.size();
    max_index = std::max(max_index, chunks[i].max_index);
  }
  if (rows > static_cast<std::size_t>(std::numeric_limits<index_t>::max())) {
    // Name the line of the first row beyond the limit.
    std::int64_t line = 1;
    std::size_t seen = 0;
    for (const char* p = base; p < end; ++line) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* q = p;
      while (q < (nl ? nl : end) && (*q == ' ' || *q == '\t')) ++q;
      if (q < (nl ? nl : end) && *q != '#' && *q != '\r' &&
          ++seen > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
        break;
      if (!nl) break;
      p = nl + 1;
    }
    throw ParseError(name, line, 0, fmt::format("too many rows (max {})", std::numeric_limits<index_t>::max()));
  }

  Dataset data;
  data.source = name;
  CsrMatrix& X = data.X;
  X.n_rows = static_cast<index_t>(rows);
  X.n_cols = static_cast<index_t>(std::max<std::int64_t>(options.n_features, std::int64_t{max_index} + 1));
  if (chunks.size() == 1) {  // nothing to concatenate: take the arrays over
    Chunk& c = chunks[0];
    X.offsets.reserve(rows + 1);
    X.offsets.insert(X.offsets.end(), c.row_end.begin(), c.row_end.end());
    X.indices = std::move(c.indices);
    X.values = std::move(c.values);
    data.y = std::move(c.y);
    return data;
  }
  X.offsets.assign(rows + 1, 0);
  X.indices.resize(nnz);
  X.values.resize(nnz);
  data.y.resize(rows);
  auto copy_chunk = [&](std::size_t i) {
    const Chunk& c = chunks[i];
    std::copy(c.y.begin(), c.y.end(), data.y.begin() + static_cast<std::ptrdiff_t>(row_base[i]));
    std::copy(c.indices.begin(), c.indices.end(), X.indices.begin() + static_cast<std::ptrdiff_t>(nnz_base[i]));
    std::copy(c.values.begin(), c.values.end(), X.values.begin() + static_cast<std::ptrdiff_t>(nnz_base[i]));
    const auto off = static_cast<offset_t>(nnz_base[i]);
    for (std::size_t r = 0; r < c.row_end.size(); ++r) X.offsets[row_base[i] + r + 1] = off + c.row_end[r];
  };
  if (chunks.size() <= 1 || options.n_threads == 1) {
    for (std::size_t i = 0; i < chunks.size(); ++i) copy_chunk(i);
  } else {
    in_arena(options.n_threads, [&] {
      tbb::parallel_for(std::size_t{0}, chunks.size(), copy_chunk);
    });
  }
  return data;
}

Dataset read_libsvm(const std::string& path, const LibsvmOptions& options) {
  std::string bytes = read_file(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, path);
  return parse_libsvm(bytes, path, options);
}

void write_libsvm(const std::string& path, const Dataset& data, bool zero_based) {
  const CsrMatrix& X = data.X;
  validate(X, "write_libsvm");
  if (data.y.size() != static_cast<std::size_t>(X.n_rows))
    throw InvalidArgument(fmt::format("write_libsvm: {} labels for {} rows", data.y.size(), X.n_rows));
  for (index_t r = 0; r < X.n_rows; ++r) {
    if (!std::isfinite(data.y[r])) throw InvalidArgument(fmt::format("write_libsvm: row {}: non-finite label", r));
    for (float v : X.row_values(r))
      if (!std::isfinite(v)) throw InvalidArgument(fmt::format("write_libsvm: row {}: non-finite value", r));
  }

  const int one = zero_based ? 0 : 1;
  fmt::memory_buffer buf;
  for (index_t r = 0; r < X.n_rows; ++r) {
    fmt::format_to(std::back_inserter(buf), "{:.17g}", data.y[r]);
    const auto idx = X.row_indices(r);
    const auto val = X.row_values(r);
    for (std::size_t k = 0; k < idx.size(); ++k)
      fmt::format_to(std::back_inserter(buf), " {}:{}", std::int64_t{idx[k]} + one, val[k]);
    buf.push_back('\n');
  }
  write_file_atomic(path, std::string_view(buf.data(), buf.size()));
}

}  // namespace hetglm
