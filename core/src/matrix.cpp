// SPDX-License-Identifier: Apache-2.0
// Compressed sparse matrix helpers (layout: see matrix.hpp).
#include "hetglm/matrix.hpp"

#include <fmt/format.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "hetglm/error.hpp"

namespace hetglm {

namespace detail {
namespace {
constexpr std::align_val_t kHugePage{std::size_t{2} << 20};
}
void* allocate_huge_array(std::size_t bytes) {
  void* p = ::operator new(bytes, kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where the kernel has no huge pages the array keeps 4 KiB pages
#endif
  return p;
}
void deallocate_huge_array(void* p, std::size_t bytes) noexcept { ::operator delete(p, bytes, kHugePage); }
}  // namespace detail

namespace {
// Debian's oneTBB is not instrumented for ThreadSanitizer (solvers/src/parallel_cpu.cpp): stay sequential there.
#if defined(__SANITIZE_THREAD__)
constexpr bool kSanitizeThread = true;
#else
constexpr bool kSanitizeThread = false;
#endif
}  // namespace

CsrMatrix transpose(const CsrMatrix& a) {
  CsrMatrix t;
  t.n_rows = a.n_cols;
  t.n_cols = a.n_rows;
  const std::size_t d = static_cast<std::size_t>(a.n_cols);
  t.indices.resize(a.indices.size());
  t.values.resize(a.values.size());
  t.values_lo.resize(a.values_lo.size());
  const bool with_lo = a.has_lo();
  // Rows are cut into B contiguous blocks (B = the arena's concurrency for large matrices, else 1): block b counts
  // its entries per column, the counts give each block its start inside every output row, and the blocks scatter
  // in parallel. Blocks are in row order, so every output row lists its entries by ascending input row (sorted
  // indices), and the result is identical for every B.
  int B = a.nnz() >= (offset_t{1} << 20) && !kSanitizeThread ? tbb::this_task_arena::max_concurrency() : 1;
  B = std::max(1, std::min(B, static_cast<int>(std::max<index_t>(a.n_rows, 1))));
  std::vector<index_t> row_start(static_cast<std::size_t>(B) + 1);
  for (int b = 0; b <= B; ++b) row_start[b] = static_cast<index_t>(std::int64_t(a.n_rows) * b / B);
  std::vector<offset_t> start(static_cast<std::size_t>(B) * d, 0);  // per block: entries per column, then positions
  auto blocks = [&](auto&& f) {
    if (B == 1) return f(0);
    tbb::parallel_for(0, B, [&](int b) { f(b); }, tbb::static_partitioner());
  };
  blocks([&](int b) {
    offset_t* cnt = start.data() + std::size_t(b) * d;
    for (offset_t k = a.offsets[row_start[b]]; k < a.offsets[row_start[b + 1]]; ++k) ++cnt[a.indices[k]];
  });
  t.offsets.assign(d + 1, 0);
  offset_t pos = 0;
  for (std::size_t j = 0; j < d; ++j) {
    t.offsets[j] = pos;
    for (int b = 0; b < B; ++b) {
      const offset_t c = start[std::size_t(b) * d + j];
      start[std::size_t(b) * d + j] = pos;
      pos += c;
    }
  }
  t.offsets[d] = pos;
  blocks([&](int b) {
    offset_t* next = start.data() + std::size_t(b) * d;
    for (index_t r = row_start[b]; r < row_start[b + 1]; ++r) {
      for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
        const offset_t p = next[a.indices[k]]++;
        t.indices[p] = r;
        t.values[p] = a.values[k];
        if (with_lo) t.values_lo[p] = a.values_lo[k];
      }
    }
  });
  return t;
}

CsrMatrix select_rows(const CsrMatrix& a, std::span<const index_t> rows) {
  CsrMatrix s;
  s.n_cols = a.n_cols;
  if (rows.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
    throw InvalidArgument(fmt::format("select_rows: {} rows do not fit a 32-bit index", rows.size()));
  s.n_rows = static_cast<index_t>(rows.size());
  offset_t nnz = 0;
  for (index_t r : rows) {
    if (r < 0 || r >= a.n_rows)
      throw InvalidArgument(fmt::format("select_rows: row {} outside [0, {})", r, a.n_rows));
    nnz += a.offsets[r + 1] - a.offsets[r];
  }
  s.offsets.resize(rows.size() + 1);
  s.indices.resize(static_cast<std::size_t>(nnz));
  s.values.resize(static_cast<std::size_t>(nnz));
  if (a.has_lo()) s.values_lo.resize(static_cast<std::size_t>(nnz));
  offset_t pos = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    s.offsets[k] = pos;
    const offset_t b = a.offsets[rows[k]], e = a.offsets[rows[k] + 1];
    std::copy(a.indices.begin() + b, a.indices.begin() + e, s.indices.begin() + pos);
    std::copy(a.values.begin() + b, a.values.begin() + e, s.values.begin() + pos);
    if (a.has_lo()) std::copy(a.values_lo.begin() + b, a.values_lo.begin() + e, s.values_lo.begin() + pos);
    pos += e - b;
  }
  s.offsets[rows.size()] = pos;
  return s;
}

std::vector<double> row_sq_norms(const CsrMatrix& a) {
  std::vector<double> out(static_cast<std::size_t>(a.n_rows), 0.0);
  auto rows = [&](index_t lo, index_t hi) {
    for (index_t r = lo; r < hi; ++r) {
      double s = 0;
      for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) s += double(a.values[k]) * a.values[k];
      out[static_cast<std::size_t>(r)] = s;
    }
  };
  // Large matrices: rows in parallel (the caller's arena: the CLI's --threads), each summed in its own order, so the
  // same bits for every thread count. Serial, a row's chain of dependent additions made this pass a tenth of a
  // 2-thread ridge fit on dense 50,000 x 500 (30 ms of 0.27 s). Sequential under ThreadSanitizer, as transpose.
  if (a.nnz() < (offset_t{1} << 20) || kSanitizeThread) {
    rows(0, a.n_rows);
    return out;
  }
  tbb::parallel_for(tbb::blocked_range<index_t>(0, a.n_rows, 1024),
                    [&](const tbb::blocked_range<index_t>& r) { rows(r.begin(), r.end()); });
  return out;
}

CsrMatrix with_bias_column(const CsrMatrix& a, double bias) {
  if (bias < 0) return a;
  if (a.n_cols == std::numeric_limits<index_t>::max())
    throw InvalidArgument("cannot append the bias feature: the number of features is already 2^31-1");
  CsrMatrix b;
  b.n_rows = a.n_rows;
  b.n_cols = a.n_cols + 1;
  const auto n = static_cast<std::size_t>(a.n_rows);
  b.offsets.resize(n + 1);
  b.indices.resize(a.indices.size() + n);  // FillVector: no zero fill; every entry is written below
  b.values.resize(a.values.size() + n);
  const bool with_lo = a.has_lo();
  if (with_lo) b.values_lo.resize(a.values_lo.size() + n);
  const float bias_value = static_cast<float>(bias);
  const float bias_lo = values_lo_of(bias);
  // Row r moves up by r entries (one bias entry after each earlier row); rows are copied in parallel for large
  // matrices (a fitted intercept copies the whole matrix on every fit).
  auto rows = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r) {
      const offset_t from = a.offsets[r], to = a.offsets[r + 1], at = from + static_cast<offset_t>(r);
      std::copy(a.indices.begin() + from, a.indices.begin() + to, b.indices.begin() + at);
      std::copy(a.values.begin() + from, a.values.begin() + to, b.values.begin() + at);
      b.indices[static_cast<std::size_t>(at + (to - from))] = a.n_cols;
      b.values[static_cast<std::size_t>(at + (to - from))] = bias_value;
      if (with_lo) {
        std::copy(a.values_lo.begin() + from, a.values_lo.begin() + to, b.values_lo.begin() + at);
        b.values_lo[static_cast<std::size_t>(at + (to - from))] = bias_lo;
      }
      b.offsets[r + 1] = to + static_cast<offset_t>(r) + 1;
    }
  };
  b.offsets[0] = 0;
  if (a.nnz() >= (offset_t{1} << 20) && !kSanitizeThread)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256),
                      [&](const tbb::blocked_range<std::size_t>& r) { rows(r.begin(), r.end()); });
  else
    rows(0, n);
  return b;
}

void set_values_lo(CsrMatrix& a, const double* x) {
  const offset_t nnz = a.nnz();
  std::atomic<bool> tiny{false};
  a.values_lo.resize(static_cast<std::size_t>(nnz));
  tbb::parallel_for(tbb::blocked_range<offset_t>(0, nnz, 1 << 14), [&](const tbb::blocked_range<offset_t>& r) {
    bool small = false;
    for (offset_t k = r.begin(); k < r.end(); ++k) {
      a.values_lo[static_cast<std::size_t>(k)] = values_lo_of(x[k]);
      small |= values_lo_loses_bits(x[k]);
    }
    if (small) tiny.store(true, std::memory_order_relaxed);
  });
  settle_values_lo(a, tiny.load());
}

void settle_values_lo(CsrMatrix& a, bool tiny) {
  if (!a.has_lo()) return;
  const bool any = !tiny && tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, a.values_lo.size(), 1 << 16), false,
      [&](const tbb::blocked_range<std::size_t>& r, bool nz) {
        for (std::size_t k = r.begin(); k < r.end() && !nz; ++k) nz = a.values_lo[k] != 0.0f;
        return nz;
      },
      [](bool x, bool y) { return x || y; });
  if (!any) FillVector<float>().swap(a.values_lo);
}

void multiply(const CsrMatrix& a, std::span<const double> w, std::span<double> out) {
  const std::size_t limit = w.size();
  const bool with_lo = a.has_lo();
  for (index_t r = 0; r < a.n_rows; ++r) {
    double s = 0;
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      const index_t j = a.indices[k];
      if (static_cast<std::size_t>(j) < limit)
        s += (with_lo ? double(a.values[k]) + double(a.values_lo[k]) : double(a.values[k])) * w[j];
    }
    out[r] = s;
  }
}

void validate(const CsrMatrix& a, const std::string& what) {
  auto fail = [&](const std::string& m) { throw InvalidArgument(fmt::format("{}: {}", what, m)); };
  if (a.n_rows < 0 || a.n_cols < 0) fail("negative shape");
  if (a.offsets.size() != static_cast<std::size_t>(a.n_rows) + 1) fail("offsets must have n_rows + 1 entries");
  if (a.offsets[0] != 0) fail("offsets[0] must be 0");
  if (a.indices.size() != static_cast<std::size_t>(a.nnz()) || a.values.size() != a.indices.size())
    fail("indices and values must have nnz entries");
  if (a.has_lo() && a.values_lo.size() != a.values.size()) fail("values_lo must be empty or have nnz entries");
  for (index_t r = 0; r < a.n_rows; ++r) {
    if (a.offsets[r + 1] < a.offsets[r]) fail(fmt::format("offsets decrease at row {}", r));
    for (offset_t k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      if (a.indices[k] < 0 || a.indices[k] >= a.n_cols)
        fail(fmt::format("row {}: column index {} out of range [0, {})", r, a.indices[k], a.n_cols));
      if (k > a.offsets[r] && a.indices[k] <= a.indices[k - 1])
        fail(fmt::format("row {}: column indices not strictly increasing", r));
    }
  }
}

}  // namespace hetglm
