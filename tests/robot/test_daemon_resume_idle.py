"""``resume`` while the firmware still runs the job's earlier moves (the link was lost mid-job,
but the firmware's watchdog stayed fed, so it kept running its queue): the resume first waits
for the queue to drain, journals and announces each move the firmware runs meanwhile
(``recovered: true``), and only then sends the moves that did not execute. Never twice, never
skipped; ``abort`` and ``estop`` during the wait still stop the motors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from firmware_protocol.messages import ErrorCode as FwError
from firmware_protocol.messages import FirmwareState
from robot.daemon.events import ErrorCode, EventName, JobState
from robot.journal import Journal
from tests.robot.daemon_fakes import FakeFirmware, Fault, Rig, fast_config, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")


def _config(drain_s: float = 10.0) -> object:
    config = fast_config()
    serial = config.serial.model_copy(update={"resume_drain_s": drain_s})
    return config.model_copy(update={"serial": serial})


def _firmware(after: int = 3, step: int = 1) -> FakeFirmware:
    """A firmware that loses the link after ``after`` moves and runs the rest of its queue on
    its own, ``step`` moves per STATUS."""
    return FakeFirmware(
        scrambled(), faults=[Fault("link_lost", after)], autonomous=True, backlog_step=step
    )


async def _interrupted(rig: Rig) -> int:
    """Run a job until its link is lost with moves still queued; the job's move count."""
    await rig.job("start")
    assert rig.sink.of(EventName.ERROR)[-1]["code"] == ErrorCode.LINK_LOST
    assert rig.firmware.backlog, "the firmware should still hold queued moves"
    total = rig.daemon.resumable.total_moves if rig.daemon.resumable else 0
    assert total == len(rig.firmware.executed) + len(rig.firmware.backlog)
    return total


def _indices(rig: Rig) -> list[int]:
    return [m["index"] for m in rig.sink.of(EventName.MOVE_EXECUTED) if not m.get("replayed")]


def test_resume_waits_for_the_queue_then_sends_only_the_rest(fast_tmp: Path) -> None:
    path = fast_tmp / "j.sqlite"

    async def scenario() -> None:
        fw = _firmware()
        async with running(path, firmware=fw, config=_config()) as rig:
            total = await _interrupted(rig)
            queued = len(fw.backlog)
            await rig.job("resume", {})
            assert rig.state() is JobState.DONE
            # every wire move ran exactly once: the queued ones were not sent again
            assert len(fw.executed) == total and fw.cube.is_solved()
            assert sorted(_indices(rig)) == list(range(1, total + 1))
            recovered = [m for m in rig.sink.of(EventName.MOVE_EXECUTED) if m.get("recovered")]
            assert [m["index"] for m in recovered] == list(range(4, 4 + queued))
            assert "EXECUTING" in rig.sink.states()
            job_id = recovered[0]["job_id"]
        journal = Journal(path)
        try:
            record = journal.job(job_id)
            fw_indices = [m.fw_index for m in journal.moves(job_id)]
        finally:
            journal.close()
        assert record is not None and record.state is JobState.DONE and record.executed == total
        assert fw_indices[: 3 + queued] == list(range(1, 4 + queued))

    run(scenario(), 60)


def test_a_firmware_that_does_not_drain_keeps_the_job_resumable(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = _firmware(step=0)  # the motors make no progress
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config(0.3)) as rig:
            total = await _interrupted(rig)
            executed = len(fw.executed)
            await rig.job("resume", {})
            error = rig.sink.of(EventName.ERROR)[-1]
            assert error["code"] == ErrorCode.FIRMWARE_BUSY and error.get("resumable") is True
            assert "resume_drain_s" in error["message"]
            assert len(fw.executed) == executed  # nothing was sent
            fw.backlog_step = 2  # the motors move again: the advice works
            await rig.job("resume", {})
            assert rig.state() is JobState.DONE
            assert len(fw.executed) == total and fw.cube.is_solved()

    run(scenario(), 60)


@pytest.mark.parametrize("verb", ["abort", "estop"])
def test_abort_and_estop_stop_the_motors_during_the_wait(verb: str, fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = _firmware(step=0)
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config()) as rig:
            await _interrupted(rig)
            executed = len(fw.executed)
            reply = await rig.daemon.submit("resume", {})
            assert reply["ok"], reply
            await rig.sink.wait(lambda: rig.state() is JobState.EXECUTING)
            stop = await asyncio.wait_for(rig.daemon.submit(verb, {}), 10)
            assert stop["ok"], stop
            await asyncio.wait_for(rig.daemon.job_done.wait(), 10)
            aborted = rig.sink.of(EventName.ABORTED)[-1]
            assert aborted["code"] == (ErrorCode.ABORTED if verb == "abort" else ErrorCode.ESTOP)
            assert rig.state() is JobState.ABORTED
            assert not fw.backlog and len(fw.executed) == executed  # the queue was flushed
            if verb == "estop":
                assert fw.state is FirmwareState.STOPPED

    run(scenario(), 60)


def test_a_held_firmware_is_released_and_drained_exactly(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = _firmware()
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config()) as rig:
            total = await _interrupted(rig)
            fw.run_backlog(2)  # two more ran while nobody listened
            fw.hold_requested = True  # then held: e.g. an abort whose stop never arrived
            await rig.job("resume", {})
            assert rig.state() is JobState.DONE and fw.resumes == 1
            assert len(fw.executed) == total and fw.cube.is_solved()
            assert sorted(_indices(rig)) == list(range(1, total + 1))

    run(scenario(), 60)


def test_a_motor_fault_during_the_wait_ends_the_job(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = _firmware(step=0)
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config()) as rig:
            await _interrupted(rig)
            executed = len(fw.executed)
            assert (await rig.daemon.submit("resume", {}))["ok"]
            await rig.sink.wait(lambda: rig.state() is JobState.EXECUTING)
            fw.state, fw.error = FirmwareState.FAULT, FwError.STALL
            fw.backlog.clear()  # a fault flushes the queue
            await asyncio.wait_for(rig.daemon.job_done.wait(), 10)
            error = rig.sink.of(EventName.ERROR)[-1]
            assert error["code"] == ErrorCode.MOTOR_FAULT and "home" in error["message"]
            assert len(fw.executed) == executed

    run(scenario(), 60)


def test_an_abort_before_the_first_status_still_stops_the_motors(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = _firmware(step=0)
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config()) as rig:
            await _interrupted(rig)
            executed = len(fw.executed)
            asked = asyncio.Event()

            async def slow_status() -> object:
                asked.set()
                await asyncio.Event().wait()  # the STATUS never comes
                raise AssertionError("unreachable")

            rig.daemon.link.status = slow_status  # type: ignore[method-assign]
            assert (await rig.daemon.submit("resume", {}))["ok"]
            await asyncio.wait_for(asked.wait(), 10)
            stop = await asyncio.wait_for(rig.daemon.submit("abort", {}), 10)
            assert stop["ok"], stop
            assert rig.sink.of(EventName.ABORTED)[-1]["code"] == ErrorCode.ABORTED
            assert fw.state is FirmwareState.STOPPED and not fw.backlog
            assert len(fw.executed) == executed

    run(scenario(), 60)


# --- a new job instead of resume -----------------------------------------------------------------


def test_new_job_waits_for_the_interrupted_queue_then_runs(fast_tmp: Path) -> None:
    """``start`` instead of ``resume``: the new job does not scan a moving cube nor queue its
    moves behind the old ones; the old job's moves that run meanwhile are journaled."""
    path = fast_tmp / "j.sqlite"

    async def scenario() -> None:
        fw = _firmware()
        async with running(path, firmware=fw, config=_config()) as rig:
            total = await _interrupted(rig)
            old = rig.daemon.resumable
            assert old is not None
            await rig.job("start")
            assert not fw.backlog and rig.state() is JobState.DONE and fw.cube.is_solved()
            assert rig.daemon.resumable is None
        journal = Journal(path)
        try:
            record = journal.job(old.id)
        finally:
            journal.close()
        assert record is not None and record.state is JobState.ABORTED
        assert record.executed == total  # every move the firmware ran on its own is counted

    run(scenario(), 60)


def test_new_job_refused_while_the_firmware_stays_busy(fast_tmp: Path) -> None:
    """Motors that never finish the old queue within ``resume_drain_s``: the new job is refused
    (``firmware_busy``, naming what to do), nothing is sent, the old job stays resumable."""

    async def scenario() -> None:
        fw = _firmware(step=0)
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config(0.2)) as rig:
            await _interrupted(rig)
            executed = len(fw.executed)
            reply = await rig.daemon.submit("start")
            assert reply["ok"] is False and reply["error"]["code"] == ErrorCode.FIRMWARE_BUSY
            assert "resume_drain_s" in reply["error"]["message"]
            assert "estop" in reply["error"]["message"]
            assert rig.daemon.resumable is not None and len(fw.executed) == executed
            fw.backlog_step = 1  # the motors come free: the same command now works
            await rig.job("start")
            assert rig.state() is JobState.DONE and fw.cube.is_solved()

    run(scenario(), 60)


def test_new_job_discards_a_held_queue(fast_tmp: Path) -> None:
    """A firmware holding the interrupted job's moves (an abort whose stop never arrived): the
    new job discards them (stop, then home) instead of releasing them."""

    async def scenario() -> None:
        fw = _firmware(step=1)
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config()) as rig:
            await _interrupted(rig)
            fw.hold_requested = True
            executed, homes = len(fw.executed), fw.homes
            await rig.job("start")
            assert fw.homes == homes + 1 and not fw.backlog
            assert rig.state() is JobState.DONE and fw.cube.is_solved()
            assert len(fw.executed) > executed  # the new job's moves only

    run(scenario(), 60)


def test_moves_run_before_an_abort_stopped_the_wait_are_journaled(fast_tmp: Path) -> None:
    """An abort that lands before the wait has read a STATUS cancels it and stops the motors;
    the moves of the old queue they ran meanwhile are journaled from the stopped firmware's
    counter (the chaos campaign's seed 24002: three moves run and never journaled)."""
    path = fast_tmp / "j.sqlite"

    async def scenario() -> None:
        fw = _firmware(step=0)
        async with running(path, firmware=fw, config=_config()) as rig:
            await _interrupted(rig)
            executed = len(fw.executed)
            gate = asyncio.Event()
            fw.status_gate = gate  # the wait's first STATUS is not answered yet
            reply = await rig.daemon.submit("resume", {})
            assert reply["ok"], reply
            fw.run_backlog(2)  # the motors run two queued moves on their own meanwhile
            stop = await asyncio.wait_for(rig.daemon.submit("abort", {}), 10)
            assert stop["ok"], stop
            await asyncio.wait_for(rig.daemon.job_done.wait(), 10)
            assert rig.state() is JobState.ABORTED
            assert fw.state is FirmwareState.STOPPED and not fw.backlog
            assert len(fw.executed) == executed + 2
            job_id = rig.sink.of(EventName.ABORTED)[-1]["job_id"]
        journal = Journal(path)
        try:
            record = journal.job(job_id)
        finally:
            journal.close()
        assert record is not None and record.executed == executed + 2

    run(scenario(), 60)
