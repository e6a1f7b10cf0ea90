// SPDX-License-Identifier: Apache-2.0
// Load a libsvm file, train L2 logistic regression at C = 1 and print the duality-gap certificate.
// Usage: certify FILE [C]
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "hetglm/libsvm.hpp"
#include "hetglm/train.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [C]\n", argv[0]);
    return 2;
  }
  try {
    const hetglm::Dataset data = hetglm::read_libsvm(argv[1], hetglm::LibsvmOptions{});
    hetglm::TrainOptions options;  // defaults: logistic, L2, tol 1e-4 (relative duality gap)
    options.problem.C = argc > 2 ? std::atof(argv[2]) : 1.0;
    options.solver.tol = 1e-6;
    const hetglm::TrainResult result = hetglm::train(data, options);
    const hetglm::Certificate& c = result.columns.at(0).certificate;
    std::printf("%s: %d samples, %d features; %s %s, lambda %.6g\n", argv[1], data.X.n_rows, data.X.n_cols,
                result.model.model.c_str(), result.model.formulation.c_str(), result.lambda);
    std::printf("primal %.10e  dual %.10e  gap %.3e  relative gap %.3e  epochs %d  converged %s\n", c.primal,
                c.dual, c.gap, hetglm::relative_gap(c), result.columns[0].epochs, result.converged ? "yes" : "no");
    return result.converged ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
