#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hetglm's -v 5 and -C beside LIBLINEAR's on the bundled data (docs/liblinear-cli.md, "Measurements").
# Usage: bash bench/liblinear_cv.sh [HETGLM] [LIBLINEAR_TRAIN]; writes bench/results/liblinear_cv.md (and prints it).
# The -C timings need hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
hetglm=${1:-build/bin/hetglm}
lib=${2:-liblinear-train}
out=bench/results/liblinear_cv.md
acc() { sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p'; }
mse() { sed -n 's/^Cross Validation Mean squared error = \(.*\)$/\1/p'; }
{
echo "# -v 5 and -C: hetglm beside LIBLINEAR (bash bench/liblinear_cv.sh)"
echo
python3 - "$hetglm" "$lib" <<'PY'
import os, subprocess, sys, time
sys.path.insert(0, "bench")
from machine_info import cpu_model, memory_gib  # bench/machine_info.py
hetglm, lib = sys.argv[1], sys.argv[2]
ver = subprocess.run([hetglm, "--version"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dpkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "liblinear-tools"], capture_output=True, text=True).stdout
print(f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB; shared with other engineers' jobs. "
      f"Load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}. "
      f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.")
print()
print(f"hetglm: `{ver}`, commit {commit}, Release build; LIBLINEAR: `{lib}` (Debian liblinear-tools {dpkg}).")
PY
echo
echo "## -v 5 accuracy, every classifier -s"
echo
# hetglm's default folds are LIBLINEAR's own (--folds liblinear); the last column is hetglm's seeded stratified
# folds (--folds stratified --seed 1, the default before), to show how much the split alone moves the accuracy.
echo "| data | -s | LIBLINEAR % | hetglm % (LIBLINEAR's folds) | difference (points) | hetglm % (--folds stratified, seed 1) |"
echo "|---|---|---|---|---|---|"
for d in a9a w7a dna.scale; do
  for s in 0 1 2 3 5 6 7; do
    a=$("$lib" -q -s "$s" -v 5 "data/$d" | acc)
    b=$("$hetglm" train -q -s "$s" -v 5 "data/$d" | acc)
    c=$("$hetglm" train -q -s "$s" -v 5 --folds stratified "data/$d" | acc)
    printf "| %s | %s | %s | %s | %+.4f | %s |\n" "$d" "$s" "$a" "$b" "$(python3 -c "print($b - $a)")" "$c"
  done
done
echo
echo "Regression (-p 0: ridge), mean squared error:"
echo
echo "| data | -s | LIBLINEAR MSE | hetglm MSE (LIBLINEAR's folds) | relative difference |"
echo "|---|---|---|---|---|"
for s in 11 12; do
  a=$("$lib" -q -s "$s" -p 0 -v 5 data/housing_scale | mse)
  b=$("$hetglm" train -q -s "$s" -p 0 -v 5 data/housing_scale | mse)
  printf "| housing_scale | %s | %s | %s | %+.2e |\n" "$s" "$a" "$b" "$(python3 -c "print(($b - $a) / $a)")"
done
echo
echo "## -C: the chosen C"
echo
echo "| data | -s | LIBLINEAR Best C (CV %) | hetglm Best C (CV %) | ratio | hetglm --folds stratified Best C (CV %) |"
echo "|---|---|---|---|---|---|"
best() { sed -n 's/^Best C = \([^ ]*\)  CV accuracy = \(.*\)%$/\1 \2/p'; }
for d in a9a w7a; do
  for s in 0 2; do
    read -r ca pa < <("$lib" -s "$s" -C "data/$d" | best)
    read -r cb pb < <("$hetglm" train -q -s "$s" -C "data/$d" | best)
    read -r cc pc < <("$hetglm" train -q -s "$s" -C --folds stratified "data/$d" | best)
    printf "| %s | %s | %s (%s) | %s (%s) | %s | %s (%s) |\n" "$d" "$s" "$ca" "$pa" "$cb" "$pb" \
      "$(python3 -c "print($cb / $ca)")" "$cc" "$pc"
  done
done
echo
echo "At tight tolerance (LIBLINEAR -e 1e-6, hetglm -e 1e-8 at every C of the path; one run each, wall time of the"
echo "whole command with /usr/bin/time):"
echo
echo "| data | -s | LIBLINEAR -e 1e-6 Best C (CV %) | s | hetglm -e 1e-8 Best C (CV %) | s | ratio |"
echo "|---|---|---|---|---|---|---|"
for d in a9a w7a; do
  for s in 0 2; do
    read -r ca pa < <("$lib" -s "$s" -C -e 1e-6 "data/$d" | best)
    ta=$( { /usr/bin/time -f %e "$lib" -q -s "$s" -C -e 1e-6 "data/$d" >/dev/null; } 2>&1 )
    read -r cb pb < <("$hetglm" train -q -s "$s" -C -e 1e-8 "data/$d" | best)
    tb=$( { /usr/bin/time -f %e "$hetglm" train -q -s "$s" -C -e 1e-8 "data/$d" >/dev/null; } 2>&1 )
    printf "| %s | %s | %s (%s) | %s | %s (%s) | %s | %s |\n" "$d" "$s" "$ca" "$pa" "$ta" "$cb" "$pb" "$tb" \
      "$(python3 -c "print($cb / $ca)")"
  done
done
if command -v hyperfine >/dev/null; then
  # Whole-command wall time (load, 5 folds, the path), 10 runs after 1 warm-up, the three commands of one -s side by
  # side in one hyperfine run; hetglm with all cores (folds side by side) and with -n 1 (one thread, as LIBLINEAR 2.3).
  tmp=$(mktemp -d)
  echo
  echo "## -C on a9a: wall time of the whole command"
  echo
  echo "$(hyperfine --version), 10 runs each after one warm-up. Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| command | median s | mean s | sd s | min s | max s | user s (mean) |"
  echo "|---|---|---|---|---|---|---|"
  for s in 0 2; do
    hyperfine -N --style none -w 1 -r 10 --export-json "$tmp/h$s.json" \
      -n "liblinear-train -q -s $s -C data/a9a" "$lib -q -s $s -C data/a9a" \
      -n "hetglm train -q -s $s -C data/a9a" "$hetglm train -q -s $s -C data/a9a" \
      -n "hetglm train -q -s $s -C -n 1 data/a9a" "$hetglm train -q -s $s -C -n 1 data/a9a" >/dev/null
    python3 - "$tmp/h$s.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for r in res:
    print(f"| `{r['command']}` | {r['median']:.3f} | {r['mean']:.3f} | {r['stddev']:.3f} | {r['min']:.3f} | "
          f"{r['max']:.3f} | {r['user']:.3f} |")
lib = res[0]["median"]
print(f"| median ratio LIBLINEAR / hetglm (all cores, -n 1) | {lib / res[1]['median']:.2f}, "
      f"{lib / res[2]['median']:.2f} | | | | | |")
PY
  done
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
  rm -rf "$tmp"
fi
} | tee "$out"
