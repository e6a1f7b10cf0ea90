# SPDX-License-Identifier: Apache-2.0
"""Regularization paths (lasso_path, enet_path, logistic_regression_path) and the CV estimators on top of them,
against scikit-learn: the same grid, coefficients at every point, a certified gap at every point, the same choice
of regularization."""
import json
import os
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import linear_model as sklm
from sklearn.exceptions import ConvergenceWarning

import hetglm

# The behaviour compared here is scikit-learn 1.9's (l1_ratio choosing the penalty, LogisticRegressionCV's
# use_legacy_attributes and l1_ratios grid, float32 kept by more estimators): older versions differ by design.
sklearn_1_9 = pytest.mark.skipif(tuple(int(v) for v in __import__("sklearn").__version__.split(".")[:2]) < (1, 9),
                                 reason="compares with scikit-learn 1.9's behaviour")


@pytest.fixture(scope="module")
def housing_dense(housing):
    X, y = housing
    return X.toarray(), y


@pytest.fixture(scope="module")
def a9a_8000(a9a):
    X, y = a9a
    return X[:8000], y[:8000]


def enet_objective(X, y, w, alpha, r):
    return 0.5 * np.mean((y - X @ w) ** 2) + alpha * r * np.abs(w).sum() + 0.5 * alpha * (1 - r) * np.sum(w * w)


# housing's Lasso is ill-conditioned along its support: at tol 1e-12 the coefficients may sit 1.1e-6 from the optimum
# (the parallel, symmetric Gram matrix of 53f9cc6 rounds differently and ended there); at 1e-13 they are 2.6e-7 from
# scikit-learn's, which is how far scikit-learn's own float64 and float32-rounded paths are apart.
@pytest.mark.parametrize("l1_ratio, tol", [(1.0, 1e-13), (0.5, 1e-15)])
def test_enet_and_lasso_paths_match_sklearn_at_every_point(housing_dense, l1_ratio, tol):
    X, y = housing_dense
    if l1_ratio == 1.0:
        alphas, coefs, gaps, n_iter = hetglm.lasso_path(X, y, tol=tol, max_iter=1000000, return_n_iter=True)
    else:
        alphas, coefs, gaps, n_iter = hetglm.enet_path(X, y, l1_ratio=l1_ratio, tol=tol, max_iter=1000000,
                                                       return_n_iter=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a2, c2, _ = sklm.enet_path(X, y, l1_ratio=l1_ratio, alphas=100, tol=1e-15, max_iter=1000000)
    assert alphas.shape == (100,) and coefs.shape == (X.shape[1], 100) and gaps.shape == (100,)
    np.testing.assert_allclose(alphas, a2, rtol=1e-12)  # scikit-learn's grid: alpha_max down to 1e-3 alpha_max
    assert np.abs(coefs - c2).max() <= 1e-6, np.abs(coefs - c2).max()
    for k in range(100):  # a certified gap at every point, the objective of the returned coefficients
        P = enet_objective(X, y, coefs[:, k], alphas[k], l1_ratio)
        # (at tol=1e-15 the gap is at the rounding level of a double P: a few ulps either side)
        assert -16 * np.finfo(float).eps * P <= gaps[k] <= max(tol, 16 * np.finfo(float).eps) * P, (k, gaps[k], P)
    assert np.all(coefs[:, 0] == 0)  # alpha_max: every coefficient zero
    assert n_iter[0] <= 1  # warm-started or not, the zero solution is certified at once (working set: 0 iterations)


def test_path_coefficients_follow_x_dtype_as_sklearn(housing_dense):
    """float32 X: coefs float32 (scikit-learn's enet_path / lasso_path), the alphas and gaps float64."""
    X, y = housing_dense
    for path in (hetglm.lasso_path, hetglm.enet_path):
        for dtype in (np.float32, np.float64):
            alphas, coefs, gaps = path(X.astype(dtype), y, alphas=5)
            theirs = getattr(sklm, path.__name__)(X.astype(dtype), y, alphas=5)
            assert (alphas.dtype, coefs.dtype, gaps.dtype) == (theirs[0].dtype, theirs[1].dtype, theirs[2].dtype)


def test_path_in_one_engine_call_equals_one_fit_per_point(housing_dense):
    """_hetglm.train_path (the path functions' engine call, its column norms and X^T y computed once) gives every
    point bit-identical to one _hetglm.train per point warm-started the same way, with the same gaps."""
    from hetglm import _hetglm, _path
    X, y = housing_dense
    alphas = _path._alpha_grid(X, y, 0.5, 1e-3, 20)
    M = _path._by_feature(X, 1e-10)  # float64 values at this tol
    make = _path._options_factory(1e-10, 1000, 0, 0.5)
    o = make()
    o.model = "elastic-net"
    path = _hetglm.train_path(M, y, o, [float(a) for a in alphas])
    assert len(path) == len(alphas)
    warm = None
    for res, a in zip(path, alphas):
        o = make()
        o.model = "elastic-net"
        o.lambda_ = float(a)
        one = _hetglm.train(M, y, o, None, False, warm)
        warm = [np.asarray(c["alpha"]) for c in one["columns"]]
        assert np.array_equal(np.asarray(res["w"]), np.asarray(one["w"]))
        assert res["gap"] == one["gap"] and res["resolved_lambda"] == float(a)
        assert res["converged"]
    with pytest.raises(ValueError, match="lambda"):
        _hetglm.train_path(M, y, o, [0.1, -1.0])


def test_enet_path_options(housing_dense):
    X, y = housing_dense
    alphas, coefs, gaps = hetglm.enet_path(X, y, alphas=[0.1, 1.0, 0.5], tol=1e-10)
    np.testing.assert_array_equal(alphas, [1.0, 0.5, 0.1])  # largest first, as scikit-learn
    _, coefs1, _ = hetglm.enet_path(X, y[:, None], alphas=[1.0, 0.5, 0.1], tol=1e-10)  # y (n, 1): as scikit-learn's
    assert coefs1.shape == (1, X.shape[1], 3)
    np.testing.assert_allclose(coefs1[0], coefs, rtol=1e-6, atol=1e-9)
    # Several targets: scikit-learn's enet_path / lasso_path fit them as one multi-task problem (MultiTaskLasso's
    # shared sparsity), which hetglm has not; it fitted one independent path per target (0.16 off scikit-learn's
    # coefficients on a 60 x 5 set, found by a hostile trial). Refused, naming the function.
    for fn, name in [(hetglm.enet_path, "enet_path"), (hetglm.lasso_path, "lasso_path")]:
        with pytest.raises(ValueError) as e:
            fn(X, np.column_stack([y, 2 * y]), alphas=[1.0])
        assert str(e.value) == (f"y has 2 targets (shape (506, 2)): scikit-learn's {name} fits them as one "
                                f"multi-task problem (MultiTaskLasso / MultiTaskElasticNet: one sparsity pattern for "
                                f"all targets), which hetglm does not have; pass one target at a time, y[:, k]")
    with pytest.raises(ValueError, match=r"^positive=True is not supported by the hetglm engine$"):
        hetglm.lasso_path(X, y, positive=True)
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['bogus'\]"):
        hetglm.lasso_path(X, y, bogus=1)


def test_path_inputs_are_checked_in_their_own_terms(housing_dense):
    """Bad path inputs get a ValueError naming the parameter (not numpy's message, nor a CLI flag such as --lambda),
    a point that misses tol within max_iter a ConvergenceWarning (as scikit-learn's enet_path), and an all-zero
    y (n, 1) the grid a zero 1-D y gets."""
    X, y = housing_dense
    bad = y.copy()
    bad[3] = np.nan
    cases = [
        (lambda: hetglm.lasso_path(X, bad), r"^y\[3\] = nan: y must be finite$"),
        (lambda: hetglm.lasso_path(X, np.column_stack([y, bad])), r"^y\[3, 1\] = nan: y must be finite$"),
        (lambda: hetglm.lasso_path(X, 3.0), r"^y must be \(n_samples,\) or \(n_samples, n_targets\) with n_targets "
                                            r">= 1, got shape \(\)$"),
        (lambda: hetglm.lasso_path(X, np.zeros((X.shape[0], 0))), r"got shape \(506, 0\)$"),
        (lambda: hetglm.lasso_path(X, y, eps=0), r"^eps must be a positive finite number, got 0$"),
        (lambda: hetglm.lasso_path(X, y, eps=np.nan), r"^eps must be a positive finite number, got nan$"),
        (lambda: hetglm.lasso_path(X, y[:, None], eps=-1),
         r"^eps must be a positive finite number, got -1$"),
        (lambda: hetglm.enet_path(X, y[:, None], l1_ratio=0),
         r"^automatic alpha grid generation needs l1_ratio > 0 \(give alphas\)$"),
        (lambda: hetglm.enet_path(X, y, l1_ratio=2), r"^l1_ratio must be a number in \[0, 1\], got 2$"),
        (lambda: hetglm.lasso_path(X, y, alphas=[np.inf, 1.0]), r"^alphas must be positive finite numbers$"),
        (lambda: hetglm.lasso_path(X, y, tol=np.inf), r"^tol must be a positive finite number, got inf$"),
        (lambda: hetglm.lasso_path(X, y, max_iter=2**40),
         r"^max_iter must be an integer in \[1, 2147483647\], got 1099511627776$"),
        (lambda: hetglm.lasso_path(X, y, alphas=[0.1], coef_init=np.full(X.shape[1], np.nan)),
         r"^coef_init must be finite$"),
        (lambda: hetglm.Lasso(alpha=np.inf).fit(X, y), r"^alpha must be a positive finite number, got inf$"),
        (lambda: hetglm.Ridge(alpha=np.inf).fit(X, y), r"^alpha must be a positive finite number, got inf$"),
        (lambda: hetglm.ElasticNet(l1_ratio=None).fit(X, y), r"^l1_ratio must be a number in \[0, 1\], got None$"),
        (lambda: hetglm.Lasso(tol=np.inf).fit(X, y), r"^tol must be a positive finite number, got inf$"),
        # The C path's grid: Cs=0 returned four empty arrays (logistic_regression_path) or failed in np.argmax
        # ("attempt to get argmax of an empty sequence", LogisticRegressionCV).
        (lambda: hetglm.logistic_regression_path(X, np.sign(y - np.median(y)), Cs=0),
         r"^Cs: the number of values of C must be at least 1, got 0$"),
        (lambda: hetglm.LogisticRegressionCV(Cs=0).fit(X, np.sign(y - np.median(y))),
         r"^Cs: the number of values of C must be at least 1, got 0$"),
        (lambda: hetglm.logistic_regression_path(X, np.sign(y - np.median(y)), Cs=[1.0, 0.0]),
         r"^Cs: the values of C must be positive numbers \(np\.inf: no penalty; at least one\)$"),
        # X named in the message, as the estimators do (it said "Input contains NaN.").
        (lambda: hetglm.lasso_path(np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y),
         r"^Input X contains NaN\.$"),
        # Each l1_ratio of ElasticNetCV's list in the parameter's own terms (it said "--l1-ratio: must be in [0, 1]").
        (lambda: hetglm.ElasticNetCV(l1_ratio=[0.5, 2]).fit(X, y), r"^l1_ratio must be a number in \[0, 1\], got 2$"),
        (lambda: hetglm.LogisticRegressionCV(Cs=[]).fit(X, np.sign(y - np.median(y))),
         r"^Cs: the values of C must be positive numbers \(np\.inf: no penalty; at least one\)$"),
        # A scalar Cs that is not an int is not C itself (Cs=1.5 trained at C = 1.5, Cs=True at C = 1e-4), and the
        # engine's limits in the parameters' names (they said "--tol: ...", "alpha must be ..." after the folds).
        (lambda: hetglm.LogisticRegressionCV(Cs=1.5).fit(X, np.sign(y - np.median(y))),
         r"^Cs must be an int >= 1 \(a grid of that many values of C\) or a list of values of C, got 1.5$"),
        (lambda: hetglm.logistic_regression_path(X, np.sign(y - np.median(y)), Cs=True),
         r"^Cs must be an int >= 1 \(a grid of that many values of C\) or a list of values of C, got True$"),
        (lambda: hetglm.Ridge(tol=1e-20).fit(X, y),
         r"^tol must be at least 1e-15 \(a duality gap in double precision is not certain below that\), got 1e-20$"),
        (lambda: hetglm.lasso_path(X, y, tol=1e-20), r"^tol must be at least 1e-15 "),
        (lambda: hetglm.RidgeCV(alphas=[1.0, np.inf], cv=3).fit(X, y), r"^alphas must be positive finite numbers$"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    alphas, coefs, _ = hetglm.lasso_path(X, np.zeros((X.shape[0], 1)), n_alphas=3)
    np.testing.assert_array_equal(alphas, np.full(3, np.finfo(np.float64).resolution))
    assert coefs.shape == (1, X.shape[1], 3) and not np.any(coefs)
    with pytest.warns(ConvergenceWarning, match=r"^lasso_path: 1 of 1 points did not reach the relative duality gap "
                                                r"tol=1e-12 \(first: alpha=0.01, relative gap .*, max_iter=1 epochs "
                                                r"reached; increase max_iter\)$"):
        hetglm.lasso_path(X, y, alphas=[0.01], tol=1e-12, max_iter=1)
    # A stop on no measurable progress (alpha 1e-30: the problem is least squares, and the gap stays above tol) is
    # not an epoch budget: the warning gives the engine's reason, not "increase max_iter".
    with pytest.warns(ConvergenceWarning) as got:
        _, _, gaps = hetglm.lasso_path(X, y, alphas=[1e-30])
    text = str(got[0].message)
    est = hetglm.Lasso(alpha=1e-30)
    with pytest.warns(ConvergenceWarning, match=r"stopped after \d+ iterations before") as lasso_warning:
        est.fit(X, y)
    reason = re.search(r"tol=[^:]*: (.*); the model and its certificate are kept", str(lasso_warning[0].message))[1]
    assert re.search(r"\(first: alpha=1e-30, relative gap .*, stopped after \d+ epochs: ", text), text
    assert reason in text and "increase max_iter" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hetglm.lasso_path(X, y, alphas=[0.01], tol=1e-6)  # converged: no warning


def logistic_objective(X, y, w, C):
    z = X @ w
    yy = np.where(y > 0, 1.0, -1.0)
    return np.mean(np.logaddexp(0, -yy * z)) + np.sum(w * w) / (2 * C * X.shape[0])


def test_logistic_regression_path_matches_sklearn(a9a_8000):
    X, y = a9a_8000
    Cs = np.logspace(-2, 2, 10)
    coefs, Cs_out, n_iter, gaps = hetglm.logistic_regression_path(X, y, Cs=Cs[::-1], tol=1e-13,
                                                                  fit_intercept=False)
    np.testing.assert_array_equal(Cs_out, Cs)  # smallest C first
    assert coefs.shape == (10, X.shape[1])
    for k, C in enumerate(Cs):
        theirs = sklm.LogisticRegression(C=C, solver="newton-cg", tol=1e-14, max_iter=100000,
                                         fit_intercept=False).fit(X, y)
        p_ours = logistic_objective(X, y, coefs[k], C)
        p_theirs = logistic_objective(X, y, theirs.coef_.ravel(), C)
        assert abs(p_ours - p_theirs) <= 1e-12 * p_theirs, (C, p_ours, p_theirs)
        # a9a's one-hot groups are collinear: for larger C the objective is flat along them (a gap bounds
        # ||w - w*||^2 only by 2 gap / lambda), and both solvers' coefficients agree to 1e-6 for C <= 0.1 only
        if C <= 0.1:
            assert np.abs(coefs[k] - theirs.coef_.ravel()).max() <= 1e-6
        assert abs(gaps[k]) <= 1e-13 * p_ours
    # with an intercept: the liblinear objective (regularized intercept) at every C; warm starts save iterations
    coefs, _, n_iter, _ = hetglm.logistic_regression_path(X, y, Cs=Cs, tol=1e-10)
    assert coefs.shape == (10, X.shape[1] + 1)
    cold = [int(hetglm.LogisticRegression(C=C, tol=1e-10).fit(X, y).n_iter_[0]) for C in Cs]
    assert n_iter[1:].sum() < sum(cold[1:]), (n_iter, cold)


def test_lasso_cv_and_elastic_net_cv_choose_sklearns_alpha(housing_dense):
    X, y = housing_dense
    ours = hetglm.LassoCV(tol=1e-10, max_iter=100000).fit(X, y)
    theirs = sklm.LassoCV(tol=1e-12, max_iter=100000).fit(X, y)
    assert ours.alpha_ == pytest.approx(theirs.alpha_, rel=1e-12)
    np.testing.assert_allclose(ours.alphas_, theirs.alphas_, rtol=1e-12)
    np.testing.assert_allclose(ours.mse_path_, theirs.mse_path_, rtol=1e-4)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-4, atol=1e-5)
    assert ours.duality_gap_ <= 1e-10 * ours.primal_objective_
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), rel=1e-6)
    parallel = hetglm.LassoCV(tol=1e-10, max_iter=100000, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(parallel.mse_path_, ours.mse_path_)  # folds in threads: the same numbers

    ours = hetglm.ElasticNetCV(l1_ratio=[0.2, 0.8], tol=1e-10, max_iter=100000).fit(X, y)
    theirs = sklm.ElasticNetCV(l1_ratio=[0.2, 0.8], tol=1e-12, max_iter=100000).fit(X, y)
    assert ours.l1_ratio_ == theirs.l1_ratio_
    assert ours.alpha_ == pytest.approx(theirs.alpha_, rel=1e-12)
    assert ours.mse_path_.shape == theirs.mse_path_.shape == (2, 100, 5)


def test_lasso_cv_folds_centre_a_dense_x_in_its_conversion(housing_dense):
    # A fold of LassoCV / ElasticNetCV on a dense X without weights is centred by the conversion (the offset of
    # matrix_from_dense) instead of a centred copy of the fold: the fold's MSE path is bit for bit the one of the
    # explicit copy X[train] - mean, float32-rounded mean as _centre's, and the same engine path.
    from hetglm import _path
    from hetglm._estimators import _rounded_offset
    X, y = housing_dense
    train, test = np.arange(0, 400), np.arange(400, X.shape[0])
    alphas = np.array([1.0, 0.3, 0.1, 0.03, 0.01])
    for Xf, l1_ratio in ((X, 1.0), (np.asfortranarray(X.astype(np.float32)), 0.5)):
        got = _path._fold_mse(Xf, y, train, test, l1_ratio, alphas, True, 1e-8, 10000, 0)
        Xtr, ytr = Xf[train], y[train]
        mean = _rounded_offset(np.asarray(Xtr.mean(axis=0)).ravel())
        y_mean = float(ytr.mean())
        M = _path._by_feature(np.ascontiguousarray(Xtr - mean), 1e-8)
        w = _path._engine_path(M, np.ascontiguousarray(ytr - y_mean), "lasso" if l1_ratio == 1 else "elastic-net",
                               alphas, _path._options_factory(1e-8, 10000, 0, l1_ratio))[0][:, :, 0]
        pred = np.asarray(Xf[test] @ w) + (y_mean - mean @ w)
        np.testing.assert_array_equal(got, np.average((pred - y[test][:, None]) ** 2, axis=0))


def test_logistic_regression_cv_chooses_sklearns_C(a9a_8000):
    X, y = a9a_8000
    ours = hetglm.LogisticRegressionCV(Cs=10, tol=1e-8, n_jobs=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklm.LogisticRegressionCV(Cs=10, solver="liblinear", tol=1e-10, max_iter=10000,
                                           scoring="accuracy").fit(X, y)
    np.testing.assert_array_equal(ours.C_, theirs.C_)
    assert list(ours.scores_) == list(theirs.scores_) == [1.0]  # scikit-learn's dict, keyed by classes_[1]
    np.testing.assert_allclose(ours.scores_[1.0].mean(axis=0), theirs.scores_[1.0].mean(axis=0), atol=1e-12)
    assert ours.coef_.shape == (1, X.shape[1])
    ref = hetglm.LogisticRegression(C=float(ours.C_[0]), tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, ref.coef_)  # the refit at C_ on all the data


def test_ridge_cv_chooses_sklearns_alpha(housing_dense):
    X, y = housing_dense
    alphas = np.logspace(-2, 3, 6)
    ours = hetglm.RidgeCV(alphas=alphas, n_jobs=2).fit(X, y)  # cv=None: leave-one-out, as scikit-learn's GCV
    theirs = sklm.RidgeCV(alphas=alphas).fit(X, y)
    assert ours.alpha_ == theirs.alpha_
    assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-10)  # both closed forms
    np.testing.assert_array_equal(ours.coef_, hetglm.Ridge(alpha=ours.alpha_, tol=1e-8).fit(X, y).coef_)  # refit
    assert np.abs(ours.coef_ - theirs.coef_).max() <= 1e-4 * np.abs(theirs.coef_).max()  # default tol 1e-8
    # The mean R^2 of 5 folds, as GridSearchCV. At tol 1e-8 (P - P* <= 1e-8 P) the held-out R^2 of a fold may still
    # move by 2e-5 (coefficients along the Hessian's small eigenvalues, down to lambda, are bounded only by
    # sqrt(2 (P - P*) / lambda)): the mean came 1.2e-5 from scikit-learn's exact solve with the Newton solver; at
    # tol 1e-10 it is 2.0e-7.
    ours = hetglm.RidgeCV(alphas=alphas, cv=5, tol=1e-10).fit(X, y)
    theirs = sklm.RidgeCV(alphas=alphas, cv=5).fit(X, y)
    assert ours.alpha_ == theirs.alpha_
    assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-5)
    with pytest.raises(ValueError, match=r"^RidgeCV: leave-one-out needs at least 2 samples, got n_samples = 1$"):
        hetglm.RidgeCV().fit(X[:1], y[:1])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("shape", [(120, 8), (30, 60)])
def test_ridge_cv_leave_one_out_is_sklearns_with_weights_sparse_and_wide_data(sparse, fit_intercept, shape):
    """cv=None: the closed-form leave-one-out (hetglm._path._ridge_loo_errors) against scikit-learn's _RidgeGCV for
    every alpha of the grid: dense (the SVD) and sparse (X^T X for n > p, X X^T for n <= p), with and without the
    intercept and sample weights; and one LOO error against a direct refit without the sample (numpy lstsq)."""
    rng = np.random.default_rng(3)
    n, p = shape
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 3, p)
    X[rng.random((n, p)) < 0.6] = 0.0
    y = X @ rng.normal(size=p) + 3.0 + rng.normal(size=n)
    sw = rng.uniform(0.2, 3.0, n)
    Xin = sp.csr_matrix(X) if sparse else X
    alphas = np.logspace(-3, 3, 7)
    for weights in (None, sw):
        ours = hetglm.RidgeCV(alphas=alphas, fit_intercept=fit_intercept).fit(Xin, y, sample_weight=weights)
        theirs = sklm.RidgeCV(alphas=alphas, fit_intercept=fit_intercept, store_cv_results=True).fit(
            Xin, y, sample_weight=weights)
        assert ours.alpha_ == theirs.alpha_
        assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-9)
        looe = hetglm._path._ridge_loo_errors(Xin, y, np.ones(n) if weights is None else weights, alphas,
                                             fit_intercept)
        # (1e-6: at alpha = 1e-3 on 30 x 60 the leverages H_ii come within 1e-4 of 1, and 1 / (1 - H_ii) carries the
        # two decompositions' rounding; the two differed by up to 1.2e-8 relative there)
        np.testing.assert_allclose(looe.T ** 2, theirs.cv_results_, rtol=1e-6, atol=1e-12)
    # Sample 0 left out, refit by least squares on the rest (the intercept unpenalized), at alpha = 1: the LOO error.
    a = 1.0
    Z = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    s = np.sqrt(sw[1:])
    D = a * np.eye(Z.shape[1])
    if fit_intercept:
        D[-1, -1] = 0.0
    coef = np.linalg.solve((Z[1:] * s[:, None]).T @ (Z[1:] * s[:, None]) + D, (Z[1:] * s[:, None]).T @ (s * y[1:]))
    direct = np.sqrt(sw[0]) * (y[0] - Z[0] @ coef)
    looe = hetglm._path._ridge_loo_errors(Xin, y, sw, np.array([a]), fit_intercept)
    assert looe[0, 0] == pytest.approx(direct, rel=1e-9)


@pytest.mark.parametrize("cv", [None, 4])
def test_ridge_cv_takes_several_targets_as_sklearn(cv):
    """y (n, k): one alpha for all targets (scikit-learn's default alpha_per_target=False), chosen on the mean over
    every target's LOO errors (cv=None) or the folds' uniform-average R^2; coef_ (k, n_features). y (n, 1) gives
    coef_ (n_features,), as scikit-learn's RidgeCV. It refused y (n, k) before."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6))
    Y = X @ rng.normal(size=(6, 3)) + rng.normal(size=(80, 3)) * np.array([0.5, 2.0, 8.0])
    sw = rng.uniform(0.5, 2.0, 80)
    alphas = np.logspace(-2, 3, 6)
    for y in (Y, Y[:, :1]):
        ours = hetglm.RidgeCV(alphas=alphas, cv=cv, tol=1e-12).fit(X, y, sample_weight=sw)
        theirs = sklm.RidgeCV(alphas=alphas, cv=cv).fit(X, y, sample_weight=sw)
        assert ours.alpha_ == theirs.alpha_
        assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-8)
        assert ours.coef_.shape == theirs.coef_.shape
        np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-9, atol=1e-12)
        # (the intercept: y's mean less the float32-rounded feature means times coef_, _centre: 1e-8 from
        # scikit-learn's, with or without targets and weights)
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("densify", [True, False])
def test_ridge_cv_leave_one_out_on_sparse_data_with_an_offset_column(monkeypatch, densify):
    """Sparse X with a column of mean 100: with n <= p the intercept's null direction of X X^T came out at a
    rounding eigenvalue eps, whose leverage share eps / (eps + alpha) grew as 1 / alpha: alpha_ was 1e-6 with a LOO
    score of -0.0008 (scikit-learn and the dense SVD: 1000, -0.581). Sparse X is now centred densely below
    _MAX_DENSE_ENTRIES (densify) and beyond it such eigenvalues are 0 (the eigen routes, forced here)."""
    if not densify:
        monkeypatch.setattr(hetglm._path, "_MAX_DENSE_ENTRIES", 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 50))
    X[:, 0] += 100
    y = rng.normal(size=20)
    alphas = np.logspace(-6, 3, 10)
    ours = hetglm.RidgeCV(alphas=alphas).fit(sp.csr_matrix(X), y)
    theirs = sklm.RidgeCV(alphas=alphas).fit(X, y)
    assert ours.alpha_ == theirs.alpha_ == 1000.0
    assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-9)
    dense = hetglm._path._ridge_loo_errors(X, y, np.ones(20), alphas, True)
    sparse = hetglm._path._ridge_loo_errors(sp.csr_matrix(X), y, np.ones(20), alphas, True)
    np.testing.assert_allclose(np.mean(sparse ** 2, axis=1), np.mean(dense ** 2, axis=1), rtol=1e-6)
    if not densify:  # the X^T X route (n > p), weighted, against the dense SVD
        X3 = rng.normal(size=(60, 8)) + 3.0
        X3[rng.random(X3.shape) < 0.5] = 0.0
        y3 = X3 @ rng.normal(size=8) + rng.normal(size=60)
        sw3 = rng.uniform(0.5, 2.0, 60)
        for intercept in (True, False):
            np.testing.assert_allclose(
                hetglm._path._ridge_loo_errors(sp.csr_matrix(X3), y3, sw3, alphas, intercept),
                hetglm._path._ridge_loo_errors(X3, y3, sw3, alphas, intercept), rtol=1e-8, atol=1e-10)
    if densify:  # n > p with a column of mean 1e6 and spread 1e-3: X^T X - n xbar xbar^T cancelled (1e4x off)
        X2 = rng.normal(size=(40, 6))
        X2[:, 0] = 1e6 + 1e-3 * rng.normal(size=40)
        y2 = X2[:, 1:] @ rng.normal(size=5) + rng.normal(size=40)
        sw = rng.uniform(0.5, 2.0, 40)
        a = np.array([1e-10, 1e-6, 1.0])
        np.testing.assert_allclose(hetglm._path._ridge_loo_errors(sp.csr_matrix(X2), y2, sw, a, True),
                                   hetglm._path._ridge_loo_errors(X2, y2, sw, a, True), rtol=1e-9, atol=1e-12)


def test_logistic_regression_cv_keeps_the_order_of_cs(data_dir):
    """Cs given out of order: Cs_ and the columns of scores_ in that order, ties to the first C given, as
    scikit-learn's (they came sorted, so a column of scores_ did not match scikit-learn's for the same index)."""
    X, y = hetglm.load_svmlight_file(data_dir / "heart_scale")
    Cs = [10.0, 0.01, 1.0, 0.1]
    ours = hetglm.LogisticRegressionCV(Cs=Cs, cv=4, tol=1e-10).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklm.LogisticRegressionCV(Cs=Cs, cv=4, tol=1e-10, solver="liblinear", max_iter=10000).fit(X, y)
    np.testing.assert_array_equal(ours.Cs_, theirs.Cs_)
    np.testing.assert_allclose(ours.scores_[1.0], theirs.scores_[1.0], atol=1e-12)
    np.testing.assert_array_equal(ours.C_, theirs.C_)
    assert hetglm.LogisticRegressionCV(Cs=[1.0, 0.5, 1.0], cv=4, tol=1e-10).fit(X, y).scores_[1.0].shape == (4, 3)


def test_cv_estimators_tie_break_and_shapes_as_sklearn():
    """Ties go to the first alpha in the order given (a constant y); y (n, 1) gives RidgeCV's intercept_ (1,); one
    alpha gives LassoCV's mse_path_ (n_folds,); alphas given with several l1_ratio give ElasticNetCV's alphas_ as
    given (scikit-learn's shapes)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=30)
    down = np.logspace(-3, 3, 13)[::-1]
    assert hetglm.RidgeCV(alphas=down).fit(X, np.ones(30)).alpha_ == \
        sklm.RidgeCV(alphas=down).fit(X, np.ones(30)).alpha_ == 1000.0
    ours, theirs = hetglm.RidgeCV().fit(X, y.reshape(-1, 1)), sklm.RidgeCV().fit(X, y.reshape(-1, 1))
    assert (ours.coef_.shape, np.shape(ours.intercept_)) == (theirs.coef_.shape, np.shape(theirs.intercept_))
    ours, theirs = hetglm.LassoCV(alphas=[0.1], cv=3).fit(X, y), sklm.LassoCV(alphas=[0.1], cv=3).fit(X, y)
    assert ours.mse_path_.shape == theirs.mse_path_.shape == (3,)
    kw = dict(alphas=[0.1, 0.01, 1.0], l1_ratio=[0.5, 0.9], cv=3)
    ours, theirs = hetglm.ElasticNetCV(**kw).fit(X, y), sklm.ElasticNetCV(**kw).fit(X, y)
    np.testing.assert_array_equal(ours.alphas_, theirs.alphas_)
    assert ours.mse_path_.shape == theirs.mse_path_.shape


def test_ridge_cv_with_folds_passes_the_sample_weights_to_each_fit():
    """cv given: each fold's Ridge gets its training part's sample weights and is scored by the R^2 weighted by its
    test part's (as scikit-learn 1.9's GridSearchCV, which RidgeCV runs); the refit at alpha_ uses the weights."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 6))
    y = X @ rng.normal(size=6) + rng.normal(size=200)
    sw = rng.uniform(0.1, 5.0, 200)
    alphas = np.logspace(-2, 3, 6)
    ours = hetglm.RidgeCV(alphas=alphas, cv=4, tol=1e-12).fit(X, y, sample_weight=sw)
    theirs = sklm.RidgeCV(alphas=alphas, cv=4).fit(X, y, sample_weight=sw)
    assert ours.alpha_ == theirs.alpha_
    assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-8)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-5)
    with pytest.raises(ValueError, match="sample_weight"):
        hetglm.RidgeCV().fit(X, y, sample_weight=-sw)


@pytest.mark.parametrize("sparse", [False, True])
def test_cv_estimators_take_sample_weight_as_sklearn(sparse):
    """LassoCV / ElasticNetCV with sample_weight against scikit-learn's: the weighted grid, each fold's path on the
    training part's weights (rescaled to sum to its size, weighted means), the MSE averaged with the test part's
    weights, the weighted refit. LogisticRegressionCV against scikit-learn's liblinear one: each fold's fit and score
    (accuracy, or a scorer) weighted by its parts' weights."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20)) * rng.uniform(0.5, 2, 20) + rng.normal(size=20)
    y = X[:, :5] @ rng.normal(size=5) * 3 + rng.normal(size=300) * 10
    if sparse:
        X = sp.csr_matrix(np.where(rng.random(X.shape) < 0.3, 0.0, X))
    sw = rng.uniform(0.2, 4.0, 300)
    for ours, theirs in [(hetglm.LassoCV(cv=4, tol=1e-12), sklm.LassoCV(cv=4, tol=1e-13, max_iter=100000)),
                         (hetglm.ElasticNetCV(cv=4, l1_ratio=0.5, tol=1e-14),
                          sklm.ElasticNetCV(cv=4, l1_ratio=0.5, tol=1e-13, max_iter=100000))]:
        ours.fit(X, y, sample_weight=sw)
        theirs.fit(X, y, sample_weight=sw)
        assert ours.alpha_ == theirs.alpha_
        np.testing.assert_allclose(ours.alphas_, theirs.alphas_, rtol=1e-12)
        np.testing.assert_allclose(ours.mse_path_, theirs.mse_path_, rtol=1e-6)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-5, atol=1e-6)
        assert ours.intercept_ == pytest.approx(theirs.intercept_, abs=1e-6 * np.abs(y).max())
        unweighted = type(ours)(**ours.get_params()).fit(X, y)
        assert np.abs(unweighted.mse_path_ - ours.mse_path_).max() > 1e-3 * ours.mse_path_.max()  # weights matter
    yc = np.where(y > np.median(y), 1, -1)
    Xd = X.toarray() if sparse else X
    for scoring in (None, "neg_log_loss"):
        ours = hetglm.LogisticRegressionCV(Cs=8, cv=4, tol=1e-10, scoring=scoring).fit(Xd, yc, sample_weight=sw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = sklm.LogisticRegressionCV(Cs=8, cv=4, tol=1e-10, max_iter=10000, scoring=scoring,
                                               solver="liblinear").fit(Xd, yc, sample_weight=sw)
        np.testing.assert_array_equal(ours.C_, theirs.C_)
        np.testing.assert_allclose(ours.scores_[1], theirs.scores_[1], rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-5, atol=1e-6)


def test_logistic_regression_cv_scores_folds_that_lack_a_class(data_dir):
    """A class with two samples: the fold whose test part lacks it is scored with every class as labels, as
    scikit-learn's LogisticRegressionCV does (log loss failed with "y_true and y_prob contain different number of
    classes: 2 vs 3" from inside scikit-learn's metrics). A class with one sample: a fold's training part lacks
    it, and still fits it."""
    X, y = hetglm.load_svmlight_file(data_dir / "iris.scale")
    X = X.toarray()
    # Class 3 with two samples: StratifiedKFold(3) puts them in two folds, so the third fold's test part has no
    # class 3 while every training part has one.
    keep2 = np.r_[np.flatnonzero(y != 3), np.flatnonzero(y == 3)[:2]]
    for scoring in ("neg_log_loss", "neg_brier_score"):
        ours = hetglm.LogisticRegressionCV(Cs=3, cv=3, scoring=scoring, multi_class="ovr").fit(X[keep2], y[keep2])
        sc = ours.scores_[1.0]
        assert sc.shape == (3, 3) and np.all(np.isfinite(sc)) and np.all(sc < 0)
    # Two classes, one of them with two samples: the binary scorers get pos_label, and score the fold without it.
    yb = np.where(y[keep2] == 3, 1.0, 2.0)
    assert np.all(np.isfinite(hetglm.LogisticRegressionCV(Cs=3, cv=3, scoring="neg_log_loss").fit(X[keep2],
                                                                                                  yb).scores_[2.0]))
    # Class 3 with one sample: the fold whose training part lacks it still fits a column for class 3 (every fold
    # fits every class of the data, as scikit-learn's; the engine's ProblemOptions::classes), so its probabilities
    # and log loss exist, and scores_, coefs_paths_, C_ and coef_ are scikit-learn's (multinomial, no intercept,
    # log loss; it was an error before, and accuracy scored a fit on the classes present)
    keep = np.r_[np.flatnonzero(y != 3), np.flatnonzero(y == 3)[:1]]
    for refit in (True, False):
        params = dict(Cs=[0.1, 1.0], cv=3, fit_intercept=False, scoring="neg_log_loss", refit=refit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (StratifiedKFold: a class with fewer members than folds)
            ours = hetglm.LogisticRegressionCV(tol=1e-14, **params).fit(X[keep], y[keep])
            theirs = sklm.LogisticRegressionCV(tol=1e-12, max_iter=100000, **params).fit(X[keep], y[keep])
        np.testing.assert_allclose(ours.scores_[3.0], theirs.scores_[3.0], rtol=1e-6)
        np.testing.assert_allclose(np.array(list(ours.coefs_paths_.values())),
                                   np.array(list(theirs.coefs_paths_.values())), atol=1e-5)
        np.testing.assert_array_equal(ours.C_, theirs.C_)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)


def test_class_without_a_sample_of_non_zero_weight_still_trains_its_column():
    """scikit-learn trains every class of y, also one whose samples all have weight 0 (its column then has no
    positive sample): the same here (the engine's ProblemOptions::classes), binary and multinomial, where it was an
    error; the coefficients are the fit without those samples' rows but with the class kept."""
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    sw = np.where(y == 2, 0.0, 1.0)
    for target in (y, (y == 2).astype(int)):
        ours = hetglm.LogisticRegression(C=0.5, tol=1e-14, fit_intercept=False).fit(X, target, sample_weight=sw)
        theirs = sklm.LogisticRegression(C=0.5, tol=1e-12, max_iter=10000, fit_intercept=False).fit(
            X, target, sample_weight=sw)
        np.testing.assert_array_equal(ours.classes_, theirs.classes_)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)
        assert ours.predict_proba(X).shape == (150, len(theirs.classes_))
    with pytest.raises(ValueError, match=r"^Sample weights must contain at least one non-zero number\.$"):
        hetglm.LogisticRegression().fit(X, y, sample_weight=np.zeros(150))


@pytest.mark.parametrize("device", ["cpu", "cuda", "opencl", "fpga"])
def test_cv_estimators_refit_on_the_device_or_give_its_error(housing_dense, device):
    """LassoCV / ElasticNetCV / RidgeCV took `device` and dropped it (a device not compiled in trained on the CPU
    without a word): their refit runs there, and a device the engine cannot use gives the same error as the plain
    estimator's, before the folds."""
    X, y = housing_dense
    for plain, cv in [(hetglm.Lasso(alpha=0.1, device=device), hetglm.LassoCV(alphas=5, cv=3, device=device)),
                      (hetglm.ElasticNet(alpha=0.1, device=device),
                       hetglm.ElasticNetCV(alphas=5, cv=3, device=device)),
                      (hetglm.Ridge(device=device), hetglm.RidgeCV(cv=3, device=device))]:
        try:
            plain.fit(X, y)
        except ValueError as e:
            with pytest.raises(ValueError, match="^" + re.escape(str(e)) + "$"):
                cv.fit(X, y)
            continue
        cv.fit(X, y)  # the device works here: the refit is the plain estimator's fit at alpha_ on it
        ref = plain.set_params(alpha=cv.alpha_, tol=cv.tol).fit(X, y)
        assert cv.solver_ == ref.solver_
        np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"^l1_ratio must be a number in \[0, 1\] or a non-empty list of them, got "
                                         r"an empty list$"):
        hetglm.ElasticNetCV(l1_ratio=[]).fit(X, y)


@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_paths_report_the_features_gap_safe_screening_proved_zero(housing_dense, l1_ratio):
    """return_n_screened: per point the features the working-set solver's gap-safe rule proved zero at the optimum,
    warm-started along the path (the first screening at each point uses the previous point's solution)."""
    rng = np.random.default_rng(3)  # and a wide sparse problem where screening matters: 200 x 2000, 20 per row
    Xs = sp.random(200, 2000, density=0.01, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    Xs.data = Xs.data.astype(np.float32).astype(np.float64)  # the engine stores float32
    w = np.zeros(2000)
    w[:20] = 1.0
    Xh, yh = housing_dense
    for X, y in ((Xh.astype(np.float32).astype(np.float64), yh), (Xs, Xs @ w + 0.1 * rng.standard_normal(200))):
        alphas, coefs, gaps, n_iter, n_screened = hetglm.enet_path(X, y, l1_ratio=l1_ratio, tol=1e-12, eps=1e-2,
                                                                   n_alphas=30, max_iter=1000000, return_n_iter=True,
                                                                   return_n_screened=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, c2, _ = sklm.enet_path(X, y, l1_ratio=l1_ratio, alphas=alphas, tol=1e-14, max_iter=1000000)
        assert n_screened.shape == (30,) and n_screened.dtype == np.int64
        zeros = (c2 == 0).sum(axis=0)
        d = X.shape[1]
        xy = np.abs(np.asarray(X.T @ y).ravel())
        # alpha_max: w = 0 is optimal with a zero gap (radius 0): every feature but the argmax of |x_j . y| (at the
        # threshold, kept by the rule's rounding margin) is out
        assert n_screened[0] == d - np.sum(xy == xy.max()), (n_screened[0], d)
        # a feature proved zero is zero in scikit-learn's solution, at every point
        assert np.all(n_screened <= zeros), np.flatnonzero(n_screened > zeros)
        # at tol 1e-12 the safe region is tiny: every zero of scikit-learn's solution is screened but at alpha_max
        # and the rare points where a feature is about to enter the model
        assert np.sum(n_screened[1:] == zeros[1:]) >= 27, np.flatnonzero(n_screened != zeros)
        # and the coefficients are those of the path without the extra output
        _, coefs_plain, _ = hetglm.enet_path(X, y, l1_ratio=l1_ratio, tol=1e-12, eps=1e-2, n_alphas=30,
                                             max_iter=1000000)
        np.testing.assert_array_equal(coefs_plain, coefs)


def _cli():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    for cand in (os.environ.get("HETGLM_CLI"), os.path.join(root, "build", "bin", "hetglm"), shutil.which("hetglm")):
        if cand and os.path.exists(cand):
            return cand
    return None


@pytest.mark.skipif(_cli() is None, reason="the hetglm CLI is not built (build/bin/hetglm)")
def test_cli_report_carries_the_screened_count(tmp_path, data_dir, housing_dense):
    X, y = housing_dense
    alpha = float(0.05 * np.abs(X.T @ y).max() / X.shape[0])
    *_, n_screened = hetglm.lasso_path(X, y, alphas=[alpha], tol=1e-12, max_iter=100000, return_n_screened=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sklm.Lasso(alpha=alpha, fit_intercept=False, tol=1e-15, max_iter=1000000).fit(X, y).coef_
    assert 0 < n_screened[0] == np.sum(ref == 0) < X.shape[1]
    rep = tmp_path / "r.json"
    subprocess.run([_cli(), "train", "-q", "--model", "lasso", "--lambda", repr(alpha), "--tol", "1e-12",
                    "--report-json", str(rep), str(data_dir / "housing_scale"), str(tmp_path / "m")], check=True)
    col = json.loads(rep.read_text())["columns"][0]
    assert col["screened"] == n_screened[0]  # the same solve on the CLI's threads (thread-count independent)
    subprocess.run([_cli(), "train", "-q", "--report-json", str(rep), str(data_dir / "heart_scale"),
                    str(tmp_path / "m")], check=True)
    assert "screened" not in json.loads(rep.read_text())["columns"][0]  # Newton does not screen


@sklearn_1_9
def test_logistic_regression_cv_attributes_are_sklearns():
    """LogisticRegressionCV's fitted attributes as scikit-learn 1.9's, values and shapes, side by side on data where
    both solve to 1e-6 (no intercept, C <= 1, log loss, whose scores are continuous): the legacy ones (its default:
    scores_ and coefs_paths_ dicts keyed by class, classes_[1] alone for two classes; C_, l1_ratio_ repeated per class;
    n_iter_ (1, n_folds, n_Cs); the l1_ratios axis only when l1_ratios is given), use_legacy_attributes=False's
    arrays, and refit=False (each fold's best C, the mean of their coefficients and of their C)."""
    from sklearn.datasets import load_iris
    X, y3 = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    Cs = [0.01, 0.1, 1.0]
    for y in ((y3 == 2).astype(int), y3):
        for extra in (dict(), dict(l1_ratios=[0.0]), dict(use_legacy_attributes=False), dict(refit=False)):
            params = dict(Cs=Cs, cv=3, fit_intercept=False, scoring="neg_log_loss", **extra)
            ours = hetglm.LogisticRegressionCV(tol=1e-14, **params).fit(X, y)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = sklm.LogisticRegressionCV(tol=1e-12, max_iter=100000, **params).fit(X, y)
            where = (len(np.unique(y)), extra)
            for name in ("Cs_", "C_", "l1_ratio_", "l1_ratios_"):
                a, b = getattr(ours, name), getattr(theirs, name)
                assert type(a) is type(b) and np.shape(a) == np.shape(b), (where, name, a, b)
                if name != "l1_ratios_" or b[0] is not None:
                    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12)
                else:
                    assert list(a) == list(b) == [None]
            assert np.shape(ours.n_iter_) == np.shape(theirs.n_iter_), where
            for name, tol in (("scores_", 1e-6), ("coefs_paths_", 1e-5)):
                a, b = getattr(ours, name), getattr(theirs, name)
                if isinstance(b, dict):
                    assert list(a) == list(b), (where, name)
                    a, b = np.array(list(a.values())), np.array(list(b.values()))
                assert a.shape == b.shape, (where, name, a.shape, b.shape)
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{where} {name}")
            np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-6, atol=1e-6, err_msg=str(where))
    with pytest.raises(ValueError, match=r"^save_model: LogisticRegressionCV\(refit=False\) averages the folds' "
                                         r"coefficients and has no engine model"):
        ours.save_model(os.devnull)


@sklearn_1_9
def test_logistic_regression_cv_elastic_net_grid_is_sklearns():
    """l1_ratios with values between 0 and 1: the elastic net cross-validated over (C, l1_ratio), scores_ (n_folds,
    n_Cs, n_l1_ratios) and the choice as scikit-learn 1.9's (saga, run to 1e-6 of the optimum here); errors named
    for a bad l1_ratios."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 6))
    y = (X @ np.array([1.5, -2.0, 0.0, 0.0, 1.0, 0.0]) + rng.standard_normal(300) > 0).astype(int)
    params = dict(Cs=[0.05, 0.5], l1_ratios=[0.2, 0.8], cv=3, fit_intercept=False, scoring="neg_log_loss")
    ours = hetglm.LogisticRegressionCV(tol=1e-12, **params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklm.LogisticRegressionCV(solver="saga", tol=1e-10, max_iter=100000, **params).fit(X, y)
    assert ours.scores_[1].shape == theirs.scores_[1].shape == (3, 2, 2)
    np.testing.assert_allclose(ours.scores_[1], theirs.scores_[1], rtol=1e-6)
    np.testing.assert_array_equal(ours.C_, theirs.C_)
    np.testing.assert_array_equal(ours.l1_ratio_, theirs.l1_ratio_)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)
    assert ours.engine_model_["penalty"] == "elastic-net" and ours.engine_model_["l1_ratio"] == ours.l1_ratio_[0]
    for bad, msg in (([], r"^l1_ratios must be None or a non-empty list of numbers in \[0, 1\], got \[\]$"),
                     ([0.5, 2.0], r"^l1_ratio must be a number in \[0, 1\], got 2\.0$")):
        with pytest.raises(ValueError, match=msg):
            hetglm.LogisticRegressionCV(l1_ratios=bad).fit(X, y)
    with pytest.raises(ValueError, match=r"^l1_ratios must be a list of numbers in \[0, 1\] with "
                                         r"penalty='elasticnet', got None$"):
        hetglm.LogisticRegressionCV(penalty="elasticnet").fit(X, y)


def test_path_n_jobs_runs_the_full_passes_on_threads_with_the_same_result():
    """lasso_path / enet_path take n_jobs (scikit-learn accepts it in **params): the working-set solver's full passes
    run on that many threads, and every coefficient, gap and epoch count is the one thread's (fixed chunks summed in
    order); a bad value is refused by name."""
    rng = np.random.default_rng(3)
    X = sp.random(3000, 400, density=0.05, random_state=3, format="csc")
    y = X @ (rng.standard_normal(400) * (rng.random(400) < 0.1)) + 0.1 * rng.standard_normal(3000)
    for l1_ratio in (1.0, 0.5):
        one = hetglm.enet_path(X, y, l1_ratio=l1_ratio, n_alphas=30, tol=1e-8, return_n_iter=True)
        two = hetglm.enet_path(X, y, l1_ratio=l1_ratio, n_alphas=30, tol=1e-8, return_n_iter=True, n_jobs=2)
        for a, b in zip(one, two):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"^n_jobs must be None or an integer, got 'two'$"):
        hetglm.lasso_path(X, y, n_jobs="two")


def test_cv_estimators_check_refit_n_jobs_and_penalty_by_name():
    """Found by a bad-input trial: refit='no' refitted (its truth value), LassoCV(n_jobs=1.5) passed unchecked and
    n_jobs=0 (all cores for the engine) was joblib's error, penalty=None cross-validated a C it does not have; a
    refit=False fit after a refit=True one kept the refit's solver_ / lambda_ / training_history_; without l1_ratios,
    refit=False's l1_ratio_ (new attributes) is 1.0 for penalty='l1', as scikit-learn's."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 4))
    y = (X[:, 0] + 0.5 * rng.standard_normal(120) > 0).astype(int)
    for bad, msg in ((dict(refit="no"), r"^refit must be True or False, got 'no'$"),
                     (dict(n_jobs=1.5), r"^n_jobs must be None or an integer, got 1\.5$"),
                     (dict(penalty=None), r"^penalty=None: LogisticRegressionCV cross-validates C, which the "
                                          r"unpenalized model does not have")):
        with pytest.raises(ValueError, match=msg):
            hetglm.LogisticRegressionCV(Cs=3, **bad).fit(X, y)
    for est in (hetglm.LassoCV(cv=3, n_jobs="x"), hetglm.ElasticNetCV(cv=3, n_jobs=True),
                hetglm.RidgeCV(cv=3, n_jobs=2.0)):
        with pytest.raises(ValueError, match=r"^n_jobs must be None or an integer, got "):
            est.fit(X, X[:, 1])
    np.testing.assert_array_equal(hetglm.LassoCV(cv=3, n_jobs=0).fit(X, X[:, 1]).mse_path_,
                                  hetglm.LassoCV(cv=3).fit(X, X[:, 1]).mse_path_)
    est = hetglm.LogisticRegressionCV(Cs=3).fit(X, y)
    assert hasattr(est, "solver_") and hasattr(est, "training_history_")
    est.set_params(refit=False).fit(X, y)
    for name in ("solver_", "lambda_", "formulation_reason_", "training_history_", "engine_model_", "duality_gap_"):
        assert not hasattr(est, name), name
    assert est.C == 1.0  # (the property's default: no refit's C left)
    l1 = hetglm.LogisticRegressionCV(Cs=3, penalty="l1", refit=False, use_legacy_attributes=False).fit(X, y)
    assert l1.l1_ratio_ == 1.0 and isinstance(l1.C_, float)


@sklearn_1_9
def test_logistic_regression_cv_takes_an_infinite_C_as_no_penalty():
    """Cs may hold np.inf, the unpenalized model (LogisticRegression(C=np.inf)), as scikit-learn's
    LogisticRegressionCV takes it (it was refused); its fold scores are those of the unpenalized fits."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(200) > 0).astype(int)
    params = dict(Cs=[0.01, np.inf], cv=3, fit_intercept=False, scoring="neg_log_loss")
    ours = hetglm.LogisticRegressionCV(tol=1e-12, **params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (scikit-learn 1.9's about its 1.10 defaults)
        theirs = sklm.LogisticRegressionCV(tol=1e-12, max_iter=10000, **params).fit(X, y)
    np.testing.assert_array_equal(ours.Cs_, [0.01, np.inf])
    np.testing.assert_allclose(ours.scores_[1], theirs.scores_[1], rtol=1e-6)
    np.testing.assert_array_equal(ours.C_, theirs.C_)


def test_cv_grids_keep_their_values_and_refuse_nested_alphas():
    """LogisticRegressionCV's Cs_ and l1_ratios_ keep the values as given (integers stay integers, as
    scikit-learn's); RidgeCV refuses a 2-d alphas by name (it was flattened into a grid)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 3))
    y = (X[:, 0] > 0).astype(int)
    est = hetglm.LogisticRegressionCV(Cs=[1, 10], l1_ratios=[0, 1], cv=3).fit(X, y)
    assert est.Cs_.dtype.kind == "i" and est.l1_ratios_.dtype.kind == "i"
    np.testing.assert_array_equal(est.Cs_, [1, 10])
    np.testing.assert_array_equal(est.l1_ratios_, [0, 1])
    with pytest.raises(ValueError, match=r"^alphas must be a number or a 1-d list of numbers, got 2-d "):
        hetglm.RidgeCV(alphas=[[1.0, 2.0]]).fit(X, X[:, 1])


@sklearn_1_9
def test_logistic_regression_cv_score_uses_its_scoring():
    """LogisticRegressionCV.score is the scoring option's score, as scikit-learn's (it was accuracy whatever the
    scoring, so cross_val_score measured something else than the folds chose by); None is accuracy. Found by a
    new-user trial."""
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    for scoring in ("neg_log_loss", None):
        params = dict(Cs=[0.1, 1.0], cv=3, fit_intercept=False, scoring=scoring)
        ours = hetglm.LogisticRegressionCV(tol=1e-14, **params).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            theirs = sklm.LogisticRegressionCV(tol=1e-12, max_iter=10000, **params).fit(X, y)
        sw = np.linspace(0.5, 2.0, len(y))
        assert ours.score(X, y) == pytest.approx(theirs.score(X, y), rel=1e-6)
        assert ours.score(X, y, sample_weight=sw) == pytest.approx(theirs.score(X, y, sample_weight=sw), rel=1e-6)
    assert ours.score(X, y) == ours.predict(X).__eq__(y).mean()  # (None: accuracy)


def test_cv_estimators_take_groups_for_a_group_splitter():
    """LassoCV / RidgeCV / LogisticRegressionCV.fit(X, y, groups=g) raised TypeError, so GroupKFold could not be
    used (found by a hostile trial); scikit-learn routes groups to the splitter (metadata routing). The same
    choices as scikit-learn's with the same groups."""
    import sklearn
    from sklearn.model_selection import GroupKFold
    rng = np.random.RandomState(0)
    X = rng.randn(90, 5)
    y = X @ rng.randn(5) + rng.randn(90)
    groups = np.repeat(np.arange(9), 10)
    cases = [(hetglm.LassoCV(cv=GroupKFold(3), alphas=20), sklm.LassoCV(cv=GroupKFold(3), alphas=20), y, "alpha_"),
             (hetglm.RidgeCV(cv=GroupKFold(3), alphas=[0.1, 1, 10, 100]),
              sklm.RidgeCV(cv=GroupKFold(3), alphas=[0.1, 1, 10, 100]), y, "alpha_"),
             (hetglm.LogisticRegressionCV(cv=GroupKFold(3), Cs=5, fit_intercept=False),
              sklm.LogisticRegressionCV(cv=GroupKFold(3), Cs=5, fit_intercept=False), (y > 0).astype(int), "C_")]
    for ours, theirs, target, attr in cases:
        ours.fit(X, target, groups=groups)
        with sklearn.config_context(enable_metadata_routing=True):
            theirs.fit(X, target, groups=groups)
        np.testing.assert_allclose(getattr(ours, attr), getattr(theirs, attr), rtol=1e-12)
    # GroupKFold's folds differ from KFold's here: LogisticRegressionCV picks C = 1e-4 with the groups, 1 without.
    assert hetglm.LogisticRegressionCV(cv=GroupKFold(3), Cs=5, fit_intercept=False).fit(
        X, (y > 0).astype(int), groups=groups).C_[0] == 1e-4
    with pytest.raises(TypeError, match=r"^LassoCV\.fit\(\) got unexpected keyword arguments \['bogus'\] \(only "
                                        r"groups, for the splitter\)$"):
        hetglm.LassoCV(cv=3).fit(X, y, bogus=1)
    with pytest.raises(ValueError, match=r"^groups has 3 entries for 90 samples$"):
        hetglm.RidgeCV(cv=GroupKFold(3)).fit(X, y, groups=[1, 2, 3])


def test_ridgecv_names_a_fold_without_weighted_training_samples():
    """A fold whose training part held only weight-0 samples stopped RidgeCV with Ridge's "Sample weights must
    contain at least one non-zero number", which names neither the fold nor the split (a hostile trial)."""
    from sklearn.model_selection import KFold
    rng = np.random.RandomState(0)
    X, y = rng.randn(60, 4), rng.randn(60)
    with pytest.raises(ValueError) as e:
        hetglm.RidgeCV(cv=KFold(3)).fit(X, y, sample_weight=np.r_[np.ones(20), np.zeros(40)])
    assert str(e.value) == ("RidgeCV: the training part of fold 1 of 3 has only samples of weight 0: nothing to fit "
                            "there (give a cv whose training parts hold weighted samples)")
