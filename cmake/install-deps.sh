#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what building and testing hetglm needs, from Debian packages only. Idempotent: does nothing when
# everything is present. Usage: cmake/install-deps.sh [extra Debian packages...]
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config python3 python3-dev python3-venv
      libtbb-dev libfmt-dev nlohmann-json3-dev libcli11-dev libeigen3-dev zlib1g-dev
      libgtest-dev libgmock-dev libbenchmark-dev liblinear-tools
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libhwloc-dev libxrt-dev
      libopenmpi-dev openmpi-bin "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
