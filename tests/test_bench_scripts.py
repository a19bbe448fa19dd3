"""Every benchmark runs as the docs say, ``python bench/<name>.py``: a script's folder comes
first on ``sys.path`` there, so a bench file named like a package of the project
(bench/vision.py) must not shadow it (four benchmarks, bench/time_to_solved.py among them,
failed at import once robot.config read files through vision.imagefile)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py") if not path.name.startswith("_"))


def test_every_benchmark_is_seen() -> None:
    assert {"time_to_solved.py", "vision.py", "chaos.py", "solve_nxn.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_starts_as_a_script(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        cwd=tmp_path,  # not the checkout: the project must come from the script's own path
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("modes", ["100ms", "0.1,fast", "-1", "nan", ","])
def test_time_to_solved_refuses_a_bad_mode_by_name(modes: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "time_to_solved.py"), "--modes", modes, "--states", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--modes" in done.stderr
    assert "Traceback" not in done.stderr
