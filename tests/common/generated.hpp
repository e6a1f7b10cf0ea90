// SPDX-License-Identifier: Apache-2.0
// Test helper: seeded generated data sets.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "hetglm/dataset.hpp"

namespace hetglm::test {

/// Dense n x d Gaussian features (every row stores all d columns), planted w ~ N(0, 1/d), labels sign(x.w) flipped
/// with probability `flip`. Seeded: the same arguments give the same data.
inline Dataset generated_dense(int n, int d, std::uint64_t seed, double flip = 0.1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> w(static_cast<std::size_t>(d));
  for (double& x : w) x = g(rng) / std::sqrt(double(d));
  Dataset ds;
  ds.X.n_rows = n;
  ds.X.n_cols = d;
  ds.X.offsets.assign(1, 0);
  for (int i = 0; i < n; ++i) {
    double z = 0;
    for (int j = 0; j < d; ++j) {
      const float x = static_cast<float>(g(rng));
      ds.X.indices.push_back(j);
      ds.X.values.push_back(x);
      z += x * w[static_cast<std::size_t>(j)];
    }
    ds.X.offsets.push_back(static_cast<offset_t>(ds.X.indices.size()));
    double y = z >= 0 ? 1.0 : -1.0;
    if (u(rng) < flip) y = -y;
    ds.y.push_back(y);
  }
  ds.source = "generated dense";
  return ds;
}

}  // namespace hetglm::test
