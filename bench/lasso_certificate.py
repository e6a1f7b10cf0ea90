#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 21, acceptance (1): does the L1 certificate stop when the real suboptimality is reached?

For the Lasso on the issue's sparse set (hetglm-generate sparse, 50,000 x 200,000, 50 nonzeros per row, seed 21,
noise 0.1) at alpha = 0.01 and 0.1 alpha_max, each tolerance of a ladder is run with
  old:  a hetglm binary without the rescaled dual point (the Lipschitzed gap only: main before issue 21), --solver syscd
  new:  this tree's binary, --solver syscd (the same primal coordinate descent, the certificate is the only change)
  new:  this tree's binary, --solver working-set (auto for the Lasso)
and reports epochs, train seconds, the reported relative gap and the true relative suboptimality (P - P*) / P*,
P from each run's report (the engine's P, recomputed from w at the certificate), P* the smallest P of every run
(tight working-set runs at tol 1e-10 included). 2 threads.

Usage: python3 bench/lasso_certificate.py --old OLD_HETGLM [--new build/bin/hetglm] [--data FILE]
                                          [--out bench/results/lasso_certificate.md]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOLS = [1e-1, 1e-2, 1e-3, 1e-4, 1e-6]


def alpha_max(path):
    """max_j |x_j^T y| / n from the libsvm file (float32 values, as hetglm stores them)."""
    import numpy as np
    n, acc = 0, {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            y = float(parts[0])
            n += 1
            for tok in parts[1:]:
                j, x = tok.split(":")
                acc[j] = acc.get(j, 0.0) + float(np.float32(x)) * y
    return max(abs(v) for v in acc.values()) / n


def run(binary, data, lam, tol, solver, tmp):
    rep = os.path.join(tmp, "r.json")
    cmd = [binary, "train", data, os.path.join(tmp, "m.model"), "--model", "lasso", "--lambda", repr(lam), "--tol",
           repr(tol), "--threads", "2", "--solver", solver, "--max-epochs", "100000", "-q", "--report-json", rep]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    r = json.load(open(rep))
    return {"epochs": r["epochs"], "seconds": r["train_seconds"], "rel_gap": r["rel_gap"], "primal": r["primal"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "bin", "hetglm"))
    ap.add_argument("--data", default=os.path.join(ROOT, "build", "data-issue21", "lasso_sparse_50000x200000"))
    ap.add_argument("--ratios", default="0.01,0.1")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "lasso_certificate.md"))
    a = ap.parse_args()
    amax = alpha_max(a.data)
    systems = [("old (Lipschitzed gap), syscd", a.old, "syscd"), ("new, syscd", a.new, "syscd"),
               ("new, working-set", a.new, "working-set")]
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ratio in [float(x) for x in a.ratios.split(",")]:
            lam = ratio * amax
            rows = {name: [(tol, run(b, a.data, lam, tol, s, tmp)) for tol in TOLS] for name, b, s in systems}
            tight = run(a.new, a.data, lam, 1e-10, "working-set", tmp)
            pstar = min([tight["primal"]] + [r["primal"] for v in rows.values() for _, r in v])
            res[ratio] = (lam, pstar, rows)
            print(ratio, lam, pstar, json.dumps(rows), flush=True)
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    keys = ("Model name", "CPU family", "Model", "Hypervisor vendor")
    info = "; ".join(" ".join(ln.split()) for ln in lscpu.splitlines() if ln.split(":")[0] in keys)
    L = ["# Issue 21: the L1 certificate's stop on the Lasso (acceptance 1)", "",
         f"Machine: {info} (lscpu), {os.cpu_count()} cores (shared with other builds; times are "
         "single runs and only indicative, the epochs are the measurement). 2 threads.", "",
         f"Command: `python3 bench/{os.path.basename(__file__)} " + " ".join(sys.argv[1:]) + "`", "",
         f"Data: `{os.path.relpath(a.data, ROOT)}` = `build/bin/hetglm-generate sparse FILE --rows 50000 --cols 200000 "
         "--task regression --seed 21 --nnz-per-row 50 --noise 0.1`; alpha_max = %.10g." % amax, "",
         "subopt = (P - P*) / P*, P* the smallest P of all runs (tight working-set runs at tol 1e-10 included).", ""]
    for ratio, (lam, pstar, rows) in res.items():
        L += [f"## alpha = {ratio} alpha_max (lambda = {lam:.10g}), P* = {pstar:.12g}", "",
              "| tol | " + " | ".join(f"{n}: epochs / s / rel gap / subopt" for n, _, _ in systems) + " |",
              "|---|" + "---|" * len(systems)]
        for i, tol in enumerate(TOLS):
            cells = []
            for n, _, _ in systems:
                r = rows[n][i][1]
                cells.append("%d / %.2f / %.1e / %.1e" % (r["epochs"], r["seconds"], r["rel_gap"],
                                                          (r["primal"] - pstar) / pstar))
            L.append(f"| {tol:g} | " + " | ".join(cells) + " |")
        L.append("")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
