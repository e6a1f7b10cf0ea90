#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Wall time of distributed training, K = 2 ranks x 1 thread against K = 1 x 1 thread (issue 16's wall-time point).

A generated sparse set (default 2,000,000 x 100,000, 50 nonzeros per row, seed 1; cached in --cache) is trained to
relative gap 1e-3 by `mpirun -np K hetglm train --distributed --threads 1 --tol 1e-3 --model M`, K = 1 and 2
interleaved, --reps times each; per run the report's train_seconds (under --distributed from the start, reading included), the whole command's wall
time, rounds and the solver. Medians and the ratio t(K=2) / t(K=1) (goal <= 0.65) go to --out (Markdown) and stdout.

    python3 bench/mpi_wall.py [--cli build/bin/hetglm] [--models logistic,svm] [--reps 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_io import MPI_ENV, MPIRUN, generated_set, write_table  # bench/bench_io.py
from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "hetglm"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "data"))
    ap.add_argument("--rows", type=int, default=2000000)
    ap.add_argument("--cols", type=int, default=100000)
    ap.add_argument("--nnz-per-row", type=int, default=50)
    ap.add_argument("--models", default="logistic,svm")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "mpi_wall.md"))
    a = ap.parse_args()
    name = f"sparse_{a.rows}x{a.cols}"
    data = generated_set(os.path.join(os.path.dirname(a.cli), "hetglm-generate"), os.path.join(a.cache, name),
                         "sparse", a.rows, a.cols, a.nnz_per_row)
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(","):
            runs = {1: [], 2: []}
            for _ in range(a.reps):
                for k in (1, 2):
                    rep = os.path.join(tmp, "r.json")
                    cmd = [*MPIRUN, "-np", str(k), a.cli, "train", "-q", "--distributed", "--threads", "1", "--tol",
                           "1e-3", "--model", model, "--report-json", rep, data, os.path.join(tmp, "m")]
                    s = time.perf_counter()
                    subprocess.run(cmd, check=True, env=MPI_ENV, capture_output=True)
                    wall = time.perf_counter() - s
                    r = json.load(open(rep))
                    runs[k].append({"train": r["train_seconds"], "wall": wall, "rounds": r.get("rounds", r.get("epochs")),
                                    "solver": r["solver"], "converged": r["converged"], "rel_gap": r["rel_gap"]})
                    print(f"{model} K={k}: train {r['train_seconds']:.2f} s, wall {wall:.2f} s, "
                          f"{runs[k][-1]['rounds']} rounds ({r['solver']}), rel gap {r['rel_gap']:.2e}", file=sys.stderr)
            row = {"model": model}
            for k in (1, 2):
                row[k] = {"train": statistics.median(x["train"] for x in runs[k]),
                          "wall": statistics.median(x["wall"] for x in runs[k]), "rounds": runs[k][0]["rounds"],
                          "solver": runs[k][0]["solver"], "converged": all(x["converged"] for x in runs[k])}
            rows.append(row)
    ver = subprocess.run([a.cli, "--version"], capture_output=True, text=True).stdout.strip()
    lines = [f"# Distributed wall time: K = 2 ranks x 1 thread vs K = 1 x 1 thread ({name})", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB, one node (the ranks share it). "
             f"{ver}.",
             f"Command: `python3 bench/mpi_wall.py --reps {a.reps}` ({time.perf_counter() - t0:.0f} s): `mpirun -np K "
             "hetglm train --distributed --threads 1 --tol 1e-3 --model M`, K = 1 and 2 interleaved; data generated "
             f"with `hetglm-generate sparse --rows {a.rows} --cols {a.cols} --nnz-per-row {a.nnz_per_row} --seed 1 "
             "--model-seed 1`. Medians; train = the report's train_seconds (under --distributed it includes reading "
             "the file), wall = the whole command.", "",
             "| model | solver | K = 1: rounds, train, wall | K = 2: rounds, train, wall | train K=2/K=1 | wall K=2/K=1 |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        def cell(x):
            return f"{x['rounds']}, {x['train']:.2f} s, {x['wall']:.2f} s" + ("" if x["converged"] else " (budget)")
        lines.append(f"| {r['model']} | {r[1]['solver']} | {cell(r[1])} | {cell(r[2])} | "
                     f"**{r[2]['train'] / r[1]['train']:.2f}** | **{r[2]['wall'] / r[1]['wall']:.2f}** |")
    write_table(a.out, lines)


if __name__ == "__main__":
    main()
