#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Wall time of distributed CoCoA+ with and without the ranks' shrinking (docs/mpi.md, "Shrinking"), beside the
single-process solver, interleaved: for each repetition K = 1 and 2 with shrinking, then with --no-shrinking, then
one process on one thread; hinge (svm) to relative gap 1e-3 on the generated set of bench/mpi_wall.py.
Prints every run and the medians (bench/results/mpi_wall.md, "Shrinking of the dual's local epochs").

Usage: python3 bench/mpi_shrinking_ab.py [--cli build/bin/hetglm] [--data build-bench/data/sparse_2000000x100000]
       [--reps 3] [--out FILE.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

from bench_io import MPI_ENV, MPIRUN  # bench/bench_io.py

ap = argparse.ArgumentParser()
ap.add_argument("--cli", default="build/bin/hetglm")
ap.add_argument("--data", default="build-bench/data/sparse_2000000x100000")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--out", default="")
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="hetglm-shrink-ab-")
rep_file, model = os.path.join(tmp, "r.json"), os.path.join(tmp, "m.model")
res = {}


def run(tag, cmd, env=None):
    t0 = time.time()
    subprocess.run(cmd, check=True, env=env)
    wall = time.time() - t0
    with open(rep_file) as f:
        d = json.load(f)
    rt = d.get("rank_times", [{}])[0]
    row = {"rounds": d.get("rounds", d.get("epochs")), "train": d["train_seconds"], "wall": wall,
           "load": rt.get("load_seconds", d.get("load_seconds")), "compute": rt.get("compute_seconds"),
           "comm": rt.get("comm_seconds"), "primal": d["primal"]}
    res.setdefault(tag, []).append(row)
    print(tag, {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)


for _ in range(a.reps):
    for shrink in ([], ["--no-shrinking"]):
        for k in (1, 2):
            run(f"K = {k} {' '.join(shrink)}".strip(),
                [*MPIRUN, "-np", str(k), a.cli, "train", "-q", "--distributed", "--threads", "1", "--tol", "1e-3",
                 "--model", "svm", *shrink, "--report-json", rep_file, a.data, model], env=MPI_ENV)
    run("one process, 1 thread", [a.cli, "train", "-q", "--threads", "1", "--tol", "1e-3", "--model", "svm",
                                  "--report-json", rep_file, a.data, model])
print("medians:")
for tag, rows in res.items():
    print(tag, {k: round(statistics.median(r[k] for r in rows), 3) for k in ("rounds", "train", "wall", "load")
                if all(r[k] is not None for r in rows)})
if a.out:
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
