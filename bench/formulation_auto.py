#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`--formulation auto` outside the Newton solver: the trial estimates of the reason string against the epochs the
sequential solver then needs in each formulation.

Usage: python3 bench/formulation_auto.py [--hetglm build/bin/hetglm] [--cache build/data] [--max-epochs 3000]
                                        [--large-max-epochs 300]
  -> a markdown table on stdout (docs/formulation.md, "`--formulation auto`")

Per case: `hetglm train --model M --lambda 1/n --tol 1e-4 --solver sequential --threads 1` with `--formulation auto`
(its choice and the two trial estimates, parsed from the reason string), then `--formulation primal` and `dual`
(epochs to the tolerance; deterministic), at most --max-epochs (--large-max-epochs on the 200000 x 200 set, where a
dual epoch moves 4e7 nonzeros). Cases: ridge on scikit-learn's make_classification 200000 x 200 and
20000 x 100 (labels 0/1 as regression targets, random_state 0; written once as libsvm files to --cache) and on the
real sets of data/, and logistic regression with `--solver sequential` (coordinate descent, not Newton) on a9a and w7a.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def classification_set(cache, n, d):
    path = os.path.join(cache, f"make_classification_{n}x{d}")
    if not os.path.exists(path):
        from sklearn.datasets import make_classification
        X, y = make_classification(n_samples=n, n_features=d, random_state=0)
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            for i in range(n):
                f.write(f"{int(y[i])} " + " ".join(f"{j + 1}:{X[i, j]:.6g}" for j in range(d)) + "\n")
        os.replace(path + ".tmp", path)
    return path


def n_rows(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def train(hetglm, path, model, lam, form, max_epochs, tmp):
    rep = os.path.join(tmp, "r.json")
    cmd = [hetglm, "train", "-q", "--model", model, "--lambda", repr(lam), "--tol", "1e-4", "--solver", "sequential",
           "--threads", "1", "--formulation", form, "--max-epochs", str(max_epochs), "--report-json", rep, path,
           os.path.join(tmp, "m")]
    subprocess.run(cmd, check=True, capture_output=True)
    return json.load(open(rep))


def estimate(reason, which):
    m = re.search(which + r" (?:SDCA|CD) ([0-9.e+]+) epochs \(on \d+ rows(, extrapolated from \d+)?\)", reason)
    if m:
        return m.group(1) + ("*" if m.group(2) else "")
    m = re.search(which + r" (?:SDCA|CD) (?:no convergence in|more than) (\d+) (?:trial )?epochs", reason)
    return f"> {m.group(1)}" if m else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetglm", default=os.path.join(ROOT, "build", "bin", "hetglm"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "data"))
    ap.add_argument("--max-epochs", type=int, default=3000)
    ap.add_argument("--large-max-epochs", type=int, default=300)
    a = ap.parse_args()
    D = os.path.join(ROOT, "data")
    cases = [("make_classification 200000x200", classification_set(a.cache, 200000, 200), "ridge", a.large_max_epochs),
             ("make_classification 20000x100", classification_set(a.cache, 20000, 100), "ridge", a.max_epochs),
             ("a9a", D + "/a9a", "ridge", a.max_epochs), ("w7a", D + "/w7a", "ridge", a.max_epochs),
             ("mushrooms", D + "/mushrooms", "ridge", a.max_epochs),
             ("housing_scale", D + "/housing_scale", "ridge", a.max_epochs),
             ("a9a", D + "/a9a", "logistic", a.max_epochs), ("w7a", D + "/w7a", "logistic", a.max_epochs)]
    print("| data | model | auto chose | trial: dual epochs | trial: primal epochs x passes | dual epochs | "
          "primal epochs | better |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, model, cap in cases:
            lam = 1.0 / n_rows(path)
            auto = train(a.hetglm, path, model, lam, "auto", cap, tmp)
            reason = auto["formulation_reason"]
            print(f"{name} {model}: {reason}", file=sys.stderr)
            ep = {}
            for form in ("dual", "primal"):
                r = auto if auto["formulation"] == form else train(a.hetglm, path, model, lam, form, cap, tmp)
                ep[form] = r["epochs"] if r["converged"] else None
            passes = re.search(r"x ([0-9.]+) passes", reason)
            passes = float(passes.group(1)) if passes else 1.0
            work = {f: (ep[f] * (passes if f == "primal" else 1)) if ep[f] is not None else float("inf") for f in ep}
            better = min(work, key=work.get)
            fmt = lambda x: str(x) if x is not None else f"> {cap}"
            print(f"| {name} | {model} | {auto['formulation']} | {estimate(reason, 'dual')} | "
                  f"{estimate(reason, 'primal')} x {passes:g} | {fmt(ep['dual'])} | {fmt(ep['primal'])} | {better} |")


if __name__ == "__main__":
    main()
