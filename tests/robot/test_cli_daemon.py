"""The CLI contract of `cuberobot demo`, `cuberobot config check` and `cuberobot run`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robot.helpers import CONFIGS

CLI = [sys.executable, "-m", "robot.cli"]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "120"},
    )


@pytest.mark.parametrize("name", ["six_motor.toml", "five_motor.toml", "simulated.toml"])
def test_config_check_ok(name: str) -> None:
    result = cli("config", "check", str(CONFIGS / name))
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


def test_config_check_states_the_d_cost() -> None:
    result = cli("config", "check", str(CONFIGS / "five_motor.toml"))
    assert "D: replaced by 13 turns in 7 motion groups" in result.stdout
    assert "D2: replaced by 9 turns" in result.stdout


def test_config_check_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[serial]\nbaud = 'fast'\n")
    result = cli("config", "check", str(bad))
    assert result.returncode == 2
    assert "[serial] baud" in result.stderr and str(bad) in result.stderr


def test_config_check_refuses_an_unusable_calibration_file(tmp_path: Path) -> None:
    """config check only looked for the calibration file; `run` then would not start. Now
    check loads it (and `run` starts with the camera uncalibrated, see test_cameras)."""
    (tmp_path / "cal.toml").write_text("n = 3\nview = 7\n")
    profile = tmp_path / "robot.toml"
    text = (CONFIGS / "six_motor.toml").read_text()
    assert 'calibration = "' in text
    lines = [
        'calibration = "cal.toml"' if line.strip().startswith("calibration =") else line
        for line in text.splitlines()
    ]
    profile.write_text("\n".join(lines) + "\n")
    result = cli("config", "check", str(profile))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "calibration is unusable" in result.stderr and "cal.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_with_a_missing_profile(tmp_path: Path) -> None:
    result = cli("run", "--config", str(tmp_path / "none.toml"))
    assert result.returncode == 2 and "cannot read" in result.stderr


@pytest.mark.e2e
@pytest.mark.usefixtures("solver_tables")
def test_demo_solves_the_cube() -> None:
    result = cli("demo", "--seed", "3", "--speed", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith("virtual cube solved: yes")
    for stage in ("scan", "validate", "solve", "execute"):
        assert any(line.strip("│ ").startswith(stage) for line in lines), stage
