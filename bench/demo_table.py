#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Print the demo's result table (markdown) from the --report-json files in a folder."""
import glob
import json
import os
import sys

folder = sys.argv[1]
order = ["logistic", "svm", "squared-hinge", "logistic-ovr", "ridge", "lasso", "elastic-net"]
rows = []
for path in sorted(glob.glob(os.path.join(folder, "*.json")), key=lambda p: (order + [p]).index(
        os.path.basename(p)[:-5]) if os.path.basename(p)[:-5] in order else 99):
    r = json.load(open(path))
    name = os.path.basename(path)[:-5]
    if "test" in r:
        metric = r["test"]
        where = "test"
    else:
        metric = r["train"]
        where = "train"
    value = (f"acc {metric['accuracy']:.4f}" if "accuracy" in metric else f"MSE {metric['mse']:.4f}") + f" ({where})"
    rows.append([name, os.path.basename(r["train_file"]), r["formulation"], r.get("solver", ""), f"{r['lambda']:.4g}",
                 f"{r['primal']:.8f}", f"{r['rel_gap']:.2e}", str(r["epochs"]), f"{r['load_seconds']:.3f}",
                 f"{r['train_seconds']:.3f}", value])
head = ["model", "data", "form", "solver", "lambda", "primal P(w)", "rel. gap", "epochs", "load s", "train s", "metric"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for row in rows:
    print("| " + " | ".join(row) + " |")
print()
print("One-vs-rest rows (logistic-ovr) show the sum of the per-class objectives and the largest per-class epoch count;"
      " the per-class certificates are in the JSON report. For the newton solver an epoch is one Newton iteration.")
