#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where an L1 logistic certificate is lost (issue 21): for each model file (hetglm's or LIBLINEAR's -s 6, no bias)
of DATA at C, in hetglm's scaling P(w) = (1/n) sum log(1 + exp(-y x.w)) + lambda ||w||_1, lambda = 1/(C n):
  P(w); max_j |s_j| / lambda with s = X^T u / n, u = grad of the loss at X w (the rescaled dual point t u needs
  t = lambda / max_j |s_j|), split into the support (w_j != 0) and the zeros; and the relative gap of the rescaled
  point with the exact logistic conjugate (phi^*(t u_k) = b log b + (1 - b) log(1 - b), b = t sigmoid(-y x.w)),
  computed here independently of hetglm's coefficient bound (glm_math_impl.h hetglm_scaled_conjugate).
Usage: bench/l1_certificate_diag.py DATA N_FEATURES C MODEL...   (numpy, scipy, scikit-learn)"""
import sys

import numpy as np
from sklearn.datasets import load_svmlight_file

from liblinear_objectives import read_model


def main():
    data, d, C = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    X, y = load_svmlight_file(data, n_features=d)
    n = X.shape[0]
    lam = 1.0 / (C * n)
    print("| model | P(w) | max abs(s_j)/lambda (support / zeros) | features above lambda | rel. gap, rescaled point, exact conjugate |")
    print("|---|---|---|---|---|")
    for path in sys.argv[4:]:
        w, bias, positive = read_model(path)
        if bias >= 0:
            raise SystemExit(f"{path}: bias {bias}: this script handles models without a bias (-B -1) only")
        sign = np.where(y == positive, 1.0, -1.0)
        m = sign * (X @ w)
        P = np.mean(np.logaddexp(0, -m)) + lam * np.abs(w).sum()
        p = 1.0 / (1.0 + np.exp(m))
        s = X.T @ (-sign * p) / n
        r = np.abs(s) / lam
        t = min(1.0, 1.0 / r.max())
        b = t * p
        with np.errstate(divide="ignore", invalid="ignore"):
            fstar = np.mean(np.where(b > 0, b * np.log(b), 0) + np.where(b < 1, (1 - b) * np.log1p(-b), 0))
        nz = w != 0
        rs = r[nz].max() if nz.any() else 0.0
        rz = r[~nz].max() if (~nz).any() else 0.0
        print(f"| {path} | {P:.12f} | {rs:.6g} / {rz:.6g} | {(r > 1).sum()} | {(P + fstar) / P:.3e} |")


if __name__ == "__main__":
    main()
