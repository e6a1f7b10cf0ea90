# SPDX-License-Identifier: Apache-2.0
"""Multinomial (softmax) logistic regression with an L1 or elastic-net penalty: hetglm's proximal Newton solver
against scikit-learn's saga (its only solver for these penalties with the multinomial model), side by side in one
process, no intercept, the objective of each computed here from the coefficients in float64:
    P(W) = (1/n) sum_i (logsumexp(x_i W) - x_i W_{y_i}) + (l1_ratio ||W||_1 + (1 - l1_ratio) ||W||^2 / 2) / (C n).

Each system runs at a sweep of its own tolerance (hetglm: relative duality gap; saga: its change of the weights);
the reference P* is the smallest objective any run reached. For each target relative suboptimality (P - P*) / P*
the table gives the time of the first tolerance of the sweep whose run reaches it, the median of --reps runs.

    python bench/multinomial_l1.py [--reps 3] [--sets iris,digits,dna,generated] [--name multinomial_l1]

Writes bench/results/NAME.md and NAME.json.
"""
import argparse
import json
import pathlib
import platform
import statistics
import time
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn import __version__ as sklearn_version
from sklearn import linear_model as sklm
from sklearn.datasets import load_digits, load_iris, make_classification

import hetglm

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGETS = (1e-3, 1e-6)
HETGLM_TOLS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
SAGA_TOLS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


def objective(X, y_enc, W, C, l1_ratio):
    Z = X @ W.T
    n = X.shape[0]
    loss = (logsumexp(Z, axis=1) - Z[np.arange(n), y_enc]).mean()
    return loss + (l1_ratio * np.abs(W).sum() + (1 - l1_ratio) * np.sum(W * W) / 2) / (C * n)


def load(name):
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "dna":
        X, y = hetglm.load_svmlight_file(ROOT / "data" / "dna.scale")
        return X.toarray(), y
    # seed 0: 20,000 x 100, 5 classes
    return make_classification(n_samples=20000, n_features=100, n_informative=30, n_classes=5, random_state=0)


def fit(system, X, y, C, l1_ratio, tol):
    if system == "hetglm":
        est = hetglm.LogisticRegression(C=C, l1_ratio=l1_ratio, fit_intercept=False, tol=tol, max_iter=1000, n_jobs=2)
    else:
        est = sklm.LogisticRegression(C=C, l1_ratio=l1_ratio, solver="saga", fit_intercept=False, tol=tol,
                                      max_iter=100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        est.fit(X, y)
        return time.perf_counter() - t, est


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sets", default="iris,digits,dna")
    ap.add_argument("--C", type=float, default=0.5)
    ap.add_argument("--name", default="multinomial_l1")
    a = ap.parse_args()
    rows = []
    for name in a.sets.split(","):
        X, y = load(name)
        X = np.ascontiguousarray(X, dtype=np.float64)
        y_enc = np.searchsorted(np.unique(y), y)
        for l1_ratio in (1.0, 0.5):
            runs = {"hetglm": {}, "saga": {}}
            for system, tols in (("hetglm", HETGLM_TOLS), ("saga", SAGA_TOLS)):
                for tol in tols:
                    times, P = [], None
                    for _ in range(a.reps):  # interleaving the systems would not change a medians-of-own-runs table
                        s, est = fit(system, X, y, a.C, l1_ratio, tol)
                        times.append(s)
                        P = objective(X, y_enc, est.coef_, a.C, l1_ratio)
                    runs[system][tol] = (statistics.median(times), P)
                    print(f"{name} l1_ratio {l1_ratio} {system} tol {tol:g}: {statistics.median(times):.3f}s "
                          f"P={P:.15g}", flush=True)
            p_star = min(P for r in runs.values() for _, P in r.values())
            row = {"set": name, "n": X.shape[0], "d": X.shape[1], "classes": int(len(np.unique(y))),
                   "l1_ratio": l1_ratio, "C": a.C, "p_star": p_star, "runs": {
                       s: [{"tol": t, "seconds": v[0], "primal": v[1]} for t, v in r.items()] for s, r in runs.items()}}
            for target in TARGETS:
                for system, r in runs.items():
                    hit = [v[0] for t, v in r.items() if (v[1] - p_star) / p_star <= target]
                    row[f"{system}_{target:g}"] = hit[0] if hit else None
            rows.append(row)
    out = ROOT / "bench" / "results"
    (out / f"{a.name}.json").write_text(json.dumps(rows, indent=1))
    cpu = platform.processor() or platform.machine()
    lines = [f"# Multinomial logistic regression, L1 and elastic net: hetglm against scikit-learn's saga", "",
             f"`python3 bench/multinomial_l1.py --reps {a.reps} --sets {a.sets}` (C = {a.C}, no intercept; hetglm "
             f"n_jobs=2; scikit-learn {sklearn_version}; {cpu}, 2 cores). Seconds to reach relative suboptimality "
             "(P - P*) / P* at the first tolerance of each system's sweep that reaches it, median of "
             f"{a.reps} runs; P* the smallest objective of any run; \"-\" where no tolerance of the sweep reached it.",
             "", "| set | n x d, classes | l1_ratio | hetglm 1e-3 | saga 1e-3 | ratio | hetglm 1e-6 | saga 1e-6 | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for target in TARGETS:
            h, s = r[f"hetglm_{target:g}"], r[f"saga_{target:g}"]
            cells += [f"{h:.3f}" if h else "-", f"{s:.3f}" if s else "-",
                      f"{s / h:.1f}x" if h and s else "-"]
        lines.append(f"| {r['set']} | {r['n']} x {r['d']}, {r['classes']} | {r['l1_ratio']} | " + " | ".join(cells) + " |")
    (out / f"{a.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
