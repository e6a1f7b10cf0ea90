#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 20: regularization paths side by side. hetglm.lasso_path / enet_path (l1_ratio 0.5) against scikit-learn's
enet_path, celer's and skglm's path methods (warm-started along the grid) over scikit-learn's 100-point grid
(eps 1e-3, largest alpha first), on a generated sparse 100,000 x 50,000 regression set, housing_scale and a9a (as a
regression on its +-1 labels); the logistic C path on a9a; LassoCV / LogisticRegressionCV's choice against
scikit-learn's.

Usage: PYTHONPATH=<dir holding hetglm/ with its _hetglm .so> python3 bench/paths_bench.py
           [--reps 3] [--tol 1e-4] [--tight 1e-12] [--sets generated,housing,a9a] [--skip logistic,cv]
           [--peer-reps N] [--out bench/results] [--name paths]
  -> OUT/NAME.md, OUT/NAME.json

Timing: every system's whole path (one call, data already in memory, conversions included) at the same `--tol`,
REPS repetitions interleaved (rep 1 of every system, then rep 2, ...), medians. Every solver runs on one thread
(hetglm's paths use one engine thread, and with --hetglm-jobs N a row of their own on N; BLAS pinned to 1 thread).
The tolerances mean different things: hetglm stops
at P - D <= tol P (relative duality gap), scikit-learn and celer at P - D <= tol ||y||^2 / n (= 2 tol P(0) >= 2 tol P:
hetglm's is at least twice as strict), skglm at a KKT (subdifferential) violation <= tol.
Accuracy: hetglm and scikit-learn once more at `--tight`, the largest |coef difference| at every point of the grid.
Screening: hetglm's per-point number of features gap-safe screening proved zero (return_n_screened), as a fraction of
the features, next to the fraction of coefficients that are zero in scikit-learn's tight solution.
Data: the generated set is made here (numpy default_rng(SEED), 50 column indices per row drawn uniformly, duplicates
summed, standard normal values; y = X w* + 0.1 N(0, 1), w* with 1,000 nonzero N(0, 1) entries), values rounded to
float32 (hetglm stores float32: every system gets the same float32-representable float64 data).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine_info import cpu_model, memory_gib  # noqa: E402  bench/machine_info.py

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SEED = 20
warnings.filterwarnings("ignore")


# ------------------------------------------------------------------------------------------------ data
def generated(n=100000, p=50000, per_row=50, k=1000, seed=SEED):
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, p, size=(n, per_row), dtype=np.int64).ravel()
    rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
    vals = rng.standard_normal(n * per_row).astype(np.float32).astype(np.float64)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    X.data = X.data.astype(np.float32).astype(np.float64)
    w = np.zeros(p)
    w[rng.choice(p, k, replace=False)] = rng.standard_normal(k)
    y = X @ w + 0.1 * rng.standard_normal(n)
    return X, y


def libsvm(name, dense=False):
    import hetglm
    X, y = hetglm.load_svmlight_file(os.path.join(ROOT, "data", name))
    X = sp.csr_matrix(X)
    X.data = X.data.astype(np.float32).astype(np.float64)
    return (np.ascontiguousarray(X.toarray()) if dense else X), y


def machine():
    from importlib.metadata import version
    v = {}
    for p in ["hetglm", "scikit-learn", "celer", "skglm", "numpy", "scipy"]:
        try:
            v[p] = version(p)
        except Exception:  # noqa: BLE001
            v[p] = "not installed"
    lscpu = [" ".join(ln.split()) for ln in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
             if ln.split(":")[0] in ("Model name", "CPU family", "Model", "Thread(s) per core", "Hypervisor vendor")]
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "memory_gib": round(memory_gib(), 1),
            "os": platform.platform(), "python": platform.python_version(), "versions": v, "lscpu": lscpu,
            "load_before": os.getloadavg()}


# ------------------------------------------------------------------------------------------------ systems
def path_systems(l1_ratio, tol, hetglm_jobs=None):
    """name -> path(X, y, alphas) -> coefs (n_features, n_alphas) [, extra]. hetglm_jobs: also hetglm with n_jobs
    threads (its full passes threaded: the same coefficients), as "hetglm N threads"."""
    import celer
    import hetglm
    import skglm
    from sklearn import linear_model as sklm
    out = {}

    def het(X, y, alphas, n_jobs=None):
        a, coefs, gaps, n_iter, n_screened = hetglm.enet_path(X, y, l1_ratio=l1_ratio, alphas=alphas, tol=tol,
                                                                max_iter=100000, return_n_iter=True,
                                                                return_n_screened=True, n_jobs=n_jobs)
        assert np.array_equal(a, alphas)
        return coefs, {"gaps": gaps, "n_iter": n_iter, "n_screened": n_screened}
    out["hetglm"] = het
    if hetglm_jobs:
        out[f"hetglm {hetglm_jobs} threads"] = lambda X, y, alphas: het(X, y, alphas, hetglm_jobs)[0]
    out["scikit-learn"] = lambda X, y, alphas: sklm.enet_path(X, y, l1_ratio=l1_ratio, alphas=alphas, tol=tol,
                                                              max_iter=100000)[1]
    if l1_ratio == 1.0:
        out["celer"] = lambda X, y, alphas: celer.Lasso(fit_intercept=False, tol=tol, max_iter=1000).path(
            X, y, alphas)[1]
        out["skglm"] = lambda X, y, alphas: skglm.Lasso(fit_intercept=False, tol=tol, max_iter=1000).path(
            X, y, alphas)[1]
    else:
        out["celer"] = lambda X, y, alphas: celer.ElasticNet(l1_ratio=l1_ratio, fit_intercept=False, tol=tol,
                                                             max_iter=1000).path(X, y, alphas)[1]
        out["skglm"] = lambda X, y, alphas: skglm.ElasticNet(l1_ratio=l1_ratio, fit_intercept=False, tol=tol,
                                                             max_iter=1000).path(X, y, alphas)[1]
    return out


def bench_path(name, X, y, l1_ratio, args, budget):
    import hetglm
    from sklearn import linear_model as sklm
    model = "lasso_path" if l1_ratio == 1.0 else f"enet_path l1_ratio {l1_ratio}"
    print(f"== {name} {model}", flush=True)
    if l1_ratio != 1.0 and args.tight_enet:
        args = argparse.Namespace(**{**vars(args), "tight": args.tight_enet})
    alphas = hetglm._path._alpha_grid(X, y, l1_ratio, 1e-3, 100)
    systems = path_systems(l1_ratio, args.tol, args.hetglm_jobs)
    times = {s: [] for s in systems}
    coefs, extra = {}, None
    for rep in range(args.reps):
        for s, fit in systems.items():
            if rep >= (args.peer_reps if s != "hetglm" else args.reps):
                continue
            if rep > 0 and times[s] and times[s][0] > budget:  # the slowest peer: fewer reps (stated in the table)
                continue
            t0 = time.perf_counter()
            r = fit(X, y, alphas)
            times[s].append(time.perf_counter() - t0)
            if isinstance(r, tuple):
                r, extra = r
            coefs[s] = np.asarray(r, dtype=np.float64)
            print(f"   rep {rep + 1} {s:12s} {times[s][-1]:8.3f} s", flush=True)
    # tight: hetglm and scikit-learn
    t0 = time.perf_counter()
    a_t, c_het, g_het, _, scr_t = hetglm.enet_path(X, y, l1_ratio=l1_ratio, alphas=alphas, tol=args.tight,
                                                   max_iter=1000000, return_n_iter=True, return_n_screened=True)
    t_het_tight = time.perf_counter() - t0
    t0 = time.perf_counter()
    a_s, c_sk, g_sk = sklm.enet_path(X, y, l1_ratio=l1_ratio, alphas=alphas, tol=args.tight, max_iter=1000000)
    t_sk_tight = time.perf_counter() - t0
    print(f"   tight {args.tight}: hetglm {t_het_tight:.3f} s, scikit-learn {t_sk_tight:.3f} s", flush=True)
    diff = np.abs(c_het - c_sk).max(axis=0)  # per point
    # scikit-learn's own automatic grid (its private _alpha_grid, what enet_path(alphas=None) uses): the same values?
    from sklearn.linear_model._coordinate_descent import _alpha_grid
    a_auto = _alpha_grid(X, y, l1_ratio=l1_ratio, fit_intercept=False, eps=1e-3, n_alphas=100)
    d = X.shape[1]
    zeros_sk = (c_sk == 0).sum(axis=0)
    res = {"set": name, "model": model, "n": X.shape[0], "d": d, "nnz": int(X.nnz) if sp.issparse(X) else int(X.size),
           "l1_ratio": l1_ratio, "tol": args.tol, "tight": args.tight,
           "grid_equals_sklearn": bool(np.allclose(alphas, a_auto, rtol=1e-12, atol=0)),
           "alpha_max": float(alphas[0]),
           "times": times, "median": {s: statistics.median(t) for s, t in times.items() if t},
           "reps": {s: len(t) for s, t in times.items()},
           "tight_seconds": {"hetglm": t_het_tight, "scikit-learn": t_sk_tight},
           "max_coef_diff_tight": float(diff.max()), "worst_point": int(diff.argmax()),
           "coef_diff_tight_per_point": diff.tolist(),
           "max_coef_diff_at_tol_vs_sklearn_tight": {s: float(np.abs(c - c_sk).max()) for s, c in coefs.items()},
           "hetglm_tight_rel_gap_max": float(np.max(g_het / np.maximum(1e-300, [
               0.5 * np.mean((y - X @ c_het[:, k]) ** 2) + alphas[k] * (l1_ratio * np.abs(c_het[:, k]).sum() + 0.5 * (
                   1 - l1_ratio) * c_het[:, k] @ c_het[:, k]) for k in range(len(alphas))]))),
           "screened_fraction_at_tol": (extra["n_screened"] / d).tolist(),
           "screened_fraction_tight": (scr_t / d).tolist(),
           "zero_fraction_sklearn_tight": (zeros_sk / d).tolist(),
           "screened_not_zero_in_sklearn": int(np.sum(np.maximum(0, scr_t - zeros_sk))),
           "hetglm_epochs_at_tol": extra["n_iter"].tolist()}
    print(f"   max |coef diff| (tight) {res['max_coef_diff_tight']:.2e} at point {res['worst_point']}; screened at tol: "
          f"median {np.median(extra['n_screened']) / d:.3f}", flush=True)
    return res


def bench_logistic_path(X, y, args):
    import hetglm
    from sklearn import linear_model as sklm
    print("== a9a logistic C path", flush=True)
    Cs = np.logspace(-4, 0, args.n_cs)
    yy = np.where(y > 0, 1.0, -1.0)

    def sk_path(tol):
        est = sklm.LogisticRegression(fit_intercept=False, tol=tol, max_iter=100000, warm_start=True,
                                      solver="newton-cg")
        out = []
        for C in Cs:
            out.append(est.set_params(C=float(C)).fit(X, yy).coef_.ravel().copy())
        return np.array(out)

    def het_path(tol):
        return hetglm.logistic_regression_path(X, yy, Cs=Cs, fit_intercept=False, tol=tol, max_iter=100000)[0]
    times = {"hetglm": [], "scikit-learn newton-cg": []}
    for _ in range(args.reps):
        for s, f in (("hetglm", het_path), ("scikit-learn newton-cg", sk_path)):
            t0 = time.perf_counter()
            f(args.tol)
            times[s].append(time.perf_counter() - t0)
    c_het, c_sk = het_path(1e-12), sk_path(1e-12)
    n = X.shape[0]

    def P(w, C):
        return float(np.logaddexp(0, -yy * (X @ w)).mean() + w @ w / (2 * C * n))
    rel = [abs(P(c_het[k], C) - P(c_sk[k], C)) / P(c_sk[k], C) for k, C in enumerate(Cs)]
    diff = np.abs(c_het - c_sk).max(axis=1)
    res = {"Cs": Cs.tolist(), "times": times, "median": {s: statistics.median(t) for s, t in times.items()},
           "max_rel_objective_diff_tight": float(max(rel)), "coef_diff_tight_per_point": diff.tolist(),
           "max_coef_diff_tight": float(diff.max()), "worst_C": float(Cs[int(diff.argmax())])}
    print(f"   medians {res['median']}, max rel objective diff {res['max_rel_objective_diff_tight']:.1e}, "
          f"max coef diff {res['max_coef_diff_tight']:.1e} at C {res['worst_C']:.3g}", flush=True)
    return res


def bench_lasso_cv(name, X, y, fit_intercept, cv, tol):
    import hetglm
    from sklearn import linear_model as sklm
    print(f"== {name} LassoCV cv={cv} fit_intercept={fit_intercept}", flush=True)
    t0 = time.perf_counter()
    ours = hetglm.LassoCV(cv=cv, fit_intercept=fit_intercept, tol=tol, max_iter=100000).fit(X, y)
    t1 = time.perf_counter()
    theirs = sklm.LassoCV(cv=cv, fit_intercept=fit_intercept, tol=tol, max_iter=100000).fit(X, y)
    t2 = time.perf_counter()
    i_o = int(np.argmin(ours.mse_path_.mean(axis=1)))
    i_t = int(np.argmin(theirs.mse_path_.mean(axis=1)))
    res = {"set": name, "cv": cv, "fit_intercept": fit_intercept, "tol": tol, "alpha_hetglm": ours.alpha_,
           "alpha_sklearn": theirs.alpha_, "index_hetglm": i_o, "index_sklearn": i_t,
           "same": bool(np.isclose(ours.alpha_, theirs.alpha_, rtol=1e-12, atol=0)),
           "grid_rel_diff": float(np.max(np.abs(ours.alphas_ - theirs.alphas_) / theirs.alphas_)),
           "mse_rel_diff": float(np.max(np.abs(ours.mse_path_ - theirs.mse_path_) / theirs.mse_path_)),
           "seconds": {"hetglm": t1 - t0, "scikit-learn": t2 - t1}}
    print(f"   alpha_ {ours.alpha_:.6g} vs {theirs.alpha_:.6g} (index {i_o} vs {i_t}), {t1 - t0:.2f} s vs "
          f"{t2 - t1:.2f} s", flush=True)
    return res


def bench_logistic_cv(X, y, tol):
    import hetglm
    from sklearn import linear_model as sklm
    print("== a9a LogisticRegressionCV Cs=10 cv=5", flush=True)
    t0 = time.perf_counter()
    ours = hetglm.LogisticRegressionCV(Cs=10, tol=tol).fit(X, y)
    t1 = time.perf_counter()
    theirs = sklm.LogisticRegressionCV(Cs=10, solver="liblinear", tol=1e-10, max_iter=10000,
                                       scoring="accuracy").fit(X, y)
    t2 = time.perf_counter()
    sc_o = np.asarray(list(ours.scores_.values())[0]).mean(axis=0)  # (both: scikit-learn's dict by class)
    sc_t = np.asarray(list(theirs.scores_.values())[0]).mean(axis=0)
    res = {"C_hetglm": float(ours.C_[0]), "C_sklearn": float(theirs.C_[0]), "same": bool(ours.C_[0] == theirs.C_[0]),
           "max_mean_score_diff": float(np.max(np.abs(sc_o - sc_t))), "seconds": {"hetglm": t1 - t0,
                                                                                  "scikit-learn liblinear": t2 - t1}}
    print(f"   C_ {ours.C_[0]:.6g} vs {theirs.C_[0]:.6g}, mean-score diff {res['max_mean_score_diff']:.1e}",
          flush=True)
    return res


# ------------------------------------------------------------------------------------------------ report
def fmt_t(t):
    return "-" if t is None else (f"{t * 1000:.1f} ms" if t < 1 else f"{t:.2f} s")


def write(out, name, results, cmd, seconds):
    m = results["machine"]
    lines = ["# Issue 20: regularization paths side by side", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; Python {m['python']}. "
             f"lscpu: {'; '.join(m['lscpu'])}. Load average before / after: {m['load_before']} / "
             f"{results['load_after']}.",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + ".",
             f"Command: `{cmd}` ({seconds:.0f} s). Other engineers' jobs share this machine's two cores (see the "
             "load averages): treat absolute times as indicative, the ratios were measured side by side in one run.",
             ""]
    for r in results["paths"]:
        lines += [f"## {r['set']} {r['model']} ({r['n']} x {r['d']}, {r['nnz']} nonzeros)", "",
                  f"100 alphas from alpha_max = {r['alpha_max']:.6g} down to 1e-3 alpha_max (scikit-learn's grid: "
                  f"{'equal' if r['grid_equals_sklearn'] else 'DIFFERENT'}), tol {r['tol']}, whole path, medians.", "",
                  "| system | median | runs | time / hetglm's |", "|---|---|---|---|"]
        h = r["median"]["hetglm"]
        for s, t in r["median"].items():
            lines.append(f"| {s} | {fmt_t(t)} | {r['reps'][s]} | {t / h:.2f}x |")
        fr = np.array(r["screened_fraction_at_tol"])
        frt = np.array(r["screened_fraction_tight"])
        zs = np.array(r["zero_fraction_sklearn_tight"])
        pick = [0, 24, 49, 74, 99]
        lines += ["",
                  f"Accuracy at tol {r['tight']} (hetglm {fmt_t(r['tight_seconds']['hetglm'])}, scikit-learn "
                  f"{fmt_t(r['tight_seconds']['scikit-learn'])}): max over the 100 points of max_j |w_hetglm - "
                  f"w_sklearn| = **{r['max_coef_diff_tight']:.2e}** (worst point {r['worst_point']}); hetglm's "
                  f"largest relative gap {r['hetglm_tight_rel_gap_max']:.1e}. At tol {r['tol']}, max |coef - "
                  "scikit-learn's tight coef|: " + ", ".join(
                      f"{s} {v:.1e}" for s, v in r["max_coef_diff_at_tol_vs_sklearn_tight"].items()) + ".",
                  "",
                  "Gap-safe screening (hetglm, features proved zero / n_features) at points "
                  + ", ".join(str(k + 1) for k in pick) + f": at tol {r['tol']} "
                  + ", ".join(f"{fr[k]:.3f}" for k in pick) + f" (median {np.median(fr):.3f}); at tol "
                  f"{r['tight']} " + ", ".join(f"{frt[k]:.3f}" for k in pick) + "; zero in scikit-learn's tight "
                  "solution " + ", ".join(f"{zs[k]:.3f}" for k in pick) +
                  f". Screened features not zero in scikit-learn's solution (summed over points, tight): "
                  f"{r['screened_not_zero_in_sklearn']}.", ""]
    if results.get("logistic"):
        r = results["logistic"]
        lines += [f"## a9a logistic C path ({len(r['Cs'])} C from 1e-4 to 1, no intercept, warm-started)", "",
                  "| system | median |", "|---|---|"]
        for s, t in r["median"].items():
            lines.append(f"| {s} | {fmt_t(t)} |")
        lines += ["", f"At tol 1e-12: objectives equal to {r['max_rel_objective_diff_tight']:.1e} (relative) at every "
                  f"C; max |coef diff| {r['max_coef_diff_tight']:.1e} (at C = {r['worst_C']:.3g}).", ""]
    if results.get("cv"):
        lines += ["## Cross-validation: the regularization chosen", "",
                  "| estimator | set | hetglm | scikit-learn | same | hetglm time | scikit-learn time |",
                  "|---|---|---|---|---|---|---|"]
        for r in results["cv"]:
            if "alpha_hetglm" in r:
                lines.append(f"| LassoCV cv={r['cv']}, fit_intercept={r['fit_intercept']}, tol {r['tol']} | "
                             f"{r['set']} | alpha_ {r['alpha_hetglm']:.6g} (#{r['index_hetglm']}) | "
                             f"{r['alpha_sklearn']:.6g} (#{r['index_sklearn']}) | {r['same']} | "
                             f"{fmt_t(r['seconds']['hetglm'])} | {fmt_t(r['seconds']['scikit-learn'])} |")
            else:
                lines.append(f"| LogisticRegressionCV Cs=10 cv=5 (vs liblinear) | a9a | C_ {r['C_hetglm']:.6g} | "
                             f"{r['C_sklearn']:.6g} | {r['same']} | {fmt_t(r['seconds']['hetglm'])} | "
                             f"{fmt_t(r['seconds']['scikit-learn liblinear'])} |")
        lines.append("")
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(results, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--peer-reps", type=int, default=None, help="reps of the peers (default --reps)")
    ap.add_argument("--slow-budget", type=float, default=60.0,
                    help="a system whose first run took longer than this many seconds runs once")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--tight", type=float, default=1e-12)
    ap.add_argument("--tight-enet", type=float, default=None, help="the elastic net's tight tol (default --tight)")
    ap.add_argument("--sets", default="generated,housing,a9a")
    ap.add_argument("--skip", default="")
    ap.add_argument("--paths-sets", default=None, help="the sets whose paths run (default --sets; the others: CV)")
    ap.add_argument("--n-cs", type=int, default=20)
    ap.add_argument("--hetglm-jobs", type=int, default=None,
                    help="also time hetglm's paths with n_jobs threads (a row of its own; the others stay on one)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--name", default="paths")
    args = ap.parse_args()
    args.peer_reps = args.peer_reps or args.reps
    skip = set(filter(None, args.skip.split(",")))
    t_start = time.perf_counter()
    results = {"machine": machine(), "seed": SEED, "paths": [], "cv": []}
    sets = args.sets.split(",")
    data = {}
    if "housing" in sets:
        data["housing_scale"] = libsvm("housing_scale", dense=True)
    if "a9a" in sets:
        data["a9a (regression on +-1)"] = libsvm("a9a")
    if "generated" in sets:
        t0 = time.perf_counter()
        data["generated"] = generated()
        print(f"generated 100000 x 50000 in {time.perf_counter() - t0:.1f} s, nnz {data['generated'][0].nnz}",
              flush=True)
    paths_sets = (args.paths_sets or args.sets).split(",")
    for name, (X, y) in data.items():
        if name.split(" ")[0].replace("housing_scale", "housing") not in paths_sets:
            continue
        for r in (1.0, 0.5):
            results["paths"].append(bench_path(name, X, y, r, args, args.slow_budget))
    if "a9a" in sets and "logistic" not in skip:
        results["logistic"] = bench_logistic_path(*data["a9a (regression on +-1)"], args)
    if "cv" not in skip:
        for name, (X, y) in data.items():
            gen = name == "generated"
            results["cv"].append(bench_lasso_cv(name, X, y, not gen, 3 if gen else 5, args.tol if gen else 1e-10))
        if "a9a" in sets:
            results["cv"].append(bench_logistic_cv(*data["a9a (regression on +-1)"], 1e-8))
    results["load_after"] = os.getloadavg()
    seconds = time.perf_counter() - t_start
    results["seconds"] = seconds
    cmd = "python3 bench/paths_bench.py " + " ".join(sys.argv[1:])
    write(args.out, args.name, results, cmd, seconds)
    print(f"done in {seconds:.0f} s", flush=True)


if __name__ == "__main__":
    main()
