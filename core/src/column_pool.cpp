// SPDX-License-Identifier: Apache-2.0
// The resident-column pool (column_pool.hpp).
#include "hetglm/column_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "hetglm/error.hpp"

namespace hetglm {

void ColumnPool::reset(std::int64_t capacity_nnz) {
  capacity_ = capacity_nnz;
  resident_.clear();
}

ColumnPool::Plan ColumnPool::place(std::span<const index_t> coords, const CsrMatrix& A) {
  auto nnz = [&](index_t i) { return static_cast<std::int64_t>(A.offsets[i + 1] - A.offsets[i]); };
  std::int64_t total = 0;
  for (index_t i : coords) total += nnz(i);
  if (total > capacity_)
    throw InvalidArgument(fmt::format("working set of {} nonzeros exceeds the device's column pool of {} nonzeros",
                                      total, capacity_));
  Plan plan;
  plan.slots.assign(coords.size(), Range{});
  // Keep the columns that stay (their ranges do not move); the others leave.
  std::unordered_map<index_t, Range> next;
  next.reserve(coords.size());
  std::vector<Range> kept;
  kept.reserve(coords.size());
  for (std::size_t p = 0; p < coords.size(); ++p) {
    auto it = resident_.find(coords[p]);
    if (it == resident_.end()) {
      plan.fresh.push_back(p);
      plan.fresh_nnz += nnz(coords[p]);
      continue;
    }
    plan.slots[p] = it->second;
    next.emplace(coords[p], it->second);
    if (it->second.len > 0) kept.push_back(it->second);
  }
  resident_ = std::move(next);
  if (plan.fresh.empty()) return plan;

  // The free ranges: the complement of the kept ranges in [0, capacity), in offset order (no free list is kept
  // between rounds: rebuilding it costs a sort of the kept ranges, cheaper than maintaining one per column).
  std::sort(kept.begin(), kept.end(), [](const Range& a, const Range& b) { return a.offset < b.offset; });
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
      resident_[coords[p]] = plan.slots[p];
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
      resident_[coords[plan.fresh[f]]] = got[f];
    }
    return plan;
  }
  // Fragmented: empty the pool; every column of the working set travels again, as one block at offset 0.
  resident_.clear();
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
