# SPDX-License-Identifier: Apache-2.0
"""Multinomial (softmax) logistic regression: hetglm's Newton-CG against scikit-learn's lbfgs and newton-cg, side by
side, no intercept, C = 1, the objective of each (engine scaling: (1/n) sum_i loss_i + ||W||^2 / (2 C n)) computed
here from the coefficients. One run per system (not the median of 5 of docs/conventions.md, "Benchmarks": an
indication, not a claim).

    python bench/multinomial_sklearn.py                 # iris, digits, dna.scale
    python bench/multinomial_sklearn.py --generated N   # make_classification(N x 500, 10 classes), as issue 20
    python bench/multinomial_sklearn.py --generated N --sweep   # time and objective at a sweep of tolerances
                                                                # (hetglm and each scikit-learn solver)
"""
import argparse
import pathlib
import time
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn import linear_model as sklm
from sklearn.datasets import load_digits, load_iris, make_classification

import hetglm

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def objective(X, y_enc, W, C):
    Z = X @ W.T
    n = X.shape[0]
    return (logsumexp(Z, axis=1) - Z[np.arange(n), y_enc]).mean() + np.sum(W * W) / (2 * C * n)


def compare(name, X, y, tol, n_jobs):
    t = time.perf_counter()
    ours = hetglm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, n_jobs=n_jobs, max_iter=500).fit(X, y)
    t_ours = time.perf_counter() - t
    y_enc = np.searchsorted(ours.classes_, y)
    p_ours = objective(X, y_enc, ours.coef_, 1.0)
    print(f"{name}: hetglm {t_ours:.2f}s P={p_ours:.12g} ({ours.n_iter_[0]} Newton iterations, relative gap "
          f"{ours.duality_gap_ / ours.primal_objective_:.1e})", flush=True)
    for solver in ("lbfgs", "newton-cg"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            th = sklm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, solver=solver, max_iter=100000).fit(X, y)
            t_th = time.perf_counter() - t
        p_th = objective(X, y_enc, th.coef_, 1.0)
        print(f"   scikit-learn {solver}: {t_th:.2f}s P={p_th:.12g} (relative difference of hetglm's "
              f"{(p_ours - p_th) / p_th:.1e})", flush=True)


def sweep(X, y, n_jobs):
    """Each system at a sweep of its own tolerance: (seconds, objective) per run, so that the time each needs to reach
    a given suboptimality can be read off side by side (bench/results/multinomial.md)."""
    classes = np.unique(y)
    y_enc = np.searchsorted(classes, y)
    runs = []
    for tol in (1e-3, 1e-4, 1e-6):
        t = time.perf_counter()
        m = hetglm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, n_jobs=n_jobs, max_iter=500).fit(X, y)
        runs.append(("hetglm", tol, time.perf_counter() - t, objective(X, y_enc, m.coef_, 1.0)))
        print(runs[-1], flush=True)
    for solver in ("lbfgs", "newton-cg"):
        for tol in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                m = sklm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, solver=solver,
                                            max_iter=100000).fit(X, y)
                runs.append((solver, tol, time.perf_counter() - t, objective(X, y_enc, m.coef_, 1.0)))
            print(runs[-1], flush=True)
    best = min(r[3] for r in runs)
    print("| system | tol | seconds | objective | relative suboptimality |")
    print("|---|---|---|---|---|")
    for name, tol, sec, p in runs:
        print(f"| {name} | {tol:g} | {sec:.2f} | {p:.12f} | {(p - best) / best:.1e} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generated", type=int, default=0, help="rows of a generated 500-feature, 10-class set")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--sweep", action="store_true", help="with --generated: a sweep of tolerances per system")
    a = ap.parse_args()
    if a.generated:
        X, y = make_classification(n_samples=a.generated, n_features=500, n_informative=50, n_classes=10,
                                   random_state=0)
        if a.sweep:
            sweep(X, y, a.n_jobs)
            return
        compare(f"generated {a.generated} x 500, 10 classes", X, y, a.tol, a.n_jobs)
        return
    X, y = hetglm.load_svmlight_file(DATA / "dna.scale")
    for name, (X, y) in (("iris", load_iris(return_X_y=True)), ("digits", load_digits(return_X_y=True)),
                         ("dna.scale", (X.toarray(), y))):
        compare(name, X, y, a.tol, a.n_jobs)


if __name__ == "__main__":
    main()
