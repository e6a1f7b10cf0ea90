#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hetglm `train -s N` against LIBLINEAR's `train -s N` on the same -c and -B at tight tolerance: both models' primal
objectives, computed here from the two model files with one function, in hetglm's scaling
    P(w) = (1/n) sum_i loss(y_i, x_i.w) + lambda R(w),   lambda = 1/(C n)   (SVR -s 11/12: 1/(2 C n)),
i.e. LIBLINEAR's objective R(w) + C sum loss divided by C n (SVR: ||w||^2/2 + C sum (y - w.x)^2 divided by 2 C n).
Usage: bench/liblinear_objectives.py [HETGLM] [LIBLINEAR_TRAIN]   (defaults build/bin/hetglm, liblinear-train)
Needs numpy and scipy (and sklearn.datasets.load_svmlight_file)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_svmlight_file

HETGLM = sys.argv[1] if len(sys.argv) > 1 else "build/bin/hetglm"
LIBLINEAR = sys.argv[2] if len(sys.argv) > 2 else "liblinear-train"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")

# -s, data, n_features, C, B, LIBLINEAR -e (tight), hetglm -e (relative duality gap)
RUNS = [
    (0, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (1, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (2, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (3, "a9a", 123, 1.0, 1, "1e-9", "1e-7"),
    (3, "a9a", 123, 0.01, 1, "1e-5", "1e-8"),
    (5, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (5, "a9a", 123, 0.01, 1, "1e-7", "1e-8"),
    (6, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (7, "a9a", 123, 1.0, 1, "1e-9", "1e-8"),
    (11, "housing_scale", 13, 1.0, 1, "1e-12", "1e-12"),
    (12, "housing_scale", 13, 1.0, 1, "1e-9", "1e-12"),
]


def read_model(path):
    """w (with the bias row last), bias, and the label whose decision value is positive (None for regression)."""
    header, w = {}, []
    with open(path) as f:
        lines = f.read().split("\n")
    k = 0
    while lines[k].strip() != "w":
        parts = lines[k].split()
        header[parts[0]] = parts[1:]
        k += 1
    for line in lines[k + 1:]:
        if line.strip():
            w.append(float(line.split()[0]))
    positive = float(header["label"][0]) if "label" in header else None
    return np.array(w), float(header["bias"][0]), positive


def objective(s, X, y, w, bias, positive, C):
    n = X.shape[0]
    if bias >= 0:
        X = np.hstack([X.toarray(), np.full((n, 1), bias)])
    else:
        X = X.toarray()
    z = X @ w
    if s in (11, 12):  # LIBLINEAR SVR, p = 0: ||w||^2/2 + C sum (y - z)^2, divided by 2 C n
        return (0.5 * w @ w + C * np.sum((y - z) ** 2)) / (2 * C * n)
    t = np.where(y == positive, 1.0, -1.0)
    m = t * z
    if s in (0, 6, 7):
        loss = np.logaddexp(0, -m)
    elif s == 3:
        loss = np.maximum(0, 1 - m)
    else:
        loss = np.maximum(0, 1 - m) ** 2
    reg = np.sum(np.abs(w)) if s in (5, 6) else 0.5 * w @ w
    return (reg + C * np.sum(loss)) / (C * n)


def main():
    print("| -s | data | C | B | LIBLINEAR P(w) | hetglm P(w) | hetglm certificate P | rel. diff (hetglm - LIBLINEAR) |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for s, name, d, C, B, e_lib, e_ours in RUNS:
            path = os.path.join(DATA, name)
            X, y = load_svmlight_file(path, n_features=d)
            lib_model, our_model = os.path.join(tmp, "lib.model"), os.path.join(tmp, "our.model")
            lib = subprocess.run([LIBLINEAR, "-s", str(s), "-c", str(C), "-B", str(B), "-e", e_lib] +
                                 (["-p", "0"] if s in (11, 12) else []) + [path, lib_model], check=True,
                                 stdout=subprocess.PIPE, text=True)
            # LIBLINEAR's dual and L1 solvers stop after 1000 iterations whatever -e says.
            limit = " (LIBLINEAR: max. iterations)" if "reaching max number of iterations" in lib.stdout else ""
            subprocess.run([HETGLM, "train", "-q", "--threads", "1", "-s", str(s), "-c", str(C), "-B", str(B), "-e", e_ours,
                            "--max-epochs", "100000"] + (["-p", "0"] if s in (11, 12) else []) + [path, our_model],
                           check=True)
            wl, bl, pl = read_model(lib_model)
            wo, bo, po = read_model(our_model)
            Pl = objective(s, X, y, wl, bl, pl, C)
            Po = objective(s, X, y, wo, bo, po, C)
            cert = None
            with open(our_model) as f:
                for line in f:
                    if line.startswith("primal "):
                        cert = float(line.split()[1])
            rel = (Po - Pl) / abs(Pl)
            if not limit:
                worst = max(worst, abs(rel))
            print(f"| {s} | {name} | {C:g} | {B} | {Pl:.12g}{limit} | {Po:.12g} | {cert:.12g} | {rel:+.2e} |")
    print(f"\nlargest |relative difference| where LIBLINEAR converged: {worst:.2e}")


if __name__ == "__main__":
    main()
