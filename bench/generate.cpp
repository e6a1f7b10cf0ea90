// SPDX-License-Identifier: Apache-2.0
// hetglm-generate: synthetic data sets for benchmarks at sizes we cannot download, written as libsvm.
//
//   hetglm-generate dense  OUT --rows N --cols D [--noise P] [--task classification|regression] [--seed S]
//   hetglm-generate sparse OUT --rows N --cols D --nnz-per-row K [--zipf S] [--noise P] [--task ...] [--seed S]
//   (--model-seed M: seed of the planted model, default --seed; a test set uses the training set's M and
//    another --seed)
//
// dense (epsilon-like; PASCAL large-scale challenge "epsilon"): x_ij ~ N(0, 1/D), so ||x_i|| ~ 1; a planted
//   model w* ~ N(0, 1)^D; classification y_i = sign(x_i.w*) flipped with probability --noise (label noise);
//   regression y_i = x_i.w* + N(0, noise^2).
// sparse (text-like, rcv1/news20-like): row i has K_i ~ 1 + Poisson(K - 1) distinct features drawn from a
//   Zipf law P(j) ~ 1/(j+1)^s over the D features (frequent words have small indices), tf-idf-like positive
//   values (1 + Exp(1)) * log(D / (j + 1) + 1), then every row scaled to unit Euclidean norm (as rcv1.binary
//   and news20.binary); labels from a planted model as for dense.
// The random stream is splitmix64 (rng.hpp) with our own Box-Muller and inversion samplers, so a seed gives
// the same file on every platform and compiler. Files are written atomically by hetglm::write_libsvm.
// Exit codes: 0 written, 2 bad arguments (the message names the option), 1 the file cannot be written.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/rng.hpp"

using namespace hetglm;

namespace {

struct Args {
  std::string kind;
  std::string out;
  std::int64_t rows = 10000;
  std::int64_t cols = 100;
  double nnz_per_row = 50;
  double zipf = 1.1;
  double noise = 0.05;
  std::string task = "classification";
  std::uint64_t seed = 1;
  std::uint64_t model_seed = 0;  ///< 0 = same as seed; a test set shares the training set's model_seed
};

/// Uniform double in (0, 1).
double uniform(SplitMix64& r) { return (static_cast<double>(r.next() >> 11) + 0.5) * 0x1.0p-53; }

/// Standard normal by Box-Muller (one of the pair; simple and portable).
double normal(SplitMix64& r) {
  const double u1 = uniform(r), u2 = uniform(r);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

/// Poisson(mean) by inversion (mean up to a few thousand; falls back to a rounded normal above 500).
std::int64_t poisson(SplitMix64& r, double mean) {
  if (mean <= 0) return 0;
  if (mean > 500) return std::max<std::int64_t>(0, std::llround(mean + std::sqrt(mean) * normal(r)));
  double p = std::exp(-mean), s = p, u = uniform(r);
  std::int64_t k = 0;
  while (u > s && k < 100000) {
    ++k;
    p *= mean / static_cast<double>(k);
    s += p;
  }
  return k;
}

void check(const Args& a) {
  if (a.kind != "dense" && a.kind != "sparse")
    throw InvalidArgument(fmt::format("KIND must be dense or sparse, not '{}'", a.kind));
  if (a.rows < 1 || a.rows > 2147483647) throw InvalidArgument(fmt::format("--rows must be in [1, 2^31-1], not {}", a.rows));
  if (a.cols < 1 || a.cols > 2147483646) throw InvalidArgument(fmt::format("--cols must be in [1, 2^31-2], not {}", a.cols));
  if (a.kind == "dense" && static_cast<double>(a.rows) * static_cast<double>(a.cols) > 4e9)
    throw InvalidArgument(fmt::format("--rows x --cols = {} nonzeros is too large for a dense set (limit 4e9)",
                                      static_cast<double>(a.rows) * static_cast<double>(a.cols)));
  if (!(a.nnz_per_row >= 1) || a.nnz_per_row > static_cast<double>(a.cols))
    throw InvalidArgument(fmt::format("--nnz-per-row must be in [1, --cols = {}], not {}", a.cols, a.nnz_per_row));
  if (!(a.zipf >= 0) || a.zipf > 10) throw InvalidArgument(fmt::format("--zipf must be in [0, 10], not {}", a.zipf));
  if (a.task != "classification" && a.task != "regression")
    throw InvalidArgument(fmt::format("--task must be classification or regression, not '{}'", a.task));
  if (!(a.noise >= 0) || (a.task == "classification" && a.noise > 0.5))
    throw InvalidArgument(fmt::format("--noise must be in [0, 0.5] for classification (a flip probability) and >= 0 "
                                      "for regression (a standard deviation), not {}", a.noise));
}

/// The planted model w* ~ N(0, 1)^d, from its own stream (--model-seed) so train and test sets can share it.
std::vector<double> planted(const Args& a, std::size_t d) {
  SplitMix64 r((a.model_seed ? a.model_seed : a.seed) ^ 0x5DEECE66DULL);
  std::vector<double> w(d);
  for (double& x : w) x = normal(r);
  return w;
}

double label(SplitMix64& r, double margin, const Args& a) {
  if (a.task == "regression") return margin + a.noise * normal(r);
  double y = margin >= 0 ? 1.0 : -1.0;
  if (uniform(r) < a.noise) y = -y;
  return y;
}

Dataset dense(const Args& a) {
  SplitMix64 r(a.seed);
  const auto d = static_cast<std::size_t>(a.cols);
  std::vector<double> w = planted(a, d);
  Dataset data;
  CsrMatrix& X = data.X;
  X.n_rows = static_cast<index_t>(a.rows);
  X.n_cols = static_cast<index_t>(a.cols);
  X.offsets.resize(static_cast<std::size_t>(a.rows) + 1);
  X.indices.resize(static_cast<std::size_t>(a.rows) * d);
  X.values.resize(X.indices.size());
  data.y.resize(static_cast<std::size_t>(a.rows));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * d;
    double margin = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const float x = static_cast<float>(normal(r) * scale);
      X.indices[base + j] = static_cast<index_t>(j);
      X.values[base + j] = x;
      margin += double(x) * w[j];
    }
    X.offsets[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(base + d);
    data.y[static_cast<std::size_t>(i)] = label(r, margin, a);
  }
  return data;
}

Dataset sparse(const Args& a) {
  SplitMix64 r(a.seed);
  const auto d = static_cast<std::size_t>(a.cols);
  // Zipf CDF over features.
  std::vector<double> cdf(d);
  double s = 0;
  for (std::size_t j = 0; j < d; ++j) cdf[j] = (s += std::pow(static_cast<double>(j + 1), -a.zipf));
  for (double& c : cdf) c /= s;
  std::vector<double> w = planted(a, d);
  Dataset data;
  CsrMatrix& X = data.X;
  X.n_rows = static_cast<index_t>(a.rows);
  X.n_cols = static_cast<index_t>(a.cols);
  X.offsets.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  X.indices.reserve(static_cast<std::size_t>(static_cast<double>(a.rows) * a.nnz_per_row * 1.05));
  X.values.reserve(X.indices.capacity());
  data.y.resize(static_cast<std::size_t>(a.rows));
  std::vector<index_t> row;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const auto k = static_cast<std::size_t>(
        std::min<std::int64_t>(a.cols, 1 + poisson(r, a.nnz_per_row - 1)));
    row.clear();
    // Distinct Zipf draws; when the row needs most of the features, rejection is slow, so cap the tries and
    // fill the rest uniformly among the unused ones.
    std::size_t tries = 0;
    while (row.size() < k && tries < 20 * k) {
      ++tries;
      const auto j = static_cast<index_t>(std::lower_bound(cdf.begin(), cdf.end(), uniform(r)) - cdf.begin());
      const index_t jj = std::min<index_t>(j, static_cast<index_t>(d - 1));
      if (std::find(row.begin(), row.end(), jj) == row.end()) row.push_back(jj);
    }
    for (index_t j = 0; row.size() < k && j < static_cast<index_t>(d); ++j)
      if (std::find(row.begin(), row.end(), j) == row.end()) row.push_back(j);
    std::sort(row.begin(), row.end());
    const std::size_t start = X.values.size();
    double norm2 = 0;
    for (index_t j : row) {
      const double v = (1.0 + -std::log(uniform(r))) * std::log(static_cast<double>(d) / (j + 1.0) + 1.0);
      X.indices.push_back(j);
      X.values.push_back(static_cast<float>(v));
      norm2 += v * v;
    }
    const double inv = 1.0 / std::sqrt(norm2);
    double margin = 0;
    for (std::size_t k2 = start; k2 < X.values.size(); ++k2) {
      X.values[k2] = static_cast<float>(X.values[k2] * inv);
      margin += double(X.values[k2]) * w[static_cast<std::size_t>(X.indices[k2])];
    }
    X.offsets[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(X.values.size());
    data.y[static_cast<std::size_t>(i)] = label(r, margin, a);
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hetglm-generate: synthetic libsvm data sets (dense epsilon-like, sparse text-like) for benchmarks"};
  Args a;
  app.add_option("KIND", a.kind, "dense | sparse")->required();
  app.add_option("OUTPUT", a.out, "libsvm file to write (atomically)")->required();
  app.add_option("--rows", a.rows, "number of samples")->capture_default_str();
  app.add_option("--cols", a.cols, "number of features")->capture_default_str();
  app.add_option("--nnz-per-row", a.nnz_per_row, "sparse: mean nonzeros per row (density = this / cols)")
      ->capture_default_str();
  app.add_option("--zipf", a.zipf, "sparse: Zipf exponent s of feature frequencies")->capture_default_str();
  app.add_option("--noise", a.noise, "label flip probability (classification) or target noise sd (regression)")
      ->capture_default_str();
  app.add_option("--task", a.task, "classification (+1/-1 labels) | regression")->capture_default_str();
  app.add_option("--seed", a.seed, "random seed of the samples")->capture_default_str();
  app.add_option("--model-seed", a.model_seed,
                 "seed of the planted model (default: --seed); give a test set the training set's value");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    check(a);
    const auto t0 = std::chrono::steady_clock::now();
    const Dataset data = a.kind == "dense" ? dense(a) : sparse(a);
    write_libsvm(a.out, data);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%s: %lld x %lld, %lld nonzeros (density %.4g), %s, seed %llu, %.2f s\n", a.out.c_str(),
                 static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                 static_cast<long long>(data.X.nnz()),
                 static_cast<double>(data.X.nnz()) / (static_cast<double>(a.rows) * static_cast<double>(a.cols)),
                 a.task.c_str(), static_cast<unsigned long long>(a.seed), secs);
    return 0;
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "hetglm-generate: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetglm-generate: error: %s\n", e.what());
    return 1;
  }
}
