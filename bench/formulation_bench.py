#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""--formulation auto / primal / dual next to LIBLINEAR -s 0 (primal trust-region Newton), L2 logistic, C = 1.
Usage: python3 bench/formulation_bench.py [build/bin/hetglm]   -> bench/results/formulation.{md,json}
Data: a generated dense 50,000 x 500 Gaussian set (numpy, seed 0, planted model, 10% label noise; written as
libsvm to a temp dir) and data/a9a.
hetglm: training seconds from --report-json (load excluded), --tol 1e-4 (relative duality gap, so its objective
is within 1e-4 relative of the optimum), the sequential solver when the CLI offers --solver.
LIBLINEAR (liblinear-train -s 0, default -e 0.01): training = total wall time minus the wall time of a
1-iteration run (-e 1e9), the load-time method of bench/core_vs_liblinear.py. Its objective is recomputed
here in float64 from its model (float32-rounded data), in hetglm's scaling (1/n) sum log(1+exp(-y x.w)) + lambda/2 |w|^2.
Median of REPS runs each, side by side. Checks: auto <= 1.2 x min(primal, dual); auto <= LIBLINEAR.
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HETGLM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "hetglm")
REPS = int(os.environ.get("REPS", "3"))


def machine():
    cpu = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(open("/proc/meminfo").readline().split()[1]) // 1024 // 1024
    ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "liblinear-tools"], capture_output=True, text=True)
    hv = subprocess.run([HETGLM, "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "os": platform.platform(),
            "liblinear": ver.stdout.strip(), "hetglm": hv, "numpy": np.__version__}


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


def objective(path, w, C):
    X, y = load_svmlight_file(path, n_features=len(w))
    X = X.astype(np.float32).astype(np.float64)
    t = np.where(y == y.max(), 1.0, -1.0) * (X @ w)
    n = X.shape[0]
    return float(np.sum(np.logaddexp(0.0, -t)) / n + 0.5 / (C * n) * np.dot(w, w))


def liblinear_w(model):
    lines = open(model).read().split("\n")
    i, labels = 0, None
    while lines[i] != "w":
        if lines[i].startswith("label"):
            labels = [float(t) for t in lines[i].split()[1:]]
        i += 1
    w = np.array([float(t) for t in lines[i + 1:] if t.strip()])
    return w if labels[0] == max(labels) else -w


def main():
    help_text = subprocess.run([HETGLM, "train", "--help"], capture_output=True, text=True).stdout
    solver = ["--solver", "sequential"] if "--solver" in help_text else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        n, d = 50000, 500
        X = rng.standard_normal((n, d)).astype(np.float32)
        wt = rng.standard_normal(d) / np.sqrt(d)
        y = np.where(X @ wt >= 0, 1, -1)
        y[rng.random(n) < 0.1] *= -1
        dense = os.path.join(tmp, "dense50000x500")
        dump_svmlight_file(X, y, dense, zero_based=False)
        del X
        for name, path in [("dense 50000x500", dense), ("a9a", os.path.join(ROOT, "data", "a9a"))]:
            C = 1.0
            row = {"data": name, "C": C}
            for form in ["auto", "primal", "dual"]:
                secs, obj, reason, epochs = [], None, None, None
                for _ in range(REPS):
                    rep, mod = os.path.join(tmp, "r.json"), os.path.join(tmp, "m")
                    subprocess.run([HETGLM, "train", "-q", "--model", "logistic", "-c", str(C), "--tol", "1e-4",
                                    "--formulation", form, "--max-epochs", "100000", "--report-json", rep] + solver +
                                   [path, mod], check=True)
                    r = json.load(open(rep))
                    secs.append(r["train_seconds"])
                    obj, reason, epochs = r["primal"], r.get("formulation_reason", ""), r["epochs"]
                    used = r["formulation"]
                row[form] = {"train_seconds": statistics.median(secs), "runs": secs, "primal": obj, "epochs": epochs,
                             "formulation": used, "reason": reason}
                print(name, form, row[form], file=sys.stderr)
            mod = os.path.join(tmp, "ll")
            tot = [timed(["liblinear-train", "-s", "0", "-c", str(C), path, mod]) for _ in range(REPS)]
            one = [timed(["liblinear-train", "-s", "0", "-c", str(C), "-e", "1e9", path, mod + "1"])
                   for _ in range(REPS)]
            w = liblinear_w(mod)
            row["liblinear_s0"] = {"total_seconds": statistics.median(tot), "load_seconds": statistics.median(one),
                                   "train_seconds": max(0.0, statistics.median(tot) - statistics.median(one)),
                                   "primal": objective(path, w, C), "command": f"liblinear-train -s 0 -c {C}"}
            print(name, "liblinear", row["liblinear_s0"], file=sys.stderr)
            best = min(row["primal"]["train_seconds"], row["dual"]["train_seconds"])
            row["auto_over_best"] = row["auto"]["train_seconds"] / best
            row["auto_within_1.2x"] = row["auto_over_best"] <= 1.2
            row["auto_not_slower_than_liblinear"] = row["auto"]["train_seconds"] <= row["liblinear_s0"]["train_seconds"]
            rows.append(row)
    out = {"machine": machine(), "reps": REPS, "rows": rows}
    res = os.path.join(ROOT, "bench", "results")
    os.makedirs(res, exist_ok=True)
    with open(os.path.join(res, "formulation.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    m = out["machine"]
    lines = ["# --formulation auto / primal / dual vs LIBLINEAR -s 0 (L2 logistic, C = 1)", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; LIBLINEAR {m['liblinear']}; "
             f"{m['hetglm']}. Median of {REPS} runs, training seconds (load excluded). hetglm --tol 1e-4 "
             "(relative duality gap); LIBLINEAR default -e 0.01, objective recomputed in float64.", "",
             "| data | auto (chose) | primal | dual | LIBLINEAR -s 0 | objectives auto / LIBLINEAR | auto / best | auto <= LIBLINEAR |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['data']} | {r['auto']['train_seconds']:.3f} ({r['auto']['formulation']}) | "
                     f"{r['primal']['train_seconds']:.3f} ({r['primal']['epochs']} ep) | "
                     f"{r['dual']['train_seconds']:.3f} ({r['dual']['epochs']} ep) | "
                     f"{r['liblinear_s0']['train_seconds']:.3f} | {r['auto']['primal']:.8f} / "
                     f"{r['liblinear_s0']['primal']:.8f} | {r['auto_over_best']:.2f} | "
                     f"{'yes' if r['auto_not_slower_than_liblinear'] else 'NO'} |")
    lines += ["", "auto's reasons:", ""] + [f"- {r['data']}: {r['auto']['reason']}" for r in rows]
    with open(os.path.join(res, "formulation.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
