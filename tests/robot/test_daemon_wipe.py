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

from firmware_protocol.messages import FirmwareState
from robot.daemon import JobState
from robot.journal import Journal
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


def test_lost_counters_before_any_report_stop_a_plain_resume(tmp_path: Path) -> None:
    """No move of the job was ever journaled executed (the daemon dies as the first one
    starts; in the campaign the port was gone instead), the firmware runs what it received
    and then loses its memory. Its counters at zero look like "none ran" (the job's first
    dispatch began at index 1): the restarted daemon offered a plain resume, which sent
    every move again on a cube that had turned (the chaos campaign, six-motor robot, seed
    14204). The boot that lost its counters makes the moves unknown: only a rescan goes on."""
    bench = _bench()
    trial = bench.Trial(bench.Schedule(1, SCRAMBLE, "", []), tmp_path, 4.0, frozenset())
    fw = trial.fw

    async def body() -> None:
        async with trial.running() as daemon:
            trial.watch_estop()  # the journal check learns when the memory was lost
            assert (await daemon.submit("start", {}))["ok"]
            async with asyncio.timeout(30):
                while fw.nv.last_received == 0:
                    await asyncio.sleep(0.001)
            await trial.kill()  # before the first move's report
            async with asyncio.timeout(10):  # the firmware runs what it received
                while fw.state is not FirmwareState.IDLE or fw.nv.last_executed == 0:
                    await asyncio.sleep(0.005)
            ran = [r for r in fw.records if r.outcome == "executed"]
            assert ran and fw.nv.last_executed == len(ran)
            fw.reset(True)
            journal = Journal(tmp_path / "journal.sqlite")
            record = journal.unfinished_job()
            journal.close()
            assert record is not None and record.executed == 0 and record.first_index == 1
            await trial.start_daemon()
            daemon = trial.daemon
            status = dict(daemon.status())
            error = status["error"] or {}
            assert error.get("code") == "firmware_counter", status
            assert "lost its move counters" in error["message"]
            assert status["resumable"]["needs_rescan"] is True
            refused = await daemon.submit("resume", {})
            assert refused["ok"] is False, refused
            assert [r for r in fw.records if r.outcome == "executed"] == ran  # none sent again
            assert (await daemon.submit("resume", {"rescan": True}))["ok"]
            await asyncio.wait_for(trial.wait_job(), 60)
            assert daemon.state is JobState.DONE
            assert trial.robot.cube_state().is_solved()
        assert trial.violations == []

    run(body(), 120)
