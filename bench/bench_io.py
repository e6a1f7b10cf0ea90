# SPDX-License-Identifier: Apache-2.0
"""What several bench scripts share (one copy each): generated data sets cached on disk, the mpirun command line
for running every rank on this machine, and writing a results table."""
import os
import subprocess

# mpirun as the bench scripts run it: as root in the sandbox, every rank on this machine (more ranks than cores
# allowed), no pinning.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def generated_set(generator, path, kind, rows, cols, nnz_per_row=None, seed=1, model_seed=1):
    """PATH, written first (atomically, by `hetglm-generate KIND PATH --rows R --cols C [--nnz-per-row K] --seed S
    --model-seed M`) when it does not exist yet. `generator`: the hetglm-generate binary."""
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        cmd = [generator, kind, path, "--rows", str(rows), "--cols", str(cols), "--seed", str(seed), "--model-seed",
               str(model_seed)]
        if nnz_per_row is not None:
            cmd += ["--nnz-per-row", str(nnz_per_row)]
        subprocess.run(cmd, check=True)  # it prints one line: the set's shape and nonzeros
    return path


def write_table(path, lines):
    """Writes LINES (a Markdown document, one string per line) to PATH and prints them."""
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text)
