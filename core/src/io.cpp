// SPDX-License-Identifier: Apache-2.0
#include "hetglm/io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "hetglm/error.hpp"

namespace hetglm {

namespace {
std::string parent_dir(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
}  // namespace

StopCallback::StopCallback() noexcept = default;
StopCallback::StopCallback(const StopCallback& o) = default;
StopCallback::StopCallback(StopCallback&& o) noexcept = default;
StopCallback& StopCallback::operator=(const StopCallback& o) = default;
StopCallback& StopCallback::operator=(StopCallback&& o) noexcept = default;
StopCallback::~StopCallback() = default;

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(EISDIR)));
  // A device such as /dev/zero never ends: only regular files and pipes (e.g. /dev/stdin) are read.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw IoError(fmt::format("cannot open '{}': not a regular file or pipe", path));
  std::string buf;
  buf.resize(S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 1 << 16);
  std::size_t used = 0;
  for (;;) {
    if (used == buf.size()) buf.resize(buf.size() * 2);
    const ssize_t n = ::read(fd, buf.data() + used, std::min<std::size_t>(buf.size() - used, 1 << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  buf.resize(used);
  return buf;
}

void write_file_atomic(const std::string& path_given, std::string_view contents) {
  // Write through a symbolic link to the file it names, and never replace a device, pipe or socket (the rename
  // would swap a regular file in for, e.g., /dev/null): character devices and pipes are written directly.
  std::string path = path_given;
  struct stat st {};
  if (::lstat(path_given.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path_given.c_str(), nullptr)) {
      path = real;
      std::free(real);
    }
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A character device (/dev/null, a terminal) or a pipe cannot be replaced atomically: write straight into it
    // (a pipe without a reader fails at once instead of blocking). Anything else (directory, socket, block
    // device) is refused.
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw IoError(fmt::format("cannot write '{}': not a regular file", path_given));
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw IoError(fmt::format("cannot write '{}': {}", path_given, std::strerror(errno)));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const char* p = contents.data();
    std::size_t left = contents.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        throw IoError(fmt::format("cannot write '{}': {}", path_given, std::strerror(err)));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    return;
  }
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("cannot write '{}': {}", path_given, std::strerror(errno)));
  const std::string tmp = tmpl;
  bool open = true;
  auto fail = [&](int err) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(fmt::format("cannot write '{}': {}", path_given, std::strerror(err)));
  };
  if (::fchmod(fd, 0644) != 0) fail(errno);
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    if (n == 0) fail(EIO);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  open = false;
  if (::close(fd) != 0) fail(errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno);
  // Make the rename itself durable; best effort (some file systems refuse fsync on a directory).
  const int dir = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

}  // namespace hetglm
