// SPDX-License-Identifier: Apache-2.0
// Streaming input (input.hpp).
#include "input.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hetglm/error.hpp"

namespace hetglm::detail {

std::size_t read_full(ByteReader& r, char* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t k = r.read(buf + got, n - got);
    if (k == 0) break;
    got += k;
  }
  return got;
}

// ------------------------------------------------------------------------------------------------

FileReader::FileReader(const std::string& path, StopCallback stop) : path_(path), stop_(std::move(stop)) {
  // O_NONBLOCK: opening a FIFO that has no writer returns at once instead of blocking where a stop request
  // cannot be seen; reads of a pipe then wait in poll() below.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  int err = 0;
  if (::fstat(fd_, &st) != 0) err = errno;
  else if (S_ISDIR(st.st_mode)) err = EISDIR;
  if (err != 0) {
    ::close(fd_);
    throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(err)));
  }
  // A device such as /dev/zero never ends: only regular files and pipes (e.g. /dev/stdin) are read.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    ::close(fd_);
    throw IoError(fmt::format("cannot open '{}': not a regular file or pipe", path));
  }
  pipe_ = S_ISFIFO(st.st_mode);
  if (!pipe_) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileReader::read(char* buf, std::size_t n) {
  n = std::min<std::size_t>(n, std::size_t{1} << 30);
  if (n == 0) return 0;
  for (;;) {
    if (pipe_) {
      // Linux reports POLLHUP on a FIFO opened without a writer only once a writer has come and gone, so waiting
      // here covers both "no writer yet" and "a writer that does not write"; poll() is never restarted after a
      // signal handler, so Ctrl-C wakes it at once.
      if (stop_ && stop_()) throw Interrupted(path_);
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, 100);
      if (r < 0 && errno != EINTR) throw IoError(fmt::format("cannot read '{}': {}", path_, std::strerror(errno)));
      if (r <= 0) continue;
    }
    const ssize_t got = ::read(fd_, buf, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    throw IoError(fmt::format("cannot read '{}': {}", path_, std::strerror(errno)));
  }
}

std::size_t MemoryReader::read(char* buf, std::size_t n) {
  n = std::min(n, s_.size());
  std::memcpy(buf, s_.data(), n);
  s_.remove_prefix(n);
  return n;
}

// ------------------------------------------------------------------------------------------------

namespace {
constexpr std::size_t kGzipInput = 256 * 1024;
}

GzipReader::GzipReader(ByteReader& src, std::string path, std::string_view first_bytes)
    : src_(src), path_(std::move(path)), in_(std::max(kGzipInput, first_bytes.size())) {
  if (inflateInit2(&zs_, 15 + 16) != Z_OK)
    throw IoError(fmt::format("cannot read '{}': cannot initialise zlib", path_));
  std::memcpy(in_.data(), first_bytes.data(), first_bytes.size());
  zs_.next_in = in_.data();
  zs_.avail_in = static_cast<uInt>(first_bytes.size());
}

GzipReader::~GzipReader() { inflateEnd(&zs_); }

bool GzipReader::refill(std::size_t at_least) {
  if (zs_.avail_in >= at_least) return true;
  if (zs_.avail_in > 0 && zs_.next_in != in_.data()) std::memmove(in_.data(), zs_.next_in, zs_.avail_in);
  zs_.next_in = in_.data();
  while (zs_.avail_in < at_least && !src_end_) {
    const std::size_t got = src_.read(reinterpret_cast<char*>(in_.data()) + zs_.avail_in, in_.size() - zs_.avail_in);
    if (got == 0) src_end_ = true;
    zs_.avail_in += static_cast<uInt>(got);
  }
  return zs_.avail_in >= at_least;
}

std::size_t GzipReader::read(char* out, std::size_t n) {
  n = std::min<std::size_t>(n, std::size_t{1} << 30);  // zlib counts in uInt
  if (done_ || n == 0) return 0;
  auto corrupt = [&](const char* why) {
    return IoError(fmt::format("cannot read '{}': corrupt gzip data ({})", path_, why));
  };
  zs_.next_out = reinterpret_cast<Bytef*>(out);
  zs_.avail_out = static_cast<uInt>(n);
  while (zs_.avail_out == n) {
    if (zs_.avail_in == 0) refill(1);
    const uInt before = zs_.avail_in;
    const int ret = inflate(&zs_, Z_NO_FLUSH);
    compressed_ += before - zs_.avail_in;
    if (ret == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files); anything else after a member is an error.
      if (!refill(2)) {
        if (zs_.avail_in == 0) {
          done_ = true;
          break;
        }
        throw corrupt("trailing garbage");
      }
      if (zs_.next_in[0] != 0x1f || zs_.next_in[1] != 0x8b) throw corrupt("trailing garbage");
      if (inflateReset(&zs_) != Z_OK) throw corrupt("cannot restart");
      continue;
    }
    if (ret == Z_OK) continue;
    if (ret == Z_BUF_ERROR) {
      if (zs_.avail_in == 0 && src_end_) throw IoError(fmt::format("cannot read '{}': truncated gzip data", path_));
      continue;  // no progress only for lack of input, which the next pass reads
    }
    if (ret == Z_MEM_ERROR) throw IoError(fmt::format("cannot read '{}': out of memory", path_));
    throw corrupt(zs_.msg ? zs_.msg : "invalid data");
  }
  return n - zs_.avail_out;
}

// ------------------------------------------------------------------------------------------------

const CompressedFormat* compressed_format(std::string_view head) {
  static constexpr CompressedFormat kFormats[] = {{0x1F, 0x8B, "gzip", "gunzip -k"},
                                                  {'B', 'Z', "bzip2", "bunzip2 -k"},
                                                  {0xFD, '7', "xz", "unxz -k"},
                                                  {0x28, 0xB5, "zstd", "unzstd"},
                                                  {'P', 'K', "zip", "unzip"}};
  if (head.size() < 2) return nullptr;
  const auto b0 = static_cast<unsigned char>(head[0]), b1 = static_cast<unsigned char>(head[1]);
  for (const CompressedFormat& f : kFormats)
    if (b0 == f.m0 && b1 == f.m1) return &f;
  return nullptr;
}

TextInput::TextInput(ByteReader& raw, const std::string& path) : raw_(raw) {
  head_n_ = read_full(raw_, head_, 2);
  const auto b0 = static_cast<unsigned char>(head_[0]), b1 = static_cast<unsigned char>(head_[1]);
  if (head_n_ == 2 && b0 == 0x1f && b1 == 0x8b) {
    gz_.emplace(raw_, path, std::string_view(head_, 2));
    return;
  }
  // Other compressors' magic bytes (no libsvm line starts with them): say so instead of the parser's "control
  // character" at 1:1 or 1:2.
  if (const CompressedFormat* f = compressed_format(std::string_view(head_, head_n_)))
    throw IoError(fmt::format("cannot read '{}': {}-compressed data; only gzip is read as it is: decompress it "
                              "first ({})",
                              path, f->name, f->command));
}

std::size_t TextInput::read(char* buf, std::size_t n) {
  if (gz_) return gz_->read(buf, n);
  if (head_pos_ < head_n_ && n > 0) {
    const std::size_t k = std::min(n, head_n_ - head_pos_);
    std::memcpy(buf, head_ + head_pos_, k);
    head_pos_ += k;
    return k;
  }
  return raw_.read(buf, n);
}

// ------------------------------------------------------------------------------------------------

MemoryBudget::MemoryBudget(std::uint64_t bytes, const char* name) : automatic_(bytes == 0) {
  if (!automatic_) {
    limit_ = bytes;
    source_ = name && *name ? name : "the limit given";
  }
}

bool MemoryBudget::fits(std::uint64_t kept) {
  if (automatic_ && kept >= next_check_) {
    const MemoryLimit m = memory_limit();
    if (m.bytes > 0) {  // what is kept already counts as in use: 90% of the memory we could have in all
      limit_ = (kept + m.bytes) / 10 * 9;
      source_ = m.source;
    } else {
      limit_ = UINT64_MAX;
    }
    next_check_ = kept * 2;
  }
  return kept <= limit_;
}

std::uint64_t MemoryBudget::limit_now() {
  if (automatic_) {
    const MemoryLimit m = memory_limit();
    limit_ = m.bytes > 0 ? m.bytes / 10 * 9 : UINT64_MAX;
    source_ = m.source;
    next_check_ = std::max<std::uint64_t>(next_check_, std::uint64_t{32} << 20);
  }
  return limit_;
}

// ------------------------------------------------------------------------------------------------

LineReader::LineReader(std::string_view text) : data_(text), end_(true), total_(text.size()) {}

LineReader::LineReader(ByteReader& src, std::optional<std::uint64_t> total_size, std::size_t block)
    : src_(&src), total_(total_size) {
  if (block > 0) block_ = block;
}

bool LineReader::fill() {
  if (end_) return false;
  if (pos_ > 0) {  // keep only the unread part (at most one line)
    buf_.erase(0, pos_);
    base_ += pos_;
    pos_ = 0;
  }
  const std::size_t have = buf_.size();
  const std::size_t want = std::max(block_, have);  // a long line: grow geometrically
  buf_.resize(have + want);
  const std::size_t got = read_full(*src_, buf_.data() + have, want);
  buf_.resize(have + got);
  if (got < want) end_ = true;
  data_ = buf_;
  return got > 0;
}

LineReader::Status LineReader::next(std::string_view& line, std::size_t max_len) {
  for (;;) {
    const std::size_t avail = data_.size() - pos_;
    const char* start = data_.data() + pos_;
    const std::size_t scan = std::min(avail, max_len + 1);
    const void* nl = scanned_ < scan ? std::memchr(start + scanned_, '\n', scan - scanned_) : nullptr;
    scanned_ = scan;  // no newline before here (when none was found)
    if (nl) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      line = std::string_view(start, len);
      pos_ += len + 1;
      scanned_ = 0;
      terminated_ = true;
      ++number_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return Status::line;
    }
    if (avail > max_len) {
      line = std::string_view(start, max_len);
      pos_ += max_len;
      scanned_ = 0;
      terminated_ = false;
      ++number_;
      return Status::too_long;
    }
    if (end_) {
      if (avail == 0) return Status::end;
      line = std::string_view(start, avail);
      pos_ += avail;
      scanned_ = 0;
      terminated_ = false;
      ++number_;
      if (line.back() == '\r') line.remove_suffix(1);
      return Status::line;
    }
    fill();
  }
}

std::optional<std::uint64_t> LineReader::bytes_left() const {
  if (!total_) return std::nullopt;
  const std::uint64_t at = base_ + pos_;
  return *total_ > at ? *total_ - at : 0;
}

bool LineReader::rest_is_blank() {
  for (;;) {
    const std::string_view rest = data_.substr(pos_);
    if (rest.find_first_not_of(" \t\r\n") != std::string_view::npos) return false;
    pos_ = data_.size();
    scanned_ = 0;
    if (end_) return true;
    fill();
  }
}

}  // namespace hetglm::detail
