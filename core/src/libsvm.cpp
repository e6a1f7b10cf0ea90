// SPDX-License-Identifier: Apache-2.0
// libsvm / svmlight reader and writer. The grammar and every error message are documented in
// docs/libsvm-format.md; tests/core/test_libsvm.cpp asserts the messages exactly.
//
// Reading streams: the input (a file, a pipe, gzip inflated on the way) is read in blocks of a few MiB; the
// complete lines of each block form a batch, the partial last line is carried over to the next block. A batch is
// split at line boundaries into chunks that are parsed in parallel (oneTBB), each into local CSR pieces. A chunk
// that meets an error stops there; the error of the earliest chunk is reported, with its global line number
// (chunk start lines are the prefix sums of the newline counts of the chunks and batches before it, all of which
// parsed completely). The rows of a batch move into a Segment when the next batch starts; at the end the
// segments are concatenated in order, each page given back as soon as it is copied, so the data set is held about
// once. After every batch the data kept is checked against the memory budget.
#include "hetglm/libsvm.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <system_error>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/memory.hpp"
#include "input.hpp"

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

/// What one chunk produced: rows in local CSR form, or the first error it met. Reused from block to block
/// (clear() keeps the capacity).
struct Chunk {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::vector<double> y;
  std::vector<offset_t> row_end;  ///< local nnz after each row
  FillVector<index_t> indices;
  FillVector<float> values;
  FillVector<float> values_lo;  ///< LibsvmOptions::float64: each value's values_lo_of (matrix.hpp)
  bool tiny = false;            ///< LibsvmOptions::float64: a value that values_lo_loses_bits
  index_t max_index = -1;
  std::int64_t newlines = 0;  ///< '\n' bytes in the chunk (valid when it parsed completely)
  bool failed = false;
  bool aborted = false;  ///< stopped because an earlier chunk failed; its contents are meaningless
  std::int64_t error_line = 0;  ///< 1-based, local to the chunk
  std::int64_t error_column = 0;
  std::string error_message;

  void clear() {
    y.clear();
    row_end.clear();
    indices.clear();
    values.clear();
    values_lo.clear();
    tiny = false;
    max_index = -1;
    newlines = 0;
    failed = aborted = false;
    error_line = error_column = 0;
    error_message.clear();
  }
};

std::string too_long_message() {
  return fmt::format("line longer than the limit of {} bytes ({} MiB)", kMaxLibsvmLineBytes, kMaxLibsvmLineBytes >> 20);
}

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
      bool ok;
      if (static_cast<std::size_t>(le - p) > kMaxLibsvmLineBytes) {
        // Too long: the first error in its first kMaxLibsvmLineBytes bytes, else the bound (as the streaming reader,
        // which never holds more of a line).
        ok = probe(p, p + kMaxLibsvmLineBytes, skip);
        if (ok) {
          out_.error_column = 0;
          out_.error_message = too_long_message();
          ok = false;
        }
      } else {
        if (le > p && le[-1] == '\r') --le;
        ok = parse_line(p, le, skip);
      }
      if (!ok) {
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

  /// The beginning [ls, le) of a line whose end is not known: false with the error when it holds one that no
  /// continuation can change (any problem in a token followed by a separator within [ls, le), or a control byte),
  /// true otherwise. Stores nothing.
  bool probe(const char* ls, const char* le, std::size_t skip) {
    partial_ = true;
    const bool ok = parse_line(ls, le, skip);
    partial_ = false;
    return ok;
  }

 private:
  bool fail(const char* at, std::string message) {
    out_.error_column = (at - line_start_) + 1;
    out_.error_message = std::move(message);
    return false;
  }

  /// Next whitespace-separated token of the line into tok: 1 = token, 0 = end of data (end of line or
  /// start of a comment), -1 = error (a control byte), 2 = (probe only) a token that may continue past le_.
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
    return partial_ && p_ == le_ ? 2 : 1;
  }

  bool parse_line(const char* ls, const char* le, std::size_t skip) {
    line_start_ = ls;
    p_ = ls + skip;
    le_ = le;
    std::string_view tok;
    int r = next_token(tok);
    if (r <= 0) return r == 0;  // blank or comment-only line, or a control byte
    if (r == 2) return true;

    // Label.
    if (tok.find(':') != std::string_view::npos) return fail(tok.data(), "missing label before " + quote_token(tok));
    double label = 0;
    switch (parse_real(tok, label)) {
      case Num::ok: break;
      case Num::invalid: return fail(tok.data(), "invalid label " + quote_token(tok));
      case Num::non_finite: return fail(tok.data(), "non-finite label " + quote_token(tok));
      case Num::out_of_range: return fail(tok.data(), "label " + quote_token(tok) + " out of range");
    }
    if (label == 0) label = 0.0;  // -0 is the class 0 (it was kept as a class printed "-0" in the model's labels)

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
        return fail(is.data(), "feature index " + quote_token(is) +
                                    " in 1-based mode (libsvm indices start at 1; a file indexed from 0 is read with "
                                    "--zero-based, or zero_based=True in Python)");
      const auto j = static_cast<std::int64_t>(options_.zero_based ? raw : raw - 1);
      if (options_.n_features >= 0 && j >= options_.n_features)
        return fail(is.data(),
                    fmt::format("feature index {} out of range (n_features {})", quote_token(is), options_.n_features));
      float v = 0;
      double v64 = 0;  // options_.float64: the value as written, to double precision
      switch (options_.float64 ? parse_real(vs, v64) : parse_real(vs, v)) {
        case Num::ok: break;
        case Num::invalid: return fail(vs.data(), "invalid feature value " + quote_token(vs));
        case Num::non_finite: return fail(vs.data(), "non-finite feature value " + quote_token(vs));
        case Num::out_of_range: return fail(vs.data(), "feature value " + quote_token(vs) + " out of float range");
      }
      if (options_.float64) {
        v = static_cast<float>(v64);  // beyond float range: the float parser's error
        if (!std::isfinite(v)) return fail(vs.data(), "feature value " + quote_token(vs) + " out of float range");
      }
      if (partial_) continue;  // a probe stores nothing
      out_.indices.push_back(static_cast<index_t>(j));
      out_.values.push_back(v);
      if (options_.float64) {
        out_.values_lo.push_back(values_lo_of(v64));
        out_.tiny = out_.tiny || values_lo_loses_bits(v64);
      }
      columns_.push_back(tok.data());
      if (j <= prev) sorted = false;
      prev = std::max(prev, j);
    }
    if (r < 0) return false;
    if (partial_) return true;  // duplicates are only known at the end of the line
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
    if (options_.float64) {
      for (std::size_t k = 0; k < n; ++k) sorted_val_[k] = out_.values_lo[row_begin + perm_[k]];
      std::copy(sorted_val_.begin(), sorted_val_.end(), out_.values_lo.begin() + static_cast<std::ptrdiff_t>(row_begin));
    }
    return true;
  }

  Chunk& out_;
  const LibsvmOptions& options_;
  std::size_t chunk_id_;
  std::atomic<std::size_t>& first_failed_;
  bool partial_ = false;  ///< probing the beginning of a line (probe())
  const char* line_start_ = nullptr;
  const char* p_ = nullptr;
  const char* le_ = nullptr;
  std::vector<const char*> columns_;  ///< token start of each entry of the current row
  std::vector<std::size_t> perm_;
  std::vector<index_t> sorted_idx_;
  std::vector<float> sorted_val_;
};

/// An array in pages of its own (anonymous mmap) when large, so that the pages copied out can be given back to
/// the system at once (release_before) and the data set is not held twice while it is assembled.
template <class T>
class PageArray {
 public:
  PageArray() = default;
  explicit PageArray(std::size_t n) : bytes_(n * sizeof(T)) {
    if (bytes_ >= kMapped) {
      void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      p_ = static_cast<T*>(p);
      mapped_ = true;
    } else if (n > 0) {
      p_ = static_cast<T*>(std::malloc(bytes_));
      if (!p_) throw std::bad_alloc();
    }
  }
  PageArray(PageArray&& o) noexcept { swap(o); }
  PageArray& operator=(PageArray&& o) noexcept {
    PageArray(std::move(o)).swap(*this);
    return *this;
  }
  ~PageArray() { reset(); }
  T* data() noexcept { return p_; }
  /// Gives back the whole pages that hold only elements before `n`.
  void release_before(std::size_t n) noexcept {
    if (!mapped_) return;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t upto = n * sizeof(T) / page * page;
    if (upto > released_) {
      ::munmap(reinterpret_cast<char*>(p_) + released_, upto - released_);
      released_ = upto;
    }
  }
  void reset() noexcept {
    if (mapped_) {
      if (bytes_ > released_) ::munmap(reinterpret_cast<char*>(p_) + released_, bytes_ - released_);
    } else {
      std::free(p_);
    }
    p_ = nullptr;
    bytes_ = released_ = 0;
    mapped_ = false;
  }

 private:
  static constexpr std::size_t kMapped = std::size_t{1} << 20;
  void swap(PageArray& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    std::swap(released_, o.released_);
    std::swap(mapped_, o.mapped_);
  }
  T* p_ = nullptr;
  std::size_t bytes_ = 0, released_ = 0;
  bool mapped_ = false;
};

/// The rows of one parsed block, moved out of the chunks so that they can be reused.
struct Segment {
  std::size_t rows = 0, nnz = 0;
  PageArray<double> y;
  PageArray<offset_t> ends;  ///< global offset after each row
  PageArray<index_t> indices;
  PageArray<float> values;
  PageArray<float> values_lo;  ///< LibsvmOptions::float64 only
};

/// Appends n elements of `a` to `v` in pieces, giving each piece's pages back once copied.
template <class T, class A>
void append_releasing(std::vector<T, A>& v, PageArray<T>& a, std::size_t n) {
  constexpr std::size_t kPiece = (std::size_t{1} << 20) / sizeof(T);
  for (std::size_t i = 0; i < n; i += kPiece) {
    const std::size_t k = std::min(kPiece, n - i);
    v.insert(v.end(), a.data() + i, a.data() + i + k);
    a.release_before(i + k);
  }
  a.reset();
}

/// Bytes read and parsed per block.
std::size_t block_size(const LibsvmOptions& o) {
  if (o.block_bytes > 0) return o.block_bytes;
  const std::size_t threads = o.n_threads > 0 ? static_cast<std::size_t>(o.n_threads)
                                               : static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
  return std::clamp<std::size_t>(threads << 19, std::size_t{4} << 20, std::size_t{32} << 20);
}

/// Parses a text given as consecutive batches of complete lines (the last one may lack its final newline),
/// keeping the rows of all batches but the last in Segments, and assembles the data set at the end.
class Reader {
 public:
  Reader(const std::string& name, const LibsvmOptions& options) : name_(name), options_(options), budget_(options.memory_limit, options.memory_limit_name) {
    if (options.n_features > std::numeric_limits<index_t>::max())
      throw InvalidArgument(fmt::format("n_features must be at most {}, got {}", std::numeric_limits<index_t>::max(),
                                        options.n_features));
    if (options.n_threads < 0)
      throw InvalidArgument(fmt::format("n_threads must be >= 0, got {}", options.n_threads));
    threads_ = options.n_threads > 0 ? static_cast<std::size_t>(options.n_threads)
                                     : static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
    // An arena of n_threads threads (at most the machine's concurrency: more threads than cores gain nothing);
    // n_threads 0: the caller's arena.
    if (options.n_threads > 1)
      arena_.emplace(std::max(1, std::min(options.n_threads, tbb::info::default_concurrency())));
  }

  void check_stop() const {
    if (options_.should_stop && options_.should_stop()) throw Interrupted(name_);
  }

  /// Parses [b, e): complete lines, except that the very last batch may end without a newline.
  void batch(const char* b, const char* e) {
    if (b == e) return;
    commit();
    // Chunks: about 4 per thread, cut after a '\n', none smaller than kMinChunkBytes.
    const std::size_t size = static_cast<std::size_t>(e - b);
    std::size_t n_chunks = threads_ == 1 ? 1 : std::min(threads_ * 4, kMaxChunks);
    n_chunks = std::max<std::size_t>(1, std::min(n_chunks, size / kMinChunkBytes));
    if (chunks_.size() < n_chunks) chunks_.resize(n_chunks);
    used_ = 0;
    const char* cut = b;
    for (std::size_t i = 0; i < n_chunks && cut < e; ++i) {
      const char* next = e;
      if (i + 1 < n_chunks) {
        const char* target = b + size / n_chunks * (i + 1);
        if (target < cut) target = cut;
        const void* nl = std::memchr(target, '\n', static_cast<std::size_t>(e - target));
        next = nl ? static_cast<const char*>(nl) + 1 : e;
      }
      if (next == cut) continue;
      Chunk& c = chunks_[used_++];
      c.clear();
      c.begin = cut;
      c.end = next;
      cut = next;
    }

    // A UTF-8 byte order mark at the start of the text is skipped (columns still count its bytes).
    const std::size_t bom = at_start_ ? bom_length(b, e) : 0;
    at_start_ = false;
    std::atomic<std::size_t> first_failed{used_};
    auto parse_chunk = [&](std::size_t i) {
      ChunkParser(chunks_[i], options_, i, first_failed).run(i == 0 ? bom : 0);
    };
    if (used_ <= 1 || options_.n_threads == 1) {
      for (std::size_t i = 0; i < used_; ++i) {
        parse_chunk(i);
        if (chunks_[i].failed) break;
      }
    } else {
      in_arena([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, used_, 1), [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i != r.end(); ++i) parse_chunk(i);
        });
      });
    }

    // The earliest error, with its global line number.
    std::int64_t line = line_base_;
    for (std::size_t i = 0; i < used_; ++i) {
      const Chunk& c = chunks_[i];
      if (c.failed) throw ParseError(name_, line + c.error_line - 1, c.error_column, c.error_message);
      line += c.newlines;
    }

    std::size_t rows = 0, nnz = 0;
    for (std::size_t i = 0; i < used_; ++i) {
      rows += chunks_[i].y.size();
      nnz += chunks_[i].indices.size();
      max_index_ = std::max(max_index_, chunks_[i].max_index);
    }
    constexpr auto kMaxRows = static_cast<std::uint64_t>(std::numeric_limits<index_t>::max());
    if (rows_ + rows > kMaxRows) too_many_rows(b, e);
    rows_ += rows;
    nnz_ += nnz;
    pending_ = used_ > 0;
    line_base_ = line;
    text_bytes_ += size;
    if (!budget_.fits(kept_bytes()))
      throw MemoryLimitError(fmt::format("'{}': stopped at line {} ({} read): the data kept would exceed the memory "
                                         "limit of {} ({}){}",
                                         name_, line_base_ - 1, format_bytes(text_bytes_), format_bytes(budget_.limit()),
                                         budget_.source(),
                                         options_.float64
                                             ? fmt::format("; the values are kept to double precision (12 bytes a "
                                                           "nonzero instead of 8), {}",
                                                           options_.float64_reason)
                                             : std::string()));
  }

  /// [b, e): the beginning of the line after the last batch, whose newline has not been read yet. Throws its first
  /// certain error (ChunkParser::probe), or the too-long error when it already holds more than
  /// kMaxLibsvmLineBytes bytes.
  void partial(const char* b, const char* e) {
    const bool too_long = static_cast<std::size_t>(e - b) > kMaxLibsvmLineBytes;
    const char* pe = too_long ? b + kMaxLibsvmLineBytes : e;
    if (!too_long && pe > b && pe[-1] == '\r') --pe;  // maybe the CR of a CRLF
    Chunk c;
    std::atomic<std::size_t> none{1};
    if (!ChunkParser(c, options_, 0, none).probe(b, pe, at_start_ ? bom_length(b, e) : 0))
      throw ParseError(name_, line_base_, c.error_column, c.error_message);
    if (too_long) throw ParseError(name_, line_base_, 0, too_long_message());
  }

  std::uint64_t rows() const noexcept { return rows_; }
  std::int64_t line() const noexcept { return line_base_; }
  std::uint64_t text_bytes() const noexcept { return text_bytes_; }

  /// The data read, with values_lo when options.float64 asked for it (and settle_values_lo keeps it).
  Dataset finish() {
    if (pending_) note_tiny();
    Dataset data = assemble();
    if (options_.float64) settle_values_lo(data.X, tiny_ && !options_.float64_keep_tiny);
    if (options_.float64 && tiny_ && options_.values_lo_tiny) *options_.values_lo_tiny = true;
    return data;
  }

 private:
  /// The chunks' tiny flags of the current batch into tiny_.
  void note_tiny() {
    for (std::size_t i = 0; i < used_; ++i) tiny_ = tiny_ || chunks_[i].tiny;
  }

  Dataset assemble() {
    flush_staging();
    Dataset data;
    data.source = name_;
    CsrMatrix& X = data.X;
    X.n_rows = static_cast<index_t>(rows_);
    X.n_cols = static_cast<index_t>(std::max<std::int64_t>(options_.n_features, std::int64_t{max_index_} + 1));
    if (!pending_ && segments_.empty()) return data;
    if (segments_.empty() && used_ == 1) {  // one chunk, nothing to concatenate: take the arrays over
      Chunk& c = chunks_[0];
      X.offsets.reserve(rows_ + 1);
      X.offsets.insert(X.offsets.end(), c.row_end.begin(), c.row_end.end());
      X.indices = std::move(c.indices);
      X.values = std::move(c.values);
      X.values_lo = std::move(c.values_lo);
      data.y = std::move(c.y);
      return data;
    }
    if (segments_.empty()) {  // one batch: concatenate its chunks in parallel
      std::vector<std::size_t> row_base(used_), nnz_base(used_);
      std::size_t rows = 0, nnz = 0;
      for (std::size_t i = 0; i < used_; ++i) {
        row_base[i] = rows;
        nnz_base[i] = nnz;
        rows += chunks_[i].y.size();
        nnz += chunks_[i].indices.size();
      }
      X.offsets.assign(rows + 1, 0);
      X.indices.resize(nnz);
      X.values.resize(nnz);
      if (options_.float64) X.values_lo.resize(nnz);
      data.y.resize(rows);
      auto copy_chunk = [&](std::size_t i) {
        const Chunk& c = chunks_[i];
        std::copy(c.y.begin(), c.y.end(), data.y.begin() + static_cast<std::ptrdiff_t>(row_base[i]));
        std::copy(c.indices.begin(), c.indices.end(), X.indices.begin() + static_cast<std::ptrdiff_t>(nnz_base[i]));
        std::copy(c.values.begin(), c.values.end(), X.values.begin() + static_cast<std::ptrdiff_t>(nnz_base[i]));
        std::copy(c.values_lo.begin(), c.values_lo.end(), X.values_lo.begin() + static_cast<std::ptrdiff_t>(nnz_base[i]));
        const auto off = static_cast<offset_t>(nnz_base[i]);
        for (std::size_t r = 0; r < c.row_end.size(); ++r) X.offsets[row_base[i] + r + 1] = off + c.row_end[r];
      };
      if (options_.n_threads == 1) {
        for (std::size_t i = 0; i < used_; ++i) copy_chunk(i);
      } else {
        in_arena([&] { tbb::parallel_for(std::size_t{0}, used_, copy_chunk); });
      }
      return data;
    }
    // Several batches: the segments in order, each page given back as soon as it is copied, then the last batch.
    X.offsets.reserve(rows_ + 1);  // holds its leading 0 already
    data.y.reserve(rows_);
    X.indices.reserve(nnz_);
    X.values.reserve(nnz_);
    if (options_.float64) X.values_lo.reserve(nnz_);
    for (Segment& s : segments_) {
      append_releasing(data.y, s.y, s.rows);
      append_releasing(X.offsets, s.ends, s.rows);
      append_releasing(X.indices, s.indices, s.nnz);
      append_releasing(X.values, s.values, s.nnz);
      if (options_.float64) append_releasing(X.values_lo, s.values_lo, s.nnz);
    }
    segments_.clear();
    for (std::size_t i = 0; i < (pending_ ? used_ : 0); ++i) {
      Chunk& c = chunks_[i];
      const offset_t off = static_cast<offset_t>(X.indices.size());
      data.y.insert(data.y.end(), c.y.begin(), c.y.end());
      for (const offset_t e : c.row_end) X.offsets.push_back(off + e);
      X.indices.insert(X.indices.end(), c.indices.begin(), c.indices.end());
      X.values.insert(X.values.end(), c.values.begin(), c.values.end());
      X.values_lo.insert(X.values_lo.end(), c.values_lo.begin(), c.values_lo.end());
      c = Chunk();
    }
    return data;
  }

 private:
  template <class F>
  void in_arena(F&& f) {
    if (arena_) arena_->execute(f);
    else f();
  }

  static std::size_t bom_length(const char* b, const char* e) {
    return e - b >= 3 && std::memcmp(b, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  }

  /// Bytes the data set will take: labels and row offsets (16 bytes a row), indices and values (8 an entry; 12 with
  /// values_lo).
  std::uint64_t kept_bytes() const noexcept { return rows_ * 16 + nnz_ * (options_.float64 ? 12 : 8) + 8; }

  /// Moves the rows of the last batch out of the chunks into a Segment.
  void commit() {
    if (!pending_) return;
    pending_ = false;
    note_tiny();
    if (std::all_of(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(used_),
                    [](const Chunk& c) { return c.y.empty(); }))
      return;  // blank and comment lines only
    Segment s;
    std::vector<std::size_t> row_base(used_), nnz_base(used_);
    for (std::size_t i = 0; i < used_; ++i) {
      row_base[i] = s.rows;
      nnz_base[i] = s.nnz;
      s.rows += chunks_[i].y.size();
      s.nnz += chunks_[i].indices.size();
    }
    if (s.rows * 16 + s.nnz * 8 < kSegmentMin) {  // a small batch: gather it with the next ones
      for (std::size_t i = 0; i < used_; ++i) {
        const Chunk& c = chunks_[i];
        staging_.y.insert(staging_.y.end(), c.y.begin(), c.y.end());
        const offset_t off = committed_nnz_;
        for (const offset_t e : c.row_end) staging_.ends.push_back(off + e);
        staging_.indices.insert(staging_.indices.end(), c.indices.begin(), c.indices.end());
        staging_.values.insert(staging_.values.end(), c.values.begin(), c.values.end());
        staging_.values_lo.insert(staging_.values_lo.end(), c.values_lo.begin(), c.values_lo.end());
        committed_nnz_ += static_cast<offset_t>(c.indices.size());
      }
      if (staging_.y.size() * 16 + staging_.indices.size() * 8 >= kSegmentMin) flush_staging();
      return;
    }
    flush_staging();
    s.y = PageArray<double>(s.rows);
    s.ends = PageArray<offset_t>(s.rows);
    s.indices = PageArray<index_t>(s.nnz);
    s.values = PageArray<float>(s.nnz);
    if (options_.float64) s.values_lo = PageArray<float>(s.nnz);
    const offset_t base = committed_nnz_;
    auto copy_chunk = [&](std::size_t i) {
      const Chunk& c = chunks_[i];
      std::copy(c.y.begin(), c.y.end(), s.y.data() + row_base[i]);
      std::copy(c.indices.begin(), c.indices.end(), s.indices.data() + nnz_base[i]);
      std::copy(c.values.begin(), c.values.end(), s.values.data() + nnz_base[i]);
      if (options_.float64) std::copy(c.values_lo.begin(), c.values_lo.end(), s.values_lo.data() + nnz_base[i]);
      const offset_t off = base + static_cast<offset_t>(nnz_base[i]);
      offset_t* ends = s.ends.data() + row_base[i];
      for (std::size_t r = 0; r < c.row_end.size(); ++r) ends[r] = off + c.row_end[r];
    };
    if (used_ <= 1 || options_.n_threads == 1) {
      for (std::size_t i = 0; i < used_; ++i) copy_chunk(i);
    } else {
      in_arena([&] { tbb::parallel_for(std::size_t{0}, used_, copy_chunk); });
    }
    committed_nnz_ += static_cast<offset_t>(s.nnz);
    segments_.push_back(std::move(s));
  }

  /// Moves the gathered small batches into a Segment of their own.
  void flush_staging() {
    if (staging_.y.empty()) return;
    Segment s;
    s.rows = staging_.y.size();
    s.nnz = staging_.indices.size();
    s.y = PageArray<double>(s.rows);
    s.ends = PageArray<offset_t>(s.rows);
    s.indices = PageArray<index_t>(s.nnz);
    s.values = PageArray<float>(s.nnz);
    if (options_.float64) s.values_lo = PageArray<float>(s.nnz);
    std::copy(staging_.y.begin(), staging_.y.end(), s.y.data());
    std::copy(staging_.ends.begin(), staging_.ends.end(), s.ends.data());
    std::copy(staging_.indices.begin(), staging_.indices.end(), s.indices.data());
    std::copy(staging_.values.begin(), staging_.values.end(), s.values.data());
    std::copy(staging_.values_lo.begin(), staging_.values_lo.end(), s.values_lo.data());
    segments_.push_back(std::move(s));
    staging_ = Staging();
  }

  /// Names the line of the first row beyond the limit in [b, e), the batch that crossed it.
  [[noreturn]] void too_many_rows(const char* b, const char* e) const {
    constexpr auto kMaxRows = static_cast<std::uint64_t>(std::numeric_limits<index_t>::max());
    std::int64_t line = line_base_;
    std::uint64_t seen = rows_;
    for (const char* p = b; p < e; ++line) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(e - p)));
      const char* q = p;
      while (q < (nl ? nl : e) && (*q == ' ' || *q == '\t')) ++q;
      if (q < (nl ? nl : e) && *q != '#' && *q != '\r' && ++seen > kMaxRows) break;
      if (!nl) break;
      p = nl + 1;
    }
    throw ParseError(name_, line, 0, fmt::format("too many rows (max {})", std::numeric_limits<index_t>::max()));
  }

  const std::string& name_;
  const LibsvmOptions& options_;
  detail::MemoryBudget budget_;
  std::size_t threads_ = 1;
  std::optional<tbb::task_arena> arena_;
  std::vector<Chunk> chunks_;
  std::size_t used_ = 0;      ///< chunks of the last batch
  bool pending_ = false;      ///< the last batch's rows are still in chunks_
  bool at_start_ = true;      ///< the next batch starts at the first byte of the text
  std::vector<Segment> segments_;
  /// Batches of less than kSegmentMin bytes gather here until they fill it, so that small blocks (block_bytes
  /// is a test knob) or blocks of blank lines do not make one Segment each.
  struct Staging {
    std::vector<double> y;
    std::vector<offset_t> ends;
    std::vector<index_t> indices;
    std::vector<float> values;
    std::vector<float> values_lo;
  } staging_;
  static constexpr std::size_t kSegmentMin = std::size_t{1} << 20;
  offset_t committed_nnz_ = 0;
  std::uint64_t rows_ = 0, nnz_ = 0;
  index_t max_index_ = -1;
  bool tiny_ = false;  ///< options.float64: a value that values_lo_loses_bits was read (no values_lo, matrix.hpp)
  std::int64_t line_base_ = 1;  ///< line number of the next batch's first line
  std::uint64_t text_bytes_ = 0;
};

/// Streams `input` through a Reader: blocks of block_size() bytes, each batch the complete lines of the buffer,
/// the partial last line carried over to the next block (the buffer grows only for a line longer than a block).
Dataset read_stream(detail::ByteReader& raw, const std::string& name, const LibsvmOptions& options) {
  Reader reader(name, options);
  try {
    reader.check_stop();
    detail::TextInput in(raw, name);
    const std::size_t block = block_size(options);
    std::vector<char> buf(block);
    std::size_t have = 0;  // bytes in buf; [0, have) is the start of a line (no '\n')
    std::size_t probed = 0;  // length of the partial line at its last probe
    for (;;) {
      reader.check_stop();
      if (buf.size() - have < block) buf.resize(std::min(have + block, kMaxLibsvmLineBytes + block));
      const std::size_t want = buf.size() - have;
      const std::size_t got = detail::read_full(in, buf.data() + have, want);
      const std::size_t from = have;
      have += got;
      if (got < want) {  // the end: the rest is the last line(s), maybe without a final newline
        reader.batch(buf.data(), buf.data() + have);
        break;
      }
      const char* last_nl = static_cast<const char*>(::memrchr(buf.data() + from, '\n', got));
      if (!last_nl) {
        // No line ends in the buffer: look for an error already certain (the NUL byte at 1:1 of a gzip bomb is
        // found in the first block), and refuse a line that has outgrown the bound. Probing at every doubling
        // keeps a long line's cost linear.
        if (have >= 2 * probed || have > kMaxLibsvmLineBytes) {
          reader.partial(buf.data(), buf.data() + have);
          probed = have;
        }
        continue;
      }
      probed = 0;
      const std::size_t done = static_cast<std::size_t>(last_nl - buf.data()) + 1;
      reader.batch(buf.data(), buf.data() + done);
      std::memmove(buf.data(), buf.data() + done, have - done);
      have -= done;
      // 64 MiB of blank and comment lines that compress over 100:1 (deflate -1 reaches 230:1 on a run of one
      // byte, real libsvm text 5 to 10:1): a decompression bomb that would only cost time, refused as such.
      if (in.gzip() && reader.rows() == 0 && reader.text_bytes() > (std::uint64_t{64} << 20) &&
          reader.text_bytes() > 100 * in.compressed_bytes())
        throw IoError(fmt::format(
            "cannot read '{}': gzip data expanding more than 100:1 ({} of text from {} compressed) without a "
            "single sample; refusing it as a decompression bomb",
            name, format_bytes(reader.text_bytes()), format_bytes(in.compressed_bytes())));
    }
    return reader.finish();
  } catch (const std::bad_alloc&) {
    throw IoError(fmt::format("cannot read '{}': out of memory at line {} ({} read)", name, reader.line(),
                              format_bytes(reader.text_bytes())));
  }
}

}  // namespace

Dataset parse_libsvm(std::string_view text, const std::string& name, const LibsvmOptions& options) {
  Reader reader(name, options);
  // Batches of about block_size() bytes cut after a '\n': the rows of each are checked against the memory
  // budget before the next is parsed, as when reading a file.
  const std::size_t block = block_size(options);
  const char* const base = text.data();
  std::size_t pos = 0;
  try {
    while (pos < text.size()) {
      reader.check_stop();
      std::size_t cut = text.size();
      if (text.size() - pos > block) {
        const void* nl = std::memchr(base + pos + block - 1, '\n', text.size() - (pos + block - 1));
        if (nl) cut = static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1;
      }
      reader.batch(base + pos, base + cut);
      pos = cut;
    }
    return reader.finish();
  } catch (const std::bad_alloc&) {
    throw IoError(fmt::format("cannot read '{}': out of memory at line {} ({} read)", name, reader.line(),
                              format_bytes(reader.text_bytes())));
  }
}

Dataset read_libsvm(const std::string& path, const LibsvmOptions& options) {
  detail::FileReader file(path, options.should_stop);
  return read_stream(file, path, options);
}

Dataset read_libsvm_stream(const std::function<std::size_t(char*, std::size_t)>& read, const std::string& name,
                           const LibsvmOptions& options) {
  detail::FunctionReader f(read);
  return read_stream(f, name, options);
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
