// SPDX-License-Identifier: Apache-2.0
// Internal: streaming input shared by the libsvm reader and the model loader. Files and pipes are read block by
// block (a pipe with no data is polled every 100 ms so that a stop request is seen even when no writer writes),
// gzip is inflated as it is read, and the memory budget of what a reader keeps is checked as it grows.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetglm/io.hpp"
#include "hetglm/memory.hpp"

namespace hetglm::detail {

/// A source of bytes. read() returns at least one byte, or 0 at the end of the data.
class ByteReader {
 public:
  virtual ~ByteReader() = default;
  virtual std::size_t read(char* buf, std::size_t n) = 0;
};

/// Reads until `n` bytes or the end; returns how many were read (< n only at the end).
std::size_t read_full(ByteReader& r, char* buf, std::size_t n);

/// A compressor's magic bytes (the first two of a file) and the command that undoes it.
struct CompressedFormat {
  unsigned char m0, m1;
  const char *name, *command;
};
/// The compressor whose magic bytes start `head` (gzip, bzip2, xz, zstd, zip), or nullptr: no libsvm line and no
/// model file starts with them, so the readers (gzip aside, which they inflate) and the model loader name such a
/// file instead of parsing its bytes.
const CompressedFormat* compressed_format(std::string_view head);

/// A regular file or a pipe (FIFO, standard input). Opened without blocking, so that opening a FIFO with no writer
/// does not hang; reading a pipe waits in poll() with a 100 ms timeout and calls `stop` (when set) at every wake-up,
/// throwing Interrupted(path) once it returns true. Devices, sockets and directories are refused (IoError
/// "cannot open 'PATH': ...", the messages of read_file).
class FileReader final : public ByteReader {
 public:
  FileReader(const std::string& path, StopCallback stop);
  ~FileReader() override;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  std::size_t read(char* buf, std::size_t n) override;
  /// Size of a regular file; nullopt for a pipe.
  std::optional<std::uint64_t> size() const { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool pipe_ = false;
  std::optional<std::uint64_t> size_;
  StopCallback stop_;
};

/// A caller's read function (read_libsvm_stream).
class FunctionReader final : public ByteReader {
 public:
  explicit FunctionReader(std::function<std::size_t(char*, std::size_t)> f) : f_(std::move(f)) {}
  std::size_t read(char* buf, std::size_t n) override { return n == 0 ? 0 : f_(buf, n); }

 private:
  std::function<std::size_t(char*, std::size_t)> f_;
};

/// Bytes already in memory.
class MemoryReader final : public ByteReader {
 public:
  explicit MemoryReader(std::string_view s) : s_(s) {}
  std::size_t read(char* buf, std::size_t n) override;

 private:
  std::string_view s_;
};

/// gzip data (one or more concatenated members) inflated as it is read. The errors of the former whole-file
/// gunzip: "cannot read 'PATH': truncated gzip data", "... corrupt gzip data (REASON)" (zlib's reason or
/// "trailing garbage"), "... out of memory".
class GzipReader final : public ByteReader {
 public:
  GzipReader(ByteReader& src, std::string path, std::string_view first_bytes);
  ~GzipReader() override;
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;
  std::size_t read(char* out, std::size_t n) override;
  std::uint64_t compressed_bytes() const noexcept { return compressed_; }

 private:
  bool refill(std::size_t at_least);  ///< compacts and reads until `at_least` bytes are buffered; false at the end
  ByteReader& src_;
  std::string path_;
  z_stream zs_{};
  std::vector<unsigned char> in_;
  bool src_end_ = false;
  bool done_ = false;
  std::uint64_t compressed_ = 0;
};

/// Text input: the bytes of `raw`, inflated when they start with the gzip magic bytes 1f 8b (whatever the name).
class TextInput final : public ByteReader {
 public:
  TextInput(ByteReader& raw, const std::string& path);
  std::size_t read(char* buf, std::size_t n) override;
  bool gzip() const noexcept { return gz_.has_value(); }
  std::uint64_t compressed_bytes() const noexcept { return gz_ ? gz_->compressed_bytes() : 0; }

 private:
  ByteReader& raw_;
  std::optional<GzipReader> gz_;
  char head_[2] = {0, 0};
  std::size_t head_n_ = 0, head_pos_ = 0;
};

/// The budget for the bytes a reader keeps. An explicit limit (bytes > 0) is used as given; otherwise the automatic
/// one: evaluated when the data kept first pass 32 MiB and again at every doubling, as 90% of the data kept so far
/// plus memory_limit() (which counts what is already kept as in use). Unlimited when memory_limit() knows nothing.
class MemoryBudget {
 public:
  /// bytes 0: automatic; otherwise that many bytes, named `name` in messages.
  MemoryBudget(std::uint64_t bytes, const char* name);
  /// Whether `kept` bytes fit in the budget.
  bool fits(std::uint64_t kept);
  /// The limit as it stands when nothing is kept yet (looks the automatic one up now); for capping a reservation.
  std::uint64_t limit_now();
  std::uint64_t limit() const noexcept { return limit_; }
  const std::string& source() const noexcept { return source_; }

 private:
  bool automatic_;
  std::uint64_t limit_ = UINT64_MAX;
  std::uint64_t next_check_ = std::uint64_t{32} << 20;
  std::string source_;
};

/// Lines of a text, '\n'-separated, one trailing '\r' removed, a missing final newline accepted; either all in
/// memory or read block by block from a ByteReader with a buffer that holds one line (at most the `max_len` given
/// to next()) and one block.
class LineReader {
 public:
  explicit LineReader(std::string_view text);
  LineReader(ByteReader& src, std::optional<std::uint64_t> total_size, std::size_t block = 0);
  enum class Status { line, too_long, end };
  /// The next line (valid until the next call). too_long: the line has more than max_len bytes; `line` holds its
  /// first max_len bytes.
  Status next(std::string_view& line, std::size_t max_len);
  std::int64_t number() const noexcept { return number_; }  ///< 1-based number of the last line returned
  bool last_line_terminated() const noexcept { return terminated_; }
  std::uint64_t bytes_consumed() const noexcept { return base_ + pos_; }  ///< through the last line returned
  /// Bytes after the last line returned, when known (in memory, or a regular file of known size).
  std::optional<std::uint64_t> bytes_left() const;
  /// Whether everything after the last line returned is blank (spaces, tabs, CR, LF); reads on to find out.
  bool rest_is_blank();

 private:
  bool fill();  ///< reads more into the buffer; false at the end
  ByteReader* src_ = nullptr;
  std::string buf_;
  std::string_view data_;  ///< the text (memory) or buf_[0, have)
  std::size_t pos_ = 0;
  std::size_t scanned_ = 0;  ///< bytes after pos_ known to hold no newline
  bool end_ = false;
  std::optional<std::uint64_t> total_;
  std::uint64_t base_ = 0;  ///< bytes of the stream before data_[0]
  std::int64_t number_ = 0;
  bool terminated_ = true;
  std::size_t block_ = std::size_t{1} << 20;  ///< bytes read at a time
};

}  // namespace hetglm::detail
