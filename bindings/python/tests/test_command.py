# SPDX-License-Identifier: Apache-2.0
"""`pip install .` also installs the `hetglm` command (the wheel's scripts, pyproject.toml build.targets)."""
import pathlib
import shutil
import subprocess
import sys

import pytest

import hetglm


def test_pip_install_puts_the_command_next_to_the_interpreter(data_dir, tmp_path):
    exe = pathlib.Path(sys.executable).parent / "hetglm"
    if not exe.exists():
        pytest.skip(f"no {exe}: the package was not installed with pip into this environment")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"hetglm {hetglm.__version__} (backends: cpu")
    # The command and the package read each other's models.
    subprocess.run([str(exe), "train", "-q", "-s", "0", str(data_dir / "heart_scale"), str(tmp_path / "m")],
                   check=True)
    assert hetglm.load_model(str(tmp_path / "m")).coef_.shape[-1] == 13
    if shutil.which("hetglm") is not None and pathlib.Path(shutil.which("hetglm")).parent == exe.parent:
        assert subprocess.run(["hetglm", "--version"], capture_output=True, text=True).returncode == 0
