#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Load time and time per epoch of hetglm's sequential solver next to LIBLINEAR's dual coordinate descent.

Usage: python3 bench/core_vs_liblinear.py [build/bin/hetglm]   -> bench/results/core_vs_liblinear.{md,json}

hetglm: `--report-json` gives load seconds and train seconds; an epoch here is one pass of SDCA over all
samples plus the exact duality-gap pass (v recomputed as A alpha). Runs use a tolerance it cannot reach, so
every run does exactly --max-epochs epochs.
LIBLINEAR (liblinear-train, same loss, -c 1): its load time is not reported, so we time a 1-iteration run
(-e 1e9) and a converged run of N iterations; per iteration = (T_N - T_1)/(N - 1), load = T_1 - per iteration.
LIBLINEAR shrinks its active set, so its later iterations touch fewer samples than a full epoch.
Median of 5 runs each, side by side.
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

from machine_info import cpu_model, memory_gib  # bench/machine_info.py

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HETGLM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "hetglm")
REPS = 5
EPOCHS = 50


def machine():
    cpu = cpu_model()
    mem = int(memory_gib())
    ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "liblinear-tools"], capture_output=True, text=True)
    hv = subprocess.run([HETGLM, "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "os": platform.platform(),
            "liblinear": ver.stdout.strip(), "hetglm": hv}


def timed(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, out


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for data in ["a9a", "w7a"]:
            path = os.path.join(ROOT, "data", data)
            for model, s in [("svm", 3), ("squared-hinge", 1), ("logistic", 7)]:
                loads, epochs = [], []
                for _ in range(REPS):
                    rep = os.path.join(tmp, "r.json")
                    subprocess.run([HETGLM, "train", "-q", "--solver", "sequential", "--model", model, "--tol", "1e-15", "--max-epochs",
                                    str(EPOCHS), "--report-json", rep, path, os.path.join(tmp, "m")], check=True,
                                   capture_output=True)
                    r = json.load(open(rep))
                    loads.append(r["load_seconds"])
                    epochs.append(r["train_seconds"] / r["epochs"])
                t1s, tns, iters = [], [], None
                for _ in range(REPS):
                    t1, _ = timed(["liblinear-train", "-q", "-s", str(s), "-c", "1", "-e", "1e9", path,
                                   os.path.join(tmp, "l")])
                    tn, out = timed(["liblinear-train", "-s", str(s), "-c", "1", "-e", "0.001", path,
                                     os.path.join(tmp, "l")])
                    iters = int(re.findall(r"#iter = (\d+)", out)[-1])
                    t1s.append(t1)
                    tns.append(tn)
                t1, tn = statistics.median(t1s), statistics.median(tns)
                per_iter = (tn - t1) / max(1, iters - 1)
                rows.append({"data": data, "model": model, "liblinear_solver": f"-s {s}",
                             "hetglm_load_s": statistics.median(loads), "hetglm_epoch_s": statistics.median(epochs),
                             "liblinear_load_s": t1 - per_iter, "liblinear_iter_s": per_iter,
                             "liblinear_iters": iters})
                print(rows[-1], file=sys.stderr)
    res = {"machine": machine(), "method": __doc__.strip(), "rows": rows}
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    json.dump(res, open(os.path.join(out, "core_vs_liblinear.json"), "w"), indent=1)
    m = res["machine"]
    lines = [f"# Load time and time per epoch: hetglm sequential solver vs LIBLINEAR", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; "
             f"{m['hetglm']}; LIBLINEAR {m['liblinear']}. Command: `python3 bench/core_vs_liblinear.py`.", "",
             "| data | model | hetglm load ms | hetglm epoch ms (incl. gap) | LIBLINEAR | LIBLINEAR load ms | "
             "LIBLINEAR ms / iter (shrinking) | LIBLINEAR iters to -e 0.001 |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['data']} | {r['model']} | {1e3 * r['hetglm_load_s']:.1f} | {1e3 * r['hetglm_epoch_s']:.2f} | "
                     f"{r['liblinear_solver']} | {1e3 * r['liblinear_load_s']:.1f} | {1e3 * r['liblinear_iter_s']:.2f} | "
                     f"{r['liblinear_iters']} |")
    lines += ["", "Method: " + " ".join(__doc__.strip().split("\n")[2:])]
    open(os.path.join(out, "core_vs_liblinear.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
