#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check script (issue 5, docs/cuda.md): on the GPU machine (x86-64, CUDA driver, nvcc, no -dev packages, no
# network) build bench/device/gpu_bench.cu with the CUDA backend's own sources (header-only core headers; no TBB,
# fmt, zlib or CLI11), then run its correctness checks and benchmarks; results (JSON + markdown) go to $OUT.
# Usage: bash bench/device/run.sh            (GPU machine; about 2-4 minutes)
#        bash bench/device/run.sh --cpu-only (any machine: builds, runs the host parts on small data)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-bench/results/tmp}"
mkdir -p "$out"
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
bin="${TMPDIR:-/tmp}/hetglm_gpu_bench"
echo "== build ($("$nvcc" --version | tail -1))"
"$nvcc" -std=c++20 -O3 -arch=sm_90 -lineinfo -Icore/include -Ibackends/include -Ibackends/cuda/include \
  bench/device/gpu_bench.cu backends/cuda/src/cuda_backend.cpp backends/cuda/src/tpa_scd.cu -o "$bin"
if [ "${1:-}" = "--cpu-only" ] || [ "${1:-}" = "--dry-run" ]; then
  "$bin" --cpu-only --scale 0.01 --out "$out"
  exit 0
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv || true; } | tee "$out/card.txt"
timeout 480 "$bin" --out "$out" 2>&1 | tee "$out/gpu_bench.log"
