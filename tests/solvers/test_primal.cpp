// SPDX-License-Identifier: Apache-2.0
// Primal coordinate descent for the smooth classifiers (issue 9): primal and dual reach the same optimum,
// the primal certificate is exact (gap_sum = gap, P recomputed from the model), L1 / elastic-net logistic and
// squared hinge certify, --formulation auto picks by the work estimate and says why, and the errors are clear.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "../common/generated.hpp"
#include "../common/objective.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/solvers/duhl.hpp"
#include "hetglm/solvers/newton.hpp"
#include "hetglm/solvers/parallel_cpu.hpp"
#include "hetglm/solvers/working_set.hpp"
#include "hetglm/train.hpp"

using namespace hetglm;

namespace {

const Dataset& dataset(const std::string& name) {
  static std::map<std::string, Dataset> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, read_libsvm(std::string(HETGLM_DATA_DIR) + "/" + name)).first;
  return it->second;
}

using test::generated_dense;

const Dataset& dense() {
  static const Dataset d = generated_dense(5000, 100, 42);
  return d;
}

TrainResult fit(const Dataset& d, const std::string& model, const std::string& penalty, double C, double tol,
                const std::string& formulation, double bias = 1, SolverKind solver = SolverKind::sequential) {
  TrainOptions o;
  o.problem.model = model_spec(model);
  o.problem.model = model_spec(o.problem.model.name, penalty);
  o.problem.C = C;
  o.solver.tol = tol;
  o.solver.max_epochs = 20000;
  o.problem.formulation = parse_formulation(formulation);
  o.problem.bias = bias;
  o.solver.solver = solver;
  return train(d, o);
}


/// p (primal) and q (dual), both trained at tol 1e-7, reach the same optimum within 1e-6; each dual value bounds the
/// other's primal (weak duality across formulations); p's certificate is at tol, exact (gap_sum = gap) and its P
/// equals an independent recomputation from the model.
void expect_same_optimum(const TrainResult& p, const TrainResult& q, const Dataset& d) {
  ASSERT_EQ(p.formulation, Formulation::primal);
  ASSERT_EQ(q.formulation, Formulation::dual);
  EXPECT_TRUE(p.converged);
  EXPECT_TRUE(q.converged);
  const Certificate& cp = p.columns.at(0).certificate;
  const Certificate& cq = q.columns.at(0).certificate;
  EXPECT_LE(std::fabs(cp.primal - cq.primal) / cq.primal, 1e-6) << cp.primal << " vs " << cq.primal;
  EXPECT_LE(cp.dual, cq.primal * (1 + 1e-12));
  EXPECT_LE(cq.dual, cp.primal * (1 + 1e-12));
  EXPECT_LE(cp.gap, 1e-7 * cp.primal);
  EXPECT_NEAR(cp.gap_sum, cp.gap, 1e-9 * cp.primal + 1e-14);
  EXPECT_NEAR(test::primal_objective(p.model, d, p.model.l1_ratio), cp.primal, 1e-10 * cp.primal);
  EXPECT_EQ(p.model.formulation, "primal");
}

struct Case {
  std::string data;
  double C;
};

}  // namespace

// Acceptance: for logistic and squared hinge, primal CD and dual SDCA reach the same optimum (relative objective
// difference <= 1e-6), each certified at rel gap 1e-7, with every CPU solver. C is chosen per data set so the
// primal converges in test time: on one-hot data (a9a, mushrooms) the columns are collinear with each other and
// the bias, so primal CD needs ~1/lambda epochs (see the formulation_reason estimate); auto picks dual there.
TEST(PrimalForm, PrimalAndDualReachTheSameOptimum) {
  const std::vector<Case> cases = {{"dense", 1.0}, {"w7a", 1.0}, {"mushrooms", 0.02}, {"a9a", 0.002}};
  for (const Case& k : cases) {
    const Dataset& d = k.data == "dense" ? dense() : dataset(k.data);
    for (const std::string model : {"logistic", "squared-hinge"}) {
      for (SolverKind solver : {SolverKind::sequential, SolverKind::syscd}) {
        SCOPED_TRACE(k.data + " " + model + " C=" + std::to_string(k.C) + " solver " +
                     std::to_string(static_cast<int>(solver)));
        const TrainResult p = fit(d, model, "l2", k.C, 1e-7, "primal", 1, solver);
        const TrainResult q = fit(d, model, "l2", k.C, 1e-7, "dual", 1, solver);
        expect_same_optimum(p, q, d);
        EXPECT_EQ(p.model.solver_type, model == "logistic" ? "L2R_LR" : "L2R_L2LOSS_SVC");
      }
    }
  }
}

// L1 and elastic net for logistic and squared hinge: certified (Lipschitzed gap, B = f(0)/(lambda eta)), exact
// certificate, sparse solution, and the same objective from both CPU solvers. (L1 logistic against LIBLINEAR -s 6
// is a reference case of test_solvers: mushrooms, C = 1.)
TEST(PrimalForm, L1AndElasticNetCertify) {
  const Dataset& d = dense();
  for (const std::string model : {"logistic", "squared-hinge"}) {
    for (const std::string pen : {"l1", "elastic-net"}) {
      SCOPED_TRACE(model + " " + pen);
      const TrainResult r = fit(d, model, pen, 0.01, 1e-7, "auto");
      EXPECT_EQ(r.formulation, Formulation::primal);
      EXPECT_EQ(r.formulation_reason, "penalty " + pen + " has no dual (SDCA) form");
      const Certificate& c = r.columns.at(0).certificate;
      EXPECT_TRUE(r.converged);
      EXPECT_LE(c.gap, 1e-7 * c.primal);
      EXPECT_GE(c.gap, -1e-12);
      EXPECT_NEAR(c.gap_sum, c.gap, 1e-9 * c.primal + 1e-14);
      EXPECT_NEAR(test::primal_objective(r.model, d, r.model.l1_ratio), c.primal, 1e-10 * c.primal);
      int zeros = 0;
      for (double w : r.model.w) zeros += w == 0;
      if (pen == "l1") {
        EXPECT_GT(zeros, 0);
      }
      const TrainResult s = fit(d, model, pen, 0.01, 1e-7, "auto", 1, SolverKind::syscd);
      EXPECT_LE(std::fabs(s.columns.at(0).certificate.primal - c.primal) / c.primal, 1e-6);
    }
  }
  EXPECT_EQ(fit(d, "logistic", "l1", 1, 1e-4, "auto").model.solver_type, "L1R_LR");
  EXPECT_EQ(fit(d, "squared-hinge", "l1", 1, 1e-4, "auto").model.solver_type, "L1R_L2LOSS_SVC");
}

// auto: tall dense data with weak regularization -> primal (the dual needs ~1 + R^2/(4 lambda n) epochs);
// one-hot data (collinear columns) -> dual. The reason names the estimate and the choice.
TEST(PrimalForm, AutoChoosesByEstimatedWork) {
  const TrainResult a = fit(dense(), "logistic", "l2", 1, 1e-4, "auto");
  EXPECT_EQ(a.formulation, Formulation::primal);
  EXPECT_NE(a.formulation_reason.find("chose primal"), std::string::npos) << a.formulation_reason;
  const TrainResult b = fit(dataset("mushrooms"), "logistic", "l2", 1, 1e-4, "auto");
  EXPECT_EQ(b.formulation, Formulation::dual);
  EXPECT_NE(b.formulation_reason.find("chose dual"), std::string::npos) << b.formulation_reason;
  const TrainResult c = fit(dataset("mushrooms"), "svm", "", 1, 1e-4, "auto");
  EXPECT_EQ(c.formulation_reason, "the hinge loss is not smooth: no primal coordinate descent");
  EXPECT_EQ(fit(dense(), "logistic", "l2", 1, 1e-4, "dual").formulation_reason, "requested with --formulation dual");
}

/// scikit-learn's make_classification in miniature: two informative Gaussian features (class means +-1 in each), two
/// redundant ones (fixed linear combinations of the informative: exactly collinear), the rest N(0, 1) noise; labels
/// 0 / 1 as regression targets. Seeded.
Dataset classification_as_regression(int n, int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::bernoulli_distribution coin(0.5);
  Dataset ds;
  ds.X.n_rows = n;
  ds.X.n_cols = d;
  ds.X.offsets.assign(1, 0);
  for (int i = 0; i < n; ++i) {
    const int label = coin(rng) ? 1 : 0;
    const double s = label ? 1.0 : -1.0;
    std::vector<double> x(static_cast<std::size_t>(d));
    for (int j = 0; j < d; ++j) x[j] = g(rng);
    x[0] += s;
    x[1] += s;
    x[2] = 0.7 * x[0] - 0.4 * x[1];
    x[3] = -0.2 * x[0] + 0.9 * x[1];
    for (int j = 0; j < d; ++j) {
      ds.X.indices.push_back(j);
      ds.X.values.push_back(static_cast<float>(x[j]));
    }
    ds.X.offsets.push_back(static_cast<offset_t>(ds.X.indices.size()));
    ds.y.push_back(label);
  }
  ds.source = "classification as regression";
  return ds;
}

/// The trial estimate "<which> ... N epochs" of an auto reason string (NaN if absent).
double trial_epochs(const std::string& reason, const std::string& which) {
  std::smatch m;
  if (std::regex_search(reason, m, std::regex(which + " (?:SDCA|CD) ([0-9.e+]+) epochs"))) return std::stod(m[1]);
  return std::nan("");
}

// Issue 15: ridge on dense data with collinear (redundant) features. The analytic rule estimated ~1/mu primal epochs
// (mu ~ lambda along the collinear directions, which hold no share of the gap) and chose the dual, which needs
// hundreds of epochs where the primal needs a handful. auto now picks primal from trial runs on a row sample, and
// the reason's estimates are within 2x of the epochs the sequential solver then takes in each formulation.
TEST(PrimalForm, AutoRidgeOnCollinearDenseDataIsPrimalAndItsEstimatesHold) {
  const Dataset d = classification_as_regression(10000, 30, 5);
  const TrainResult a = fit(d, "ridge", "", 1, 1e-4, "auto", -1);
  EXPECT_EQ(a.formulation, Formulation::primal) << a.formulation_reason;
  EXPECT_EQ(a.formulation_reason.rfind("auto: 10000 x 30; trial runs of the sequential solver on sampled rows to tol 0.0001: dual SDCA ", 0),
            0u) << a.formulation_reason;
  const double est_dual = trial_epochs(a.formulation_reason, "dual"), est_primal = trial_epochs(a.formulation_reason, "primal");
  const TrainResult q = fit(d, "ridge", "", 1, 1e-4, "dual", -1);
  ASSERT_TRUE(a.converged);
  ASSERT_TRUE(q.converged);
  ASSERT_EQ(q.formulation, Formulation::dual);
  const int primal_epochs = a.columns.at(0).epochs, dual_epochs = q.columns.at(0).epochs;
  if (std::getenv("HETGLM_TEST_VERBOSE"))
    std::printf("%s; primal took %d epochs, dual %d\n", a.formulation_reason.c_str(), primal_epochs, dual_epochs);
  EXPECT_GT(dual_epochs, 10 * primal_epochs);
  EXPECT_LE(est_primal, 2.0 * primal_epochs) << a.formulation_reason;
  EXPECT_GE(est_primal, 0.5 * primal_epochs) << a.formulation_reason;
  EXPECT_LE(est_dual, 2.0 * dual_epochs) << a.formulation_reason << "; dual took " << dual_epochs;
  EXPECT_GE(est_dual, 0.5 * dual_epochs) << a.formulation_reason << "; dual took " << dual_epochs;
}

// Where the dual wins (logistic on a9a: 20 dual trial epochs), the primal's trial stops at the epochs past which it
// cannot win (dual / 2 passes = 10; it ran 177 before, to its work cap, 1.15 s of a 1.7 s DuHL run), and the choice
// and the dual's estimate are unchanged.
TEST(PrimalForm, AutoStopsThePrimalTrialWhereTheDualWins) {
  const TrainResult a = fit(dataset("a9a"), "logistic", "l2", 1, 1e-4, "auto", -1);
  EXPECT_EQ(a.formulation, Formulation::dual) << a.formulation_reason;
  EXPECT_EQ(a.formulation_reason,
            "auto: 32561 x 123; trial runs of the sequential solver on sampled rows to tol 0.0001: dual SDCA 20 epochs "
            "(on 2000 rows) vs primal CD more than 10 epochs (on 8140 rows; the trial stops where the dual wins) x 2 "
            "passes; chose dual");
}

TEST(PrimalForm, ClearErrors) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Dataset& d = dataset("mushrooms");
  EXPECT_EQ(message([&] { fit(d, "svm", "", 1, 1e-4, "primal"); }),
            "--formulation primal: the hinge loss is not smooth, so svm trains in the dual only");
  EXPECT_EQ(message([&] { fit(d, "logistic", "l1", 1, 1e-4, "dual"); }),
            "--formulation dual: penalty l1 of model 'logistic' has no dual (SDCA) form; use primal");
  EXPECT_EQ(message([&] { fit(d, "svm", "l1", 1, 1e-4, "auto"); }),
            "--penalty l1 is not available for --model svm (it uses l2)");
}

// The primal Newton solver (newton.hpp) at the data sets' default C = 1, where coordinate descent alone needs
// thousands of epochs on the one-hot sets: primal (Newton) and dual (sequential SDCA) reach the same optimum within
// 1e-6, the certificate is exact (gap_sum = gap, P recomputed from the model), and weak duality holds across them.
TEST(PrimalNewton, MatchesTheDualAtCEqualsOne) {
  for (const std::string name : {"dense", "w7a", "mushrooms", "a9a"}) {
    const Dataset& d = name == "dense" ? dense() : dataset(name);
    for (const std::string model : {"logistic", "squared-hinge"}) {
      SCOPED_TRACE(name + " " + model);
      const TrainResult p = fit(d, model, "l2", 1, 1e-7, "primal", 1, SolverKind::newton);
      const TrainResult q = fit(d, model, "l2", 1, 1e-7, "dual", 1, SolverKind::sequential);
      EXPECT_EQ(p.solver, SolverKind::newton);
      expect_same_optimum(p, q, d);
      // A Newton solve takes a few dozen iterations at most (one history record each).
      EXPECT_LE(p.columns.at(0).epochs, 40);
      EXPECT_EQ(p.columns.at(0).history.size(), static_cast<std::size_t>(p.columns.at(0).epochs));
    }
  }
}

// L1 and elastic net through the Newton solver's coordinate-descent inner loop (newGLMNET): the same objective as
// the coordinate-descent solvers, certified, sparse.
TEST(PrimalNewton, L1AndElasticNetMatchCoordinateDescent) {
  const Dataset& d = dense();
  for (const std::string model : {"logistic", "squared-hinge"}) {
    for (const std::string pen : {"l1", "elastic-net"}) {
      SCOPED_TRACE(model + " " + pen);
      const TrainResult r = fit(d, model, pen, 0.01, 1e-7, "auto", 1, SolverKind::newton);
      const TrainResult s = fit(d, model, pen, 0.01, 1e-7, "auto", 1, SolverKind::sequential);
      EXPECT_TRUE(r.converged);
      const Certificate& c = r.columns.at(0).certificate;
      EXPECT_LE(c.gap, 1e-7 * c.primal);
      EXPECT_NEAR(c.gap_sum, c.gap, 1e-9 * c.primal + 1e-14);
      EXPECT_NEAR(test::primal_objective(r.model, d, r.model.l1_ratio), c.primal, 1e-10 * c.primal);
      EXPECT_LE(std::fabs(s.columns.at(0).certificate.primal - c.primal) / c.primal, 1e-6);
      if (pen == "l1") {
        int zeros = 0;
        for (double w : r.model.w) zeros += w == 0;
        EXPECT_GT(zeros, 0);
      }
    }
  }
}

// The Gram inner solve of the L1 / elastic-net Newton solver (newton.cpp, step 2b: few features, short rows): on
// mushrooms (112 features) the same objective as sequential coordinate descent; on a9a at C = 100 (lambda = 3.1e-7,
// an ill-conditioned, nearly unregularized model) a certified relative gap of 1e-6 within 30 Newton iterations,
// where 100 column epochs per iteration needed about 2,400 (bench/results/l1_logistic.md).
TEST(PrimalNewton, GramInnerSolveCertifiesIllConditionedL1) {
  const Dataset& m = dataset("mushrooms");
  for (const std::string pen : {"l1", "elastic-net"}) {
    SCOPED_TRACE(pen);
    const TrainResult r = fit(m, "logistic", pen, 1, 1e-8, "auto", -1, SolverKind::newton);
    const TrainResult s = fit(m, "logistic", pen, 1, 1e-8, "auto", -1, SolverKind::sequential);
    ASSERT_TRUE(r.converged);
    const Certificate& c = r.columns.at(0).certificate;
    EXPECT_LE(c.gap, 1e-8 * c.primal);
    EXPECT_NEAR(test::primal_objective(r.model, m, r.model.l1_ratio), c.primal, 1e-10 * c.primal);
    EXPECT_LE(std::fabs(s.columns.at(0).certificate.primal - c.primal) / c.primal, 1e-7);
  }
  const Dataset& a = dataset("a9a");
  const TrainResult r = fit(a, "logistic", "l1", 100, 1e-6, "auto", -1, SolverKind::newton);
  ASSERT_TRUE(r.converged);
  const Certificate& c = r.columns.at(0).certificate;
  EXPECT_LE(c.gap, 1e-6 * c.primal);
  EXPECT_LE(r.columns.at(0).epochs, 30);
  EXPECT_NEAR(test::primal_objective(r.model, a, r.model.l1_ratio), c.primal, 1e-10 * c.primal);
  int zeros = 0;
  for (double w : r.model.w) zeros += w == 0;
  EXPECT_GT(zeros, 0);
}

// Threads never change the Newton solver's result (fixed chunks summed in order; sequential inner loop): bit-identical
// weights and certificates for 1 and 2 threads, on the rows-only L2 path and on the X^T (L1) path.
TEST(PrimalNewton, BitIdenticalForEveryThreadCount) {
  for (const std::string pen : {"l2", "l1"}) {
    SCOPED_TRACE(pen);
    TrainOptions o;
    o.problem.model = model_spec("logistic");
    o.problem.model = model_spec(o.problem.model.name, pen);
    o.problem.C = 1;
    o.solver.tol = 1e-6;
    o.solver.solver = SolverKind::newton;
    o.solver.n_threads = 1;
    const TrainResult a = train(dataset("w7a"), o);
    o.solver.n_threads = 2;
    const TrainResult b = train(dataset("w7a"), o);
    EXPECT_EQ(a.model.w, b.model.w);
    EXPECT_EQ(a.columns[0].certificate.primal, b.columns[0].certificate.primal);
    EXPECT_EQ(a.columns[0].certificate.gap, b.columns[0].certificate.gap);
    EXPECT_EQ(a.columns[0].epochs, b.columns[0].epochs);
  }
}

// The L2 Newton solver keeps the accepted line-search trial's per-sample terms for the next iteration's state
// instead of evaluating them again (run_newton, cache_terms); with an after_epoch hook it evaluates them again (the
// hook may change v). Both must be the same iterations bit for bit, sparse (w7a) and dense rows, for every smooth
// loss, including squared hinge, whose full steps the backtracking shortens.
TEST(PrimalNewton, ReusedLineSearchTermsChangeNoBit) {
  for (const std::string model : {"logistic", "squared-hinge", "ridge"})
    for (const bool dense_rows : {false, true}) {
      SCOPED_TRACE(model + (dense_rows ? " dense" : " w7a"));
      TrainOptions o;
      o.problem.model = model_spec(model);
      o.problem.C = 4;
      o.problem.formulation = parse_formulation("primal");
      o.solver.tol = 1e-10;
      o.solver.solver = SolverKind::newton;
      const Dataset& d = dense_rows ? dense() : dataset("w7a");
      const TrainResult a = train(d, o);
      int hooked = 0;
      o.solver.after_epoch = [&](int, std::span<double>, std::span<double>) { ++hooked; };
      const TrainResult b = train(d, o);
      ASSERT_GE(hooked, 3);  // several steps, each but every 10th followed by a state from the cache
      EXPECT_EQ(a.model.w, b.model.w);
      EXPECT_EQ(a.columns[0].certificate.primal, b.columns[0].certificate.primal);
      EXPECT_EQ(a.columns[0].certificate.gap, b.columns[0].certificate.gap);
      EXPECT_EQ(a.columns[0].epochs, b.columns[0].epochs);
      EXPECT_LE(relative_gap(a.columns[0].certificate), 1e-10);
    }
}

// Dense rows (nnz = n d: the vectorized row kernels, issue 21) and the same matrix with one entry not stored (the
// CSR loops) are one problem: the dense rows store x_00 = 0 explicitly, the other drops it. Both rows-only (L2) and
// X^T (L1: full columns through dense::dot2 / dot3 / axpy) reach the same optimum; threads change nothing on the
// dense path (bit-identical for 1 and 2 threads).
TEST(PrimalNewton, DenseRowsMatchTheSparseLoops) {
  Dataset full = dense();
  full.X.values[0] = 0.0f;
  Dataset holed = full;
  holed.X.indices.erase(holed.X.indices.begin());
  holed.X.values.erase(holed.X.values.begin());
  for (std::size_t i = 1; i < holed.X.offsets.size(); ++i) --holed.X.offsets[i];
  validate(holed.X, "holed");
  ASSERT_EQ(full.X.nnz(), offset_t(full.X.n_rows) * full.X.n_cols);
  for (const std::string pen : {"l2", "l1"}) {
    SCOPED_TRACE(pen);
    TrainOptions o;
    o.problem.model = model_spec("logistic", pen);
    o.problem.C = pen == "l2" ? 1 : 0.01;
    o.problem.bias = -1;
    o.solver.tol = 1e-9;
    o.solver.solver = SolverKind::newton;
    o.solver.n_threads = 1;
    const TrainResult a = train(full, o), b = train(holed, o);
    o.solver.n_threads = 2;
    const TrainResult a2 = train(full, o);
    ASSERT_TRUE(a.converged);
    ASSERT_TRUE(b.converged);
    const Certificate &ca = a.columns.at(0).certificate, &cb = b.columns.at(0).certificate;
    EXPECT_LE(ca.gap, 1e-9 * ca.primal);
    EXPECT_LE(std::fabs(ca.primal - cb.primal) / cb.primal, 1e-9) << ca.primal << " vs " << cb.primal;
    EXPECT_NEAR(test::primal_objective(a.model, full, a.model.l1_ratio), ca.primal, 1e-10 * ca.primal);
    double dw = 0, nw = 0;
    for (std::size_t j = 0; j < a.model.w.size(); ++j) {
      dw = std::max(dw, std::fabs(a.model.w[j] - b.model.w[j]));
      nw = std::max(nw, std::fabs(b.model.w[j]));
    }
    EXPECT_LE(dw, 1e-4 * nw);
    EXPECT_EQ(a.model.w, a2.model.w);
    EXPECT_EQ(ca.primal, a2.columns.at(0).certificate.primal);
    EXPECT_EQ(ca.gap, a2.columns.at(0).certificate.gap);
    // The history counts the passes over the data: at least one per Newton iteration (its derivative pass), and
    // on the L2 path one more per conjugate-gradient product.
    const auto& h = a.columns.at(0).history;
    ASSERT_GE(h.size(), 2u);
    for (std::size_t i = 1; i < h.size(); ++i) EXPECT_GE(h[i].passes, h[i - 1].passes + (pen == "l2" ? 2 : 1));
  }
}

// Coordinate descent on full rows (forms.hpp full_row: every column stored, read by the vectorized dense kernels)
// and on the same data with one entry of every row left out (the entry at column i mod d of row i, a zero in both:
// the index loops, for rows and for the columns of the primal): row_dot and row_axpy agree to rounding, and SDCA
// for the four dual models and primal CD for L2 logistic, sequential and SySCD on 2 threads, certify the same
// optimum at tol 1e-10 (the hinge 1e-5), each certificate's P equal to an independent recomputation from the model.
TEST(CoordinateDescent, FullRowsMatchTheIndexLoops) {
  Dataset full = generated_dense(2000, 40, 7);
  const index_t n = full.X.n_rows, d = full.X.n_cols;
  ASSERT_GE(d, detail::kDenseRowMin);
  Dataset holed = full;
  holed.X.indices.clear();
  holed.X.values.clear();
  holed.X.offsets.assign(1, 0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < d; ++j) {
      float& x = full.X.values[std::size_t(i) * d + j];
      if (j == i % d) {
        x = 0.0f;
        continue;
      }
      holed.X.indices.push_back(j);
      holed.X.values.push_back(x);
    }
    holed.X.offsets.push_back(offset_t(holed.X.indices.size()));
  }
  validate(holed.X, "holed");
  ASSERT_EQ(full.X.nnz(), offset_t(n) * d);
  {
    const std::size_t dn = static_cast<std::size_t>(d);
    std::vector<double> v(dn), a(dn, 0.5), b(dn, 0.5);
    for (index_t j = 0; j < d; ++j) v[j] = std::sin(0.3 * j) - 0.2;
    for (index_t i = 0; i < 50; ++i) {
      ASSERT_TRUE(detail::full_row(full.X, full.X.offsets[i], full.X.offsets[i + 1]));
      ASSERT_FALSE(detail::full_row(holed.X, holed.X.offsets[i], holed.X.offsets[i + 1]));
      const double s = row_dot(full.X, i, v.data()), t = row_dot(holed.X, i, v.data());
      EXPECT_NEAR(s, t, 1e-13 * (1 + std::fabs(t)));
      row_axpy(full.X, i, 0.7, a.data());
      row_axpy(holed.X, i, 0.7, b.data());
    }
    for (index_t j = 0; j < d; ++j) EXPECT_NEAR(a[j], b[j], 1e-13 * (1 + std::fabs(b[j])));
  }
  for (const std::string model : {"logistic", "svm", "squared-hinge", "ridge", "logistic primal"}) {
    for (const SolverKind kind : {SolverKind::sequential, SolverKind::syscd}) {
      SCOPED_TRACE(model + " " + std::string(solver_kind_name(kind)));
      TrainOptions o;
      const bool primal = model == "logistic primal";
      o.problem.model = model_spec(primal ? "logistic" : model, "l2");
      o.problem.formulation = parse_formulation(primal ? "primal" : "dual");
      o.problem.C = 1;
      o.problem.bias = -1;
      // The hinge's gap stalls near 1e-6 relative on such Gaussian sets with 10% flipped labels (full rows and the
      // index loops alike: the same 9.614e-7 on dense 5000 x 100 after 20000 epochs), so it is held to 1e-5.
      const double tol = model == "svm" ? 1e-5 : 1e-10;
      o.solver.tol = tol;
      o.solver.max_epochs = 20000;
      o.solver.solver = kind;
      o.solver.n_threads = kind == SolverKind::sequential ? 1 : 2;
      const TrainResult a = train(full, o), b = train(holed, o);
      ASSERT_TRUE(a.converged);
      ASSERT_TRUE(b.converged);
      const Certificate &ca = a.columns.at(0).certificate, &cb = b.columns.at(0).certificate;
      EXPECT_LE(ca.gap, tol * ca.primal);
      EXPECT_LE(cb.gap, tol * cb.primal);
      EXPECT_LE(std::fabs(ca.primal - cb.primal) / cb.primal, 2 * tol) << ca.primal << " vs " << cb.primal;
      EXPECT_NEAR(test::primal_objective(a.model, full, a.model.l1_ratio), ca.primal, 1e-10 * ca.primal);
      EXPECT_NEAR(test::primal_objective(b.model, holed, b.model.l1_ratio), cb.primal, 1e-10 * cb.primal);
    }
  }
}

/// A binary data set as the Newton solver's two L2 paths see it: labels +-1, unit weights, lambda = 1/n, rows only
/// (no X^T) and with X^T. Not copyable (cols points at its own Xt).
struct TwoPaths {
  std::vector<double> y, c;
  double lambda;
  CsrMatrix Xt;
  ProblemData rows, cols;
  explicit TwoPaths(const Dataset& d)
      : y(d.y.size()), c(d.y.size(), 1.0), lambda(1.0 / d.X.n_rows), Xt(transpose(d.X)) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = d.y[i] > 0 ? 1 : -1;
    rows.X = cols.X = &d.X;
    cols.Xt = &Xt;
  }
  TwoPaths(const TwoPaths&) = delete;
  TwoPaths& operator=(const TwoPaths&) = delete;
};

// The rows-only L2 path (no X^T; newton_rows_only) and the X^T path reach the same optimum.
TEST(PrimalNewton, RowsOnlyAndTransposedPathsAgree) {
  const Dataset& d = dataset("a9a");
  ASSERT_TRUE(newton_rows_only(d.X));
  const TwoPaths p(d);
  const std::vector<double>& y = p.y;
  const std::vector<double>& c = p.c;
  const double lambda = p.lambda;
  const ProblemData &rows = p.rows, &cols = p.cols;
  SolverOptions so;
  so.tol = 1e-9;
  so.max_epochs = 100;
  using F = PrimalForm<Loss::logistic, Penalty::l2>;
  const SolveResult r = solve_primal_newton(F(rows, y.data(), c.data(), lambda, 0.0), d.X, so);
  const SolveResult t = solve_primal_newton(F(cols, y.data(), c.data(), lambda, 0.0), d.X, so);
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(t.converged);
  EXPECT_LE(std::fabs(r.certificate.primal - t.certificate.primal) / t.certificate.primal, 1e-9);
  // The X^T path's certificate: its primal equals the coordinate-descent solvers' certificate code on the same
  // point, its gap is at most that code's (the Newton dual point can only tighten it).
  const Certificate pc = parallel_certificate(F(cols, y.data(), c.data(), lambda, 0.0), t.alpha, shared_vector(
      F(cols, y.data(), c.data(), lambda, 0.0), t.alpha));
  EXPECT_NEAR(pc.primal, t.certificate.primal, 1e-12 * pc.primal);
  EXPECT_LE(t.certificate.gap, pc.gap + 1e-12 * pc.primal);
  EXPECT_GE(t.certificate.gap, 0.0);
  // No X^T for the rows-only path means no L1 there: a clear error instead of a crash.
  using G = PrimalForm<Loss::logistic, Penalty::l1>;
  EXPECT_THROW(solve_primal_newton(G(rows, y.data(), c.data(), lambda, 1.0), d.X, so), InvalidArgument);
}

// The L2 Newton solver's dual point u' = grad f(v) + diag(D) X dir (run_newton, the Newton dual point): at C = 1 on
// dense 5,000 x 100 data its certificate is far tighter than the one from grad f(v) (whose gap is ||grad P||^2 /
// (2 lambda), here more than tol where the Newton one is below it), and it is an honest bound: the reported dual is
// at most the primal of a solve to 1e-12 (weak duality, D <= P* <= P_ref), the reported primal is P(w) recomputed
// by the coordinate-descent solvers' certificate code, and the reported gap is at most that code's gap for the same
// w. Both paths (rows only, with X^T), both smooth losses.
TEST(PrimalNewton, NewtonDualPointIsAnHonestTighterBound) {
  const Dataset& d = dense();
  const TwoPaths p(d);
  const std::vector<double>& y = p.y;
  const std::vector<double>& c = p.c;
  const double lambda = p.lambda;
  const ProblemData &rows = p.rows, &cols = p.cols;
  auto check = [&]<class F>(F) {
    SolverOptions so;
    so.max_epochs = 100;
    so.tol = 1e-12;
    const SolveResult ref = solve_primal_newton(F(cols, y.data(), c.data(), lambda, 0.0), d.X, so);
    ASSERT_TRUE(ref.converged);
    const double p_ref = ref.certificate.primal;
    so.tol = 1e-6;
    int looser = 0;
    for (const ProblemData* pd : {&rows, &cols}) {
      SCOPED_TRACE(pd == &rows ? "rows only" : "with X^T");
      const F form(*pd, y.data(), c.data(), lambda, 0.0);
      const SolveResult r = solve_primal_newton(form, d.X, so);
      const Certificate& rc = r.certificate;
      EXPECT_TRUE(r.converged);
      EXPECT_LE(relative_gap(rc), 1e-6);
      EXPECT_LE(rc.dual, p_ref * (1 + 1e-14));
      EXPECT_GE(rc.primal, p_ref * (1 - 1e-14));
      const F fc(cols, y.data(), c.data(), lambda, 0.0);
      const Certificate pc = parallel_certificate(fc, r.alpha, shared_vector(fc, r.alpha));
      EXPECT_NEAR(pc.primal, rc.primal, 1e-12 * pc.primal);
      EXPECT_LE(rc.gap, pc.gap + 1e-12 * pc.primal);
      EXPECT_GE(rc.dual, pc.dual - 1e-12 * pc.primal);
      looser += relative_gap(pc) > 1e-6;
    }
    EXPECT_GE(looser, 1) << "the certificate from grad f(v) alone already certified: the test shows nothing";
  };
  {
    SCOPED_TRACE("logistic");
    check(PrimalForm<Loss::logistic, Penalty::l2>(cols, y.data(), c.data(), lambda, 0.0));
  }
  {
    SCOPED_TRACE("squared hinge");
    check(PrimalForm<Loss::squared_hinge, Penalty::l2>(cols, y.data(), c.data(), lambda, 0.0));
  }
}

// --solver auto: Newton in the primal for logistic / squared hinge, the estimate and the choice in the reason;
// wide data (d = 50 n) with unit-norm rows, where dual SDCA needs few epochs (bound 1 + L R^2/(lambda n) = 1.25)
// and the Newton solve is costly (sqrt(d/n)) -> dual.
TEST(PrimalNewton, AutoPicksNewtonOrDualByTheEstimate) {
  const TrainResult a = fit(dataset("a9a"), "logistic", "l2", 1, 1e-4, "auto", -1, SolverKind::automatic);
  EXPECT_EQ(a.formulation, Formulation::primal);
  EXPECT_EQ(a.solver, SolverKind::newton);
  EXPECT_EQ(a.formulation_reason,
            "auto: 32561 x 123, 451592 nonzeros; dual SDCA ~6 x (1 + L R^2/(lambda n)) = 26.8 epochs (mean R^2 = "
            "13.87) vs primal Newton ~5 sqrt(max(1, d/n)) = 5 dual-epoch equivalents; chose primal");
  Dataset wide;
  wide.X.n_rows = 2000;
  wide.X.n_cols = 100000;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<index_t> col(0, wide.X.n_cols - 1);
  for (index_t i = 0; i < wide.X.n_rows; ++i) {
    std::set<index_t> cols;
    while (cols.size() < 20) cols.insert(col(rng));
    for (index_t j : cols) {
      wide.X.indices.push_back(j);
      wide.X.values.push_back(float(1 / std::sqrt(20.0)));
    }
    wide.X.offsets.push_back(static_cast<offset_t>(wide.X.indices.size()));
    wide.y.push_back(i % 2 ? 1.0 : -1.0);
  }
  TrainOptions o;
  o.problem.model = model_spec("logistic");
  o.problem.C = 1;
  o.solver.tol = 1e-3;
  o.solver.solver = SolverKind::automatic;
  const TrainResult b = train(wide, o);
  EXPECT_EQ(b.formulation, Formulation::dual);
  EXPECT_EQ(b.solver, SolverKind::syscd);
  EXPECT_EQ(b.formulation_reason,
            "auto: 2000 x 100000, 40000 nonzeros; dual SDCA ~6 x (1 + L R^2/(lambda n)) = 7.5 epochs (mean R^2 = 1) "
            "vs primal Newton ~5 sqrt(max(1, d/n)) = 35.4 dual-epoch equivalents; chose dual");
  o.solver.n_threads = 1;  // auto without Newton: sequential on one thread
  EXPECT_EQ(train(wide, o).solver, SolverKind::sequential);
  // The hinge loss: the sequential solver below kAutoSequentialHingeNnz nonzeros (mushrooms, 170,604), SySCD from
  // there on (10,000 x 100 dense = 10^6 nonzeros).
  o.problem.model = model_spec("svm");
  o.solver.n_threads = 0;
  EXPECT_EQ(train(dataset("mushrooms"), o).solver, SolverKind::sequential);
  const Dataset dense = generated_dense(10000, 100, 7);
  ASSERT_EQ(dense.X.nnz(), kAutoSequentialHingeNnz);
  EXPECT_EQ(train(dense, o).solver, SolverKind::syscd);
  // Ridge: the primal Newton solver (auto_newton_loss), its formulation by the same estimate.
  o.problem.model = model_spec("ridge");
  o.problem.C.reset();
  const TrainResult r = train(dataset("housing_scale"), o);
  EXPECT_EQ(r.solver, SolverKind::newton);
  EXPECT_EQ(r.formulation, Formulation::primal);
  EXPECT_EQ(r.formulation_reason,
            "auto: 506 x 13, 6578 nonzeros; dual SDCA ~6 x (1 + L R^2/(lambda n)) = 46.6 epochs (mean R^2 = 6.767) "
            "vs primal Newton ~5 sqrt(max(1, d/n)) = 5 dual-epoch equivalents; chose primal");
  EXPECT_TRUE(r.converged);
}

TEST(PrimalNewton, ClearErrors) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Dataset& d = dataset("mushrooms");
  EXPECT_EQ(message([&] { fit(d, "svm", "", 1, 1e-4, "auto", 1, SolverKind::newton); }),
            "--solver newton: the hinge loss (svm) is not smooth, so it has no Newton step; use --solver syscd or "
            "sequential (dual SDCA)");
  EXPECT_EQ(message([&] { fit(d, "logistic", "l2", 1, 1e-4, "dual", 1, SolverKind::newton); }),
            "--solver newton: runs the primal formulation only; drop --formulation dual or choose --solver sequential "
            "or syscd");
  TrainOptions o;
  o.solver.solver = SolverKind::newton;
  o.device.accel_memory = parse_memory_budget("50%");
  EXPECT_EQ(message([&] { train(d, o); }),
            "--solver newton: runs on the CPU only; DuHL on --device cpu trains by coordinate descent (drop --solver "
            "newton)");
  SolverOptions so;
  so.solver = SolverKind::newton;
  ProblemData pd;
  pd.X = &d.X;
  pd.row_sq_norm = row_sq_norms(d.X);
  std::vector<double> y(d.y.size(), 1.0), c(d.y.size(), 1.0);
  EXPECT_EQ(message([&] { solve_parallel_cpu(DualForm<Loss::logistic>(pd, y.data(), c.data(), 0.1), so); }),
            "solve_parallel_cpu: solver 'newton' is not a parallel coordinate-descent solver (train() runs newton with "
            "solve_primal_newton and resolves auto)");
}

// The primal serves every solver: sequential, SySCD, PASSCoDe (atomic) and DuHL on the cpu stand-in (25% budget)
// run primal coordinate descent and reach the Newton solver's optimum within 1e-6 (issue 9's "every solver").
TEST(PrimalNewton, EverySolverReachesTheNewtonOptimumInThePrimal) {
  const Dataset& d = dense();
  for (const std::string model : {"logistic", "squared-hinge"}) {
    const TrainResult ref = fit(d, model, "l2", 1, 1e-9, "primal", 1, SolverKind::newton);
    ASSERT_TRUE(ref.converged);
    const double P = ref.columns.at(0).certificate.primal;
    for (SolverKind s : {SolverKind::sequential, SolverKind::syscd, SolverKind::passcode_atomic}) {
      SCOPED_TRACE(model + " " + std::string(solver_kind_name(s)));
      const TrainResult r = fit(d, model, "l2", 1, 1e-8, "primal", 1, s);
      EXPECT_TRUE(r.converged);
      EXPECT_EQ(r.formulation, Formulation::primal);
      EXPECT_LE(std::fabs(r.columns.at(0).certificate.primal - P) / P, 1e-6);
    }
    SCOPED_TRACE(model + " duhl");
    TrainOptions o;
    o.solver.solver = SolverKind::sequential;  // the sequential reference (the library default is auto)
    o.problem.model = model_spec(model);
    o.problem.C = 1;
    o.problem.bias = 1;
    o.solver.tol = 1e-8;
    o.problem.formulation = parse_formulation("primal");
    o.device.accel_memory = parse_memory_budget("25%");
    const TrainResult r = train(d, o);
    EXPECT_EQ(r.solver, SolverKind::automatic);  // DuHL ran
    EXPECT_FALSE(r.columns.at(0).rounds.empty());
    EXPECT_TRUE(r.converged);
    EXPECT_LE(std::fabs(r.columns.at(0).certificate.primal - P) / P, 1e-6);
  }
}

// A negative gap beyond the tolerance is not a certificate: one sample weighted 1e15 on heart_scale makes the
// dual SDCA's objective values lose ~1e-4 of relative precision (P - D < -tol |P|), and the fit then reports not
// converged (forms.hpp certified()) instead of passing as "gap <= tol"; the Newton solver certifies it.
TEST(PrimalNewton, NegativeGapBeyondTheToleranceIsNotConverged) {
  const Dataset& d = dataset("heart_scale");
  TrainOptions o;
  o.problem.model = model_spec("logistic");
  o.problem.C = 1;
  o.solver.tol = 1e-6;
  o.problem.bias = 1;
  o.problem.sample_weight.assign(d.y.size(), 1.0);
  o.problem.sample_weight[0] = 1e15;
  o.solver.solver = SolverKind::sequential;  // dual SDCA: its objective values lose the precision
  o.problem.formulation = FormulationRequest::dual;  // (auto's trial runs see that the dual does not certify here)
  const TrainResult r = train(d, o);
  const Certificate& c = r.columns.at(0).certificate;
  EXPECT_LT(c.gap, -o.solver.tol * std::fabs(c.primal)) << c.primal << " " << c.dual;
  EXPECT_FALSE(r.converged);
  o.solver.solver = SolverKind::newton;  // the primal Newton solver certifies this one honestly
  o.problem.formulation = FormulationRequest::automatic;
  const TrainResult t = train(d, o);
  EXPECT_TRUE(t.converged);
  EXPECT_GE(t.columns.at(0).certificate.gap, 0.0);
  const Certificate neg{1.0, 1.0 + 2e-6, -2e-6, -2e-6};
  EXPECT_FALSE(certified(neg, 1e-6));
  EXPECT_TRUE(certified(neg, 1e-5));
  EXPECT_TRUE(certified(Certificate{1.0, 1.0 + 1e-17, -1e-17, 0}, 1e-12));
}

namespace {

/// A float64 data set (Gaussian features with column scales e^N(0, 1/4), labels of a planted w flipped with
/// probability 10%, seeded) as the engine stores float64 input: float32 values plus values_lo (matrix.hpp), and
/// the float64 values themselves row-major in `x`. holes: every other entry of a row left out (CSR loops).
struct Float64Data {
  Dataset d;
  std::vector<double> x;  // the stored entries in CSR order
  Float64Data(int n, int dim, bool holes, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> scale(dim), w(dim);
    for (double& s : scale) s = std::exp(0.5 * g(rng));
    for (double& v : w) v = g(rng) / std::sqrt(double(dim));
    d.X.n_rows = n;
    d.X.n_cols = dim;
    d.X.offsets.assign(1, 0);
    for (int i = 0; i < n; ++i) {
      double z = 0;
      for (int j = 0; j < dim; ++j) {
        const double v = g(rng) * scale[j];
        if (holes && (i + j) % 2 == 0) continue;
        d.X.indices.push_back(j);
        d.X.values.push_back(static_cast<float>(v));
        x.push_back(v);
        z += v * w[j];
      }
      d.X.offsets.push_back(static_cast<offset_t>(d.X.indices.size()));
      d.y.push_back((z >= 0) != (u(rng) < 0.1) ? 1.0 : -1.0);
    }
    set_values_lo(d.X, x.data());
  }
  /// The float64 matrix, dense (Eigen).
  Eigen::MatrixXd dense() const {
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(d.X.n_rows, d.X.n_cols);
    for (index_t i = 0; i < d.X.n_rows; ++i)
      for (offset_t k = d.X.offsets[i]; k < d.X.offsets[i + 1]; ++k) m(i, d.X.indices[k]) = x[std::size_t(k)];
    return m;
  }
};

/// L2 logistic P(w) = (1/n) sum log(1 + exp(-y_i x_i.w)) + lambda/2 ||w||^2 on the float64 matrix, and its minimizer
/// by Newton's method with the exact Hessian (Eigen LDLT) until the step stops changing w.
double logistic_objective(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, double lambda, const Eigen::VectorXd& w) {
  const Eigen::ArrayXd m = -(y.array() * (X * w).array());
  const Eigen::ArrayXd l = m.max(0.0) + (-m.abs()).exp().log1p();
  return l.mean() + 0.5 * lambda * w.squaredNorm();
}
Eigen::VectorXd logistic_optimum(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, double lambda) {
  const double n = double(X.rows());
  Eigen::VectorXd w = Eigen::VectorXd::Zero(X.cols());
  for (int it = 0; it < 50; ++it) {
    const Eigen::ArrayXd z = y.array() * (X * w).array();
    const Eigen::ArrayXd sg = 1.0 / (1.0 + z.exp());  // sigma(-y z)
    const Eigen::VectorXd grad = X.transpose() * (-(y.array() * sg)).matrix() / n + lambda * w;
    const Eigen::VectorXd D = (sg * (1.0 - sg)).matrix() / n;
    const Eigen::MatrixXd Hm =
        X.transpose() * D.asDiagonal() * X + lambda * Eigen::MatrixXd::Identity(X.cols(), X.cols());
    const Eigen::VectorXd step = Hm.ldlt().solve(grad);
    w -= step;
    if (step.lpNorm<Eigen::Infinity>() <= 1e-17 * w.lpNorm<Eigen::Infinity>()) break;
  }
  return w;
}

}  // namespace

// float64 input (matrix.hpp values_lo): the Newton solver's fixed point and certificate are the float64 problem's.
/// Float64Data and the same data as float32 alone, each with its X^T and a ProblemData over both (dual forms: the row
/// norms of the float32 values).
struct Float64Pair {
  Float64Data f;
  Dataset f32;
  CsrMatrix Xt64, Xt32;
  ProblemData p64, p32;
  Float64Pair(int n, int dim, bool holes, std::uint64_t seed) : f(n, dim, holes, seed), f32(f.d) {
    f32.X.values_lo.clear();
    Xt64 = transpose(f.d.X);
    Xt32 = transpose(f32.X);
    p64.X = &f.d.X;
    p64.Xt = &Xt64;
    p32.X = &f32.X;
    p32.Xt = &Xt32;
    p64.row_sq_norm = p32.row_sq_norm = row_sq_norms(f32.X);
  }
  Float64Pair(const Float64Pair&) = delete;
  Float64Pair& operator=(const Float64Pair&) = delete;
};

// On dense rows (the vectorized kernels) and on CSR rows, rows-only and with X^T, L2 logistic at tol 1e-13: the
// certificate's primal is P(w) on the float64 values, P(w) is within 1e-13 of the float64 optimum P* (Newton with
// the exact Hessian in Eigen) and its dual at most P* (an honest lower bound, up to the reference's rounding). The
// same solve on the float32 matrix alone certifies its own objective, which differs from P on the float64 values by
// more than 1e-10.
TEST(PrimalNewton, Float64ValuesReachTheFloat64Optimum) {
  for (const bool holes : {false, true}) {
    SCOPED_TRACE(holes ? "CSR rows" : "dense rows");
    const Float64Data f(3000, 30, holes, 7);
    ASSERT_TRUE(f.d.X.has_lo());
    Dataset f32 = f.d;
    f32.X.values_lo.clear();
    const Eigen::MatrixXd X = f.dense();
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(f.d.y.data(), Eigen::Index(f.d.y.size()));
    const TwoPaths p64(f.d), p32(f32);
    ASSERT_TRUE(p64.Xt.has_lo());
    const double lambda = 1e-2;
    const Eigen::VectorXd ws = logistic_optimum(X, y, lambda);
    const double Ps = logistic_objective(X, y, lambda, ws), wmax = ws.lpNorm<Eigen::Infinity>();
    SolverOptions so;
    so.tol = 1e-13;
    so.max_epochs = 100;
    using F = PrimalForm<Loss::logistic, Penalty::l2>;
    for (const bool rows : {true, false}) {
      SCOPED_TRACE(rows ? "rows only" : "with X^T");
      const TwoPaths& q = p64;
      const SolveResult r =
          solve_primal_newton(F(rows ? q.rows : q.cols, q.y.data(), q.c.data(), lambda, 0.0), f.d.X, so);
      const SolveResult t = solve_primal_newton(F(rows ? p32.rows : p32.cols, p32.y.data(), p32.c.data(), lambda, 0.0),
                                                f32.X, so);
      EXPECT_TRUE(r.converged);
      EXPECT_LE(r.certificate.gap, 1e-13 * r.certificate.primal);
      const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(r.alpha.data(), Eigen::Index(r.alpha.size()));
      const Eigen::VectorXd w32 = Eigen::Map<const Eigen::VectorXd>(t.alpha.data(), Eigen::Index(t.alpha.size()));
      // The certificate is about the float64 problem: its primal is P(w) on the float64 values, P(w) is within the
      // tolerance (plus rounding) of P*, and its dual is at most P* (weak duality, up to rounding).
      EXPECT_NEAR(r.certificate.primal, logistic_objective(X, y, lambda, w), 1e-14 * Ps);
      EXPECT_LE(logistic_objective(X, y, lambda, w) - Ps, 1e-13 * Ps);
      EXPECT_LE(r.certificate.dual, Ps * (1 + 1e-14));
      // What values_lo changes: the float32 matrix's certificate speaks of another objective, off from P(w) on the
      // float64 values at first order in the rounding (measured 2.5e-10 to 8.3e-10 relative here).
      EXPECT_GE(std::fabs(t.certificate.primal - logistic_objective(X, y, lambda, w32)), 1e-10 * Ps);
      EXPECT_LE((w - ws).lpNorm<Eigen::Infinity>(), 1e-7 * wmax);
      // At kFloat64Tol and looser the float64 values serve nothing: the solver reads the float32 values alone.
      SolverOptions loose = so;
      loose.tol = kFloat64Tol;
      EXPECT_EQ(solve_primal_newton(F(rows ? q.rows : q.cols, q.y.data(), q.c.data(), lambda, 0.0), f.d.X, loose).alpha,
                solve_primal_newton(F(rows ? p32.rows : p32.cols, p32.y.data(), p32.c.data(), lambda, 0.0), f32.X,
                                    loose).alpha);
    }
  }
}

// bias_column (train.hpp): without a bias, a matrix given up by the caller is moved, not copied (the distributed
// trainer's ranks hand theirs over: a copy of the whole local matrix, 2 s of a 25 s run on 2,000,000 x 100,000); with a
// bias, or from a matrix the caller keeps, the bias column is appended to a copy; values_lo follows when asked for.
TEST(BiasColumn, MovesWithoutABiasAndAppendsOtherwise) {
  const Float64Data f(40, 6, true, 3);
  CsrMatrix x = f.d.X;
  const float* values = x.values.data();
  const CsrMatrix moved = bias_column(std::move(x), -1, false);
  EXPECT_EQ(moved.values.data(), values);
  EXPECT_EQ(moved.n_cols, 6);
  EXPECT_EQ(moved.values_lo, f.d.X.values_lo);
  const CsrMatrix kept = bias_column(f.d.X, -1, false);
  EXPECT_NE(kept.values.data(), f.d.X.values.data());
  EXPECT_EQ(kept.values, f.d.X.values);
  CsrMatrix y = f.d.X;
  y.values_lo.clear();
  const CsrMatrix b = bias_column(std::move(y), 0.1, true);
  ASSERT_EQ(b.n_cols, 7);
  ASSERT_EQ(b.values_lo.size(), b.values.size());
  EXPECT_EQ(b.indices[b.offsets[1] - 1], 6);
  EXPECT_NEAR(double(b.values[b.offsets[1] - 1]) + double(b.values_lo[b.offsets[1] - 1]), 0.1, 0x1p-48 * 0.1);
  EXPECT_EQ(b.values_lo[0], 0.0f);
}

// values_lo travels with every copy of the matrix (transpose, select_rows, with_bias_column) and is read by
// multiply and decision_function; set_values_lo keeps nothing for float64 values that float32 holds exactly.
TEST(Float64Values, CarriedByTheMatrixFunctions) {
  const Float64Data f(40, 6, true, 3);
  const CsrMatrix& X = f.d.X;
  const CsrMatrix t = transpose(X), tt = transpose(t);
  EXPECT_EQ(tt.values_lo, X.values_lo);
  EXPECT_EQ(tt.values, X.values);
  const std::vector<index_t> rows = {5, 0, 17};
  const CsrMatrix s = select_rows(X, rows);
  ASSERT_EQ(s.values_lo.size(), s.values.size());
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (offset_t p = s.offsets[k], q = X.offsets[rows[k]]; p < s.offsets[k + 1]; ++p, ++q)
      EXPECT_EQ(double(s.values[p]) + double(s.values_lo[p]), double(X.values[q]) + double(X.values_lo[q]));
  const CsrMatrix b = with_bias_column(X, 0.1);
  ASSERT_EQ(b.values_lo.size(), b.values.size());
  EXPECT_NEAR(double(b.values[b.offsets[1] - 1]) + double(b.values_lo[b.offsets[1] - 1]), 0.1, 0x1p-48 * 0.1);
  std::vector<double> w(6), out(40), out32(40);
  for (int j = 0; j < 6; ++j) w[j] = 1.0 / (j + 3.0);
  multiply(X, w, out);
  CsrMatrix x32 = X;
  x32.values_lo.clear();
  multiply(x32, w, out32);
  double err = 0, err32 = 0;
  for (index_t i = 0; i < 40; ++i) {
    double z = 0;
    for (offset_t k = X.offsets[i]; k < X.offsets[i + 1]; ++k) z += f.x[std::size_t(k)] * w[X.indices[k]];
    err = std::max(err, std::fabs(out[i] - z));
    err32 = std::max(err32, std::fabs(out32[i] - z));
  }
  EXPECT_LE(err, 1e-14);
  EXPECT_GE(err32, 1e-8);
  LinearModel m;
  m.model = "ridge";
  m.nr_class = 2;
  m.nr_feature = 6;
  m.bias = -1;
  m.w = w;
  const std::vector<double> dec = decision_function(m, X);
  for (index_t i = 0; i < 40; ++i) EXPECT_NEAR(dec[i], out[i], 1e-15);
  CsrMatrix exact = x32;
  std::vector<double> as_double(exact.values.begin(), exact.values.end());
  set_values_lo(exact, as_double.data());
  EXPECT_FALSE(exact.has_lo());
  // a value below kValuesLoMin (its remainder would not be a normal float32): no values_lo for the matrix
  CsrMatrix tiny = X;
  std::vector<double> xt = f.x;
  xt[3] = 1e-35;
  tiny.values[3] = static_cast<float>(xt[3]);
  set_values_lo(tiny, xt.data());
  EXPECT_FALSE(tiny.has_lo());
  xt[3] = 1e-29;  // above it: kept
  tiny.values[3] = static_cast<float>(xt[3]);
  set_values_lo(tiny, xt.data());
  EXPECT_TRUE(tiny.has_lo());
  CsrMatrix bad = X;
  bad.values_lo.pop_back();
  EXPECT_THROW(validate(bad, "bad"), InvalidArgument);
}

namespace {
/// P(w) = (1/n) sum_i phi(y_i, x_i.w) + lambda/2 ||w||^2 on the float64 values of f, in double (hinge or logistic).
double float64_objective(const Float64Data& f, Loss loss, double lambda, const std::vector<double>& w) {
  double s = 0;
  for (index_t i = 0; i < f.d.X.n_rows; ++i) {
    double z = 0;
    for (offset_t k = f.d.X.offsets[i]; k < f.d.X.offsets[i + 1]; ++k) z += f.x[std::size_t(k)] * w[f.d.X.indices[k]];
    const double m = f.d.y[i] * z;
    s += loss == Loss::hinge ? std::max(0.0, 1 - m) : std::log1p(std::exp(-m));
  }
  double r = 0;
  for (double wj : w) r += wj * wj;
  return s / double(f.d.X.n_rows) + 0.5 * lambda * r;
}
}  // namespace

// The coordinate-descent solvers on float64 values (read_float64_values: the form's lo): SDCA over the samples (hinge
// and logistic duals) and coordinate descent over the features (L2 logistic primal), sequential, SySCD on 2 threads
// and PASSCoDe, at tol 1e-12 on float64 CSR data. The certificate's primal is P(w) computed here in double on the
// float64 values (to 1e-14), its gap is within tol; the same solve on the float32 matrix alone certifies its own
// objective, 1e-10 (full rows: 1e-11) or more away from P on the float64 values. At kFloat64Tol the form stays on
// the float32 values.
TEST(Float64Values, CoordinateDescentReadsThem) {
  // CSR rows (every other entry left out) and full rows of 40 columns (forms.hpp full_row: the dense kernels on the
  // values and on their remainders).
  for (const bool holes : {true, false}) {
    SCOPED_TRACE(holes ? "CSR rows" : "full rows");
    const Float64Pair fp(2000, holes ? 20 : 40, holes, 11);
    const Float64Data& f = fp.f;
    ASSERT_EQ(detail::full_row(f.d.X, f.d.X.offsets[0], f.d.X.offsets[1]), !holes);
    ASSERT_TRUE(f.d.X.has_lo());
    // How far the float32 matrix's optimum lies from P on the float64 values at least: 40 values per row average
    // their roundings down (2.6e-11 measured for the logistic models), still 26x the tolerance.
    const double apart = holes ? 1e-10 : 1e-11;
    const ProblemData &p64 = fp.p64, &p32 = fp.p32;
    const double lambda = 1e-2;
    const std::size_t n = f.d.y.size();
    auto objective = [&](Loss loss, const std::vector<double>& w) { return float64_objective(f, loss, lambda, w); };
    const std::vector<double> c(n, 1.0);
    auto check = [&]<class Form>(Loss loss, Form f64form, Form f32form) {
      for (const SolverKind kind : {SolverKind::sequential, SolverKind::syscd, SolverKind::passcode_atomic}) {
        SCOPED_TRACE(solver_kind_name(kind));
        SolverOptions so;
        so.tol = 1e-12;
        so.max_epochs = 20000;
        so.solver = kind;
        so.n_threads = kind == SolverKind::sequential ? 1 : 2;
        Form a = f64form, b = f32form;
        ASSERT_TRUE(read_float64_values(a, so.tol));
        ASSERT_FALSE(read_float64_values(b, so.tol));  // no values_lo: nothing to read
        const SolveResult r = solve_parallel_cpu(a, so), t = solve_parallel_cpu(b, so);
        const double P = objective(loss, r.w), P32 = objective(loss, t.w);
        EXPECT_TRUE(r.converged);
        EXPECT_LE(r.certificate.gap, 1e-12 * P);
        EXPECT_NEAR(r.certificate.primal, P, 1e-14 * P);
        EXPECT_GE(std::fabs(t.certificate.primal - P32), apart * P32);
        Form loose = f64form;
        EXPECT_FALSE(read_float64_values(loose, kFloat64Tol));
        EXPECT_EQ(loose.lo, nullptr);
      }
    };
    std::vector<double> y(f.d.y.begin(), f.d.y.end());
    {
      SCOPED_TRACE("hinge dual");
      using F = DualForm<Loss::hinge>;
      check.template operator()<F>(Loss::hinge, F(p64, y.data(), c.data(), lambda), F(p32, y.data(), c.data(), lambda));
    }
    {
      SCOPED_TRACE("logistic dual");
      using F = DualForm<Loss::logistic>;
      check.template operator()<F>(Loss::logistic, F(p64, y.data(), c.data(), lambda),
                                   F(p32, y.data(), c.data(), lambda));
    }
    {
      SCOPED_TRACE("logistic primal");
      using F = PrimalForm<Loss::logistic, Penalty::l2>;
      check.template operator()<F>(Loss::logistic, F(p64, y.data(), c.data(), lambda, 0.0),
                                   F(p32, y.data(), c.data(), lambda, 0.0));
    }
  }
}

// DuHL on float64 values (read_float64_values on its form, as train() sets it): the accelerator steps on its float32
// columns, the host's merge (dv = A dalpha), gap memory, CPU unit and certificate read the float64 values, so at tol
// 1e-11 the certificate is the float64 problem's: its primal is P(w) on the float64 values to 1e-14 and its gap
// within tol. The hinge's certificate stalls at about 2e-10 with the accelerator's float32 steps: the host finish
// (duhl.cpp) takes it to tol without them (DuhlRound::host); the logistic models get there with the accelerator.
// The cpu stand-in and the simulated FPGA kernel (float32 arithmetic, where compiled in), a 25% budget, both CPU
// roles; the hinge and logistic duals and the L2 logistic primal.
TEST(Float64Values, DuhlReadsThemOnTheHost) {
  const Float64Pair fp(2000, 20, true, 11);
  const Float64Data& f = fp.f;
  const double lambda = 1e-2;
  const std::vector<double> c(f.d.y.size(), 1.0);
  std::vector<double> y(f.d.y.begin(), f.d.y.end());
  std::vector<std::string> devices{"cpu"};
  for (Device d : compiled_devices())
    if (d == Device::fpga_sim) devices.push_back("fpga-sim");
  auto check = [&]<class Form>(Loss loss, Form form) {
    SolverOptions so;
    so.tol = 1e-11;
    // The hinge's host finish creeps to 1e-11 at about 2.5e-4 of the gap's logarithm a round (7,000 to 11,000
    // rounds in all, 900 to 4,000 of them the host finish, which DuHL's races vary); with a 20000 budget the rate
    // rule judged the rest unreachable once (ASan stage of a CI run: 4.1e-10 after 5400 rounds, "reaches 1.0e-11 in
    // the next 14600 epochs", the budget left). The budget leaves that rule room; the assertions are unchanged.
    // 40000 was not room enough once either (ASan stage, 2026-12-06: 2.8e-10 after 3482 rounds, 106 of them the host
    // finish, creeping at 3.5e-5 of the logarithm a round: 95,000 more to 1e-11, "unreachable" in the 36,518 left),
    // while three runs of the same binary right after took 5,764-10,812 rounds.
    so.max_epochs = 200000;
    so.seed = 5;
    ASSERT_TRUE(read_float64_values(form, so.tol));
    for (const std::string& dev : devices)
      for (CpuRole role : {CpuRole::gaps, CpuRole::solve}) {
        SCOPED_TRACE(dev + " " + cpu_role_name(role));
        BackendOptions bo;
        bo.memory_budget = parse_memory_size("25%", data_bytes(*form.A));
        auto be = make_backend(dev, bo);
        DuhlOptions o;
        o.cpu_role = role;
        const DuhlResult r = solve_duhl(form, *be, so, o);
        const double P = float64_objective(f, loss, lambda, r.w);
        const auto host = std::count_if(r.rounds.begin(), r.rounds.end(), [](const DuhlRound& d) { return d.host; });
        if (std::getenv("HETGLM_TEST_VERBOSE"))
          std::printf("%s %s: %d rounds (%d of the host finish), rel gap %.3e\n", dev.c_str(), cpu_role_name(role),
                      r.epochs, int(host), r.certificate.gap / P);
        EXPECT_TRUE(r.converged) << "rel gap " << r.certificate.gap / P << " after " << r.epochs << ": " << r.stalled;
        EXPECT_LE(r.certificate.gap, so.tol * P);
        EXPECT_NEAR(r.certificate.primal, P, 1e-14 * P);
        if (loss == Loss::hinge) {
          EXPECT_GT(host, 0);
        }
        for (const DuhlRound& d : r.rounds)
          if (d.host) {
            EXPECT_EQ(d.working_set, 0u);
            EXPECT_EQ(d.swaps, 0u);
            EXPECT_TRUE(d.exact);
          }
      }
  };
  {
    SCOPED_TRACE("hinge dual");
    check(Loss::hinge, DualForm<Loss::hinge>(fp.p64, y.data(), c.data(), lambda));
  }
  {
    SCOPED_TRACE("logistic dual");
    check(Loss::logistic, DualForm<Loss::logistic>(fp.p64, y.data(), c.data(), lambda));
  }
  {
    SCOPED_TRACE("logistic primal");
    check(Loss::logistic, PrimalForm<Loss::logistic, Penalty::l2>(fp.p64, y.data(), c.data(), lambda, 0.0));
  }
}

// The working-set solver (Lasso, elastic net) on float64 values: at tol 1e-12 on float64 data (dense columns and CSR
// columns, 1 and 2 threads) the certificate's primal is P(w) on the float64 values to 1e-14 (the loss and penalty
// of the form's own policies, the products here in double on the float64 entries), its gap within tol; the float32
// matrix certifies its own objective, 1e-10 or more away.
TEST(Float64Values, WorkingSetReadsThem) {
  for (const bool holes : {false, true}) {
    SCOPED_TRACE(holes ? "CSR columns" : "full columns");
    const Float64Pair fp(3000, 30, holes, 13);
    const Float64Data& f = fp.f;
    ASSERT_TRUE(f.d.X.has_lo());
    // How far the float32 matrix's optimum lies from P on the float64 values at least: 40 values per row average
    // their roundings down (2.6e-11 measured for the logistic models), still 26x the tolerance.
    const double apart = holes ? 1e-10 : 1e-11;
    const ProblemData &p64 = fp.p64, &p32 = fp.p32;
    const std::size_t n = f.d.y.size();
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = f.d.y[i] + 0.25 * std::sin(double(i));  // a regression target
    const std::vector<double> c(n, 1.0);
    auto check = [&]<class F>(double lambda, double eta) {
      auto objective = [&](const std::vector<double>& w) {
        double s = 0, g = 0;
        for (index_t i = 0; i < f.d.X.n_rows; ++i) {
          double z = 0;
          for (offset_t k = f.d.X.offsets[i]; k < f.d.X.offsets[i + 1]; ++k)
            z += f.x[std::size_t(k)] * w[f.d.X.indices[k]];
          s += F::LossP::value(y[i], z, 1.0);
        }
        for (double wj : w) g += F::PenP::value(wj, lambda, eta);
        return s / double(n) + g;
      };
      for (const int threads : {1, 2}) {
        SCOPED_TRACE(threads);
        SolverOptions so;
        so.tol = 1e-12;
        so.max_epochs = 100000;
        so.n_threads = threads;
        const SolveResult r = solve_working_set(F(p64, y.data(), c.data(), lambda, eta), so);
        const SolveResult t = solve_working_set(F(p32, y.data(), c.data(), lambda, eta), so);
        const double P = objective(r.w), P32 = objective(t.w);
        EXPECT_TRUE(r.converged);
        EXPECT_LE(r.certificate.gap, 1e-12 * P);
        EXPECT_NEAR(r.certificate.primal, P, 1e-14 * P);
        EXPECT_GE(std::fabs(t.certificate.primal - P32), apart * P32);
      }
    };
    {
      SCOPED_TRACE("lasso");
      check.template operator()<PrimalForm<Loss::squared, Penalty::l1>>(0.02, 1.0);
    }
    {
      SCOPED_TRACE("elastic net");
      check.template operator()<PrimalForm<Loss::squared, Penalty::elastic_net>>(0.02, 0.5);
    }
  }
}
