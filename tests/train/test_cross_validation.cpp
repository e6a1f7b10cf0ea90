// SPDX-License-Identifier: Apache-2.0
// Cross-validation and the search of C (bindings/train cross_validation.hpp): stratified folds, predictions from the
// model that did not see the sample, determinism, warm starts that reach the cold optimum's score.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "hetglm/cross_validation.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "hetglm/rng.hpp"

namespace {
hetglm::Dataset load(const std::string& name) { return hetglm::read_libsvm(std::string(HETGLM_DATA_DIR) + "/" + name); }
}  // namespace

TEST(CrossValidation, StratifiedFoldsKeepEveryClassShare) {
  const hetglm::Dataset d = load("dna.scale");  // three classes
  const std::vector<int> fold = hetglm::make_folds(d.y, hetglm::FoldKind::stratified, 5, 7);
  std::map<double, std::vector<int>> per_class;  // class -> count per fold
  std::vector<int> sizes(5, 0);
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    ASSERT_GE(fold[i], 0);
    ASSERT_LT(fold[i], 5);
    per_class[d.y[i]].resize(5);
    ++per_class[d.y[i]][fold[i]];
    ++sizes[fold[i]];
  }
  for (const auto& [label, counts] : per_class)
    EXPECT_LE(*std::max_element(counts.begin(), counts.end()) - *std::min_element(counts.begin(), counts.end()), 1)
        << "class " << label;
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()), 1);
  // The seed decides the folds.
  EXPECT_EQ(hetglm::make_folds(d.y, hetglm::FoldKind::stratified, 5, 7), fold);
  EXPECT_NE(hetglm::make_folds(d.y, hetglm::FoldKind::stratified, 5, 8), fold);
  // Regression folds: a permutation cut into nearly equal parts.
  const std::vector<int> r = hetglm::make_folds(d.y, hetglm::FoldKind::random, 3, 1);
  std::vector<int> rs(3, 0);
  for (int f : r) ++rs[f];
  EXPECT_LE(*std::max_element(rs.begin(), rs.end()) - *std::min_element(rs.begin(), rs.end()), 1);
  EXPECT_THROW(hetglm::make_folds(d.y, hetglm::FoldKind::stratified, 1, 1), hetglm::InvalidArgument);
  EXPECT_THROW(hetglm::make_folds({1.0, -1.0}, hetglm::FoldKind::stratified, 3, 1), hetglm::InvalidArgument);
}

// LIBLINEAR's folds: its shuffle (linear.cpp cross_validation(): j = i + rand() % (l - i), swap) with glibc's rand()
// after srand(1), cut at k l / n_folds. GlibcRandom is glibc's generator; on glibc it is compared with rand() itself.
TEST(CrossValidation, LiblinearFoldsAreItsRandShuffleAfterSrand1) {
  hetglm::GlibcRandom g(1);
  // glibc's first values of rand() after srand(1), on any platform.
  EXPECT_EQ(g.next(), 1804289383);
  EXPECT_EQ(g.next(), 846930886);
  EXPECT_EQ(g.next(), 1681692777);
  const hetglm::Dataset d = load("heart_scale");
  const int l = static_cast<int>(d.y.size());
  const std::vector<int> fold = hetglm::make_folds(d.y, hetglm::FoldKind::liblinear, 5, 1);
  EXPECT_EQ(hetglm::make_folds(d.y, hetglm::FoldKind::liblinear, 5, 12345), fold);  // no seed
  std::vector<int> sizes(5, 0);
  for (int f : fold) ++sizes.at(static_cast<std::size_t>(f));
  EXPECT_EQ(sizes, (std::vector<int>{54, 54, 54, 54, 54}));
  // The first fold holds perm[0 .. 54): perm[0] = rand() % 270 with rand()'s first value, and so on.
  EXPECT_EQ(fold[1804289383 % 270], 0);
#ifdef __GLIBC__
  std::srand(1);
  hetglm::GlibcRandom h(1);
  for (int k = 0; k < 100000; ++k) ASSERT_EQ(h.next(), std::rand()) << "value " << k;
  // LIBLINEAR's code, with the C library's rand().
  for (int n_folds : {5, 7}) {
    std::srand(1);
    std::vector<int> perm(static_cast<std::size_t>(l)), ref(static_cast<std::size_t>(l));
    for (int i = 0; i < l; ++i) perm[i] = i;
    for (int i = 0; i < l; ++i) std::swap(perm[i], perm[i + std::rand() % (l - i)]);
    for (int k = 0; k < n_folds; ++k)
      for (int j = k * l / n_folds; j < (k + 1) * l / n_folds; ++j) ref[perm[j]] = k;
    EXPECT_EQ(hetglm::make_folds(d.y, hetglm::FoldKind::liblinear, n_folds, 1), ref) << n_folds << " folds";
  }
#endif
  // cross_validate records the kind and uses these folds; unset is stratified (classifier) / random (regression).
  hetglm::TrainOptions o;
  hetglm::CvOptions cv;
  cv.folds = hetglm::FoldKind::liblinear;
  const hetglm::CvResult r = hetglm::cross_validate(d, o, cv);
  EXPECT_EQ(r.fold_kind, hetglm::FoldKind::liblinear);
  EXPECT_EQ(r.fold, fold);
  EXPECT_EQ(hetglm::resolve_fold_kind(std::nullopt, o), hetglm::FoldKind::stratified);
  hetglm::TrainOptions ridge;
  ridge.problem.model = hetglm::model_spec("ridge");
  EXPECT_EQ(hetglm::resolve_fold_kind(std::nullopt, ridge), hetglm::FoldKind::random);
  try {
    hetglm::resolve_fold_kind(hetglm::FoldKind::stratified, ridge);
    ADD_FAILURE() << "no error";
  } catch (const hetglm::InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "--folds stratified: --model ridge is a regression (no classes to stratify); use --folds "
                           "random or --folds liblinear");
  }
  try {
    hetglm::parse_fold_kind("loo");
    ADD_FAILURE() << "no error";
  } catch (const hetglm::InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "--folds: unknown value 'loo' (expected liblinear, stratified or random)");
  }
  for (hetglm::FoldKind k : {hetglm::FoldKind::liblinear, hetglm::FoldKind::stratified, hetglm::FoldKind::random})
    EXPECT_EQ(hetglm::parse_fold_kind(hetglm::fold_kind_name(k)), k);
}

// Each prediction is the one of a model trained with train() on the other folds, whichever threads ran the folds.
TEST(CrossValidation, PredictionsComeFromTheModelThatDidNotSeeTheSample) {
  const hetglm::Dataset d = load("heart_scale");
  hetglm::TrainOptions o;
  o.problem.C = 0.5;
  o.solver.tol = 1e-8;
  hetglm::CvOptions cv;
  cv.n_folds = 4;
  cv.seed = 3;
  const hetglm::CvResult r = hetglm::cross_validate(d, o, cv);
  ASSERT_EQ(r.folds.size(), 4u);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.fold, hetglm::make_folds(d.y, hetglm::FoldKind::stratified, 4, 3));
  const int f = 2;
  std::vector<hetglm::index_t> train_rows, test_rows;
  for (std::size_t i = 0; i < d.y.size(); ++i) (r.fold[i] == f ? test_rows : train_rows).push_back(i);
  hetglm::Dataset sub;
  sub.X = hetglm::select_rows(d.X, train_rows);
  for (auto i : train_rows) sub.y.push_back(d.y[i]);
  hetglm::TrainOptions one = o;
  one.solver.n_threads = 1;
  const hetglm::TrainResult m = hetglm::train(sub, one);
  const std::vector<double> pred = hetglm::predict(m.model, hetglm::select_rows(d.X, test_rows));
  for (std::size_t k = 0; k < test_rows.size(); ++k) EXPECT_EQ(r.predictions[test_rows[k]], pred[k]);
  std::int64_t correct = 0;
  for (std::size_t i = 0; i < d.y.size(); ++i) correct += r.predictions[i] == d.y[i];
  EXPECT_EQ(r.score.correct, correct);
  EXPECT_DOUBLE_EQ(r.score.accuracy, double(correct) / d.y.size());
  // Folds run side by side or one after another: the same score (one thread per fold: the sequential solver).
  hetglm::CvOptions serial = cv;
  serial.fold_threads = 1;
  EXPECT_EQ(hetglm::cross_validate(d, o, serial).predictions, r.predictions);
}

// Along the path every fold starts from its solution at the previous C; the scores equal those of cold fits at the
// same C (up to the tolerance), and the best C is the first with the best score.
TEST(CrossValidation, WarmStartedPathMatchesColdFits) {
  const hetglm::Dataset d = load("heart_scale");
  hetglm::TrainOptions o;
  o.solver.tol = 1e-9;
  o.problem.formulation = hetglm::FormulationRequest::dual;
  hetglm::CvOptions cv;
  cv.n_folds = 3;
  hetglm::CPathOptions po;
  po.start_C = 0.125;
  po.max_C = 4;
  std::vector<double> seen;
  po.on_step = [&](const hetglm::CPathStep& s) { seen.push_back(s.C); };
  const hetglm::CPathResult path = hetglm::search_C(d, o, cv, po);
  EXPECT_EQ(seen, (std::vector<double>{0.125, 0.25, 0.5, 1, 2, 4}));
  EXPECT_EQ(path.stop_reason, "maximum C reached");
  hetglm::CvScore best;
  double best_C = 0;
  for (std::size_t k = 0; k < path.path.size(); ++k) {
    hetglm::TrainOptions cold = o;
    cold.problem.C = path.path[k].C;
    const hetglm::CvResult r = hetglm::cross_validate(d, cold, cv);
    EXPECT_EQ(r.score.correct, path.path[k].score.correct) << "C = " << path.path[k].C;
    EXPECT_EQ(path.path[k].warm, k > 0);
    if (k == 0 || r.score.better_than(best)) best = r.score, best_C = path.path[k].C;
  }
  EXPECT_EQ(path.best_C, best_C);
  EXPECT_EQ(path.best.correct, best.correct);
  o.problem.lambda = 0.1;
  EXPECT_THROW(hetglm::search_C(d, o, cv, po), hetglm::InvalidArgument);
}

// The default start is LIBLINEAR's calc_start_C; with c_factor 2 (LIBLINEAR's SVR C) in LIBLINEAR's units.
TEST(CrossValidation, DefaultStartIsLiblinearsRule) {
  const hetglm::Dataset d = load("heart_scale");
  double max_sq = 0;
  for (hetglm::index_t i = 0; i < d.X.n_rows; ++i) {
    double s = 1;  // the -B 1 feature
    for (float v : d.X.row_values(i)) s += double(v) * v;
    max_sq = std::max(max_sq, s);
  }
  hetglm::TrainOptions o;
  o.problem.bias = 1;
  EXPECT_EQ(hetglm::default_start_C(d, o), std::pow(2.0, std::floor(std::log2(1 / (270 * max_sq)))));
  o.problem.model = hetglm::model_spec("squared-hinge");
  EXPECT_EQ(hetglm::default_start_C(d, o), std::pow(2.0, std::floor(std::log2(1 / (2 * 270 * max_sq)))));
  const hetglm::Dataset h = load("housing_scale");
  hetglm::TrainOptions r;
  r.problem.model = hetglm::model_spec("ridge");
  double sa = 0, sq = 0, mx = 0;
  for (double t : h.y) sa += std::fabs(t), sq += t * t;
  for (hetglm::index_t i = 0; i < h.X.n_rows; ++i) {
    double s = 0;
    for (float v : h.X.row_values(i)) s += double(v) * v;
    mx = std::max(mx, s);
  }
  EXPECT_EQ(hetglm::default_start_C(h, r, 2), std::pow(2.0, std::floor(std::log2(0.01 * sq / (8 * sa * sa * mx)))));
}

// An L1 penalty keeps w = 0 for the smallest C of the path: that is not LIBLINEAR's "w unchanged" end of the search.
TEST(CrossValidation, LassoPathDoesNotStopWhileWIsZero) {
  const hetglm::Dataset h = load("housing_scale");
  hetglm::TrainOptions o;
  o.problem.model = hetglm::model_spec("lasso");
  hetglm::CPathOptions po;
  po.max_C = 1;
  const hetglm::CPathResult r = hetglm::search_C(h, o, {}, po);
  EXPECT_EQ(r.stop_reason, "maximum C reached");
  EXPECT_GT(r.path.size(), 10u);
  EXPECT_GT(r.best_C, r.path.front().C);
  EXPECT_LT(r.best.mse, r.path.front().score.mse / 10);
}
