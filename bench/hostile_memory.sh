#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Memory and time to the error on hostile input (docs/robustness.md, "Bounded memory"): a gzip bomb, an endless
# standard input, model files of zeros, a file naming feature 300,000,000; each once as it is and once in a memory
# cgroup of 1500 MiB (cgroup v1 or v2, a child of this shell's own cgroup; skipped with a line saying so where the
# cgroup cannot be made). Peak RSS and wall time from /usr/bin/time -v.
# Usage: bash bench/hostile_memory.sh [HETGLM]; writes bench/results/hostile_memory.md (and prints it).
set -euo pipefail
cd "$(dirname "$0")/.."
hetglm=$(realpath "${1:-build/bin/hetglm}")
out=bench/results/hostile_memory.md
tmp=$(mktemp -d)
cg=""
cleanup() {
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# A child memory cgroup of 1500 MiB, if this machine lets us make one.
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
if [ -n "$own" ] && [ -w "/sys/fs/cgroup/memory$own" ]; then
  cg="/sys/fs/cgroup/memory$own/hetglm-hostile-$$"
  mkdir "$cg" && echo $((1500 * 1024 * 1024)) > "$cg/memory.limit_in_bytes" || cg=""
  [ -n "$cg" ] && [ -w "$cg/memory.memsw.limit_in_bytes" ] && echo $((1500 * 1024 * 1024)) > "$cg/memory.memsw.limit_in_bytes" || true
  cg_peak() { echo "$(( $(cat "$cg/memory.max_usage_in_bytes") / 1048576 )) MiB"; }
  cg_reset() { echo 0 > "$cg/memory.max_usage_in_bytes"; }
elif own2=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup) && [ -w "/sys/fs/cgroup$own2" ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg="/sys/fs/cgroup$own2/hetglm-hostile-$$"
  mkdir "$cg" && echo $((1500 * 1024 * 1024)) > "$cg/memory.max" || cg=""
  cg_peak() { [ -f "$cg/memory.peak" ] && echo "$(( $(cat "$cg/memory.peak") / 1048576 )) MiB" || echo "n/a"; }
  cg_reset() { :; }
fi

# run NAME CGROUP(0/1) COMMAND...: one table row (peak RSS, wall, exit status, the first line of stderr).
run() {
  local name=$1 in_cg=$2
  shift 2
  if [ "$in_cg" = 1 ]; then
    if [ -z "$cg" ]; then
      echo "| $name | (no memory cgroup could be made here) | | | |"
      return
    fi
    cg_reset
  fi
  set +e
  if [ "$in_cg" = 1 ]; then
    (echo $BASHPID > "$cg/cgroup.procs"; exec /usr/bin/time -v -o "$tmp/time" bash -c "$*") > /dev/null 2> "$tmp/err"
  else
    /usr/bin/time -v -o "$tmp/time" bash -c "$*" > /dev/null 2> "$tmp/err"
  fi
  local rc=$?
  set -e
  local rss wall msg peak=""
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$tmp/time")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' "$tmp/time")
  grep -q "Command terminated by signal" "$tmp/time" && msg="killed: $(sed -n 's/.*Command terminated by signal \(.*\)/signal \1/p' "$tmp/time")" ||
    msg=$(grep -v "^warning" "$tmp/err" | head -1 | sed "s#$tmp/##g; s/|/\\\\|/g" | cut -c1-260)
  [ "$in_cg" = 1 ] && peak=" (cgroup peak $(cg_peak))"
  name=${name//|/\\|}
  echo "| $name | $((rss / 1024)) MB$peak | $wall | $rc | \`$msg\` |"
}

head -c 2000000000 /dev/zero | gzip -1 > "$tmp/bomb.gz"
truncate -s 2G "$tmp/zeros2g.model"
truncate -s 30G "$tmp/zeros30g.model"
printf '1 300000000:1\n-1 300000000:1\n' > "$tmp/wide.svm"
printf '1 1:1\n-1 2:1\n' > "$tmp/small.svm"
{
echo "# Hostile input: peak memory and time to the error (bash bench/hostile_memory.sh)"
echo
python3 - "$hetglm" <<'PY'
import os, subprocess, sys, time
sys.path.insert(0, "bench")
from machine_info import cpu_model, memory_gib  # bench/machine_info.py
ver = subprocess.run([sys.argv[1], "--version"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib():.1f} GiB. Load average at the start: "
      f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}. {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
      f"`{ver}`, commit {commit}.")
PY
echo
echo "Peak RSS and wall time from \`/usr/bin/time -v\`; \"cgroup\" rows run in a child memory cgroup limited to"
echo "1500 MiB (its own peak beside). The gzip bomb: \`head -c 2000000000 /dev/zero | gzip -1\` ($(( $(stat -c %s "$tmp/bomb.gz") / 1000000 )) MB)."
echo
echo "| case | peak memory | wall (m:ss) | exit | first line of the error |"
echo "|---|---|---|---|---|"
for c in 0 1; do
  s=""; [ "$c" = 1 ] && s=", cgroup 1500 MiB"
  run "gzip bomb, \`train\`$s" $c "'$hetglm' train -q '$tmp/bomb.gz' '$tmp/m'"
  run "\`yes '1 1:1' | train --memory-limit 150M /dev/stdin\`$s" $c "yes '1 1:1' | '$hetglm' train -q --memory-limit 150M /dev/stdin '$tmp/m'"
  [ "$c" = 1 ] && run "\`yes '1 1:1' | train /dev/stdin\` (no option)$s" $c "yes '1 1:1' | '$hetglm' train -q /dev/stdin '$tmp/m'"
  run "2 GB sparse model file of zeros, \`predict\`$s" $c "'$hetglm' predict '$tmp/zeros2g.model' '$tmp/small.svm' '$tmp/p'"
  run "30 GB sparse model file of zeros, \`predict\`$s" $c "'$hetglm' predict '$tmp/zeros30g.model' '$tmp/small.svm' '$tmp/p'"
  # Outside a cgroup the limit is MemAvailable (23 GB here), which the 19 GB this file needs fits: it trains.
  # The row without a cgroup therefore gives the limit on the command line.
  if [ "$c" = 1 ]; then
    run "29-byte file naming feature 300,000,000, \`train\`$s" $c "'$hetglm' train -q '$tmp/wide.svm' '$tmp/m'"
  else
    run "29-byte file naming feature 300,000,000, \`train --memory-limit 1500M\`" $c "'$hetglm' train -q --memory-limit 1500M '$tmp/wide.svm' '$tmp/m'"
  fi
done
echo
echo "No model file is written by any of these runs: $(ls "$tmp"/m 2>/dev/null || echo "none found")."
} | tee "$out"
