// SPDX-License-Identifier: Apache-2.0
// The resident-column pool (column_pool.hpp).
#include "hetglm/column_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "hetglm/error.hpp"

namespace hetglm {
namespace {
/// Disjoint ranges of [0, capacity) in offset order: a bucket sort (n buckets over [0, capacity), about one start per
/// bucket), each bucket then sorted. O(n) expected where std::sort of every round's kept ranges took O(n log n) (about
/// 6% of a DuHL round on the host with the cpu stand-in, bench/results/duhl_threads.md).
void sort_by_offset(std::vector<ColumnPool::Range>& r, std::int64_t capacity) {
  const std::size_t n = r.size();
  if (n < 2 || capacity <= 0) return;
  auto bucket = [&](std::int64_t offset) {
    return std::min(n - 1, static_cast<std::size_t>(double(offset) / double(capacity) * double(n)));
  };
  std::vector<std::size_t> start(n + 1, 0);
  for (const auto& x : r) ++start[bucket(x.offset) + 1];
  for (std::size_t b = 0; b < n; ++b) start[b + 1] += start[b];
  std::vector<ColumnPool::Range> out(n);
  std::vector<std::size_t> at(start.begin(), start.end() - 1);
  for (const auto& x : r) out[at[bucket(x.offset)]++] = x;
  auto by_offset = [](const ColumnPool::Range& a, const ColumnPool::Range& c) { return a.offset < c.offset; };
  for (std::size_t b = 0; b < n; ++b)
    if (start[b + 1] - start[b] > 1)
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(start[b]),
                out.begin() + static_cast<std::ptrdiff_t>(start[b + 1]), by_offset);
  r.swap(out);
}
}  // namespace

void ColumnPool::reset(std::int64_t capacity_nnz) {
  capacity_ = capacity_nnz;
  for (index_t i : resident_) where_[static_cast<std::size_t>(i)].len = -1;
  resident_.clear();
}

ColumnPool::Plan ColumnPool::place(std::span<const index_t> coords, const CsrMatrix& A) {
  auto nnz = [&](index_t i) { return static_cast<std::int64_t>(A.offsets[i + 1] - A.offsets[i]); };
  std::int64_t total = 0;
  for (index_t i : coords) total += nnz(i);
  if (total > capacity_)
    throw InvalidArgument(fmt::format("working set of {} nonzeros exceeds the device's column pool of {} nonzeros",
                                      total, capacity_));
  if (where_.size() < static_cast<std::size_t>(A.n_rows)) {
    where_.resize(static_cast<std::size_t>(A.n_rows), Range{0, -1});
    seen_.resize(static_cast<std::size_t>(A.n_rows), 0);
  }
  if (++stamp_ == 0) {  // the stamp wrapped (after 2^32 calls): no stale mark may match
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
  Plan plan;
  plan.slots.assign(coords.size(), Range{});
  // Keep the columns that stay (their ranges do not move); the others leave.
  std::vector<Range> kept;
  kept.reserve(coords.size());
  for (std::size_t p = 0; p < coords.size(); ++p) {
    const auto i = static_cast<std::size_t>(coords[p]);
    seen_[i] = stamp_;
    const Range& r = where_[i];
    if (r.len < 0) {
      plan.fresh.push_back(p);
      plan.fresh_nnz += nnz(coords[p]);
      continue;
    }
    plan.slots[p] = r;
    if (r.len > 0) kept.push_back(r);
  }
  for (index_t i : resident_)
    if (seen_[static_cast<std::size_t>(i)] != stamp_) where_[static_cast<std::size_t>(i)].len = -1;
  resident_.assign(coords.begin(), coords.end());  // every coordinate of the working set is resident after the call
  if (plan.fresh.empty()) return plan;

  // The free ranges: the complement of the kept ranges in [0, capacity), in offset order (no free list is kept
  // between rounds: rebuilding it costs a sort of the kept ranges, cheaper than maintaining one per column).
  sort_by_offset(kept, capacity_);
  std::vector<Range> gaps;
  std::int64_t at = 0;
  for (const Range& r : kept) {
    if (r.offset > at) gaps.push_back({at, r.offset - at});
    at = std::max(at, r.offset + r.len);
  }
  if (capacity_ > at) gaps.push_back({at, capacity_ - at});

  auto place_block = [&](std::int64_t block) {
    plan.contiguous = true;
    plan.block = block;
    std::int64_t o = block;
    for (std::size_t p : plan.fresh) {
      plan.slots[p] = {o, nnz(coords[p])};
      where_[static_cast<std::size_t>(coords[p])] = plan.slots[p];
      o += plan.slots[p].len;
    }
  };
  // One contiguous block in the smallest gap that holds every fresh column (one copy).
  const Range* best = nullptr;
  for (const Range& g : gaps)
    if (g.len >= plan.fresh_nnz && (!best || g.len < best->len)) best = &g;
  if (best || plan.fresh_nnz == 0) {
    place_block(best ? best->offset : 0);
    return plan;
  }
  // Column by column into the gaps in offset order (next fit).
  std::vector<Range> got;
  got.reserve(plan.fresh.size());
  std::size_t g = 0;
  std::int64_t used = 0;  // of gaps[g]
  for (std::size_t p : plan.fresh) {
    const std::int64_t len = nnz(coords[p]);
    while (g < gaps.size() && gaps[g].len - used < len) {
      ++g;
      used = 0;
    }
    if (g == gaps.size()) break;
    got.push_back({gaps[g].offset + used, len});
    used += len;
  }
  if (got.size() == plan.fresh.size()) {
    for (std::size_t f = 0; f < plan.fresh.size(); ++f) {
      plan.slots[plan.fresh[f]] = got[f];
      where_[static_cast<std::size_t>(coords[plan.fresh[f]])] = got[f];
    }
    return plan;
  }
  // Fragmented: empty the pool; every column of the working set travels again, as one block at offset 0.
  plan = Plan{};
  plan.slots.assign(coords.size(), Range{});
  plan.emptied = true;
  for (std::size_t p = 0; p < coords.size(); ++p) {
    plan.fresh.push_back(p);
    plan.fresh_nnz += nnz(coords[p]);
  }
  place_block(0);
  return plan;
}

}  // namespace hetglm
