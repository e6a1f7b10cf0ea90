# SPDX-License-Identifier: Apache-2.0
import os
import pathlib

import pytest

import hetglm

ROOT = pathlib.Path(__file__).resolve().parents[3]
DATA = ROOT / "data"


@pytest.fixture(scope="session")
def data_dir():
    return DATA


@pytest.fixture(scope="session")
def housing(data_dir):
    return hetglm.load_svmlight_file(data_dir / "housing_scale")


@pytest.fixture(scope="session")
def a9a(data_dir):
    return hetglm.load_svmlight_file(data_dir / "a9a")
