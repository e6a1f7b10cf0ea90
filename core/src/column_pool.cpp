// SPDX-License-Identifier: Apache-2.0
// The resident-column pool (column_pool.hpp).
#include "hetglm/column_pool.hpp"

#include <fmt/format.h>

#include <iterator>

#include "hetglm/error.hpp"

namespace hetglm {

void ColumnPool::reset(std::int64_t capacity_nnz) {
  capacity_ = capacity_nnz;
  free_.clear();
  resident_.clear();
  if (capacity_ > 0) free_[0] = capacity_;
}

std::int64_t ColumnPool::allocate(std::int64_t len) {
  if (len == 0) return 0;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    const std::int64_t off = it->first, rest = it->second - len;
    free_.erase(it);
    if (rest > 0) free_[off + len] = rest;
    return off;
  }
  return -1;
}

void ColumnPool::release(std::int64_t off, std::int64_t len) {
  if (len == 0) return;
  auto it = free_.emplace(off, len).first;
  auto next = std::next(it);
  if (next != free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_.erase(it);
    }
  }
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
  // Keep the columns that stay; free those that leave.
  std::unordered_map<index_t, Range> next;
  next.reserve(coords.size());
  for (std::size_t p = 0; p < coords.size(); ++p) {
    auto it = resident_.find(coords[p]);
    if (it == resident_.end()) {
      plan.fresh.push_back(p);
      plan.fresh_nnz += nnz(coords[p]);
      continue;
    }
    plan.slots[p] = it->second;
    next.emplace(coords[p], it->second);
    resident_.erase(it);
  }
  for (const auto& [i, r] : resident_) release(r.offset, r.len);
  resident_ = std::move(next);

  auto place_block = [&](std::int64_t block) {
    plan.contiguous = true;
    plan.block = block;
    std::int64_t at = block;
    for (std::size_t p : plan.fresh) {
      plan.slots[p] = {at, nnz(coords[p])};
      resident_[coords[p]] = plan.slots[p];
      at += plan.slots[p].len;
    }
  };
  if (plan.fresh.empty()) return plan;
  if (const std::int64_t block = allocate(plan.fresh_nnz); block >= 0) {
    place_block(block);
    return plan;
  }
  // First fit, column by column.
  std::vector<Range> got;
  bool ok = true;
  for (std::size_t p : plan.fresh) {
    const std::int64_t off = allocate(nnz(coords[p]));
    if (off < 0) {
      ok = false;
      break;
    }
    got.push_back({off, nnz(coords[p])});
  }
  if (ok) {
    for (std::size_t f = 0; f < plan.fresh.size(); ++f) {
      plan.slots[plan.fresh[f]] = got[f];
      resident_[coords[plan.fresh[f]]] = got[f];
    }
    return plan;
  }
  // Fragmented: empty the pool; every column of the working set travels again, as one block at offset 0.
  reset(capacity_);
  plan = Plan{};
  plan.slots.assign(coords.size(), Range{});
  plan.emptied = true;
  for (std::size_t p = 0; p < coords.size(); ++p) {
    plan.fresh.push_back(p);
    plan.fresh_nnz += nnz(coords[p]);
  }
  place_block(allocate(plan.fresh_nnz));
  return plan;
}

}  // namespace hetglm
