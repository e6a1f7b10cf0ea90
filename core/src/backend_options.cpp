// SPDX-License-Identifier: Apache-2.0
// The --accel-memory grammar (backend_options.hpp).
#include "hetglm/backend_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "hetglm/error.hpp"

namespace hetglm {

MemoryBudget parse_memory_budget(const std::string& text) {
  auto bad = [&]() {
    return InvalidArgument(fmt::format(
        "--accel-memory: cannot parse '{}' (expected bytes with an optional K M G Ki Mi Gi suffix, or a percentage "
        "such as 25%)",
        text));
  };
  std::size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  const std::string suffix = text.substr(pos);
  if (!std::isfinite(x)) throw bad();
  static const char* const kSuffixes[] = {"", "B", "K", "M", "G", "Ki", "Mi", "Gi", "%"};
  if (!(x > 0) && std::find(std::begin(kSuffixes), std::end(kSuffixes), suffix) != std::end(kSuffixes))
    throw InvalidArgument(fmt::format(
        "--accel-memory: must be positive, got '{}' (a budget of no bytes holds no coordinate: give bytes such as "
        "64M or a percentage such as 25%, or leave --accel-memory out for the device's own memory)",
        text));
  MemoryBudget b;
  if (suffix == "%") {
    if (x > 100) throw InvalidArgument(fmt::format("--accel-memory: a percentage must be at most 100%, got '{}'", text));
    b.percent = x;
    return b;
  }
  double mult = 1;
  if (suffix.empty() || suffix == "B") mult = 1;
  else if (suffix == "K") mult = 1e3;
  else if (suffix == "M") mult = 1e6;
  else if (suffix == "G") mult = 1e9;
  else if (suffix == "Ki") mult = 1024.0;
  else if (suffix == "Mi") mult = 1024.0 * 1024.0;
  else if (suffix == "Gi") mult = 1024.0 * 1024.0 * 1024.0;
  else throw bad();
  b.bytes = x * mult;
  return b;
}

std::size_t MemoryBudget::resolve(std::size_t total_bytes) const {
  if (percent > 0) return static_cast<std::size_t>(std::ceil(percent / 100.0 * double(total_bytes)));
  if (bytes > 0) return static_cast<std::size_t>(std::llround(bytes));
  return 0;
}

std::size_t parse_memory_size(const std::string& text, std::size_t total_bytes) {
  return parse_memory_budget(text).resolve(total_bytes);
}

}  // namespace hetglm
