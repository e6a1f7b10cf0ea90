// SPDX-License-Identifier: Apache-2.0
// File input and crash-safe output shared by every reader and writer (models, reports, predictions).
#pragma once
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

/// The whole file as bytes (regular files and pipes only; a device such as /dev/zero is refused).
/// Throws IoError "cannot open 'PATH': reason" / "cannot read 'PATH': reason".
std::string read_file(const std::string& path);

/// Write `contents` to `path` atomically (through a symbolic link to its target; a character device such as
/// /dev/null or a pipe is written directly, never replaced; a directory, socket or block device is refused with
/// "not a regular file"): a temporary file "<path>.tmp.XXXXXX" in the same folder, every
/// write checked, fsync, permissions 0644, then rename over `path`. On failure the temporary file is removed,
/// `path` is untouched, and IoError("cannot write 'PATH': reason") is thrown.
void write_file_atomic(const std::string& path, std::string_view contents);

}  // namespace hetglm
