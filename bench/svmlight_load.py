#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hetglm.load_svmlight_file next to sklearn.datasets.load_svmlight_file on every file in data/.

Usage (with the package installed: pip install .):
    python3 bench/svmlight_load.py            -> bench/results/svmlight_load.{md,json}

Both return the same arrays (CSR float64 X, float64 y; checked here on every file before timing). Each file is
loaded REPS times by each reader, alternating (side by side, same page-cache state), and the median wall time
is reported; the file is read once first so both start from the page cache. The acceptance point (issue 6) is
a speed-up of at least 5x on the largest file.
"""
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy
import sklearn
from sklearn.datasets import load_svmlight_file as sk_load

import hetglm

from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
REPS = 11


def machine():
    cpu = cpu_model()
    mem = int(memory_gib())
    load = os.getloadavg()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "os": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "hetglm": hetglm.__version__,
            "load_average_at_start": [round(x, 2) for x in load]}


def same(a, b):
    Xa, Xb = a[0].tocsr(), b[0].tocsr()
    return (Xa.shape == Xb.shape and np.array_equal(Xa.indptr, Xb.indptr) and np.array_equal(Xa.indices, Xb.indices)
            and np.array_equal(Xa.data, Xb.data) and np.array_equal(a[1], b[1]))


def main():
    data = os.path.join(ROOT, "data")
    files = sorted(f for f in os.listdir(data) if f != "SOURCES.md")
    rows = []
    for f in files:
        path = os.path.join(data, f)
        with open(path, "rb") as fh:
            fh.read()
        assert same(hetglm.load_svmlight_file(path), sk_load(path)), f
        t_ours, t_sk = [], []
        for _ in range(REPS):
            t0 = time.perf_counter()
            hetglm.load_svmlight_file(path)
            t_ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            sk_load(path)
            t_sk.append(time.perf_counter() - t0)
        X, _ = sk_load(path)
        rows.append({"file": f, "bytes": os.path.getsize(path), "rows": X.shape[0], "nnz": int(X.nnz),
                     "hetglm_s": statistics.median(t_ours), "sklearn_s": statistics.median(t_sk),
                     "speedup": statistics.median(t_sk) / statistics.median(t_ours), "equal": True})
    largest = max(rows, key=lambda r: r["bytes"])
    result = {"machine": machine(), "reps": REPS, "statistic": "median wall seconds", "files": rows,
              "largest": largest["file"], "largest_speedup": largest["speedup"]}
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "svmlight_load.json"), "w") as fh:
        json.dump(result, fh, indent=2)
    m = result["machine"]
    lines = ["# load_svmlight_file: hetglm vs scikit-learn", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; Python {m['python']}, "
             f"numpy {m['numpy']}, scipy {m['scipy']}, scikit-learn {m['scikit-learn']}, hetglm {m['hetglm']}; "
             f"load average at start {m['load_average_at_start']} (shared machine).", "",
             f"Median of {REPS} alternating runs per reader, file in the page cache; both return equal arrays "
             "(CSR float64 X, float64 y), checked before timing. Command: `python3 bench/svmlight_load.py`.", "",
             "| file | MB | rows | nnz | hetglm s | scikit-learn s | speed-up |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['file']} | {r['bytes'] / 1e6:.2f} | {r['rows']} | {r['nnz']} | {r['hetglm_s']:.4f} | "
                     f"{r['sklearn_s']:.4f} | {r['speedup']:.1f}x |")
    lines += ["", f"Largest file: **{largest['file']}**, speed-up **{largest['speedup']:.1f}x** (acceptance: >= 5x)."]
    with open(os.path.join(out, "svmlight_load.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if largest["speedup"] >= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
