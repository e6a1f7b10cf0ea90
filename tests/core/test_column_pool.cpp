// SPDX-License-Identifier: Apache-2.0
// The resident-column pool shared by every backend (core/include/hetglm/column_pool.hpp): columns that stay keep
// their ranges, only new ones are copied, ranges never overlap and stay inside the capacity, a fragmented pool is
// emptied, and a working set over the capacity is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <map>
#include <set>
#include <vector>

#include "hetglm/column_pool.hpp"
#include "hetglm/error.hpp"
#include "hetglm/rng.hpp"

using namespace hetglm;

namespace {
/// Rows of lengths `lens` (the values are the row index, to check staging).
CsrMatrix rows_of(const std::vector<int>& lens) {
  CsrMatrix A;
  A.n_rows = static_cast<index_t>(lens.size());
  A.n_cols = 1000;
  A.offsets.assign(1, 0);
  for (std::size_t i = 0; i < lens.size(); ++i) {
    for (int k = 0; k < lens[i]; ++k) {
      A.indices.push_back(k);
      A.values.push_back(float(i));
    }
    A.offsets.push_back(static_cast<offset_t>(A.indices.size()));
  }
  return A;
}

void expect_disjoint_and_inside(const ColumnPool::Plan& plan, std::int64_t capacity) {
  std::vector<ColumnPool::Range> r;
  for (const auto& s : plan.slots)
    if (s.len > 0) r.push_back(s);
  std::sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
  for (std::size_t k = 0; k < r.size(); ++k) {
    EXPECT_GE(r[k].offset, 0);
    EXPECT_LE(r[k].offset + r[k].len, capacity);
    if (k > 0) {
      EXPECT_LE(r[k - 1].offset + r[k - 1].len, r[k].offset) << "ranges overlap";
    }
  }
}
}  // namespace

TEST(ColumnPool, KeepsResidentColumnsAndCopiesOnlyNewOnes) {
  const CsrMatrix A = rows_of({3, 5, 2, 4, 6, 1});
  ColumnPool pool;
  pool.reset(14);
  const std::vector<index_t> ws1{0, 1, 2};  // 10 nonzeros
  const auto p1 = pool.place(ws1, A);
  EXPECT_EQ(p1.fresh.size(), 3u);
  EXPECT_TRUE(p1.contiguous);
  EXPECT_EQ(p1.fresh_nnz, 10);
  expect_disjoint_and_inside(p1, 14);
  const std::vector<index_t> ws2{2, 3};  // 2 stays, 3 (4 nonzeros) is new
  const auto p2 = pool.place(ws2, A);
  ASSERT_EQ(p2.fresh, (std::vector<std::size_t>{1}));
  EXPECT_EQ(p2.slots[0].offset, p1.slots[2].offset);  // the kept column did not move
  EXPECT_EQ(p2.slots[0].len, 2);
  expect_disjoint_and_inside(p2, 14);
  std::vector<int> idx(4);
  std::vector<float> val(4);
  ColumnPool::stage(p2, ws2, A, idx.data(), val.data());
  EXPECT_EQ(val, (std::vector<float>{3, 3, 3, 3}));
  int copies = 0;
  ColumnPool::for_each_copy(p2, [&](std::int64_t from, std::int64_t n, std::int64_t at) {
    ++copies;
    EXPECT_EQ(from, 0);
    EXPECT_EQ(n, 4);
    EXPECT_EQ(at, p2.slots[1].offset);
  });
  EXPECT_EQ(copies, 1);
}

TEST(ColumnPool, FragmentedPoolPlacesColumnByColumnOrEmptiesItself) {
  // Capacity 10: keep columns of length 1 at scattered offsets so that no gap holds a block of 3.
  const CsrMatrix A = rows_of({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 2});
  ColumnPool pool;
  pool.reset(10);
  std::vector<index_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  pool.place(all, A);  // offsets 0..9
  const std::vector<index_t> keep{0, 2, 4, 6, 8, 1};  // gaps at 3, 5, 7, 9 (length 1 each)
  pool.place(keep, A);
  // Four new columns of length 1: no contiguous gap of 4, so one per gap.
  const std::vector<index_t> ws{0, 2, 4, 6, 8, 1, 3, 5, 7, 9};
  const auto p = pool.place(ws, A);
  EXPECT_FALSE(p.contiguous);
  EXPECT_FALSE(p.emptied);
  EXPECT_EQ(p.fresh.size(), 4u);
  expect_disjoint_and_inside(p, 10);
  // A column of 3 when only gaps of 1 exist (kept: 0 2 4 6 8 and 1 -> offsets 0,2,4,6,8,1): empty and re-place.
  const std::vector<index_t> ws3{0, 2, 4, 6, 8, 10};  // 5 + 3 = 8 <= 10
  pool.place(std::vector<index_t>{0, 2, 4, 6, 8}, A);
  const auto q = pool.place(ws3, A);
  EXPECT_TRUE(q.emptied);
  EXPECT_EQ(q.fresh.size(), ws3.size());
  EXPECT_TRUE(q.contiguous);
  expect_disjoint_and_inside(q, 10);
}

TEST(ColumnPool, ManyRandomSwapsNeverOverlap) {
  std::vector<int> lens;
  SplitMix64 rng(7);
  for (int i = 0; i < 200; ++i) lens.push_back(1 + int(rng.below(20)));
  const CsrMatrix A = rows_of(lens);
  ColumnPool pool;
  pool.reset(800);
  std::vector<index_t> ids(200);
  std::iota(ids.begin(), ids.end(), 0);
  std::map<index_t, ColumnPool::Range> where;
  for (int round = 0; round < 300; ++round) {
    shuffle(std::span<index_t>(ids), rng);
    std::vector<index_t> ws;
    std::int64_t nnz = 0;
    for (index_t i : ids)
      if (nnz + lens[i] <= 700) ws.push_back(i), nnz += lens[i];
    const auto p = pool.place(ws, A);
    expect_disjoint_and_inside(p, 800);
    std::set<std::size_t> fresh(p.fresh.begin(), p.fresh.end());
    for (std::size_t k = 0; k < ws.size(); ++k) {
      EXPECT_EQ(p.slots[k].len, lens[ws[k]]);
      // copied exactly when it was not resident (every column travels when the pool was emptied)
      if (!p.emptied)
        EXPECT_EQ(fresh.count(k) == 1, where.count(ws[k]) == 0) << "column " << ws[k] << " in round " << round;
      if (!fresh.count(k) && where.count(ws[k])) {
        EXPECT_EQ(p.slots[k].offset, where[ws[k]].offset) << "a resident column moved";
      }
    }
    where.clear();
    for (std::size_t k = 0; k < ws.size(); ++k) where[ws[k]] = p.slots[k];
  }
  // After reset() nothing is resident: the last working set travels again, whole.
  std::vector<index_t> last;
  for (const auto& [i, r] : where) last.push_back(i);
  pool.reset(800);
  EXPECT_TRUE(pool.empty());
  const auto again = pool.place(last, A);
  EXPECT_EQ(again.fresh.size(), last.size());
  EXPECT_EQ(pool.resident_count(), last.size());
}

TEST(ColumnPool, RefusesAWorkingSetOverItsCapacity) {
  const CsrMatrix A = rows_of({4, 4, 4});
  ColumnPool pool;
  pool.reset(10);
  try {
    pool.place(std::vector<index_t>{0, 1, 2}, A);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "working set of 12 nonzeros exceeds the device's column pool of 10 nonzeros");
  }
}
