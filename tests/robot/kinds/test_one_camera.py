"""The daemon's one-camera scan (:mod:`robot.daemon.onecamera`) on in-memory fakes: a turntable
whose firmware carries the cube in the simulated mechanism and whose one camera renders the
cube's top face as it sits; the profile's rules for the one camera; the read moved to the frame
of the cube as it sits after the scan."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from firmware_protocol.moves import Face as WireFace
from firmware_protocol.moves import Move as WireMove
from robot.config import RobotConfig, load_config
from robot.daemon import EventName
from robot.daemon.events import ErrorCode, JobState
from robot.daemon.onecamera import held_read
from robot.errors import ConfigError
from robot.journal import JobRecord, Journal
from robot.kinds.choreography import choreograph
from robot.kinds.frames import frames
from robot.kinds.kindscan import SimulatedScanRig, simulate_scan
from robot.kinds.profile import build_mechanism
from robot.kinds.simulated import MechanismCube
from robot.kinds.wire import WireAction
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import MoveKind
from tests.robot.daemon_fakes import FakeFirmware, Fault, running
from tests.robot.helpers import CONFIGS, run, six_face_job

pytestmark = pytest.mark.usefixtures("solver_tables")


def _turntable(cooptimise: bool = False) -> RobotConfig:
    """configs/turntable.toml with a small frame and the first solution found, then planned
    (``cooptimise``: the first solution the turntable's planner scores fastest)."""
    base = load_config(CONFIGS / "turntable.toml")
    cameras = tuple(c.model_copy(update={"width": 320, "height": 240}) for c in base.cameras)
    solver = base.solver.model_copy(update={"budget_s": 0.0})
    table = base.robot.turntable
    assert table is not None
    robot = base.robot.model_copy(
        update={"turntable": table.model_copy(update={"cooptimise": cooptimise})}
    )
    return base.model_copy(update={"cameras": cameras, "solver": solver, "robot": robot})


@dataclass
class MechanismFirmware(FakeFirmware):
    """The fake firmware, its motors moving the parts of a simulated turntable."""

    mechanism: MechanismCube | None = field(default=None)

    def apply(self, move: WireMove, index: int) -> None:
        assert self.mechanism is not None
        self.mechanism.apply(WireFace(move.motor).name, move.quarter_turns)
        self.cube = self.mechanism.cube
        self.executed.append(move)
        self.last_executed = self.started_upto = index


def _firmware(config: RobotConfig, cube: Cube, angle: int = 0) -> MechanismFirmware:
    table = config.robot.mechanism_table
    assert table is not None
    mechanism = MechanismCube(cube, table, facelets_by="scheme")
    mechanism.table_angle = angle
    return MechanismFirmware(cube, mechanism=mechanism)


def _rows(path: Path, job_id: str) -> list[WireAction]:
    journal = Journal(path)
    try:
        return [WireAction.from_token(m.face, m.motor, m.turns) for m in journal.moves(job_id)]
    finally:
        journal.close()


def _records(path: Path, *job_ids: str) -> list[JobRecord]:
    journal = Journal(path)
    try:
        records = [journal.job(job_id) for job_id in job_ids]
    finally:
        journal.close()
    assert all(record is not None for record in records)
    return [record for record in records if record is not None]


def _turned_table_job(path: Path) -> tuple[Journal, str]:
    """A journal whose job executed one action: a spin that left the table a quarter turn
    round (parts (0, 1))."""
    journal = Journal(path)
    old = journal.create_job("start", 3)
    turned = WireAction("spin(+1)", 3, 1, (), 0.35, 0, (0, 1))
    journal.record_plan(old, "", {}, "", [(turned.token(), 1, 3, False)])
    journal.record_executed(old, 0, None)
    return journal, old


def _lose_move_rows(path: Path) -> None:
    """Damage the journal at ``path``: every job's move rows are gone."""
    db = sqlite3.connect(path)
    db.execute("DELETE FROM moves")
    db.commit()
    db.close()


def _ended_turned_table_job(path: Path, state: JobState) -> str:
    """:func:`_turned_table_job`, ended in ``state``, the journal closed; the job's id."""
    journal, old = _turned_table_job(path)
    journal.finish(old, state)
    journal.close()
    return old


def _one_job(path: Path, config: RobotConfig, firmware: MechanismFirmware) -> dict[str, object]:
    """Start the daemon on the journal, run one job to its end; its ``done`` event."""

    async def scenario() -> dict[str, object]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.job()
            return rig.sink.of(EventName.DONE)[0]

    return asyncio.run(asyncio.wait_for(scenario(), 90))


def test_profile_one_camera_rules(tmp_path: Path) -> None:
    config = load_config(CONFIGS / "turntable.toml")
    assert config.scan_camera is not None and config.scan_camera.faces == ("U",)
    text = (CONFIGS / "turntable.toml").read_text()
    below = tmp_path / "below.toml"
    below.write_text(text.replace('faces = ["U"]', 'faces = ["D"]'))
    with pytest.raises(ConfigError, match="cradle holds that face") as caught:
        load_config(below)
    assert (caught.value.section, caught.value.key) == ("cameras", "faces")
    gripper = (CONFIGS / "two_gripper.toml").read_text()
    start = gripper.index("[[cameras]]")
    end = gripper.index("[colours]")
    held = tmp_path / "held.toml"
    held.write_text(
        gripper[:start]
        + '[[cameras]]\nname = "front"\nview = "face"\nfaces = ["D"]\n\n'
        + gripper[end:]
    )
    with pytest.raises(ConfigError, match="a gripper holds that face"):
        load_config(held)
    faces = (CONFIGS / "simulated.toml").read_text()
    start, end = faces.index("[[cameras]]"), faces.index("[colours]")
    six = tmp_path / "six.toml"
    six.write_text(
        faces[:start] + '[[cameras]]\nname = "top"\nview = "face"\nfaces = ["U"]\n\n' + faces[end:]
    )
    with pytest.raises(ConfigError, match="needs a robot that turns the cube over"):
        load_config(six)


def test_held_read_is_the_cube_as_it_sits_after_the_scan() -> None:
    config = _turntable()
    table = config.robot.mechanism_table
    mechanism = build_mechanism(config.robot.kind, table, 3)
    cube = Cube.solved(3).apply("R U2 F' L D B2")
    rig = SimulatedScanRig(mechanism, cube, Face.U, seed=4)
    scan = run(simulate_scan(rig, second_looks=0))
    orientation = scan.state.orientation
    assert orientation != 0  # the choreography leaves the cube turned over
    held = held_read(scan.read, orientation)
    assert held.cube == scan.cube_as_held() == rig.cube
    assert held.verdict == scan.read.verdict and held.valid
    # each sticker's confidence and colour costs moved with it
    q = frames(3).perms[orientation]
    assert np.array_equal(held.confidence.reshape(-1), scan.read.confidence.reshape(-1)[q])
    assert held.colour_costs is not None and scan.read.colour_costs is not None
    assert np.array_equal(
        held.colour_costs.reshape(54, 6), scan.read.colour_costs.reshape(54, 6)[q]
    )


@pytest.mark.parametrize("cooptimise", [False, True], ids=["planned", "co-optimised"])
def test_turntable_job_scans_with_one_camera_through_the_motors(
    tmp_path: Path, cooptimise: bool
) -> None:
    config = _turntable(cooptimise)
    cube = Cube.solved(3).apply("F R' U2 B L2 D' R F2")
    firmware = _firmware(config, cube)
    journal = tmp_path / "journal.sqlite"

    async def scenario() -> tuple[list[str], dict[str, object], int]:
        async with running(journal, config=config, firmware=firmware) as rig:
            await rig.job()
            return rig.sink.names(), rig.sink.of(EventName.DONE)[0], rig.cameras.captures

    names, done, captures = run(scenario(), 90)
    assert done["solved"] is True and done["verified"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    assert firmware.mechanism.cube.is_solved()
    scan_moves = names.index(EventName.SCAN_COMPLETE)
    assert scan_moves > 0 and set(names[:scan_moves]) == {EventName.MOVE_EXECUTED}
    # a frame per face for the scan, and again for the check after execution (a second
    # look only at a face in doubt)
    assert 12 <= captures <= 16
    rows = _rows(journal, str(done["job_id"]))
    assert len(rows) == done["moves"]
    scan = rows[:scan_moves]
    # the scan's actions turn the whole cube only, and the rows say the parts after each
    assert all(m.kind is MoveKind.ROTATION for a in scan for m in a.effect)
    assert any(a.effect for a in scan)
    replay = MechanismCube(cube, firmware.mechanism.table)
    for number, action in enumerate(rows, 1):
        replay.apply(WireFace(action.motor).name, action.turns)
        assert replay.parts == action.parts, number
    assert replay.cube.is_solved()


def test_scan_of_an_impossible_cube_is_refused_naming_stickers(tmp_path: Path) -> None:
    config = _turntable()
    stickers = Cube.solved(3).stickers.copy()
    # flip the U-F edge: U[0,1] (the row next to F) and F[2,1] (the row next to U)
    stickers[Face.U, 0, 1], stickers[Face.F, 2, 1] = stickers[Face.F, 2, 1], stickers[Face.U, 0, 1]
    cube = Cube(stickers, 3).apply("R U")
    firmware = _firmware(config, cube)

    async def scenario() -> dict[str, object]:
        async with running(tmp_path / "journal.sqlite", config=config, firmware=firmware) as rig:
            await rig.job()
            return rig.sink.of(EventName.ERROR)[0]

    error = run(scenario(), 60)
    assert error["code"] == "scan_invalid"
    assert error["stickers"] and "stickers at fault" in str(error["message"])
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def test_a_new_job_scans_from_where_an_interrupted_scan_left_the_parts(tmp_path: Path) -> None:
    """The previous job's last journaled action left the table a quarter turn round (a crash
    mid-scan): that job is resumable, but a new job supersedes it and its scan starts from
    there, so no action asks the servo beyond its reach."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    journal, _ = _turned_table_job(journal_path)
    journal.close()
    firmware = _firmware(config, cube, angle=1)

    async def scenario() -> tuple[list[dict[str, object]], dict[str, object]]:
        async with running(journal_path, config=config, firmware=firmware) as rig:
            recovered = rig.sink.of(EventName.RECOVERED)
            await rig.job()
            return recovered, rig.sink.of(EventName.DONE)[0]

    recovered, done = asyncio.run(asyncio.wait_for(scenario(), 90))
    # a job interrupted mid-scan is resumable (it used to be closed as interrupted)
    assert recovered and recovered[0]["resumable"] is True
    assert recovered[0]["physical"] is None and recovered[0]["moves_done"] == 1
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    rows = _rows(journal_path, str(done["job_id"]))
    assert rows[-1].parts == (0, 0)


def test_jobs_refused_before_their_first_move_leave_the_parts_where_they_were(
    tmp_path: Path,
) -> None:
    """The last job that moved left the table a quarter turn round; two jobs since were refused
    before any move (a start while the motors were stopped, a refused scan). The next scan
    starts from that job's parts: it used to look at the last two jobs only, took the start
    pose, and spun the servo past its reach (the chaos campaign, turntable seed 9508)."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    journal, old = _turned_table_job(journal_path)
    journal.finish(old, JobState.ABORTED)
    for _ in range(2):
        journal.finish(journal.create_job("start", 3), JobState.ERROR)
    assert journal.last_moved_job() == journal.jobs(3)[-1]
    journal.close()
    firmware = _firmware(config, cube, angle=1)

    done = _one_job(journal_path, config, firmware)
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def test_a_scan_action_still_running_at_the_restart_is_journaled_before_the_next_scan(
    tmp_path: Path,
) -> None:
    """The daemon died with its scan's first action sent but not executed: the motors were
    still turning the table (found by the chaos campaign, ``bench/chaos.py --profile
    configs/turntable.toml``). The restart used to close the job (no move executed); the
    action then completed unjournaled and the next scan started from parts the table had
    left. The job now stays resumable; a new job waits for the firmware, journals the action
    (``recovered: true``) and scans from where it left the table."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    firmware = _firmware(config, cube)
    journal_path = tmp_path / "journal.sqlite"
    journal = Journal(journal_path)
    old = journal.create_job("start", 3)
    journal.set_state(old, JobState.SCANNING)
    turned = WireAction("spin(+1)", 3, 1, (), 0.35, 0, (0, 1))
    journal.record_plan(old, "", {}, "", [(turned.token(), 1, 3, False)])
    journal.record_dispatch(old, firmware.boot_id, 1, 0)
    journal.close()
    firmware.last_received = 1
    firmware.backlog = [(1, turned.wire)]  # on the motors: no progress until the restart
    firmware.backlog_step = 0

    async def scenario() -> tuple[list[dict[str, object]], list[dict[str, object]], object]:
        async with running(journal_path, config=config, firmware=firmware) as rig:
            recovered = rig.sink.of(EventName.RECOVERED)
            firmware.backlog_step = 1  # the turn ends
            await rig.job()
            ran = [e for e in rig.sink.of(EventName.MOVE_EXECUTED) if e.get("recovered")]
            return recovered, ran, rig.sink.of(EventName.DONE)[0]

    recovered, ran, done = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert recovered and recovered[0]["job_id"] == old and recovered[0]["resumable"] is True
    assert [(e["job_id"], e["index"]) for e in ran] == [(old, 1)]
    assert isinstance(done, dict) and done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    journal = Journal(journal_path)
    try:
        record = journal.job(old)
        new_rows = journal.moves(str(done["job_id"]))
    finally:
        journal.close()
    assert record is not None and record.executed == 1 and record.state is JobState.ABORTED
    # every wire move the firmware ran is a journaled row of one job or the other
    assert 1 + len(new_rows) == len(firmware.executed)


def test_an_abort_while_a_scan_action_runs_stops_the_motors_and_journals_it(
    tmp_path: Path,
) -> None:
    """An abort while the one-camera scan's second action is on the motors (found by the
    chaos campaign on the turntable and two-gripper robots): it used to cancel the job as if
    no motor ran, so the action ran on unjournaled and the next jobs were refused ("an
    execution ... is still running") or read a cube from the wrong parts. Now it stops the
    motors as it stops an execution (hold, then a latched stop), the job ends ``aborted``
    with every executed action journaled, and the next job starts from the parts they left."""
    config = _turntable()
    cube = Cube.solved(3).apply("F2 U' R B L2 D")
    firmware = _firmware(config, cube)
    firmware.pause_after = 1  # the second action waits on the motors
    firmware.autonomous = True  # and runs on if the host walks away from it
    path = tmp_path / "journal.sqlite"

    async def scenario() -> tuple[dict[str, object], dict[str, object], str, str]:
        async with running(path, config=config, firmware=firmware) as rig:
            first = await rig.daemon.submit("start", {"id": "first"})
            await asyncio.wait_for(firmware.paused.wait(), 30)
            stop = await asyncio.wait_for(rig.daemon.submit("abort", {}), 10)
            aborted = rig.sink.of(EventName.ABORTED)[-1]
            await rig.job()
            return (
                stop,
                aborted,
                str(first["job_id"]),
                str(rig.sink.of(EventName.DONE)[0]["job_id"]),
            )

    stop, aborted, first_id, second_id = run(scenario(), 90)
    assert stop["ok"] is True and aborted["code"] == "aborted"
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    assert firmware.mechanism.cube.is_solved()
    first, done = _records(path, first_id, second_id)
    assert first.state is JobState.ABORTED and done.state is JobState.DONE
    # every wire move the firmware ran is journaled as executed, by one job or the other
    assert first.executed + len(_rows(path, second_id)) == len(firmware.executed)


@pytest.mark.parametrize("after", [1, 2, 3])
def test_a_forged_report_of_a_scan_action_does_not_move_the_parts_in_the_journal(
    tmp_path: Path, after: int
) -> None:
    """A forged EXECUTED claims the scan's next action done before the motors ran it (found
    by the chaos campaign on the turntable, seeds 8006, 8028 and 8034: each scan action is an
    execution of its own, so the forgery completes it in the host's eyes). The next STATUS
    denies it and the motors stop. The row used to stay executed, so the fresh scan took the
    parts' state from an action the table never made (in 8006 a spin the table cannot
    reach). Now the row is withdrawn; the fresh scan starts from the parts the motors left,
    and every journaled action is one the firmware ran."""
    config = _turntable()
    cube = Cube.solved(3).apply("R U2 F' L D B2")
    firmware = _firmware(config, cube)
    firmware.faults = [Fault("forged_ahead", after)]
    path = tmp_path / "journal.sqlite"

    async def scenario() -> tuple[dict[str, object], str]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.job()
            error = rig.sink.of(EventName.ERROR)[-1]
            await rig.job("resume", {"rescan": True})
            return error, str(rig.sink.of(EventName.DONE)[0]["job_id"])

    error, job_id = run(scenario(), 90)
    assert error["code"] == "firmware_contradiction" and error["retracted"] == [after + 1]
    assert error["moves_done"] == after
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    assert firmware.mechanism.cube.is_solved()
    journal = Journal(path)
    try:
        record = journal.job(job_id)
        executed = [m for m in journal.moves(job_id) if m.executed_at is not None]
    finally:
        journal.close()
    assert record is not None and record.state is JobState.DONE
    assert len(executed) == record.executed == len(firmware.executed)


@pytest.mark.parametrize("after", [2, 9])
def test_a_forged_report_met_by_an_estop_is_denied_by_the_counter(
    tmp_path: Path, after: int
) -> None:
    """A forged EXECUTED ahead of the motors, then an emergency stop before any STATUS could
    deny it (the chaos campaign on the turntable, seed 8006): the job ended ``estop`` with
    the forged action journaled, and the next job's scan took the parts' state from it (a
    spin the table cannot reach). The firmware's counter, read after the stop, now denies
    the report: the row goes back to not executed, and the next job starts from the parts
    the motors left (during the scan, ``after`` 2; during the solution, 9)."""
    config = _turntable()
    cube = Cube.solved(3).apply("B2 L U' R2 F D'")
    firmware = _firmware(config, cube)
    firmware.faults = [Fault("forged_estop", after)]
    path = tmp_path / "journal.sqlite"

    async def scenario() -> tuple[dict[str, object], str, str]:
        async with running(path, config=config, firmware=firmware) as rig:
            first = await rig.job()
            aborted = rig.sink.of(EventName.ABORTED)[-1]
            await rig.daemon.submit("home", {})
            await rig.job()
            done = rig.sink.of(EventName.DONE)[-1]
            return aborted, str(first["job_id"]), str(done["job_id"])

    aborted, first_id, second_id = run(scenario(), 90)
    assert aborted["code"] == "estop" and aborted["retracted"] == [after + 1]
    assert aborted["moves_done"] == after and "denies" in str(aborted["message"])
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    assert firmware.mechanism.cube.is_solved()
    first, second = _records(path, first_id, second_id)
    assert first.executed == after and second.state is JobState.DONE
    assert first.executed + second.executed == len(firmware.executed)


def _refused_then_start_pose(
    path: Path,
    config: RobotConfig,
    firmware: MechanismFirmware,
    verb: str,
    payload: dict[str, object],
) -> tuple[dict[str, object], dict[str, object]]:
    """Send ``verb`` twice: as given, then with ``start_pose``; the first job's ``error``
    event (no move sent) and the second's ``done`` event."""

    async def scenario() -> tuple[dict[str, object], dict[str, object]]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.job(verb, payload)
            assert not firmware.executed  # refused before any motion
            error = rig.sink.of(EventName.ERROR)[-1]
            await rig.job(verb, {**payload, "start_pose": True})
            return error, rig.sink.of(EventName.DONE)[-1]

    return asyncio.run(asyncio.wait_for(scenario(), 90))


def test_a_previous_job_without_its_move_rows_is_refused_until_the_start_pose_is_set(
    tmp_path: Path,
) -> None:
    """A finished job whose move rows are gone (a damaged journal) says it executed a move:
    where it left the parts is unknown. The new job is refused (it used to scan from the start
    pose, a guess) naming the job and what to do; sent again with ``start_pose`` it solves."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    old = _ended_turned_table_job(journal_path, JobState.ERROR)
    _lose_move_rows(journal_path)
    firmware = _firmware(config, cube)

    error, done = _refused_then_start_pose(journal_path, config, firmware, "start", {})
    assert error["code"] == "parts_unknown"
    message = str(error["message"])
    assert f"{old}, journaled 0 moves but 1 executed" in message
    assert "cover open" in message and 'send start again with {"start_pose": true}' in message
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def _open_spins_job(path: Path, boot: int, spins: int, executed: int) -> str:
    """A journal with a turntable job open mid-execution: ``spins`` spins of the table (out a
    quarter turn and back in turn) sent to the firmware of boot ``boot``, the first
    ``executed`` of them reported executed; the job's id."""
    journal = Journal(path)
    old = journal.create_job("start", 3)
    out = WireAction("spin(+1)", 3, 1, (), 0.35, 0, (0, 1))
    back = WireAction("spin(-1)", 3, -1, (), 0.35, 0, (0, 0))
    journal.record_plan(
        old,
        "",
        {},
        "",
        [(a.token(), a.turns, 3, False) for a in [(out, back)[i % 2] for i in range(spins)]],
        state=JobState.EXECUTING,
        dispatch=(boot, 1, 0),
    )
    for i in range(executed):
        journal.record_executed(old, i, None, fw_index=i + 1)
    journal.close()
    return old


@pytest.mark.parametrize("verb", ["resume", "start"])
def test_actions_of_unknown_fate_leave_the_parts_unknown_until_the_start_pose_is_set(
    tmp_path: Path, verb: str
) -> None:
    """Actions sent and not known to have run (the firmware lost its counters while the port
    was gone: the chaos campaign on the turntable, seed 14713) leave the parts anywhere they
    took them. A resume with rescan used to plan its one-camera scan from the journal's last
    executed row, and so did a new job superseding the open one: the flipper pushed against
    the closed cover and the table was sent past its reach. Both are refused now, naming the
    job (nothing moves), and so is every job after them until one says ``start_pose``."""
    config = _turntable()
    cube = Cube.solved(3).apply("F2 U R' D B")
    path = tmp_path / "journal.sqlite"
    # two spins sent to a firmware of another boot, the first reported executed: the firmware
    # the daemon meets (the fake's boot, its counters at zero: a new board, or one whose
    # memory was wiped) cannot say whether either ran
    old = _open_spins_job(path, 0x0999, spins=2, executed=1)
    firmware = _firmware(config, cube)
    payload: dict[str, object] = {"rescan": True} if verb == "resume" else {}

    async def scenario() -> tuple[list[dict[str, object]], dict[str, object]]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.job(verb, payload)
            await rig.job("start", {})
            assert not firmware.executed  # refused before any motion, twice
            errors = rig.sink.of(EventName.ERROR)
            await rig.job("start", {"start_pose": True})
            return errors, rig.sink.of(EventName.DONE)[-1]

    errors, done = run(scenario(), 90)
    refused = [e for e in errors if e["code"] == "parts_unknown"]
    assert len(refused) == 2
    for error in refused:
        message = str(error["message"])
        assert old in message and "sent actions" in message
        assert 'send start again with {"start_pose": true}' in message
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0
    (record,) = _records(path, old)
    assert record.finished and record.error_code == "parts_unknown"
    assert f"job {old} sent actions after its 1 executed one(s)" in str(record.error_message)


def test_a_job_whose_actions_were_all_of_unknown_fate_leaves_the_parts_unknown(
    tmp_path: Path,
) -> None:
    """A job that sent actions and ended ``parts_unknown`` with none reported executed (the
    port gone before the first report, then the counters lost) is the last job that moved for
    the next one: it used not to count (no executed move), and the next job planned from the
    job before it. Refused, naming it, until ``start_pose``."""
    config = _turntable()
    cube = Cube.solved(3).apply("D' F2 R U L2")
    path = tmp_path / "journal.sqlite"
    old = _open_spins_job(path, 0x0999, spins=2, executed=0)
    journal = Journal(path)
    journal.finish(old, JobState.ABORTED, ErrorCode.PARTS_UNKNOWN, "its actions' fate was lost")
    refused = journal.create_job("start", 3)  # refused before moving: not a job that moved
    journal.finish(refused, JobState.ERROR, ErrorCode.PARTS_UNKNOWN, "refused")
    assert journal.last_moved_job() is not None and journal.last_moved_job().id == old
    journal.close()
    firmware = _firmware(config, cube)

    error, done = _refused_then_start_pose(path, config, firmware, "start", {})
    assert error["code"] == "parts_unknown" and old in str(error["message"])
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def test_an_action_the_same_firmware_denies_leaves_the_parts_known(tmp_path: Path) -> None:
    """The firmware of the boot that ran the job says it executed one of its actions, where
    the journal has two (a forged report met before the daemon died): a denial, not lost
    counters. The second row is withdrawn, the parts are where the first left them (the
    table a quarter turn round), and a resume with rescan scans from there and solves: no
    ``parts_unknown``."""
    config = _turntable()
    cube = Cube.solved(3).apply("L' B2 U F R")
    path = tmp_path / "journal.sqlite"
    old = _open_spins_job(path, 0x1000, spins=3, executed=2)  # the fake firmware's boot
    firmware = _firmware(config, cube, angle=1)
    firmware.last_executed = firmware.started_upto = firmware.last_received = 1

    async def scenario() -> tuple[dict[str, object], dict[str, object]]:
        async with running(path, config=config, firmware=firmware) as rig:
            error = rig.sink.of(EventName.ERROR)[-1]
            await rig.job("resume", {"rescan": True})
            return error, rig.sink.of(EventName.DONE)[-1]

    error, done = run(scenario(), 90)
    assert error["code"] == "firmware_counter" and "denies" in str(error["message"])
    assert done["job_id"] == old and done["solved"] is True
    (record,) = _records(path, old)
    assert _rows(path, old)[0].parts == (0, 1) and record.error_code is None
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def test_a_previous_job_of_another_profile_is_refused_until_the_start_pose_is_set(
    tmp_path: Path,
) -> None:
    """The journal's last job that moved was a six-face robot's (face turns, not this kind's
    actions): the turntable's parts are not in it. A scan job is refused, then scans with
    ``start_pose``."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    six_face_job(journal_path)
    firmware = _firmware(config, cube)

    error, done = _refused_then_start_pose(journal_path, config, firmware, "scan", {})
    assert error["code"] == "parts_unknown"
    assert "was not a turntable job" in str(error["message"])
    assert done["job_id"] != error["job_id"]
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


def test_a_solve_command_plans_from_where_the_last_job_left_the_parts(tmp_path: Path) -> None:
    """``solve`` scans nothing before it moves: its plan starts where the last job that moved
    left the parts (the table a quarter turn round), not from the start pose (which spun the
    servo past its reach)."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    _ended_turned_table_job(journal_path, JobState.ABORTED)
    firmware = _firmware(config, cube, angle=1)

    async def scenario() -> dict[str, object]:
        async with running(journal_path, config=config, firmware=firmware) as rig:
            await rig.job("solve", {"facelets": firmware.mechanism.cube.to_facelets()})
            return rig.sink.of(EventName.DONE)[0]

    done = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert done["solved"] is True
    assert firmware.mechanism is not None and firmware.mechanism.faults == 0


# -- a restart mid-scan ---------------------------------------------------------------------


def _crash_after(path: Path, config: RobotConfig, firmware: MechanismFirmware) -> str:
    """Start a job; stop the daemon (no abort: as its death would) once the firmware has
    executed ``firmware.pause_after`` wire moves."""

    async def body() -> str:
        async with running(path, config=config, firmware=firmware) as rig:
            reply = await rig.daemon.submit("start", {"id": "first"})
            await firmware.paused.wait()
            job_id: str = reply["job_id"]
            return job_id

    return run(body(), 60)


@pytest.mark.parametrize(
    ("k", "rescan", "more"),
    [(1, False, 0), (3, False, 0), (5, False, 0), (6, False, 0), (3, True, 0), (2, False, 1)],
    ids=["after-1", "after-3", "after-5", "after-6", "after-3-rescan", "after-2-ran-one-more"],
)
def test_a_daemon_killed_mid_scan_resumes_the_scan_and_solves(
    tmp_path: Path, k: int, rescan: bool, more: int
) -> None:
    """The daemon dies after ``k`` of the scan's actions (the cube flipped and spun, not read
    yet). The restarted daemon recovers the job as resumable from the journal's rows; resume
    goes on with the scan from the orientation and parts' state the last row records, taking
    only the views the journaled looks lack (``rescan``: a fresh scan from there), and the job
    ends solved. Across the restart the rows keep one frame: each row's orientation is how the
    cube sits against the cube as it was put in. ``more``: the firmware ran that many more
    queued moves while the daemon was down (journaled at the restart, ``recovered: true``)."""
    config = _turntable()
    start = Cube.solved(3).apply("L2 F' U R B2 D' F L'")
    firmware = _firmware(config, start)
    firmware.pause_after = k
    path = tmp_path / "journal.sqlite"
    job_id = _crash_after(path, config, firmware)
    assert firmware.mechanism is not None and len(firmware.executed) == k
    journal = Journal(path)
    seen = len(journal.looks(job_id))  # the frames taken before the crash
    journal.close()
    assert 1 <= seen < 6
    firmware.finish_queue(more)
    k += more
    assert len(firmware.executed) == k

    async def again() -> tuple[list[dict[str, object]], int, dict[str, object]]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.sink.wait(lambda: bool(rig.sink.of(EventName.RECOVERED)))
            recovered = rig.sink.of(EventName.RECOVERED)
            ran = [e["index"] for e in rig.sink.of(EventName.MOVE_EXECUTED) if e.get("recovered")]
            assert ran == list(range(k - more + 1, k + 1))  # what ran while it was down
            await rig.job("resume", {"id": "again", "rescan": rescan})
            names = rig.sink.names()
            assert names.count(EventName.SCAN_COMPLETE) == 1
            before = rig.sink.events[: names.index(EventName.SCAN_COMPLETE)]
            scanned = max(int(e["index"]) for name, e in before if name == "move_executed")
            return recovered, scanned, rig.sink.of(EventName.DONE)[0]

    recovered, scanned, done = run(again(), 90)
    assert len(recovered) == 1 and recovered[0]["job_id"] == job_id
    assert recovered[0]["resumable"] is True
    assert recovered[0]["moves_done"] == k and recovered[0]["physical"] is None
    assert done["job_id"] == job_id and done["solved"] is True and done["verified"] is True
    assert firmware.mechanism.cube.is_solved() and firmware.mechanism.faults == 0
    # each wire move ran once: the journal's rows are the firmware's moves
    rows = _rows(path, job_id)
    assert len(rows) == len(firmware.executed) == done["moves"]
    # the scan went on where it stopped: its actions before and after the restart (the rows
    # up to the one scan_complete), then the solution and the check
    assert k < scanned < len(rows)
    journal = Journal(path)
    record = journal.job(job_id)
    journal_looks = journal.looks(job_id)
    looks = [lk for lk in journal_looks if lk.after <= scanned]
    journal.close()
    fresh = choreograph(build_mechanism("turntable", firmware.mechanism.table, 3), Face.U)
    if rescan:  # six new views (the looks before are dropped), the rows' frame starting again
        assert all(lk.after >= k for lk in looks)
        assert sorted(Face[lk.face] for lk in looks[:6]) == list(Face)
        frame = start.apply([m for a in rows[:k] for m in a.effect])
    else:  # only the faces not seen yet, and no more actions than a scan with no crash
        assert all(lk.after <= k for lk in looks[:seen])
        assert sorted(Face[lk.face] for lk in looks[:6]) == list(Face)
        if len(looks) == 6:  # no second look
            assert scanned <= len(fresh.actions)
        frame = start
    replay = MechanismCube(start, firmware.mechanism.table)
    for number, action in enumerate(rows[:scanned], 1):
        replay.apply(WireFace(action.motor).name, action.turns)
        assert replay.parts == action.parts, number
        q = frames(3).perms[action.orientation]
        assert np.array_equal(replay.cube.flat, (start if number <= k else frame).flat[q]), number
    assert record is not None and record.executed == record.total_moves == len(rows)
    assert record.scanned is not None
    # only the first read is kept: the check after execution journals no look
    assert all(lk.after <= scanned for lk in journal_looks)
    # the read is of the cube as it sat when the scan ended
    assert Cube.from_facelets(record.scanned, 3) == replay.cube


def test_a_scan_job_killed_mid_scan_resumes_as_a_scan(tmp_path: Path) -> None:
    """A ``scan`` job (read only) interrupted mid-scan: resume finishes the read and stops
    there (no solution, no layer turned)."""
    config = _turntable()
    start = Cube.solved(3).apply("B' R2 U F D2 L'")
    firmware = _firmware(config, start)
    firmware.pause_after = 2
    path = tmp_path / "journal.sqlite"

    async def first() -> str:
        async with running(path, config=config, firmware=firmware) as rig:
            reply = await rig.daemon.submit("scan", {"id": "read"})
            await firmware.paused.wait()
            job_id: str = reply["job_id"]
            return job_id

    job_id = run(first(), 60)

    async def again() -> tuple[list[str], dict[str, object]]:
        async with running(path, config=config, firmware=firmware) as rig:
            await rig.sink.wait(lambda: bool(rig.sink.of(EventName.RECOVERED)))
            await rig.job("resume", {"id": "again"})
            return rig.sink.names(), rig.sink.of(EventName.DONE)[0]

    names, done = run(again(), 60)
    assert done["job_id"] == job_id and done["kind"] == "scan"
    assert EventName.SCAN_COMPLETE in names and EventName.SOLUTION not in names
    assert firmware.mechanism is not None
    rows = _rows(path, job_id)
    assert all(m.kind is MoveKind.ROTATION for a in rows for m in a.effect)
    journal = Journal(path)
    record = journal.job(job_id)
    journal.close()
    assert record is not None and record.scanned is not None
    assert Cube.from_facelets(record.scanned, 3) == firmware.mechanism.cube


def test_after_the_journal_is_moved_aside_the_parts_are_unknown(tmp_path: Path) -> None:
    """A job interrupted mid-scan after one action, its move rows then lost: the journal is not
    trusted at start and a new one begins (robot.journal_guard). An empty journal would say
    "start pose"; after a quarantine that is a guess (the table may be turned), so a start is
    refused with ``parts_unknown`` until it says ``start_pose``; then it solves."""
    config = _turntable()
    cube = Cube.solved(3).apply("U R2 F B' L")
    journal_path = tmp_path / "journal.sqlite"
    journal, _ = _turned_table_job(journal_path)
    journal.close()
    (tmp_path / "journal.sqlite.marker").write_text("in use\n")
    _lose_move_rows(journal_path)
    firmware = _firmware(config, cube)

    error, done = _refused_then_start_pose(journal_path, config, firmware, "start", {})
    assert error["code"] == "parts_unknown"
    assert "journal was not trusted at start" in str(error["message"])
    assert done["solved"] is True
    assert list(tmp_path.glob("journal.sqlite.quarantined-*"))
