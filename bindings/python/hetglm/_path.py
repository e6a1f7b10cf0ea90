# SPDX-License-Identifier: Apache-2.0
"""Regularization paths and the cross-validated estimators on top of them.

Every point of a path is one engine fit (``_hetglm.train_path``: train() at each lambda in turn, the public train
API) warm-started from the previous point's coordinate variables (``TrainOptions::initial_alpha``: the weights for the primal, the dual variables for
the dual), so each point carries its own duality-gap certificate (``dual_gaps``: P - D, absolute, in the engine's
scaling, which for Lasso / elastic net is scikit-learn's objective). The grids follow scikit-learn: from the
smallest regularization that makes every coefficient zero, alpha_max = max_j |x_j . y| / (n l1_ratio), down to
eps * alpha_max, geometrically (glmnet's path; Friedman, Hastie, Tibshirani, JSS 33, 2010).
The CV estimators run the same path on every fold (folds side by side in threads with ``n_jobs``: the engine
releases the GIL), choose the regularization of the best mean score and refit on all the data.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, column_or_1d, validate_data

from . import _hetglm
from ._estimators import (_MAX_DENSE_ENTRIES, ElasticNet, Lasso, LogisticRegression, Ridge, _BaseRegressor,
                          _HetGLMBase, _centre, _centring, _check_cd_params, _check_float_range, _check_l1_ratio,
                          _check_sparse_format, _check_tol_max_iter, _engine_call, _float64_for, _penalty_from,
                          _positive_finite, _resolve_penalty, _seed, _threads_for, _to_matrix)

__all__ = ["lasso_path", "enet_path", "logistic_regression_path", "LassoCV", "ElasticNetCV",
           "LogisticRegressionCV", "RidgeCV"]


def _alpha_grid(X, y, l1_ratio, eps, n_alphas, fit_intercept=False, sample_weight=None):
    """scikit-learn's grid (linear_model._coordinate_descent._alpha_grid) for y (n,). With sample weights sw: means
    weighted, alpha_max = max_j |x_j^T diag(sw) (y - ybar)| / (sum(sw) l1_ratio), as scikit-learn's."""
    if l1_ratio <= 0:
        raise ValueError("automatic alpha grid generation needs l1_ratio > 0 (give alphas)")
    if not _positive_finite(eps):
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    sw = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    n = X.shape[0] if sample_weight is None else float(sw.sum())
    if fit_intercept:
        X_mean = np.asarray(X.T @ sw).ravel() / sw.sum() if sample_weight is not None else \
            np.asarray(X.mean(axis=0)).ravel()
        yc = y - (np.average(y, axis=0, weights=sw) if sample_weight is not None else y.mean(axis=0))
        yw = yc * sw
        Xy = np.asarray(X.T @ yw).ravel() - X_mean * yw.sum()
    else:
        Xy = np.asarray(X.T @ (y * sw)).ravel()
    top = np.max(np.abs(Xy))
    alpha_max = top / (n * l1_ratio)
    if alpha_max <= np.finfo(np.float64).resolution:
        return np.full(n_alphas, np.finfo(np.float64).resolution)
    return np.geomspace(alpha_max, alpha_max * eps, num=n_alphas)


def _path_alphas(X, y, l1_ratio, eps, n_alphas, alphas, fit_intercept=False, sample_weight=None):
    if alphas is None or (isinstance(alphas, numbers.Integral) and not isinstance(alphas, bool)):
        if alphas is None and (not isinstance(n_alphas, numbers.Integral) or isinstance(n_alphas, bool)):
            raise ValueError(f"n_alphas must be an int >= 1, got {n_alphas!r}")
        n = int(n_alphas if alphas is None else alphas)
        if n < 1:
            raise ValueError(f"the number of alphas must be at least 1, got {n}")
        return _alpha_grid(X, y, l1_ratio, eps, n, fit_intercept, sample_weight)
    if np.ndim(alphas) != 1:  # (a float was taken as one alpha, [[0.1, 0.2]] flattened)
        raise ValueError(f"alphas must be None, an int (the number of alphas) or a 1-D list of values, got "
                         f"{alphas!r}")
    alphas = np.sort(np.asarray(alphas, dtype=np.float64))[::-1]
    if alphas.size == 0 or not np.all((alphas > 0) & np.isfinite(alphas)):
        raise ValueError("alphas must be positive finite numbers")
    return alphas


def _c_grid(Cs):
    """The values of C of a C path, ascending: ``np.logspace(-4, 4, Cs)`` for an int (scikit-learn's grid), else the
    values given. ValueError for an int below 1 or values that are not positive numbers (np.inf is the unpenalized
    model, as scikit-learn's LogisticRegressionCV takes it)."""
    if isinstance(Cs, numbers.Integral) and not isinstance(Cs, (bool, np.bool_)):
        if Cs < 1:
            raise ValueError(f"Cs: the number of values of C must be at least 1, got {Cs}")
        return np.logspace(-4, 4, int(Cs))
    if np.ndim(Cs) == 0:  # (scikit-learn refuses a scalar that is not an int: Cs=1.5 is not C = 1.5)
        raise ValueError(f"Cs must be an int >= 1 (a grid of that many values of C) or a list of values of C, got "
                         f"{Cs!r}")
    Cs = np.sort(np.asarray(Cs, dtype=np.float64).ravel())
    if Cs.size == 0 or not np.all(Cs > 0):  # (np.inf: the unpenalized model, as LogisticRegression(C=np.inf))
        raise ValueError("Cs: the values of C must be positive numbers (np.inf: no penalty; at least one)")
    return Cs


def _engine_path(M, y, model, lambdas, options, initial=None):
    """Fit `model` at every lambda of `lambdas` (in the order given) on the converted matrix M, each fit
    warm-started from the previous one. Returns (w (n_rows, n_points, n_columns), gaps, primals, epochs,
    converged, screened, stalled): screened per point is the number of features the gap-safe rule proved zero,
    summed over the columns (-1 when the solver does not screen); stalled per point the engine's reason for a stop
    without measurable progress ("" otherwise)."""
    ws, gaps, primals, epochs, converged, screened, stalled = [], [], [], [], [], [], []
    o = options()
    o.model = model
    # One engine call for the whole path (_hetglm.train_path): each point warm-started from the previous one, the
    # lambda-independent work of the working-set solver done once.
    for res in _engine_call(_hetglm.train_path, M, y, o, [float(lam) for lam in lambdas], initial):
        ws.append(np.asarray(res["w"]))
        gaps.append(float(np.sum(res["gap"])))
        primals.append(float(np.sum(res["primal"])))
        epochs.append(int(max(col["epochs"] for col in res["columns"])))
        converged.append(bool(res["converged"]))
        sc = [col["screened"] for col in res["columns"]]
        screened.append(-1 if any(c is None for c in sc) else int(sum(sc)))
        stalled.append(next((str(col["stalled"]) for col in res["columns"] if col["stalled"]), ""))
    return (np.stack(ws, axis=1), np.array(gaps), np.array(primals), np.array(epochs), np.array(converged),
            np.array(screened, dtype=np.int64), stalled)


def _by_feature(X, tol, offset=None):
    """X^T for the engine (features as rows, Matrix.by_feature), converted once for the whole path: the Lasso and
    elastic net train in the primal without a bias, so train() then uses it as it is instead of transposing X at
    every point (about 0.5 s per point on a 100,000 x 50,000 matrix with 5 million entries). A CSR X is converted
    to CSC first (by_feature stores CSR input by sample). float64 input keeps its float64 values at a tol below
    _hetglm.float64_tol, which the working-set solver then reads (_float64_for; docs/formulation.md, "float64
    data"). offset (dense X only): the conversion centres X (_to_matrix), as the float64 copy X - offset would
    convert."""
    return _to_matrix(X.tocsc() if sp.issparse(X) and X.format != "csc" else X, by_feature=True,
                      float64=_float64_for(tol), offset=offset)


def _options_factory(tol, max_iter, random_state, l1_ratio=0.5, n_jobs=None):
    _check_tol_max_iter(tol, max_iter)
    threads = _threads_for(n_jobs)

    def make():
        o = _hetglm.TrainOptions()
        o.tol = float(tol)
        o.max_epochs = int(max_iter)
        o.seed = _seed(random_state)
        o.l1_ratio = float(l1_ratio)
        o.n_threads = threads
        return o
    return make


def enet_path(X, y, *, l1_ratio=0.5, eps=1e-3, n_alphas=100, alphas=None, tol=1e-4, max_iter=1000,
              random_state=None, return_n_iter=False, return_n_screened=False, check_input=True, **params):
    """Elastic-net path (scikit-learn's ``enet_path``, no intercept): the coefficients at every alpha of the grid,
    largest alpha first, each fit warm-started from the previous one and certified by its duality gap.

    Minimises (1/(2n)) ||y - X w||^2 + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio)/2 ||w||^2 at each alpha.
    ``alphas``: None (a grid of ``n_alphas`` values from alpha_max down to eps alpha_max), an int (that many), or
    the values. ``tol`` is the relative duality gap of every point (docs/conventions.md). y is (n,) or (n, 1)
    (scikit-learn fits y with several columns as one multi-task problem, which hetglm does not have: ValueError).

    Returns alphas (n_alphas,), coefs (n_features, n_alphas), or (1, n_features, n_alphas) for y (n, 1), dual_gaps
    (n_alphas,) (the certified P - D of each point, absolute), with ``return_n_iter``
    the engine's epochs per point, and with ``return_n_screened`` (after n_iter) the number of features gap-safe
    screening proved zero at each point's optimum ((n_alphas,), or (1, n_alphas) for y (n, 1); scikit-learn has no such
    output): the working-set solver removes them during the fit (Fercoq, Gramfort, Salmon 2015; Ndiaye et al.
    2017), the first time at the warm start, i.e. with the previous point's solution rescaled to a dual point of
    this alpha (the sequential gap-safe rule), and counts those its final certificate's dual point rules out; a
    point certified at its warm start counts only the latter. Divide by n_features for the fraction.
    ``n_jobs``: the engine's threads for the full passes of every point (None or 1: one; -1: all cores; the same
    result for every count, working_set.hpp); the other keyword arguments of scikit-learn's (``precompute``,
    ``copy_X``, ``verbose``, ...) are accepted and ignored; ``coef_init`` starts the first point from those weights.
    Raises ValueError for bad inputs (named: y, alphas, eps, l1_ratio, tol, max_iter, coef_init, n_jobs); a point
    that does not reach ``tol`` within ``max_iter`` epochs gives a ConvergenceWarning (its result and gap are still
    returned)."""
    name = "lasso_path" if l1_ratio == 1 else "enet_path"
    known = {"precompute", "Xy", "copy_X", "verbose", "positive", "coef_init", "selection", "n_jobs"}
    unknown = set(params) - known
    if unknown:
        raise TypeError(f"enet_path got unexpected keyword arguments {sorted(unknown)}")
    if params.get("positive"):
        raise ValueError("positive=True is not supported by the hetglm engine")
    if check_input:
        X = check_array(_check_sparse_format(X), accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                        order="C", accept_large_sparse=True, input_name="X")
        if sp.issparse(X):  # (a dense X: by its conversion, _to_matrix)
            _check_float_range(X, "X", tiny=True)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim not in (1, 2) or (y.ndim == 2 and y.shape[1] == 0):
        raise ValueError(f"y must be (n_samples,) or (n_samples, n_targets) with n_targets >= 1, got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")
    if not np.all(np.isfinite(y)):
        k = int(np.flatnonzero(~np.isfinite(y.ravel()))[0])
        where = ", ".join(str(int(i)) for i in np.unravel_index(k, y.shape))
        raise ValueError(f"y[{where}] = {float(y.ravel()[k])!r}: y must be finite")
    if y.ndim == 2 and y.shape[1] > 1:
        raise ValueError(f"y has {y.shape[1]} targets (shape {y.shape}): scikit-learn's {name} fits them as one "
                         f"multi-task problem (MultiTaskLasso / MultiTaskElasticNet: one sparsity pattern for all "
                         f"targets), which hetglm does not have; pass one target at a time, y[:, k]")
    y1 = np.ascontiguousarray(y.ravel())  # (n,) or (n, 1): one target
    l1_ratio = _check_l1_ratio(l1_ratio)
    alphas = _path_alphas(X, y1, l1_ratio, eps, n_alphas, alphas)
    M = _by_feature(X, tol)
    model = "lasso" if l1_ratio == 1 else "elastic-net"
    options = _options_factory(tol, max_iter, random_state, l1_ratio, params.get("n_jobs"))
    init = None
    coef_init = params.get("coef_init")
    if coef_init is not None:
        ci = np.asarray(coef_init, dtype=np.float64)
        if not np.all(np.isfinite(ci)):
            raise ValueError("coef_init must be finite")
        init = [np.ascontiguousarray(ci.ravel())]
    w, gaps, pr, ep, conv, sc, st = _engine_path(M, y1, model, alphas, options, init)
    if not np.all(conv):
        k = int(np.flatnonzero(~conv)[0])
        # Two causes, two remedies: the epoch budget ran out (increase max_iter), or the engine stopped on no
        # measurable progress (its stall rule: more epochs would not help; say why, as the estimators do).
        cause = (f"stopped after {ep[k]} epochs: {st[k]}" if st[k] else f"max_iter={max_iter} epochs reached; "
                 f"increase max_iter")
        warnings.warn(f"{name}: {int(np.sum(~conv))} of {len(alphas)} points did not reach the relative duality gap "
                      f"tol={tol:g} (first: alpha={alphas[k]:g}, relative gap "
                      f"{gaps[k] / max(abs(pr[k]), np.finfo(float).tiny):.3g}, {cause})", ConvergenceWarning,
                      stacklevel=3 if model == "lasso" else 2)
    coefs = np.array(w[:, :, 0], dtype=np.float64)
    n_iters, n_screened = np.asarray(ep, dtype=np.int64), np.asarray(sc, dtype=np.int64)
    if y.ndim == 2:  # y (n, 1): scikit-learn's shapes (1, n_features, n_alphas) and (1, n_alphas)
        coefs, n_iters, n_screened = coefs[None], n_iters[None], n_screened[None]
    if getattr(X, "dtype", None) == np.float32:  # scikit-learn's coefs follow X's dtype (alphas, gaps stay float64)
        coefs = coefs.astype(np.float32)
    out = (alphas, coefs, gaps) + ((n_iters,) if return_n_iter else ()) + ((n_screened,) if return_n_screened else ())
    return out


def lasso_path(X, y, *, eps=1e-3, n_alphas=100, alphas=None, tol=1e-4, max_iter=1000, random_state=None,
               return_n_iter=False, return_n_screened=False, **params):
    """Lasso path (scikit-learn's ``lasso_path``): :func:`enet_path` with l1_ratio = 1 (``return_n_screened``:
    the features gap-safe screening proved zero at each point, as there)."""
    return enet_path(X, y, l1_ratio=1.0, eps=eps, n_alphas=n_alphas, alphas=alphas, tol=tol, max_iter=max_iter,
                     random_state=random_state, return_n_iter=return_n_iter, return_n_screened=return_n_screened,
                     **params)


def logistic_regression_path(X, y, *, Cs=10, fit_intercept=True, intercept_scaling=1.0, penalty="l2",
                             l1_ratio=None, tol=1e-4, max_iter=1000, class_weight=None, multi_class="auto",
                             random_state=None, sample_weight=None):
    """The C path of :class:`hetglm.LogisticRegression` (scikit-learn's private ``_logistic_regression_path``):
    one fit per C, smallest C (strongest regularization) first, each warm-started from the previous one (dual
    variables or weights; the formulation of the first fit is kept) and certified by its duality gap.
    ``Cs``: an int (``np.logspace(-4, 4, Cs)``, as scikit-learn) or the values.

    Returns coefs (n_Cs, n_features [+ 1]) for two classes or (n_Cs, n_classes, n_features [+ 1]) (the intercept
    last when ``fit_intercept``), Cs (ascending), n_iter (n_Cs,) epochs, dual_gaps (n_Cs,)."""
    Cs = _c_grid(Cs)
    est = LogisticRegression(penalty=penalty, l1_ratio=l1_ratio, tol=tol, max_iter=max_iter,
                             fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                             class_weight=class_weight, multi_class=multi_class, random_state=random_state,
                             warm_start=True)
    coefs, n_iter, gaps = [], [], []
    for C in Cs:
        est.set_params(C=float(C)).fit(X, y, sample_weight=sample_weight)
        w = np.hstack([est.coef_, est.intercept_[:, None]]) if fit_intercept else est.coef_.copy()
        coefs.append(w[0] if w.shape[0] == 1 else w)
        n_iter.append(int(np.max(est.n_iter_)))
        gaps.append(est.duality_gap_)
    return np.array(coefs), Cs, np.array(n_iter), np.array(gaps)


# ------------------------------------------------------------------------------------------------ CV estimators
def _fold_mse(X, y, train, test, l1_ratio, alphas, fit_intercept, tol, max_iter, random_state, sw=None):
    """One fold of LassoCV / ElasticNetCV: the path on the centred training part, the test part's MSE per alpha
    (scikit-learn's _path_residuals). With sample weights, as scikit-learn's: the training part's weights rescaled
    to sum to its size, the means weighted, the centred rows and y scaled by sqrt(weight) (so that the path's
    (1/2n) ||y - Xw||^2 is the weighted loss), the MSE averaged with the test part's weights."""
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    sw_tr = None if sw is None else sw[train] * (len(train) / np.sum(sw[train]))
    offset = None  # the centring done by the conversion (a dense X without weights: no centred copy)
    if fit_intercept:
        if sw_tr is None:
            X_mean = np.asarray(Xtr.mean(axis=0)).ravel()
            y_mean = float(ytr.mean())
        else:
            X_mean = np.asarray(Xtr.T @ sw_tr).ravel() / sw_tr.sum()
            y_mean = float(np.average(ytr, weights=sw_tr))
        # (with weights the centred rows are scaled below, so the copy is made)
        Xc, X_mean, offset = _centring(Xtr, X_mean) if sw_tr is None else (*_centre(Xtr, X_mean), None)
        yc = ytr - y_mean
    else:
        X_mean, y_mean, Xc, yc = np.zeros(X.shape[1]), 0.0, Xtr, ytr
    if sw_tr is not None:
        s = np.sqrt(sw_tr)
        Xc = sp.diags(s) @ Xc if sp.issparse(Xc) else Xc * s[:, None]
        yc = yc * s
    M = _by_feature(np.ascontiguousarray(Xc) if not sp.issparse(Xc) else sp.csr_matrix(Xc), tol, offset)
    model = "lasso" if l1_ratio == 1 else "elastic-net"
    w, gaps, _, _, _, _, _ = _engine_path(M, np.ascontiguousarray(yc), model, alphas,
                                          _options_factory(tol, max_iter, random_state, l1_ratio))
    coefs = w[:, :, 0]  # (n_features, n_alphas)
    intercepts = y_mean - X_mean @ coefs
    pred = np.asarray(Xte @ coefs) + intercepts
    return np.average((pred - yte[:, None]) ** 2, axis=0, weights=None if sw is None else sw[test])


def _cv_groups(who, params, n_samples):
    """The ``groups`` of a CV estimator's fit (scikit-learn passes them to the splitter through metadata routing:
    GroupKFold needs them); any other keyword is a TypeError naming it, as an unexpected argument."""
    unknown = sorted(set(params) - {"groups"})
    if unknown:
        raise TypeError(f"{who}.fit() got unexpected keyword arguments {unknown} (only groups, for the splitter)")
    groups = params.get("groups")
    if groups is not None and len(groups) != n_samples:
        raise ValueError(f"groups has {len(groups)} entries for {n_samples} samples")
    return groups


def _joblib_jobs(n_jobs):
    """The CV estimators' n_jobs for joblib's Parallel (folds side by side in threads), checked as the engine's
    (_threads_for: None or an integer); 0, all cores for the engine, is joblib's -1."""
    _threads_for(n_jobs)
    return -1 if n_jobs == 0 else n_jobs


def _sample_weight_or_none(sample_weight, X):
    """The CV estimators' sample_weight: None, or float64 (n_samples,) checked as the estimators' fit checks it
    (non-negative and finite with scikit-learn's messages, the right length, within float32 range), before the
    folds."""
    if sample_weight is None:
        return None
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    _check_float_range(sw, "sample_weight")
    return sw


def _check_refit_device(est, X, y):
    """The CV estimators' folds run on the CPU (the path functions, the closed-form LOO); their refit at the chosen
    regularization runs on ``device``. A device other than 'cpu' / 'auto' is tried now, by the refit's estimator on
    two samples, so that one the engine cannot use (not compiled in, not present) is the engine's ValueError before
    the folds' work instead of after it."""
    if est.device in ("cpu", "auto"):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:2], y[:2])


class _LinearModelCV(_BaseRegressor):
    """LassoCV / ElasticNetCV: the path of every l1_ratio on every fold, the alpha of the least mean squared error,
    then one refit of the estimator at that alpha on all the data (its certificate is the model's)."""

    def _l1_ratios(self):
        return [1.0]

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Cross-validate the path, choose alpha_ (and l1_ratio_), refit on all the data. X (n_samples,
        n_features) array or sparse matrix, y (n_samples,), sample_weight (n_samples,) non-negative or None (used
        as scikit-learn's LassoCV uses it: in the grid, each fold's fit and MSE, and the refit); ``groups``
        (n_samples,) for a group splitter (GroupKFold). Returns self."""
        self._check_common()
        _check_cd_params(self)
        X, y = validate_data(self, _check_sparse_format(X), y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], order="C", y_numeric=True, accept_large_sparse=True)
        _check_float_range(X, "X", tiny=True)  # the caller's entry named, not a fold's
        y32 = np.asarray(y).dtype == np.float32  # (mse_path_ is float32 when X and y both are, as scikit-learn's)
        y = column_or_1d(y).astype(np.float64)
        X = X.tocsr() if sp.issparse(X) else X
        sw = _sample_weight_or_none(sample_weight, X)
        l1_ratios = [float(r) for r in self._l1_ratios()]
        n_jobs = _joblib_jobs(self.n_jobs)
        _check_refit_device(ElasticNet(l1_ratio=l1_ratios[0], max_iter=1, device=self.device), X, y)
        folds = list(check_cv(self.cv).split(X, y, _cv_groups(type(self).__name__, fit_params, X.shape[0])))
        alphas_all, mse = [], []
        for r in l1_ratios:
            alphas = _path_alphas(X, y, r, self.eps, 100, self.alphas, self.fit_intercept, sw)
            alphas_all.append(alphas)
            per_fold = Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(_fold_mse)(X, y, tr, te, r, alphas, self.fit_intercept, self.tol, self.max_iter,
                                   self.random_state, sw) for tr, te in folds)
            mse.append(np.array(per_fold).T)  # (n_alphas, n_folds)
        best = (np.inf, 0, 0)
        for k, m in enumerate(mse):
            i = int(np.argmin(m.mean(axis=1)))
            if m.mean(axis=1)[i] < best[0]:
                best = (m.mean(axis=1)[i], k, i)
        _, k, i = best
        self.l1_ratio_ = l1_ratios[k]
        self.alpha_ = float(alphas_all[k][i])
        # scikit-learn's shapes: a grid per l1_ratio when the grid is computed, the one given otherwise; mse_path_
        # squeezed (one alpha: (n_folds,)).
        given = self.alphas is not None and not isinstance(self.alphas, numbers.Integral)
        self.alphas_ = alphas_all[0] if len(l1_ratios) == 1 or given else np.array(alphas_all)
        self.mse_path_ = np.squeeze(mse[0] if len(l1_ratios) == 1 else np.array(mse))
        if X.dtype == np.float32 and y32:  # scikit-learn's: float32 when X and y both are
            self.mse_path_ = self.mse_path_.astype(np.float32)
        est = ElasticNet(alpha=self.alpha_, l1_ratio=self.l1_ratio_, fit_intercept=self.fit_intercept,
                         tol=self.tol, max_iter=self.max_iter, random_state=self.random_state, device=self.device)
        est.fit(X, y, sample_weight=sw)
        for name in ("coef_", "intercept_", "n_iter_", "duality_gap_", "primal_objective_", "training_history_",
                     "lambda_", "formulation_reason_", "solver_", "engine_models_", "engine_model_"):
            setattr(self, name, getattr(est, name))
        self.dual_gap_ = est.dual_gap_
        self.n_features_in_ = X.shape[1]
        return self


class LassoCV(_LinearModelCV):
    """Lasso with alpha chosen by cross-validation (scikit-learn's ``LassoCV``): the warm-started, certified
    path of :func:`lasso_path` on every fold (``cv``: None = 5-fold KFold, an int, or a splitter), the alpha of
    the least mean squared error over the folds, and a refit at that alpha. ``alphas``: 100 (int: a grid of that
    many values from alpha_max down to eps alpha_max, on the data centred when fit_intercept) or the values;
    ``n_jobs``: folds side by side in threads; ``device``: where the refit runs (the folds' paths run on the CPU; a
    device the engine cannot use is its ValueError before the folds).

    Attributes: alpha_, alphas_, mse_path_ (n_alphas, n_folds), coef_, intercept_, dual_gap_ / duality_gap_ (of
    the refit), n_iter_, plus those of :class:`hetglm.Lasso`."""

    _engine_model_name = "lasso"

    def __init__(self, *, eps=1e-3, alphas=100, fit_intercept=True, precompute="auto", max_iter=1000, tol=1e-4,
                 copy_X=True, cv=None, n_jobs=None, positive=False, random_state=None, selection="cyclic", verbose=0,
                 device="cpu"):
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.positive = positive
        self.selection = selection
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.device = device


class ElasticNetCV(_LinearModelCV):
    """Elastic net with alpha (and l1_ratio, when a list is given) chosen by cross-validation (scikit-learn's
    ``ElasticNetCV``), as :class:`LassoCV` over each l1_ratio. Attributes also l1_ratio_; mse_path_ is
    (n_l1_ratios, n_alphas, n_folds) when l1_ratio is a list."""

    _engine_model_name = "elastic-net"

    def __init__(self, *, l1_ratio=0.5, eps=1e-3, alphas=100, fit_intercept=True, precompute="auto", max_iter=1000,
                 tol=1e-4, cv=None, copy_X=True, verbose=0, n_jobs=None, positive=False, random_state=None,
                 selection="cyclic", device="cpu"):
        self.l1_ratio = l1_ratio
        LassoCV.__init__(self, eps=eps, alphas=alphas, fit_intercept=fit_intercept, precompute=precompute,
                         max_iter=max_iter, tol=tol, copy_X=copy_X, cv=cv, n_jobs=n_jobs, positive=positive,
                         random_state=random_state, selection=selection, verbose=verbose, device=device)

    def _l1_ratios(self):
        ratios = self.l1_ratio if isinstance(self.l1_ratio, (list, tuple, np.ndarray)) else [self.l1_ratio]
        if len(ratios) == 0:
            raise ValueError("l1_ratio must be a number in [0, 1] or a non-empty list of them, got an empty list")
        return [_check_l1_ratio(r) for r in ratios]


def _logistic_cv_scorer(est, scoring, classes):
    """LogisticRegressionCV's scorer, once per fit: check_scoring's, except that a metric that takes `labels` (log
    loss, Brier score) gets every class (and pos_label when binary), as scikit-learn's _log_reg_scoring_path does,
    since a fold's test part may lack some ("y_true and y_prob contain different number of classes")."""
    import inspect

    from sklearn.metrics import check_scoring, get_scorer, make_scorer
    if scoring is None:
        return check_scoring(est, scoring=scoring)
    named = get_scorer(scoring)
    sig = inspect.signature(named._score_func).parameters if hasattr(named, "_score_func") else {}
    if "labels" not in sig:
        return check_scoring(est, scoring=scoring)
    pos = {"pos_label": classes[-1]} if len(classes) <= 2 and "pos_label" in sig else {}
    return make_scorer(named._score_func, greater_is_better=named._sign == 1, response_method=named._response_method,
                       labels=classes, **pos, **getattr(named, "_kwargs", {}))


def _fold_path(est, X, y, train, test, Cs, scorer, sw=None):
    """One fold of LogisticRegressionCV at one l1_ratio (``est``, the base estimator, carries it and every class of
    the data, so that a training part without some class still fits a column for it, as scikit-learn's folds): per
    C (ascending, each fit warm-started from the previous: est has warm_start=True) the test part's score
    (`scorer`: _logistic_cv_scorer's), the coefficients with the intercept last (n_rows, n_dof), one row for two
    classes, else one per class, and the epochs. With sample weights, as scikit-learn 1.9's LogisticRegressionCV:
    each fit takes the training part's weights and the score (the default accuracy or a scorer) the test part's."""
    weights = {} if sw is None else {"sample_weight": sw[test]}
    scores, coefs, iters = [], [], []
    for C in Cs:
        est.set_params(C=float(C)).fit(X[train], y[train], sample_weight=None if sw is None else sw[train])
        scores.append(scorer(est, X[test], y[test], **weights))
        w = np.hstack([est.coef_, np.asarray(est.intercept_)[:, None]]) if est.fit_intercept else est.coef_
        coefs.append(np.array(w, dtype=np.float64))
        iters.append(int(np.max(est.n_iter_)))
    return np.array(scores), np.array(coefs), np.array(iters)


class LogisticRegressionCV(LogisticRegression):
    """Logistic regression with C (and, for the elastic net, l1_ratio) chosen by cross-validation (scikit-learn
    1.9's ``LogisticRegressionCV``): on every fold and every l1_ratio the warm-started C path of
    :func:`logistic_regression_path` (smallest C first, each point certified), the (C, l1_ratio) of the best mean
    score (``scoring``: None = accuracy; ties to the first C, then the first l1_ratio, in the order given), and a
    certified refit there on all the data (``refit=True``); ``refit=False``: as scikit-learn, each fold's best point,
    coef_ / intercept_ the mean of those folds' coefficients and C_ (l1_ratio_) the mean of their C (l1_ratio), no
    engine refit (so no certificate and no model file). ``Cs``: an int (``np.logspace(-4, 4, Cs)``) or the values;
    ``l1_ratios``: None (the penalty 'l2', or as ``penalty`` says) or a list of values in [0, 1]: all 0 is 'l2', all 1
    'l1', else the elastic net over them (``penalty='auto'``, the default, as scikit-learn 1.9's 'deprecated');
    ``cv``: None = 5-fold StratifiedKFold, an int or a splitter; ``n_jobs``: folds side by side in threads.
    Multiclass as :class:`LogisticRegression` (multinomial by default); ``dual``, ``solver`` and ``formulation`` as
    there.

    Attributes, as scikit-learn 1.9's (``use_legacy_attributes=True``, its behaviour by default): Cs_ (n_Cs,), in the
    order given; l1_ratios_ (n_l1_ratios,) (``[None]`` when l1_ratios is None); C_ and l1_ratio_ (n_classes,) or
    (1,), the value repeated; scores_ a dict {class: (n_folds, n_Cs[, n_l1_ratios])} (one key, classes_[1], for two
    classes; the same array under every key); coefs_paths_ a dict {class: (n_folds, n_Cs[, n_l1_ratios], n_dof)}
    (n_dof = n_features + fit_intercept, the intercept last; every fold fits every class of the data, also one its
    training part lacks, as scikit-learn's); n_iter_ (1, n_folds, n_Cs[,
    n_l1_ratios]) epochs of the fold fits (the n_l1_ratios axis only when l1_ratios is given).
    ``use_legacy_attributes=False``: C_ and l1_ratio_ floats, scores_ (n_folds, n_l1_ratios, n_Cs), coefs_paths_
    (n_folds, n_l1_ratios, n_Cs, n_classes (1 for two classes), n_dof), n_iter_ (n_folds, n_l1_ratios, n_Cs). Plus
    those of LogisticRegression (of the refit)."""

    def __init__(self, *, Cs=10, l1_ratios=None, fit_intercept=True, cv=None, dual="auto", penalty="auto",
                 scoring=None, solver="auto", tol=1e-4, max_iter=1000, class_weight=None, n_jobs=None, verbose=0,
                 refit=True, intercept_scaling=1.0, random_state=None, use_legacy_attributes=True,
                 multi_class="auto", device="cpu", formulation="auto"):
        self.Cs = Cs
        self.l1_ratios = l1_ratios
        self.dual = dual
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.penalty = penalty
        self.scoring = scoring
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.refit = refit
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.use_legacy_attributes = use_legacy_attributes
        self.multi_class = multi_class
        self.device = device
        self.formulation = formulation

    @property
    def C(self):  # LogisticRegression.fit reads self.C: the chosen C during the refit
        return getattr(self, "_C_refit", 1.0)

    @property
    def l1_ratio(self):  # ... and self.l1_ratio (through _resolved_penalty): the chosen l1_ratio
        return getattr(self, "_l1_refit", None)

    @property
    def warm_start(self):
        return False

    @property
    def accel_memory(self):
        return None

    def _float32_coef(self):  # scikit-learn's LogisticRegressionCV gives float64 coef_ for float32 X
        return False

    def _l1_grid(self):
        """(the l1_ratios cross-validated, [None] when none is given; the penalty of every fit), resolved as
        scikit-learn 1.9: penalty 'auto' / 'deprecated' from the l1_ratios (all 0 or None: 'l2', all 1: 'l1', else
        'elasticnet'), an explicit one as given ('elasticnet' needs l1_ratios). ValueError naming the parameter."""
        r = self.l1_ratios
        if r is None or (isinstance(r, str) and r == "warn"):  # ('warn': scikit-learn 1.9's default, None)
            grid = [None]
        else:
            if isinstance(r, (str, bytes)) or np.ndim(r) != 1 or len(r) == 0:
                raise ValueError(f"l1_ratios must be None or a non-empty list of numbers in [0, 1], got {r!r}")
            grid = [_check_l1_ratio(v) for v in r]
        p = _penalty_from(self.penalty, grid)
        if p == "elasticnet" and grid == [None]:
            raise ValueError("l1_ratios must be a list of numbers in [0, 1] with penalty='elasticnet', got None")
        return grid, p

    def _base(self, penalty, l1_ratio, classes=None, class_weight=None):
        """A fold's estimator: warm-started along the Cs, fitting every class of `classes` (those of the whole
        data), with `class_weight` (scikit-learn computes 'balanced' once, on the whole data) or the estimator's."""
        est = LogisticRegression(penalty=penalty, l1_ratio=l1_ratio, tol=self.tol, max_iter=self.max_iter,
                                 fit_intercept=self.fit_intercept, intercept_scaling=self.intercept_scaling,
                                 class_weight=self.class_weight if class_weight is None else class_weight,
                                 random_state=self.random_state, multi_class=self.multi_class, device=self.device,
                                 formulation=self.formulation, dual=self.dual, solver=self.solver, warm_start=True)
        est._fit_classes = classes
        return est

    def _resolved_penalty(self):
        """The refit's penalty: the folds' (_l1_grid's) at the chosen l1_ratio."""
        return _resolve_penalty(self._l1_grid()[1], self.l1_ratio)

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Cross-validate the C path (per l1_ratio), choose C_ (and l1_ratio_), refit on all the data. X (n_samples,
        n_features) array or sparse matrix, y (n_samples,), sample_weight (n_samples,) non-negative or None (each
        fold's fit and score and the refit use it, as scikit-learn's); ``groups`` (n_samples,) for a group
        splitter. Returns self. ValueError for bad parameters (named) or data."""
        X, y = validate_data(self, _check_sparse_format(X), y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], order="C", accept_large_sparse=True)
        _check_float_range(X, "X", tiny=True)  # the caller's entry named, not a fold's
        X = X.tocsr() if sp.issparse(X) else X
        sw = _sample_weight_or_none(sample_weight, X)
        legacy = self.use_legacy_attributes
        if not (isinstance(legacy, (bool, np.bool_)) or (isinstance(legacy, str) and legacy == "warn")):
            raise ValueError(f"use_legacy_attributes must be True or False, got {legacy!r}")
        legacy = isinstance(legacy, str) or bool(legacy)  # ('warn': scikit-learn 1.9's default, True)
        if not isinstance(self.refit, (bool, np.bool_)):
            raise ValueError(f"refit must be True or False, got {self.refit!r}")
        n_jobs = _joblib_jobs(self.n_jobs)
        scoring = None if isinstance(self.scoring, str) and self.scoring == "warn" else self.scoring
        Cs = _c_grid(self.Cs)  # checked and ascending: each fold's path is warm-started from the smaller C
        given = Cs if np.ndim(self.Cs) == 0 else np.asarray(self.Cs, dtype=np.float64).ravel()
        # Cs_ / l1_ratios_ keep the values as given (integers stay integers, as scikit-learn's)
        shown = Cs if np.ndim(self.Cs) == 0 else np.asarray(self.Cs).ravel()
        order = np.argsort(given, kind="stable")  # given[order] is Cs
        grid, penalty = self._l1_grid()
        if penalty is None:
            raise ValueError("penalty=None: LogisticRegressionCV cross-validates C, which the unpenalized model does "
                             "not have (use LogisticRegression(penalty=None)), as scikit-learn refuses it")
        classes = np.unique(y)
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y, _cv_groups("LogisticRegressionCV", fit_params,
                                                                                  X.shape[0])))
        scorer = _logistic_cv_scorer(self._base(penalty, grid[0]), scoring, classes)
        cw = None
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":  # on the whole data, as scikit-learn
            cw = dict(zip(classes, compute_class_weight("balanced", classes=classes, y=y, sample_weight=sw)))
        out = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_fold_path)(self._base(penalty, r, classes, cw), X, y, tr, te, Cs, scorer, sw)
            for tr, te in folds for r in grid)
        F, L, nC = len(folds), len(grid), len(given)
        # (n_folds, n_l1, n_Cs, ...), the C axis in the order given (Cs_; ties to the first C given, as scikit-learn)
        scores, coefs, iters = (np.empty((F, L, nC) + np.shape(out[0][k])[1:]) for k in range(3))
        for q, (sc, cf, it) in enumerate(out):
            f, k = divmod(q, L)
            scores[f, k, order], coefs[f, k, order], iters[f, k, order] = sc, cf, it
        binary = len(classes) <= 2
        if self.refit:
            by_point = scores.sum(axis=0).T  # (n_Cs, n_l1): C first, as scikit-learn's argmax
            i, k = np.unravel_index(int(np.argmax(by_point)), by_point.shape)
            self._C_refit, self._l1_refit = float(given[i]), grid[k]
            super().fit(X, y, sample_weight=sw)
            C_, l1_ = float(given[i]), grid[k]
        else:  # scikit-learn's: each fold's best point, the mean of those points' coefficients, C and l1_ratio
            best = [np.unravel_index(int(np.argmax(scores[f].T)), (nC, L)) for f in range(F)]
            w = np.mean([coefs[f, k, i] for f, (i, k) in enumerate(best)], axis=0)  # (n_rows, n_dof)
            nf = X.shape[1]
            for name in ("engine_model_", "engine_models_", "duality_gap_", "primal_objective_", "solver_",
                         "lambda_", "formulation_reason_", "training_history_", "_C_refit", "_l1_refit"):
                self.__dict__.pop(name, None)  # (of an earlier fit with refit=True: not this model's)
            self.classes_ = classes
            self.coef_ = np.ascontiguousarray(w[:, :nf])
            self.intercept_ = w[:, nf].copy() if self.fit_intercept else np.zeros(w.shape[0])
            self.multinomial_ = (not binary) and self._base(penalty, grid[0])._multinomial(False)
            self.n_features_in_ = nf
            C_ = float(np.mean([given[i] for i, _ in best]))
            l1_ = float(np.mean([grid[k] for _, k in best])) if penalty == "elasticnet" else 0.0
        self.Cs_ = shown
        self.l1_ratios_ = np.asarray(grid if grid == [None] else self.l1_ratios).ravel()
        keys = classes[1:] if binary else classes
        if legacy:
            given_l1 = grid != [None]  # scikit-learn drops the l1_ratios axis when l1_ratios is None

            def squeeze(a):
                return a if given_l1 else a[:, :, 0]
            per = np.moveaxis(scores, 1, 2)  # (n_folds, n_Cs, n_l1)
            paths = np.moveaxis(coefs, 1, 2)  # (n_folds, n_Cs, n_l1, n_rows, n_dof)
            self.scores_ = {c: squeeze(per.copy()) for c in keys}
            self.coefs_paths_ = {c: squeeze(paths[:, :, :, j, :]) for j, c in enumerate(keys)}
            self.n_iter_ = squeeze(np.moveaxis(iters, 1, 2))[None, ...].astype(np.int32)
            self.C_ = np.full(len(keys), C_)
            self.l1_ratio_ = np.asarray([l1_] * len(keys))
        else:
            self.scores_ = scores
            self.coefs_paths_ = coefs
            self.n_iter_ = iters.astype(np.int32)
            self.C_ = C_
            # scikit-learn's: without l1_ratios, 1.0 for penalty='l1' given explicitly, else 0.0
            self.l1_ratio_ = (1.0 if self.penalty == "l1" else 0.0) if grid == [None] else float(l1_)
        return self

    def score(self, X, y, sample_weight=None):
        """The ``scoring`` option's score on (X, y) (accuracy when it is None), as scikit-learn's
        LogisticRegressionCV.score: cross_val_score and nested model selection then measure what the folds
        chose by. A scorer of probabilities gets every class of the fit as labels (_logistic_cv_scorer)."""
        check_is_fitted(self)
        scoring = None if isinstance(self.scoring, str) and self.scoring == "warn" else self.scoring
        if scoring is None:
            return super().score(X, y, sample_weight=sample_weight)
        scorer = _logistic_cv_scorer(self, scoring, self.classes_)
        return scorer(self, X, y, **({} if sample_weight is None else {"sample_weight": sample_weight}))

    def _model_dict(self):
        if not hasattr(self, "engine_model_"):
            raise ValueError("save_model: LogisticRegressionCV(refit=False) averages the folds' coefficients and has "
                             "no engine model (nor a certificate); fit with refit=True to save one")
        return super()._model_dict()


def _fold_ridge(X, y, train, test, alphas, params, sw):
    """One fold of RidgeCV with cv given: Ridge at every alpha (ascending, each fit warm-started from the previous
    one) on the training part, with its sample weights; per alpha the test part's R^2, weighted by its sample
    weights (as GridSearchCV scores it in scikit-learn 1.9)."""
    est = Ridge(warm_start=True, **params)
    out = []
    for a in alphas:
        est.set_params(alpha=float(a)).fit(X[train], y[train], sample_weight=None if sw is None else sw[train])
        out.append(est.score(X[test], y[test], sample_weight=None if sw is None else sw[test]))
    return np.array(out)


def _ridge_loo_errors(X, y, sw, alphas, fit_intercept):
    """Leave-one-out errors of ridge regression, min_w,b sum_i sw_i (y_i - x_i.w - b)^2 + alpha ||w||^2, for every
    alpha in one decomposition (the closed form of scikit-learn's _RidgeGCV; Golub, Heath, Wahba, Technometrics 21,
    1979). Returns (n_alphas, n) the LOO residuals scaled by sqrt(sw_i): r_i / (1 - H_ii), with H the hat matrix of
    the weighted problem (y (n, k), several targets: (n_alphas, n, k)). With an (unpenalized) intercept, s = sqrt(sw)
    is orthogonal to the weighted-centred columns Xc = diag(s) (X - 1 xbar_w^T), so H = s s^T / sum(sw) + Xc (Xc^T
    Xc + alpha I)^-1 Xc^T. Xc^T Xc + alpha I is diagonalized once: the SVD of Xc. Sparse X is centred densely for
    that when it has at most _MAX_DENSE_ENTRIES entries; beyond, the eigenvectors of Xc^T Xc (p x p, n > p) or of
    Xc Xc^T (n x n, n <= p, with s projected out) from the uncentred products, and eigenvalues at their rounding
    level taken as 0. (From the products below that size, X^T X - sum(sw) xbar xbar^T cancelled for a column with a
    large mean and a small spread, a LOO score 1e4x off, and X X^T kept the null direction s at a rounding eigenvalue
    eps whose leverage share eps / (eps + alpha) grew as 1 / alpha: a score near 0 at alpha 1e-6, which was chosen.)
    Shapes: X (n, p) array or CSR, y (n,) or (n, k), sw (n,)."""
    n, p = X.shape
    if sp.issparse(X) and n * p <= _MAX_DENSE_ENTRIES:
        X = X.toarray()
    s = np.sqrt(sw)
    if fit_intercept:
        xbar = np.asarray(X.T @ sw).ravel() / sw.sum()
        ybar = (sw @ y) / sw.sum()
        h0 = sw / sw.sum()  # the intercept's share of the diagonal of H
    else:
        xbar, ybar, h0 = np.zeros(p), 0.0, np.zeros(n)
    yc = (s if y.ndim == 1 else s[:, None]) * (y - ybar)
    # M (n, r) and lam (r,) such that Xc (Xc^T Xc + alpha I)^-1 Xc^T = M diag(f(lam, alpha)) M^T.
    if not sp.issparse(X):
        U, sv, _ = np.linalg.svd(s[:, None] * (X - xbar), full_matrices=False)
        M, lam, gram = U, sv * sv, True  # f = lam / (lam + alpha)
    elif n > p:
        Xs = sp.diags(s) @ X
        raw = (Xs.T @ Xs).toarray()
        C = raw - sw.sum() * np.outer(xbar, xbar)
        lam, V = np.linalg.eigh(C)
        M, gram = Xs @ V - np.outer(s, xbar @ V), False  # M = Xc V; f = 1 / (lam + alpha)
    else:
        Xs = sp.diags(s) @ X
        u = Xs @ xbar  # Xc = Xs - s xbar^T
        raw = (Xs @ Xs.T).toarray()
        K = raw - np.outer(u, s) - np.outer(s, u) + float(xbar @ xbar) * np.outer(s, s)
        if fit_intercept:  # sqrt(sw) is a null vector of K: take what rounding left along it out (K = P K P)
            e = s / np.linalg.norm(s)
            Ke = K @ e
            K = K - np.outer(e, Ke) - np.outer(Ke, e) + float(e @ Ke) * np.outer(e, e)
        lam, M = np.linalg.eigh(K)
        gram = True
    lam = np.maximum(lam, 0.0)  # eigenvalues of a Gram matrix: rounding below 0 only
    if sp.issparse(X):  # eigenvalues at the rounding level of the products before centring are 0 (null directions)
        lam[lam < np.abs(raw.diagonal()).max(initial=0.0) * max(n, p) * 8 * np.finfo(np.float64).eps] = 0.0
    Mt_y = M.T @ yc
    M2 = M * M
    out = np.empty((len(alphas),) + y.shape)
    for k, a in enumerate(alphas):
        f = lam / (lam + a) if gram else 1.0 / (lam + a)
        fitted = M @ (f * Mt_y if y.ndim == 1 else f[:, None] * Mt_y)  # the centred part of H ys
        resid = yc - fitted
        lev = 1.0 - h0 - M2 @ f
        out[k] = resid / (lev if y.ndim == 1 else lev[:, None])
    return out


class RidgeCV(_BaseRegressor):
    """Ridge with alpha chosen by cross-validation (scikit-learn's ``RidgeCV``). ``cv=None`` (the default):
    efficient leave-one-out, scikit-learn's criterion (best_score_ = minus the mean squared LOO error, weighted by
    sample_weight as scikit-learn's), computed in closed form for all alphas from one decomposition
    (``_ridge_loo_errors``: no engine fit per left-out sample). ``cv`` an int or a splitter: the mean R^2 over the
    folds (scikit-learn's GridSearchCV default; with sample_weight each fold's fit and R^2 weighted, as
    scikit-learn's), each fold an engine fit warm-started along the alphas; ``n_jobs``: folds side by side in
    threads. Then a certified engine refit at alpha_ on all the data, on ``device`` (a device the engine cannot use
    is its ValueError before the folds). Attributes: alpha_, best_score_, coef_, intercept_ and those of
    :class:`hetglm.Ridge`.

    Errors: ValueError for alphas that are not positive, fewer than 2 samples with cv=None, and the input errors of
    :class:`hetglm.Ridge`."""

    _multi_target = True  # y (n, k): coef_ (k, n_features), intercept_ (k,), as Ridge's

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def __init__(self, alphas=(0.1, 1.0, 10.0), *, fit_intercept=True, cv=None, tol=1e-8, max_iter=1000,
                 n_jobs=None, random_state=None, verbose=0, device="cpu"):
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.device = device

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Choose alpha_ by cross-validation, refit on all the data. X (n_samples, n_features) array or sparse
        matrix, y (n_samples,) or (n_samples, n_targets) (one alpha for all targets; coef_ (n_targets,
        n_features)), sample_weight (n_samples,) non-negative or None, ``groups`` (n_samples,) for a group splitter
        (with cv given). Returns self."""
        self._check_common()
        X, y = validate_data(self, _check_sparse_format(X), y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], order="C", y_numeric=True, accept_large_sparse=True,
                             multi_output=True)
        y = np.asarray(y, dtype=np.float64)  # (n,) or (n, k): one alpha for every target, as scikit-learn's default
        column = y.ndim == 2 and y.shape[1] == 1
        if column:  # scikit-learn's RidgeCV gives coef_ (n_features,) for y (n, 1)
            y = y.ravel()
        X = X.tocsr() if sp.issparse(X) else X
        sw = _sample_weight_or_none(sample_weight, X)
        if np.ndim(self.alphas) > 1:  # (scikit-learn: a TypeError; raveling took [[1, 2]] for two alphas)
            raise ValueError(f"alphas must be a number or a 1-d list of numbers, got {np.ndim(self.alphas)}-d "
                             f"{self.alphas!r}")
        given = np.asarray(self.alphas, dtype=np.float64).ravel()
        if given.size == 0 or not np.all((given > 0) & np.isfinite(given)):
            raise ValueError("alphas must be positive finite numbers")
        order = np.argsort(given, kind="stable")  # ascending for the folds' warm starts
        alphas = given[order]
        params = dict(fit_intercept=self.fit_intercept, tol=self.tol, max_iter=self.max_iter,
                      random_state=self.random_state)
        _check_refit_device(Ridge(max_iter=1, device=self.device), X, y)
        groups = _cv_groups("RidgeCV", fit_params, X.shape[0])  # (leave-one-out has no use for them)
        if self.cv is None:
            if X.shape[0] < 2:
                raise ValueError(f"RidgeCV: leave-one-out needs at least 2 samples, got n_samples = {X.shape[0]}")
            looe = _ridge_loo_errors(X.astype(np.float64), y, np.ones(X.shape[0]) if sw is None else sw, alphas,
                                     self.fit_intercept)
            score = -np.mean(looe.reshape(len(alphas), -1) ** 2, axis=1)
        else:
            folds = list(check_cv(self.cv).split(X, y, groups))
            if sw is not None:  # (Ridge's own message did not say which fold, nor that it came from the split)
                for f, (tr, _) in enumerate(folds):
                    if not np.any(sw[tr] > 0):
                        raise ValueError(f"RidgeCV: the training part of fold {f + 1} of {len(folds)} has only "
                                         f"samples of weight 0: nothing to fit there (give a cv whose training parts "
                                         f"hold weighted samples)")
            score = np.array(Parallel(n_jobs=_joblib_jobs(self.n_jobs), prefer="threads")(
                delayed(_fold_ridge)(X, y, tr, te, alphas, params, sw) for tr, te in folds)).mean(axis=0)
        # Ties go to the first alpha in the order given, as scikit-learn's (a constant y scores every alpha alike).
        in_given = np.empty_like(score)
        in_given[order] = score
        best = int(np.argmax(in_given))
        self.alpha_ = float(given[best])
        self.best_score_ = float(in_given[best])
        est = Ridge(alpha=self.alpha_, device=self.device, **params).fit(X, y, sample_weight=sw)
        for name in ("coef_", "intercept_", "n_iter_", "duality_gap_", "primal_objective_", "training_history_",
                     "lambda_", "formulation_reason_", "solver_", "engine_models_", "engine_model_"):
            setattr(self, name, getattr(est, name))
        if column:  # scikit-learn: y (n, 1) gives coef_ (n_features,) and intercept_ (1,)
            self.intercept_ = np.atleast_1d(np.asarray(self.intercept_, dtype=self.coef_.dtype))
        self.n_features_in_ = X.shape[1]
        return self
