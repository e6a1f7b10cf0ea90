// SPDX-License-Identifier: Apache-2.0
// memory_limit(): cgroup v1/v2 limits less usage, and MemAvailable (memory.hpp).
#include "hetglm/memory.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "hetglm/error.hpp"

namespace hetglm {
namespace {

constexpr std::uint64_t kNoLimitAbove = std::uint64_t{1} << 60;  ///< v1 writes 2^63 - 4096 for "no limit"

/// A small text file (at most 1 MiB), or nothing when it cannot be read.
std::optional<std::string> slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  std::string s;
  char buf[8192];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && s.size() < (1u << 20)) s.append(buf, n);
  std::fclose(f);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// mountinfo escapes blanks and backslashes in paths as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

/// The value of `key` in a "key value" file such as memory.stat.
std::optional<std::uint64_t> stat_value(const std::string& text, std::string_view key) {
  for (std::string_view line : split(text, '\n')) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ')
      return to_u64(line.substr(key.size() + 1));
  }
  return std::nullopt;
}

struct Mount {
  std::string root;   ///< the cgroup path the mount shows at its mount point
  std::string point;  ///< where it is mounted (without the fake root)
};

struct Headroom {
  std::uint64_t bytes = 0;
  std::string source;
};

/// The tightest limit - usage over the cgroup `path` and its ancestors in one hierarchy.
std::optional<Headroom> cgroup_headroom(const std::string& root, const Mount& m, const std::string& path, bool v2) {
  std::string rel = path;
  if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0) rel = rel.substr(m.root.size());
  if (rel.empty() || rel[0] != '/') rel = "/" + rel;
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  const char* limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
  const char* usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
  std::optional<Headroom> best;
  for (std::string level = rel;;) {
    const std::string dir = root + m.point + (level == "/" ? "" : level);
    if (const auto text = slurp(dir + "/" + limit_file)) {
      const auto limit = to_u64(*text);  // "max" (v2) does not parse: no limit at this level
      if (limit && *limit < kNoLimitAbove) {
        std::uint64_t used = 0;
        if (const auto u = slurp(dir + "/" + usage_file); u && to_u64(*u)) used = *to_u64(*u);
        std::uint64_t cache = 0;
        if (const auto st = slurp(dir + "/memory.stat")) {
          cache += stat_value(*st, v2 ? "active_file" : "total_active_file").value_or(0);
          cache += stat_value(*st, v2 ? "inactive_file" : "total_inactive_file").value_or(0);
        }
        used = used > cache ? used - cache : 0;
        const std::uint64_t left = *limit > used ? *limit - used : 1;  // 1: none left (0 would mean unknown)
        if (!best || left < best->bytes) {
          const std::string shown = m.root == "/" ? level : (level == "/" ? m.root : m.root + level);
          best = Headroom{left, fmt::format("cgroup {} of {}: {}, {} in use", limit_file, shown, format_bytes(*limit),
                                            format_bytes(used))};
        }
      }
    }
    if (level == "/") break;
    const std::size_t slash = level.find_last_of('/');
    level = slash == 0 ? "/" : level.substr(0, slash);
  }
  return best;
}

}  // namespace

MemoryLimit memory_limit_at(const std::string& root) {
  // Our cgroups: "0::/path" (v2) and "N:...memory...:/path" (v1).
  std::optional<std::string> v2_path, v1_path;
  if (const auto text = slurp(root + "/proc/self/cgroup")) {
    for (std::string_view line : split(*text, '\n')) {
      const auto f = split(line, ':');
      if (f.size() < 3) continue;
      std::string path(line.substr(f[0].size() + f[1].size() + 2));  // the path may itself hold ':'
      if (f[0] == "0" && f[1].empty()) v2_path = path;
      for (std::string_view c : split(f[1], ','))
        if (c == "memory") v1_path = path;
    }
  }
  // Mount points: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
  std::optional<Mount> v2_mount, v1_mount;
  if (const auto text = slurp(root + "/proc/self/mountinfo")) {
    for (std::string_view line : split(*text, '\n')) {
      const auto f = split(line, ' ');
      std::size_t dash = 0;
      while (dash < f.size() && f[dash] != "-") ++dash;
      if (f.size() < 5 || dash + 3 > f.size()) continue;
      const std::string_view type = f[dash + 1];
      Mount m{unescape(f[3]), unescape(f[4])};
      if (type == "cgroup2" && !v2_mount) v2_mount = m;
      if (type == "cgroup" && !v1_mount)
        for (std::string_view o : split(f[dash + 3], ','))
          if (o == "memory") v1_mount = m;
    }
  } else {
    v2_mount = Mount{"/", "/sys/fs/cgroup"};
    v1_mount = Mount{"/", "/sys/fs/cgroup/memory"};
  }
  std::optional<Headroom> best;
  auto consider = [&best](std::optional<Headroom> h) {
    if (h && (!best || h->bytes < best->bytes)) best = std::move(h);
  };
  if (v2_path && v2_mount) consider(cgroup_headroom(root, *v2_mount, *v2_path, true));
  if (v1_path && v1_mount) consider(cgroup_headroom(root, *v1_mount, *v1_path, false));
  if (const auto text = slurp(root + "/proc/meminfo")) {
    for (std::string_view line : split(*text, '\n')) {
      if (line.substr(0, 13) != "MemAvailable:") continue;
      std::string_view v = trim(line.substr(13));
      if (v.size() > 3 && v.substr(v.size() - 3) == " kB") v.remove_suffix(3);
      if (const auto kb = to_u64(v)) consider(Headroom{std::max<std::uint64_t>(*kb * 1024, 1), "MemAvailable"});
    }
  }
  if (!best) return {};
  return {best->bytes, best->source};
}

MemoryLimit memory_limit() { return memory_limit_at(""); }

std::uint64_t memory_limit_bytes() { return memory_limit().bytes; }

std::uint64_t parse_byte_size(const std::string& text, const std::string& what, const char* expected) {
  auto bad = [&] {
    return InvalidArgument(fmt::format(
        "{}: cannot parse {} ({})", what, quote_token(text),
        expected ? expected
                 : "expected a positive number of bytes with an optional K M G T or Ki Mi Gi Ti suffix, such as 512M "
                   "or 2Gi"));
  };
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  const std::string suffix = text.substr(end);
  auto too_large = [&] {
    return InvalidArgument(fmt::format("{}: {} is too large (at most {} bytes)", what, quote_token(text),
                                       std::numeric_limits<std::uint64_t>::max()));
  };
  auto too_small = [&] {
    return InvalidArgument(fmt::format("{}: must be at least 1 byte, got {} (a limit of no bytes keeps no data)", what,
                                       quote_token(text)));
  };
  // A plain count of bytes is read exactly as an integer (every value up to 2^64 - 1); a fraction must be zeros.
  if (end > 0 && (suffix.empty() || suffix == "B")) {
    const std::size_t dot = std::min(text.find('.'), end);
    if (text.find('.', dot + 1) < end) throw bad();
    if (end == 1 && dot == 0) throw bad();  // "."
    std::uint64_t n = 0;
    if (dot > 0) {
      const auto [p, ec] = std::from_chars(text.data(), text.data() + dot, n);
      if (ec == std::errc::result_out_of_range) throw too_large();
      if (ec != std::errc() || p != text.data() + dot) throw bad();
    }
    if (n == 0) throw too_small();
    if (text.find_first_not_of('0', dot + 1) < end)
      throw InvalidArgument(fmt::format("{}: a number of bytes must be whole, got {}", what, quote_token(text)));
    return n;
  }
  double x = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + end, x, std::chars_format::fixed);
  if (ec == std::errc::result_out_of_range && p == text.data() + end) {  // digits beyond a double's range
    const std::size_t first = text.find_first_not_of("0.");
    throw first < end && first < text.find('.') ? too_large() : too_small();
  }
  if (end == 0 || ec != std::errc() || p != text.data() + end) throw bad();
  static const std::pair<const char*, double> units[] = {
      {"", 1},     {"B", 1},        {"K", 1e3},       {"M", 1e6},         {"G", 1e9},
      {"T", 1e12}, {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
  for (const auto& [name, mult] : units) {
    if (suffix != name) continue;
    const double bytes = std::round(x * mult);
    if (bytes < 1) throw too_small();
    if (!(bytes < 0x1p64)) throw too_large();
    return static_cast<std::uint64_t>(bytes);
  }
  throw bad();
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1000) return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  if (b < 999950) return fmt::format("{:.1f} kB", b / 1e3);
  if (b < 999950000) return fmt::format("{:.1f} MB", b / 1e6);
  if (b < 999950000000) return fmt::format("{:.1f} GB", b / 1e9);
  return fmt::format("{:.1f} TB", b / 1e12);
}

}  // namespace hetglm
