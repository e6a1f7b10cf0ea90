#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rounds of distributed CoCoA+ to a relative gap against K (issue 16, docs/mpi.md): mpirun -np K for K = 1, 2, 4 with
--partition file-order / random and --aggregation fixed / adaptive, on the files as given and on label-sorted copies
(lines sorted by label, so that a byte-range split gives each rank one class).

Usage: python3 bench/mpi_rounds.py [--cli build-mpi/bin/hetglm] [--data data] [--cases w7a-logistic,...]
       [--variants file-order:fixed,random:fixed,random:adaptive] [--ks 1,2,4] [--seeds 1,2,3] [--tol 1e-4]
       [--threads 1,2] [--out bench/results/mpi-rounds]   (cases: DATA-MODEL or DATA-sorted-MODEL; models: logistic, svm,
       squared-hinge, lasso, logistic-newton, squared-hinge-newton)
Writes OUT.json and prints one JSON line per run and a markdown table.
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile

from bench_io import MPI_ENV, MPIRUN  # bench/bench_io.py
from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ap = argparse.ArgumentParser()
ap.add_argument("--cli", default="build-mpi/bin/hetglm")
ap.add_argument("--data", default="data")
ap.add_argument("--out", default="bench/results/mpi-rounds")
ap.add_argument("--ks", default="1,2,4")
ap.add_argument("--tol", default="1e-4")
ap.add_argument("--cases", default="w7a-logistic,w7a-sorted-logistic")
ap.add_argument("--variants", default="file-order:fixed,random:fixed,random:adaptive")
ap.add_argument("--max-rounds", default="100000")
ap.add_argument("--seeds", default="1", help="comma-separated --seed values (partition and coordinate order)")
ap.add_argument("--threads", default="1", help="comma-separated --threads values per rank (T > 1: SySCD local solver)")
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="hetglm-mpirounds-")


def label_sorted(name):
    """A copy of data/NAME with its lines sorted by label (stable), in the temporary folder."""
    out = os.path.join(tmp, name + ".sorted")
    if not os.path.exists(out):
        with open(os.path.join(args.data, name)) as f:
            lines = [ln for ln in f if ln.strip()]
        lines.sort(key=lambda ln: float(ln.split(None, 1)[0]))
        with open(out, "w") as f:
            f.writelines(lines)
    return out


MODELS = {
    "logistic": ["--model", "logistic", "-B", "1", "--formulation", "dual"],  # auto picks Newton (newton_or_dual)
    "svm": ["--model", "svm", "-B", "1"],
    "squared-hinge": ["--model", "squared-hinge", "-B", "1", "--formulation", "dual"],
    "lasso": ["--model", "lasso", "--lambda", "0.01", "-B", "1"],
    "logistic-newton": ["--model", "logistic", "-B", "1", "--formulation", "primal"],  # auto: Newton
    "squared-hinge-newton": ["--model", "squared-hinge", "-B", "1", "--solver", "newton"],
}
rows = []
for case in args.cases.split(","):
    data, model = case.split("-", 1)
    if model.startswith("sorted-"):
        src, model, data = label_sorted(data), model[len("sorted-"):], data + " (label-sorted)"
    else:
        src = os.path.join(args.data, data)
    for variant in args.variants.split(","):
        partition, aggregation = variant.split(":")
        for k, t, seed in [(k, t, sd) for k in map(int, args.ks.split(",")) for t in args.threads.split(",")
                           for sd in args.seeds.split(",")]:
            rep = os.path.join(tmp, "r.json")
            cmd = [*MPIRUN, "-np", str(k), args.cli, "train", "--distributed", "-q", "--tol", args.tol,
                   "--max-epochs", args.max_rounds, "--seed", seed, "--threads", t, "--partition", partition, "--aggregation", aggregation,
                   "--report-json", rep, *MODELS[model], src, os.path.join(tmp, "d.model")]
            subprocess.run(cmd, check=True, env=MPI_ENV)
            with open(rep) as f:
                d = json.load(f)
            # The history holds the certified rounds (the certificate schedule's; --certificate-every 1 for every
            # round's): mean_gamma and mean_beta average those.
            gammas = [h["gamma"] for h in d["columns"][0]["history"]]
            betas = [h.get("beta", 0) for h in d["columns"][0]["history"]]
            row = {"data": data, "model": model, "K": k, "T": int(t), "sigma": d["sigma"],
                   "local_solver": d.get("local_solver", "sequential"), "seed": int(seed), "partition": partition, "aggregation": aggregation,
                   "rounds": d["rounds"], "converged": d["converged"], "primal": d["primal"], "rel_gap": d["rel_gap"],
                   "train_seconds": d["train_seconds"], "mean_gamma": sum(gammas) / max(1, len(gammas)),
                   "mean_beta": sum(betas) / max(1, len(betas)), "solver": d.get("solver", "cocoa+"),
                   "allreduce_bytes_per_rank_per_round": d["allreduce_bytes_per_rank_per_round"]}
            rows.append(row)
            print(json.dumps(row), flush=True)

machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "cpu_model": cpu_model(),
           "memory_gib": round(memory_gib(), 1), "loadavg_at_end": os.getloadavg(),
           "mpirun": subprocess.run(["mpirun", "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]}
with open(args.out + ".json", "w") as f:
    json.dump({"machine": machine, "tol": float(args.tol), "local_epochs": 1, "threads": args.threads, "rows": rows}, f, indent=2)
print("| data | model | solver | partition | aggregation | K | T | local solver | sigma' | seed | rounds | mean gamma | "
      "mean beta | primal | rel gap | B/rank/round | train s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['data']} | {r['model']} | {r['solver']} | {r['partition']} | {r['aggregation']} | {r['K']} | {r['T']} | "
          f"{r['local_solver']} | {r['sigma']} | {r['seed']} | "
          f"{r['rounds']} | {r['mean_gamma']:.2f} | {r['mean_beta']:.2f} | {r['primal']:.10g} | {r['rel_gap']:.2e} | "
          f"{r['allreduce_bytes_per_rank_per_round']:.0f} | {r['train_seconds']:.2f} |")
