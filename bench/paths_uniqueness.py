#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 20: is the a9a lasso_path difference from scikit-learn's an inaccuracy or the Lasso's non-uniqueness?

a9a's one-hot columns are linearly dependent (rank 108 of 123), so the Lasso may have a segment of solutions; every
solution has the same fitted values X w, the same ||w||_1 and the same objective, only w differs, by a vector of
X's null space. This computes both paths at tol 1e-12 on scikit-learn's 100-point grid (no intercept, y the +-1
labels as a regression target, as bench/paths_bench.py does) and reports per point: max |w_h - w_s|, max |X(w_h -
w_s)| relative to max |X w_s|, the relative differences of ||w||_1 and of P(w) = ||y - Xw||^2 / (2n) + alpha ||w||_1
(computed here in float64), the share of w_h - w_s outside null(X) (an SVD basis) and the largest KKT violation
max_j (|x_j^T (y - Xw)| / n - alpha)_+ / alpha of each side. Writes OUT/paths_uniqueness.{md,json}.

    PYTHONPATH=<dir holding hetglm> python3 bench/paths_uniqueness.py [--out DIR]
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
    ap.add_argument("--tol", type=float, default=1e-12)
    args = ap.parse_args()
    import hetglm
    from sklearn import linear_model as sklm
    from sklearn.linear_model._coordinate_descent import _alpha_grid

    X, y = b.libsvm("a9a")
    X = X.astype(np.float64)
    n, p = X.shape
    alphas = _alpha_grid(X, y, l1_ratio=1.0, fit_intercept=False, eps=1e-3, n_alphas=100)
    t0 = time.perf_counter()
    _, c_h, _ = hetglm.lasso_path(X, y, alphas=alphas, tol=args.tol, max_iter=1000000)
    t_h = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, c_s, _ = sklm.lasso_path(X, y, alphas=alphas, tol=args.tol, max_iter=1000000)
    t_s = time.perf_counter() - t0
    Xd = X.toarray()
    S, Vt = np.linalg.svd(Xd, full_matrices=False)[1:]
    rank = int((S > S.max() * max(Xd.shape) * np.finfo(float).eps).sum())
    N = Vt[rank:].T  # a basis of null(X)
    rows = []
    for k, a in enumerate(alphas):
        wh, ws = np.asarray(c_h[:, k], float), np.asarray(c_s[:, k], float)
        d = wh - ws
        fh, fs = Xd @ wh, Xd @ ws
        P = [0.5 * np.mean((y - f) ** 2) + a * np.abs(w).sum() for f, w in ((fh, wh), (fs, ws))]
        kkt = [float(np.max(np.maximum(0, np.abs(Xd.T @ (y - f)) / n - a)) / a) for f in (fh, fs)]
        nd = np.linalg.norm(d)
        rows.append({"point": k, "alpha": float(a), "max_dw": float(np.abs(d).max()),
                     "fit_rel": float(np.abs(fh - fs).max() / max(np.abs(fs).max(), 1e-300)),
                     "l1_rel": float(abs(np.abs(wh).sum() - np.abs(ws).sum()) / max(np.abs(ws).sum(), 1e-300)),
                     "P_rel": float((P[0] - P[1]) / P[1]),
                     "outside_null": float(np.linalg.norm(d - N @ (N.T @ d)) / nd) if nd > 0 else 0.0,
                     "kkt_hetglm": kkt[0], "kkt_sklearn": kkt[1]})
    worst = sorted(rows, key=lambda r: -r["max_dw"])[:10]
    mx = {key: max(r[key] for r in rows) for key in ("max_dw", "fit_rel", "l1_rel", "kkt_hetglm", "kkt_sklearn")}
    mx["P_rel"] = max(abs(r["P_rel"]) for r in rows)
    cmd = "python3 bench/paths_uniqueness.py" + (f" --tol {args.tol:g}" if args.tol != 1e-12 else "")
    m = b.machine()
    lines = [f"# Issue 20: a9a lasso_path against scikit-learn's: accuracy and uniqueness (tol {args.tol:g})", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; Python {m['python']}; "
             "versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + f"; load average before "
             f"{m['load_before']}.", "", f"Command: `{cmd}`. a9a {n} x {p}, rank {rank} (null space of dimension {p - rank}); "
             f"100 alphas, scikit-learn's grid; whole paths: hetglm {t_h:.1f} s, scikit-learn {t_s:.1f} s "
             "(indicative).", "",
             "Maxima over the 100 points: max |w_h - w_s| {max_dw:.2e}; max |X(w_h - w_s)| / max |X w_s| "
             "{fit_rel:.2e}; ||w||_1 {l1_rel:.2e} and P(w) {P_rel:.2e} relative; KKT violation hetglm {kkt_hetglm:.1e}, "
             "scikit-learn {kkt_sklearn:.1e} (relative to alpha).".format(**mx), "",
             "| point | alpha / alpha_max | max abs(w_h - w_s) | fit, relative | l1 norm, relative | P, relative | "
             "share of w_h - w_s outside null(X) | KKT hetglm | KKT scikit-learn |", "|---|---|---|---|---|---|---|---|---|"]
    for r in worst:
        lines.append(f"| {r['point']} | {r['alpha'] / alphas[0]:.3g} | {r['max_dw']:.2e} | {r['fit_rel']:.1e} | "
                     f"{r['l1_rel']:.1e} | {r['P_rel']:+.1e} | {r['outside_null']:.1e} | {r['kkt_hetglm']:.1e} | "
                     f"{r['kkt_sklearn']:.1e} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paths_uniqueness.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "paths_uniqueness.json"), "w") as f:
        json.dump({"machine": m, "rank": rank, "n": n, "p": p, "seconds": {"hetglm": t_h, "scikit-learn": t_s}, "max": mx,
                   "rows": rows}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
