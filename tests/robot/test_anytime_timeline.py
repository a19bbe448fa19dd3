"""The anytime timeline (when the committed moves end, when the next must be committed), the
committer and how the searcher shares out a search window, without a daemon."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future
from types import SimpleNamespace
from typing import cast

import pytest

from robot.daemon.anytime import DECAY, Anytime
from robot.daemon.committer import (
    AnytimeRun,
    FirstSearch,
    SearchOutcome,
    Timeline,
    commit_when_due,
    group_ends,
    move_durations,
)
from robot.daemon.context import Context, Job
from robot.daemon.execution import Executor
from robot.daemon.searcher import (
    FIRST_PART,
    FIRST_SEARCH_S,
    GROWTH,
    MAX_SEARCH_S,
    Searcher,
    Started,
)
from robot.daemon.sessions import Sessions
from robot.planner import PlannedMove, Planner
from solver.cost import CostModel
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import parse
from solver.engines.twophase.session import Pending, SearchSession
from solver.solution import Solution
from tests.robot.daemon_fakes import fast_config

COST = CostModel(quarter_turn_s=0.1, half_turn_s=0.16, pair_extra_s=0.01, settle_s=0.005)
#: R, U+D' (a pair), F2
PLAN = [
    PlannedMove(Face.R, 1, 1),
    PlannedMove(Face.U, 1, 0, simultaneous_with_next=True),
    PlannedMove(Face.D, -1, 3),
    PlannedMove(Face.F, 2, 2),
]


def test_each_group_adds_its_time_and_a_settle_on_its_last_move() -> None:
    assert move_durations(PLAN, COST) == pytest.approx([0.105, 0.0, 0.115, 0.165])
    assert group_ends(PLAN, 0) == [1, 3, 4]
    assert group_ends(PLAN, 1) == [3, 4]


def test_the_end_is_predicted_from_the_commit_then_from_the_firmwares_reports() -> None:
    timeline = Timeline(lambda: 0.01, move_durations(PLAN, COST), started_at=10.0)
    assert timeline.end(1) == pytest.approx(10.105)
    assert timeline.deadline(1) == pytest.approx(10.095)  # one latency before
    timeline.observe((10.085, 1))  # R reported 20 ms sooner than the model says
    assert timeline.overstated_s == pytest.approx(0.25 * 0.02)  # a running mean
    assert timeline.end(3) == pytest.approx(10.085 + 0.115)
    assert timeline.deadline(3) == pytest.approx(10.2 - 0.01 - 0.005)
    timeline.observe((10.30, 3))  # later than predicted (a pause): nothing learnt
    assert timeline.overstated_s == pytest.approx(0.005)
    assert timeline.end(4) == pytest.approx(10.465)


def test_a_report_read_late_does_not_make_the_predicted_end_later_than_the_commits_allow() -> None:
    timeline = Timeline(lambda: 0.01, move_durations(PLAN, COST), started_at=10.0)
    timeline.committed(0, 1, 10.0)  # R
    timeline.committed(1, 3, 10.05)  # U+D' while R turns
    assert timeline.end(3) == pytest.approx(10.22)
    timeline.observe((10.13, 1))  # R's report read 25 ms after R can have ended
    assert timeline.overstated_s == 0.0
    assert timeline.end(3) == pytest.approx(10.22)  # not 10.13 + 0.115
    assert timeline.end(1) == pytest.approx(10.105)
    assert timeline.end(4) == pytest.approx(10.385)
    timeline.committed(3, 4, 10.30)  # F2 committed after U+D' ended (the motors waited)
    assert timeline.end(4) == pytest.approx(10.30 + 0.165 - 0.055)  # (the report, sooner)
    # a report sooner than the commits say (the model overstating the motors) is believed
    timeline.observe((10.20, 3))
    assert timeline.overstated_s == pytest.approx(0.25 * (0.115 - 0.07) / 1)
    assert timeline.end(4) == pytest.approx(10.20 + 0.165)


def _run(durations_s: float) -> AnytimeRun:
    scale = durations_s / 0.105  # R's time
    durations = [d * scale for d in move_durations(PLAN, COST)]
    timeline = Timeline(lambda: 0.001, durations, started_at=0.0)
    job = Job("job", "solve", None, 0.0)
    return AnytimeRun(job, 0, Cube.solved(3), list(PLAN), timeline)


def test_the_committer_commits_each_group_when_due_and_closes_the_feed() -> None:
    async def scenario() -> tuple[list[int], bool]:
        loop = asyncio.get_running_loop()
        run = _run(0.01)
        run.timeline.started_at = loop.time()
        seen: list[int] = []
        run.commit(1)
        task = asyncio.create_task(commit_when_due(run))
        while not task.done():
            if not seen or seen[-1] != len(run.feed.moves):
                seen.append(len(run.feed.moves))
            await asyncio.sleep(0.001)
        seen.append(len(run.feed.moves))
        return seen, run.feed.closed

    seen, closed = asyncio.run(scenario())
    assert seen[0] == 1 and seen[-1] == 4 and closed  # R; then U+D' together; then F2
    assert all(n in (1, 3, 4) for n in seen)


def test_a_refinement_that_leaves_nothing_to_commit_closes_the_feed() -> None:
    async def scenario() -> bool:
        run = _run(0.01)
        run.timeline.started_at = asyncio.get_running_loop().time()
        run.commit(1)
        run.plan = run.plan[:1]  # the cube is solved after R: the rest is dropped
        await asyncio.wait_for(commit_when_due(run), 1)
        return run.feed.closed

    assert asyncio.run(scenario())


def _fenced(journaling: bool) -> list[int]:
    """Moves committed while a search from after R runs (or its result is journaled) past
    the time every group was due, and once it ends."""

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        run = _run(0.005)
        run.timeline.started_at = loop.time()
        run.commit(1)
        run.fence, run.journaling = 1, journaling
        task = asyncio.create_task(commit_when_due(run))
        await asyncio.sleep(0.05)
        held = len(run.feed.moves)
        run.release_fence()
        await asyncio.wait_for(task, 1)
        return [held, len(run.feed.moves), run.late_writes]

    return asyncio.run(scenario())


def test_a_running_search_never_holds_a_due_commit_back() -> None:
    # the search's result comes too late to be used; the motors do not wait for it
    assert _fenced(journaling=False) == [4, 4, 0]


def test_no_move_past_a_refinement_being_journaled_is_committed_before_the_journal_has_it() -> None:
    held, committed, waited = _fenced(journaling=True)
    assert (held, committed) == (1, 4) and waited >= 1


class _RecordingSession:
    """Stands in for the refinement session: notes each search's deadline, finds nothing."""

    def __init__(self) -> None:
        self.deadlines: list[float] = []
        self.bounds: list[object] = []

    def start(self, cube: Cube, deadline: float, **options: object) -> Pending:
        self.deadlines.append(deadline)
        self.bounds.append(options.get("bound_s"))
        return Pending(None)


def _searcher() -> Searcher:
    config = SimpleNamespace(cost_model=COST, solver=SimpleNamespace(max_length=None))

    async def warm() -> Sessions:
        raise AssertionError("not wanted here")

    return Searcher(cast(Context, SimpleNamespace(config=config)), cast(Planner, None), warm)


def test_a_long_window_is_read_after_a_part_of_it_its_search_going_on() -> None:
    async def scenario() -> None:
        session = _RecordingSession()
        searcher = _searcher()
        run = _run(0.1)
        run.first = FirstSearch(1, 10.0, 1)
        now = asyncio.get_running_loop().time()
        long = searcher._start_search(run, cast(SearchSession, session), now + 0.1, 1, split=True)
        assert long.part and long.full_deadline == pytest.approx(now + 0.1)
        assert long.deadline - long.began == pytest.approx(FIRST_PART * (0.1 - (long.began - now)))
        # the threads search the whole window; the searcher reads what they hold at the part
        assert session.deadlines[-1] == long.full_deadline
        # the job's first search, recorded with its whole window
        assert long.first and run.first.start_groups == 1
        assert run.first.window_ms == pytest.approx(100, abs=5)
        assert await long.task is None
        # a part that used its share lets the next search grow as the whole window would
        assert Searcher._grown(long, long.deadline - long.began) == pytest.approx(
            min(MAX_SEARCH_S, GROWTH * (long.full_deadline - long.began))
        )
        short = searcher._start_search(
            run, cast(SearchSession, session), now + 1.5 * FIRST_SEARCH_S, 1, split=True
        )
        assert not short.part and short.deadline == pytest.approx(now + 1.5 * FIRST_SEARCH_S)
        rest = searcher._start_search(run, cast(SearchSession, session), now + 0.1, 1)
        assert not rest.part and rest.deadline == pytest.approx(now + 0.1)

    asyncio.run(scenario())


class _Journal:
    """Stands in for the async journal: notes each refinement's kept moves and the fence that
    held the committer while it was written."""

    def __init__(self, run: AnytimeRun) -> None:
        self.run = run
        self.written: list[tuple[int, int | None, bool]] = []
        self.sync = SimpleNamespace(record_refinement=self.record_refinement)

    def record_refinement(self, job_id: str, keep: int, *rest: object) -> None:
        self.written.append((keep, self.run.fence, self.run.journaling))

    async def call(self, fn: Callable[..., None], *args: object) -> None:
        fn(*args)


def _refining(
    plan: list[PlannedMove], durations: list[float]
) -> tuple[AnytimeRun, _Journal, list[dict[str, object]], Searcher]:
    """A run of ``plan`` (``durations`` a move) with its first move committed now, the journal
    and the events it writes, and a searcher with a real planner (in a running loop)."""
    run = AnytimeRun(
        Job("job", "solve", None, 0.0),
        0,
        Cube.solved(3),
        list(plan),
        Timeline(lambda: 0.001, durations, started_at=asyncio.get_running_loop().time()),
    )
    run.commit(1)
    journal = _Journal(run)
    events: list[dict[str, object]] = []
    ctx = SimpleNamespace(
        config=SimpleNamespace(cost_model=COST, solver=SimpleNamespace(max_length=None)),
        journal=journal,
        out=SimpleNamespace(event=lambda name, payload: events.append(payload)),
        publish_status=lambda: None,
    )

    async def warm() -> Sessions:
        raise AssertionError("not wanted here")

    searcher = Searcher(cast(Context, ctx), Planner(fast_config().motors, COST), warm)
    return run, journal, events, searcher


def test_a_remainder_whose_first_turn_joins_the_group_before_it_is_planned_with_it() -> None:
    # R is committed; U is not yet: a search from after U finds D F2 (0.265 s against the
    # plan's F2 L2, 0.325 s). Planned apart D costs a group of its own; planned with U it runs
    # beside it (U+D), so the plan is replaced from the committed R on: 0.155 s saved, not 0.06.
    plan = [
        PlannedMove(Face.R, 1, 1),
        PlannedMove(Face.U, 1, 0),
        PlannedMove(Face.F, 2, 2),
        PlannedMove(Face.L, 2, 4),
    ]

    async def scenario() -> tuple[AnytimeRun, _Journal, SearchOutcome, list[dict[str, object]]]:
        loop = asyncio.get_running_loop()
        run, journal, events, searcher = _refining(plan, move_durations(plan, COST))
        # the search from after U is bounded by a group's worth more than the plan's F2 L2
        session = _RecordingSession()
        searcher._start_search(run, cast(SearchSession, session), loop.time() + 0.05, 2)
        assert session.bounds[-1] == pytest.approx(0.325 + 0.16 + 0.01 + 0.005)
        found = Solution(tuple(parse("D F2")), "twophase", 3, 0.265, ())
        run.fence = 2
        outcome = await searcher._apply(run, 2, found, 0.325, loop.time() + 0.05, 0.01)
        return run, journal, outcome, events

    run, journal, outcome, events = asyncio.run(scenario())
    assert outcome is SearchOutcome.LANDED and run.joined == 1
    assert [str(m) for m in run.plan] == ["R", "U+", "D", "F2"]
    assert run.saved_s == pytest.approx(0.155)
    # journaled from the committed R on, nothing past it committed meanwhile
    assert journal.written == [(1, 1, True)]
    assert events[0]["kept"] == 1 and events[0]["saved_s"] == pytest.approx(0.155)
    assert run.timeline.durations == move_durations(run.plan, COST)
    # a search read after its first part goes on only from a state the plan still has at a
    # group end: one whose state now falls inside the pair is ended
    assert _going_on(run, 2, run.cube_after(2)) == (False, True)
    assert _going_on(run, 3, run.cube_after(3)) == (True, False)
    assert _going_on(run, 3, Cube.solved(3)) == (False, True)


class _Stoppable:
    """Stands in for a running search's pending: notes that it was ended."""

    stopped = False

    def stop(self) -> None:
        self.stopped = True


def _going_on(run: AnytimeRun, target: int, cube: Cube) -> tuple[bool, bool]:
    """Whether a search from ``cube`` after ``target`` moves, read after its first part and
    still running, goes on; and whether it was ended."""

    async def scenario() -> tuple[bool, bool]:
        running: asyncio.Future[Solution | None] = asyncio.get_running_loop().create_future()
        pending = _Stoppable()
        started = Started(
            target, 0.0, 0.0, 0.0, running, pending=cast(Pending, pending), part=True, cube=cube
        )
        going = Searcher._going_on(run, started) is started
        running.cancel()
        return going, pending.stopped

    return asyncio.run(scenario())


class _Running:
    """Stands in for a search's pending while its threads run: ``held`` is what a read finds;
    it ends only when stopped."""

    def __init__(self) -> None:
        self.done: Future[None] = Future()
        self.held: Solution | None = None
        self.stopped = False

    def peek(self) -> Solution | None:
        return self.held

    def result(self) -> Solution | None:
        return self.held

    def stop(self) -> None:
        self.stopped = True
        if not self.done.done():
            self.done.set_result(None)

    def release(self, threads: int | None = None) -> None:
        pass


class _RunningSession:
    """Stands in for the refinement session: each search keeps running until stopped."""

    def __init__(self) -> None:
        self.started: list[_Running] = []

    def start(self, cube: Cube, deadline: float, **options: object) -> _Running:
        self.started.append(_Running())
        return self.started[-1]


def test_a_search_read_halfway_lands_what_it_holds_and_goes_on_for_the_rest() -> None:
    """A window searched by one search: after its first part the remainder the threads hold
    lands (journaled, announced) while they go on from the same state; at the window's end
    what they hold then lands too, without waiting for their hand-back, and they are ended.
    No second search is started for the rest (a restart walked its shallow depths again)."""
    plan = [PlannedMove(Face.R, 1, 1)] + [PlannedMove(f, 2, 2) for f in (Face.U, Face.F, Face.L)]

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        run, journal, events, searcher = _refining(plan, [0.3, 0.165, 0.165, 0.165])
        session = _RunningSession()
        began = loop.time()
        started = searcher._start_search(
            run, cast(SearchSession, session), began + 0.08, 1, split=True
        )
        running = session.started[0]
        running.held = Solution(tuple(parse("F2 L2")), "twophase", 3, 0.325, ())
        searched, outcome = await searcher._improve(run, started)
        assert outcome is SearchOutcome.LANDED and not running.stopped
        assert searched < 0.07  # read after its first part, not at its end
        assert [str(m) for m in run.plan] == ["R", "F2", "L2"]
        assert Searcher._going_on(run, started) is started
        running.held = Solution(tuple(parse("L2 R2")), "twophase", 3, 0.17, ())
        searched, outcome = await searcher._improve(run, started, rest=True)
        assert outcome is SearchOutcome.LANDED and running.stopped
        assert searched == pytest.approx(0.08, abs=0.03)
        assert [str(m) for m in run.plan][1:] in (["L2+", "R2"], ["R2+", "L2"])
        assert len(session.started) == 1 and [w[0] for w in journal.written] == [1, 1]
        assert [e["refinement"] for e in events] == [1, 2]
        run.release_fence()

    asyncio.run(scenario())


def _no_solution(*args: object, **kwargs: object) -> Solution:
    raise AssertionError("not wanted here")


def test_the_delays_a_job_measured_are_slowly_forgotten() -> None:
    """Each job starts from the worst delays the jobs before it measured (how late the host woke
    for a commit, how late a search handed back, the longest journal write), each forgotten by
    DECAY a job once it stops recurring: a one-off 75 ms stall must not lengthen the lead of
    every job after it (it did: a job's own figures started from the learnt ones, so what it
    handed on never fell)."""

    async def scenario() -> list[tuple[float, float, float]]:
        config = SimpleNamespace(cost_model=COST, solver=SimpleNamespace(max_length=None))
        ctx = SimpleNamespace(config=config, link=SimpleNamespace(latency_s=0.001))
        anytime = Anytime(
            cast(Context, ctx), cast(Executor, None), cast(Planner, None), _no_solution
        )
        seen = []
        for k in range(4):
            run = anytime._new_run(Job(f"job{k}", "solve", None, 0.0), 0, Cube.solved(3), PLAN)
            seen.append((run.timeline.wake_lag_s, run.late_s, run.write_s))
            if k == 0:
                run.timeline.woke_late(0.075)
                run.searched_late(0.02, 0.8)
                run.wrote(0.03)
            elif k == 2:
                run.wrote(0.002)  # (less than the learnt write: the learnt one decays)
            anytime._learn(run)
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == (0.0, 0.0, 0.0)
    for k, factor in ((1, 1.0), (2, DECAY), (3, DECAY**2)):
        assert seen[k] == pytest.approx((0.075 * factor, 0.02 * factor, 0.03 * factor))


def _anytime(head_start_s: float, first_step_s: float) -> Anytime:
    solver = SimpleNamespace(max_length=None, head_start_s=head_start_s, first_step_s=first_step_s)
    config = SimpleNamespace(cost_model=COST, solver=solver)
    ctx = SimpleNamespace(config=config, link=SimpleNamespace(latency_s=0.006, round_trip_s=0.004))
    return Anytime(cast(Context, ctx), cast(Executor, None), cast(Planner, None), _no_solution)


def _overhead_of(anytime: Anytime, searched_after_s: float, sending_after_s: float) -> None:
    """A job whose head start (begun at 0.995 s, deadline 1.0 s) handed back and whose first
    moves were written that long after its deadline."""
    job = Job("job", "solve", None, 0.0)
    job.marks.update(
        searched=int((1.0 + searched_after_s) * 1e9), sending=int((1.0 + sending_after_s) * 1e9)
    )
    anytime._overhead(job, 0.995, 0.005)


def test_the_head_start_takes_what_the_host_leaves_under_the_first_step_aim() -> None:
    """With ``first_step_s`` the head start is the aim less the host's part of the time to the
    first motor step (from the head start's deadline to the first moves written, plus half the
    link's smoothed round trip, not its latency bound), as the worst quarter of the last jobs
    measured it; never shorter than ``head_start_s``, never longer than the aim, and
    ``head_start_s`` until 3 jobs measured."""
    anytime = _anytime(0.005, 0.013)
    for _ in range(2):
        _overhead_of(anytime, 0.0005, 0.004)  # 0.5 ms late, 3.5 ms of host: 6 ms with the link
        assert anytime.head_start_s() == 0.005
    for _ in range(14):
        _overhead_of(anytime, 0.0005, 0.004)
    assert anytime.head_start_s() == pytest.approx(0.013 - 0.006)
    # a quarter of the jobs slower: the head start sized for them
    for _ in range(5):
        _overhead_of(anytime, 0.0005, 0.005)
    assert anytime.head_start_s() == pytest.approx(0.013 - 0.007)
    # a head start that went on for its first solution counts 2 ms late, not its search
    late = _anytime(0.005, 0.013)
    for _ in range(16):
        _overhead_of(late, 0.2, 0.203)
    assert late.head_start_s() == pytest.approx(0.013 - 0.007)
    # never below head_start_s, and the aim at most (a host that takes no time)
    slow = _anytime(0.005, 0.013)
    for _ in range(16):
        _overhead_of(slow, 0.001, 0.02)
    assert slow.head_start_s() == 0.005
    fast = _anytime(0.005, 0.013)
    fast.ctx.link.round_trip_s = 0.0  # type: ignore[misc]
    for _ in range(16):
        _overhead_of(fast, 0.0, 0.0)
    assert fast.head_start_s() == pytest.approx(0.013)
    # first_step_s 0: head_start_s whatever the jobs measured
    fixed = _anytime(0.005, 0.0)
    for _ in range(16):
        _overhead_of(fixed, 0.0, 0.0)
    assert fixed.head_start_s() == 0.005
    # a head start longer than the aim stays as it is
    longer = _anytime(0.02, 0.013)
    for _ in range(16):
        _overhead_of(longer, 0.0, 0.0)
    assert longer.head_start_s() == 0.02
    # a job solved again keeps its first marks: an earlier attempt's are not measured
    again = _anytime(0.005, 0.013)
    job = Job("job", "solve", None, 0.0)
    job.marks.update(searched=int(0.5e9), sending=int(1.004e9))
    again._overhead(job, 0.995, 0.005)
    assert not again._overheads
