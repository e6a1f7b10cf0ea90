// SPDX-License-Identifier: Apache-2.0
// libsvm / svmlight text format reader and writer.
//
// Grammar of one line (after removing a trailing "\r" and everything from the first '#'):
//   LABEL ( WS "qid:" INT )? ( WS INDEX ":" VALUE )* WS*
// LABEL and VALUE are decimal floating-point numbers (exponent notation allowed, NaN/Inf rejected);
// INDEX is a decimal integer, 1-based by default (0-based with `zero_based`). Blank lines and comment-only
// lines are skipped. `qid:` is accepted and ignored (ranking data trains as ordinary samples). Unsorted
// indices are sorted; duplicates are an error. gzip input is decompressed through zlib as it is read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hetglm/dataset.hpp"
#include "hetglm/io.hpp"
#include "hetglm/memory.hpp"

namespace hetglm {

/// The longest line the reader accepts (bytes before the '\n'); a longer one is the error
/// "FILE:LINE:0: line longer than the limit of 67108864 bytes (64 MiB)" (after any error in its first 64 MiB).
inline constexpr std::size_t kMaxLibsvmLineBytes = std::size_t{64} << 20;

struct LibsvmOptions {
  bool zero_based = false;         ///< indices start at 0 (scikit-learn's dump_svmlight_file default)
  std::int64_t n_features = -1;    ///< >= 0: the number of features; a larger index is an error
  int n_threads = 0;               ///< parser threads; 0 = all cores
  /// Budget in bytes for the data kept while reading (labels and CSR arrays: 16 bytes a row, 8 an entry), checked
  /// after every block: reading stops with MemoryLimitError once it would be exceeded. 0 (the default): automatic,
  /// 90% of what is kept already plus memory_limit() (cgroup limit less usage, or MemAvailable), looked up once
  /// the data pass 32 MiB and again at every doubling; UINT64_MAX: no limit.
  std::uint64_t memory_limit = 0;
  /// How the message names an explicit memory_limit (the CLI: "--memory-limit").
  const char* memory_limit_name = "memory_limit";
  /// Polled before every block and every 100 ms while a pipe or FIFO has no data (also when it has no writer);
  /// returning true stops the read with Interrupted(FILE). Called on the calling thread; empty = never stop.
  StopCallback should_stop;
  /// Keep what float32 rounding drops of each value (CsrMatrix::values_lo, the rules of matrix.hpp's
  /// settle_values_lo): the values are read as float64, `values` holds their float32 rounding as always. Off (the
  /// default): float32 values alone. The command line sets it when it trains at `--tol` below kFloat64Tol, and
  /// always for the data it predicts on (`hetglm predict`, `--test-file`).
  bool float64 = false;
  /// Why float64 is set, for the memory-limit message ("...; the values are kept to double precision (12 bytes a
  /// nonzero instead of 8), <float64_reason>").
  const char* float64_reason = "as a tol below 1e-6 asks";
  /// float64: set to true (never back to false) when the data held a nonzero value below kValuesLoMin, for which
  /// values_lo is left empty (matrix.hpp settle_values_lo); the distributed trainer's ranks agree on it. May be null.
  bool* values_lo_tiny = nullptr;
  /// float64: keep values_lo when the data held a value below kValuesLoMin (`hetglm predict`, `--test-file`): every
  /// other entry is still read to 2^-48 relative, and those values' remainders float32 holds to 2^-149 absolute (a
  /// row of such values alone is no worse off than in float32). Off (training): the whole matrix falls back to its
  /// float32 values, since its certificate would be off by the relative error of those entries.
  bool float64_keep_tiny = false;
  /// Bytes read and parsed per block; 0 = automatic (4 MiB, up to 32 MiB with many threads). A test knob: the
  /// result never depends on it.
  std::size_t block_bytes = 0;
};

/// Read a libsvm file (plain or gzip, detected by content; a regular file or a pipe such as /dev/stdin), parsing
/// while reading: besides the data it keeps, the reader holds one block and one line. Throws IoError if it cannot
/// be read, ParseError ("FILE:LINE:COLUMN: message") on malformed content, MemoryLimitError when the data would
/// outgrow options.memory_limit, Interrupted when options.should_stop says so. n_cols = max(n_features, largest
/// index + 1).
Dataset read_libsvm(const std::string& path, const LibsvmOptions& options = {});

/// The same from a caller's read function: read(buf, n) returns up to n bytes (at least 1), 0 at the end; `name`
/// is used in messages. gzip is detected by content, as for files.
Dataset read_libsvm_stream(const std::function<std::size_t(char*, std::size_t)>& read, const std::string& name,
                           const LibsvmOptions& options = {});

/// Parse libsvm text held in memory; `name` is used in error messages. Same result and errors as read_libsvm.
Dataset parse_libsvm(std::string_view text, const std::string& name, const LibsvmOptions& options = {});

/// Write a data set in libsvm format (1-based unless zero_based), atomically: labels as %.17g, values as the
/// shortest text that reads back to the same float32.
void write_libsvm(const std::string& path, const Dataset& data, bool zero_based = false);

}  // namespace hetglm
