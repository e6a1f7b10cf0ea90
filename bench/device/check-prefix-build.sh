#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks, on a Debian machine that HAS the -dev packages, that the GPU machine's build (bench/device/run.sh
# --build-only) needs nothing but the packages carried in bench/device/deps: in a private mount namespace
# (unshare -m, root) every header folder, CMake package file, pkg-config file and library of those packages, and the
# pkg-config program itself, are covered by empty bind mounts, then the build runs from the unpacked prefix, and ldd
# shows where the built programs take libtbb, libfmt and libhwloc from.
#   bash bench/device/check-prefix-build.sh [CMAKE]   (CMAKE: another cmake executable, e.g. a pip-installed CMake 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
work="${TMPDIR:-/tmp}/hetglm-prefix-check"
rm -rf "$work" && mkdir -p "$work/empty" "$work/out"
: >"$work/empty-file"
printf '#!/bin/sh\nexit 127\n' >"$work/no-pkg-config" && chmod +x "$work/no-pkg-config"
cmake_bin="${1:-}"
arch=x86_64-linux-gnu
hide=(
  /usr/include/tbb /usr/include/oneapi /usr/include/fmt /usr/include/CLI /usr/include/nlohmann /usr/include/hwloc
  /usr/include/hwloc.h /usr/include/numa.h /usr/include/gtest /usr/include/gmock /usr/include/eigen3
  /usr/include/benchmark /usr/include/zlib.h /usr/include/zconf.h
  /usr/lib/$arch/cmake/TBB /usr/lib/$arch/cmake/fmt /usr/lib/$arch/cmake/GTest /usr/lib/$arch/cmake/benchmark
  /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json /usr/share/eigen3 /usr/share/pkgconfig/eigen3.pc
  /usr/lib/$arch/pkgconfig/hwloc.pc /usr/lib/$arch/pkgconfig/fmt.pc /usr/lib/$arch/pkgconfig/tbb.pc
  /usr/lib/$arch/pkgconfig/zlib.pc
)
# The libraries themselves (development links, static archives and the run-time .so of these packages).
# (zlib's run-time libz.so.1 stays: the system's own tools need it; its header is hidden, so FindZLIB must take the
# prefix's header and the library beside it.)
for pat in 'libtbb*' 'libfmt*' 'libhwloc*' 'libgtest*' 'libgmock*' 'libbenchmark*' 'libnuma*' 'libz.a'; do
  for f in /usr/lib/$arch/$pat /lib/$arch/$pat; do [ -e "$f" ] && hide+=("$f"); done
done
script="$work/inside.sh"
{
  echo 'set -euo pipefail'
  for p in "${hide[@]}"; do
    [ -e "$p" ] || continue
    [ -L "$p" ] && continue  # a bind mount over a link covers its target, which is in the list itself
    if [ -d "$p" ]; then echo "mount --bind '$work/empty' '$p'"; else echo "mount --bind '$work/empty-file' '$p'"; fi
  done
  # pkg-config answers nothing (as on a machine without it): the hwloc fallback of solvers/CMakeLists.txt runs.
  pc="$(readlink -f "$(command -v pkg-config || echo /usr/bin/pkg-config)")"
  [ -e "$pc" ] && echo "mount --bind '$work/no-pkg-config' '$pc'"
  echo "echo 'hidden: ${#hide[@]} paths (headers, CMake and pkg-config files, libraries, pkg-config)'"
  echo "ls /usr/include/tbb /usr/include/fmt | head -3; pkg-config --version || echo 'pkg-config: does not run'"
  [ -n "$cmake_bin" ] && echo "mkdir -p '$work/bin' && ln -sf '$cmake_bin' '$work/bin/cmake' && export PATH='$work/bin':\$PATH"
  echo "cmake --version | head -1"
  echo "export OUT='$work/out' HETGLM_DEVICE_WORK='$work' HETGLM_DEVICE_BUILD='$work/build' HETGLM_DEVICE_BUDGET=3600 HETGLM_DEVICE_BUILD_LIMIT=3500"
  echo "bash '$root/bench/device/run.sh' --build-only"
  echo "eval \"\$(bash '$root/bench/device/fetch-deps.sh' env '$work/prefix')\""
  echo "for b in '$work/build/bin/hetglm' '$work/build/tests/test_cuda_backend'; do echo \"ldd \$b:\"; ldd \"\$b\" | grep -E 'tbb|fmt|hwloc|udev|numa|libz'; done"
  echo "'$work/build/bin/hetglm' --version"
} >"$script"
unshare -m bash "$script"
