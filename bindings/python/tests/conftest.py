# SPDX-License-Identifier: Apache-2.0
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DATA = ROOT / "data"


@pytest.fixture(scope="session")
def data_dir():
    return DATA
