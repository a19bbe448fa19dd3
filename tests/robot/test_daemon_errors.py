"""Every error code, provoked on in-memory fakes and asserted where it appears (the ``error`` /
``aborted`` event, the status, the journal, or the command's reply). One scenario per
:class:`~robot.daemon.events.ErrorCode`; a test checks that none is missing."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from firmware_protocol.errors import LinkBusyError
from firmware_protocol.messages import FirmwareState
from robot.commands import parse_command
from robot.config import load_config
from robot.daemon.events import ErrorCode, EventName, JobState
from robot.daemon.intake import QUEUE_LIMIT
from robot.journal import JobRecord, Journal
from solver.api import solve
from solver.cube.cubie import cubie_layout
from solver.cube.facelets import Cube
from solver.solution import Solution
from tests.robot.daemon_fakes import FakeFirmware, Fault, Rig, fast_config, running, scrambled
from tests.robot.helpers import CONFIGS, run, six_face_job
from vision.errors import CaptureError

pytestmark = pytest.mark.usefixtures("solver_tables")

Scenario = Callable[[Path], Coroutine[Any, Any, None]]
SCENARIOS: dict[ErrorCode, Scenario] = {}


def scenario(code: ErrorCode) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        SCENARIOS[code] = fn
        return fn

    return register


def test_every_error_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(ErrorCode)


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_error_code(code: ErrorCode, fast_tmp: Path) -> None:
    run(SCENARIOS[code](fast_tmp), 30)


# --- helpers -------------------------------------------------------------------------------------


def _journal_job(path: Path, job_id: str) -> JobRecord:
    journal = Journal(path)
    record = journal.job(job_id)
    journal.close()
    assert record is not None
    return record


def _job_failed(rig: Rig, code: ErrorCode, state: JobState = JobState.ERROR) -> dict[str, Any]:
    """The job ended in ``state`` with ``code``: the event, the status and the daemon agree."""
    assert rig.state() is state
    event = EventName.ABORTED if state is JobState.ABORTED else EventName.ERROR
    payloads = rig.sink.of(event)
    assert [p["code"] for p in payloads] == [code]
    assert rig.sink.statuses[-1]["state"] == state
    assert rig.sink.statuses[-1]["error"]["code"] == code
    assert rig.daemon.last_error is not None and rig.daemon.last_error["code"] == code
    assert rig.sink.of(EventName.DONE) == []
    return payloads[0]


def _journal_finished(path: Path, job_id: str, code: ErrorCode, state: JobState) -> None:
    record = _journal_job(path, job_id)
    assert (record.state, record.error_code) == (state, code)


async def _refused(rig: Rig, verb: str, payload: Any, code: ErrorCode) -> dict[str, Any]:
    reply = await rig.daemon.submit(verb, payload)
    assert reply["ok"] is False and reply["error"]["code"] == code, reply
    assert reply["verb"] == verb
    return reply


def _twisted(cube: Cube) -> Cube:
    """The same cube with the UFR corner twisted in place: a cube that cannot be solved."""
    flat = cube.flat.copy()
    a, b, c = cubie_layout(3).corners[0]
    flat[a], flat[b], flat[c] = flat[c], flat[a], flat[b]
    return Cube(flat, 3)


# --- a job's scan and state ----------------------------------------------------------------------


@scenario(ErrorCode.NO_CALIBRATION)
async def _no_calibration(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite", cameras=False) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.NO_CALIBRATION)
        assert "calibrat" in error["message"] and rig.firmware.executed == []
    _journal_finished(
        fast_tmp / "j.sqlite", error["job_id"], ErrorCode.NO_CALIBRATION, JobState.ERROR
    )


def test_an_unusable_calibration_is_named_when_a_scan_is_refused(fast_tmp: Path) -> None:
    """The daemon starts with a camera whose calibration file is unusable (the rig counts
    it uncalibrated, see test_cameras) and a job's scan names what is wrong with the file."""

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite") as rig:
            rig.cameras.calibration = None
            rig.cameras.missing_calibration = ("upper",)
            rig.cameras.calibration_problems = {"upper": "cal.toml: view is not a table"}
            await rig.job("start")
            error = _job_failed(rig, ErrorCode.NO_CALIBRATION)
            assert "upper: cal.toml: view is not a table" in error["message"]
            assert "vision calibrate" in error["message"] and rig.firmware.executed == []

    run(body(), 30)


@scenario(ErrorCode.SCAN_FAILED)
async def _scan_failed(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        rig.cameras.failure = CaptureError("camera upper: no frame")
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.SCAN_FAILED)
        assert "no frame" in error["message"] and rig.sink.of(EventName.SCAN_COMPLETE) == []
    _journal_finished(fast_tmp / "j.sqlite", error["job_id"], ErrorCode.SCAN_FAILED, JobState.ERROR)


@scenario(ErrorCode.SCAN_INVALID)
async def _scan_invalid(fast_tmp: Path) -> None:
    """A twisted corner, scanned (read twice, looked at again from other views: every face
    turn undone, then refused) or given (refused at once): the cube is never solved from it and
    is left as it was found."""
    twisted = _twisted(scrambled())
    async with running(fast_tmp / "j.sqlite", twisted) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.SCAN_INVALID)
        assert error["stickers"] and "low_confidence" in error and "problems" in error
        turns = len(rig.sink.of(EventName.RESCAN))
        assert 1 <= turns <= rig.daemon.config.scan.rescan_turns
        assert rig.cameras.captures == 2 + turns
        assert len(rig.sink.of(EventName.SCAN_COMPLETE)) == 1
        assert len(rig.firmware.executed) == 2 * turns and rig.firmware.cube == twisted
        await rig.job("solve", {"facelets": twisted.to_facelets("scheme")})
        given = rig.sink.of(EventName.ERROR)[-1]
        assert given["code"] == ErrorCode.SCAN_INVALID and given["stickers"]
        assert len(rig.firmware.executed) == 2 * turns and rig.sink.of(EventName.SOLUTION) == []
    _journal_finished(
        fast_tmp / "j.sqlite", error["job_id"], ErrorCode.SCAN_INVALID, JobState.ERROR
    )


@scenario(ErrorCode.SCAN_REFUSED)
async def _scan_refused(fast_tmp: Path) -> None:
    """Vision reads a possible cube but refuses it as too uncertain (here: an acceptance bar
    no read can clear): read again, then active re-scans (face turns, each undone), then the
    job fails naming the stickers; the cube is left as it was found."""
    import dataclasses

    import vision.scan

    real = vision.scan.read_cube

    def unsure(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        strict = dataclasses.replace(result.classification, accept_confidence=1.01)
        return dataclasses.replace(result, classification=strict)

    vision.scan.read_cube = unsure  # type: ignore[assignment]
    try:
        async with running(fast_tmp / "j.sqlite") as rig:
            await rig.job("start")
            error = _job_failed(rig, ErrorCode.SCAN_REFUSED)
            assert "not sure enough" in error["message"] and "in_doubt" in error
            turns = rig.daemon.config.scan.rescan_turns
            rescans = rig.sink.of(EventName.RESCAN)
            assert len(rescans) == turns and rig.cameras.captures == 2 + turns
            assert all(r["verdict"] == "refused" for r in rescans)
            scanned = rig.sink.of(EventName.SCAN_COMPLETE)[-1]
            assert scanned["verdict"] == "refused" and scanned["valid"] is True
            assert len(rig.firmware.executed) == 2 * turns  # every turn undone
            assert rig.firmware.cube == scrambled() and rig.sink.of(EventName.SOLUTION) == []
    finally:
        vision.scan.read_cube = real  # type: ignore[assignment]


@scenario(ErrorCode.SOLVE_FAILED)
async def _solve_failed(fast_tmp: Path) -> None:
    base = fast_config()
    config = base.model_copy(update={"solver": base.solver.model_copy(update={"max_length": 3})})
    async with running(fast_tmp / "j.sqlite", config=config) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.SOLVE_FAILED)
        assert "max_length" in error["message"] and rig.firmware.executed == []


@scenario(ErrorCode.PLAN_FAILED)
async def _plan_failed(fast_tmp: Path) -> None:
    """The R gripper is fixed at two layers and L holds one: an R turn needs R's outer layer
    or L's two; neither gripper gives it."""
    config = fast_config(R={"depth_layers": 2, "max_depth": 1}, L={"max_depth": 1})
    async with running(fast_tmp / "j.sqlite", scrambled("R"), config=config) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.PLAN_FAILED)
        assert "cannot execute" in error["message"] and rig.firmware.executed == []


@scenario(ErrorCode.PARTS_UNKNOWN)
async def _parts_unknown(fast_tmp: Path) -> None:
    """A turntable robot whose journal's last job that moved was a six-face robot's (face
    turns, not its actions): where the table and cover are is unknown, nothing moves."""
    path = fast_tmp / "j.sqlite"
    six_face_job(path)
    config = load_config(CONFIGS / "turntable.toml")
    cube = scrambled("R")
    async with running(path, cube, config=config, cameras=False) as rig:
        await rig.job("solve", {"facelets": cube.to_facelets()})
        error = _job_failed(rig, ErrorCode.PARTS_UNKNOWN)
        assert 'send solve again with {"start_pose": true}' in error["message"]
        assert rig.firmware.executed == []


# --- a job's execution on the firmware -----------------------------------------------------------


@scenario(ErrorCode.FIRMWARE)
async def _firmware(fast_tmp: Path) -> None:
    """The firmware refuses the moves (job), or the link refuses a command (reply)."""
    async with running(fast_tmp / "j.sqlite") as rig:
        rig.firmware.refuse = LinkBusyError("fake://firmware: busy", "fake://firmware")
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.FIRMWARE)
        assert "busy" in error["message"] and rig.firmware.executed == []
        await rig.daemon.link.close()
        await _refused(rig, "estop", {}, ErrorCode.FIRMWARE)


@scenario(ErrorCode.FIRMWARE_RESET)
async def _firmware_reset(fast_tmp: Path) -> None:
    """Three resets are recovered (home, continue); the fourth ends the job, resumable."""
    fw = FakeFirmware(scrambled(), faults=[Fault("reset", k) for k in (1, 2, 3, 4)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.FIRMWARE_RESET)
        resets = rig.sink.of(EventName.FIRMWARE_RESET)
        assert [r["recovering"] for r in resets] == [True, True, True, False]
        assert fw.homes == 3 and error["resumable"] is True and error["moves_done"] == 4
        assert rig.daemon.resumable is not None
        assert "then resume" in error["message"]
        await rig.job("resume", {})  # following the advice finishes the job
        assert rig.state() is JobState.DONE and fw.cube.is_solved()
    record = _journal_job(fast_tmp / "j.sqlite", error["job_id"])
    assert record.state is JobState.DONE


@scenario(ErrorCode.FIRMWARE_COUNTER)
async def _firmware_counter(fast_tmp: Path) -> None:
    """Resume on a firmware whose executed counter is behind the journal (not the same one):
    the job stays open, only a resume with rescan is accepted, and that one finishes it."""
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        fw.boot_id, fw.last_executed, fw.last_received = 0x2000, 0, 0
        await rig.job("resume", {})
        error = rig.sink.of(EventName.ERROR)[-1]
        assert error["code"] == ErrorCode.FIRMWARE_COUNTER and '"rescan": true' in error["message"]
        assert error["resumable"] is True and len(fw.executed) == 3
        assert rig.sink.statuses[-1]["resumable"]["needs_rescan"] is True
        reply = await _refused(rig, "resume", {}, ErrorCode.FIRMWARE_COUNTER)
        assert '{"rescan": true}' in reply["error"]["message"]
        await rig.job("resume", {"rescan": True})  # following the advice works
        assert rig.state() is JobState.DONE and fw.cube.is_solved()
        assert rig.sink.statuses[-1]["resumable"] is None
    record = _journal_job(fast_tmp / "j.sqlite", error["job_id"])
    assert record.state is JobState.DONE


@scenario(ErrorCode.FIRMWARE_CONTRADICTION)
async def _firmware_contradiction(fast_tmp: Path) -> None:
    """A forged report mid-job: never DONE; the job stays open and needs a rescan, only a resume
    with rescan is accepted, and that one finishes it from the cube as it is."""
    fw = FakeFirmware(scrambled(), faults=[Fault("contradiction", 3)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.FIRMWARE_CONTRADICTION)
        assert error["resumable"] is True and error["moves_done"] == 3
        assert '"rescan": true' in error["message"] and "cannot trust" in error["message"]
        assert rig.sink.statuses[-1]["resumable"]["needs_rescan"] is True
        assert fw.state is FirmwareState.STOPPED  # motors stopped: the reports are not trusted
        assert fw.state is FirmwareState.STOPPED  # motors stopped: the reports are not trusted
        reply = await _refused(rig, "resume", {}, ErrorCode.FIRMWARE_COUNTER)
        assert '{"rescan": true}' in reply["error"]["message"]
        await rig.job("resume", {"rescan": True})  # following the advice works
        assert rig.state() is JobState.DONE and fw.cube.is_solved()
        assert rig.sink.statuses[-1]["resumable"] is None
    record = _journal_job(fast_tmp / "j.sqlite", error["job_id"])
    assert record.state is JobState.DONE


def _executed_rows(path: Path, job_id: str) -> list[int]:
    journal = Journal(path)
    try:
        return [m.idx for m in journal.moves(job_id) if m.executed_at is not None]
    finally:
        journal.close()


def _lost_link_job(path: Path, fw: FakeFirmware) -> str:
    """Run a job on ``fw`` (its link lost after 3 moves) with a first daemon; its id."""

    async def first() -> str:
        async with running(path, firmware=fw) as rig:
            await rig.job("start")
            return str(_job_failed(rig, ErrorCode.LINK_LOST)["job_id"])

    return run(first(), 30)


def test_a_forged_report_ahead_of_the_motors_is_withdrawn_from_the_journal(
    fast_tmp: Path,
) -> None:
    """A forged EXECUTED (valid CRC, within what was sent) claims move 4 done before the
    motors ran it; the executor journals it, then the next STATUS denies it. The journal used
    to keep move 4 as executed, so the resume found the firmware's counter "behind the
    journal" and the journal named a move the motors never made (on a one-camera robot, the
    next scan took the parts' state from it). Now the denied move goes back to not executed:
    the error names it (``retracted``), and the journal's executed moves are exactly the ones
    the firmware ran, before and after the resume with rescan."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), faults=[Fault("forged_ahead", 3)])

    async def body() -> str:
        async with running(path, firmware=fw) as rig:
            await rig.job("start")
            error = _job_failed(rig, ErrorCode.FIRMWARE_CONTRADICTION)
            assert error["moves_done"] == 3 and error["retracted"] == [4]
            assert error["resumable"] is True and len(fw.executed) == 3
            assert rig.sink.statuses[-1]["resumable"]["needs_rescan"] is True
            job_id = str(error["job_id"])
            assert _executed_rows(path, job_id) == [0, 1, 2]
            assert _journal_job(path, job_id).executed == 3
            await rig.job("resume", {"rescan": True})
            assert rig.state() is JobState.DONE and fw.cube.is_solved()
            return job_id

    job_id = run(body(), 30)
    assert len(_executed_rows(path, job_id)) == len(fw.executed)
    record = _journal_job(path, job_id)
    assert record.state is JobState.DONE and record.executed == len(fw.executed)


def test_a_counter_of_the_same_boot_behind_the_journal_withdraws_the_moves_it_denies(
    fast_tmp: Path,
) -> None:
    """The daemon died after journaling a forged EXECUTED, before the STATUS that denied it:
    at the restart the firmware of the same boot says it executed fewer moves than the
    journal. Those are the firmware's own word against a report it denies: they go back to
    not executed (named in the error), the job needs a rescan, and finishes from one."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])

    job_id = _lost_link_job(path, fw)
    # the firmware (same boot) says only two of the three journaled moves executed
    fw.last_executed = fw.started_upto = fw.last_received = 2
    del fw.executed[2:]

    async def second() -> None:
        async with running(path, firmware=fw) as rig:
            error = rig.sink.of(EventName.ERROR)[-1]
            assert error["code"] == ErrorCode.FIRMWARE_COUNTER and "denies" in error["message"]
            assert "move(s) 3 of the job" in error["message"]
            recovered = rig.sink.of(EventName.RECOVERED)[-1]
            assert recovered["moves_done"] == 2 and recovered["resumable"] is True
            assert _executed_rows(path, job_id) == [0, 1]
            await _refused(rig, "resume", {}, ErrorCode.FIRMWARE_COUNTER)
            await rig.job("resume", {"rescan": True})
            assert rig.state() is JobState.DONE

    run(second(), 30)
    record = _journal_job(path, job_id)
    assert record.state is JobState.DONE and record.executed == len(fw.executed)


def test_a_forged_report_met_by_a_reset_is_denied_by_the_counters_kept(fast_tmp: Path) -> None:
    """A forged EXECUTED claims move 4 done, then the board resets (the chaos campaign, seed
    8334). The counters it keeps across the reset say move 4 never completed: the journal
    used to keep it (the link took the counters for lost memory), so the job went on from a
    cube one move off. Now the move is withdrawn (named in ``firmware_reset``), sent again
    after the homing, and the job ends solved with every journaled move one that ran."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), faults=[Fault("forged_reset", 3)])

    async def body() -> str:
        async with running(path, firmware=fw) as rig:
            await rig.job("start")
            assert rig.state() is JobState.DONE and fw.cube.is_solved()
            (reset,) = rig.sink.of(EventName.FIRMWARE_RESET)
            assert reset["retracted"] == [4] and reset["moves_done"] == 3
            assert reset["recovering"] is True and fw.homes == 1
            return str(rig.sink.of(EventName.DONE)[0]["job_id"])

    job_id = run(body(), 30)
    record = _journal_job(path, job_id)
    assert record.state is JobState.DONE and record.executed == len(fw.executed)


def test_one_forged_status_behind_the_reports_withdraws_nothing(fast_tmp: Path) -> None:
    """An emergency stop, and the STATUS read after it is a forgery two moves behind: one
    report alone does not deny the EXECUTED reports the journal has (the second STATUS is
    the real one), so nothing is withdrawn and the journal keeps every move that ran."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), faults=[Fault("estop_forged_status", 3)])

    async def body() -> str:
        async with running(path, firmware=fw) as rig:
            await rig.job("start")
            aborted = rig.sink.of(EventName.ABORTED)[-1]
            assert aborted["code"] == ErrorCode.ESTOP and "retracted" not in aborted
            assert aborted["moves_done"] == 3 and "denies" not in aborted["message"]
            assert fw.forged_status is None  # it was read
            return str(aborted["job_id"])

    job_id = run(body(), 30)
    assert _executed_rows(path, job_id) == [0, 1, 2] and len(fw.executed) == 3


def test_one_forged_status_at_the_restart_withdraws_nothing(fast_tmp: Path) -> None:
    """At the restart the first STATUS of the reconciliation is a forgery behind the
    journal; the real one agrees with it: the job is resumed as usual, nothing withdrawn."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])

    job_id = _lost_link_job(path, fw)
    real = fw.status()
    fw.forged_status = replace(real, last_executed=1, started_upto=1)

    async def second() -> None:
        async with running(path, firmware=fw) as rig:
            assert fw.forged_status is None  # it was read
            assert rig.sink.of(EventName.ERROR) == []
            assert rig.sink.of(EventName.RECOVERED)[-1]["moves_done"] == 3
            assert _executed_rows(path, job_id) == [0, 1, 2]
            await rig.job("resume", {})
            assert rig.state() is JobState.DONE and fw.cube.is_solved()

    run(second(), 30)


@scenario(ErrorCode.LINK_LOST)
async def _link_lost(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.LINK_LOST)
        assert error["resumable"] is True and error["moves_done"] == 3
        assert rig.sink.statuses[-1]["resumable"]["moves_done"] == 3
    record = _journal_job(fast_tmp / "j.sqlite", error["job_id"])
    assert record.state is JobState.EXECUTING and record.error_code is None


@scenario(ErrorCode.FIRMWARE_BUSY)
async def _firmware_busy(fast_tmp: Path) -> None:
    """``resume`` while the firmware still runs the job's queued moves, which never finish
    within ``[serial] resume_drain_s``: nothing is sent, the job stays resumable."""
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)], autonomous=True, backlog_step=0)
    config = fast_config()
    config = config.model_copy(
        update={"serial": config.serial.model_copy(update={"resume_drain_s": 0.2})}
    )
    async with running(fast_tmp / "j.sqlite", firmware=fw, config=config) as rig:
        await rig.job("start")
        await rig.job("resume", {})
        assert rig.state() is JobState.ERROR
        error = rig.sink.of(EventName.ERROR)[-1]
        assert error["code"] == ErrorCode.FIRMWARE_BUSY and error["resumable"] is True
        assert "resume_drain_s" in error["message"] and error["moves_done"] == 3
        assert rig.sink.statuses[-1]["error"]["code"] == ErrorCode.FIRMWARE_BUSY
        assert len(fw.executed) == 3 and fw.backlog
    record = _journal_job(fast_tmp / "j.sqlite", error["job_id"])
    assert record.state is JobState.EXECUTING and record.error_code is None


@scenario(ErrorCode.MOTOR_FAULT)
async def _motor_fault(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), faults=[Fault("motor_fault", 2)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.MOTOR_FAULT)
        assert "stall" in error["message"] and "resumable" not in error
    _journal_finished(fast_tmp / "j.sqlite", error["job_id"], ErrorCode.MOTOR_FAULT, JobState.ERROR)


@scenario(ErrorCode.EXECUTION_FAILED)
async def _execution_failed(fast_tmp: Path) -> None:
    """The firmware stops mid-sequence for another cause (its watchdog)."""
    fw = FakeFirmware(scrambled(), faults=[Fault("stopped", 2)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.EXECUTION_FAILED)
        assert "WATCHDOG" in error["message"] and error["moves_done"] == 2


@scenario(ErrorCode.EXECUTION_ORDER)
async def _execution_order(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), faults=[Fault("out_of_order", 2)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.EXECUTION_ORDER)
        assert "reported move 4 after 2" in error["message"] and error["moves_done"] == 2


@scenario(ErrorCode.NOT_SOLVED)
async def _not_solved(fast_tmp: Path) -> None:
    """A solution one move short: every move executes, the tracked cube is not solved."""

    def short(cube: Cube, engine: str, **options: Any) -> Solution:
        solution = solve(cube, engine, **options)
        return Solution(solution.moves[:-1], solution.engine, solution.n)

    async with running(fast_tmp / "j.sqlite", solver=short) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.NOT_SOLVED)
        assert error["moves_done"] == len(rig.firmware.executed) > 0
        assert not rig.firmware.cube.is_solved()


# --- a job stopped -------------------------------------------------------------------------------


@scenario(ErrorCode.ABORTED)
async def _aborted(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=3)
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        reply = await rig.daemon.submit("start")
        await fw.paused.wait()
        stop = await rig.daemon.submit("abort", {"id": "stop"})
        assert stop["ok"] is True and stop["state"] == JobState.ABORTED
        stopped = _job_failed(rig, ErrorCode.ABORTED, JobState.ABORTED)
        assert stopped["moves_done"] == 3 and fw.homes == 1
    _journal_finished(fast_tmp / "j.sqlite", reply["job_id"], ErrorCode.ABORTED, JobState.ABORTED)


@scenario(ErrorCode.ESTOP)
async def _estop(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=2)
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        reply = await rig.daemon.submit("start")
        await fw.paused.wait()
        stop = await rig.daemon.submit("estop")
        assert stop["ok"] is True and stop["firmware_state"] == "STOPPED"
        await rig.daemon.job_done.wait()
        stopped = _job_failed(rig, ErrorCode.ESTOP, JobState.ABORTED)
        assert stopped["moves_done"] == 2 and fw.homes == 0
    _journal_finished(fast_tmp / "j.sqlite", reply["job_id"], ErrorCode.ESTOP, JobState.ABORTED)


@scenario(ErrorCode.INTERRUPTED)
async def _interrupted(fast_tmp: Path) -> None:
    """The daemon died before any move was sent: closed at the restart, nothing to resume."""
    journal = Journal(fast_tmp / "j.sqlite")
    job_id = journal.create_job("start", 3, "before")
    journal.close()
    async with running(fast_tmp / "j.sqlite") as rig:
        recovered = rig.sink.of(EventName.RECOVERED)
        assert recovered == [
            {"job_id": job_id, "state": JobState.IDLE, "moves_done": 0, "resumable": False}
        ]
        assert rig.daemon.resumable is None
        await _refused(rig, "resume", {}, ErrorCode.NOT_RESUMABLE)
    _journal_finished(fast_tmp / "j.sqlite", job_id, ErrorCode.INTERRUPTED, JobState.ABORTED)


@scenario(ErrorCode.SUPERSEDED)
async def _superseded(fast_tmp: Path) -> None:
    """A new job instead of resume closes the interrupted one; the cube is solved from where
    it physically is."""
    fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        await rig.job("start")
        old = rig.sink.of(EventName.ERROR)[0]["job_id"]
        await rig.job("start")
        assert rig.state() is JobState.DONE and fw.cube.is_solved()
    _journal_finished(fast_tmp / "j.sqlite", old, ErrorCode.SUPERSEDED, JobState.ABORTED)


# --- the daemon ----------------------------------------------------------------------------------


@scenario(ErrorCode.FIRMWARE_UNAVAILABLE)
async def _firmware_unavailable(fast_tmp: Path) -> None:
    """No firmware yet: an error event per attempt, and jobs are refused until it connects."""
    fw = FakeFirmware(scrambled(), connect_failures=1_000_000)
    async with running(fast_tmp / "j.sqlite", firmware=fw, wait_ready=False) as rig:
        await rig.sink.wait(lambda: len(rig.sink.of(EventName.ERROR)) >= 2)
        event = rig.sink.of(EventName.ERROR)[0]
        assert event["code"] == ErrorCode.FIRMWARE_UNAVAILABLE and "job_id" not in event
        await _refused(rig, "start", {}, ErrorCode.FIRMWARE_UNAVAILABLE)
        fw.connect_failures = 0
        await rig.daemon.firmware_ready.wait()
        await rig.job("start")
        assert rig.state() is JobState.DONE


@scenario(ErrorCode.INTERNAL)
async def _internal(fast_tmp: Path) -> None:
    """A bug (an unexpected exception) ends the job or the command, never the daemon."""

    def buggy(cube: Cube, engine: str, **options: Any) -> Solution:
        raise RuntimeError("a bug")

    async with running(fast_tmp / "j.sqlite", solver=buggy) as rig:
        await rig.job("start")
        error = _job_failed(rig, ErrorCode.INTERNAL)
        assert "a bug" in error["message"]
        rig.firmware.broken = RuntimeError("another bug")
        reply = await _refused(rig, "estop", {}, ErrorCode.INTERNAL)
        assert "another bug" in reply["error"]["message"]
        status = await rig.daemon.submit("status")
        assert status["ok"] is True
    _journal_finished(fast_tmp / "j.sqlite", error["job_id"], ErrorCode.INTERNAL, JobState.ERROR)


# --- a command -----------------------------------------------------------------------------------


@scenario(ErrorCode.UNKNOWN_COMMAND)
async def _unknown_command(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        reply = await _refused(rig, "fly", b'{"id": "f1"}', ErrorCode.UNKNOWN_COMMAND)
        assert reply["id"] == "f1" and "start" in reply["error"]["message"]


@scenario(ErrorCode.MALFORMED)
async def _malformed(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        reply = await _refused(rig, "start", b"this is not json", ErrorCode.MALFORMED)
        assert "not JSON" in reply["error"]["message"]
        reply = await _refused(rig, "start", {"id": "x", "colour": "red"}, ErrorCode.MALFORMED)
        assert "colour" in reply["error"]["message"]
        reply = await _refused(rig, "solve", {"facelets": "U" * 25}, ErrorCode.MALFORMED)
        assert reply["error"]["message"].startswith("solve: facelets")
        two = Cube.solved(2).to_facelets("scheme")
        reply = await _refused(rig, "solve", {"facelets": two}, ErrorCode.MALFORMED)
        assert "N=3 cube, not N=2" in reply["error"]["message"]
        assert rig.daemon.job is None


@scenario(ErrorCode.BUSY)
async def _busy(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=1)
    async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
        first = await rig.daemon.submit("start")
        await fw.paused.wait()
        reply = await _refused(rig, "scan", {}, ErrorCode.BUSY)
        assert first["job_id"] in reply["error"]["message"]
        await _refused(rig, "home", {}, ErrorCode.BUSY)
        # a full command queue is busy too: the command is dropped, not queued
        intake = rig.daemon.intake
        intake._buckets.clear()
        for _ in range(QUEUE_LIMIT):
            intake._queue.put_nowait((parse_command("status", b"{}"), None, 0))
        full = await intake.accept("status", b"{}", lambda r: None)
        assert full is not None and full["error"]["code"] == ErrorCode.BUSY
        assert "already waiting" in full["error"]["message"]
        fw.proceed()
        await rig.daemon.job_done.wait()
        assert rig.state() is JobState.DONE


@scenario(ErrorCode.RATE_LIMITED)
async def _rate_limited(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        intake = rig.daemon.intake
        replies = [await intake.accept("status", b"{}", lambda r: None) for _ in range(60)]
        limited = [r for r in replies if r is not None]
        assert limited and all(r["error"]["code"] == ErrorCode.RATE_LIMITED for r in limited)
        assert "per second" in limited[0]["error"]["message"]
        assert intake.refused[ErrorCode.RATE_LIMITED] == len(limited)


@scenario(ErrorCode.JOURNAL_CORRUPT)
async def _journal_corrupt(fast_tmp: Path) -> None:
    """A journal of garbage: the daemon starts anyway, moves it aside, says so until a scan."""
    path = fast_tmp / "j.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    async with running(path) as rig:
        error = rig.sink.of(EventName.ERROR)[0]
        assert error["code"] == ErrorCode.JOURNAL_CORRUPT and "quarantined" in error["message"]
        journal_status = rig.sink.statuses[-1]["journal"]
        assert journal_status is not None and Path(journal_status["quarantined"]).exists()
        await rig.job("start")  # a job that scans the cube clears it
        assert rig.state() is JobState.DONE and rig.sink.statuses[-1]["journal"] is None


@scenario(ErrorCode.NOT_RUNNING)
async def _not_running(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        await _refused(rig, "abort", {}, ErrorCode.NOT_RUNNING)
    # a daemon that is not running refuses everything
    reply = await rig.daemon.submit("status", {})
    assert reply["error"]["code"] == ErrorCode.NOT_RUNNING


@scenario(ErrorCode.NOT_RESUMABLE)
async def _not_resumable(fast_tmp: Path) -> None:
    async with running(fast_tmp / "j.sqlite") as rig:
        reply = await _refused(rig, "resume", {"rescan": True}, ErrorCode.NOT_RESUMABLE)
        assert "no interrupted job" in reply["error"]["message"]


def test_error_replies_are_the_wire_strings() -> None:
    """The codes serialise as the documented strings (MQTT payloads and the journal)."""
    import json

    from robot.commands import error_reply

    body = json.loads(json.dumps(error_reply("start", "1", ErrorCode.BUSY, "wait")))
    assert body["error"] == {"code": "busy", "message": "wait"}
