// SPDX-License-Identifier: Apache-2.0
#include "hetglm/io.hpp"
#include "hetglm/memory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

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

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
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
  // The buffer never holds more than max_bytes + 1 bytes: filling that many means the text is longer than the bound.
  // Automatic: what can still be allocated plus what the buffer already holds, looked up again at every doubling.
  const bool automatic = max_bytes == 0;
  MemoryLimit avail;
  std::size_t cap = SIZE_MAX;
  std::string buf;
  auto refresh = [&] {
    if (automatic) {
      avail = memory_limit();
      max_bytes = avail.bytes > 0 ? avail.bytes + buf.size() : 0;
    }
    cap = max_bytes > 0 ? static_cast<std::size_t>(max_bytes) + 1 : SIZE_MAX;
  };
  auto too_long = [&] {
    return MemoryLimitError(fmt::format(
        "'{}': more than {} of text, {}{}", path, format_bytes(max_bytes),
        automatic ? "all this process can still allocate" : "the limit given",
        automatic && !avail.source.empty() ? fmt::format(" ({})", avail.source) : std::string()));
  };
  refresh();
  if (S_ISREG(st.st_mode) && max_bytes > 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes) throw too_long();
  buf.resize(std::min(S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1
                                                             : std::size_t{1} << 16,
                      cap));
  std::size_t used = 0;
  for (;;) {
    if (used == buf.size()) {  // full: past the bound once it holds cap bytes, else grown (the bound looked up again)
      if (used >= cap) throw too_long();
      refresh();
      buf.resize(std::min(buf.size() * 2, cap));
    }
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

namespace {
/// The file a path names: through a symbolic link to its target, also a target that does not exist yet (a dangling
/// link was replaced by a regular file, and its target never created; LIBLINEAR's fopen writes through it).
std::string resolve_link(const std::string& path_given) {
  struct stat st {};
  if (::lstat(path_given.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path_given.c_str(), nullptr)) {
      std::string path = real;
      std::free(real);
      return path;
    }
    // Dangling: follow the chain of links by hand (relative targets from their link's folder), at most 40 as the
    // kernel does; a loop or a chain longer than that is left to the write's own error.
    std::filesystem::path p = path_given;
    for (int hop = 0; hop < 40; ++hop) {
      std::error_code ec;
      const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
      if (ec) return p.string();  // no longer a link: the file to create
      p = target.is_absolute() ? target : p.parent_path() / target;
    }
  }
  return path_given;
}

[[noreturn]] void cannot_write(const std::string& path, int err) {
  throw IoError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
}

/// Every byte of `contents` to fd; false (errno set) on failure.
bool write_all(int fd, std::string_view contents) {
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

/// The permissions of a new file: 0666 less the process's umask, as open(2) gives them. The umask is read from
/// /proc/self/status (Linux 4.7 and later) instead of umask(2), which can only be read by changing it, under the
/// feet of other threads; 0644 (umask 022) where it cannot be read.
mode_t new_file_mode() {
  if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(f);
    if (found) return static_cast<mode_t>(0666 & ~mask);
  }
  return 0644;
}

/// A temporary file "<path>.tmp.XXXXXX" next to path with permissions `mode`: its name and descriptor.
std::pair<std::string, int> make_temporary(const std::string& path, const std::string& given, mode_t mode) {
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) cannot_write(given, errno);
  if (::fchmod(fd, mode) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    cannot_write(given, err);
  }
  return {tmpl, fd};
}
}  // namespace

StagedFile StagedFile::stage(const std::string& path_given, std::string_view contents) {
  // Write through a symbolic link to the file it names, and never replace a device, pipe or socket (the rename
  // would swap a regular file in for, e.g., /dev/null): character devices and pipes are written directly.
  StagedFile f;
  f.given_ = path_given;
  f.path_ = resolve_link(path_given);
  struct stat st {};
  const bool exists = ::stat(f.path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    // A character device (/dev/null, a terminal) or a pipe cannot be replaced atomically: it is opened now (a pipe
    // without a reader fails at once instead of blocking) and written by commit(). Anything else (directory,
    // socket, block device) is refused.
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw IoError(fmt::format("cannot write '{}': not a regular file", path_given));
    f.fd_ = ::open(f.path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (f.fd_ < 0 && errno == ENXIO && S_ISFIFO(st.st_mode))  // (strerror says "No such device or address")
      throw IoError(fmt::format("cannot write '{}': a named pipe with no reader (start the reader first)",
                                path_given));
    if (f.fd_ < 0) cannot_write(path_given, errno);
    ::fcntl(f.fd_, F_SETFL, ::fcntl(f.fd_, F_GETFL) & ~O_NONBLOCK);
    f.contents_ = std::string(contents);
    return f;
  }
  // The replacement keeps the permissions of the file it replaces (a model kept private stays private); a new file
  // gets those open(2) would give it.
  const std::pair<std::string, int> made =
      make_temporary(f.path_, path_given, exists ? (st.st_mode & 07777) : new_file_mode());
  const int fd = made.second;
  f.tmp_ = made.first;
  auto fail = [&](int err, bool close_fd) {
    if (close_fd) ::close(fd);
    f.discard();
    cannot_write(path_given, err);
  };
  if (!write_all(fd, contents)) fail(errno, true);
  if (::fsync(fd) != 0) fail(errno, true);
  if (::close(fd) != 0) fail(errno, false);
  return f;
}

StagedFile::StagedFile(StagedFile&& o) noexcept
    : given_(std::move(o.given_)), path_(std::move(o.path_)), tmp_(std::move(o.tmp_)),
      contents_(std::move(o.contents_)), fd_(o.fd_) {
  o.tmp_.clear();
  o.fd_ = -1;
}

StagedFile& StagedFile::operator=(StagedFile&& o) noexcept {
  if (this != &o) {
    discard();
    given_ = std::move(o.given_);
    path_ = std::move(o.path_);
    tmp_ = std::move(o.tmp_);
    contents_ = std::move(o.contents_);
    fd_ = o.fd_;
    o.tmp_.clear();
    o.fd_ = -1;
  }
  return *this;
}

StagedFile::~StagedFile() { discard(); }

void StagedFile::discard() noexcept {
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void StagedFile::commit() {
  if (fd_ >= 0) {
    const bool ok = write_all(fd_, contents_);
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (!ok) cannot_write(given_, err);
    return;
  }
  if (tmp_.empty()) throw IoError(fmt::format("cannot write '{}': already written", given_));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    discard();
    cannot_write(given_, err);
  }
  tmp_.clear();
  // Make the rename itself durable; best effort (some file systems refuse fsync on a directory).
  const int dir = ::open(parent_dir(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  StagedFile::stage(path, contents).commit();
}

void write_diagnostic(std::FILE* f, std::string_view text) noexcept {
  if (!f || text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::clearerr(f);  // ignored: see io.hpp
}

void check_writable(const std::string& path_given) {
  const std::string path = resolve_link(path_given);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISFIFO(st.st_mode)) return;  // its reader may come later; stage() opens it
    if (!S_ISCHR(st.st_mode)) throw IoError(fmt::format("cannot write '{}': not a regular file", path_given));
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) cannot_write(path_given, errno);
    ::close(fd);
    return;
  }
  const std::pair<std::string, int> made = make_temporary(path, path_given, 0600);
  ::close(made.second);
  ::unlink(made.first.c_str());
}

}  // namespace hetglm
