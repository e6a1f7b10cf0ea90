#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Dual coordinate descent on dense rows: two hetglm binaries side by side (the full-row kernels of forms.hpp).

For each generated set and each dual model, runs `hetglm train --formulation dual --tol 1e-4 --threads T` with the
binary BASE and the binary NEW alternately (BASE, NEW, BASE, NEW, ...: a change of load on a shared machine hits
both alike), REPS times each, and reports the median training time (the report's train_seconds: load excluded),
the epochs, the primal objective of each (they must agree: the kernels change only the rounding of the sums) and
the ratio t(BASE) / t(NEW). Writes a Markdown table to --out and prints it.

    python3 bench/dense_dual.py --base OLD/bin/hetglm --new build-bench/bin/hetglm [--reps 3] [--out FILE]
"""
import argparse
import json
import os
import statistics
import tempfile
import time

from bench_io import generated_set, write_table  # bench/bench_io.py
from machine_info import cpu_model, memory_gib  # bench/machine_info.py
from thread_scaling import train  # bench/thread_scaling.py: one `hetglm train --formulation dual --tol 1e-4` run

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SETS = {  # name: kind, rows, cols, nonzeros per row (sparse)
    "dense_50000x500": ("dense", 50000, 500, None),
    "dense_400000x100": ("dense", 400000, 100, None),
    "dense_200000x32": ("dense", 200000, 32, 32),  # (dense: every entry; hetglm-generate checks the count <= cols)
    "sparse_200000x100000": ("sparse", 200000, 100000, 50),
}
MODELS = ["logistic", "svm", "squared-hinge", "ridge"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the hetglm binary to compare against")
    ap.add_argument("--new", default=os.path.join(ROOT, "build-bench", "bin", "hetglm"))
    ap.add_argument("--generator", default=os.path.join(ROOT, "build-bench", "bin", "hetglm-generate"))
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "build-bench", "data"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--label", default="", help="what BASE and NEW are (commits), for the table's header")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "dense_dual.md"))
    a = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.sets.split(","):
            data = generated_set(a.generator, os.path.join(a.data_dir, name), *SETS[name])
            for model in a.models.split(","):
                for threads in [int(t) for t in a.threads.split(",")]:
                    runs = {"base": [], "new": []}
                    for _ in range(a.reps):
                        for key in ("base", "new"):
                            runs[key].append(train(getattr(a, key), data, model, threads, tmp, 5000))
                    row = {"set": name, "model": model, "threads": threads}
                    for key in ("base", "new"):
                        r = runs[key]
                        row[key] = {"seconds": statistics.median(x["train_seconds"] for x in r),
                                    "all": [round(x["train_seconds"], 3) for x in r], "epochs": r[0]["epochs"],
                                    "solver": r[0].get("solver", "?"), "primal": r[0]["primal"],
                                    "rel_gap": r[0]["rel_gap"]}
                    rows.append(row)
                    print(json.dumps(row))
    L = ["# Dual coordinate descent on dense rows: two builds side by side", "",
         f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB. {a.label}".rstrip(),
         f"Command: `python3 bench/dense_dual.py --base BASE --new NEW --reps {a.reps}` "
         f"({time.perf_counter() - t0:.0f} s). Each run: `hetglm train --model M --formulation dual --tol 1e-4 "
         "--threads T` (the default solver for that thread count); training time from the report (load excluded); "
         "medians of the runs, BASE and NEW alternating.", "",
         "| set | model | threads | solver | epochs BASE / NEW | primal BASE / NEW | time BASE | time NEW | "
         "BASE / NEW | runs (s), BASE / NEW |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, n = r["base"], r["new"]
        L.append(f"| {r['set']} | {r['model']} | {r['threads']} | {n['solver']} | {b['epochs']} / {n['epochs']} | "
                 f"{b['primal']:.10g} / {n['primal']:.10g} | {b['seconds']:.3f} s | {n['seconds']:.3f} s | "
                 f"**{b['seconds'] / n['seconds']:.2f}** | {' '.join(map(str, b['all']))} / "
                 f"{' '.join(map(str, n['all']))} |")
    write_table(a.out, L)
    json.dump(rows, open(os.path.splitext(a.out)[0] + ".json", "w"), indent=1)


if __name__ == "__main__":
    main()
