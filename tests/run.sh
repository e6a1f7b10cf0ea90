#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run every test: installs the build dependencies, builds and runs the suite (Release), then builds and
# runs it again under AddressSanitizer + UndefinedBehaviorSanitizer. Usage: bash tests/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake/install-deps.sh
# One C and C++ compiler for every build: scikit-build-core sets CC and CXX from Python's sysconfig (gcc, g++) when
# they are unset, and the Python stage builds in the Release tree, which a changed compiler would make CMake rebuild.
export CC="${CC:-gcc}" CXX="${CXX:-g++}"
jobs=$(nproc)
start=$SECONDS
stage() { echo "== $1 (at $((SECONDS - start)) s)"; }
# PoCL (the OpenCL device in CI) caches compiled kernels; give it a writable folder.
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-${TMPDIR:-/tmp}/hetglm-pocl-cache}"
mkdir -p "$POCL_CACHE_DIR"

# CUDA backend (docs/cuda.md): built and linked whenever nvcc is found; its GPU tests skip without a GPU.
cuda_flags=""
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_flags="-DHETGLM_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
fi

stage "Release build and tests"
# HETGLM_ENABLE_PYTHON=OFF: the Python stage below turns it on in this tree (pip's nanobind is not installed here).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETGLM_BUILD_TESTS=ON -DHETGLM_ENABLE_OPENCL=ON \
  -DHETGLM_ENABLE_XRT=ON -DHETGLM_ENABLE_MPI=ON -DHETGLM_ENABLE_PYTHON=OFF $cuda_flags >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

# The GPU machine's check script in its CPU mode (issue 17; docs/cuda.md): the same steps with the cpu stand-in running
# the emulation of the CUDA wave schedule, on the Release build above; fails when a step fails.
stage "bench/device/run.sh --cpu-only"
OUT="$PWD/build/device-cpu-only" HETGLM_DEVICE_BUILD=build bash bench/device/run.sh --cpu-only

# The sanitizer builds compile at -O1 with line tables only (-g1), as the sanitizers' documentation advises: reports
# keep file:line, and the build takes about half the time of -O2 -g on 2 cores. The test programs' own files compile at
# -O0 under ASan (HETGLM_TEST_OPTIMIZATION, tests/CMakeLists.txt): about 190 compiler seconds instead of 295, for about
# 10 s more of test time; the libraries they check keep -O1.
san_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
stage "AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -G Ninja "${san_flags[@]}" -DHETGLM_SANITIZE=ON -DHETGLM_BUILD_TESTS=ON \
  -DHETGLM_TEST_OPTIMIZATION=-O0 >/dev/null
cmake --build build-asan -j"$jobs"
# Every suite runs here except the longest optimum checks, which the Release stage above runs: the two wave-schedule
# runs on a9a and w7a (a few minutes each here; their dense case and the other TpaEmulation tests run) and six fits of
# real data sets to tight tolerances (201 s of the 423 s of test CPU this stage took with UBSan's pointer checks; 120 s
# in all are left); their code paths run here in the shorter tests of the same solvers.
asan_skip='^Sets/TpaEmulation\..*/(a9a|w7a)$'
asan_skip+='|^(PrimalForm\.PrimalAndDualReachTheSameOptimum|SequentialSolver\.ReachesLiblinearAndScikitLearnOptima'
asan_skip+='|PrimalNewton\.(MatchesTheDualAtCEqualsOne|BitIdenticalForEveryThreadCount)'
asan_skip+='|Unscaled\.LogisticRidgeAndSquaredHingeReachTheCertifiedOptimum|Duhl\.CpuThreadsReachTheSameOptimum)$'
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -E "$asan_skip"

# ThreadSanitizer build of the parallel solver tests (test_parallel only, smaller data: HETGLM_TEST_SMALL). Under
# -fsanitize=thread the solvers run their parallel regions on std::thread instead of oneTBB (solvers/src/executor.hpp:
# Debian's libtbb is not instrumented), so the solver code itself is checked with no suppressions.
stage "ThreadSanitizer build of test_parallel"
cmake -S . -B build-tsan -G Ninja "${san_flags[@]}" -DHETGLM_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build build-tsan -j"$jobs" --target test_parallel
HETGLM_TEST_SMALL=1 TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" build-tsan/tests/test_parallel

# Python package (bindings/python, issue 6): `pip install .` into a fresh virtual environment, then pytest.
# `-C build-dir=build`: scikit-build-core configures the Release tree above with pyproject.toml's settings
# (HETGLM_ENABLE_PYTHON=ON, tests and benchmarks off) and builds only the extension and the CLI there, so the engine
# is not compiled a third time (about 170 s on 2 cores); the package is built, installed and imported as by a plain
# `pip install .`, with the backends that tree was configured with. No build isolation: scikit-build-core clears the
# CMake cache of a build folder whenever the isolated environment is a new one (every run but the first), which
# would rebuild the tree; pyproject.toml's build requirements are installed into the environment instead.
stage "Python package: pip install . and pytest"
venv=build/venv-test
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" --upgrade pip
build_requires=$("$venv/bin/python" -c \
  'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')
# shellcheck disable=SC2086
"${pip[@]}" $build_requires pytest scikit-learn scipy numpy matplotlib
CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "${pip[@]}" --no-build-isolation -C build-dir=build .
HETGLM_CLI="$PWD/build/bin/hetglm" MPLBACKEND=Agg "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  bindings/python/tests && rc=0 || rc=$?
if [ "$rc" = 5 ]; then echo "pytest collected no tests in bindings/python/tests" >&2; exit 1; fi
[ "$rc" = 0 ] || exit "$rc"
stage "done"
