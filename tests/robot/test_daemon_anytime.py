"""Anytime solving on in-memory fakes: the motors start on a first solution, refinements replace
only moves not yet sent, the journal and the events say exactly what happened, e-stop and abort
still overtake everything, and a crash mid-job resumes to a solved cube.

The fake firmware takes ``group_time_s`` per motion group, so the search runs while it turns.
The first solution is padded with ``(R2 U2) x 6`` or the like (the identity: twelve wasted half
turns), so
that a refinement is certain to find a faster remainder.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from firmware_protocol.messages import FirmwareState
from robot.config import RobotConfig
from robot.daemon.committer import FirstSearch, SearchOutcome
from robot.daemon.events import ErrorCode, EventName, JobState
from robot.journal import Journal
from solver.api import solve
from solver.cube.facelets import Cube
from solver.cube.notation import OPPOSITE, parse
from solver.solution import Solution
from tests.robot.daemon_fakes import (
    FakeFirmware,
    MemorySink,
    Rig,
    fast_config,
    running,
    scrambled,
)
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")

#: (A2 B2) x 6 is the identity for two adjacent faces A, B
PADDINGS = [tuple(parse(f"{a}2 {b}2 " * 6)) for a, b in ("RU", "UF", "FR")]
GROUP_S = 0.03


def anytime_config(group_s: float = GROUP_S) -> RobotConfig:
    """The simulated profile, anytime, its cost model the fake firmware's group time."""
    base = fast_config()
    cost = base.solver.cost.model_copy(
        update={"quarter_turn_s": group_s, "half_turn_s": group_s, "settle_s": 0.0}
    )
    solver = base.solver.model_copy(update={"anytime": True, "head_start_s": 0.0, "cost": cost})
    return base.model_copy(update={"solver": solver})


def padded_first(cube: Cube, engine: str, **options: Any) -> Solution:
    """The real solver; its first answer of a job (the pipeline's call: no ``timeout_s``)
    carries twelve wasted half turns at its end."""
    solution = solve(cube, engine, **options)
    if "timeout_s" in options:
        return solution
    # a padding the planner cannot merge into the solution's last turn
    last = solution.moves[-1].face if solution.moves else None
    padding = next(p for p in PADDINGS if last not in (p[0].face, OPPOSITE[p[0].face]))
    return replace(solution, moves=solution.moves + padding)


class WatchingSink(MemorySink):
    """Also notes how many moves the firmware had received at each ``solution_refined``."""

    def __init__(self, firmware: FakeFirmware) -> None:
        super().__init__()
        self.firmware = firmware
        self.received_at_refinement: list[int] = []

    def publish_event(self, name: str, payload: dict[str, Any], on_delivered: Any = None) -> None:
        if name == EventName.SOLUTION_REFINED:
            self.received_at_refinement.append(self.firmware.last_received)
        super().publish_event(name, payload, on_delivered)


def test_anytime_starts_on_the_first_solution_and_replaces_only_unsent_moves(
    fast_tmp: Path,
) -> None:
    start = scrambled()
    fw = FakeFirmware(start, group_time_s=GROUP_S)
    sink = WatchingSink(fw)

    async def body() -> Rig:
        async with running(
            fast_tmp / "j.sqlite", firmware=fw, config=anytime_config(), solver=padded_first,
            sink=sink,
        ) as rig:  # fmt: skip
            await rig.job("solve", {"facelets": start.to_facelets("scheme")})
            return rig

    rig = run(body(), 60)
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    first = sink.of(EventName.SOLUTION)[0]
    assert first["anytime"] is True and first["htm"] >= 12
    refined = sink.of(EventName.SOLUTION_REFINED)
    assert refined, "the padded plan was never refined"
    assert [r["refinement"] for r in refined] == list(range(1, len(refined) + 1))
    # a refinement never replaces a move the firmware has: the kept prefix covers them all
    received = sink.received_at_refinement
    assert all(r["kept"] >= got for r, got in zip(refined, received, strict=True))
    assert all(r["saved_s"] > 0 for r in refined)
    assert refined[0]["robot_time_s"] < first["program"]["estimate_s"]
    # each plan keeps the moves of the plan before it up to its ``kept``
    plans = [first["program"]["moves"].split(), *(r["program"]["moves"].split() for r in refined)]
    for before, after, r in zip(plans, plans[1:], refined, strict=False):
        assert _turns(after)[: r["kept"]] == _turns(before)[: r["kept"]]
    # what executed is the last plan, move by move, and it is what the journal holds
    final = _turns(plans[-1])
    assert [m["move"] for m in sink.of(EventName.MOVE_EXECUTED)] == final
    assert len(fw.executed) == len(final) < len(_turns(plans[0]))
    journal = Journal(fast_tmp / "j.sqlite")
    job_id = first["job_id"]
    rows = journal.moves(job_id)
    record = journal.job(job_id)
    journal.close()
    assert record is not None and record.executed == record.total_moves == len(final)
    assert all(m.executed_at is not None for m in rows)
    assert [m.fw_index for m in rows] == list(range(1, len(final) + 1))
    done = sink.of(EventName.DONE)[0]
    assert done["moves"] == len(final) and done["solved"] is True


def _turns(program: list[str] | str) -> list[str]:
    """The face turns of a program's text (``U+ D'`` → ``U``, ``D'``)."""
    words = program.split() if isinstance(program, str) else program
    return [t for w in words for t in w.split("+") if t]


@pytest.mark.parametrize("verb", ["estop", "abort"])
def test_estop_and_abort_overtake_anytime_execution(verb: str, fast_tmp: Path) -> None:
    start = scrambled()
    fw = FakeFirmware(start, group_time_s=GROUP_S)

    async def body() -> Rig:
        async with running(
            fast_tmp / "j.sqlite", firmware=fw, config=anytime_config(), solver=padded_first
        ) as rig:
            await rig.daemon.submit("solve", {"facelets": start.to_facelets("scheme")})
            await rig.sink.wait(lambda: len(rig.sink.of(EventName.MOVE_EXECUTED)) >= 3)
            reply = await asyncio.wait_for(rig.daemon.submit(verb, {}), 5)
            assert reply["ok"], reply
            await asyncio.wait_for(rig.daemon.job_done.wait(), 5)
            executed = len(fw.executed)
            await asyncio.sleep(6 * GROUP_S)  # the search is over: nothing more is sent
            assert len(fw.executed) == executed
            return rig

    rig = run(body(), 60)
    assert rig.state() is JobState.ABORTED
    aborted = rig.sink.of(EventName.ABORTED)[0]
    assert aborted["code"] == (ErrorCode.ESTOP if verb == "estop" else ErrorCode.ABORTED)
    assert aborted["moves_done"] == len(rig.sink.of(EventName.MOVE_EXECUTED)) == len(fw.executed)
    assert fw.state is FirmwareState.STOPPED or verb == "abort"


def test_a_crash_mid_anytime_job_resumes_to_a_solved_cube(fast_tmp: Path) -> None:
    path = fast_tmp / "j.sqlite"
    start = scrambled()
    fw = FakeFirmware(start, group_time_s=GROUP_S, pause_after=5)

    async def crash() -> str:
        async with running(path, firmware=fw, config=anytime_config(), solver=padded_first) as rig:
            reply = await rig.daemon.submit("solve", {"facelets": start.to_facelets("scheme")})
            await fw.paused.wait()
            await asyncio.sleep(4 * GROUP_S)  # more moves are committed meanwhile
            job_id: str = reply["job_id"]
            return job_id

    job_id = run(crash(), 60)
    fw.finish_queue(2)  # the firmware ran two queued moves while the daemon was down
    executed_before = len(fw.executed)

    async def restart() -> Rig:
        async with running(path, firmware=fw, config=anytime_config()) as rig:
            await rig.sink.wait(lambda: bool(rig.sink.of(EventName.RECOVERED)))
            await rig.job("resume", {})
            return rig

    rig = run(restart(), 60)
    recovered = rig.sink.of(EventName.RECOVERED)[0]
    assert recovered["job_id"] == job_id and recovered["moves_done"] == executed_before
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    journal = Journal(path)
    record = journal.job(job_id)
    rows = journal.moves(job_id)
    journal.close()
    assert record is not None and record.state is JobState.DONE
    assert record.executed == record.total_moves == len(rows) == len(fw.executed)
    assert start.apply([m.as_move() for m in _physical(rows)]).is_solved()


def _physical(rows: list[Any]) -> list[Any]:
    from robot.planner import PlannedMove
    from solver.cube.geometry import Face

    return [PlannedMove(Face[m.face], m.turns, m.motor) for m in rows]


class StatusClock(FakeFirmware):
    """A fake firmware that notes when each STATUS was asked for (``time.perf_counter_ns``)."""

    def __init__(self, cube: Cube, **kwargs: Any) -> None:
        super().__init__(cube, **kwargs)
        self.asked: list[int] = []

    def status(self) -> Any:
        self.asked.append(time.perf_counter_ns())
        return super().status()


class FirstMovesSink(MemorySink):
    """Notes how many moves the firmware had received when the ``solution`` event came."""

    def __init__(self, firmware: FakeFirmware) -> None:
        super().__init__()
        self.firmware = firmware
        self.received_at_solution: list[int] = []

    def publish_event(self, name: str, payload: dict[str, Any], on_delivered: Any = None) -> None:
        if name == EventName.SOLUTION:
            self.received_at_solution.append(self.firmware.last_received)
        super().publish_event(name, payload, on_delivered)


def test_the_head_start_runs_on_the_warm_session_and_the_moves_go_out_before_the_event(
    fast_tmp: Path,
) -> None:
    start = scrambled()
    fw = StatusClock(start, group_time_s=GROUP_S)
    sink = FirstMovesSink(fw)
    config = anytime_config()
    config = config.model_copy(
        update={"solver": config.solver.model_copy(update={"head_start_s": 0.01})}
    )

    async def body() -> tuple[Rig, dict[str, int]]:
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=config, sink=sink) as rig:
            anytime = rig.daemon.pipeline.anytime
            assert anytime is not None
            await asyncio.to_thread(anytime.warm)  # as the daemon does after its tables
            await rig.job("solve", {"facelets": start.to_facelets("scheme")})
            assert anytime.last is not None
            return rig, dict(anytime.last.job.marks)

    rig, marks = run(body(), 60)
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    first = sink.of(EventName.SOLUTION)[0]
    # the session's search (its own statistics), not the pipeline's first solution
    assert first["anytime"] is True and first["robot_time_s"] is not None
    assert sink.received_at_solution[0] >= 1, "the event came before the first moves went out"
    # every step on the way to the first motor step marked, in order
    steps = ["solving", "searched", "planned", "status", "journaled", "sending"]
    assert list(marks) == steps
    assert all(marks[a] <= marks[b] for a, b in itertools.pairwise(steps))
    # the head start ends by its absolute deadline (generous: a loaded 2-core machine)
    assert marks["searched"] - marks["solving"] < 0.5e9
    # the STATUS of the dispatch was asked for at the job's start, none while it solved
    assert any(t < marks["solving"] for t in fw.asked)
    assert not any(marks["solving"] <= t <= marks["sending"] for t in fw.asked)


def test_the_first_search_starts_from_the_first_commit_before_the_motors_run(
    fast_tmp: Path,
) -> None:
    start = scrambled()
    fw = FakeFirmware(start, group_time_s=0.06)
    sink = WatchingSink(fw)

    async def body() -> tuple[Rig, FirstSearch]:
        async with running(
            fast_tmp / "j.sqlite", firmware=fw, config=anytime_config(0.06), solver=padded_first,
            sink=sink,
        ) as rig:  # fmt: skip
            anytime = rig.daemon.pipeline.anytime
            assert anytime is not None
            await asyncio.to_thread(anytime.warm)  # as the daemon does after its tables
            await rig.job("solve", {"facelets": start.to_facelets("scheme")})
            assert anytime.last is not None and anytime.last.first is not None
            return rig, anytime.last.first

    rig, first = run(body(), 60)
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    # one group first, its search from right after it, counted from before the plan's write
    assert first.commit_groups == 1 and first.commit_moves in (1, 2)
    assert first.start_groups == first.commit_groups and first.window_ms > 0
    # the padded plan's remainder is beaten at once: it lands unless it came too late
    assert first.outcome in (SearchOutcome.LANDED, SearchOutcome.TOO_LATE, SearchOutcome.DROPPED)
    refined = sink.of(EventName.SOLUTION_REFINED)
    if first.outcome is SearchOutcome.LANDED:
        assert refined[0]["kept"] == first.commit_moves and first.saved_s > 0
        assert refined[0]["saved_s"] == pytest.approx(first.saved_s, abs=1e-3)
    assert first.to_dict()["outcome"] == first.outcome.value
