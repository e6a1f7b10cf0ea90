#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the GPU machine lacks to build hetglm (docs/cuda.md, "The GPU machine's build"): it has nvcc, CMake, ninja, a
# C++ compiler and Python, but none of the Debian -dev packages and no network.
#
#   bash bench/device/fetch-deps.sh fetch          here (network): the Debian packages the build needs, with their
#                                                  runtime libraries, into bench/device/deps/debs (apt-get download),
#                                                  and Snap ML's manylinux wheel for the GPU machine's Python 3.12 into
#                                                  bench/device/deps/wheels (pip download); prints the sizes
#   bash bench/device/fetch-deps.sh unpack PREFIX  on the GPU machine: every .deb unpacked into PREFIX (dpkg -x, or a
#                                                  Python ar + tar reader where dpkg is missing), absolute symbolic
#                                                  links inside PREFIX pointed into PREFIX
#   bash bench/device/fetch-deps.sh env PREFIX     prints the exports that make CMake, pkg-config and the loader use
#                                                  PREFIX (eval it)
#
# bench/device/deps/ is ignored by git; the device tool carries it (`carry: ["bench/device/deps"]`). The tree plus
# this folder must stay under the tool's 64 MiB: `fetch` prints both sizes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
deps="$here/deps"
arch=x86_64-linux-gnu

# Build dependencies of CMakeLists.txt (TBB, fmt, nlohmann_json, CLI11, ZLIB), solvers/ (hwloc through pkg-config),
# tests/ (GTest, Eigen3) and bench/ (Google Benchmark), with the shared libraries they link at run time. No OpenCL,
# XRT or MPI: the GPU build leaves them off.
packages=(
  libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5
  libfmt-dev libfmt9
  libcli11-dev nlohmann-json3-dev
  libhwloc-dev libhwloc15 libudev1 libnuma-dev libnuma1
  zlib1g-dev zlib1g
  libgtest-dev libgmock-dev libeigen3-dev
  libbenchmark-dev libbenchmark1debian
)
snapml_pin="snapml==1.17.2"  # the wheel for CPython 3.12 (KINDS.md: the GPU machine's python3 is 3.12.3)

cmd="${1:-}"
case "$cmd" in
  fetch)
    mkdir -p "$deps/debs" "$deps/wheels"
    (cd "$deps/debs" && rm -f ./*.deb && apt-get download "${packages[@]}")
    rm -f "$deps/wheels"/*.whl
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      -d "$deps/wheels" "$snapml_pin"
    tree=$(git -C "$root" archive HEAD | wc -c)
    folder=$(du -sb "$deps" | cut -f1)
    echo "debs: $(ls "$deps/debs" | wc -l) packages; wheels: $(ls "$deps/wheels")"
    echo "sizes: tree (git archive HEAD) $tree bytes + bench/device/deps $folder bytes = $((tree + folder)) bytes" \
         "($(( (tree + folder) / 1048576 )) MiB of the device tool's 64 MiB)"
    ;;
  unpack)
    prefix="${2:?usage: fetch-deps.sh unpack PREFIX}"
    mkdir -p "$prefix"
    prefix="$(cd "$prefix" && pwd)"
    shopt -s nullglob
    debs=("$deps/debs"/*.deb)
    ((${#debs[@]})) || { echo "fetch-deps.sh: no .deb in $deps/debs (run 'fetch-deps.sh fetch' where there is a network)" >&2; exit 2; }
    for d in "${debs[@]}"; do
      if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$d" "$prefix"
      else
        # A .deb is an ar archive holding data.tar.{xz,gz,zst}; Python reads both (zst needs no support: Debian 12
        # packages use xz).
        python3 - "$d" "$prefix" <<'EOF'
import io, sys, tarfile
path, prefix = sys.argv[1], sys.argv[2]
blob = open(path, "rb").read()
assert blob[:8] == b"!<arch>\n", path
pos = 8
while pos + 60 <= len(blob):
    name = blob[pos:pos + 16].decode().strip().rstrip("/")
    size = int(blob[pos + 48:pos + 58].decode().strip())
    body = blob[pos + 60:pos + 60 + size]
    pos += 60 + size + (size & 1)
    if name.startswith("data.tar"):
        with tarfile.open(fileobj=io.BytesIO(body)) as t:
            t.extractall(prefix)
        break
else:
    sys.exit(f"{path}: no data.tar member")
EOF
      fi
    done
    # Links such as usr/lib/x86_64-linux-gnu/libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13 would point at the
    # machine's own files (or nothing): point them into the prefix.
    while IFS= read -r -d '' link; do
      target="$(readlink "$link")"
      case "$target" in
        /*) if [ -e "$prefix$target" ] || [ -L "$prefix$target" ]; then ln -sfn "$prefix$target" "$link"; fi ;;
      esac
    done < <(find "$prefix" -type l -print0)
    # Debian 12 is usr-merged: libraries of packages that install into /lib land in PREFIX/lib; make PREFIX/usr/lib
    # see them too.
    if [ -d "$prefix/lib/$arch" ]; then
      mkdir -p "$prefix/usr/lib/$arch"
      for f in "$prefix/lib/$arch"/*; do
        [ -e "$prefix/usr/lib/$arch/$(basename "$f")" ] || ln -s "$f" "$prefix/usr/lib/$arch/$(basename "$f")"
      done
    fi
    echo "unpacked ${#debs[@]} packages into $prefix"
    ;;
  env)
    prefix="$(cd "${2:?usage: fetch-deps.sh env PREFIX}" && pwd)"
    cat <<EOF
export CMAKE_PREFIX_PATH="$prefix/usr\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export PKG_CONFIG_PATH="$prefix/usr/lib/$arch/pkgconfig:$prefix/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
export LD_LIBRARY_PATH="$prefix/usr/lib/$arch:$prefix/lib/$arch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LIBRARY_PATH="$prefix/usr/lib/$arch:$prefix/lib/$arch\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
export HETGLM_DEPS_PREFIX="$prefix"
EOF
    ;;
  *)
    echo "usage: fetch-deps.sh fetch | unpack PREFIX | env PREFIX" >&2
    exit 2
    ;;
esac
