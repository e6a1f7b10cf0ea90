#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Distributed CoCoA+ benchmark (issue 8, docs/mpi.md): rounds to a relative gap of 1e-4, bytes communicated per
round and time for mpirun -np K (K = 1, 2, 4), against the single-process sequential solver on the same problem.

Usage: python3 bench/mpi_bench.py [--cli build-mpi/bin/hetglm] [--out bench/results/mpi-bench]
Writes OUT.json and OUT.md (with the machine). All ranks run on this machine (--oversubscribe), so the times show the
per-round overhead of MPI on shared cores, not a cluster's network.
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import time

from bench_io import MPI_ENV, MPIRUN  # bench/bench_io.py

ap = argparse.ArgumentParser()
ap.add_argument("--cli", default="build-mpi/bin/hetglm")
ap.add_argument("--data", default="data")
ap.add_argument("--out", default="bench/results/mpi-bench")  # bench/results/mpi.md is written by hand
ap.add_argument("--ks", default="1,2,4")
args = ap.parse_args()
CASES = [
    ("logistic dual, w7a", "w7a", ["--model", "logistic", "-B", "1"]),
    ("svm dual, w7a", "w7a", ["--model", "svm", "-B", "1"]),
    ("lasso primal, housing_scale", "housing_scale", ["--model", "lasso", "--lambda", "0.01", "-B", "1"]),
]
tmp = tempfile.mkdtemp(prefix="hetglm-mpibench-")
rows = []
for name, data, opts in CASES:
    src = os.path.join(args.data, data)
    rep = os.path.join(tmp, "single.json")
    t0 = time.time()
    subprocess.run([args.cli, "train", "-q", "--solver", "sequential", "--tol", "1e-4", "--report-json", rep, *opts, src,
                    os.path.join(tmp, "s.model")], check=True, env=MPI_ENV)
    single_wall = time.time() - t0
    with open(rep) as f:
        s = json.load(f)
    for k in map(int, args.ks.split(",")):
        rep = os.path.join(tmp, f"d{k}.json")
        t0 = time.time()
        subprocess.run([*MPIRUN, "-np", str(k), args.cli, "train", "--distributed", "-q", "--tol", "1e-4",
                        "--max-epochs", "100000", "--report-json", rep, *opts, src, os.path.join(tmp, "d.model")],
                       check=True, env=MPI_ENV)
        wall = time.time() - t0
        with open(rep) as f:
            d = json.load(f)
        comp = max(r["compute_seconds"] for r in d["rank_times"])
        comm = max(r["comm_seconds"] for r in d["rank_times"])
        row = {"case": name, "K": k, "rounds": d["rounds"], "converged": d["converged"],
               "shared_vector_length": d["shared_vector_length"],
               "allreduce_bytes_per_rank_per_round": d["allreduce_bytes_per_rank_per_round"],
               "comm_bytes_per_round": d["comm_bytes_per_round"], "train_seconds": d["train_seconds"],
               "compute_seconds_max_rank": comp, "comm_seconds_max_rank": comm, "mpirun_wall_seconds": wall,
               "primal": d["primal"], "rel_gap": d["rel_gap"],
               "single_epochs": s["epochs"], "single_train_seconds": s["train_seconds"], "single_wall_seconds": single_wall,
               "single_primal": s["primal"]}
        rows.append(row)
        print(json.dumps(row), flush=True)

machine = {"platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count(),
           "mpirun": subprocess.run(["mpirun", "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]}
with open(args.out + ".json", "w") as f:
    json.dump({"machine": machine, "tol": 1e-4, "local_epochs": 1, "rows": rows}, f, indent=2)
with open(args.out + ".md", "w") as f:
    f.write("# Distributed CoCoA+ (MPI) benchmark\n\n")
    f.write(f"Machine: {machine['platform']}, {machine['cpus']} CPUs, {machine['mpirun']}; all ranks on this one machine "
            "(--oversubscribe), so communication is shared memory and time includes oversubscription.\n"
            "Relative gap 1e-4, 1 local epoch per round, sigma' = K. comm bytes/round = 2 (K-1) x the allreduce payload "
            "(ring allreduce, all ranks together); the payload per rank is (length of v + 7) doubles, + 55 with adaptive "
            "aggregation.\n"
            "Command: `python3 bench/mpi_bench.py --cli build-mpi/bin/hetglm`.\n\n")
    f.write("| case | K | rounds | len(v) | payload B/rank/round | comm B/round (all ranks) | train s | compute s (max rank) "
            "| comm s (max rank) | single-process epochs | single-process s |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['case']} | {r['K']} | {r['rounds']} | {r['shared_vector_length']} | "
                f"{r['allreduce_bytes_per_rank_per_round']:.0f} | {r['comm_bytes_per_round']:.0f} | {r['train_seconds']:.3f} | "
                f"{r['compute_seconds_max_rank']:.3f} | {r['comm_seconds_max_rank']:.3f} | {r['single_epochs']} | "
                f"{r['single_train_seconds']:.3f} |\n")
print("wrote", args.out + ".json", args.out + ".md")
