"""A firmware reset that loses its non-volatile memory mid-job (the counters come back at zero,
the ``wipe@K`` fault): nothing says which of the moves sent since the last report ran, so the
daemon does not send them again on a guess (one that ran would turn its face twice). The job
stops, ``firmware_reset`` names the unknown moves, and only a resume with a rescan goes on.
On the simulated robot: the firmware on a pty, the campaign's harness (bench/chaos.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType

import pytest

from robot.daemon import JobState
from tests.benchload import load_bench
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")

SCRAMBLE = "R U F' D2 L B R2 U' F2 L' D B2"


def _bench() -> ModuleType:
    return load_bench("chaos")


@pytest.mark.parametrize("k", [4, 1], ids=["after-reports", "before-any-report"])
def test_lost_counters_stop_the_job_for_a_rescan(tmp_path: Path, k: int) -> None:
    """``wipe@1``: the memory is lost before the firmware reported any move; its counters at
    zero look intact, and only the IDENT's ``boot_flags`` (protocol v2) tell; before them the
    daemon sent the moves again."""
    bench = _bench()
    trial = bench.Trial(
        bench.Schedule(1, SCRAMBLE, f"wipe@{k}", ["reset"]), tmp_path, 4.0, frozenset()
    )

    async def body() -> None:
        async with trial.running() as daemon:
            assert (await daemon.submit("start", {}))["ok"]
            await asyncio.wait_for(trial.wait_job(), 60)
            status = dict(daemon.status())
            assert status["state"] == JobState.ERROR, status
            assert status["error"]["code"] == "firmware_reset"
            assert "lost its move counters" in status["error"]["message"]
            assert 'resume with {"rescan": true}' in status["error"]["message"]
            assert status["resumable"]["needs_rescan"] is True
            resets = [p for name, p, _ in trial.sink.events if name == "firmware_reset"]
            assert len(resets) == 1 and resets[0]["recovering"] is False
            unknown = resets[0]["unknown"]
            assert unknown[0] == resets[0]["moves_done"] + 1 == k
            assert unknown == list(range(k, k + len(unknown)))
            assert trial.fw.nv.last_executed == 0  # the memory was lost
            refused = await daemon.submit("resume", {})
            assert refused["ok"] is False, refused
            assert (await daemon.submit("resume", {"rescan": True}))["ok"]
            await asyncio.wait_for(trial.wait_job(), 60)
            assert daemon.state is JobState.DONE
            assert trial.robot.cube_state().is_solved()
        assert trial.violations == []  # the journal's indices began at 1 again after the wipe

    run(body(), 120)
