// SPDX-License-Identifier: Apache-2.0
// Error types of hetglm. Every user-facing message is built here or at the throw site, and is stable
// wording: tests assert it exactly.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hetglm {

/// A token as shown in messages: quoted, at most 40 bytes ("..." after), non-printable bytes and the backslash
/// escaped (\xHH, \\) so a message stays one readable line whatever the input holds.
inline std::string quote_token(std::string_view t) {
  constexpr std::size_t kShown = 40;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  const std::size_t n = t.size() < kShown ? t.size() : kShown;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (t.size() > n) out += "...";
  out += '\'';
  return out;
}

/// Base class of every error hetglm throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad argument or option (CLI exit code 2, Python ValueError).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// Malformed input file. what() is "FILE:LINE:COLUMN: MESSAGE"; line and column are 1-based
/// (column 0 when the error concerns the whole line or file).
class ParseError : public Error {
 public:
  ParseError(std::string file, std::int64_t line, std::int64_t column, const std::string& message)
      : Error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
        file_(std::move(file)), line_(line), column_(column), message_(message) {}
  const std::string& file() const noexcept { return file_; }
  std::int64_t line() const noexcept { return line_; }
  std::int64_t column() const noexcept { return column_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  std::int64_t line_, column_;
  std::string message_;
};

/// A file that cannot be opened, read or written (CLI exit code 2 for inputs, 1 for outputs).
class IoError : public Error {
 public:
  using Error::Error;
};

/// Reading stopped because the caller asked it to (LibsvmOptions::should_stop, ModelLoadOptions::should_stop;
/// Ctrl-C in the CLI, exit code 130). what() is "interrupted while reading 'FILE'".
class Interrupted : public Error {
 public:
  explicit Interrupted(std::string file) : Error("interrupted while reading '" + file + "'"), file_(std::move(file)) {}
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

/// What a reader keeps would outgrow the memory limit (memory.hpp): "'FILE': stopped at line L (X read): the data
/// kept would exceed the memory limit of Y (SOURCE)". CLI exit code 2.
class MemoryLimitError : public Error {
 public:
  using Error::Error;
};

/// Training failed (numerical breakdown and the like; CLI exit code 1).
class TrainingError : public Error {
 public:
  using Error::Error;
};

}  // namespace hetglm
