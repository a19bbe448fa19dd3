"""Crash recovery on in-memory fakes: the daemon dies mid-job (its task group is stopped with a
job executing), the firmware finishes the moves it had queued, a new daemon starts on the same
journal. It announces again what the broker never acknowledged, records what executed while it
was away, and resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robot.daemon.events import EventName, JobState
from robot.journal import Journal
from tests.robot.daemon_fakes import FakeFirmware, MemorySink, Rig, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")


def _crash_mid_job(path: Path, fw: FakeFirmware, sink: MemorySink) -> str:
    """Run a job until ``fw.pause_after`` moves executed, then stop the daemon (no abort)."""

    async def body() -> str:
        async with running(path, firmware=fw, sink=sink) as rig:
            reply = await rig.daemon.submit("start", {"id": "first"})
            await fw.paused.wait()
            job_id: str = reply["job_id"]
            return job_id

    return run(body(), 30)


def _restart(path: Path, fw: FakeFirmware, then: str | None = "resume") -> Rig:
    async def body() -> Rig:
        async with running(path, firmware=fw) as rig:
            await rig.sink.wait(lambda: bool(rig.sink.of(EventName.RECOVERED)))
            if then is not None:
                await rig.job(then, {})
            return rig

    return run(body(), 30)


def _moves(rig: Rig) -> list[tuple[int, Any, Any]]:
    return [
        (m["index"], m.get("replayed"), m.get("recovered"))
        for m in rig.sink.of(EventName.MOVE_EXECUTED)
    ]


def test_restart_replays_recovers_and_resumes(fast_tmp: Path) -> None:
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), pause_after=4)
    first = MemorySink()
    first.acknowledge = False  # the broker never acknowledged a move_executed event
    job_id = _crash_mid_job(path, fw, first)
    assert len(first.of(EventName.MOVE_EXECUTED)) == 4
    fw.finish_queue(2)  # the firmware ran two more queued moves while the daemon was down

    rig = _restart(path, fw)
    names = rig.sink.names()
    recovered_at = names.index(EventName.RECOVERED)
    assert names[:recovered_at] == ["move_executed"] * 6
    moves = _moves(rig)
    replayed = [(i, True, None) for i in range(1, 5)]
    assert moves[:6] == [*replayed, (5, None, True), (6, None, True)]
    recovered = rig.sink.of(EventName.RECOVERED)[0]
    assert recovered["job_id"] == job_id and recovered["moves_done"] == 6
    assert recovered["resumable"] is True and recovered["state"] == JobState.EXECUTING
    physical = scrambled().apply(_face_moves(path, job_id)[:6])
    assert recovered["physical"] == physical.to_facelets("scheme")
    n = recovered["moves_total"]
    assert [i for i, _, _ in moves[6:]] == list(range(7, n + 1))
    assert rig.state() is JobState.DONE and fw.cube.is_solved() and len(fw.executed) == n
    journal = Journal(path)
    record = journal.job(job_id)
    fw_indices = [m.fw_index for m in journal.moves(job_id)]
    journal.close()
    assert record is not None and record.state is JobState.DONE and record.executed == n
    assert fw_indices[:6] == [1, 2, 3, 4, 5, 6]


def test_restart_with_every_event_acknowledged_replays_nothing(fast_tmp: Path) -> None:
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), pause_after=3)
    _crash_mid_job(path, fw, MemorySink())
    rig = _restart(path, fw, then=None)
    # the journal keeps the broker's mark with the next move: the last one is announced again
    assert _moves(rig) == [(3, True, None)]
    assert rig.daemon.resumable is not None and rig.daemon.resumable.executed == 3
    assert rig.sink.statuses[-1]["resumable"] == {
        "job_id": rig.daemon.resumable.id,
        "moves_done": 3,
        "moves_total": rig.daemon.resumable.total_moves,
        "needs_rescan": False,
    }


def test_a_new_job_after_a_crash_starts_from_the_physical_cube(fast_tmp: Path) -> None:
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), pause_after=5)
    _crash_mid_job(path, fw, MemorySink())
    rig = _restart(path, fw, then="start")
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    scan = rig.sink.of(EventName.SCAN_COMPLETE)[0]
    assert scan["facelets"] != scrambled().to_facelets("scheme")  # five moves in already


def _face_moves(path: Path, job_id: str) -> list[Any]:
    from robot.daemon.context import face_move

    journal = Journal(path)
    moves = journal.moves(job_id)
    journal.close()
    return [face_move(m.face, m.turns) for m in moves]
