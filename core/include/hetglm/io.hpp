// SPDX-License-Identifier: Apache-2.0
// File input and crash-safe output shared by every reader and writer (models, reports, predictions).
#pragma once
#include <string>
#include <string_view>

namespace hetglm {

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
