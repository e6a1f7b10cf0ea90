// SPDX-License-Identifier: Apache-2.0
// The sequential solver on real data against LIBLINEAR, scikit-learn and closed forms
// (stored optima: tests/reference/reference.json, made by tests/reference/make_reference.py).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>

#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "../common/objective.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "hetglm/solvers/parallel_cpu.hpp"
#include "hetglm/train.hpp"

using namespace hetglm;

namespace {

const Dataset& dataset(const std::string& name) {
  static std::map<std::string, Dataset> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, read_libsvm(std::string(HETGLM_DATA_DIR) + "/" + name)).first;
  return it->second;
}

nlohmann::json references() {
  std::ifstream in(std::string(HETGLM_TEST_DATA_DIR) + "/../reference/reference.json");
  return nlohmann::json::parse(in);
}


TrainResult fit(const std::string& data, const std::string& model, double lambda, double tol, int max_epochs,
                const std::string& formulation = "auto", double l1_ratio = 0.5, const std::string& penalty = "",
                SolverKind solver = SolverKind::sequential) {
  TrainOptions o;
  o.solver.solver = solver;
  o.problem.model = model_spec(model);
  o.problem.lambda = lambda;
  o.solver.tol = tol;
  o.solver.max_epochs = max_epochs;
  o.problem.formulation = parse_formulation(formulation);
  o.problem.l1_ratio = l1_ratio;
  o.problem.model = model_spec(o.problem.model.name, penalty);  // "" = the model's default; reference cases may name one (L1R_LR: "l1")
  return train(dataset(data), o);
}

}  // namespace

// Acceptance: L2 logistic within 1e-6, hinge and squared hinge within 1e-5, Lasso/elastic net within 1e-6
// of the stored LIBLINEAR / scikit-learn optimum, each with a certified gap at or below the tolerance.
TEST(SequentialSolver, ReachesLiblinearAndScikitLearnOptima) {
  const nlohmann::json ref_file = references();
  ASSERT_GE(ref_file.at("cases").size(), 10u);
  for (const auto& c : ref_file.at("cases")) {
    const std::string data = c["data"], model = c["model"];
    const double lambda = c["lambda"], ref = c["primal"];
    const bool hinge = model == "svm";
    // A case may name its solver and tolerance (reference.json: a9a L1 logistic runs the Newton solver to 1e-4).
    const double tol = c.value("tol", hinge ? 2e-7 : 1e-9);
    const SolverKind solver = parse_solver_kind(c.value("solver", std::string("sequential")));
    const double bound = (model == "svm" || model == "squared-hinge") ? 1e-5 : 1e-6;
    const double l1_ratio = c.value("l1_ratio", 0.5);
    SCOPED_TRACE(data + " " + model + " (" + std::string(c["command"]) + ")");
    const TrainResult r =
        fit(data, model, lambda, tol, hinge ? 20000 : 5000, "auto", l1_ratio, c.value("penalty", ""), solver);
    const Certificate& cert = r.columns.at(0).certificate;
    EXPECT_TRUE(r.converged);
    EXPECT_LE(cert.gap, tol * std::fabs(cert.primal));
    // Within `bound` of the reference optimum. For LIBLINEAR's dual solvers (-s 1, -s 3) the reference's own
    // primal can sit above the optimum (its 1000-iteration cap); its printed dual value is then the tight one:
    // we must be within `bound` of that and never worse than its primal.
    const double target = c.contains("dual") ? double(c["dual"]) : ref;
    EXPECT_LE(std::fabs(cert.primal - target) / target, bound) << "primal " << cert.primal << " reference " << target;
    EXPECT_LE(cert.primal, ref * (1 + bound));
    // Weak duality: our dual value is a lower bound of every primal value, the reference's included.
    EXPECT_LE(cert.dual, ref * (1 + 1e-12));
    // The certificate matches an independent recomputation of P(w) from the model.
    EXPECT_NEAR(test::primal_objective(r.model, dataset(data), r.model.l1_ratio), cert.primal, 1e-10 * cert.primal);
    EXPECT_NEAR(cert.gap_sum, cert.gap, 1e-9 * std::fabs(cert.primal) + 1e-14);
  }
}

// Ridge: both formulations equal the closed form (X^T X / n + lambda I) w = X^T y / n (Eigen, double).
TEST(SequentialSolver, RidgeMatchesTheClosedForm) {
  for (const std::string name : {"housing_scale", "diabetes.svm", "heart_scale"}) {
    const Dataset& d = dataset(name);
    const int n = d.X.n_rows, p = d.X.n_cols;
    Eigen::MatrixXd X = Eigen::MatrixXd::Zero(n, p);
    for (int r = 0; r < n; ++r)
      for (offset_t k = d.X.offsets[r]; k < d.X.offsets[r + 1]; ++k) X(r, d.X.indices[k]) = d.X.values[k];
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(d.y.data(), n);
    for (double lambda : {1.0 / n, 0.1}) {
      const Eigen::MatrixXd H = X.transpose() * X / n + lambda * Eigen::MatrixXd::Identity(p, p);
      const Eigen::VectorXd w = H.ldlt().solve(X.transpose() * y / n);
      const double pstar = 0.5 * (X * w - y).squaredNorm() / n + 0.5 * lambda * w.squaredNorm();
      for (const std::string form : {"primal", "dual"}) {
        SCOPED_TRACE(name + " " + form + " lambda " + std::to_string(lambda));
        const TrainResult r = fit(name, "ridge", lambda, 1e-12, 100000, form);
        EXPECT_TRUE(r.converged);
        EXPECT_LE(std::fabs(r.columns[0].certificate.primal - pstar) / pstar, 1e-8);
        Eigen::VectorXd got = Eigen::Map<const Eigen::VectorXd>(r.model.w.data(), p);
        EXPECT_LE((got - w).norm() / w.norm(), 1e-5);
      }
    }
  }
}

// Lasso and elastic net: the KKT conditions s_j + lambda(eta sign(w_j) + (1-eta) w_j) = 0 for w_j != 0 and
// |s_j| <= lambda eta for w_j = 0, with s_j = <x^(j), Xw - y>/n.
TEST(SequentialSolver, LassoAndElasticNetSatisfyKkt) {
  for (const auto& [name, model, lambda, eta] : std::vector<std::tuple<std::string, std::string, double, double>>{
           {"housing_scale", "lasso", 1.0, 1.0}, {"housing_scale", "lasso", 0.1, 1.0},
           {"housing_scale", "elastic-net", 0.1, 0.5}, {"diabetes.svm", "lasso", 0.05, 1.0}}) {
    SCOPED_TRACE(name + " " + model + " " + std::to_string(lambda));
    const TrainResult r = fit(name, model, lambda, 1e-10, 200000, "auto", eta);
    ASSERT_TRUE(r.converged);
    const Dataset& d = dataset(name);
    const std::vector<double> z = decision_function(r.model, d.X);
    std::vector<double> s(d.X.n_cols, 0.0);
    for (index_t i = 0; i < d.X.n_rows; ++i)
      for (offset_t k = d.X.offsets[i]; k < d.X.offsets[i + 1]; ++k)
        s[d.X.indices[k]] += d.X.values[k] * (z[i] - d.y[i]) / d.X.n_rows;
    // For eta < 1 the penalty is lambda(1-eta)-strongly convex, so a coordinate's gap is ~ r^2/(2 lambda (1-eta))
    // for a KKT residual r: the certified gap bounds r by sqrt(2 lambda (1-eta) gap). For the Lasso the gap is
    // linear in r (|w_j| (lambda - |s_j|)), which gives a much tighter residual.
    const double gap = r.columns[0].certificate.gap;
    const double kkt_tol = eta < 1 ? 1.5 * std::sqrt(2 * lambda * (1 - eta) * gap) : 1e-5 * lambda;
    int nonzero = 0;
    for (index_t j = 0; j < d.X.n_cols; ++j) {
      const double w = r.model.w[j];
      if (w != 0) {
        ++nonzero;
        EXPECT_NEAR(s[j] + lambda * (eta * (w > 0 ? 1 : -1) + (1 - eta) * w), 0.0, kkt_tol) << "feature " << j;
      } else {
        EXPECT_LE(std::fabs(s[j]), lambda * eta * (1 + 1e-6)) << "feature " << j;
      }
    }
    EXPECT_GT(nonzero, 0);
  }
}

// The Lasso / elastic-net certificate recomputed independently of the engine (plain loops, double), at
// u_k = phi'(v_k) = v_k - y_k, v = X w, s_j = (1/n) sum_k x_kj u_k:
//   D1 = -(1/n) sum_k (u_k^2/2 + u_k y_k) - sum_j g^*(-s_j)  (L1: B max(0, |s_j| - lambda), B = f(0)/lambda;
//        elastic net: max(0, |s_j| - lambda eta)^2 / (2 lambda (1 - eta)))
//   D2 = max over t in [0, min(1, lambda eta / max_j |s_j|)] of -(1/n) sum_k (t^2 u_k^2/2 + t u_k y_k)
// (the rescaled residual of scikit-learn and celer, at the best scale for the squared loss).
struct IndependentL1Dual {
  double d1, d2;
};
IndependentL1Dual independent_l1_dual(const LinearModel& m, const Dataset& d, double lambda, double eta) {
  const std::vector<double> v = decision_function(m, d.X);
  const std::size_t n = d.y.size();
  std::vector<double> s(m.w.size(), 0.0);
  double uu = 0, uy = 0, f0 = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double u = v[k] - d.y[k];
    uu += u * u;
    uy += u * d.y[k];
    f0 += 0.5 * d.y[k] * d.y[k];
    for (offset_t p = d.X.offsets[k]; p < d.X.offsets[k + 1]; ++p) s[d.X.indices[p]] += double(d.X.values[p]) * u;
  }
  double smax = 0, gconj = 0;
  const double B = f0 / n / lambda;
  for (double& x : s) {
    x /= double(n);
    smax = std::max(smax, std::fabs(x));
    const double e = std::fabs(x) - lambda * eta;
    if (e > 0) gconj += eta >= 1 ? B * e : e * e / (2 * lambda * (1 - eta));
  }
  const double d1 = -(0.5 * uu + uy) / n - gconj;
  const double tmax = smax > lambda * eta ? lambda * eta / smax : 1.0;
  const double t = uu > 0 ? std::clamp(-uy / uu, 0.0, tmax) : tmax;
  return {d1, -(0.5 * t * t * uu + t * uy) / n};
}

// The tight L1 / elastic-net certificate (issue 21): the sequential solver's dual value is the better of the
// Lipschitzed dual and the rescaled residual, both recomputed here; at a loose tolerance the rescaled point is the
// better one; every reported gap bounds the true suboptimality against scikit-learn's optimum.
TEST(L1Certificate, RescaledDualPointMatchesAnIndependentRecomputation) {
  const nlohmann::json ref_file = references();
  int cases = 0, rescaled_better = 0;
  for (const auto& c : ref_file.at("cases")) {
    const std::string data = c["data"], model = c["model"];
    if (model != "lasso" && model != "elastic-net") continue;
    const double lambda = c["lambda"], ref = c["primal"], eta = c.value("l1_ratio", 0.5);
    for (double tol : {1e-2, 1e-4, 1e-9}) {
      SCOPED_TRACE(data + " " + model + " lambda " + std::to_string(lambda) + " tol " + std::to_string(tol));
      const TrainResult r = fit(data, model, lambda, tol, 100000, "auto", eta);
      const Certificate& cert = r.columns.at(0).certificate;
      EXPECT_TRUE(r.converged);
      EXPECT_LE(cert.gap, tol * cert.primal);
      const IndependentL1Dual id = independent_l1_dual(r.model, dataset(data), lambda, eta);
      EXPECT_NEAR(cert.dual, std::max(id.d1, id.d2), 1e-9 * cert.primal);
      EXPECT_LE(cert.dual, ref * (1 + 1e-12));  // weak duality against scikit-learn's optimum
      EXPECT_LE(std::max(id.d1, id.d2), ref * (1 + 1e-12));
      EXPECT_GE(cert.gap * (1 + 1e-9) + 1e-12 * ref, cert.primal - ref);  // the gap bounds the suboptimality
      EXPECT_NEAR(test::primal_objective(r.model, dataset(data), eta), cert.primal, 1e-10 * cert.primal);
      rescaled_better += id.d2 > id.d1;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 12);
  EXPECT_GT(rescaled_better, 0);
}

// The working-set solver (--solver working-set, auto for the Lasso and elastic net) at 1 and 2 threads reaches
// scikit-learn's optima within 1e-6, certified at its tolerance, with a dual value below scikit-learn's optimum
// and P recomputed from the model; its dual value is at least the independent rescaled-residual one at its w.
TEST(WorkingSetSolver, ReachesScikitLearnLassoAndElasticNetOptima) {
  const nlohmann::json ref_file = references();
  int cases = 0;
  for (const auto& c : ref_file.at("cases")) {
    const std::string data = c["data"], model = c["model"];
    if (model != "lasso" && model != "elastic-net") continue;
    const double lambda = c["lambda"], ref = c["primal"], eta = c.value("l1_ratio", 0.5);
    for (int threads : {1, 2}) {
      for (double tol : {1e-6, 1e-9}) {
        SCOPED_TRACE(data + " " + model + " lambda " + std::to_string(lambda) + " threads " + std::to_string(threads) +
                     " tol " + std::to_string(tol));
        TrainOptions o;
        o.solver.solver = SolverKind::working_set;
        o.solver.n_threads = threads;
        o.problem.model = model_spec(model);
        o.problem.lambda = lambda;
        o.problem.l1_ratio = eta;
        o.solver.tol = tol;
        const TrainResult r = train(dataset(data), o);
        EXPECT_EQ(r.solver, SolverKind::working_set);
        const Certificate& cert = r.columns.at(0).certificate;
        EXPECT_TRUE(r.converged);
        EXPECT_LE(cert.gap, tol * cert.primal);
        EXPECT_LE(std::fabs(cert.primal - ref) / ref, std::max(tol, 1e-8));
        EXPECT_LE(cert.dual, ref * (1 + 1e-12));
        EXPECT_NEAR(test::primal_objective(r.model, dataset(data), eta), cert.primal, 1e-10 * cert.primal);
        const IndependentL1Dual id = independent_l1_dual(r.model, dataset(data), lambda, eta);
        EXPECT_GE(cert.dual, std::max(id.d1, id.d2) - 1e-9 * cert.primal);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 16);
}

// A regularization path's PathCache (options.hpp): the working-set solver fills it at the first point and later
// points on the same X^T and targets reuse it (counted); here every point's model is bit-identical to a fit without
// the cache (the cached norms, X^T y and column curvatures are the same numbers; the carried correlation bounds could
// in general change which features the first working set ranks first, not on these 10 features), and a cache
// filled on other data or other targets is recomputed, not used.
TEST(WorkingSetSolver, PathCacheChangesNoResult) {
  auto by_feature = [](const Dataset& rows) {  // X^T as the path functions pass it: used as it is, not copied
    Dataset t;
    t.X = transpose(rows.X);
    t.y = rows.y;
    t.by_feature = true;
    return t;
  };
  const Dataset d = by_feature(dataset("diabetes.svm"));
  auto fit_at = [&](const Dataset& data, double lambda, const std::shared_ptr<PathCache>& cache,
                    const std::vector<double>* warm) {
    TrainOptions o;
    o.solver.solver = SolverKind::working_set;
    o.problem.model = model_spec("lasso");
    o.problem.lambda = lambda;
    o.solver.tol = 1e-9;
    o.solver.path_cache = cache;
    if (warm) o.initial_alpha = {*warm};
    return train(data, o);
  };
  auto cache = std::make_shared<PathCache>();
  std::vector<double> warm_cached, warm_plain;
  for (double lambda : {1.0, 0.3, 0.1, 0.03}) {
    SCOPED_TRACE("lambda " + std::to_string(lambda));
    const TrainResult a = fit_at(d, lambda, cache, warm_cached.empty() ? nullptr : &warm_cached);
    const TrainResult b = fit_at(d, lambda, nullptr, warm_plain.empty() ? nullptr : &warm_plain);
    ASSERT_TRUE(a.converged);
    EXPECT_EQ(a.model.w, b.model.w);
    EXPECT_EQ(a.columns.at(0).certificate.gap, b.columns.at(0).certificate.gap);
    EXPECT_EQ(cache->col_norm.size(), static_cast<std::size_t>(d.n_features()));
    EXPECT_EQ(cache->y, d.y);
    warm_cached = a.columns.at(0).alpha;
    warm_plain = b.columns.at(0).alpha;
  }
  EXPECT_EQ(cache->reused, 3);
  // Other data with the same cache: recomputed for it (the result equals a fit without the cache).
  Dataset h = by_feature(dataset("housing_scale"));
  const TrainResult a = fit_at(h, 0.1, cache, nullptr), b = fit_at(h, 0.1, nullptr, nullptr);
  EXPECT_EQ(a.model.w, b.model.w);
  EXPECT_EQ(cache->col_norm.size(), static_cast<std::size_t>(h.n_features()));
  EXPECT_EQ(cache->reused, 3);
  // The same X^T (the same buffer) with other targets: X^T y recomputed.
  for (double& t : h.y) t += 1;
  const TrainResult c = fit_at(h, 0.1, cache, nullptr), e = fit_at(h, 0.1, nullptr, nullptr);
  EXPECT_EQ(c.model.w, e.model.w);
  EXPECT_NE(c.model.w, a.model.w);
  EXPECT_EQ(cache->y, h.y);
  EXPECT_EQ(cache->reused, 3);
}

// The correlation bounds of the working-set solver's certificates (working_set.hpp, step 1): a Lasso path on w7a
// (a regression on its +-1 labels, X^T as the path functions pass it), 12 points from lambda_max down to
// lambda_max / 100, each warm-started from the previous one, with one PathCache. The bounds spare certificate
// products (counted), and every point's certificate stays honest: its gap is at most tol P, its dual value at most
// the point's optimum (a cold fit at tol 1e-12 without the cache; a bound that failed to cover a skipped feature
// would overstate the dual), the gap bounds the suboptimality, and P equals the objective recomputed from the model.
// A second run of the path gives bit-identical models.
TEST(WorkingSetSolver, CorrelationBoundsKeepEveryCertificateHonest) {
  Dataset d;
  d.X = transpose(dataset("w7a").X);
  d.y = dataset("w7a").y;
  d.by_feature = true;
  const double n = double(d.y.size());
  double lambda_max = 0;
  for (index_t j = 0; j < d.X.n_rows; ++j) {
    double s = 0;
    for (offset_t p = d.X.offsets[j]; p < d.X.offsets[j + 1]; ++p) s += double(d.X.values[p]) * d.y[d.X.indices[p]];
    lambda_max = std::max(lambda_max, std::fabs(s) / n);
  }
  constexpr double kTol = 1e-6;
  auto fit_at = [&](double lambda, double tol, const std::shared_ptr<PathCache>& cache,
                    const std::vector<double>* warm) {
    TrainOptions o;
    o.solver.solver = SolverKind::working_set;
    o.problem.model = model_spec("lasso");
    o.problem.lambda = lambda;
    o.solver.tol = tol;
    o.solver.path_cache = cache;
    if (warm) o.initial_alpha = {*warm};
    return train(d, o);
  };
  Dataset rows;  // the samples as rows, for the objective recomputed from the model
  rows.X = dataset("w7a").X;
  rows.y = d.y;
  std::vector<std::vector<double>> models[2];
  for (int run = 0; run < 2; ++run) {
    auto cache = std::make_shared<PathCache>();
    std::vector<double> warm;
    for (int p = 0; p < 12; ++p) {
      const double lambda = lambda_max * std::pow(0.01, p / 11.0);
      SCOPED_TRACE("run " + std::to_string(run) + " point " + std::to_string(p));
      const TrainResult a = fit_at(lambda, kTol, cache, warm.empty() ? nullptr : &warm);
      const Certificate& cert = a.columns.at(0).certificate;
      ASSERT_TRUE(a.converged);
      EXPECT_LE(cert.gap, kTol * cert.primal);
      EXPECT_NEAR(test::primal_objective(a.model, rows, 1.0), cert.primal, 1e-10 * cert.primal);
      if (run == 0) {
        const TrainResult ref = fit_at(lambda, 1e-12, nullptr, nullptr);
        const double pstar = ref.columns.at(0).certificate.primal;
        EXPECT_LE(cert.dual, pstar * (1 + 1e-12));
        EXPECT_LE(cert.primal - pstar, cert.gap * (1 + 1e-9) + 1e-12 * pstar);
      }
      models[run].push_back(a.model.w);
      warm = a.columns.at(0).alpha;
    }
    EXPECT_GT(cache->bound_skipped, 0);
  }
  EXPECT_EQ(models[0], models[1]);
}

TEST(SequentialSolver, StopsAtTheToleranceAndRecordsHistory) {
  const TrainResult r = fit("a9a", "logistic", 1.0 / 32561, 1e-4, 1000);
  ASSERT_EQ(r.columns.size(), 1u);
  const auto& col = r.columns[0];
  EXPECT_TRUE(col.converged);
  // One row per certified epoch (the certificate schedule), in order, the last at the end.
  for (std::size_t k = 1; k < col.history.size(); ++k) EXPECT_GT(col.history[k].epoch, col.history[k - 1].epoch);
  EXPECT_EQ(col.history.back().epoch, col.epochs);
  EXPECT_LE(col.history.back().rel_gap, 1e-4);
  for (std::size_t k = 0; k + 1 < col.history.size(); ++k) EXPECT_GT(col.history[k].rel_gap, 1e-4);
  EXPECT_LE(col.certificate.gap, 1e-4 * col.certificate.primal);
}

// The margin rule of the box duals' shrinking (shrinking.hpp MarginRule): with and without shrinking the same
// certified optimum, for the hinge and squared hinge losses on w7a and on a copy sorted by label (all positives
// last). On w7a the hinge loss needs 163 sequential epochs to 1e-4 with the rule; the gap rule alone (every sample
// with margin >= 1 left out until the next certificate) needed 371: the bounds check that the rule is in force.
TEST(Shrinking, BoxDualMarginRuleReachesTheOptimumOfEveryEpochVisitingAll) {
  const Dataset& w7a = dataset("w7a");
  Dataset sorted = w7a;  // the rows in a stable order by label
  {
    std::vector<index_t> order(static_cast<std::size_t>(w7a.n_samples()));
    std::iota(order.begin(), order.end(), index_t{0});
    std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) { return w7a.y[a] < w7a.y[b]; });
    sorted.X = select_rows(w7a.X, order);
    for (std::size_t p = 0; p < order.size(); ++p) sorted.y[p] = w7a.y[order[p]];
    ASSERT_EQ(sorted.y.back(), 1.0);
  }
  for (const char* model : {"svm", "squared-hinge"})
    for (const Dataset* d : {&w7a, static_cast<const Dataset*>(&sorted)}) {
      SCOPED_TRACE(std::string(model) + (d == &w7a ? " w7a" : " w7a sorted by label"));
      TrainOptions o;
      o.solver.solver = SolverKind::sequential;
      o.problem.model = model_spec(model);
      o.problem.formulation = parse_formulation("dual");
      o.solver.tol = 1e-7;
      o.solver.max_epochs = 20000;
      const TrainResult on = train(*d, o);
      o.solver.shrinking = false;
      const TrainResult off = train(*d, o);
      const Certificate &a = on.columns.at(0).certificate, &b = off.columns.at(0).certificate;
      ASSERT_TRUE(on.converged);
      ASSERT_TRUE(off.converged);
      EXPECT_LE(a.gap, 1e-7 * a.primal);
      EXPECT_NEAR(a.primal, b.primal, 2e-7 * b.primal);
      EXPECT_NEAR(test::primal_objective(on.model, *d, on.model.l1_ratio), a.primal, 1e-10 * a.primal);
    }
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;
  o.problem.model = model_spec("svm");
  o.solver.tol = 1e-4;
  const TrainResult r = train(w7a, o);
  ASSERT_TRUE(r.converged);
  EXPECT_LE(r.columns.at(0).epochs, 250);
  // SySCD on 2 threads (deterministic) has the rule too: 320 epochs, 539 with the gap rule alone.
  o.solver.solver = SolverKind::syscd;
  o.solver.n_threads = 2;
  const TrainResult s = train(w7a, o);
  ASSERT_TRUE(s.converged);
  EXPECT_LE(s.columns.at(0).epochs, 420);
}

TEST(SequentialSolver, EpochLimitIsAWarningNotAFailure) {
  const TrainResult r = fit("a9a", "svm", 1.0 / 32561, 1e-12, 3);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.columns[0].epochs, 3);
  EXPECT_GT(r.columns[0].certificate.gap, 0);
}

TEST(SequentialSolver, SameSeedSameModelDifferentSeedDifferentPath) {
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;  // the sequential reference (the library default is auto)
  o.problem.model = model_spec("svm");
  o.solver.max_epochs = 5;
  o.solver.tol = 1e-12;
  const TrainResult a = train(dataset("w7a"), o), b = train(dataset("w7a"), o);
  EXPECT_EQ(format_model(a.model), format_model(b.model));
  o.solver.seed = 99;
  const TrainResult c = train(dataset("w7a"), o);
  EXPECT_NE(format_model(a.model), format_model(c.model));
}

TEST(Train, MulticlassOneVsRestAndBias) {
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;  // the sequential reference (the library default is auto)
  o.problem.model = model_spec("logistic");
  o.problem.bias = 1;
  o.solver.tol = 1e-6;
  const TrainResult r = train(dataset("dna.scale"), o);
  EXPECT_EQ(r.model.nr_class, 3);
  EXPECT_EQ(r.model.labels, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(r.model.w.size(), static_cast<std::size_t>(181 * 3));
  ASSERT_EQ(r.columns.size(), 3u);
  for (const auto& c : r.columns) EXPECT_LE(c.certificate.gap, 1e-6 * c.certificate.primal);
  LibsvmOptions lo;
  const Dataset test = read_libsvm(std::string(HETGLM_DATA_DIR) + "/dna.scale.t", lo);
  const std::vector<double> pred = predict(r.model, test.X);
  int ok = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) ok += pred[i] == test.y[i];
  EXPECT_GT(double(ok) / pred.size(), 0.93);  // LIBLINEAR -s 0 -B 1 gets 0.9435 on dna.scale.t
}

// distinct_labels (train.hpp): the std::set order of the distinct values, on the short-list path (few labels, in any
// order, repeated in runs and not) and past 256 distinct values (the sorted copy).
TEST(Train, DistinctLabelsAreTheSortedDistinctValues) {
  EXPECT_EQ(distinct_labels({}), std::vector<double>{});
  EXPECT_EQ(distinct_labels({2, 2, -1, 7, 2, -1, 0.5, 7, 7}), (std::vector<double>{-1, 0.5, 2, 7}));
  EXPECT_EQ(distinct_labels({-0.0, 0.0, 3}), (std::vector<double>{0.0, 3}));
  std::vector<double> y, want;
  for (int i = 0; i < 300; ++i) y.push_back((i * 7919) % 300), y.push_back(299 - i);
  for (int i = 0; i < 300; ++i) want.push_back(i);
  EXPECT_EQ(distinct_labels(y), want);
}

TEST(Train, BinaryLabelsPositiveClassIsTheLargerLabel) {
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;  // the sequential reference (the library default is auto)
  o.solver.tol = 1e-3;
  const TrainResult r = train(dataset("breast-cancer_scale"), o);  // labels 2 and 4
  EXPECT_EQ(r.model.labels, (std::vector<double>{4, 2}));
}

TEST(Train, RejectsBadInputWithClearMessages) {
  auto msg = [](const Dataset& d, TrainOptions o) {
    try {
      train(d, o);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Dataset one;
  one.source = "one.svm";
  one.X.n_rows = 2;
  one.X.n_cols = 1;
  one.X.offsets = {0, 1, 2};
  one.X.indices = {0, 0};
  one.X.values = {1.f, 2.f};
  one.y = {1, 1};
  EXPECT_EQ(msg(one, {}), "'one.svm': all samples have the same label 1; a classifier needs two classes");
  Dataset empty;
  empty.source = "e.svm";
  EXPECT_EQ(msg(empty, {}), "'e.svm': no samples to train on");
  TrainOptions both;
  both.problem.C = 1;
  both.problem.lambda = 1;
  one.y = {1, -1};
  EXPECT_EQ(msg(one, both), "-c and --lambda are mutually exclusive: give one of them");
  std::string bad_model;
  try {
    model_spec("svn");
  } catch (const InvalidArgument& e) {
    bad_model = e.what();
  }
  EXPECT_EQ(bad_model, "--model: unknown model 'svn' (expected logistic, svm, squared-hinge, ridge, lasso, elastic-net, huber or multinomial)");
  TrainOptions prim;
  prim.problem.model = model_spec("svm");
  prim.problem.formulation = parse_formulation("primal");
  EXPECT_EQ(msg(one, prim), "--formulation primal: the hinge loss is not smooth, so svm trains in the dual only");
  TrainOptions lasso_dual;
  lasso_dual.problem.model = model_spec("lasso");
  lasso_dual.problem.formulation = parse_formulation("dual");
  EXPECT_EQ(msg(one, lasso_dual), "--formulation dual: model 'lasso' has no dual (SDCA) form; use primal");
  TrainOptions neg;
  neg.problem.C = -1;
  EXPECT_EQ(msg(one, neg), "-c: C must be a positive number, got -1");
  TrainOptions tol;
  tol.solver.tol = 0;
  EXPECT_EQ(msg(one, tol), "--tol: must be a positive number, got 0");
}

// The worked example of docs/adding-a-loss.md: the Huber loss, added as one row of the loss table (glm_math.h), its
// functions (glm_math_impl.h) and one model row (objective.hpp). The dual (SDCA) and the primal (coordinate descent and
// Newton) reach the same certified optimum, equal to the objective recomputed from the weights; with L1 the primal
// certifies too; on data with gross outliers its weights move less than ridge's.
TEST(Huber, EveryFormulationReachesTheSameCertifiedOptimum) {
  const Dataset& d = dataset("housing_scale");
  auto fit_huber = [&](const std::string& formulation, SolverKind solver, const std::string& penalty = "") {
    TrainOptions o;
    o.problem.model = model_spec("huber", penalty);
    o.problem.lambda = 1e-3;
    o.problem.formulation = parse_formulation(formulation);
    o.solver.solver = solver;
    o.solver.tol = 1e-10;
    o.solver.max_epochs = 100000;
    return train(d, o);
  };
  const TrainResult dual = fit_huber("dual", SolverKind::sequential);
  const TrainResult cd = fit_huber("primal", SolverKind::sequential);
  const TrainResult newton = fit_huber("primal", SolverKind::newton);
  for (const TrainResult* r : {&dual, &cd, &newton}) {
    const Certificate& c = r->columns.at(0).certificate;
    EXPECT_TRUE(r->converged);
    EXPECT_LE(c.gap, 1e-10 * c.primal);
    EXPECT_NEAR(test::primal_objective(r->model, d), c.primal, 1e-10 * c.primal);
    EXPECT_NEAR(c.primal, dual.columns[0].certificate.primal, 1e-8 * c.primal);
  }
  EXPECT_EQ(dual.model.solver_type, "HUBER_DUAL");
  EXPECT_EQ(cd.model.solver_type, "HUBER_PRIMAL");
  const TrainResult l1 = fit_huber("auto", SolverKind::newton, "l1");
  EXPECT_EQ(l1.model.solver_type, "L1R_HUBER");
  EXPECT_LE(l1.columns[0].certificate.gap, 1e-6 * l1.columns[0].certificate.primal);
}

TEST(Huber, OutliersMoveItsWeightsLessThanRidges) {
  const Dataset& d = dataset("housing_scale");
  Dataset bad = d;
  for (std::size_t i = 0; i < bad.y.size(); i += 25) bad.y[i] += 500;  // 4% gross outliers
  auto weights = [](const Dataset& data, const char* model) {
    TrainOptions o;
    o.problem.model = model_spec(model);
    o.problem.lambda = 1e-3;
    o.solver.solver = SolverKind::sequential;
    o.solver.tol = 1e-9;
    o.solver.max_epochs = 100000;
    return train(data, o).model.w;
  };
  auto moved = [&](const char* model) {
    const std::vector<double> a = weights(d, model), b = weights(bad, model);
    double s = 0;
    for (std::size_t j = 0; j < a.size(); ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
    return std::sqrt(s);
  };
  EXPECT_LT(moved("huber"), 0.1 * moved("ridge"));
}

// Warm starts (TrainOptions::initial_alpha): a refit after a small change of C starts from the previous solution's
// coordinate variables and reaches the cold fit's optimum in fewer epochs (dual SDCA and the primal Newton solver).
TEST(Train, WarmStartAfterASmallChangeOfCReachesTheColdOptimumInFewerEpochs) {
  for (const char* formulation : {"dual", "primal"}) {
    SCOPED_TRACE(formulation);
    TrainOptions o;
    o.problem.model = model_spec("logistic");
    o.problem.formulation = parse_formulation(formulation);
    o.solver.solver = std::string(formulation) == "dual" ? SolverKind::sequential : SolverKind::newton;
    o.solver.tol = 1e-8;
    o.problem.C = 1.0;
    const TrainResult first = train(dataset("a9a"), o);
    o.problem.C = 1.2;
    const TrainResult cold = train(dataset("a9a"), o);
    o.initial_alpha = {first.columns.at(0).alpha};
    const TrainResult warm = train(dataset("a9a"), o);
    ASSERT_TRUE(cold.converged);
    ASSERT_TRUE(warm.converged);
    EXPECT_NEAR(warm.columns[0].certificate.primal, cold.columns[0].certificate.primal,
                2e-8 * cold.columns[0].certificate.primal);
    EXPECT_LT(warm.columns[0].epochs, cold.columns[0].epochs);
    std::printf("%s: cold %d epochs, warm %d epochs\n", formulation, cold.columns[0].epochs, warm.columns[0].epochs);
  }
  TrainOptions bad;
  bad.problem.model = model_spec("logistic");
  bad.initial_alpha = {std::vector<double>(3, 0.0)};
  try {
    train(dataset("a9a"), bad);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "warm start: 3 values for 123 coordinates");
  }
}

// One-vs-rest keeps each class's coordinate variables (ColumnReport::alpha, a warm start) unless asked not to
// (TrainOptions::keep_alpha, the CLI's train): n doubles a class in the dual, which the memory estimate counts when
// they are kept (1000 classes of 20,000 samples: 160 MB, where it said 8 MB). dna.scale, 3 classes, 2000 samples:
// a limit between the two estimates refuses the one and trains the other, to the same model.
TEST(TrainMemory, OneVsRestCountsTheCoordinateVariablesItKeeps) {
  const Dataset& d = dataset("dna.scale");
  TrainOptions o;
  o.problem.model = model_spec("svm");
  o.solver.n_threads = 1;
  const double kept = training_memory_bytes(d, o);
  TrainOptions lean = o;
  lean.keep_alpha = false;
  const double dropped = training_memory_bytes(d, lean);
  EXPECT_EQ(kept - dropped, 3.0 * 2000 * sizeof(double));  // max(n, d) = n = 2000 a class
  o.memory_limit = lean.memory_limit = static_cast<std::uint64_t>((kept + dropped) / 2);
  EXPECT_THROW(train(d, o), InvalidArgument);
  const TrainResult r = train(d, lean);
  ASSERT_EQ(r.columns.size(), 3u);
  for (const ColumnReport& c : r.columns) EXPECT_EQ(c.alpha.capacity(), 0u);  // released, not only emptied
  o.memory_limit = 0;
  const TrainResult full = train(d, o);
  for (const ColumnReport& c : full.columns) EXPECT_EQ(c.alpha.size(), 2000u);
  EXPECT_EQ(full.model.w, r.model.w);
}

// Multinomial (softmax) regression (multinomial.hpp): certified at 1e-12 on dna.scale (3 classes), its primal equal
// to the objective recomputed from the weights by the test's own loop, probabilities summing to 1, a warm start at the
// same C certified at once, and the errors for what it does not do.
TEST(Multinomial, NewtonCgCertifiesTheSoftmaxObjective) {
  TrainOptions o;
  o.problem.model = model_spec("multinomial");
  o.solver.tol = 1e-12;
  o.solver.max_epochs = 100;
  const Dataset& d = dataset("dna.scale");
  const TrainResult r = train(d, o);
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(r.columns.size(), 1u);
  EXPECT_EQ(r.model.nr_class, 3);
  EXPECT_EQ(r.model.solver_type, "MULTINOMIAL_LR");
  const Certificate& c = r.columns[0].certificate;
  EXPECT_LE(std::fabs(c.gap), 1e-12 * c.primal);
  EXPECT_NEAR(c.primal, test::primal_objective(r.model, d), 1e-12 * c.primal);
  EXPECT_EQ(r.model.primal[0], c.primal);
  EXPECT_EQ(r.model.primal[1], 0.0);
  EXPECT_LE(r.columns[0].epochs, 20);
  const std::vector<double> p = predict_proba(r.model, d.X);
  for (index_t i = 0; i < d.X.n_rows; ++i)
    EXPECT_NEAR(p[3 * i] + p[3 * i + 1] + p[3 * i + 2], 1.0, 1e-12);
  TrainOptions warm = o;
  warm.initial_alpha = {r.columns[0].alpha};
  EXPECT_LE(train(d, warm).columns[0].epochs, 1);
  // The primal only; two classes are logistic regression.
  auto message = [&](TrainOptions bad, const Dataset& data) {
    try {
      train(data, bad);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  TrainOptions dual = o;
  dual.problem.formulation = FormulationRequest::dual;
  EXPECT_EQ(message(dual, d), "--formulation dual: model 'multinomial' has no dual (SDCA) form; use primal");
  TrainOptions syscd = o;
  syscd.solver.solver = SolverKind::syscd;
  EXPECT_EQ(message(syscd, d),
            "--solver syscd: --model multinomial trains with its own Newton solvers only (use --solver auto or newton)");
  TrainOptions sim = o;
  sim.device.device = Device::fpga_sim;
  EXPECT_EQ(message(sim, d),
            "--model multinomial: trains on the CPU only (the Newton solvers of solvers/src/multinomial.cpp); the "
            "coordinate kernels of --device fpga-sim and DuHL's working sets are written for losses of one margin");
  EXPECT_EQ(message(o, dataset("a9a")),
            "--model multinomial: needs more than two classes, found 2 (with two, the softmax model is logistic "
            "regression at twice the C: use --model logistic)");
}

// At C = 1e300 (lambda = 1/(C n) near the smallest double) the dual point W(A) = X^T A / (lambda n) overflows: the
// certificate then takes the dual point A = 0, D = 0, a lower bound of P* (the softmax loss is not negative), and the
// fit ends on its stall rule with relative gap 1, as the binary models do; it ended at epoch 0 with "numerical
// failure ... dual -inf" (exit 1).
TEST(Multinomial, TheCertificateStaysFiniteWhereLambdaUnderflows) {
  TrainOptions o;
  o.problem.model = model_spec("multinomial");
  o.problem.C = 1e300;
  const Dataset& d = dataset("iris.scale");
  const TrainResult r = train(d, o);
  const Certificate& c = r.columns.at(0).certificate;
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(c.dual, 0.0);
  EXPECT_EQ(c.gap, c.primal);
  EXPECT_NEAR(c.primal, test::primal_objective(r.model, d), 1e-12 * c.primal);
  EXPECT_LT(c.primal, std::log(3.0));  // below the start W = 0 (every class at 1/3)
  EXPECT_FALSE(r.columns[0].stalled.empty());
}

// Where the features' K x K blocks do not fit in memory (many classes) the proximal direction visits the coordinates
// one at a time (coordinate_visit; forced here with the test hook): the same optimum as with the blocks, certified.
TEST(Multinomial, CoordinateVisitsReachTheBlocksOptimum) {
  const Dataset& d = dataset("dna.scale");
  for (const char* pen : {"l1", "elastic-net"}) {
    SCOPED_TRACE(pen);
    TrainOptions o;
    o.problem.model = model_spec("multinomial", pen);
    o.solver.tol = 1e-9;
    const TrainResult blocks = train(d, o);
    o.solver.multinomial_blocks = false;
    const TrainResult coords = train(d, o);
    ASSERT_TRUE(blocks.converged);
    ASSERT_TRUE(coords.converged);
    const Certificate& b = blocks.columns.at(0).certificate;
    const Certificate& c = coords.columns.at(0).certificate;
    EXPECT_LE(c.gap, 1e-9 * c.primal);
    EXPECT_NEAR(c.primal, b.primal, 2e-9 * b.primal);
    EXPECT_NE(coords.model.w, blocks.model.w);  // another path to the optimum
  }
}

// should_stop (Ctrl-C) is polled inside a direction's inner passes (Newton-CG's products, the proximal passes'
// features), not only once per iteration: with 1000 classes one iteration took 384 s and the interrupt acted after
// it. Here it answers yes at its third poll, inside the first direction: the fit stops before its first iteration
// ends, interrupted, at the start W = 0 (P = log 3) with that point's certificate.
TEST(Multinomial, AnInterruptActsWithinTheFirstDirection) {
  const Dataset& d = dataset("dna.scale");
  for (const char* pen : {"l2", "l1"}) {
    SCOPED_TRACE(pen);
    TrainOptions o;
    o.problem.model = model_spec("multinomial", pen);
    int polls = 0;
    o.solver.should_stop = [&polls] { return ++polls == 3; };
    const TrainResult r = train(d, o);
    EXPECT_TRUE(r.interrupted);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.columns.at(0).epochs, 0);
    EXPECT_EQ(polls, 3);
    EXPECT_NEAR(r.columns[0].certificate.primal, std::log(3.0), 1e-12);
    for (double w : r.model.w) EXPECT_EQ(w, 0.0);
  }
}

// Multinomial L1 and elastic net (proximal Newton, multinomial.hpp) on dna.scale at C = 1 (as scikit-learn's
// LogisticRegression(penalty='l1' / 'elasticnet', l1_ratio 0.5)): certified at 1e-10; the primal equal to the test's
// own objective; the dual recomputed here from the weights alone (the dual point s alpha_i, s = min(1, lambda eta /
// max |G|), G the loss's gradient) equal to the reported one; the optimality conditions of the L1 problem (|G_jk| <=
// lambda eta where W_jk = 0, G_jk + lambda (1 - eta) W_jk = -lambda eta sign(W_jk) elsewhere) within 1e-8 lambda
// (L1) and 1e-3 lambda (elastic net, whose gap bounds W - W* only through its L2 part's strong convexity);
// sparse weights; the model file's solver_type and l1_ratio.
TEST(Multinomial, ProximalNewtonCertifiesL1AndElasticNet) {
  const Dataset& d = dataset("dna.scale");
  const std::size_t n = d.y.size();
  for (const char* pen : {"l1", "elastic-net"}) {
    SCOPED_TRACE(pen);
    TrainOptions o;
    o.problem.model = model_spec("multinomial", pen);
    o.problem.C = 1.0;
    o.problem.l1_ratio = 0.5;
    o.solver.tol = 1e-10;
    const TrainResult r = train(d, o);
    ASSERT_TRUE(r.converged);
    const LinearModel& m = r.model;
    const double eta = pen == std::string("l1") ? 1.0 : 0.5;
    EXPECT_EQ(m.solver_type, eta == 1 ? "MULTINOMIAL_L1R_LR" : "MULTINOMIAL_ELASTIC_NET_LR");
    EXPECT_EQ(m.l1_ratio, eta);
    EXPECT_DOUBLE_EQ(m.lambda, 1.0 / double(n));
    const Certificate& c = r.columns[0].certificate;
    EXPECT_LE(c.gap, 1e-10 * c.primal);
    EXPECT_NEAR(c.primal, test::primal_objective(m, d, eta), 1e-12 * c.primal);
    // G = (1/n) X^T (P - Y) from the model's own decision values
    const std::size_t K = 3, nf = std::size_t(d.X.n_cols);
    const std::vector<double> z = decision_function(m, d.X);
    std::vector<double> p(n * K), G(nf * K, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const double top = *std::max_element(&z[i * K], &z[i * K] + K);
      double sum = 0;
      for (std::size_t k = 0; k < K; ++k) sum += p[i * K + k] = std::exp(z[i * K + k] - top);
      for (std::size_t k = 0; k < K; ++k) p[i * K + k] /= sum;
      const std::size_t yi = std::size_t(std::find(m.labels.begin(), m.labels.end(), d.y[i]) - m.labels.begin());
      for (offset_t q = d.X.offsets[i]; q < d.X.offsets[i + 1]; ++q)
        for (std::size_t k = 0; k < K; ++k)
          G[std::size_t(d.X.indices[q]) * K + k] += d.X.values[q] * (p[i * K + k] - (k == yi ? 1.0 : 0.0)) / double(n);
    }
    const double lam = m.lambda, box = lam * eta;
    double gmax = 0, kkt = 0;
    std::size_t zeros = 0;
    for (std::size_t t = 0; t < nf * K; ++t) {
      gmax = std::max(gmax, std::fabs(G[t]));
      const double w = m.w[t], g = G[t] + lam * (1 - eta) * w;
      if (w == 0) {
        ++zeros;
        kkt = std::max(kkt, std::fabs(g) - box);
      } else {
        kkt = std::max(kkt, std::fabs(g + (w > 0 ? box : -box)));
      }
    }
    EXPECT_LE(kkt, (eta == 1 ? 1e-8 : 1e-3) * lam);  // (measured 1.1e-10 and 7.2e-5)
    EXPECT_GT(zeros, nf * K / 4);  // L1: a sparse matrix
    auto dual_at = [&](double s) {
      double conj = 0, pen_conj = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t yi = std::size_t(std::find(m.labels.begin(), m.labels.end(), d.y[i]) - m.labels.begin());
        for (std::size_t k = 0; k < K; ++k) {
          const double qk = (1 - s) * (k == yi ? 1.0 : 0.0) + s * p[i * K + k];
          if (qk > 0) conj += qk * std::log(qk);
        }
      }
      for (double g : G) {
        const double e = s * std::fabs(g) - box;
        if (e > 0) pen_conj += eta < 1 ? e * e / (2 * lam * (1 - eta)) : std::numeric_limits<double>::infinity();
      }
      return -conj / double(n) - pen_conj;
    };
    const double s_box = gmax > box ? box / gmax : 1.0;
    EXPECT_NEAR(c.dual, std::max(dual_at(1.0), dual_at(s_box)), 1e-12 * c.primal);
  }
}

// Correlated features: two of the 20 columns are exact combinations of others (x18 = x0 + x1 - x2, x19 = x3 - 2 x4,
// as scikit-learn's make_classification adds "redundant" features), 4 classes from a noisy linear rule. The quadratic
// model is flat along those combinations and only the L1 term moves the weights along them, a little each inner
// pass: the proximal Newton solver took 40 iterations here to 1e-6 (305 on make_classification(20000, 100, 5
// classes)); with the inner passes' Anderson extrapolation and the expanding step, 9.
TEST(Multinomial, ProximalNewtonFollowsTheDriftAlongCorrelatedFeatures) {
  std::uint64_t r = 12345;
  auto u = [&] { return double((r = r * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0; };
  double B[4][8];
  for (auto& row : B)
    for (double& b : row) b = u() * 2 - 1;
  Dataset d;
  d.X.n_rows = 2000;
  d.X.n_cols = 20;
  d.X.offsets.assign(1, 0);
  for (int i = 0; i < 2000; ++i) {
    float x[20];
    for (int j = 0; j < 18; ++j) x[j] = float(u() * 2 - 1);
    x[18] = float(double(x[0]) + x[1] - x[2]);
    x[19] = float(double(x[3]) - 2.0 * x[4]);
    int y = 0;
    double best = -1e300;
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 8; ++j) s += B[k][j] * x[j];
      s += (u() - 0.5) * 3.0;
      if (s > best) best = s, y = k;
    }
    for (int j = 0; j < 20; ++j) d.X.indices.push_back(j), d.X.values.push_back(x[j]);
    d.X.offsets.push_back(offset_t(d.X.indices.size()));
    d.y.push_back(y);
  }
  d.source = "correlated";
  TrainOptions o;
  o.problem.model = model_spec("multinomial", "l1");
  o.problem.C = 50;
  o.solver.tol = 1e-6;
  const TrainResult res = train(d, o);
  ASSERT_TRUE(res.converged);
  EXPECT_LE(res.columns[0].certificate.gap, 1e-6 * res.columns[0].certificate.primal);
  EXPECT_NEAR(res.columns[0].certificate.primal, 0.955772982, 2e-9);  // (40 iterations before: 0.955772982278)
  EXPECT_LE(res.columns[0].epochs, 15);                                // (9 measured; 40 before)
}

// The L1 multinomial model at weak regularization (iris.scale, C = 2e7): the rescaled dual point keeps the relative
// gap high (0.71 at iteration 100) while W converges, then it falls. The epoch driver's rate rule stopped the fit
// at 100 iterations ("not reachable at this rate"); the proximal solver stops on its own evidence only
// (EpochDriver::own_stall_rules), and certifies. (At C = 1e5, this test's case before the extrapolated inner passes,
// the plateau is gone: certified in 38 iterations.)
TEST(Multinomial, ProximalNewtonGetsPastThePlateauOfItsGap) {
  TrainOptions o;
  o.problem.model = model_spec("multinomial", "l1");
  o.problem.C = 2e7;
  const TrainResult r = train(dataset("iris.scale"), o);
  EXPECT_TRUE(r.converged);
  EXPECT_GT(r.columns[0].epochs, 100);  // (110 measured)
  EXPECT_LE(r.columns[0].certificate.gap, 1e-4 * r.columns[0].certificate.primal);
}

// ProblemOptions::classes (train.hpp): a class without a sample still gets its weight column, one-vs-rest (a column
// with no positive sample, certified) and multinomial (a softmax column), as scikit-learn fits a cross-validation
// fold whose training part lacks a class; what is given is checked, with the errors' text.
TEST(ClassLabels, AClassWithoutASampleStillTrainsItsColumn) {
  const Dataset& d = dataset("iris.scale");  // labels 1, 2, 3
  Dataset two = d;                    // classes 1 and 2 only
  two.y.clear();
  std::vector<index_t> rows;
  for (index_t i = 0; i < d.X.n_rows; ++i)
    if (d.y[i] != 3) rows.push_back(i), two.y.push_back(d.y[i]);
  two.X = select_rows(d.X, rows);
  for (const char* model : {"logistic", "multinomial"}) {
    TrainOptions o;
    o.problem.model = model_spec(model);
    o.solver.tol = 1e-10;
    o.solver.max_epochs = 10000;
    o.problem.classes = {1, 2, 3};
    const TrainResult r = train(two, o);
    ASSERT_TRUE(r.converged) << model;
    EXPECT_EQ(r.model.nr_class, 3) << model;
    EXPECT_EQ(r.model.labels, (std::vector<double>{1, 2, 3})) << model;
    for (const ColumnReport& c : r.columns) EXPECT_LE(c.certificate.gap, 1e-10 * c.certificate.primal) << model;
    // The certified objective is the one recomputed here with class 3's column (softmax: every column; one-vs-rest:
    // class 3's column, whose labels are all -1: (1/n) sum_i log(1 + exp(z_i)) + lambda ||w_3||^2 / 2).
    if (std::string(model) == "multinomial") {
      EXPECT_NEAR(r.columns[0].certificate.primal, test::primal_objective(r.model, two),
                  1e-12 * r.columns[0].certificate.primal);
    } else {
      const std::vector<double> z = decision_function(r.model, two.X);
      double loss = 0, l2 = 0;
      for (index_t i = 0; i < two.X.n_rows; ++i) loss += std::log1p(std::exp(z[3 * i + 2]));
      for (std::size_t j = 2; j < r.model.w.size(); j += 3) l2 += r.model.w[j] * r.model.w[j];
      const double P = loss / two.X.n_rows + 0.5 * r.model.lambda * l2;
      EXPECT_NEAR(r.columns[2].certificate.primal, P, 1e-12 * P);
    }
  }
  auto message = [&](std::vector<double> classes) {
    TrainOptions o;
    o.problem.classes = std::move(classes);
    try {
      train(d, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({1}), "classes: at least two are needed, got 1");
  EXPECT_EQ(message({1, 3, 2}), "classes must be strictly ascending: classes[2] = 2 after 3");
  EXPECT_EQ(message({1, NAN}), "classes[1] = nan is not a finite number");
  EXPECT_EQ(message({1, 2}), "label 3 of sample 100 is not among the 2 classes given");
}

// The stall rule of the epoch driver (issue 18; docs/conventions.md, "Stalls"): certificates whose objective and gap
// no longer move by more than 1e-13 |P| stop the fit after 10 certificates and 20 epochs, with the message; a gap that
// still moves (even upwards, even slowly) is progress.
TEST(StallRule, FrozenCertificatesStopWithTheMessageAndAMovingGapDoesNot) {
  SolverOptions o;
  o.tol = 1e-4;
  o.max_epochs = 1000;
  {  // primal: P frozen at 2, D frozen at 1 (relative gap 0.5), certificates every 4 epochs
    SolveResult res;
    EpochDriver driver(o, res, Formulation::primal);
    int stopped_at = 0;
    for (int e = 4; e <= 400 && !stopped_at; e += 4) {
      Certificate c;
      c.primal = 2.0 + (e % 8 == 0 ? 1e-14 : 0.0);  // rounding-level wobble
      c.dual = 1.0;
      c.gap = c.primal - c.dual;
      if (driver.record(e, c, {}, {}) == EpochDriver::Stop::stalled) stopped_at = e;
    }
    // The first certificate is progress (epoch 4); the 10th quiet one after it is at epoch 44, 40 epochs later.
    EXPECT_EQ(stopped_at, 44);
    Certificate last{2.0, 1.0, 1.0};
    EXPECT_EQ(driver.stall_report(last),
              "no measurable progress in the last 40 epochs (the primal objective P did not improve and the gap P - D "
              "did not change by more than 1e-13 |P|): relative gap 5.000e-01, tolerance 1.0e-04 is not reachable on "
              "this data (float32 values, certificates in double precision); the smallest relative gap reached is "
              "5.0e-01");
    Certificate done{2.0, 2.0 - 1e-5, 1e-5};
    EXPECT_EQ(driver.stall_report(done), "");  // a certified final point has no stall to report
  }
  {  // dual: D frozen but the gap wanders by 1e-6 (P moving up and down): progress for this rule, which never fires;
     // the rate rule (below) stops it at epoch 100, the first it looks at, since the smallest gap does not fall.
    SolveResult res;
    o.max_epochs = 400;
    EpochDriver driver(o, res, Formulation::dual);
    EpochDriver::Stop last = EpochDriver::Stop::none;
    int e = 0;
    Certificate c;
    while (e < 400 && last == EpochDriver::Stop::none) {
      ++e;
      c.dual = 1.0;
      c.primal = 2.0 + ((e / 7) % 2 ? 1e-6 : 0.0);
      c.gap = c.primal - c.dual;
      last = driver.record(e, c, {}, {});
    }
    EXPECT_EQ(last, EpochDriver::Stop::stalled);
    EXPECT_EQ(e, 100);
    EXPECT_EQ(driver.stall_report(c),
              "no measurable progress in the last 50 epochs (the relative gap went from 5.000002e-01 at epoch "
              "50 to 5.000000e-01 at its smallest, falling by 1.0e-08 of its logarithm per epoch, not faster in "
              "the last 25 epochs than in the 25 before; extrapolated, it reaches 4.999500e-01 in the next "
              "10000 epochs, the larger of 100 times the 100 so far and the budget left, and the dual objective "
              "D moves by 0.0e+00 |P| in them, 0.0e+00 |P| in the last 50): relative gap 5.000e-01, tolerance "
              "1.0e-04 is not reachable at this rate; the smallest relative gap reached is 5.0e-01");
  }
}

// The rate rule of the epoch driver (issue 18; docs/conventions.md, "Stalls"): a gap that still moves, but whose
// extrapolated fall (at the rate of the window from e/2 to e, or growing as it grew from the window's first half to
// its second) cannot reach the tolerance within 100 times the epochs so far, while the objective would not move by
// tol |P| at its pace either.
TEST(StallRule, AGapCreepingTooSlowlyStopsAndAnAcceleratingOneDoesNot) {
  SolverOptions o;
  o.tol = 1e-4;
  o.max_epochs = 5000;
  // Certificates every 4 epochs: P = primal(e), gap = gap(e); returns the epoch and kind of the stop.
  const auto run = [&](Formulation f, auto primal, auto gap, std::string* stalled) {
    SolveResult res;
    EpochDriver driver(o, res, f);
    for (int e = 4;; e += 4) {
      Certificate c;
      c.primal = primal(e);
      c.gap = gap(e);
      c.dual = c.primal - c.gap;
      if (const EpochDriver::Stop s = driver.record(e, c, {}, {}); s != EpochDriver::Stop::none) {
        if (stalled) *stalled = driver.stall_report(c);
        return std::pair{e, s};
      }
    }
  };
  const auto flat = [](int) { return 2.0; };
  const auto creep = [](int e) { return 1.0 + 1e-3 / e; };  // relative gap 0.5 + 5e-4 / e: moves, ever slower
  {  // P flat, the gap creeping: stopped at epoch 100, the first the rule looks at (the floor rule never fires).
    std::string msg;
    EXPECT_EQ(run(Formulation::primal, flat, creep, &msg), std::pair(100, EpochDriver::Stop::stalled));
    EXPECT_EQ(msg,
              "no measurable progress in the last 52 epochs (the relative gap went from 5.000104e-01 at epoch "
              "48 to 5.000050e-01 at its smallest, falling by 2.1e-07 of its logarithm per epoch, not faster in "
              "the last 28 epochs than in the 24 before; extrapolated, it reaches 4.989644e-01 in the next "
              "10000 epochs, the larger of 100 times the 100 so far and the budget left, and the primal "
              "objective P moves by 0.0e+00 |P| in them, 0.0e+00 |P| in the last 52): relative gap 5.000e-01, "
              "tolerance 1.0e-04 is not reachable at this rate; the smallest relative gap reached is 5.0e-01");
  }
  {  // The same gap in the dual with D = 1 flat (P = D + gap): the same stop, naming D.
    std::string msg;
    EXPECT_EQ(run(Formulation::dual, [&](int e) { return 1.0 + creep(e); }, creep, &msg),
              std::pair(100, EpochDriver::Stop::stalled));
    EXPECT_NE(msg.find("and the dual objective D moves by 0.0e+00 |P| in them"), std::string::npos) << msg;
  }
  {  // The same gap with P still descending (by 1e-3 / e): P would move by more than tol |P|, not stopped.
    o.max_epochs = 400;
    EXPECT_EQ(run(Formulation::primal, [](int e) { return 2.0 + 1e-3 / e; }, creep, nullptr),
              std::pair(400, EpochDriver::Stop::budget));
    o.max_epochs = 5000;
  }
  {  // A plateau that accelerates out (relative gap exp(-(e/400)^4) / 2, P flat): at epoch 100 the window's rate
     // (7.1e-5 per epoch) would need 1.3e5 epochs, but it grows 2.9 times per half window: converged at epoch 684.
    EXPECT_EQ(run(Formulation::primal, flat, [](int e) { return std::exp(-std::pow(e / 400.0, 4)); }, nullptr),
              std::pair(684, EpochDriver::Stop::converged));
  }
}

namespace {
// `d` with every column written twice (columns j and j + p equal), its first `rows` rows (0: all).
Dataset duplicated_columns(const Dataset& d, index_t rows = 0) {
  const index_t p = d.X.n_cols, n = rows > 0 ? std::min(rows, d.X.n_rows) : d.X.n_rows;
  Dataset dup;
  dup.source = d.source + " (columns duplicated)";
  dup.y.assign(d.y.begin(), d.y.begin() + n);
  dup.X.n_rows = n;
  dup.X.n_cols = 2 * p;
  for (index_t i = 0; i < n; ++i) {
    for (int copy = 0; copy < 2; ++copy)
      for (offset_t k = d.X.offsets[i]; k < d.X.offsets[i + 1]; ++k) {
        dup.X.indices.push_back(d.X.indices[k] + copy * p);
        dup.X.values.push_back(d.X.values[k]);
      }
    dup.X.offsets.push_back(static_cast<offset_t>(dup.X.indices.size()));
  }
  return dup;
}
}  // namespace

// Issue 18's case, small: L1 logistic at C = 1e12 on a9a's first 2000 rows with duplicated columns (sequential
// solver). P is flat to 1e-13 from epoch ~500 but the gap creeps (relative gap 1.46557 to 1.46548 from epoch 361 to
// 1500), so the floor rule never fires and it ran to the budget (1500 epochs: 44 s); the rate rule stops it at epoch
// 322 (325 from the CLI on the same rows), where P moves by 4e-7 |P| per 160 epochs. heart_scale with duplicated columns
// (same C) plateaus near relative gap 1.58 from epoch 17 to 100 and still certifies, at epoch 364 (520 before the
// full-row kernels of forms.hpp: its 270-sample columns are full, and the rounding of v's updates steers this
// ill-posed problem's plateau).
// A dual ridge on housing_scale with every value times 1e6 (relative gap 1 - 1e-11, D rising by 3 per epoch against
// P ~ 1e14) ran 5000 epochs; now it stops at epoch 133 (sequential; 109 with the CLI's SySCD).
TEST(StallRule, SlowGapsOnRealDataStopAndAPlateauThatEndsStillConverges) {
  TrainOptions o;
  o.solver.solver = SolverKind::sequential;
  o.problem.model = model_spec("logistic", "l1");
  o.problem.C = 1e12;
  o.solver.tol = 1e-4;
  {
    const TrainResult r = train(duplicated_columns(dataset("a9a"), 2000), o);
    const ColumnReport& c = r.columns.at(0);
    EXPECT_FALSE(c.converged);
    EXPECT_EQ(c.epochs, 322);
    EXPECT_EQ(c.stalled,
              "no measurable progress in the last 161 epochs (the relative gap was 1.465325e+00 at epoch 161 "
              "and not smaller since; extrapolated, it reaches 1.465325e+00 in the next 32200 epochs, the "
              "larger of 100 times the 322 so far and the budget left, and the primal objective P moves by "
              "8.5e-05 |P| in them, 4.2e-07 |P| in the last 161): relative gap 1.466e+00, tolerance 1.0e-04 is "
              "not reachable at this rate; the smallest relative gap reached is 1.5e+00");
  }
  {
    const TrainResult r = train(duplicated_columns(dataset("heart_scale")), o);
    EXPECT_TRUE(r.columns.at(0).converged);
    EXPECT_EQ(r.columns.at(0).epochs, 364);
    EXPECT_EQ(r.columns.at(0).stalled, "");
  }
  {
    Dataset h = dataset("housing_scale");
    for (float& x : h.X.values) x *= 1e6f;
    for (double& y : h.y) y *= 1e6;
    TrainOptions ridge;
    ridge.solver.solver = SolverKind::sequential;
    ridge.problem.model = model_spec("ridge");
    ridge.problem.formulation = parse_formulation("dual");
    const TrainResult r = train(h, ridge);
    const ColumnReport& c = r.columns.at(0);
    EXPECT_FALSE(c.converged);
    EXPECT_EQ(c.epochs, 133);
    EXPECT_EQ(c.stalled,
              "no measurable progress in the last 68 epochs (the relative gap went from 1.000000e+00 at epoch "
              "65 to 1.000000e+00 at its smallest, falling by 3.2e-13 of its logarithm per epoch, not faster in "
              "the last 36 epochs than in the 32 before; extrapolated, it reaches 1.000000e+00 in the next "
              "13300 epochs, the larger of 100 times the 133 so far and the budget left, and the dual objective "
              "D moves by 1.8e-09 |P| in them, 9.2e-12 |P| in the last 68): relative gap 1.000e+00, tolerance "
              "1.0e-04 is not reachable at this rate; the smallest relative gap reached is 1.0e+00");
  }
}
