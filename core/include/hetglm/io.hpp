// SPDX-License-Identifier: Apache-2.0
// File input and crash-safe output shared by every reader and writer (models, reports, predictions).
#pragma once
#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace hetglm {

/// A "should reading stop now?" callback (LibsvmOptions::should_stop, ModelLoadOptions::should_stop): a
/// std::function<bool()> whose copies and destruction are compiled out of line, which keeps GCC's
/// -Wmaybe-uninitialized quiet where options structs fill large aggregate tables. Empty = never stop.
class StopCallback {
 public:
  StopCallback() noexcept;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, StopCallback> &&
                                               std::is_invocable_r_v<bool, F&>>>
  StopCallback(F f) : f_(std::move(f)) {}  // NOLINT: implicit, as std::function
  StopCallback(const StopCallback& o);
  StopCallback(StopCallback&& o) noexcept;
  StopCallback& operator=(const StopCallback& o);
  StopCallback& operator=(StopCallback&& o) noexcept;
  ~StopCallback();
  explicit operator bool() const noexcept { return static_cast<bool>(f_); }
  bool operator()() const { return f_(); }

 private:
  std::function<bool()> f_;
};

/// The whole file as bytes (regular files and pipes only; a device such as /dev/zero is refused), at most
/// `max_bytes` of them (0: what this process can still allocate, memory_limit(), plus what the buffer already
/// holds, looked up at the start and at every doubling of the buffer; no bound when that is unknown). Throws IoError "cannot open 'PATH': reason" /
/// "cannot read 'PATH': reason", MemoryLimitError "'PATH': more than N bytes of text, ..." past the bound (a stream
/// without end, `yes | ...`, grew until the kernel killed the process).
std::string read_file(const std::string& path, std::uint64_t max_bytes = 0);

/// Write `contents` to `path` atomically (through a symbolic link to its target; a character device such as
/// /dev/null or a pipe is written directly, never replaced; a directory, socket or block device is refused with
/// "not a regular file"): a temporary file "<path>.tmp.XXXXXX" in the same folder, every write checked, fsync,
/// the permissions of the file it replaces (a new file: 0666 less the umask), then rename over `path`. On failure
/// the temporary file is removed, `path` is untouched, and IoError("cannot write 'PATH': reason") is thrown.
void write_file_atomic(const std::string& path, std::string_view contents);

/// write_file_atomic in two steps, so that several outputs (a model and its report) are all written before any of
/// them replaces its previous version. stage(): a regular file's contents go to "<path>.tmp.XXXXXX" (every write
/// checked, fsync); a character device or pipe is opened (a pipe without a reader fails here) and written by
/// commit(). commit(): rename over `path` (or write the device). A StagedFile destroyed without commit() removes its
/// temporary file and leaves `path` untouched. Errors: IoError("cannot write 'PATH': reason"), as write_file_atomic.
class StagedFile {
 public:
  static StagedFile stage(const std::string& path, std::string_view contents);
  StagedFile(StagedFile&& o) noexcept;
  StagedFile& operator=(StagedFile&& o) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();
  void commit();

 private:
  StagedFile() = default;
  void discard() noexcept;
  std::string given_, path_, tmp_;  ///< path as given, its target (symbolic links resolved), the temporary file
  std::string contents_;            ///< for a device or pipe: written by commit()
  int fd_ = -1;                     ///< the device or pipe, open for writing
};

/// Fails now, before any work, where an output could not be written later: the folder of a regular file must let a
/// file be created in it (a temporary file is created and removed), a directory, socket or block device is refused,
/// and a character device must open for writing. A pipe is not opened (its reader may come later). Throws IoError
/// with write_file_atomic's message.
void check_writable(const std::string& path);

/// Writes `text` to a diagnostic stream (standard error: progress, warnings, error messages) and ignores a failed
/// write: a reader that has gone (`hetglm train ... 2>&1 | head -1`), a closed or full stream must not end the run
/// or change its exit status (fmt::print throws std::system_error there, which ended the command line in
/// std::terminate). Never throws.
void write_diagnostic(std::FILE* f, std::string_view text) noexcept;
/// fmt::print(stderr, ...) through write_diagnostic. A formatting error (a wrong format string, which fmt checks at
/// compile time) still throws; a write error never does.
template <class... T>
void eprint(fmt::format_string<T...> format, T&&... args) {
  write_diagnostic(stderr, fmt::format(format, std::forward<T>(args)...));
}

}  // namespace hetglm
