// SPDX-License-Identifier: Apache-2.0
// Small portable random number generation for coordinate orders: splitmix64 (Steele, Lea, Flood,
// OOPSLA 2014) and a Fisher-Yates shuffle with Lemire's unbiased bounded integers. Same sequence on
// every compiler and platform, so a seed reproduces a model byte for byte.
#pragma once
#include <cstdint>
#include <span>

namespace hetglm {

struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform integer in [0, bound), bound > 0 (Lemire 2019, "Fast random integer generation in an interval").
  std::uint64_t below(std::uint64_t bound) {
    __uint128_t m = static_cast<__uint128_t>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
};

/// Fisher-Yates shuffle in place.
template <class T>
void shuffle(std::span<T> items, SplitMix64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = rng.below(i);
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace hetglm
