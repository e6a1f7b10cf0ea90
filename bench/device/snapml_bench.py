#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Snap ML on the data hetglm-gpu-bench exported (--npy DIR), on the same objective: L2 logistic regression at C = 1,
i.e. Snap ML's LogisticRegression(regularizer=1.0, fit_intercept=False) (sum of losses + r/2 ||w||^2 = n times
hetglm's mean loss + lambda/2 ||w||^2 with lambda = 1/n; README, "Parameters"). Snap ML stops on its own criterion,
so the comparison is the wall time of fit() and the primal objective P(w) it reached, evaluated here in float64 with
hetglm's formula, against hetglm's certified P (--reference, from hetglm-gpu-bench's JSON).

    python3 bench/device/snapml_bench.py DIR --out FILE.json [--reference GPU_BENCH.json] [--gpu] [--threads 16]
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference", help="hetglm-gpu-bench JSON whose best run's certified primal is the reference")
    ap.add_argument("--gpu", action="store_true", help="also Snap ML with use_gpu=True")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    res = {"data": a.dir, "configs": []}
    try:
        import numpy as np
        import scipy.sparse as sp
        import snapml

        res["snapml_version"] = getattr(snapml, "__version__", "?")
        rows, cols = map(int, open(os.path.join(a.dir, "shape.txt")).read().split())
        X = sp.csr_matrix((np.load(os.path.join(a.dir, "data.npy")), np.load(os.path.join(a.dir, "indices.npy")),
                           np.load(os.path.join(a.dir, "indptr.npy"))), shape=(rows, cols))
        y = np.load(os.path.join(a.dir, "y.npy"))
        lam = 1.0 / rows
        ref = None
        if a.reference and os.path.exists(a.reference):
            runs = json.load(open(a.reference)).get("runs", [])
            conv = [r["certificate"]["primal"] for r in runs if r.get("converged")]
            ref = min(conv) if conv else None
        res["reference_primal"] = ref

        def primal(w):
            z = y * (X @ w)
            return float(np.mean(np.logaddexp(0.0, -z)) + 0.5 * lam * float(w @ w))

        configs = [("cpu", dict(use_gpu=False, n_jobs=a.threads))]
        if a.gpu:
            configs.insert(0, ("gpu", dict(use_gpu=True, device_ids=[0])))
        for name, kw in configs:
            r = {"config": name, "params": {k: v for k, v in kw.items()}}
            try:
                clf = snapml.LogisticRegression(regularizer=1.0, fit_intercept=False, tol=a.tol, max_iter=1000, **kw)
                t0 = time.time()
                clf.fit(X, y)
                r["fit_seconds"] = time.time() - t0
                w = np.asarray(clf.coef_, dtype=np.float64).ravel()
                r["primal"] = primal(w)
                if ref:
                    r["rel_diff_to_hetglm"] = (r["primal"] - ref) / abs(ref)
                n_iter = getattr(clf, "n_iter_", None)
                r["n_iter"] = int(np.ravel(n_iter)[0]) if n_iter is not None else None
            except Exception as e:  # record and go on: one failing configuration must not hide the others
                r["error"] = f"{type(e).__name__}: {e}"
            res["configs"].append(r)
            print(f"  snapml {name}: " + (f"{r['fit_seconds']:.2f} s, P {r['primal']:.10g}"
                                         + (f" ({r['rel_diff_to_hetglm']:+.2e} vs hetglm)" if "rel_diff_to_hetglm" in r else "")
                                         if "error" not in r else r["error"]), flush=True)
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"
        print(f"  snapml: {res['error']}", flush=True)
    json.dump(res, open(a.out, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
