// SPDX-License-Identifier: Apache-2.0
// How much memory this process may still use (cgroup limits and MemAvailable), and byte sizes as text.
// Used by the readers (libsvm.hpp, model.hpp) to stop before what they keep outgrows the machine, and by
// train()'s memory estimate. Details: docs/robustness.md ("Memory limit").
#pragma once
#include <cstdint>
#include <string>

namespace hetglm {

/// A memory budget and where it comes from (for messages).
struct MemoryLimit {
  std::uint64_t bytes = 0;  ///< 0 = unknown or none
  std::string source;       ///< e.g. "cgroup memory.max of /x: 1.5 GB, 20.0 MB in use", "MemAvailable", "--memory-limit"
};

/// The memory this process can still allocate: the smaller of
///  * for its cgroup and every ancestor with a limit (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`; "max" or
///    a value of 2^60 or more is no limit): the limit less the cgroup's usage (`memory.current` /
///    `memory.usage_in_bytes`), not counting the page cache the kernel can reclaim (`active_file` + `inactive_file`
///    of `memory.stat`, `total_*` on v1), and
///  * MemAvailable of /proc/meminfo.
/// bytes = 0 when neither is known. Reads a handful of small files under /proc and /sys (tens of microseconds).
MemoryLimit memory_limit();

/// memory_limit().bytes (0 = unknown): the number to compare a memory estimate with.
std::uint64_t memory_limit_bytes();

/// memory_limit() with every path read below `root` ("" = the real /proc and /sys); for tests on a fake tree
/// holding proc/self/cgroup, proc/self/mountinfo, proc/meminfo and the cgroup files under the mount points that
/// mountinfo names (without mountinfo: sys/fs/cgroup for v2 and sys/fs/cgroup/memory for v1).
MemoryLimit memory_limit_at(const std::string& root);

/// A byte size as given on the command line: a decimal number with an optional suffix B, K M G T (10^3, 10^6, ...)
/// or Ki Mi Gi Ti (2^10, 2^20, ...): "512M", "1.5G", "64Mi", "1000"; a suffixed value is rounded to whole bytes, a
/// plain count must be whole and is read exactly (up to 2^64 - 1). Throws InvalidArgument: "WHAT: cannot parse 'TEXT'
/// (EXPECTED)", "WHAT: must be at least 1 byte, ...", "WHAT: 'TEXT' is too large (at most 18446744073709551615
/// bytes)", "WHAT: a number of bytes must be whole, got 'TEXT'". `expected`: the forms the option takes, for the
/// "cannot parse" message (null: "expected a positive number of bytes with an optional K M G T or Ki Mi Gi Ti suffix,
/// such as 512M or 2Gi").
std::uint64_t parse_byte_size(const std::string& text, const std::string& what, const char* expected = nullptr);

/// 1500000000 -> "1.5 GB", 67108864 -> "67.1 MB", 999 -> "999 bytes" (decimal units, one decimal).
std::string format_bytes(std::uint64_t bytes);

}  // namespace hetglm
