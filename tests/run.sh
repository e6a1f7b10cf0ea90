#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run every test: installs the build dependencies, builds and runs the suite (Release), then builds and
# runs it again under AddressSanitizer + UndefinedBehaviorSanitizer. Usage: bash tests/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake/install-deps.sh
jobs=$(nproc)

echo "== Release build and tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETGLM_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETGLM_SANITIZE=ON -DHETGLM_BUILD_TESTS=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
