#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: build hetglm, train every model on the bundled real data with progress, evaluate on the
# held-out files, and print a result table (objective, certified gap, epochs, time, accuracy / RMSE).
# Usage: bash bench/demo.sh            (results also in bench/results/demo/)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target hetglm
out=bench/results/demo
mkdir -p "$out"
hetglm=build/bin/hetglm

# name | training file | test file | options
runs=(
  "logistic|data/a9a|data/a9a.t|--model logistic -c 1"
  "svm|data/a9a|data/a9a.t|--model svm -c 1"
  "squared-hinge|data/a9a|data/a9a.t|--model squared-hinge -c 1"
  "logistic-ovr|data/dna.scale|data/dna.scale.t|--model logistic -c 1 -B 1"
  "ridge|data/housing_scale||--model ridge"
  "lasso|data/housing_scale||--model lasso --lambda 0.1"
  "elastic-net|data/housing_scale||--model elastic-net --lambda 0.1 --l1-ratio 0.5"
)
for r in "${runs[@]}"; do
  IFS='|' read -r name train test opts <<<"$r"
  echo
  echo "=== $name: hetglm train $opts --tol 1e-5 $train"
  testopt=()
  [ -n "$test" ] && testopt=(--test "$test")
  # shellcheck disable=SC2086
  "$hetglm" train $opts --tol 1e-5 --max-epochs 20000 "${testopt[@]}" --report-json "$out/$name.json" \
    "$train" "$out/$name.model"
done
echo
python3 bench/demo_table.py "$out" | tee "$out/table.md"
