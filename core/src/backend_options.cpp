// SPDX-License-Identifier: Apache-2.0
// The --accel-memory grammar (backend_options.hpp).
#include "hetglm/backend_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "hetglm/error.hpp"
#include "hetglm/memory.hpp"

namespace hetglm {

void check_link_bandwidth(double gbps) {
  if (!(gbps == 0 || (gbps >= 1e-3 && gbps <= 1e6)))
    throw InvalidArgument(
        fmt::format("--link-bandwidth: must be 0 (no emulated link) or between 0.001 and 1e6 GB/s, got {}", gbps));
}

MemoryBudget parse_memory_budget(const std::string& text) {
  static constexpr const char* kExpected =
      "expected bytes with an optional K M G T Ki Mi Gi Ti suffix, or a percentage such as 25%";
  auto bad = [&]() { return InvalidArgument(fmt::format("--accel-memory: cannot parse '{}' ({})", text, kExpected)); };
  std::size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  const std::string suffix = text.substr(pos);
  if (!std::isfinite(x)) throw bad();
  static const char* const kSuffixes[] = {"", "B", "K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "%"};
  if (!(x > 0) && std::find(std::begin(kSuffixes), std::end(kSuffixes), suffix) != std::end(kSuffixes))
    throw InvalidArgument(fmt::format(
        "--accel-memory: must be positive, got '{}' (a budget of no bytes holds no coordinate: give bytes such as "
        "64M or a percentage such as 25%, or leave --accel-memory out for the device's own memory)",
        text));
  MemoryBudget b;
  b.text = text;
  if (suffix == "%") {
    if (x > 100) throw InvalidArgument(fmt::format("--accel-memory: a percentage must be at most 100%, got '{}'", text));
    b.percent = x;
    return b;
  }
  // Bytes: memory.hpp's parse_byte_size, as --memory-limit reads them (a whole count read exactly, a fraction of a
  // byte refused, "too large" past 2^64 - 1), its "cannot parse" naming this option's forms.
  b.bytes = static_cast<double>(parse_byte_size(text, "--accel-memory", kExpected));
  return b;
}

std::size_t MemoryBudget::resolve(std::size_t total_bytes) const {
  if (percent > 0) return static_cast<std::size_t>(std::ceil(percent / 100.0 * double(total_bytes)));
  if (bytes > 0)
    return bytes >= 0x1p64 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(std::round(bytes));
  return 0;
}

std::size_t parse_memory_size(const std::string& text, std::size_t total_bytes) {
  return parse_memory_budget(text).resolve(total_bytes);
}

}  // namespace hetglm
