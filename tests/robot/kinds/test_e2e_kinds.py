"""End to end on a simulated turntable and a simulated two-gripper robot: the simulated firmware
on a real pty carrying the cube in the simulated mechanism, rendered cameras, a real MQTT broker,
the daemon; a job from start to DONE, and a daemon that dies mid-job and resumes from the journal
(the journal's rows say the action, the cube's orientation and the parts' state after each)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from firmware_protocol.moves import Face as WireFace
from robot.assemble import assemble
from robot.config import RobotConfig, load_config
from robot.daemon import link_config
from robot.journal import Journal
from robot.kinds.frames import frames
from robot.kinds.profile import build_mechanism
from robot.kinds.simulated import MechanismCube
from robot.kinds.wire import WireAction
from robot.simrobot import SimulatedRobot
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.scramble import random_moves
from tests.conftest import Broker
from tests.robot.helpers import CONFIGS, Recorder, run
from tests.robot.test_e2e import scrambled

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.usefixtures("solver_tables")]

PROFILES = ["turntable.toml", "two_gripper.toml"]


def _profile(base: RobotConfig, port: str, state_file: Path) -> RobotConfig:
    """``base`` on the firmware at ``port``, its cameras reading ``state_file``."""
    cameras = tuple(
        c.model_copy(update={"source": f"simulated:{state_file}"}) for c in base.cameras
    )
    serial = base.serial.model_copy(update={"url": port})
    return base.model_copy(update={"serial": serial, "cameras": cameras})


def _load(name: str, *, speed: float | None = None, faults: str = "", n: int = 3) -> RobotConfig:
    """The example profile ``name`` for an ``n``-cube; ``speed``: the simulated motors that many
    times faster than real time (the tests that need the firmware's queue still running when
    a new daemon comes up keep the profile's own), ``faults``: injected firmware faults."""
    base = load_config(CONFIGS / name)
    assert base.simulation is not None
    update: dict[str, object] = {"faults": faults}
    if speed is not None:
        update["speed_factor"] = speed
    robot = base.robot.model_copy(update={"cube_size": n})
    return base.model_copy(
        update={"simulation": base.simulation.model_copy(update=update), "robot": robot}
    )


#: the simulated motors' speed in the tests that only need the job's outcome and its journal
FAST = 25.0


@contextlib.asynccontextmanager
async def _rig(
    base: RobotConfig, start: Cube, seed: int, tmp_path: Path, broker: Broker
) -> AsyncIterator[tuple[RobotConfig, SimulatedRobot, Recorder]]:
    """The simulated robot holding ``start`` (its cameras reading a state file), the profile
    pointed at its firmware, and a recorder of the robot's MQTT topics; all stopped after."""
    state_file = tmp_path / "cube.txt"
    sim = SimulatedRobot(base, start, seed=seed, state_file=state_file)
    state_file.write_text(start.to_facelets("scheme") + "\n")
    port = await sim.start()
    try:
        topic = f"cuberobot/{base.robot.id}/#"
        async with Recorder(broker.host, broker.port, topic) as rec:
            yield _profile(base, port, state_file), sim, rec
    finally:
        await sim.stop()


#: how long a daemon may take to come up or to stop
STOP_S = 30.0


def _stacks() -> str:
    """Where every task of the loop waits (what a daemon that does not stop is stuck on)."""
    out = io.StringIO()
    for other in asyncio.all_tasks():
        if other is not asyncio.current_task():
            other.print_stack(limit=12, file=out)
    return out.getvalue()


async def _daemon(
    config: RobotConfig,
    broker: Broker,
    journal: Path,
    body: Callable[[], Awaitable[None]],
    *,
    crash: bool = False,
) -> None:
    """A daemon on ``config`` while ``body`` runs; ``crash``: then it dies (its task cancelled,
    its port closed, nothing stopped in order), else it stops."""
    async with contextlib.AsyncExitStack() as stack:
        parts = await assemble(config, stack, mqtt=(broker.host, broker.port), journal_path=journal)
        task = asyncio.create_task(parts.daemon.run())
        await asyncio.wait_for(parts.daemon.firmware_ready.wait(), STOP_S)
        assert parts.daemon.mqtt is not None
        await asyncio.wait_for(parts.daemon.mqtt.connected.wait(), 10)
        try:
            await body()
        finally:
            if crash:
                task.cancel()
            else:
                await parts.daemon.mqtt.flush(5)
                parts.daemon.stop()
            # bounded, and a cancellation of the test itself is not swallowed: a daemon that
            # does not stop fails the test instead of hanging the suite
            done, _ = await asyncio.wait({task}, timeout=STOP_S)
            if not done:
                stacks = _stacks()
                task.cancel()
                raise AssertionError(f"the daemon did not stop within {STOP_S} s:\n{stacks}")
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
            if crash:  # as the process's death would: the port closes, no heartbeat follows
                await parts.daemon.link.close()  # type: ignore[attr-defined]


def _executed(sim: SimulatedRobot) -> int:
    """The moves the simulated firmware executed so far."""
    return sum(r.outcome == "executed" for r in sim.firmware.records)


def _rows(journal_path: Path, job_id: str) -> tuple[str, int, int, list[WireAction]]:
    journal = Journal(journal_path)
    record = journal.job(job_id)
    moves = journal.moves(job_id)
    journal.close()
    assert record is not None
    actions = [WireAction.from_token(m.face, m.motor, m.turns) for m in moves]
    return str(record.state), record.executed, record.total_moves, actions


@pytest.mark.parametrize(
    ("name", "faults"),
    [("turntable.toml", ""), ("two_gripper.toml", ""), ("turntable.toml", "reset@20")],
    ids=["turntable", "two-gripper", "turntable-firmware-reset"],
)
def test_job_over_mqtt(name: str, faults: str, mqtt_broker: Broker, tmp_path: Path) -> None:
    """``faults``: the simulated firmware resets mid-job; the job homes and goes on."""
    start = scrambled(41)
    base = _load(name, speed=FAST, faults=faults)
    topic = f"cuberobot/{base.robot.id}"

    async def scenario() -> tuple[Recorder, SimulatedRobot]:
        async with _rig(base, start, 2, tmp_path, mqtt_broker) as (config, sim, rec):

            async def job() -> None:
                await rec.publish(f"{topic}/cmd/start", json.dumps({"id": "job-1"}))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 90)

            await _daemon(config, mqtt_broker, tmp_path / "journal.sqlite", job)
        return rec, sim

    rec, sim = run(scenario(), 150)
    assert rec.events("error") == []
    n = len(rec.events("move_executed"))
    names = [e for e in rec.event_names() if e != "firmware_reset"]
    # one camera (the turntable): the scan's actions are job moves before scan_complete, and
    # the check after execution scans again; two fixed cameras (the two-gripper): none
    scanned = names.index("scan_complete")
    assert (scanned > 0) is (base.scan_camera is not None)
    solution = rec.events("solution")[0]
    program = solution["program"]
    checked = n - scanned - program["count"]
    assert (checked > 0) is (base.scan_camera is not None)
    assert names == (
        ["move_executed"] * scanned
        + ["scan_complete", "solution"]
        + ["move_executed"] * (program["count"] + checked)
        + ["done"]
    )
    assert len(rec.events("firmware_reset")) == (1 if faults else 0)
    assert program["kind"] == base.robot.kind
    assert solution["robot_time_s"] == program["estimate_s"] > 0
    assert rec.events("done")[0]["solved"] is True and rec.events("done")[0]["verified"] is True
    assert sim.cube.cube.is_solved() and sim.cube.faults == 0  # type: ignore[union-attr]
    state, executed, total, actions = _rows(tmp_path / "journal.sqlite", solution["job_id"])
    assert state == "DONE" and executed == total == n
    assert [e["move"] for e in rec.events("move_executed")] == [a.label for a in actions]
    table = base.robot.mechanism_table
    mechanism = build_mechanism(base.robot.kind, table, 3)
    assert actions[scanned + program["count"] - 1].parts == mechanism.start


@pytest.mark.parametrize(
    ("name", "rescan"),
    [("turntable.toml", False), ("two_gripper.toml", False), ("turntable.toml", True)],
    ids=["turntable", "two-gripper", "turntable-rescan"],
)
def test_daemon_dies_mid_job_and_resumes(
    name: str, rescan: bool, mqtt_broker: Broker, tmp_path: Path
) -> None:
    """``rescan``: resume with a fresh scan, a new plan from where the journal says the parts
    are (the cover may be closed, the table turned)."""
    start = scrambled(43)
    journal = tmp_path / "journal.sqlite"
    base = _load(name, speed=FAST)
    topic = f"cuberobot/{base.robot.id}"

    async def scenario() -> tuple[Recorder, SimulatedRobot, int]:
        async with _rig(base, start, 3, tmp_path, mqtt_broker) as (config, sim, rec):

            async def first() -> None:
                await rec.publish(f"{topic}/cmd/start", json.dumps({"id": "first"}))
                # a few moves into the solution, counted by the firmware itself (the events
                # come late on a loaded machine: waiting for a dozen of them, the firmware's
                # queue could take the job to its end before the crash)
                await rec.wait(lambda: bool(rec.events("solution")), 60)
                at_solution = _executed(sim)
                await rec.wait(lambda: _executed(sim) >= at_solution + 6, 60)

            await _daemon(config, mqtt_broker, journal, first, crash=True)
            seen = len(rec.events("move_executed"))
            await asyncio.sleep(1.5)  # the firmware's watchdog stops its queue

            async def second() -> None:
                await rec.wait(lambda: bool(rec.events("recovered")), 20)
                resume = {"id": "again", "rescan": rescan}
                await rec.publish(f"{topic}/cmd/resume", json.dumps(resume))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 90)

            await _daemon(config, mqtt_broker, journal, second)
        return rec, sim, seen

    rec, sim, seen = run(scenario(), 200)
    assert rec.events("error") == []
    recovered = rec.events("recovered")[0]
    assert recovered["resumable"] is True and seen <= recovered["moves_done"]
    done_before = recovered["moves_done"]
    assert 0 < done_before < recovered["moves_total"]
    assert rec.events("done")[0]["solved"] is True
    assert sim.cube.cube.is_solved() and sim.cube.faults == 0  # type: ignore[union-attr]
    state, executed, total, actions = _rows(journal, recovered["job_id"])
    assert state == "DONE" and executed == total
    if not rescan:  # the plan as journaled; a one-camera robot's check after it scans again
        assert total >= recovered["moves_total"]
        assert (total > recovered["moves_total"]) is (base.scan_camera is not None)
    events = rec.events("move_executed")
    assert {e["index"] for e in events} == set(range(1, total + 1))  # nothing lost
    # the firmware ran each wire move exactly once across the restart
    fw = [r for r in sim.firmware.records if r.outcome == "executed"]
    assert len(fw) == total
    assert len(rec.events("solution")) == (2 if rescan else 1)
    # the journal alone replays the job: its wire moves carry a fresh simulated mechanism from
    # the scanned cube to solved, and each row's parts' state is where the motors left them
    table = base.robot.mechanism_table
    assert table is not None
    again, tracked = MechanismCube(start, table), start
    for number, action in enumerate(actions, 1):
        again.apply(WireFace(action.motor).name, action.turns)
        tracked = action.apply(tracked)  # the effect the row journals
        assert again.parts == action.parts and again.cube == tracked, number
    assert again.cube.is_solved() and again.faults == 0
    assert 0 <= actions[done_before - 1].orientation < 24


@pytest.mark.parametrize(
    "name", ["turntable.toml", "simulated.toml"], ids=["turntable", "six-face"]
)
def test_resume_while_the_firmware_still_runs_its_queue(
    name: str, mqtt_broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon dies mid-job but the firmware goes on with its queue (a long watchdog here:
    as when the dead daemon's port stayed open and fed it); a new daemon resumes at once. The
    resume waits for the queue to drain, journaling those moves, then sends only the rest:
    every wire move runs exactly once."""
    start = scrambled(43)
    journal = tmp_path / "journal.sqlite"
    base = _load(name)
    topic = f"cuberobot/{base.robot.id}"
    monkeypatch.setattr(
        "robot.assemble.link_config",
        lambda config: dataclasses.replace(link_config(config), watchdog_ms=20_000),
    )

    async def scenario() -> tuple[Recorder, SimulatedRobot, int]:
        async with _rig(base, start, 3, tmp_path, mqtt_broker) as (config, sim, rec):

            def solve_moves() -> int:
                """Moves executed since the solution (a one-camera scan moves first)."""
                names = rec.event_names()
                if "solution" not in names:
                    return 0
                return names[names.index("solution") :].count("move_executed")

            async def first() -> None:
                await rec.publish(f"{topic}/cmd/start", json.dumps({"id": "first"}))
                await rec.wait(lambda: solve_moves() >= 6, 60)

            await _daemon(config, mqtt_broker, journal, first, crash=True)
            crashed_at = len(rec.events("move_executed"))

            async def second() -> None:
                await rec.wait(lambda: bool(rec.events("recovered")), 20)
                await rec.publish(f"{topic}/cmd/resume", json.dumps({"id": "again"}))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 90)

            await _daemon(config, mqtt_broker, journal, second)
        return rec, sim, crashed_at

    rec, sim, crashed_at = run(scenario(), 200)
    assert rec.events("error") == []
    recovered = rec.events("recovered")[0]
    done = rec.events("done")[0]
    # the job's moves; a one-camera robot's check after execution adds its scan's actions
    total = done["moves"]
    assert (total > recovered["moves_total"]) is (base.scan_camera is not None)
    assert crashed_at <= recovered["moves_done"] < recovered["moves_total"]
    assert done["solved"] is True
    assert sim.cube.cube.is_solved()
    assert not isinstance(sim.cube, MechanismCube) or sim.cube.faults == 0
    fw = [r for r in sim.firmware.records if r.outcome == "executed"]
    assert len(fw) == total  # each wire move exactly once
    rows = Journal(journal)
    record = rows.job(recovered["job_id"])
    rows.close()
    assert record is not None and str(record.state) == "DONE"
    assert record.executed == record.total_moves == total
    events = rec.events("move_executed")
    assert sorted(e["index"] for e in events if not e.get("replayed")) == list(range(1, total + 1))
    timeline = list(zip(rec.event_names(), rec.events(), strict=True))
    at = [name for name, _ in timeline].index("recovered")
    drained = [  # announced after ``recovered``: executed while the resume waited
        e["index"] for name, e in timeline[at:] if name == "move_executed" and e.get("recovered")
    ]
    assert drained, "the resume should have met the firmware still running its queue"
    assert drained == list(range(recovered["moves_done"] + 1, drained[-1] + 1))


@pytest.mark.parametrize(
    ("name", "n", "k"),
    [
        ("turntable.toml", 3, 2),
        ("turntable.toml", 3, 5),
        ("two_gripper.toml", 3, 8),
        ("bigcube_gripper.toml", 4, 3),
    ],
    ids=["turntable-after-2", "turntable-after-5", "two-gripper-after-8", "bigcube-4-after-3"],
)
def test_daemon_dies_mid_scan_and_the_job_ends_solved(
    name: str, n: int, k: int, mqtt_broker: Broker, tmp_path: Path
) -> None:
    """The daemon dies after ``k`` actions of its one-camera scan (the cube turned over, not
    read yet). The new daemon recovers the job as resumable (the cube's orientation and the
    parts' state are in the journal's last row); resume goes on with the scan from there,
    with the looks taken before, and the job ends solved. Each wire move ran once, and the
    scan's rows keep one frame across the restart."""
    start = Cube.solved(n).apply(random_moves(n, 25 if n == 3 else 40, 47))
    journal = tmp_path / "journal.sqlite"
    base = _load(name, speed=FAST, n=n)
    assert base.scan_camera is not None
    topic = f"cuberobot/{base.robot.id}"

    async def scenario() -> tuple[Recorder, SimulatedRobot, int]:
        async with _rig(base, start, 5, tmp_path, mqtt_broker) as (config, sim, rec):

            async def first() -> None:
                await rec.publish(f"{topic}/cmd/start", json.dumps({"id": "first"}))
                await rec.wait(lambda: len(rec.events("move_executed")) >= k, 60)

            await _daemon(config, mqtt_broker, journal, first, crash=True)
            seen = len(rec.events("move_executed"))
            await asyncio.sleep(1.5)  # the firmware's watchdog stops its queue

            async def second() -> None:
                await rec.wait(lambda: bool(rec.events("recovered")), 20)
                await rec.publish(f"{topic}/cmd/resume", json.dumps({"id": "again"}))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 150)

            await _daemon(config, mqtt_broker, journal, second)
        return rec, sim, seen

    rec, sim, seen = run(scenario(), 280)
    assert "scan_complete" not in rec.event_names()[: rec.event_names().index("recovered")]
    assert rec.events("error") == []
    recovered = rec.events("recovered")[0]
    assert recovered["resumable"] is True and recovered["physical"] is None
    assert seen <= recovered["moves_done"] and recovered["moves_done"] >= k
    done = rec.events("done")[0]
    assert done["solved"] is True and done["verified"] is True
    assert sim.cube.cube.is_solved() and sim.cube.faults == 0  # type: ignore[union-attr]
    state, executed, total, actions = _rows(journal, recovered["job_id"])
    assert state == "DONE" and executed == total == done["moves"]
    fw = [r for r in sim.firmware.records if r.outcome == "executed"]
    assert len(fw) == total  # each wire move exactly once across the restart
    timeline = list(zip(rec.event_names(), rec.events(), strict=True))
    at = [e for e, _ in timeline].index("scan_complete")
    scanned = max(int(p["index"]) for e, p in timeline[:at] if e == "move_executed")
    assert recovered["moves_done"] < scanned < total
    # the journal alone replays the job; the scan's rows say how the cube sits against the
    # cube as it was put in, before and after the restart
    table = base.robot.mechanism_table
    assert table is not None
    again = MechanismCube(start, table)
    perms = frames(n).perms
    for number, action in enumerate(actions, 1):
        again.apply(WireFace(action.motor).name, action.turns)
        # (a cover move of more than two positions is several wire moves: the rows before
        # its last one, of no time, say the parts' state before it)
        assert again.parts == action.parts or not action.seconds, number
        if number <= scanned:
            assert np.array_equal(again.cube.flat, start.flat[perms[action.orientation]]), number
    assert again.cube.is_solved() and again.faults == 0
    rows = Journal(journal)
    looks = rows.looks(recovered["job_id"])
    rows.close()
    first_scan = [lk for lk in looks if lk.after <= scanned]
    assert {lk.face for lk in first_scan} == {f.name for f in Face}
