"""``cuberobot tables build``: the tables a robot needs, built ahead of time (checked when they
are there), and its usage errors."""

from __future__ import annotations

import os
import subprocess

import pytest

from solver.engines.twophase.tables import default_cache_dir
from tests.conftest import CUBEROBOT


@pytest.mark.usefixtures("solver_tables")
def test_tables_already_built_are_checked_not_rebuilt() -> None:
    env = {**os.environ, "CUBEROBOT_CACHE_DIR": str(default_cache_dir())}
    done = subprocess.run(
        [*CUBEROBOT, "tables", "build", "--robot"], capture_output=True, text=True, env=env,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("all tables were already built", "built ")), done.stdout


@pytest.mark.parametrize(
    "args", [["tables"], ["tables", "build", "--workers", "0"], ["tables", "burn"]]
)
def test_usage_errors(args: list[str]) -> None:
    done = subprocess.run([*CUBEROBOT, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
