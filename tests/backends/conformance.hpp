// SPDX-License-Identifier: Apache-2.0
// Shared fixtures of the backend conformance tests and the DuHL tests: small real problems for every model, the
// list of backends available in this build, and the reference epoch every backend is compared with.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm::testing {

/// One model on the first `rows` rows of a bundled data set, with its formulation's data ready.
struct TestProblem {
  std::string model;       ///< logistic | svm | squared-hinge | ridge | lasso | elastic-net
  std::string file;
  Formulation formulation = Formulation::dual;
  Loss loss = Loss::squared;
  Penalty penalty = Penalty::l2;
  CsrMatrix X, Xt;
  std::vector<double> y, c;
  ProblemData pd;
  double lambda = 0, eta = 0;
};

inline const Dataset& bundled(const std::string& name) {
  static std::map<std::string, Dataset> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, read_libsvm(std::string(HETGLM_DATA_DIR) + "/" + name)).first;
  return it->second;
}

/// The first `rows` rows of `file`; classifiers get labels +-1 (the larger label positive).
inline std::unique_ptr<TestProblem> make_problem(const std::string& model, const std::string& file, index_t rows,
                                                 double lambda) {
  auto p = std::make_unique<TestProblem>();
  p->model = model;
  p->file = file;
  const Dataset& d = bundled(file);
  rows = std::min(rows, d.X.n_rows);
  CsrMatrix& X = p->X;
  X.n_rows = rows;
  X.n_cols = d.X.n_cols;
  X.offsets.assign(d.X.offsets.begin(), d.X.offsets.begin() + rows + 1);
  X.indices.assign(d.X.indices.begin(), d.X.indices.begin() + X.offsets.back());
  X.values.assign(d.X.values.begin(), d.X.values.begin() + X.offsets.back());
  const bool classifier = model == "logistic" || model == "svm" || model == "squared-hinge";
  double ymax = d.y[0];
  for (index_t i = 0; i < rows; ++i) ymax = std::max(ymax, d.y[i]);
  for (index_t i = 0; i < rows; ++i) p->y.push_back(classifier ? (d.y[i] == ymax ? 1.0 : -1.0) : d.y[i]);
  p->c.assign(static_cast<std::size_t>(rows), 1.0);
  p->lambda = lambda;
  if (model == "logistic") p->loss = Loss::logistic;
  if (model == "svm") p->loss = Loss::hinge;
  if (model == "squared-hinge") p->loss = Loss::squared_hinge;
  if (model == "ridge" || model == "lasso" || model == "elastic-net") p->formulation = Formulation::primal;
  if (model == "lasso") p->penalty = Penalty::l1, p->eta = 1.0;
  if (model == "elastic-net") p->penalty = Penalty::elastic_net, p->eta = 0.5;
  p->pd.X = &p->X;
  if (p->formulation == Formulation::primal) {
    p->Xt = transpose(p->X);
    p->pd.Xt = &p->Xt;
  } else {
    p->pd.row_sq_norm = row_sq_norms(p->X);
  }
  return p;
}

/// Calls fn(form) with the form of `p` (the same dispatch as train()).
template <class F>
auto with_form(const TestProblem& p, F&& fn) {
  if (p.formulation == Formulation::dual) {
    switch (p.loss) {
      case Loss::logistic: return fn(DualForm<Loss::logistic>(p.pd, p.y.data(), p.c.data(), p.lambda));
      case Loss::hinge: return fn(DualForm<Loss::hinge>(p.pd, p.y.data(), p.c.data(), p.lambda));
      case Loss::squared_hinge: return fn(DualForm<Loss::squared_hinge>(p.pd, p.y.data(), p.c.data(), p.lambda));
      default: return fn(DualForm<Loss::squared>(p.pd, p.y.data(), p.c.data(), p.lambda));
    }
  }
  switch (p.penalty) {
    case Penalty::l1: return fn(PrimalForm<Loss::squared, Penalty::l1>(p.pd, p.y.data(), p.c.data(), p.lambda, p.eta));
    case Penalty::elastic_net:
      return fn(PrimalForm<Loss::squared, Penalty::elastic_net>(p.pd, p.y.data(), p.c.data(), p.lambda, p.eta));
    default: return fn(PrimalForm<Loss::squared, Penalty::l2>(p.pd, p.y.data(), p.c.data(), p.lambda, p.eta));
  }
}

/// A temporary path private to the running test (ctest runs tests of one binary in parallel processes).
inline std::string test_temp_path(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("none");
  for (char& c : name)
    if (c == '/') c = '_';
  return ::testing::TempDir() + "hetglm_" + name + "_" + suffix;
}

/// A model on a slice of real data (the first `rows` rows of data/`file`) at `lambda`.
struct ModelCase {
  const char* model;
  const char* file;
  index_t rows;
  double lambda;
};
/// The six models of the epoch conformance tests (every backend, tests/backends/).
inline constexpr ModelCase kEpochModels[] = {
    {"logistic", "w7a", 400, 1e-3},     {"svm", "mushrooms", 300, 1e-3}, {"squared-hinge", "a9a", 400, 1e-3},
    {"ridge", "housing_scale", 506, 1e-2}, {"lasso", "housing_scale", 506, 0.05}, {"elastic-net", "housing_scale", 506, 0.05},
};
/// The six models of the DuHL optimum tests (tests/solvers/test_duhl.cpp).
inline constexpr ModelCase kDuhlModels[] = {
    {"logistic", "w7a", 600, 1e-3},       {"svm", "mushrooms", 300, 1e-2},
    {"squared-hinge", "w7a", 600, 1e-3},  {"ridge", "housing_scale", 506, 1e-2},
    {"lasso", "housing_scale", 506, 0.05}, {"elastic-net", "housing_scale", 506, 0.05},
};

/// A backend configuration under test: device string, options, and whether it computes in float32.
struct BackendCase {
  std::string name;  ///< "cpu-double", "cpu-float", "opencl", "fpga-sim"
  std::string device;
  BackendOptions options;
  bool float32 = false;
};

inline void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.name; }

/// Every backend configuration available in this build and on this machine.
inline std::vector<BackendCase> backend_cases() {
  std::vector<BackendCase> out;
  out.push_back({"cpu-double", "cpu", {}, false});
  BackendCase f{"cpu-float", "cpu", {}, true};
  f.options.cpu_precision = "float";
  out.push_back(f);
  for (Device d : available_devices()) {
    if (d == Device::opencl) out.push_back({"opencl", "opencl", {}, true});
    if (d == Device::fpga_sim) out.push_back({"fpga-sim", "fpga-sim", {}, true});
    // CUDA runs TPA-SCD asynchronously by default; a GPU run of this body needs its sequential mode
    // (docs/cuda.md), which tests/backends/test_cuda_backend.cpp selects.
  }
  return out;
}

/// The reference epoch (backend.hpp): positions in epoch_order(ws.size(), seed, epoch), Form::step from u, and the
/// shared vector moved by sigma' delta a_i. alpha is indexed by coordinate.
template <class Form>
void reference_epoch(const Form& form, const std::vector<index_t>& ws, std::vector<double>& alpha,
                     std::vector<double>& v, std::uint64_t seed, int epoch, double sigma) {
  const CsrMatrix& A = *form.A;
  for (std::int32_t p : epoch_order(ws.size(), seed, epoch)) {
    const index_t i = ws[static_cast<std::size_t>(p)];
    const double a_new = form.step(i, alpha[i], form.u(i, v.data()), sigma);
    const double delta = a_new - alpha[i];
    if (delta == 0) continue;
    alpha[i] = a_new;
    for (offset_t k = A.offsets[i]; k < A.offsets[i + 1]; ++k) v[A.indices[k]] += sigma * delta * double(A.values[k]);
  }
}

}  // namespace hetglm::testing
