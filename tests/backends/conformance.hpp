// SPDX-License-Identifier: Apache-2.0
// Shared fixtures of the backend conformance tests, the DuHL tests and the FPGA C simulation: small real problems for
// every formulation, the list of backends compiled into this build (each test skips when its device is not present),
// and the reference epoch every backend is compared with (the coordinate kernel of glm_math.h through the forms).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/solvers/dispatch.hpp"
#include "hetglm/solvers/forms.hpp"

namespace hetglm::testing {

/// A model on a slice of real data (the first `rows` rows of data/`file`) at `lambda`, in one formulation.
struct ModelCase {
  const char* model;    ///< --model
  const char* file;
  index_t rows;
  double lambda;
  Formulation formulation;
  const char* penalty = "";  ///< "" = the model's own
  /// A readable test-name suffix: model, penalty when given, formulation.
  std::string name() const {
    std::string n = std::string(model) + (*penalty ? std::string("_") + penalty : "") + "_" +
                    (formulation == Formulation::dual ? "dual" : "primal");
    std::replace(n.begin(), n.end(), '-', '_');
    return n;
  }
};
inline void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name(); }

/// One model on the first `rows` rows of a bundled data set, with its formulation's data ready.
struct TestProblem {
  ModelCase mc{};
  ModelSpec spec;
  Formulation formulation = Formulation::dual;
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

/// The problem of `mc`; classifiers get labels +-1 (the larger label positive).
inline std::unique_ptr<TestProblem> make_problem(const ModelCase& mc) {
  auto p = std::make_unique<TestProblem>();
  p->mc = mc;
  p->spec = model_spec(mc.model, mc.penalty);
  p->formulation = mc.formulation;
  const Dataset& d = bundled(mc.file);
  const index_t rows = std::min(mc.rows, d.X.n_rows);
  CsrMatrix& X = p->X;
  X.n_rows = rows;
  X.n_cols = d.X.n_cols;
  X.offsets.assign(d.X.offsets.begin(), d.X.offsets.begin() + rows + 1);
  X.indices.assign(d.X.indices.begin(), d.X.indices.begin() + X.offsets.back());
  X.values.assign(d.X.values.begin(), d.X.values.begin() + X.offsets.back());
  double ymax = d.y[0];
  for (index_t i = 0; i < rows; ++i) ymax = std::max(ymax, d.y[i]);
  for (index_t i = 0; i < rows; ++i) p->y.push_back(p->spec.classifier ? (d.y[i] == ymax ? 1.0 : -1.0) : d.y[i]);
  p->c.assign(static_cast<std::size_t>(rows), 1.0);
  p->lambda = mc.lambda;
  p->eta = l1_share(p->spec.penalty, 0.5);
  p->pd.X = &p->X;
  if (p->formulation == Formulation::primal) {
    p->Xt = transpose(p->X);
    p->pd.Xt = &p->Xt;
  } else {
    p->pd.row_sq_norm = row_sq_norms(p->X);
  }
  return p;
}

/// Calls fn(form) with the form of `p`: train()'s dispatch (solvers/dispatch.hpp) over the tables of glm_math.h.
template <class F>
auto with_form(const TestProblem& p, F&& fn) {
  return hetglm::with_form(p.spec, p.formulation, [&]<class Form>() {
    if constexpr (Form::formulation == Formulation::dual) {
      return fn(Form(p.pd, p.y.data(), p.c.data(), p.lambda));
    } else {
      return fn(Form(p.pd, p.y.data(), p.c.data(), p.lambda, p.eta));
    }
  });
}

/// A temporary path private to the running test (ctest runs tests of one binary in parallel processes).
inline std::string test_temp_path(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("none");
  for (char& c : name)
    if (c == '/') c = '_';
  return ::testing::TempDir() + "hetglm_" + name + "_" + suffix;
}

/// The epoch conformance models (every backend, tests/backends/, and the FPGA C simulation): every loss in the dual,
/// every smooth loss in the primal, and every penalty.
inline constexpr ModelCase kEpochModels[] = {
    {"logistic", "w7a", 400, 1e-3, Formulation::dual},
    {"svm", "mushrooms", 300, 1e-3, Formulation::dual},
    {"squared-hinge", "a9a", 400, 1e-3, Formulation::dual},
    {"ridge", "housing_scale", 506, 1e-2, Formulation::dual},
    {"ridge", "housing_scale", 506, 1e-2, Formulation::primal},
    {"lasso", "housing_scale", 506, 0.05, Formulation::primal},
    {"elastic-net", "housing_scale", 506, 0.05, Formulation::primal},
    {"logistic", "w7a", 400, 1e-2, Formulation::primal},
    {"squared-hinge", "a9a", 400, 1e-2, Formulation::primal},
    {"logistic", "a9a", 400, 1e-2, Formulation::primal, "l1"},
};
/// The models of the DuHL optimum tests (tests/solvers/test_duhl.cpp).
inline constexpr ModelCase kDuhlModels[] = {
    {"logistic", "w7a", 600, 1e-3, Formulation::dual},       {"svm", "mushrooms", 300, 1e-2, Formulation::dual},
    {"squared-hinge", "w7a", 600, 1e-3, Formulation::dual},  {"ridge", "housing_scale", 506, 1e-2, Formulation::primal},
    {"lasso", "housing_scale", 506, 0.05, Formulation::primal},
    {"elastic-net", "housing_scale", 506, 0.05, Formulation::primal},
};

/// A backend configuration under test: device string, options, and whether it computes in float32.
struct BackendCase {
  std::string name;  ///< "cpu_double", "cpu_float", "opencl", "fpga_sim", "cuda"
  std::string device;
  BackendOptions options;
  bool float32 = false;
};

inline void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.name; }

/// Every backend configuration compiled into this build (cpu double and float always). A test body calls
/// skip_unless_present(case) first: a device that is compiled in but absent (no GPU, no OpenCL platform) skips.
inline std::vector<BackendCase> backend_cases() {
  std::vector<BackendCase> out;
  out.push_back({"cpu_double", "cpu", {}, false});
  BackendCase f{"cpu_float", "cpu", {}, true};
  f.options.cpu_precision = "float";
  out.push_back(f);
  for (Device d : compiled_devices()) {
    if (d == Device::opencl) out.push_back({"opencl", "opencl", {}, true});
    if (d == Device::fpga_sim) out.push_back({"fpga_sim", "fpga-sim", {}, true});
    if (d == Device::cuda) {
      // The conformance bodies compare exact epochs: the CUDA block code run as one block in the epoch's order.
      BackendCase c{"cuda", "cuda", {}, true};
      c.options.cuda_sequential = true;
      out.push_back(c);
    }
  }
  return out;
}

/// True when the case's device is present on this machine (the cpu stand-in always is).
inline bool device_present(const BackendCase& c) {
  const std::vector<Device> avail = available_devices();
  return std::find(avail.begin(), avail.end(), parse_device(c.device)) != avail.end();
}
#define HETGLM_SKIP_UNLESS_PRESENT(bc) \
  if (!::hetglm::testing::device_present(bc)) GTEST_SKIP() << "device '" << (bc).device << "' is not present here"

/// The reference epoch (backend.hpp): positions in epoch_order(ws.size(), seed, epoch), the form's coordinate kernel
/// (Form::step: glm_math.h hetglm_coordinate_step, the devices' step) from the column's inner product, and the shared
/// vector moved by sigma' delta a_i. alpha is indexed by coordinate.
template <class Form>
void reference_epoch(const Form& form, const std::vector<index_t>& ws, std::vector<double>& alpha,
                     std::vector<double>& v, std::uint64_t seed, int epoch, double sigma) {
  for (std::int32_t p : epoch_order(ws.size(), seed, epoch)) {
    const index_t i = ws[static_cast<std::size_t>(p)];
    const double a_new = form.step(i, alpha[i], form.inner(i, v.data()), sigma);
    const double delta = a_new - alpha[i];
    if (delta == 0) continue;
    alpha[i] = a_new;
    row_axpy(*form.A, i, sigma * delta, v.data());
  }
}

}  // namespace hetglm::testing
