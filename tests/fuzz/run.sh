#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for SECONDS (default 600).
# Usage: bash tests/fuzz/run.sh [SECONDS] [TARGET...]     (targets: fuzz_libsvm fuzz_model fuzz_cli)
# Findings go to build-fuzz/findings/TARGET/; every crash found must become a regression test.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_libsvm fuzz_model fuzz_cli)
cmake/install-deps.sh clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETGLM_FUZZ=ON \
  -DHETGLM_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
root=$PWD
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t findings=build-fuzz/findings/$t scratch=build-fuzz/scratch/$t
  rm -rf "$scratch"
  mkdir -p "$corpus" "$findings" "$scratch"
  cp -n tests/fuzz/corpus/"${t#fuzz_}"/* "$corpus"/ 2>/dev/null || true
  # fuzz_cli runs the CLI in a scratch folder holding one tiny training file.
  printf '+1 1:0.5 3:1\n-1 2:1\n+1 1:1 2:0.2\n' >"$scratch/t.svm"
  echo "== $t for ${seconds}s"
  (cd "$scratch" && ASAN_OPTIONS=detect_leaks=1 "$root/build-fuzz/fuzz/$t" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=2048 -close_fd_mask=3 -artifact_prefix="$root/$findings/" -print_final_stats=1 \
    "$root/$corpus" 2>&1 | grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|ERROR|SUMMARY|Test unit written" || true)
  n=$(find "$findings" -type f | wc -l)
  echo "$t: $n finding(s) in $findings"
done
