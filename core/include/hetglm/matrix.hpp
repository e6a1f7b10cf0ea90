// SPDX-License-Identifier: Apache-2.0
// Compressed sparse matrices. Layout convention, stated once for the whole library:
//   * a CsrMatrix stores `n_rows` compressed vectors ("major" = rows) over `n_cols` minor indices;
//   * row r holds entries offsets[r] .. offsets[r+1]-1 of (indices, values), indices sorted ascending
//     and unique within a row; offsets are 64-bit so nnz above 2^31 is representable; indices are
//     32-bit (checked on construction), values float32;
//   * float64 input keeps what float32 rounding drops in `values_lo` (empty otherwise): the stored value of entry k
//     is then double(values[k]) + double(values_lo[k]), within 2^-48 relative of the input. Every kernel reads
//     `values` (the float32 matrix); the primal Newton solver also reads `values_lo` where its fixed point and its
//     certificate are decided (docs/formulation.md, "float64 data").
// A CSC matrix is the CsrMatrix of the transpose (`transpose()`): the columns of X become its rows.
// Samples are rows of X; in the dual (SDCA) the coordinates are rows of X, in the primal they are the
// rows of X^T (columns of X).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hetglm {

using index_t = std::int32_t;   ///< feature / sample index (checked against overflow)
using offset_t = std::int64_t;  ///< position in the nonzero arrays

/// std::allocator whose value-initialisation is default-initialisation: `resize(n)` of a vector of numbers leaves
/// the new elements indeterminate instead of zero-filling them on one thread. For the nonzero arrays, which every
/// producer fills completely right after sizing them, often in parallel (the first touch of their pages then happens
/// in the threads that fill them: a 50,000 x 500 dense array converts in half the time). `resize(n, value)`,
/// `assign(n, value)` and construction from values initialise as usual.
///
/// Arrays of at least kHugeArrayBytes are placed on 2 MiB boundaries and marked for transparent huge pages
/// (madvise MADV_HUGEPAGE, Linux): a 400,000 x 100 dense array's conversion writes 320 MB of fresh memory, and with
/// 4 KiB pages its 80,000 page faults were most of the conversion's time. Values and layout are unchanged.
namespace detail {
inline constexpr std::size_t kHugeArrayBytes = std::size_t{16} << 20;
void* allocate_huge_array(std::size_t bytes);             // throws std::bad_alloc
void deallocate_huge_array(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    if (n * sizeof(T) >= detail::kHugeArrayBytes) return static_cast<T*>(detail::allocate_huge_array(n * sizeof(T)));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= detail::kHugeArrayBytes) return detail::deallocate_huge_array(p, n * sizeof(T));
    std::allocator<T>::deallocate(p, n);
  }
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// A std::vector whose resize(n) does not zero-fill (DefaultInitAllocator): the nonzero arrays of CsrMatrix.
template <class T>
using FillVector = std::vector<T, DefaultInitAllocator<T>>;

struct CsrMatrix {
  index_t n_rows = 0;
  index_t n_cols = 0;
  std::vector<offset_t> offsets{0};  ///< size n_rows + 1, offsets[0] = 0
  FillVector<index_t> indices;       ///< size nnz, column of each entry (resize(n) leaves it unset: fill it)
  FillVector<float> values;          ///< size nnz (resize(n) leaves it unset: fill it)
  FillVector<float> values_lo;       ///< empty, or size nnz: float64 input's x - double(float(x)), rounded to float32

  bool has_lo() const noexcept { return !values_lo.empty(); }

  offset_t nnz() const noexcept { return offsets.empty() ? 0 : offsets.back(); }
  std::span<const index_t> row_indices(index_t r) const noexcept {
    return {indices.data() + offsets[r], static_cast<std::size_t>(offsets[r + 1] - offsets[r])};
  }
  std::span<const float> row_values(index_t r) const noexcept {
    return {values.data() + offsets[r], static_cast<std::size_t>(offsets[r + 1] - offsets[r])};
  }
};

/// Transpose (CSR of X -> CSR of X^T, i.e. the CSC view of X). Sorted indices stay sorted.
CsrMatrix transpose(const CsrMatrix& a);

/// Squared Euclidean norm of every row, accumulated in double (rows in parallel; the same bits for any thread count).
std::vector<double> row_sq_norms(const CsrMatrix& a);

/// Copy of `a` with a constant column of value `bias` appended (LIBLINEAR's -B); bias < 0: plain copy.
CsrMatrix with_bias_column(const CsrMatrix& a, double bias);

/// The rows `rows` of `a`, in that order, as a new matrix with the same n_cols (cross-validation folds). Throws
/// InvalidArgument for a row outside [0, n_rows).
CsrMatrix select_rows(const CsrMatrix& a, std::span<const index_t> rows);

/// Below this magnitude a float64 value's remainder is not a normal float32 (it would lose bits): a matrix holding a
/// nonzero value smaller than this keeps no values_lo at all (its float32 values alone, as float32 input).
inline constexpr double kValuesLoMin = 0x1p-100;

/// The values_lo entry of float64 value x: x - double(float(x)) (exact in double), rounded to float32.
inline float values_lo_of(double x) noexcept { return static_cast<float>(x - double(static_cast<float>(x))); }
/// x is a nonzero value below kValuesLoMin, whose remainder float32 cannot hold.
inline bool values_lo_loses_bits(double x) noexcept { return x != 0 && (x < 0 ? -x : x) < kValuesLoMin; }

/// The rule that ends every fill of a.values_lo: empties it when the source held a value that values_lo_loses_bits
/// (`tiny`) or when every entry is 0 (float64 input that float32 holds exactly: nothing to keep).
void settle_values_lo(CsrMatrix& a, bool tiny);

/// values_lo of float64 values `x` (nnz of them, the source of a.values) by values_lo_of, in parallel, then
/// settle_values_lo.
void set_values_lo(CsrMatrix& a, const double* x);

/// x_r . w for every row (w.size() >= n_cols; entries beyond w.size() are ignored); with values_lo when present.
void multiply(const CsrMatrix& a, std::span<const double> w, std::span<double> out);

/// Check the structural invariants; throws InvalidArgument naming `what` on violation.
void validate(const CsrMatrix& a, const std::string& what);

}  // namespace hetglm
