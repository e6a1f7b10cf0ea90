// SPDX-License-Identifier: Apache-2.0
// Small portable random number generation for coordinate orders: splitmix64 (Steele, Lea, Flood,
// OOPSLA 2014) and a Fisher-Yates shuffle with Lemire's unbiased bounded integers. Same sequence on
// every compiler and platform, so a seed reproduces a model byte for byte. GlibcRandom: glibc's rand(), for
// LIBLINEAR's cross-validation folds.
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

/// glibc's rand() (random_r's TYPE_3 additive feedback generator: 31 words seeded by srandom's Park-Miller sequence,
/// then o_i = (r[i-3] + r[i-31] mod 2^32) >> 1 after 310 discarded values), as a value with its own state: the
/// same numbers as `srand(seed); rand(); rand(); ...` on a glibc system, on every platform and without touching the
/// process's global rand() state. Used for LIBLINEAR's cross-validation folds (cross_validation.hpp, FoldKind).
class GlibcRandom {
 public:
  explicit GlibcRandom(std::uint32_t seed = 1) {
    std::int32_t word = static_cast<std::int32_t>(seed == 0 ? 1 : seed);  // srandom_r: seed 0 is seed 1
    r_[0] = static_cast<std::uint32_t>(word);
    for (int i = 1; i < 31; ++i) {  // 16807 * word mod (2^31 - 1) without overflow (Schrage)
      const std::int32_t hi = word / 127773, lo = word % 127773;
      word = 16807 * lo - 2836 * hi;
      if (word < 0) word += 2147483647;
      r_[i] = static_cast<std::uint32_t>(word);
    }
    for (int k = 0; k < 310; ++k) next();
  }
  /// The next value of rand(), in [0, 2^31 - 1]: glibc's random_r, state[f] += state[r], both positions one on.
  int next() {
    r_[front_] += r_[rear_];
    const int v = static_cast<int>(r_[front_] >> 1);
    front_ = front_ == 30 ? 0 : front_ + 1;
    rear_ = rear_ == 30 ? 0 : rear_ + 1;
    return v;
  }

 private:
  std::uint32_t r_[31] = {};
  int front_ = 3, rear_ = 0;  // glibc's fptr = &state[SEP_3], rptr = &state[0]
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
