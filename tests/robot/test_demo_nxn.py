"""`cuberobot demo --size N`: a scrambled virtual N×N cube solved end to end (rendered N×N faces
through the real vision pipeline, the engine for the size, wide and inner-slice turns run by
grippers holding several layers), and the clear refusal when the grippers hold too few."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.robot.helpers import CONFIGS, run
from tests.robot.test_cli_demo import demo

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("solver_tables")]


@pytest.mark.parametrize(
    ("n", "engine"),
    [
        pytest.param(2, "pocket", id="2x2"),
        pytest.param(4, "nxn", id="4x4", marks=pytest.mark.slow),
        pytest.param(5, "nxn", id="5x5", marks=pytest.mark.slow),
    ],
)
def test_demo_solves_a_virtual_nxn_cube(n: int, engine: str) -> None:
    code, out, err = run(
        demo("--size", str(n), "--seed", "5", "--speed", "25", "--format", "json"), timeout=400
    )
    assert code == 0, out + err
    result: dict[str, Any] = json.loads(out)
    assert result["solved"] is True and result["size"] == n and result["errors"] == []
    assert result["solution"]["engine"] == engine
    assert len(result["final_state"]) == 6 * n * n
    assert result["events"]["done"] == 1 and result["moves_executed"] > 0
    assert "virtual cube solved: yes" in err


@pytest.mark.slow
def test_demo_refuses_moves_deeper_than_the_grippers(tmp_path: Path) -> None:
    """The simulated profile with grippers of one layer: a 4x4's wide turns cannot run; the job
    fails with plan_failed naming the move and max_depth, and nothing turns."""
    text = (CONFIGS / "simulated.toml").read_text()
    shallow = "\n".join(line for line in text.splitlines() if not line.startswith("max_depth"))
    assert shallow != text
    profile = tmp_path / "shallow.toml"
    profile.write_text(shallow)
    code, out, err = run(
        demo("--config", str(profile), "--size", "4", "--seed", "5", "--format", "json"),
        timeout=300,
    )
    assert code == 1, out + err
    result: dict[str, Any] = json.loads(out)
    assert result["solved"] is False
    (error,) = result["errors"]
    assert error["code"] == "plan_failed"
    assert "this robot cannot execute" in error["message"] and "max_depth = 1" in error["message"]
    assert result["events"].get("move_executed", 0) == 0


def test_demo_on_the_c_firmware_refuses_big_cubes_up_front() -> None:
    code, out, err = run(demo("--size", "4", "--emulator", "avr", "--format", "json"), timeout=60)
    assert code == 2, out + err
    message = json.loads(out)["error"]["message"]
    assert "--emulator avr cannot solve a 4x4x4 cube" in message and "depth" in message
