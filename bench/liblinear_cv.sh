#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hetglm's -v 5 and -C beside LIBLINEAR's on the bundled data (docs/liblinear-cli.md, "Measurements").
# Usage: bash bench/liblinear_cv.sh [HETGLM] [LIBLINEAR_TRAIN]; prints markdown tables. -C timings need hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
hetglm=${1:-build/bin/hetglm}
lib=${2:-liblinear-train}
acc() { sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p'; }
# LIBLINEAR's folds come from rand() without a seed (always the same split); hetglm's from --seed: seed 1 (the
# default) and the mean and standard deviation over seeds 1..10 show how much the split alone moves the accuracy.
echo "| data | -s | LIBLINEAR -v 5 accuracy % | hetglm -v 5 (seed 1) % | difference (points) | hetglm seeds 1-10: mean (sd) % | difference of the mean |"
echo "|---|---|---|---|---|---|---|"
for d in a9a w7a dna.scale; do
  for s in 0 1 2 3 7; do
    a=$("$lib" -q -s "$s" -v 5 "data/$d" | acc)
    runs=()
    for seed in 1 2 3 4 5 6 7 8 9 10; do runs+=("$("$hetglm" train -q -s "$s" -v 5 --seed "$seed" "data/$d" | acc)"); done
    python3 - "$d" "$s" "$a" "${runs[@]}" <<'PY'
import statistics, sys
d, s, a, runs = sys.argv[1], sys.argv[2], float(sys.argv[3]), [float(x) for x in sys.argv[4:]]
m, sd = statistics.mean(runs), statistics.stdev(runs)
print(f"| {d} | {s} | {a:g} | {runs[0]:g} | {runs[0] - a:+.4f} | {m:.4f} ({sd:.4f}) | {m - a:+.4f} |")
PY
  done
done
echo
echo "| data | -s | LIBLINEAR Best C (CV %) | hetglm Best C (CV %) | ratio |"
echo "|---|---|---|---|---|"
best() { sed -n 's/^Best C = \([^ ]*\)  CV accuracy = \(.*\)%$/\1 \2/p'; }
for d in a9a w7a; do
  for s in 0 2; do
    read -r ca pa < <("$lib" -s "$s" -C "data/$d" | best)
    read -r cb pb < <("$hetglm" train -q -s "$s" -C "data/$d" | best)
    printf "| %s | %s | %s (%s) | %s (%s) | %s |\n" "$d" "$s" "$ca" "$pa" "$cb" "$pb" "$(python3 -c "print($cb / $ca)")"
  done
done
if command -v hyperfine >/dev/null; then
  # Wall time, median of 10 runs (hyperfine's table has the mean; the JSON the median), side by side; hetglm with
  # all cores (folds side by side) and with -n 1 (one thread, as LIBLINEAR 2.3).
  tmp=$(mktemp -d)
  echo
  echo "| command | median s | mean s | sd s | user s (mean) |"
  echo "|---|---|---|---|---|"
  for s in 0 2; do
    hyperfine -N --style none -w 1 -r 10 --export-json "$tmp/h$s.json" \
      -n "LIBLINEAR -s $s -C a9a" "$lib -q -s $s -C data/a9a" \
      -n "hetglm -s $s -C a9a" "$hetglm train -q -s $s -C data/a9a" \
      -n "hetglm -s $s -C -n 1 a9a" "$hetglm train -q -s $s -C -n 1 data/a9a" >/dev/null
    python3 - "$tmp/h$s.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"| `{r['command']}` | {r['median']:.3f} | {r['mean']:.3f} | {r['stddev']:.3f} | {r['user']:.3f} |")
PY
  done
  rm -rf "$tmp"
fi
