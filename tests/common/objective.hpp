// SPDX-License-Identifier: Apache-2.0
// Test helper: the primal objective of a model recomputed independently of the solvers (plain loops, double).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "hetglm/dataset.hpp"
#include "hetglm/model.hpp"

namespace hetglm::test {

/// P(w) = (1/n) sum_i loss(y_i, x_i.w) + lambda R(w) for `m` on `d`, with eta the elastic-net mixing of R.
inline double primal_objective(const LinearModel& m, const Dataset& d, double eta = 0.0) {
  const std::vector<double> dec = decision_function(m, d.X);
  if (m.model == "multinomial") {  // softmax over the nr_class columns: log sum_k exp(z_k) - z_{y_i}
    const std::size_t K = m.labels.size();
    double loss = 0, l2 = 0;
    for (std::size_t i = 0; i < d.y.size(); ++i) {
      const double* z = dec.data() + i * K;
      const double top = *std::max_element(z, z + K);
      double s = 0;
      std::size_t yi = 0;
      for (std::size_t k = 0; k < K; ++k) {
        s += std::exp(z[k] - top);
        if (m.labels[k] == d.y[i]) yi = k;
      }
      loss += top + std::log(s) - z[yi];
    }
    double l1 = 0;
    for (double w : m.w) l1 += std::fabs(w), l2 += w * w;
    const double reg = m.penalty == "l2" ? 0.5 * m.lambda * l2 : m.lambda * (eta * l1 + 0.5 * (1 - eta) * l2);
    return loss / d.y.size() + reg;
  }
  const double pos = m.labels.empty() ? 0 : m.labels[0];
  double loss = 0;
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    const double z = dec[i];
    const double y = m.labels.empty() ? d.y[i] : (d.y[i] == pos ? 1.0 : -1.0);
    if (m.model == "logistic") loss += std::log1p(std::exp(-y * z));
    else if (m.model == "svm") loss += std::max(0.0, 1 - y * z);
    else if (m.model == "squared-hinge") loss += std::pow(std::max(0.0, 1 - y * z), 2);
    else if (m.model == "huber") loss += std::fabs(z - y) <= 1 ? 0.5 * (z - y) * (z - y) : std::fabs(z - y) - 0.5;
    else loss += 0.5 * (z - y) * (z - y);
  }
  double l1 = 0, l2 = 0;
  for (double w : m.w) l1 += std::fabs(w), l2 += w * w;
  const double reg = m.penalty == "l2" ? 0.5 * m.lambda * l2 : m.lambda * (eta * l1 + 0.5 * (1 - eta) * l2);
  return loss / d.y.size() + reg;
}

}  // namespace hetglm::test
