#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: build hetglm, train every model on the bundled real data with progress (a line every 5 seconds),
# evaluate on the held-out files, cross-validate and search C as LIBLINEAR's -v and -C do, and print a result table
# (objective, certified gap, epochs, time, accuracy / MSE, as the command line prints them). Prints under 100 lines.
# Usage: bash bench/demo.sh            (results also in bench/results/demo/; the build log in build/demo-build.log)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "building hetglm (log: build/demo-build.log)"
if ! cmake --build build -j"$(nproc)" --target hetglm >build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log
  exit 1
fi
out=bench/results/demo
mkdir -p "$out" "$out/cv"
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
  testopt=()
  [ -n "$test" ] && testopt=(--test "$test")
  echo "=== $name: hetglm train $opts --tol 1e-5 --max-epochs 20000 --progress 5s ${testopt[*]} --report-json $out/$name.json $train $out/$name.model"
  # shellcheck disable=SC2086
  "$hetglm" train $opts --tol 1e-5 --max-epochs 20000 --progress 5s "${testopt[@]}" --report-json "$out/$name.json" \
    "$train" "$out/$name.model"
done
echo
# LIBLINEAR's model selection: 5-fold cross-validation (-v 5) and the search of C along a warm-started path (-C).
echo "=== cross-validation: hetglm train -q -s 0 -v 5 data/a9a"
"$hetglm" train -q -s 0 -v 5 --report-json "$out/cv/a9a-v5.json" data/a9a
echo "=== search of C: hetglm train -q -s 2 -C data/a9a"
"$hetglm" train -q -s 2 -C --report-json "$out/cv/a9a-C.json" data/a9a
echo
python3 bench/demo_table.py "$out" | tee "$out/table.md"
