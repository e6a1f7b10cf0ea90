#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two hetglm builds side by side under mpirun, interleaved: for each repetition, set, model and K, `mpirun -np K
CLI train -q --distributed --threads 1 --tol TOL --model MODEL` with build A, then build B (the logistic, squared
hinge and ridge with --formulation dual: CoCoA+ over samples, not the distributed Newton). Prints, per set, model
and K, each build's rounds, certified rounds, median train seconds (the report's, reading included), relative gap
and primal, and the ratio A / B of the medians (bench/results/mpi.md, section 13).

Usage: python3 bench/mpi_ab.py --a OLD_CLI --b NEW_CLI --sets FILE[,FILE...] [--models svm,logistic]
       [--ranks 1,2,4] [--tol 1e-4] [--reps 3] [-- EXTRA OPTIONS FOR BOTH]
"""
import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from bench_io import MPI_ENV, MPIRUN  # bench/bench_io.py

ap = argparse.ArgumentParser()
ap.add_argument("--a", required=True, help="the build before (hetglm CLI)")
ap.add_argument("--b", required=True, help="the build after")
ap.add_argument("--sets", required=True)
ap.add_argument("--models", default="svm,squared-hinge,logistic,ridge")
ap.add_argument("--ranks", default="1,2,4")
ap.add_argument("--tol", default="1e-4")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("extra", nargs="*")
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="hetglm-mpi-ab-")
sets, models = a.sets.split(","), a.models.split(",")
ranks = [int(k) for k in a.ranks.split(",")]
builds = {"a": a.a, "b": a.b}
res = {}
for _ in range(a.reps):
    for s, model, k in itertools.product(sets, models, ranks):
        for tag, cli in builds.items():
            rep, out = os.path.join(tmp, f"{tag}.json"), os.path.join(tmp, f"{tag}.model")
            dual = ["--formulation", "dual"] if model in ("logistic", "squared-hinge", "ridge") else []
            subprocess.run([*MPIRUN, "-np", str(k), cli, "train", "-q", "--distributed", "--threads", "1", "--tol",
                            a.tol, "--model", model, *dual, *a.extra, "--report-json", rep, s, out],
                           check=True, env=MPI_ENV, stdout=subprocess.DEVNULL)
            with open(rep) as f:
                d = json.load(f)
            res.setdefault((s, model, k, tag), []).append(
                (d["rounds"], len(d["columns"][0]["history"]), d["train_seconds"], d["rel_gap"], d["primal"]))
for s, model, k in itertools.product(sets, models, ranks):
    cells, med = [], {}
    for tag in builds:
        runs = res[(s, model, k, tag)]
        med[tag] = statistics.median(r[2] for r in runs)
        r0 = runs[0]
        cells.append(f"{tag}: {r0[0]} rounds, {r0[1]} certified, {med[tag]:.3f} s "
                     f"({' '.join(f'{r[2]:.3f}' for r in runs)}), rel {r0[3]:.2e}, P {r0[4]:.9f}")
    print(f"{os.path.basename(s)} {model} K={k} | " + " | ".join(cells) + f" | a/b {med['a'] / med['b']:.2f}",
          flush=True)
shutil.rmtree(tmp, ignore_errors=True)
