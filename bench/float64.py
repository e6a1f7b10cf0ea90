#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""float64 input against float32 input: the fit's time and what its certificate speaks of (docs/formulation.md,
"float64 data").

Usage: PYTHONPATH=<dir holding the hetglm package> python3 bench/float64.py [--reps 5] [--tols 1e-4,1e-8]
       [--cases dense_400000x100:logistic,...] [--out FILE.md]
Models: logistic (LogisticRegression: the Newton solver), ridge (Ridge in the primal: Newton), logistic-dual
(LogisticRegression(dual=True): SDCA), logistic-dual-duhl (the same with accel_memory='25%': DuHL on the cpu
stand-in, float64 values read on the host), squared-hinge-dual (LinearSVC(dual=True): SDCA); C = 1 / alpha = 1; lasso
(Lasso: the working-set solver, alpha = 0.1 max|X^T y| / n).

Per case and tol: REPS fits of the estimator on the float64 array and on its float32 copy, alternated, each in a
fresh process (a warm-up fit first, then the timed one: page faults and the thread pool out of the timing); medians.
For each fit the reported primal objective is set against P(coef_) computed here in float64 on the float64 data:
|P_reported - P64| / P64 says whether the certificate is the float64 problem's (about 1e-16) or the float32-rounded
data's (about 1e-9). Data are generated with seed 0 (Gaussian features; labels of a planted w with Gaussian noise).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time, numpy as np, scipy.sparse as sp
import hetglm
case, model, dtype, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
rng = np.random.default_rng(0)
kind, shape = case.split("_")
n, d = map(int, shape.split("x"))
if kind == "dense":
    X = rng.standard_normal((n, d))
    w0 = rng.standard_normal(d) / np.sqrt(d)
else:  # 50 nonzeros per row at random columns
    nnz = 50 * n
    X = sp.csr_matrix((rng.standard_normal(nnz), rng.integers(0, d, nnz), np.arange(0, nnz + 1, 50)), shape=(n, d))
    X.sum_duplicates()
    w0 = rng.standard_normal(d) / np.sqrt(50)
z = X @ w0 + 0.5 * rng.standard_normal(n)
if model == "logistic":
    y, est = (z > 0).astype(int), hetglm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol)
elif model == "logistic-dual":  # SDCA (sequential or SySCD by the thread count)
    y, est = (z > 0).astype(int), hetglm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, dual=True,
                                                            max_iter=100000)
elif model == "logistic-dual-duhl":  # DuHL on the cpu stand-in holding a quarter of the samples
    y, est = (z > 0).astype(int), hetglm.LogisticRegression(C=1.0, fit_intercept=False, tol=tol, dual=True,
                                                            max_iter=100000, accel_memory="25%")
elif model == "squared-hinge-dual":
    y, est = (z > 0).astype(int), hetglm.LinearSVC(C=1.0, fit_intercept=False, tol=tol, dual=True, max_iter=100000)
elif model == "lasso":  # the working-set solver, at a tenth of the largest useful alpha
    y = z
    est = hetglm.Lasso(alpha=0.1 * float(np.max(np.abs(X.T @ y))) / n, fit_intercept=False, tol=tol, max_iter=100000)
else:
    y, est = z, hetglm.Ridge(alpha=1.0, fit_intercept=False, formulation="primal", tol=tol)
Xt = X.astype(np.float32) if dtype == "float32" else X
est.fit(Xt, y)
t = time.perf_counter()
est.fit(Xt, y)
seconds = time.perf_counter() - t
w = est.coef_.ravel()
zz = X @ w
if model.startswith("logistic"):
    P = np.mean(np.logaddexp(0, -(2 * y - 1) * zz)) + 0.5 / n * w @ w
elif model == "squared-hinge-dual":
    P = np.mean(np.maximum(0, 1 - (2 * y - 1) * zz) ** 2) + 0.5 / n * w @ w
elif model == "lasso":
    P = 0.5 * np.mean((y - zz) ** 2) + est.alpha * np.abs(w).sum()
else:
    P = 0.5 * np.mean((y - zz) ** 2) + 0.5 / n * w @ w
print(json.dumps({"seconds": seconds, "solver": est.solver_, "iterations": int(np.max(est.n_iter_)),
                  "rel_gap": est.duality_gap_ / est.primal_objective_,
                  "p_mismatch": abs(est.primal_objective_ - P) / P}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tols", default="1e-4,1e-8")
    ap.add_argument("--cases", default="dense_400000x100:logistic,dense_50000x500:logistic,dense_100000x200:ridge,"
                                       "sparse_100000x20000:logistic")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows, raw = [], []
    for case in a.cases.split(","):
        data, model = case.split(":")
        for tol in a.tols.split(","):
            runs = {"float64": [], "float32": []}
            for _ in range(a.reps):
                for dtype in runs:
                    out = subprocess.run([sys.executable, "-c", CHILD, data, model, dtype, tol], check=True,
                                         capture_output=True, text=True).stdout
                    runs[dtype].append(json.loads(out.strip().splitlines()[-1]))
            med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
            last = {k: v[-1] for k, v in runs.items()}
            raw.append({"data": data, "model": model, "tol": float(tol), "runs": runs})
            rows.append(f"| {data} | {model} | {tol} | " + " | ".join(
                f"{med[k]:.3f} s ({last[k]['solver']}, {last[k]['iterations']} it, P off {last[k]['p_mismatch']:.0e})"
                for k in ("float64", "float32")) + f" | {med['float64'] / med['float32']:.2f} |")
            print(rows[-1], flush=True)
    head = ["# float64 input against float32 input (the estimators, fit time and the certificate's objective)", "",
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
            f"{platform.platform()}; Python {platform.python_version()}.",
            f"Command: `python3 bench/float64.py --reps {a.reps} --tols {a.tols}`; medians of {a.reps} fits per "
            "column, float64 and float32 alternated, each in a fresh process after a warm-up fit.", "",
            "| data | model | tol | float64 input: time (solver, iterations, P off) | float32 input: time | "
            "float64 / float32 |", "|---|---|---|---|---|---|"]
    text = "\n".join(head + rows) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
            json.dump(raw, f, indent=1)
    else:
        print(text)


if __name__ == "__main__":
    main()
