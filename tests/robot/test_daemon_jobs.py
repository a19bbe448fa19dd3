"""The daemon on in-memory fakes: every job state transition, the events in order, the journal.

No pty, no broker: :mod:`tests.robot.daemon_fakes`. The slow, true end-to-end checks are in
test_e2e.py.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest

from robot.daemon import Daemon, EventName, JobState
from robot.daemon.events import ErrorCode
from robot.journal import Journal
from robot.journal_async import AsyncJournal
from solver.api import solve
from solver.cube.facelets import Cube
from solver.solution import Solution
from tests.robot.daemon_fakes import (
    FakeFirmware,
    FakeLink,
    Fault,
    MemorySink,
    Rig,
    fast_config,
    running,
    scrambled,
)
from tests.robot.helpers import run
from vision.errors import CaptureError, VisionError

pytestmark = pytest.mark.usefixtures("solver_tables")

S, V, SO, E = JobState.SCANNING, JobState.VALIDATING, JobState.SOLVING, JobState.EXECUTING


def _journal(fast_tmp: Path) -> Journal:
    return Journal(fast_tmp / "j.sqlite")


def test_start_scans_validates_solves_executes(fast_tmp: Path) -> None:
    start = scrambled()

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", start) as rig:
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
    journal = _journal(fast_tmp)
    record = journal.job(done["job_id"])
    journal.close()
    assert record is not None and record.state is JobState.DONE and record.error_code is None
    assert record.executed == record.total_moves == n
    # every event was acknowledged at once; the journal keeps the mark with the next move
    assert record.reported == n - 1


def test_solve_given_state_skips_the_scan(fast_tmp: Path) -> None:
    start = scrambled("F R' U2 B")

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", start) as rig:
            await rig.job("solve", {"facelets": start.to_facelets("scheme")})
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, V, SO, E, JobState.DONE]
    # no scan before solving; one read after execution: the check that the cube is solved
    assert rig.sink.names()[0] == "solution" and rig.cameras.captures == 1
    assert "scan_complete" not in rig.sink.names()
    assert rig.sink.of(EventName.DONE)[0]["verified"] is True
    assert rig.firmware.cube.is_solved()


def test_scan_job_reads_and_ends(fast_tmp: Path) -> None:
    """A scan job ends right after SCANNING (the scan itself refuses an invalid cube)."""

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite") as rig:
            await rig.job("scan")
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, S, JobState.DONE]
    assert rig.sink.names() == ["scan_complete", "done"]
    assert rig.sink.of(EventName.DONE)[0]["solved"] is None
    assert rig.firmware.executed == []


def test_a_solved_cube_needs_no_move(fast_tmp: Path) -> None:
    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", scrambled("")) as rig:
            await rig.job("start")
            return rig

    rig = run(body(), 30)
    assert rig.sink.states() == [JobState.IDLE, S, V, SO, JobState.DONE]
    assert rig.sink.names() == ["scan_complete", "solution", "done"]


def test_one_job_after_another(fast_tmp: Path) -> None:
    """DONE, ERROR and ABORTED all lead to the next job."""

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite") as rig:
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


def test_abort_while_executing_stops_after_the_group_and_homes(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=3)

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.daemon.submit("start")
            await fw.paused.wait()
            reply = await rig.daemon.submit("abort")
            assert reply["ok"] and reply["state"] == JobState.ABORTED
            assert fw.hold_requested is False and fw.homes == 1  # homed: ready again
            assert rig.daemon.link.connected  # a fresh session after the stop
            await rig.job("start")
            return rig

    rig = run(body(), 30)
    assert rig.sink.states()[1:] == [S, V, SO, E, JobState.ABORTED, S, V, SO, E, JobState.DONE]
    assert [a["moves_done"] for a in rig.sink.of(EventName.ABORTED)] == [3]
    assert rig.firmware.cube.is_solved()


@pytest.mark.parametrize("stage", [S, SO])
def test_abort_before_execution_cancels_the_job(fast_tmp: Path, stage: JobState) -> None:
    """Nothing moved yet: the job task is cancelled in SCANNING (or SOLVING); no homing."""
    release = threading.Event()

    def slow_solver(cube: Cube, engine: str, **options: Any) -> Solution:
        release.wait(10)
        return solve(cube, engine, **options)

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", solver=slow_solver) as rig:
            rig.cameras.hold = stage is S
            await rig.daemon.submit("start")
            await rig.sink.wait(lambda: rig.state() is stage)
            reply = await rig.daemon.submit("abort", {})
            release.set()
            rig.cameras.release.set()
            assert reply["ok"] and reply["state"] == JobState.ABORTED
            return rig

    rig = run(body(), 30)
    assert rig.sink.states()[-1] == JobState.ABORTED and rig.sink.states()[-2] == stage
    aborted = rig.sink.of(EventName.ABORTED)
    assert [(a["code"], a["message"]) for a in aborted] == [
        (ErrorCode.ABORTED, "aborted on request")
    ]
    assert rig.firmware.executed == [] and rig.firmware.homes == 0


def test_estop_latches_until_home(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=2)

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.daemon.submit("start")
            await fw.paused.wait()
            await rig.daemon.submit("estop")
            await rig.daemon.job_done.wait()
            await rig.job("start")  # refused by the firmware: the stop is latched
            assert rig.state() is JobState.ERROR
            home = await rig.daemon.submit("home", {"id": "h"})
            assert home["ok"] and home["firmware_state"] == "IDLE"
            await rig.job("start")
            return rig

    rig = run(body(), 30)
    assert [a["code"] for a in rig.sink.of(EventName.ABORTED)] == [ErrorCode.ESTOP]
    error = rig.sink.of(EventName.ERROR)[0]
    assert error["code"] == ErrorCode.FIRMWARE and "home" in error["message"]
    assert rig.state() is JobState.DONE and rig.firmware.cube.is_solved()


def test_a_firmware_reset_is_recovered(fast_tmp: Path) -> None:
    """Reconciled from the link's report, homed, continued: every move exactly once."""
    fw = FakeFirmware(scrambled(), faults=[Fault("reset", 4)])

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.job("start")
            return rig

    rig = run(body(), 30)
    assert rig.state() is JobState.DONE and fw.cube.is_solved() and fw.homes == 1
    resets = rig.sink.of(EventName.FIRMWARE_RESET)
    assert len(resets) == 1 and resets[0]["recovering"] and resets[0]["moves_done"] == 4
    n = rig.sink.of(EventName.SOLUTION)[0]["program"]["count"]
    assert len(fw.executed) == n
    assert [m["index"] for m in rig.sink.of(EventName.MOVE_EXECUTED)] == list(range(1, n + 1))


@pytest.mark.parametrize("rescan", [False, True])
def test_resume_after_the_link_was_lost(fast_tmp: Path, rescan: bool) -> None:
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])

    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.job("start")
            assert rig.state() is JobState.ERROR and rig.daemon.resumable is not None
            job_id = rig.daemon.resumable.id
            reply = await rig.job("resume", {"rescan": rescan})
            assert reply["job_id"] == job_id and reply["resumed"] is True
            return rig

    rig = run(body(), 30)
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    expected = [S, V, SO, E] if rescan else [E]
    assert rig.sink.states()[-len(expected) - 2 :] == [JobState.ERROR, *expected, JobState.DONE]
    moves = rig.sink.of(EventName.MOVE_EXECUTED)
    assert [m["index"] for m in moves] == list(range(1, len(moves) + 1)) and len(moves) > 3
    assert len(fw.executed) == len(moves)  # nothing executed twice
    assert rig.daemon.resumable is None and rig.sink.statuses[-1]["resumable"] is None
    done = rig.sink.of(EventName.DONE)[0]
    journal = _journal(fast_tmp)
    record = journal.job(done["job_id"])
    journal.close()
    assert record is not None and record.state is JobState.DONE
    assert record.executed == record.total_moves == len(moves)


def test_a_duplicate_command_id_runs_once(fast_tmp: Path) -> None:
    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite") as rig:
            first = await rig.job("start", {"id": "same"})
            again = await rig.daemon.submit("start", {"id": "same"})
            assert again == {**first, "duplicate": True}
            return rig

    rig = run(body(), 30)
    assert len(rig.sink.of(EventName.DONE)) == 1


def test_status_ids_are_not_journaled_and_a_repeat_is_answered_again(fast_tmp: Path) -> None:
    """Every new status id was a row in the journal: a client polling at the rate limit
    (20/s) grew it without bound. status is read-only: answered each time, nothing written."""
    import sqlite3

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite") as rig:
            for k in range(30):
                reply = await rig.daemon.submit("status", {"id": f"poll-{k}"})
                assert reply["ok"] is True and "duplicate" not in reply
            again = await rig.daemon.submit("status", {"id": "poll-0"})
            assert again["ok"] is True and "duplicate" not in again

    run(body(), 30)
    with contextlib.closing(sqlite3.connect(fast_tmp / "j.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM commands WHERE verb = 'status'").fetchone() == (0,)


def test_five_motor_robot_never_turns_d(fast_tmp: Path) -> None:
    async def body() -> Rig:
        async with running(fast_tmp / "j.sqlite", config=fast_config(D=None)) as rig:
            await rig.job("start")
            return rig

    rig = run(body(), 60)
    assert rig.state() is JobState.DONE and rig.firmware.cube.is_solved()
    assert rig.firmware.executed and all(m.motor != 3 for m in rig.firmware.executed)


def test_an_mqtt_broker_or_a_sink_not_both(fast_tmp: Path) -> None:
    async def body() -> None:
        journal = AsyncJournal.open(fast_tmp / "j.sqlite")
        try:
            with pytest.raises(ValueError, match="not both"):
                Daemon(
                    fast_config(),
                    link=FakeLink(FakeFirmware(scrambled())),
                    cameras=None,
                    journal=journal,
                    mqtt_host="127.0.0.1",
                    sink=MemorySink(),
                )
        finally:
            await journal.close()

    run(body(), 10)


def test_replies_and_job_events_say_who_asked(fast_tmp: Path) -> None:
    async def scenario() -> Rig:
        async with running(fast_tmp / "j.sqlite") as rig:
            reply = await rig.job("start", {"source": "homeassistant"})
            assert reply["source"] == "homeassistant"
            refused = await rig.daemon.submit("resume", {"source": "node-red"})
            assert refused["source"] == "node-red" and refused["ok"] is False
            return rig

    rig = run(scenario(), 60)
    job_events = [
        (name, payload)
        for name, payload in rig.sink.events
        if isinstance(payload, dict) and "job_id" in payload
    ]
    assert job_events and all(p.get("source") == "homeassistant" for _, p in job_events)


def test_command_ids_in_memory_are_bounded_and_the_journal_still_knows_them(
    fast_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every new id was kept in a set for the daemon's life: a flood of commands with
    fresh ids grew its memory without bound. Past the limit the oldest is forgotten in memory
    only; the journal still answers it as a duplicate."""
    import robot.daemon.intake as intake

    monkeypatch.setattr(intake, "SEEN_IDS_LIMIT", 3)

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite") as rig:
            first = await rig.daemon.submit("home", {"id": "s0"})
            for k in range(1, 7):  # within home's burst of 10 (rate limit)
                await rig.daemon.submit("home", {"id": f"s{k}"})
            assert list(rig.daemon.intake._seen_ids) == ["s4", "s5", "s6"]
            again = await rig.daemon.submit("home", {"id": "s0"})
            assert again["duplicate"] is True and again["ok"] is first["ok"] is True

    run(body(), 30)
