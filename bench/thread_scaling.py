#!/usr/bin/env python3
"""Wall time to relative gap 1e-4 of the dual models at 1 and 2 threads (issue 15's scaling point).

For each generated set (dense 50,000 x 500 and sparse 200,000 rows by default) and each dual model, runs
`hetglm train --formulation dual --tol 1e-4 --threads T` for T = 1 and T = 2, REPS times each, interleaved
(1, 2, 1, 2, ...) so that a change of load on a shared machine hits both alike, and reports the median
training time (load excluded: the report's train_seconds), the epochs, the solver the default picked and
the ratio t(1) / t(2). Writes a Markdown table to --out and prints it.

    python3 bench/thread_scaling.py --build-dir build [--reps 5] [--out bench/results/thread_scaling.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_io import generated_set, write_table  # bench/bench_io.py
from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SETS = {  # name: kind, rows, cols, nonzeros per row (sparse)
    "dense_50000x500": ("dense", 50000, 500, None),
    "sparse_200000x100000": ("sparse", 200000, 100000, 50),
}
MODELS = ["logistic", "svm", "squared-hinge", "ridge"]


def generate(build, name):
    return generated_set(os.path.join(build, "bin", "hetglm-generate"), os.path.join(build, "data", name), *SETS[name])


# --before: the 2-thread merge plans before sigma' between 1 and T (docs/parallel-cpu.md): CoCoA+ (sigma' = 2) for
# every dual model but the squared hinge, which had the box duals' merge (sigma' = 1).
BEFORE_SIGMA = {"squared-hinge": "1"}


def train(hetglm, data, model, threads, tmp, max_epochs, extra=()):
    rep = os.path.join(tmp, "r.json")
    cmd = [hetglm, "train", "-q", "--model", model, "--formulation", "dual", "--tol", "1e-4", "--threads",
           str(threads), "--max-epochs", str(max_epochs), "--report-json", rep, *extra, data, os.path.join(tmp, "m")]
    subprocess.run(cmd, check=True, capture_output=True)
    return json.load(open(rep))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--max-epochs", type=int, default=5000)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "thread_scaling.md"))
    ap.add_argument("--before", action="store_true",
                    help="also 2 threads with the merge plans before sigma' between 1 and T (--replica-sigma), "
                         "interleaved")
    a = ap.parse_args()
    hetglm = os.path.join(a.build_dir, "bin", "hetglm")
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.sets.split(","):
            data = generate(a.build_dir, name)
            for model in a.models.split(","):
                runs = {1: [], 2: [], "b": []}
                for _ in range(a.reps):
                    for t in (1, 2):
                        runs[t].append(train(hetglm, data, model, t, tmp, a.max_epochs))
                    if a.before:
                        runs["b"].append(train(hetglm, data, model, 2, tmp, a.max_epochs,
                                               ("--replica-sigma", BEFORE_SIGMA.get(model, "2"))))
                row = {"set": name, "model": model}
                for t in ((1, 2, "b") if a.before else (1, 2)):
                    rs = runs[t]
                    row[t] = {"s": statistics.median(r["train_seconds"] for r in rs),
                              "epochs": statistics.median(r["epochs"] for r in rs),
                              "solver": rs[0]["solver"], "converged": all(r["converged"] for r in rs),
                              "rel_gap": max(r["rel_gap"] for r in rs), "all_s": [r["train_seconds"] for r in rs]}
                row["ratio"] = row[1]["s"] / row[2]["s"]
                if a.before:
                    row["ratio_b"] = row[1]["s"] / row["b"]["s"]
                rows.append(row)
                print(f"{name} {model}: 1t {row[1]['s']:.3f} s ({row[1]['epochs']} ep, {row[1]['solver']}) "
                      f"2t {row[2]['s']:.3f} s ({row[2]['epochs']} ep, {row[2]['solver']}) "
                      f"ratio {row['ratio']:.2f}", file=sys.stderr)
    ver = subprocess.run([hetglm, "--version"], capture_output=True, text=True).stdout.strip()
    lines = ["# Dual models: wall time to relative gap 1e-4 at 1 and 2 threads", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB. {ver}.",
             f"Command: `python3 bench/thread_scaling.py --reps {a.reps}{' --before' if a.before else ''}` ({time.perf_counter() - t0:.0f} s). "
             "Each run: `hetglm train --model M --formulation dual --tol 1e-4 --threads T` (the default solver "
             "for that thread count); training time from the report (load excluded); medians of the runs, 1- and "
             "2-thread runs interleaved.", "",
             *(["With --before, the columns \"before\": 2 threads with `--replica-sigma 2` (`1` for the squared hinge), "
                "the merge plans before sigma' between 1 and T, run interleaved with the others.", ""] if a.before else []),
             "| set | model | 1 thread: solver, epochs, time | 2 threads: solver, epochs, time | t(1) / t(2) | "
             + ("2 threads before: epochs, time | t(1) / t(2) before | " if a.before else "")
             + "runs (s), 1t / 2t |",
             "|---|---|---|---|---|" + ("---|---|" if a.before else "") + "---|"]
    for r in rows:
        def cell(x):
            c = f"{x['solver']}, {x['epochs']:g}, {x['s']:.3f} s"
            return c if x["converged"] else c + f" (not converged: {x['rel_gap']:.1e})"
        before = (f"{r['b']['epochs']:g}, {r['b']['s']:.3f} s | {r['ratio_b']:.2f} | " if a.before else "")
        lines.append(f"| {r['set']} | {r['model']} | {cell(r[1])} | {cell(r[2])} | **{r['ratio']:.2f}** | {before}"
                     f"{' '.join(f'{s:.2f}' for s in r[1]['all_s'])} / {' '.join(f'{s:.2f}' for s in r[2]['all_s'])} |")
    write_table(a.out, lines)


if __name__ == "__main__":
    main()
