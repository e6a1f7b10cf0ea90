# SPDX-License-Identifier: Apache-2.0
"""scikit-learn parity (issue 20): verbose output of regressors, penalty=None, multi-target Ridge, warm starts for
every estimator, and multinomial (softmax) logistic regression against scikit-learn's lbfgs."""
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn import linear_model as sklm
from sklearn.base import clone
from sklearn.datasets import load_digits, load_iris, make_classification, make_regression

import hetglm

# The behaviour compared here is scikit-learn 1.9's (l1_ratio choosing the penalty, LogisticRegressionCV's
# use_legacy_attributes and l1_ratios grid, float32 kept by more estimators): older versions differ by design.
sklearn_1_9 = pytest.mark.skipif(tuple(int(v) for v in __import__("sklearn").__version__.split(".")[:2]) < (1, 9),
                                 reason="compares with scikit-learn 1.9's behaviour")


def rel(a, b):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) / np.linalg.norm(np.ravel(b))


# ------------------------------------------------------------------------------------------------ verbose
def test_verbose_regressors_print_no_column_label(housing, capsys):
    X, y = housing
    for est in (hetglm.Ridge(verbose=1), hetglm.Lasso(alpha=0.1, verbose=1)):
        est.fit(X, y)
        lines = capsys.readouterr().out.splitlines()
        assert lines and all(line.startswith("[hetglm] epoch ") for line in lines), lines[:3]
        assert "nan" not in "".join(lines)
    hetglm.LogisticRegression(verbose=1).fit(X, y > np.median(y))
    lines = capsys.readouterr().out.splitlines()
    assert lines and lines[0].startswith("[hetglm] column 0 label 1.0 epoch 1 "), lines[0]


# ------------------------------------------------------------------------------------------------ dtypes, l1_ratio
@sklearn_1_9
def test_float32_input_gives_sklearns_dtypes():
    """float32 X: coef_, intercept_ and the predictions follow scikit-learn 1.9's estimator of the same name (checked
    side by side, dense and CSR, and float64 X beside them): float32 for Lasso, ElasticNet, Ridge, their CV
    estimators and LogisticRegression (but with solver='liblinear'), float64 for LinearSVC and LogisticRegressionCV;
    a fitted intercept of one target a numpy scalar of X's dtype, one not fitted the float 0.0 (also for several
    targets); LassoCV's mse_path_ float32 only when y is too; float64 X at predict time gives float64 predictions."""
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4)).astype(np.float32)
    yr = (X @ np.arange(1.0, 5.0) + rng.standard_normal(120)).astype(np.float32)
    yc, y3, Y2 = (yr > 0).astype(int), np.digitize(yr, [-2, 2]), np.c_[yr, -yr]

    def kinds(est, Xp):
        out = {"coef_": est.coef_.dtype, "intercept_": (type(est.intercept_), np.asarray(est.intercept_).dtype),
               "predict": est.predict(Xp).dtype, "predict64": est.predict(Xp.astype(np.float64)).dtype}
        for m in ("decision_function", "predict_proba"):
            if hasattr(est, m):
                out[m] = getattr(est, m)(Xp).dtype
        if hasattr(est, "mse_path_"):
            out["mse_path_"] = est.mse_path_.dtype
        return out

    cases = [("Lasso", dict(alpha=0.01), yr), ("Lasso", dict(alpha=0.01, fit_intercept=False), yr),
             ("LassoCV", dict(cv=3), yr.astype(np.float64)), ("Ridge", {}, Y2[:, :1]),
             ("ElasticNet", dict(alpha=0.01), yr), ("Ridge", {}, yr), ("Ridge", dict(fit_intercept=False), yr),
             ("Ridge", {}, Y2), ("Ridge", dict(fit_intercept=False), Y2), ("LassoCV", dict(cv=3), yr),
             ("ElasticNetCV", dict(cv=3), yr), ("RidgeCV", {}, yr), ("RidgeCV", {}, Y2),
             ("LogisticRegression", {}, yc), ("LogisticRegression", dict(fit_intercept=False), y3),
             ("LogisticRegression", dict(solver="liblinear"), yc), ("LogisticRegressionCV", dict(Cs=3), yc),
             ("LinearSVC", {}, yc)]
    from sklearn import svm
    for name, params, y in cases:
        for data in (X, sp.csr_matrix(X), X.astype(np.float64)):
            theirs = (getattr(sklm, name, None) or getattr(svm, name))(**params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs.fit(data, y)
            ours = getattr(hetglm, name)(**params).fit(data, y)
            assert kinds(ours, data[:5]) == kinds(theirs, data[:5]), (name, params, type(data))


@sklearn_1_9
def test_every_fitted_attribute_of_sklearns_is_there_with_its_shape():
    """Every public fitted attribute scikit-learn 1.9's estimator of the same name sets (name ending in '_') is set
    by ours too, with the same shape (and the same type: a dict where scikit-learn's is a dict), for two classes,
    three classes, one target and two. (Ridge's n_iter_ is None with scikit-learn's default direct solver; ours is
    the epochs, per target as scikit-learn's iterative solvers give it.)"""
    from sklearn import svm
    X, y3 = load_iris(return_X_y=True)
    y2, yr, Y2 = (y3 == 2).astype(int), X[:, 0], np.c_[X[:, 0], X[:, 1]]
    Xr = X[:, 1:]
    cases = [("LogisticRegression", {}, X, y2), ("LogisticRegression", {}, X, y3), ("LinearSVC", {}, X, y2),
             ("LinearSVC", {}, X, y3), ("LogisticRegressionCV", dict(Cs=3), X, y2),
             ("LogisticRegressionCV", dict(Cs=3, l1_ratios=[0.0]), X, y3), ("Lasso", dict(alpha=0.01), Xr, yr),
             ("ElasticNet", dict(alpha=0.01), Xr, yr), ("Ridge", {}, Xr, yr), ("Ridge", {}, Xr, Y2),
             ("LassoCV", {}, Xr, yr), ("ElasticNetCV", dict(l1_ratio=[0.5, 1.0]), Xr, yr), ("RidgeCV", {}, Xr, yr),
             ("RidgeCV", {}, Xr, Y2), ("Ridge", {}, Xr, Y2[:, :1])]
    for name, params, data, y in cases:
        theirs = (getattr(sklm, name, None) or getattr(svm, name))(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.fit(data, y)
        ours = getattr(hetglm, name)(**params).fit(data, y)
        for a in (a for a in vars(theirs) if a.endswith("_") and not a.startswith("_")):
            assert hasattr(ours, a), (name, params, a)
            x, z = getattr(ours, a), getattr(theirs, a)
            if z is None:  # Ridge's n_iter_ with scikit-learn's direct solvers; ours iterates: epochs per target
                assert name.startswith("Ridge") and a == "n_iter_" and np.shape(x) == np.shape(y)[1:]
                continue
            assert isinstance(x, dict) == isinstance(z, dict), (name, a)
            if isinstance(z, dict):
                assert list(x) == list(z) and [np.shape(v) for v in x.values()] == [np.shape(v) for v in z.values()]
            else:
                assert np.shape(x) == np.shape(z), (name, params, a, np.shape(x), np.shape(z))


@sklearn_1_9
def test_l1_ratio_chooses_the_penalty_as_sklearn_1_9():
    """scikit-learn 1.9's LogisticRegression takes the penalty from l1_ratio (its penalty is deprecated: 0, the
    default, is L2, 1 is L1, between is the elastic net): penalty='auto', the default here, does the same, and its
    'deprecated' is taken as 'auto'; an explicit penalty is used as given (older scikit-learn), 'elasticnet' at
    l1_ratio 0 or 1 is the L2 or L1 model, and an l1_ratio strictly between 0 and 1 beside penalty='l2' or 'l1'
    warns that it is not used."""
    X, y = make_classification(n_samples=300, n_features=10, n_informative=4, random_state=2)
    fits = {}
    for key, params in (("l1", dict(l1_ratio=1.0)), ("l1", dict(penalty="l1")), ("l1", dict(penalty="deprecated",
                        l1_ratio=1)), ("l1", dict(penalty="elasticnet", l1_ratio=1.0)),
                        ("en", dict(l1_ratio=0.4)), ("en", dict(penalty="elasticnet", l1_ratio=0.4)),
                        ("l2", {}), ("l2", dict(penalty="l2")), ("l2", dict(penalty="elasticnet", l1_ratio=0))):
        est = hetglm.LogisticRegression(C=0.5, tol=1e-10, fit_intercept=False, **params).fit(X, y)
        assert est.engine_model_["penalty"] == {"l1": "l1", "en": "elastic-net", "l2": "l2"}[key], params
        if key in fits:
            np.testing.assert_array_equal(est.coef_, fits[key])
        fits[key] = est.coef_
    assert np.sum(fits["l1"] == 0) == 2 and np.all(fits["l2"] != 0)
    theirs = sklm.LogisticRegression(C=0.5, l1_ratio=1.0, solver="liblinear", tol=1e-12, max_iter=10000,
                                     fit_intercept=False).fit(X, y)
    assert rel(fits["l1"], theirs.coef_) <= 1e-6
    with pytest.warns(UserWarning, match=r"^l1_ratio=0\.5 is used only with penalty='elasticnet' or 'auto' \(the "
                                         r"default\); penalty='l2' trains the l2 model$"):
        hetglm.LogisticRegression(penalty="l2", l1_ratio=0.5).fit(X, y)
    for params in (dict(l1_ratio=1.5), dict(penalty=None, l1_ratio=1.5), dict(penalty="l2", l1_ratio=1.5)):
        with pytest.raises(ValueError, match=r"^l1_ratio must be a number in \[0, 1\], got 1\.5$"):
            hetglm.LogisticRegression(**params).fit(X, y)


# ------------------------------------------------------------------------------------------------ penalty=None
def test_penalty_none_and_infinite_C_match_unpenalized_sklearn():
    X, y = make_classification(n_samples=400, n_features=8, n_informative=5, n_redundant=0, flip_y=0.2,
                               random_state=0)
    theirs = sklm.LogisticRegression(C=np.inf, solver="newton-cg", tol=1e-12, max_iter=10000).fit(X, y)
    for ours in (hetglm.LogisticRegression(penalty=None, tol=1e-10),
                 hetglm.LogisticRegression(C=np.inf, tol=1e-10)):
        ours.fit(X, y)
        c1 = np.hstack([ours.coef_.ravel(), ours.intercept_])
        c2 = np.hstack([theirs.coef_.ravel(), theirs.intercept_])
        assert rel(c1, c2) <= 1e-6, rel(c1, c2)
        assert ours.lambda_ == pytest.approx(1e-12 / X.shape[0])
        assert ours.duality_gap_ <= 1e-10 * ours.primal_objective_
    with pytest.raises(ValueError, match=r"^penalty must be 'auto', 'l2', 'l1', 'elasticnet' or None, got 'l3'$"):
        hetglm.LogisticRegression(penalty="l3").fit(X, y)


# ------------------------------------------------------------------------------------------------ multi-target Ridge
def test_multi_target_ridge_matches_sklearn(tmp_path):
    X, Y = make_regression(n_samples=200, n_features=10, n_targets=3, noise=1.0, random_state=0)
    ours = hetglm.Ridge(alpha=2.0, tol=1e-12).fit(X, Y)
    theirs = sklm.Ridge(alpha=2.0, solver="cholesky").fit(X, Y)
    assert ours.coef_.shape == (3, 10) and ours.intercept_.shape == (3,)
    # at tol 1e-12 the engine trains on X's float64 values (docs/python.md, "Data"): measured 4.6e-9 (1.2e-8 on a
    # float32 copy of X, whose rounding is then what separates the two)
    assert rel(ours.coef_, theirs.coef_) <= 1e-7
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-6, atol=1e-6)
    assert ours.predict(X).shape == (200, 3)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-6, atol=1e-5)
    assert ours.n_iter_.shape == (3,)
    assert {h["target"] for h in ours.training_history_} == {0, 1, 2}
    one = hetglm.Ridge(alpha=2.0, tol=1e-12).fit(X, Y[:, :1])  # (n, 1): scikit-learn 1.9's shapes (d,) and (1,)
    assert one.coef_.shape == (10,) and one.intercept_.shape == (1,) and one.predict(X).shape == (200,)
    with pytest.raises(ValueError, match=r"^save_model: the model file stores one target; this Ridge was fitted "
                                         r"on 3 targets$"):
        ours.save_model(tmp_path / "m")
    # Lasso and ElasticNet: independent fits per target, as scikit-learn's (they refused y (n, k), and y (n, 1) gave
    # a scalar intercept_ with a DataConversionWarning: found by a hostile trial).
    for Ours, Theirs in [(hetglm.Lasso, sklm.Lasso), (hetglm.ElasticNet, sklm.ElasticNet)]:
        ours_l = Ours(alpha=0.5, tol=1e-12).fit(X, Y)
        theirs_l = Theirs(alpha=0.5, tol=1e-14, max_iter=100000).fit(X, Y)
        assert ours_l.coef_.shape == (3, 10) and ours_l.intercept_.shape == (3,) and ours_l.dual_gap_.shape == (3,)
        assert ours_l.n_iter_.shape == (3,)
        assert rel(ours_l.coef_, theirs_l.coef_) <= 1e-6
        np.testing.assert_allclose(ours_l.intercept_, theirs_l.intercept_, rtol=1e-6, atol=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no DataConversionWarning
            one_l = Ours(alpha=0.5, tol=1e-12).fit(X, Y[:, :1])
        assert one_l.coef_.shape == (10,) and one_l.intercept_.shape == (1,) and np.ndim(one_l.n_iter_) == 0
        with pytest.raises(ValueError, match=rf"^save_model: the model file stores one target; this {Ours.__name__} "
                                             r"was fitted on 3 targets$"):
            ours_l.save_model(tmp_path / "m")
    # alpha per target, as scikit-learn's (shape (n_targets,); one value for all): each target's own fit
    per = hetglm.Ridge(alpha=[0.5, 2.0, 40.0], tol=1e-12).fit(X, Y)
    theirs = sklm.Ridge(alpha=[0.5, 2.0, 40.0], solver="cholesky").fit(X, Y)
    assert rel(per.coef_, theirs.coef_) <= 1e-7
    for t, a in enumerate((0.5, 2.0, 40.0)):  # (the means of a column of Y and of y: another order of summation)
        np.testing.assert_allclose(per.coef_[t], hetglm.Ridge(alpha=a, tol=1e-12).fit(X, Y[:, t]).coef_, rtol=1e-12)
    np.testing.assert_array_equal(hetglm.Ridge(alpha=[2.0], tol=1e-12).fit(X, Y).coef_, ours.coef_)
    np.testing.assert_array_equal(hetglm.Ridge(alpha=np.array(2.0), tol=1e-12).fit(X, Y).coef_, ours.coef_)
    for alpha, msg in (([1.0, 2.0], r"^Number of targets and number of penalties do not correspond: 2 != 3$"),
                       ([1.0, -2.0, 3.0], r"^alpha\[1\] must be a positive finite number, got -2\.0$")):
        with pytest.raises(ValueError, match=msg):
            hetglm.Ridge(alpha=alpha).fit(X, Y)


# ------------------------------------------------------------------------------------------------ warm starts
def test_warm_start_after_a_small_change_of_C_takes_a_third_of_the_epochs_on_a9a(a9a):
    X, y = a9a
    for formulation in ("dual", "primal"):
        est = hetglm.LogisticRegression(C=1.0, tol=1e-8, formulation=formulation, warm_start=True, max_iter=10000)
        est.fit(X, y)
        est.set_params(C=1.1).fit(X, y)
        warm = int(est.n_iter_[0])
        cold = hetglm.LogisticRegression(C=1.1, tol=1e-8, formulation=formulation, max_iter=10000).fit(X, y)
        assert 3 * warm <= int(cold.n_iter_[0]), (formulation, warm, int(cold.n_iter_[0]))
        assert est.primal_objective_ == pytest.approx(cold.primal_objective_, rel=2e-8)
        assert est.duality_gap_ <= 1e-8 * est.primal_objective_


def test_warm_start_is_honoured_by_every_estimator(a9a, housing):
    X, y = a9a
    Xh, yh = housing
    cases = [
        (lambda **k: hetglm.LinearSVC(C=0.5, tol=1e-6, max_iter=20000, **k), "C", 0.55, X[:5000], y[:5000]),
        (lambda **k: hetglm.LinearSVC(C=0.5, loss="hinge", tol=1e-4, max_iter=20000, **k), "C", 0.55,
         X[:5000], y[:5000]),
        (lambda **k: hetglm.Ridge(alpha=1.0, tol=1e-10, formulation="dual", **k), "alpha", 1.1, Xh, yh),
        (lambda **k: hetglm.Ridge(alpha=1.0, tol=1e-10, formulation="primal", **k), "alpha", 1.1, Xh, yh),
        (lambda **k: hetglm.Lasso(alpha=0.01, tol=1e-10, **k), "alpha", 0.011, Xh, yh),
        (lambda **k: hetglm.ElasticNet(alpha=0.01, tol=1e-10, **k), "alpha", 0.011, Xh, yh),
        (lambda **k: hetglm.LogisticRegression(C=1.0, penalty="l1", tol=1e-5, **k), "C", 1.1, X[:5000], y[:5000]),
    ]
    for make, name, value, Xi, yi in cases:
        est = make(warm_start=True).fit(Xi, yi)
        est.set_params(**{name: value}).fit(Xi, yi)
        cold = make().set_params(**{name: value}).fit(Xi, yi)
        warm_epochs, cold_epochs = np.max(est.n_iter_), np.max(cold.n_iter_)
        # (Ridge in the primal on housing: small float64 data, where a Newton iteration is an exact Newton step and
        # solves the quadratic from any start: one iteration cold, nothing left for the warm start to save)
        assert warm_epochs < cold_epochs or warm_epochs == cold_epochs == 1, (est, warm_epochs, cold_epochs)
        assert est.primal_objective_ == pytest.approx(cold.primal_objective_, rel=10 * est.tol)
    # warm_start=False (the default) always starts from zero: the same epochs as a fresh estimator
    est = hetglm.Lasso(alpha=0.01, tol=1e-10).fit(Xh, yh)
    assert est.set_params(alpha=0.011).fit(Xh, yh).n_iter_ == hetglm.Lasso(alpha=0.011, tol=1e-10).fit(Xh, yh).n_iter_
    # fewer samples: a cold start, not an error
    est = hetglm.Ridge(warm_start=True).fit(Xh, yh)
    est.fit(Xh[:100], yh[:100])
    assert est.coef_.shape == (Xh.shape[1],)
    # other features: the previous weights cannot carry over, an error as in scikit-learn (it was a silent cold start)
    for est, Xi, yi in [(hetglm.Ridge(warm_start=True), Xh, yh),
                        (hetglm.LogisticRegression(warm_start=True), X[:500], y[:500])]:
        est.fit(Xi, yi)
        name, nf = type(est).__name__, Xi.shape[1]
        with pytest.raises(ValueError) as e:
            est.fit(Xi[:, :5], yi)
        assert str(e.value) == (f"X has 5 features, but {name} was fitted with {nf} features and warm_start=True "
                                f"starts from that fit; give X the same features or set warm_start=False")
        assert est.set_params(warm_start=False).fit(Xi[:, :5], yi).coef_.shape[-1] == 5


# ------------------------------------------------------------------------------------------------ multinomial
def softmax_objective(X, y_enc, W, C, l1_ratio=0.0):
    """scikit-learn's multinomial objective scaled as the engine's: (1/n) sum_i loss_i
    + (l1_ratio ||W||_1 + (1 - l1_ratio) ||W||^2 / 2) / (C n)."""
    Z = X @ W.T
    n = X.shape[0]
    loss = logsumexp(Z, axis=1) - Z[np.arange(n), y_enc]
    return loss.mean() + (l1_ratio * np.abs(W).sum() + (1 - l1_ratio) * np.sum(W * W) / 2) / (C * n)


def multiclass_set(name, data_dir):
    """iris, digits or dna.scale (dense), as (X, y)."""
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "digits":
        return load_digits(return_X_y=True)
    X, y = hetglm.load_svmlight_file(data_dir / "dna.scale")
    return X.toarray(), y


@pytest.mark.parametrize("name", ["iris", "digits", "dna"])
def test_multinomial_objective_matches_sklearn_lbfgs(name, data_dir):
    X, y = multiclass_set(name, data_dir)
    C = 1.0
    ours = hetglm.LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=200).fit(X, y)
    assert ours.multinomial_ and ours.coef_.shape == (len(np.unique(y)), X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklm.LogisticRegression(C=C, fit_intercept=False, tol=1e-9, max_iter=100000).fit(X, y)
    y_enc = np.searchsorted(ours.classes_, y)
    p_ours = softmax_objective(X, y_enc, ours.coef_, C)
    p_theirs = softmax_objective(X, y_enc, theirs.coef_, C)
    assert abs(p_ours - p_theirs) <= 1e-6 * p_theirs, (p_ours, p_theirs)
    assert p_ours <= p_theirs * (1 + 1e-9)
    # the engine's primal is this objective on the float64 X (tol 1e-12 < float64_tol: the multinomial solver reads
    # the float64 values; docs/formulation.md, "float64 data"), certified by its gap
    assert ours.primal_objective_ == pytest.approx(p_ours, rel=1e-12)
    assert abs(ours.duality_gap_) <= 1e-12 * ours.primal_objective_  # rounding-level negative gaps certify too
    np.testing.assert_allclose(ours.predict_proba(X).sum(axis=1), 1.0)
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.99


@sklearn_1_9
@pytest.mark.parametrize("name", ["iris", "dna"])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_multinomial_l1_objective_matches_sklearn_saga(name, l1_ratio, data_dir):
    # issue 20: the multinomial model with L1 and elastic-net penalties (the engine's proximal Newton solver) against
    # scikit-learn 1.9's saga, which trains the multinomial model for these penalties
    X, y = multiclass_set(name, data_dir)
    C = 0.5
    ours = hetglm.LogisticRegression(C=C, l1_ratio=l1_ratio, fit_intercept=False, tol=1e-10, max_iter=500).fit(X, y)
    assert ours.multinomial_ and ours.coef_.shape == (len(np.unique(y)), X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklm.LogisticRegression(C=C, l1_ratio=l1_ratio, solver="saga", fit_intercept=False, tol=1e-10,
                                         max_iter=20000).fit(X, y)
    y_enc = np.searchsorted(ours.classes_, y)
    p_ours = softmax_objective(X, y_enc, ours.coef_, C, l1_ratio)
    p_theirs = softmax_objective(X, y_enc, theirs.coef_, C, l1_ratio)
    assert abs(p_ours - p_theirs) <= 1e-6 * p_theirs, (p_ours, p_theirs)
    assert p_ours <= p_theirs * (1 + 1e-9)
    assert ours.primal_objective_ == pytest.approx(p_ours, rel=1e-12)
    assert ours.duality_gap_ <= 1e-10 * ours.primal_objective_
    assert np.sum(ours.coef_ == 0) > 0  # the L1 part zeroes weights
    np.testing.assert_allclose(ours.predict_proba(X).sum(axis=1), 1.0)


def test_multinomial_training_accuracy_of_the_issue():
    # issue 20: one-vs-rest gave 0.9267 (iris) and 0.9872 (digits); lbfgs multinomial 0.9733 and 0.9989
    for loader, expected in ((load_iris, 0.9733), (load_digits, 0.9989)):
        X, y = loader(return_X_y=True)
        ours = hetglm.LogisticRegression(tol=1e-10, intercept_scaling=100.0).fit(X, y)
        assert round(ours.score(X, y), 4) >= expected, (loader.__name__, ours.score(X, y))


def test_multinomial_options_and_errors(tmp_path):
    X, y = load_iris(return_X_y=True)
    ovr = hetglm.LogisticRegression(multi_class="ovr").fit(X, y)
    assert not ovr.multinomial_
    for l1_ratio in (1.0, 0.5):  # 'auto' with L1 / elastic net: the multinomial model, as scikit-learn 1.9's saga
        est = hetglm.LogisticRegression(l1_ratio=l1_ratio).fit(X, y)
        assert est.multinomial_ and est.n_iter_.shape == (1,)
        assert hetglm.LogisticRegression(l1_ratio=l1_ratio, multi_class="multinomial").fit(X, y).multinomial_
        assert not hetglm.LogisticRegression(l1_ratio=l1_ratio, multi_class="ovr").fit(X, y).multinomial_
        assert not hetglm.LogisticRegression(l1_ratio=l1_ratio, solver="liblinear").fit(X, y).multinomial_
    with pytest.raises(ValueError, match=r"^multi_class must be 'auto', 'multinomial' or 'ovr', got 'x'$"):
        hetglm.LogisticRegression(multi_class="x").fit(X, y)
    with pytest.raises(ValueError, match=r"^formulation='dual': the multinomial \(softmax\) model is trained in the "
                                         r"primal \(multi_class='ovr' trains one-vs-rest in the dual\)$"):
        hetglm.LogisticRegression(formulation="dual").fit(X, y)
    for device in ("cuda", "opencl", "fpga-sim"):
        with pytest.raises(ValueError, match=rf"^device='{device}': the multinomial \(softmax\) model trains on the CPU "
                                             rf"only, by the Newton solvers \(multi_class='ovr' trains one-vs-rest with "
                                             rf"device='{device}'\)$"):
            hetglm.LogisticRegression(device=device).fit(X, y)
    with pytest.raises(ValueError, match=r"^accel_memory='50%': the multinomial \(softmax\) model trains on the CPU "):
        hetglm.LogisticRegression(accel_memory="50%").fit(X, y)
    assert hetglm.LogisticRegression(accel_memory="").fit(X, y).multinomial_  # '' is no budget, as the engine reads it
    # model files: the CLI's format, softmax probabilities after loading
    est = hetglm.LogisticRegression(tol=1e-8).fit(X, y)
    est.save_model(tmp_path / "iris.model")
    back = hetglm.load_model(tmp_path / "iris.model")
    assert back.multinomial_ and back.n_iter_.shape == (1,)
    np.testing.assert_allclose(back.predict_proba(X), est.predict_proba(X), rtol=1e-12)
    # warm start: a refit at the same C is certified at once
    est = hetglm.LogisticRegression(tol=1e-8, warm_start=True).fit(X, y)
    assert est.fit(X, y).n_iter_[0] <= 1


def test_multinomial_is_bit_identical_for_every_thread_count():
    # 12,000 rows: three chunks of 4096 rows (multinomial.hpp), summed in chunk order whatever the threads
    X, y = make_classification(n_samples=12000, n_features=20, n_informative=10, n_classes=4, random_state=0)
    fits = [hetglm.LogisticRegression(tol=1e-10, n_jobs=n).fit(X, y) for n in (None, 2, 3)]
    for f in fits[1:]:
        np.testing.assert_array_equal(f.coef_, fits[0].coef_)
        assert f.duality_gap_ == fits[0].duality_gap_


# ------------------------------------------------------------------------------------------------ float64 data
def test_float64_input_is_trained_and_certified_on_its_float64_values():
    """float64 X keeps what float32 rounding drops (Matrix.float64); the Newton solver (L2 logistic, squared hinge,
    ridge in the primal) then certifies the float64 problem: its primal_objective_ is P(coef_) computed here in
    float64 to 1e-14, where a float32 copy of X certifies its own objective, 1e-10 or more away from that P."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 30)) * np.exp(0.5 * rng.standard_normal(30))
    y = (X @ rng.standard_normal(30) + rng.standard_normal(3000) > 0).astype(int)
    yc = X @ rng.standard_normal(30) + rng.standard_normal(3000)
    assert hetglm._hetglm.matrix_from_dense(X).float64
    assert not hetglm._hetglm.matrix_from_dense(X.astype(np.float32)).float64
    assert not hetglm._hetglm.matrix_from_dense(X.astype(np.float32).astype(np.float64)).float64  # nothing to keep
    assert not hetglm._hetglm.matrix_from_dense(X, float64=False).float64
    # values below 2^-100, whose remainder float32 cannot hold: float32 values alone (docs/formulation.md)
    assert not hetglm._hetglm.matrix_from_dense(X * 1e-36).float64
    assert hetglm._estimators._float64_for(np.float32(1e-6))  # 9.99999997e-07 as a float32: below 1e-6
    import scipy.sparse as sp
    Xs = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    m = hetglm._hetglm.matrix_from_compressed(Xs.indptr, Xs.indices, Xs.data, 3000, 30, False)
    assert m.float64
    n, C, alpha = X.shape[0], 10.0, 3.0

    def objective(model, data, w):
        z = data @ w
        if model == "logistic":
            return np.mean(np.logaddexp(0, -(2 * y - 1) * z)) + 0.5 / (C * n) * w @ w
        if model == "squared-hinge":
            return np.mean(np.maximum(0, 1 - (2 * y - 1) * z) ** 2) + 0.5 / (C * n) * w @ w
        return 0.5 * np.mean((yc - z) ** 2) + 0.5 * alpha / n * w @ w

    for data in (X, Xs):
        for model, make, target in (
                ("logistic", lambda: hetglm.LogisticRegression(C=C, fit_intercept=False, tol=1e-13), y),
                ("squared-hinge", lambda: hetglm.LinearSVC(C=C, fit_intercept=False, tol=1e-13, dual=False), y),
                ("ridge", lambda: hetglm.Ridge(alpha=alpha, fit_intercept=False, tol=1e-13), yc)):
            est = make().fit(data, target)
            assert est.solver_ == "newton", (model, est.solver_)
            P = objective(model, data, est.coef_.ravel())
            assert abs(est.primal_objective_ - P) <= 1e-14 * P, (model, est.primal_objective_, P)
            assert est.duality_gap_ <= 1e-13 * P
            e32 = make().fit(data.astype(np.float32), target)
            P32 = objective(model, data, e32.coef_.ravel())
            assert abs(e32.primal_objective_ - P32) >= 1e-10 * P32, (model, e32.primal_objective_, P32)
            # at a tol of float64_tol or looser the float64 values would serve nothing: float32 values, the same fit
            loose = make().set_params(tol=hetglm._hetglm.float64_tol)
            np.testing.assert_array_equal(loose.fit(data, target).engine_model_["w"],
                                          clone(loose).fit(data.astype(np.float32), target).engine_model_["w"])


def test_float64_input_in_the_dual_and_multinomial_solvers():
    """The dual formulations (SDCA: LogisticRegression(dual=True), LinearSVC with either loss in the dual, sequential
    on 1 thread and SySCD on 2) and the multinomial solver read float64 input's float64 values at tol < float64_tol
    too: the reported primal_objective_ is P(coef_) computed here in float64 to 1e-14, where a float32 copy of X
    certifies its own objective, 1e-10 or more away (docs/formulation.md, "float64 data")."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 20)) * np.exp(0.5 * rng.standard_normal(20))
    z = X @ rng.standard_normal((20, 3)) + rng.standard_normal((2000, 3))
    y2, y3 = (z[:, 0] > 0).astype(int), z.argmax(axis=1)
    n, C = X.shape[0], 1.0

    def objective(model, data, est):
        W = est.coef_.T
        Z = data @ W
        if model == "multinomial":
            loss = np.mean(np.logaddexp.reduce(Z, axis=1) - Z[np.arange(n), y3])
            return loss + 0.5 / (C * n) * np.sum(W * W)
        m = (2 * y2 - 1) * Z.ravel()
        loss = {"logistic": np.logaddexp(0, -m), "hinge": np.maximum(0, 1 - m),
                "squared_hinge": np.maximum(0, 1 - m) ** 2}[model]
        return np.mean(loss) + 0.5 / (C * n) * np.sum(W * W)

    for model, make, target in (
            ("logistic", lambda j: hetglm.LogisticRegression(C=C, fit_intercept=False, dual=True, n_jobs=j), y2),
            ("squared_hinge", lambda j: hetglm.LinearSVC(C=C, fit_intercept=False, dual=True, n_jobs=j), y2),
            ("hinge", lambda j: hetglm.LinearSVC(C=C, loss="hinge", fit_intercept=False, n_jobs=j), y2),
            ("multinomial", lambda j: hetglm.LogisticRegression(C=C, fit_intercept=False, n_jobs=j), y3)):
        for jobs in (1, 2):
            est = make(jobs).set_params(tol=1e-12, max_iter=100000).fit(X, target)
            assert est.solver_ in ({"newton"} if model == "multinomial" else {"sequential", "syscd"}), est.solver_
            P = objective(model, X, est)
            assert est.duality_gap_ <= 1e-12 * P, (model, jobs, est.duality_gap_ / P)
            assert abs(est.primal_objective_ - P) <= 1e-14 * P, (model, jobs, est.primal_objective_, P)
            e32 = make(jobs).set_params(tol=1e-12, max_iter=100000).fit(X.astype(np.float32), target)
            P32 = objective(model, X, e32)
            assert abs(e32.primal_objective_ - P32) >= 1e-10 * P32, (model, jobs, e32.primal_objective_, P32)


def test_float64_input_on_an_accelerator():
    """DuHL (accel_memory='25%': the cpu stand-in holds a quarter of the samples) reads float64 input's float64 values
    on the host at tol < float64_tol (the merge, the gap memory, the certificate; the accelerator steps on float32
    columns and the host finishes where that stalls the hinge's certificate, docs/duhl.md): primal_objective_ is
    P(coef_) computed here in float64 to 1e-14, certified to 1e-11, where a float32 copy certifies its own objective,
    1e-10 or more away."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((2000, 20)) * np.exp(0.5 * rng.standard_normal(20))
    y = (X @ rng.standard_normal(20) + rng.standard_normal(2000) > 0).astype(int)
    n, C = X.shape[0], 1.0

    def objective(model, data, est):
        m = (2 * y - 1) * (data @ est.coef_.ravel())
        loss = np.logaddexp(0, -m) if model == "logistic" else np.maximum(0, 1 - m)
        return np.mean(loss) + 0.5 / (C * n) * est.coef_.ravel() @ est.coef_.ravel()

    for model, make in (
            ("logistic", lambda: hetglm.LogisticRegression(C=C, fit_intercept=False, dual=True, accel_memory="25%")),
            ("hinge", lambda: hetglm.LinearSVC(C=C, loss="hinge", fit_intercept=False, accel_memory="25%"))):
        est = make().set_params(tol=1e-11, max_iter=100000).fit(X, y)
        assert est.solver_ == "duhl", est.solver_
        P = objective(model, X, est)
        assert est.duality_gap_ <= 1e-11 * P, (model, est.duality_gap_ / P)
        assert abs(est.primal_objective_ - P) <= 1e-14 * P, (model, est.primal_objective_, P)
        e32 = make().set_params(tol=1e-11, max_iter=100000).fit(X.astype(np.float32), y)
        assert e32.solver_ == "duhl"
        P32 = objective(model, X, e32)
        assert abs(e32.primal_objective_ - P32) >= 1e-10 * P32, (model, e32.primal_objective_, P32)
    # n_jobs asks the CPU solvers for determinism, which DuHL cannot give (the engine refuses it there): not asked
    est = hetglm.LinearSVC(loss="hinge", accel_memory="25%", n_jobs=2).fit(X, y)
    assert est.solver_ == "duhl" and est.duality_gap_ <= est.tol * est.primal_objective_


def test_float64_input_in_the_working_set_solver():
    """Lasso and ElasticNet (the working-set solver) on float64 input at tol < float64_tol read the float64 values
    in every product (dense columns, CSR by sample, CSC by feature): primal_objective_ is P(coef_) computed here in
    float64 to 1e-14 and certified to 1e-12, where a float32 copy certifies its own objective, 1e-10 or more away;
    lasso_path at tol 1e-12 keeps every point's relative gap within it."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((3000, 40)) * np.exp(0.5 * rng.standard_normal(40))
    y = X @ (rng.standard_normal(40) * (rng.random(40) < 0.4)) + rng.standard_normal(3000)
    alpha = 0.05
    import scipy.sparse as sp
    for data in (X, sp.csr_matrix(X * (rng.random(X.shape) < 0.5)), sp.csc_matrix(X * (rng.random(X.shape) < 0.5))):
        for make, l1_ratio in ((lambda: hetglm.Lasso(alpha=alpha, fit_intercept=False), 1.0),
                               (lambda: hetglm.ElasticNet(alpha=alpha, l1_ratio=0.5, fit_intercept=False), 0.5)):
            def objective(est):
                w = est.coef_.ravel()
                r = y - data @ w
                return 0.5 * np.mean(r * r) + alpha * (l1_ratio * np.abs(w).sum() + 0.5 * (1 - l1_ratio) * w @ w)
            est = make().set_params(tol=1e-12, max_iter=100000).fit(data, y)
            assert est.solver_ == "working-set"
            P = objective(est)
            assert est.duality_gap_ <= 1e-12 * P
            assert abs(est.primal_objective_ - P) <= 1e-14 * P, (type(data), l1_ratio, est.primal_objective_, P)
            e32 = make().set_params(tol=1e-12, max_iter=100000).fit(data.astype(np.float32), y)
            P32 = objective(e32)
            assert abs(e32.primal_objective_ - P32) >= 1e-10 * P32, (type(data), l1_ratio, e32.primal_objective_, P32)
    alphas, coefs, gaps = hetglm.lasso_path(X, y, tol=1e-12, n_alphas=20)[:3]
    r = y[:, None] - X @ coefs
    P = 0.5 * np.mean(r * r, axis=0) + alphas * np.abs(coefs).sum(axis=0)
    assert np.all(gaps <= 1e-12 * P), (gaps / P).max()
