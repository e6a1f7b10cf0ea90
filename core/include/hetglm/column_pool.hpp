// SPDX-License-Identifier: Apache-2.0
// The resident-column pool: host-side bookkeeping of which coordinates (rows of the host matrix A: columns of the
// problem, in DuHL's words) live on an accelerator and where, shared by every backend (cpu stand-in, OpenCL, CUDA,
// FPGA). The device keeps one pool of nonzeros (values and indices, `capacity` entries); a resident coordinate
// occupies a contiguous range of it. For a new working set, place() keeps the ranges of the coordinates that stay,
// frees the others, and places the new ones: as one contiguous block in the smallest free range that holds them all
// (one copy), else column by column into the free ranges in offset order, else, when the pool is too fragmented, by
// emptying it (every column travels again, as one block). The free ranges are the complement of the kept ones,
// rebuilt per call (a sort of the kept ranges): no free list is maintained. The backend then only moves bytes: it stages the fresh columns (stage()) and copies them to
// the offsets the plan gives.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hetglm/matrix.hpp"

namespace hetglm {

class ColumnPool {
 public:
  /// Where a coordinate's nonzeros live in the pool.
  struct Range {
    std::int64_t offset = 0;
    std::int64_t len = 0;
  };
  /// What place() decided for a working set `coords`.
  struct Plan {
    std::vector<Range> slots;        ///< per working-set position: its range in the pool
    std::vector<std::size_t> fresh;  ///< working-set positions whose column must be copied, in position order
    std::int64_t fresh_nnz = 0;      ///< nonzeros of the fresh columns
    bool contiguous = false;         ///< the fresh columns, in `fresh` order, fill [block, block + fresh_nnz)
    std::int64_t block = 0;
    bool emptied = false;            ///< the pool was emptied (fragmentation): every column is fresh
  };

  ColumnPool() = default;
  /// An empty pool of `capacity_nnz` nonzeros (forgets every resident coordinate).
  void reset(std::int64_t capacity_nnz);
  std::int64_t capacity() const { return capacity_; }
  bool empty() const { return resident_.empty(); }
  std::size_t resident_count() const { return resident_.size(); }

  /// Make `coords` (distinct rows of A) the resident set; returns where everything lives and what must be copied.
  /// Throws InvalidArgument when the nonzeros of `coords` exceed the capacity.
  Plan place(std::span<const index_t> coords, const CsrMatrix& A);

  /// Copies the fresh columns of `plan` from A, consecutively in `plan.fresh` order, into idx / val (each at least
  /// plan.fresh_nnz entries): the staging area of a contiguous copy, or of per-column copies at plan.slots offsets.
  template <class I, class V>
  static void stage(const Plan& plan, std::span<const index_t> coords, const CsrMatrix& A, I* idx, V* val) {
    std::int64_t at = 0;
    for (std::size_t p : plan.fresh) {
      const index_t i = coords[p];
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k, ++at) {
        idx[at] = static_cast<I>(A.indices[k]);
        val[at] = static_cast<V>(A.values[k]);
      }
    }
  }

  /// The copies a device makes after stage(): send(staging_offset, count, pool_offset) once for a contiguous block,
  /// else once per fresh column (empty columns skipped).
  template <class Send>
  static void for_each_copy(const Plan& plan, Send&& send) {
    if (plan.contiguous) {
      if (plan.fresh_nnz > 0) send(std::int64_t{0}, plan.fresh_nnz, plan.block);
      return;
    }
    std::int64_t from = 0;
    for (std::size_t p : plan.fresh) {
      const Range& r = plan.slots[p];
      if (r.len > 0) send(from, r.len, r.offset);
      from += r.len;
    }
  }

  /// Copies each fresh column of `plan` from A straight to its range of a host-addressable pool (pool_idx, pool_val
  /// of capacity() entries): the cpu stand-in's "device memory".
  template <class I, class V>
  static void copy_to_slots(const Plan& plan, std::span<const index_t> coords, const CsrMatrix& A, I* pool_idx,
                            V* pool_val) {
    for (std::size_t p : plan.fresh) {
      const index_t i = coords[p];
      std::int64_t at = plan.slots[p].offset;
      for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k, ++at) {
        pool_idx[at] = static_cast<I>(A.indices[k]);
        pool_val[at] = static_cast<V>(A.values[k]);
      }
    }
  }

 private:
  std::int64_t capacity_ = 0;
  // Where each coordinate lives, indexed by coordinate (len < 0: not resident; sized to the largest coordinate seen),
  // and the resident coordinates: a lookup per coordinate of the working set without hashing or a map rebuilt per
  // round (the unordered_map it replaced was about 12% of a DuHL round on the host, bench/results/duhl_threads.md).
  std::vector<Range> where_;
  std::vector<index_t> resident_;
  std::vector<std::uint32_t> seen_;  // place()'s stamp: seen_[i] == stamp_ for the coordinates of the working set
  std::uint32_t stamp_ = 0;
};

}  // namespace hetglm
