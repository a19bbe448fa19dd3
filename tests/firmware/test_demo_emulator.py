"""``cuberobot demo --emulator avr``: a whole job — scan, solve, execute, check — with the
reference C firmware in simavr as the motor board, the virtual cube turned only by the motor
pulses it recorded."""

from __future__ import annotations

import json
import subprocess

import pytest

from firmware_protocol.emulator import missing_tools
from tests.conftest import CUBEROBOT

MISSING = missing_tools()


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.usefixtures("solver_tables")
@pytest.mark.skipif(bool(MISSING), reason=f"EMULATOR TESTS SKIPPED: missing {', '.join(MISSING)}")
def test_demo_solves_the_cube_with_the_real_firmware() -> None:
    done = subprocess.run(
        [*CUBEROBOT, "demo", "--emulator", "avr", "--seed", "5", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["solved"] is True and result["moves_executed"] > 0


def test_demo_refuses_speed_with_the_emulator() -> None:
    done = subprocess.run(
        [*CUBEROBOT, "demo", "--emulator", "avr", "--speed", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--emulator avr" in done.stderr
