// SPDX-License-Identifier: Apache-2.0
// svmlight / libsvm text for hetglm.load_svmlight_file and dump_svmlight_file, with scikit-learn's
// semantics: float64 values and labels, qid kept, indices as written (the caller shifts one-based files).
//
// Why not hetglm::read_libsvm directly: the engine's reader stores values as float32 (the engine's storage)
// and drops qid, while scikit-learn's load_svmlight_file returns float64 and query ids. This reader follows
// the same line grammar (core/include/hetglm/libsvm.hpp) and parses in parallel chunks the same way; on
// malformed input it hands the text to the engine's parser so the error message (FILE:LINE:COLUMN) is the
// engine's. read_libsvm / write_libsvm of the engine are bound as well (engine_read_libsvm / engine_write_libsvm).
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hetglm::py {
namespace {

struct Piece {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::vector<double> y;
  std::vector<std::int64_t> qid;
  std::vector<std::int64_t> row_nnz;
  std::vector<std::int64_t> idx;
  std::vector<double> val;
  std::int64_t min_index = INT64_MAX, max_index = -1;
  bool failed = false;
  std::string error;
};

inline bool parse_double(std::string_view t, double& out) {
  if (t.size() <= 15) {  // fast path: a plain unsigned integer, exact in double
    std::uint64_t v = 0;
    std::size_t i = 0;
    for (; i < t.size(); ++i) {
      const auto d = static_cast<unsigned>(static_cast<unsigned char>(t[i]) - '0');
      if (d > 9) break;
      v = v * 10 + d;
    }
    if (i == t.size() && i > 0) {
      out = static_cast<double>(v);
      return true;
    }
  }
  const char* b = t.data();
  const char* e = b + t.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  const auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && p == e) {
    // from_chars leaves `out` unset here: strtod gives what Python's float() gives (overflow +-inf, underflow 0
    // or a denormal); the caller refuses a non-finite value.
    const std::string copy(t);
    out = std::strtod(copy.c_str(), nullptr);
    return true;
  }
  return ec == std::errc() && p == e;
}

inline bool parse_int(std::string_view t, std::int64_t& out) {
  if (!t.empty() && t.size() <= 18) {  // fast path: plain digits
    std::int64_t v = 0;
    std::size_t i = 0;
    for (; i < t.size(); ++i) {
      const auto d = static_cast<unsigned>(static_cast<unsigned char>(t[i]) - '0');
      if (d > 9) break;
      v = v * 10 + d;
    }
    if (i == t.size()) {
      out = v;
      return true;
    }
  }
  const char* b = t.data();
  const char* e = b + t.size();
  if (b != e && *b == '+') ++b;
  const auto [p, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && p == e;
}

/// Whitespace as bytes.split() sees it (space, \t, \n, \r, \v, \f).
constexpr auto kSpace = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\r', '\v', '\f'}) t[c] = true;
  return t;
}();

void parse_piece(Piece& pc) {
  const char* p = pc.begin;
  const auto bytes = static_cast<std::size_t>(pc.end - pc.begin);
  pc.idx.reserve(bytes / 4);  // a feature takes at least 4 bytes ("1:1 "), so this never reallocates
  pc.val.reserve(bytes / 4);
  std::vector<std::pair<std::int64_t, double>> row;
  while (p < pc.end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(pc.end - p)));
    const char* le = nl ? nl : pc.end;
    const char* hash = static_cast<const char*>(std::memchr(p, '#', static_cast<std::size_t>(le - p)));
    if (hash) le = hash;
    auto next = [&](std::string_view& tok) {
      while (p < le && kSpace[static_cast<unsigned char>(*p)]) ++p;
      if (p >= le) return false;
      const char* s = p;
      while (p < le && !kSpace[static_cast<unsigned char>(*p)]) ++p;
      tok = std::string_view(s, static_cast<std::size_t>(p - s));
      return true;
    };
    std::string_view tok;
    if (next(tok)) {
      double label;
      if (!parse_double(tok, label) || !std::isfinite(label)) {  // a NaN or infinite label: refused as by the CLI
        pc.failed = true;
        pc.error = fmt::format("invalid label '{}'", tok);
        return;
      }
      const std::size_t row_begin = pc.idx.size();
      bool first = true, sorted = true;
      std::int64_t prev = -1;
      while (next(tok)) {
        const std::size_t colon = tok.find(':');
        if (first && tok.size() >= 3 && tok[0] == 'q' && tok.substr(0, 3) == "qid") {
          first = false;
          std::int64_t q;
          if (colon == std::string_view::npos || !parse_int(tok.substr(colon + 1), q)) {
            pc.failed = true;
            pc.error = fmt::format("invalid qid '{}'", tok);
            return;
          }
          pc.qid.push_back(q);
          continue;
        }
        first = false;
        std::int64_t j;
        double v;
        // A non-finite value (nan, inf, or beyond double range) and a signed index ('-0') are refused as by the
        // CLI's reader, whose exact FILE:LINE:COLUMN message parse_svmlight then raises.
        if (colon == std::string_view::npos || tok[0] == '-' || !parse_int(tok.substr(0, colon), j) || j < 0 ||
            j > INT32_MAX - 1 || !parse_double(tok.substr(colon + 1), v) || !std::isfinite(v)) {
          pc.failed = true;
          pc.error = fmt::format("invalid feature '{}'", tok);
          return;
        }
        if (j <= prev) sorted = false;
        prev = std::max(prev, j);
        pc.idx.push_back(j);
        pc.val.push_back(v);
      }
      const std::size_t row_end = pc.idx.size();
      if (!sorted) {  // scikit-learn rejects unsorted rows; we sort them (duplicates stay an error)
        row.clear();
        for (std::size_t k = row_begin; k < row_end; ++k) row.emplace_back(pc.idx[k], pc.val[k]);
        std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t k = 1; k < row.size(); ++k)
          if (row[k].first == row[k - 1].first) {
            pc.failed = true;
            pc.error = fmt::format("duplicate feature index {}", row[k].first);
            return;
          }
        for (std::size_t k = 0; k < row.size(); ++k) {
          pc.idx[row_begin + k] = row[k].first;
          pc.val[row_begin + k] = row[k].second;
        }
      }
      if (row_end > row_begin) {
        pc.min_index = std::min(pc.min_index, pc.idx[row_begin]);
        pc.max_index = std::max(pc.max_index, pc.idx[row_end - 1]);
      }
      pc.y.push_back(label);
      pc.row_nnz.push_back(static_cast<std::int64_t>(row_end - row_begin));
    }
    if (!nl) break;
    p = nl + 1;
  }
}

/// Parse `text`; `shift` = 1 subtracts one from every index (one-based file), 0 keeps them, -1 decides
/// as scikit-learn's zero_based='auto' (subtract when the smallest index is > 0 and there is at least one).
struct Parsed {
  std::vector<double> y, data;
  std::vector<std::int32_t> indices;
  std::vector<std::int64_t> qid, indptr64;
  std::int64_t n_features = 0, min_index = -1;
  bool shifted = false;
};

Parsed parse_svmlight(std::string_view text, const std::string& name, int shift) {
  // Chunks at line boundaries, several per thread for balance.
  const std::size_t threads = static_cast<std::size_t>(std::max(1, tbb::info::default_concurrency()));
  const std::size_t target = std::clamp<std::size_t>(text.size() / (1 << 16), 1, threads * 8);
  std::vector<Piece> pieces;
  // A UTF-8 byte-order mark at the start is skipped, as the CLI's reader does.
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) text.remove_prefix(3);
  const char* b = text.data();
  const char* const e = b + text.size();
  for (std::size_t c = 0; c < target && b < e; ++c) {
    const char* cut = c + 1 == target ? e : text.data() + text.size() * (c + 1) / target;
    if (cut < b) cut = b;
    if (cut < e) {
      const char* nl = static_cast<const char*>(std::memchr(cut, '\n', static_cast<std::size_t>(e - cut)));
      cut = nl ? nl + 1 : e;
    }
    Piece pc;
    pc.begin = b;
    pc.end = cut;
    pieces.push_back(std::move(pc));
    b = cut;
  }
  tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t i) { parse_piece(pieces[i]); });
  for (const Piece& pc : pieces)
    if (pc.failed) {
      LibsvmOptions o;
      o.zero_based = true;
      parse_libsvm(text, name, o);  // the engine's exact FILE:LINE:COLUMN message, if it rejects the text
      throw ParseError(name, 0, 0, pc.error);
    }

  std::vector<std::size_t> row0(pieces.size() + 1, 0), nz0(pieces.size() + 1, 0), q0(pieces.size() + 1, 0);
  std::int64_t min_index = INT64_MAX, max_index = -1;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    row0[i + 1] = row0[i] + pieces[i].y.size();
    nz0[i + 1] = nz0[i] + pieces[i].idx.size();
    q0[i + 1] = q0[i] + pieces[i].qid.size();
    min_index = std::min(min_index, pieces[i].min_index);
    max_index = std::max(max_index, pieces[i].max_index);
  }
  const std::size_t n = row0.back(), nnz = nz0.back();
  const bool nonempty = nnz > 0;
  const std::int64_t sub = shift == 1 ? 1 : shift == 0 ? 0 : (nonempty && min_index > 0 ? 1 : 0);
  if (shift == 1 && nonempty && min_index == 0)
    throw InvalidArgument(fmt::format("'{}': invalid index 0 in a one-based (zero_based=False) file", name));
  std::vector<double> y(n), data(nnz);
  std::vector<std::int32_t> indices(nnz);
  std::vector<std::int64_t> qid(q0.back());
  std::vector<std::int64_t> indptr64(n + 1);
  tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t i) {
    const Piece& pc = pieces[i];
    std::copy(pc.y.begin(), pc.y.end(), y.begin() + static_cast<std::ptrdiff_t>(row0[i]));
    std::copy(pc.val.begin(), pc.val.end(), data.begin() + static_cast<std::ptrdiff_t>(nz0[i]));
    std::copy(pc.qid.begin(), pc.qid.end(), qid.begin() + static_cast<std::ptrdiff_t>(q0[i]));
    for (std::size_t k = 0; k < pc.idx.size(); ++k) indices[nz0[i] + k] = static_cast<std::int32_t>(pc.idx[k] - sub);
    std::int64_t acc = static_cast<std::int64_t>(nz0[i]);
    for (std::size_t r = 0; r < pc.row_nnz.size(); ++r) {
      acc += pc.row_nnz[r];
      indptr64[row0[i] + r + 1] = acc;
    }
  });
  Parsed out;
  out.y = std::move(y);
  out.data = std::move(data);
  out.indices = std::move(indices);
  out.qid = std::move(qid);
  out.indptr64 = std::move(indptr64);
  out.n_features = nonempty ? max_index - sub + 1 : 0;  // as scikit-learn: largest index + 1
  out.min_index = nonempty ? min_index : -1;
  out.shifted = sub == 1;
  return out;
}

/// The parsed arrays as numpy arrays (buffers moved, not copied). Needs the GIL.
nb::dict to_dict(Parsed&& p) {
  nb::dict out;
  const std::size_t nnz = p.data.size();
  out["data"] = to_numpy(std::move(p.data));
  out["indices"] = to_numpy(std::move(p.indices));
  if (nnz <= static_cast<std::size_t>(INT32_MAX)) {
    std::vector<std::int32_t> indptr(p.indptr64.begin(), p.indptr64.end());
    out["indptr"] = to_numpy(std::move(indptr));
  } else {
    out["indptr"] = to_numpy(std::move(p.indptr64));
  }
  out["y"] = to_numpy(std::move(p.y));
  out["qid"] = to_numpy(std::move(p.qid));
  out["n_features"] = p.n_features;
  out["min_index"] = p.min_index;
  out["shifted"] = p.shifted;
  return out;
}

template <class I, class P>
using Vec = nb::ndarray<const I, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// Text of a CSR matrix (float64 values) with labels and optional qids, scikit-learn's layout:
/// "label [qid:q] index:value ..." with values and labels as the shortest text that reads back exactly.
template <class I, class P>
std::string format_svmlight(const Vec<P, P>& indptr, const Vec<I, I>& indices, const Vec<double, double>& data,
                            const Vec<double, double>& y, std::optional<Vec<std::int64_t, std::int64_t>> qid,
                            bool zero_based, const std::string& comment) {
  const std::size_t n = y.shape(0);
  if (indptr.shape(0) != n + 1) throw InvalidArgument("dump_svmlight_file: X and y have different numbers of rows");
  if (qid && qid->shape(0) != n) throw InvalidArgument("dump_svmlight_file: query_id has the wrong length");
  std::string head;
  if (!comment.empty()) {
    std::string_view c(comment);
    while (!c.empty()) {
      const std::size_t nl = c.find('\n');
      head += "# ";
      head += c.substr(0, nl);
      head += '\n';
      if (nl == std::string_view::npos) break;
      c.remove_prefix(nl + 1);
    }
  }
  const std::size_t nchunks = std::clamp<std::size_t>(n / 4096, 1, 256);
  std::vector<std::string> parts(nchunks);
  const P* ip = indptr.data();
  const I* ix = indices.data();
  const double* dv = data.data();
  const int add = zero_based ? 0 : 1;
  tbb::parallel_for(std::size_t{0}, nchunks, [&](std::size_t c) {
    fmt::memory_buffer buf;
    const std::size_t r0 = n * c / nchunks, r1 = n * (c + 1) / nchunks;
    for (std::size_t r = r0; r < r1; ++r) {
      fmt::format_to(std::back_inserter(buf), "{}", y.data()[r]);
      if (qid) fmt::format_to(std::back_inserter(buf), " qid:{}", qid->data()[r]);
      for (auto k = ip[r]; k < ip[r + 1]; ++k)
        fmt::format_to(std::back_inserter(buf), " {}:{}", static_cast<std::int64_t>(ix[k]) + add, dv[k]);
      buf.push_back('\n');
    }
    parts[c] = fmt::to_string(buf);
  });
  std::size_t total = head.size();
  for (const auto& s : parts) total += s.size();
  std::string out;
  out.reserve(total);
  out += head;
  for (const auto& s : parts) out += s;
  return out;
}

}  // namespace

void bind_svmlight(nb::module_& m) {
  m.def("parse_svmlight_file",
        [](const std::string& path, int shift) {
          Parsed p;
          {
            nb::gil_scoped_release nogil;
            const std::string text = read_file(path);
            p = parse_svmlight(text, path, shift);
          }
          return to_dict(std::move(p));
        },
        "path"_a, "shift"_a,
        "Parse an svmlight file (plain text) as scikit-learn: returns a dict of data (float64), indices (int32), "
        "indptr, y (float64), qid (int64, rows that have one), n_features, min_index, shifted. shift: 1 one-based, "
        "0 zero-based, -1 auto. Raises ValueError on malformed text (the engine's FILE:LINE:COLUMN message), "
        "OSError / FileNotFoundError when the file cannot be read.");
  m.def("parse_svmlight_bytes",
        [](nb::bytes text, const std::string& name, int shift) {
          std::string_view t(text.c_str(), text.size());
          return to_dict(parse_svmlight(t, name, shift));
        },
        "text"_a, "name"_a, "shift"_a, "As parse_svmlight_file, on bytes already in memory.");

#define HETGLM_FORMAT(I, P)                                                                                    \
  m.def("format_svmlight",                                                                                     \
        [](const Vec<P, P>& indptr, const Vec<I, I>& indices, const Vec<double, double>& data,                 \
           const Vec<double, double>& y, std::optional<Vec<std::int64_t, std::int64_t>> qid, bool zero_based,  \
           const std::string& comment) {                                                                       \
          std::string s = format_svmlight<I, P>(indptr, indices, data, y, qid, zero_based, comment);           \
          return nb::bytes(s.data(), s.size());                                                                \
        },                                                                                                     \
        "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "y"_a.noconvert(),              \
        "qid"_a.noconvert() = nb::none(), "zero_based"_a, "comment"_a)
  HETGLM_FORMAT(std::int32_t, std::int32_t);
  HETGLM_FORMAT(std::int64_t, std::int64_t);
  HETGLM_FORMAT(std::int32_t, std::int64_t);
#undef HETGLM_FORMAT
  m.def("write_file_atomic", [](const std::string& path, nb::bytes b) {
    write_file_atomic(path, std::string_view(b.c_str(), b.size()));
  }, "path"_a, "contents"_a, "Write bytes atomically (temporary file, fsync, rename); IoError -> OSError.");

  // The engine's own reader and writer (float32 values, qid ignored), as the CLI uses them.
  m.def("engine_read_libsvm",
        [](const std::string& path, bool zero_based, std::int64_t n_features) {
          LibsvmOptions o;
          o.zero_based = zero_based;
          o.n_features = n_features;
          Dataset d;
          {
            nb::gil_scoped_release nogil;
            d = read_libsvm(path, o);
          }
          nb::dict out;
          std::vector<std::int64_t> indptr(d.X.offsets.begin(), d.X.offsets.end());
          out["indptr"] = to_numpy(std::move(indptr));
          out["indices"] = to_numpy(std::move(d.X.indices));
          out["data"] = to_numpy(std::move(d.X.values));
          out["y"] = to_numpy(std::move(d.y));
          out["shape"] = nb::make_tuple(d.X.n_rows, d.X.n_cols);
          return out;
        },
        "path"_a, "zero_based"_a = false, "n_features"_a = -1,
        "hetglm::read_libsvm: the engine's reader (float32 values, as training stores them).");
  m.def("engine_write_libsvm",
        [](const std::string& path, const Vec<std::int64_t, std::int64_t>& indptr,
           const Vec<std::int32_t, std::int32_t>& indices, const Vec<float, float>& data, const Vec<double, double>& y,
           std::int64_t n_cols, bool zero_based) {
          Dataset d;
          d.X.n_rows = static_cast<index_t>(y.shape(0));
          d.X.n_cols = static_cast<index_t>(n_cols);
          d.X.offsets.assign(indptr.data(), indptr.data() + indptr.shape(0));
          d.X.indices.assign(indices.data(), indices.data() + indices.shape(0));
          d.X.values.assign(data.data(), data.data() + data.shape(0));
          d.y.assign(y.data(), y.data() + y.shape(0));
          validate(d.X, "X");
          write_libsvm(path, d, zero_based);
        },
        "path"_a, "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "y"_a.noconvert(),
        "n_cols"_a, "zero_based"_a = false, "hetglm::write_libsvm: the engine's writer (float32 values).");
}

}  // namespace hetglm::py
