#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`--solver auto --formulation auto` against every formulation and solver, by wall time (issue 15's auto point).

For each set and model, the default run (`hetglm train --model M`, nothing else: tol 1e-4, C = 1, every core)
and each alternative a user could pick by hand:

  newton            --solver newton                          (smooth L2 models)
  working-set       --formulation primal --solver working-set (Lasso, elastic net)
  dual syscd        --formulation dual --solver syscd         (every core)
  dual sequential   --formulation dual --solver sequential --threads 1
  primal syscd      --formulation primal --solver syscd
  primal sequential --formulation primal --solver sequential --threads 1

are timed (training seconds from the report, load excluded; medians of --reps runs, 1 run on the sets of more
than 10^7 nonzeros). An alternative the engine refuses for the model is left out; one that runs past
max(10 s, 5 x the default's time) is stopped and shown as "> T". The ratio is the default's time over the best
converged alternative's (<= 1.3 is the goal); "converged" is the default run's certificate within the default
epoch budget.

Usage: python3 bench/auto_choice.py [--hetglm build/bin/hetglm] [--cache build/data] [--reps 3]
                                    [--only a9a,w7a] [--models ridge,lasso] [--out bench/results/auto_choice.md]
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
from formulation_auto import classification_set  # bench/formulation_auto.py
from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CLASSIFIERS = ["logistic", "squared-hinge"]
REGRESSORS = ["ridge", "lasso", "elastic-net"]
ALTERNATIVES = [
    ("newton", ["--solver", "newton"], ["logistic", "squared-hinge", "ridge"]),
    ("working-set", ["--formulation", "primal", "--solver", "working-set"], ["lasso", "elastic-net"]),
    ("dual syscd", ["--formulation", "dual", "--solver", "syscd"], ["logistic", "squared-hinge", "ridge"]),
    ("dual sequential", ["--formulation", "dual", "--solver", "sequential", "--threads", "1"],
     ["logistic", "squared-hinge", "ridge"]),
    ("primal syscd", ["--formulation", "primal", "--solver", "syscd"], CLASSIFIERS + REGRESSORS),
    ("primal sequential", ["--formulation", "primal", "--solver", "sequential", "--threads", "1"],
     CLASSIFIERS + REGRESSORS),
]


def train(hetglm, path, model, extra, tmp, timeout):
    rep = os.path.join(tmp, "r.json")
    if os.path.exists(rep):
        os.remove(rep)
    cmd = [hetglm, "train", "-q", "--model", model, "--report-json", rep, *extra, path, os.path.join(tmp, "m")]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode != 0:
        return "refused: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return json.load(open(rep))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetglm", default=os.path.join(ROOT, "build", "bin", "hetglm"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "data"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default=None)
    ap.add_argument("--models", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "auto_choice.md"))
    a = ap.parse_args()
    D = os.path.join(ROOT, "data")
    h = a.hetglm
    gen = os.path.join(os.path.dirname(h), "hetglm-generate")
    sets = [("a9a", D + "/a9a", CLASSIFIERS + REGRESSORS), ("w7a", D + "/w7a", CLASSIFIERS + REGRESSORS),
            ("mushrooms", D + "/mushrooms", CLASSIFIERS + REGRESSORS), ("housing_scale", D + "/housing_scale", REGRESSORS),
            ("dense_100000x200", generated_set(gen, os.path.join(a.cache, "dense_100000x200"), "dense", 100000, 200),
             CLASSIFIERS + REGRESSORS),
            ("sparse_100000x50000", generated_set(gen, os.path.join(a.cache, "sparse_100000x50000"), "sparse", 100000,
                                                  50000, 80),
             CLASSIFIERS + REGRESSORS),
            ("make_classification 200000x200", classification_set(a.cache, 200000, 200), CLASSIFIERS + REGRESSORS),
            ("make_classification 20000x100", classification_set(a.cache, 20000, 100), CLASSIFIERS + REGRESSORS)]
    if a.only:
        keep = set(a.only.split(","))
        sets = [s for s in sets if s[0] in keep]
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, models in sets:
            if a.models:
                models = [m for m in models if m in a.models.split(",")]
            for model in models:
                first = train(h, path, model, [], tmp, None)
                big = first["nnz"] > 1e7
                reps = 1 if big else a.reps
                default = [first] + [train(h, path, model, [], tmp, None) for _ in range(reps - 1)]
                t_def = statistics.median(r["train_seconds"] for r in default)
                row = {"set": name, "model": model, "default_s": t_def, "solver": first["solver"],
                       "formulation": first["formulation"], "epochs": first["epochs"],
                       "converged": all(r["converged"] for r in default), "alts": []}
                limit = max(10.0, 5 * t_def)
                for label, extra, applies in ALTERNATIVES:
                    if model not in applies:
                        continue
                    r = train(h, path, model, extra, tmp, limit)
                    if r == "timeout":
                        row["alts"].append({"label": label, "s": None, "limit": limit})
                        continue
                    if isinstance(r, str):
                        continue  # refused for this model
                    rs = [r] + [train(h, path, model, extra, tmp, limit) for _ in range(reps - 1)]
                    rs = [x for x in rs if isinstance(x, dict)]
                    row["alts"].append({"label": label, "s": statistics.median(x["train_seconds"] for x in rs),
                                        "epochs": r["epochs"], "converged": all(x["converged"] for x in rs)})
                conv = [x for x in row["alts"] if x["s"] is not None and x["converged"]]
                best = min(conv, key=lambda x: x["s"]) if conv else None
                row["best"] = best
                row["ratio"] = t_def / best["s"] if best else None
                rows.append(row)
                print(f"{name} {model}: default {first['formulation']} {first['solver']} {t_def:.3f} s"
                      f" ({first['epochs']} ep, converged {row['converged']}); best "
                      f"{best['label'] if best else '-'} {best['s'] if best else float('nan'):.3f} s; "
                      f"ratio {row['ratio'] if row['ratio'] else float('nan'):.2f}", file=sys.stderr)
    ver = subprocess.run([h, "--version"], capture_output=True, text=True).stdout.strip()
    lines = ["# `--solver auto --formulation auto` against every formulation and solver", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB. {ver}.",
             f"Command: `python3 bench/auto_choice.py --reps {a.reps}` ({time.perf_counter() - t0:.0f} s). "
             "Default settings (tol 1e-4, C = 1, lambda = 1/n, every core); training seconds from the report, medians "
             f"of {a.reps} runs (1 on sets of more than 10^7 nonzeros); ratio = the default's time / the fastest "
             "converged alternative's (goal <= 1.3). The regressors train on the classification sets' labels as "
             "targets.", "",
             "| set | model | default: formulation, solver, epochs | default time | converged | fastest alternative | "
             "ratio | every alternative (s) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        alts = "; ".join(f"{x['label']} {x['s']:.3f}" + ("" if x["converged"] else " (budget)")
                         if x["s"] is not None else f"{x['label']} > {x['limit']:.0f}" for x in r["alts"])
        b = r["best"]
        lines.append(f"| {r['set']} | {r['model']} | {r['formulation']}, {r['solver']}, {r['epochs']} | "
                     f"{r['default_s']:.3f} s | {'yes' if r['converged'] else '**no**'} | "
                     f"{b['label'] + ' ' + format(b['s'], '.3f') + ' s' if b else '-'} | "
                     f"{'**' + format(r['ratio'], '.2f') + '**' if r['ratio'] else '-'} | {alts} |")
    write_table(a.out, lines)


if __name__ == "__main__":
    main()
