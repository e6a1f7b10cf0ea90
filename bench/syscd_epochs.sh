#!/usr/bin/env bash
# Epochs to relative gap 1e-4 on label-sorted copies of a9a and w7a (every line sorted by its label, the adversarial
# order of issue 15): the sequential solver, SySCD with 1 thread, and SySCD with 2 threads on 2 virtual NUMA nodes,
# logistic and hinge in the dual. Epoch counts are deterministic (the default mode), so one run each suffices; the
# table also checks that two default runs write byte-identical model files.
#
#   bash bench/syscd_epochs.sh [BUILD_DIR]        (default: build; prints a markdown table)
#
# Results: bench/results/syscd_epochs.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/bin/hetglm"
[[ -x $bin ]] || { echo "error: $bin not found: build first (README)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in a9a w7a; do
  sort -s -k1,1 -g "data/$f" > "$tmp/$f.sorted"
done
run() {  # data model extra-args... -> "epochs rel_gap"
  local data=$1 model=$2; shift 2
  "$bin" train -q --model "$model" --formulation dual --tol 1e-4 --report-json "$tmp/r.json" "$@" \
    "$tmp/$data.sorted" "$tmp/m" >/dev/null
  python3 -c "import json; r = json.load(open('$tmp/r.json')); print(r['epochs'], '%.2e' % r['rel_gap'])"
}
echo "| data (label-sorted) | model | sequential | syscd 1 thread | ratio | syscd 2 threads, 2 virtual nodes | ratio |"
echo "|---|---|---|---|---|---|---|"
for data in a9a w7a; do
  for model in logistic svm; do
    read -r es gs < <(run $data $model --solver sequential)
    read -r e1 g1 < <(run $data $model --solver syscd --threads 1)
    read -r e2 g2 < <(run $data $model --solver syscd --threads 2 --numa-nodes 2)
    printf '| %s | %s | %d | %d | %.2f | %d | %.2f |\n' $data $model "$es" "$e1" "$(echo "$e1 / $es" | bc -l)" \
      "$e2" "$(echo "$e2 / $es" | bc -l)"
  done
done
# Two default runs (auto solver, 2 threads): byte-identical model files.
for i in 1 2; do "$bin" train -q --model svm "$tmp/a9a.sorted" "$tmp/default$i.model"; done
if cmp -s "$tmp/default1.model" "$tmp/default2.model"; then
  echo; echo "two default runs (--model svm, a9a label-sorted): byte-identical model files"
else
  echo; echo "two default runs (--model svm, a9a label-sorted): model files DIFFER"; exit 1
fi
