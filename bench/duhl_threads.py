#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DuHL's CPU unit on 1 vs 2 threads: the cpu stand-in accelerator at a 25% budget, time and rounds to relative gap 1e-4.

Usage: python3 bench/duhl_threads.py [--hetglm build/bin/hetglm] [--reps 5] [--data a9a] [--threads 1,2]
  -> a markdown table on stdout (and --json FILE for the raw numbers)

Per (model, CPU role, threads): REPS runs of `hetglm train --model M --formulation dual --device cpu --accel-memory 25%
--cpu-role R --threads T --tol 1e-4`; from the report's per-round records: the first exact round at relative gap
<= 1e-4, its wall time (seconds since the start of the solve, exact-certificate passes excluded, as the driver records
them) and the CPU unit's coordinate steps (solve) or gap refreshes (gaps) up to it. Medians of the REPS runs; the
rounds are not deterministic (how much the CPU does in a round depends on when the accelerator finishes), so their
median and range are given too.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def run(hetglm, data, model, role, threads, tol, tmp):
    rep = os.path.join(tmp, "r.json")
    cmd = [hetglm, "train", "-q", "--model", model, "--formulation", "dual", "--device", "cpu", "--accel-memory", "25%",
           "--cpu-role", role, "--threads", str(threads), "--tol", repr(tol), "--report-json", rep, data,
           os.path.join(tmp, "m")]
    subprocess.run(cmd, check=True, capture_output=True)
    r = json.load(open(rep))
    rounds = r["columns"][0]["rounds"]
    hit = next((x for x in rounds if x["exact"] and x["rel_gap"] <= tol), None)
    upto = [x for x in rounds if hit is not None and x["round"] <= hit["round"]]
    return {"rounds": hit["round"] if hit else None, "seconds": hit["seconds"] if hit else None,
            "cpu_updates": sum(x["cpu_updates"] for x in upto), "train_seconds": r["train_seconds"],
            "gammas": [x.get("gamma", 1) for x in upto]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetglm", default=os.path.join(ROOT, "build", "bin", "hetglm"))
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "a9a"))
    ap.add_argument("--models", default="svm,logistic")
    ap.add_argument("--roles", default="gaps,solve")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(","):
            for role in a.roles.split(","):
                for t in [int(x) for x in a.threads.split(",")]:
                    runs = [run(a.hetglm, a.data, model, role, t, a.tol, tmp) for _ in range(a.reps)]
                    ok = [x for x in runs if x["rounds"] is not None]
                    g = [y for x in ok for y in x["gammas"]]
                    rows.append({"model": model, "role": role, "threads": t, "reached": len(ok), "runs": len(runs),
                                 "seconds": statistics.median(x["seconds"] for x in ok) if ok else None,
                                 "rounds": statistics.median(x["rounds"] for x in ok) if ok else None,
                                 "rounds_range": [min(x["rounds"] for x in ok), max(x["rounds"] for x in ok)] if ok else None,
                                 "cpu_updates": statistics.median(x["cpu_updates"] for x in ok) if ok else None,
                                 "mean_gamma": statistics.mean(g) if g else None, "runs_raw": runs})
                    r = rows[-1]
                    print(f"{model} {role} {t}t: {r['seconds']} s, {r['rounds']} rounds", file=sys.stderr)
    print(f"DuHL, cpu stand-in at 25%, {os.path.basename(a.data)}, dual, to relative gap {a.tol:g}; medians of {a.reps}\n")
    print("| model | CPU role | threads | time to gap | rounds (range) | CPU steps or refreshes | mean gamma | reached |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = f"{r['seconds']:.3f} s" if r["seconds"] is not None else "not reached"
        rr = f"{r['rounds']:g} ({r['rounds_range'][0]}-{r['rounds_range'][1]})" if r["rounds"] is not None else "-"
        cu = f"{r['cpu_updates']:.3g}" if r["cpu_updates"] is not None else "-"
        mg = f"{r['mean_gamma']:.2f}" if r["mean_gamma"] is not None else "-"
        print(f"| {r['model']} | {r['role']} | {r['threads']} | {t} | {rr} | {cu} | {mg} | {r['reached']}/{r['runs']} |")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
