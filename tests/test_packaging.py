"""The sdist and the wheel are self-contained: built with ``python -m build`` (the sdist first,
then the wheel from the unpacked sdist, so the sdist must hold what a source build needs),
installed into a fresh virtual environment, and run from a folder outside the repository.

Dependencies come from pip's cache or the configured index; the solver tables come from the
test process's own cache (``CUBEROBOT_CACHE_DIR``), so no table is rebuilt.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from solver.engines.twophase.tables import default_cache_dir

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("solver_tables")]


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    venv: Path
    outside: Path

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``cuberobot ARGS`` of the fresh environment, run from outside the repository."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {
            "CUBEROBOT_CACHE_DIR": str(default_cache_dir()),
            "COLUMNS": "120",
        }
        return subprocess.run(
            [str(self.venv / "bin" / "cuberobot"), *args],
            cwd=self.outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _check(cmd: list[str], cwd: Path, timeout: float) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(cmd)}:\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("packaging")
    dist, venv, outside = tmp / "dist", tmp / "venv", tmp / "elsewhere"
    outside.mkdir()
    _check([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], ROOT, 600)
    (sdist,) = dist.glob("cuberobot-*.tar.gz")
    (wheel,) = dist.glob("cuberobot-*.whl")
    _check([sys.executable, "-m", "venv", str(venv)], tmp, 120)
    _check([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], tmp, 600)
    yield Installed(sdist, wheel, venv, outside)


def test_the_sdist_holds_the_sources_profiles_and_tests(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in (
        "LICENSE",
        "pyproject.toml",
        "MANIFEST.in",
        "solver/engines/twophase/_twophase.c",
        "solver/engines/nxn/_staged5.c",
        "solver/engines/nxn/_lines.c",
        "solver/engines/nxn/_bars.c",
        "solver/engines/nxn/_pairing.c",
        "robot/profiles/simulated.toml",
        "configs/simulated.toml",
        "robot/web/static/index.html",
        "firmware_protocol/PROTOCOL.md",
        "tests/conftest.py",
        "tests/robot/helpers.py",
        "docs/daemon.md",
        "firmware/Makefile",
    ):
        assert needed in names, needed


def test_the_wheel_carries_the_profiles_as_package_data(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        names = set(whl.namelist())
    expected = {f"robot/profiles/{p.name}" for p in (ROOT / "configs").glob("*.toml")}
    assert expected and expected <= names
    assert not any(n.startswith(("configs/", "tests/", "firmware/")) for n in names)


def test_the_installed_package_is_the_one_run(installed: Installed) -> None:
    result = installed.run("--version")
    assert result.returncode == 0, result.stderr
    python = installed.venv / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import robot; print(robot.__file__)"],
        cwd=installed.outside,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(installed.venv)), where


def test_demo_runs_from_the_wheel(installed: Installed) -> None:
    result = installed.run("demo", "--seed", "5", "--speed", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("virtual cube solved: yes")
    assert not list(installed.outside.iterdir()), "the demo left files in the working folder"


def test_solve_runs_from_the_wheel(installed: Installed) -> None:
    result = installed.run("solve", "--scramble", "R U")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "U' R'"


def test_bundled_profiles_from_the_wheel(installed: Installed) -> None:
    result = installed.run("config", "check", "six_motor")
    assert result.returncode == 0, result.stderr
    journal = next(
        line for line in result.stdout.splitlines() if line.strip().startswith("journal")
    )
    assert str(installed.outside / "six-motor-journal.sqlite") in journal
    missing = installed.run("config", "check", "configs/simulated.toml")
    assert missing.returncode == 2 and "bundled profile (bigcube_gripper, five_motor, " in (
        missing.stderr
    )
    for kind in ("turntable", "two_gripper"):  # the mechanism kinds' profiles ship too
        assert installed.run("config", "check", kind).returncode == 0
