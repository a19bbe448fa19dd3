"""An abort or emergency stop while the job homes after a firmware reset ends the job at once,
ABORTED with its code (found by ``bench/chaos.py``: the stop ended the homing, the link waited
its whole 30 s for a homed STATUS, and the job ended ERROR ``firmware``; the abort's reply
waited as long). On the simulated robot: the firmware on a pty, ``reset@2``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import ModuleType

import pytest

from firmware_protocol.messages import FirmwareState
from robot.daemon import JobState
from tests.benchload import load_bench
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")
ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    return load_bench("chaos")


@pytest.mark.parametrize("verb", ["abort", "estop"])
def test_a_stop_while_homing_after_a_reset_ends_the_job_at_once(verb: str, tmp_path: Path) -> None:
    bench = _bench()
    schedule = bench.Schedule(1, "R U F' D2 L B R2 U' F2", "reset@2", ["reset"])
    trial = bench.Trial(schedule, tmp_path, 4.0, frozenset())

    async def body() -> None:
        async with trial.running() as daemon:
            assert (await daemon.submit("start", {}))["ok"]
            fw = trial.fw
            async with asyncio.timeout(20):
                while fw.state is not FirmwareState.HOMING:
                    await asyncio.sleep(0.002)
            began = time.monotonic()
            reply = await asyncio.wait_for(daemon.submit(verb, {}), 5)
            await asyncio.wait_for(daemon.job_done.wait(), 5)
            assert time.monotonic() - began < 2.0
            assert reply["ok"], reply
            status = dict(daemon.status())
            assert status["state"] == JobState.ABORTED, status
            assert status["error"]["code"] == ("aborted" if verb == "abort" else "estop")
            if verb == "estop":
                assert fw.state is FirmwareState.STOPPED
                assert (await daemon.submit("home", {}))["ok"]
            assert (await daemon.submit("start", {}))["ok"]  # the cube as it is now
            await asyncio.wait_for(trial.wait_job(), 60)
            assert daemon.state is JobState.DONE
            assert trial.robot.cube_state().is_solved()
        assert trial.violations == []

    run(body(), 120)
