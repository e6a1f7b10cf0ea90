#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 20: the logistic C path on a9a against scikit-learn's and against the exact optimum.

100 values of C from 1e-4 to 1 (no intercept, labels +-1): hetglm.logistic_regression_path at tol 1e-12 and 1e-15,
scikit-learn's LogisticRegression(solver='newton-cg', tol=1e-12, warm_start=True) over the same Cs, and the exact
optimum w* of each point by Newton's method with the dense 123 x 123 Hessian in float64 (warm-started, until the
step is below 1e-15 of max |w|). Reports max |w - w*| per system and the largest coefficient difference between
hetglm and scikit-learn; writes OUT/paths_logistic_accuracy.json. L2 logistic regression is strictly convex, but
a9a's 15-dimensional null space is curved by lambda = 1 / (C n) alone (3e-5 at C = 1), so a relative gap g bounds
||w - w*|| only by sqrt(2 g P / lambda) (1.4e-4 at g = 1e-12).

    PYTHONPATH=<dir holding hetglm> python3 bench/paths_logistic_accuracy.py [--out DIR]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paths_bench as b  # noqa: E402  (first: it pins the BLAS threads to 1 before numpy loads)

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(b.ROOT, "bench", "results"))
    args = ap.parse_args()
    import hetglm
    from sklearn import linear_model as sklm
    X, y = b.libsvm("a9a")
    X = X.astype(np.float64).tocsr()
    yy = np.where(y > 0, 1.0, -1.0)
    n, d = X.shape
    Xd = X.toarray()
    Cs = np.logspace(-4, 0, 100)
    out = {"machine": b.machine(), "Cs": Cs.tolist(), "seconds": {}}
    paths = {}
    for tol in (1e-12, 1e-15):
        t0 = time.perf_counter()
        paths[f"hetglm tol {tol:g}"] = np.asarray(hetglm.logistic_regression_path(
            X, yy, Cs=Cs, fit_intercept=False, tol=tol, max_iter=100000)[0])
        out["seconds"][f"hetglm tol {tol:g}"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    est = sklm.LogisticRegression(fit_intercept=False, tol=1e-12, max_iter=100000, warm_start=True, solver="newton-cg")
    paths["scikit-learn newton-cg tol 1e-12"] = np.array(
        [est.set_params(C=float(C)).fit(X, yy).coef_.ravel().copy() for C in Cs])
    out["seconds"]["scikit-learn newton-cg tol 1e-12"] = time.perf_counter() - t0
    refs, w = [], np.zeros(d)
    for C in Cs:  # exact Newton, warm-started
        lam = 1.0 / (C * n)
        for _ in range(50):
            s = 0.5 * (1 - np.tanh(0.5 * yy * (Xd @ w)))  # sigma(-y z)
            g = Xd.T @ (-yy * s) / n + lam * w
            H = (Xd * (s * (1 - s))[:, None]).T @ Xd / n + lam * np.eye(d)
            step = np.linalg.solve(H, g)
            w = w - step
            if np.abs(step).max() <= 1e-15 * max(1.0, np.abs(w).max()):
                break
        refs.append(w.copy())
    refs = np.array(refs)
    sk = paths["scikit-learn newton-cg tol 1e-12"]
    for name, W in paths.items():
        dv = np.abs(W - refs).max(axis=1)
        out[name] = {"max_vs_exact": float(dv.max()), "worst_C": float(Cs[dv.argmax()]),
                     "points_above_1e-6": int((dv > 1e-6).sum()), "per_point": dv.tolist()}
        print(f"{name}: max |w - w*| over the 100 Cs {dv.max():.2e} (worst C {Cs[dv.argmax()]:.3g}), points above "
              f"1e-6: {(dv > 1e-6).sum()}, {out['seconds'][name]:.1f} s", flush=True)
        if name.startswith("hetglm"):
            dd = np.abs(W - sk).max(axis=1)
            out[name]["max_vs_sklearn"] = float(dd.max())
            print(f"   vs scikit-learn: max coefficient difference {dd.max():.2e}, points above 1e-6: "
                  f"{(dd > 1e-6).sum()}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paths_logistic_accuracy.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
