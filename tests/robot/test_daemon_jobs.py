"""The daemon on in-memory fakes: every job state transition, the events in order, the journal.

No pty, no broker: :mod:`tests.robot.daemon_fakes`. The slow, true end-to-end checks are in
test_e2e.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.daemon import EventName, JobState
from robot.daemon.events import ErrorCode
from robot.journal import Journal
from tests.robot.daemon_fakes import Rig, running, scrambled
from tests.robot.helpers import run
from vision.errors import CaptureError, VisionError

pytestmark = pytest.mark.usefixtures("solver_tables")

S, V, SO, E = JobState.SCANNING, JobState.VALIDATING, JobState.SOLVING, JobState.EXECUTING


def _journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal.sqlite")


def test_start_scans_validates_solves_executes(tmp_path: Path) -> None:
    start = scrambled()

    async def body() -> Rig:
        async with running(tmp_path / "journal.sqlite", start) as rig:
            reply = await rig.job("start", {"id": "one"})
            assert reply["id"] == "one" and reply["job_id"] == rig.daemon.job.id  # type: ignore[union-attr]
            return rig

    rig = run(body(), 30)
    sink = rig.sink
    assert sink.states() == [JobState.IDLE, S, V, SO, E, JobState.DONE]
    n = len(sink.of(EventName.MOVE_EXECUTED))
    assert sink.names() == ["scan_complete", "solution"] + ["move_executed"] * n + ["done"]
    assert rig.firmware.cube.is_solved() and n == len(rig.firmware.executed) > 0
    scan = sink.of(EventName.SCAN_COMPLETE)[0]
    assert scan["valid"] and scan["facelets"] == start.to_facelets("scheme")
    moves = sink.of(EventName.MOVE_EXECUTED)
    assert [m["index"] for m in moves] == list(range(1, n + 1))
    assert moves[-1]["progress"] == 100 and "replayed" not in moves[0]
    done = sink.of(EventName.DONE)[0]
    assert done["solved"] is True and done["moves"] == n
    assert set(done["stage_times_s"]) == {"scan", "validate", "solve", "execute"}
    assert sink.statuses[-1]["progress"] == 100 and sink.statuses[-1]["eta_s"] == 0.0
    journal = _journal(tmp_path)
    record = journal.job(done["job_id"])
    journal.close()
    assert record is not None and record.state is JobState.DONE and record.error_code is None
    assert record.executed == record.total_moves == n
    # every event was acknowledged at once; the journal keeps the mark with the next move
    assert record.reported == n - 1


def test_solve_given_state_skips_the_scan(tmp_path: Path) -> None:
    start = scrambled("F R' U2 B")

    async def body() -> Rig:
        async with running(tmp_path / "j.sqlite", start) as rig:
            await rig.job("solve", {"facelets": start.to_facelets("scheme")})
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, V, SO, E, JobState.DONE]
    assert rig.sink.names()[0] == "solution" and rig.cameras.captures == 0
    assert rig.firmware.cube.is_solved()


def test_scan_job_reads_and_ends(tmp_path: Path) -> None:
    """A scan job ends right after SCANNING (the scan itself refuses an invalid cube)."""

    async def body() -> Rig:
        async with running(tmp_path / "j.sqlite") as rig:
            await rig.job("scan")
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, S, JobState.DONE]
    assert rig.sink.names() == ["scan_complete", "done"]
    assert rig.sink.of(EventName.DONE)[0]["solved"] is None
    assert rig.firmware.executed == []


def test_a_solved_cube_needs_no_move(tmp_path: Path) -> None:
    async def body() -> Rig:
        async with running(tmp_path / "j.sqlite", scrambled("")) as rig:
            await rig.job("start")
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, S, V, SO, JobState.DONE]
    assert rig.sink.names() == ["scan_complete", "solution", "done"]


def test_one_job_after_another(tmp_path: Path) -> None:
    """DONE, ERROR and ABORTED all lead to the next job."""

    async def body() -> Rig:
        async with running(tmp_path / "j.sqlite") as rig:
            await rig.job("start")
            assert rig.state() is JobState.DONE
            rig.cameras.failure = _vision_error()
            await rig.job("start")
            assert rig.state() is JobState.ERROR
            rig.cameras.failure = None
            rig.firmware.cube = scrambled("U R")
            await rig.job("start")
            assert rig.state() is JobState.DONE
            return rig

    rig = run(body(), 30)
    states = rig.sink.states()
    assert states[1:] == [S, V, SO, E, JobState.DONE, S, JobState.ERROR, S, V, SO, E, JobState.DONE]
    assert [e["code"] for e in rig.sink.of(EventName.ERROR)] == [ErrorCode.SCAN_FAILED]


def _vision_error() -> VisionError:

    return CaptureError("camera upper: no frame")
