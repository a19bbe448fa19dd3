"""Anytime solving (``[solver] anytime = true``): the motors start on the first solution and the
search goes on while they turn, from the cube as it will be after moves of the plan.

A longer search finds a plan the robot executes faster, but a fixed budget is paid before the
first move. Here the head start (``[solver] head_start_s``, 3 ms on one worker thread) is the
only search the robot waits for; then two tasks share the job:

* **The committer** (:func:`commit_when_due`) hands the plan's next motion group to the firmware
  (appended to the running execution, :meth:`FirmwareLink.extend`) at the last moment that
  keeps the firmware's queue from running dry: the predicted end of the committed moves (the
  cost model's group times, re-anchored on each group the firmware reports executed) less the
  *lead time* — how long a committed move may take to reach the firmware (the link's measured
  latency, :attr:`FirmwareLink.latency_s`), how late the host has woken up, and how much sooner
  than the cost model the reports have come. So only the moves the firmware needs are sent.
* **The searcher** runs the robot-time search (the profile's cost model) from the plan's state
  after ``target`` moves, until move ``target + 1`` is due less what a refinement takes to hand
  back, plan and journal (measured; each job starts from the worst the jobs before measured,
  slowly forgotten). The first search starts a group or two ahead and runs about as long as a
  quarter turn; each next one starts further ahead and may run about twice as long as the one
  before (a search restarted with the same short budget finds the same plan again). While it
  runs, nothing past ``target`` is committed until its planned end.

A remainder faster than the plan's **replaces** the moves after ``target``: journaled first
(:meth:`~robot.journal.Journal.record_refinement`: moves sent never change; nothing past
``target`` is committed until the journal has it), then announced (``solution_refined``).

The journal always holds the whole plan as it stands, so a crash mid-job resumes (``resume``)
from the executed moves with the moves planned after them, as for a fixed plan. The moves are
journaled as executed by the :class:`~robot.daemon.execution.Executor`, which also recovers
from firmware resets; an e-stop or abort ends the execution, and the search with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from firmware_protocol.errors import LinkError
from robot.daemon.context import Context, Job, face_move
from robot.daemon.events import (
    ErrorCode,
    EventName,
    JobState,
    SolutionRefinedPayload,
    solution_payload,
)
from robot.daemon.execution import Executor, MoveFeed
from robot.daemon.ports import Solver
from robot.errors import JobError, PlanError
from robot.planner import MotorProgram, PlannedMove, Planner
from solver.cost import CostModel
from solver.cube.facelets import Cube
from solver.cube.notation import Move, format_moves
from solver.errors import CubeError
from solver.solution import Solution

__all__ = ["Anytime", "AnytimeRun", "Timeline", "commit_when_due", "group_ends", "move_durations"]

logger = logging.getLogger(__name__)

#: A search shorter than this is not started: the next group is committed at once instead.
MIN_SEARCH_S = 0.004
#: The least time a refinement is assumed to take beyond its search (hand back, plan, journal).
MIN_OVERHEAD_S = 0.01
#: How much of the worst delays measured in a job the next job still assumes.
DECAY = 0.9
#: The weight of a new sample in the running mean of how early reports come.
EARLY_GAIN = 0.25
#: Each search may run this many times as long as the one before (from further ahead).
GROWTH = 2.0
#: The committer looks at the timeline at least this often while it waits (seconds): the
#: firmware's reports move the predicted end.
COMMIT_POLL_S = 0.02


@dataclass
class Timeline:
    """When the committed moves will have executed, from the cost model's group times and the
    firmware's reports; and how early the next group must be committed.

    ``durations[i]`` is the time move ``i`` of the plan adds to the motors' timeline (its group's
    time plus the settle before the next group, on the last move of a group; 0 on the first move
    of a simultaneous pair).
    """

    latency_s: Callable[[], float]
    durations: list[float] = field(default_factory=list)
    #: loop time of the first commit (the motors start once its moves arrive)
    started_at: float | None = None
    #: how late the host woke up for a commit, at most so far (seconds)
    wake_lag_s: float = 0.0
    #: how much sooner a group's report came than the cost model says (the model overstating
    #: the motors, or the report before it delayed), a running mean, a group
    overstated_s: float = 0.0
    _anchor: tuple[float, int] | None = None

    def observe(self, last_group: tuple[float, int] | None) -> None:
        """Take the firmware's latest report (``(link time, moves executed)`` of the last whole
        group reported) and learn how far the cost model overstates the group times."""
        if last_group is None or last_group == self._anchor:
            return
        previous, self._anchor = self._anchor, last_group
        if previous is None:  # the first group started after the first commit
            assert self.started_at is not None
            previous = (self.started_at, 0)
        (t0, n0), (t1, n1) = previous, last_group
        if n1 <= n0:
            return
        predicted = sum(self.durations[n0:n1])
        groups = sum(1 for d in self.durations[n0:n1] if d > 0)
        observed = t1 - t0
        # only back-to-back groups tell the motors' speed (after a pause the gap adds to it);
        # a running mean, as the reports' own jitter is in the link latency already
        if observed <= predicted and groups:
            early = (predicted - observed) / groups
            self.overstated_s += EARLY_GAIN * (early - self.overstated_s)

    def end(self, committed: int) -> float:
        """Loop time at which the first ``committed`` moves will have executed."""
        if self._anchor is not None:
            at, done = self._anchor
            return at + sum(self.durations[done:committed])
        # the motors start once the first moves arrive, but never before the commit: counting
        # from the commit keeps the predicted end early (on the safe side)
        assert self.started_at is not None
        return self.started_at + sum(self.durations[:committed])

    def lead_s(self, groups: int = 1) -> float:
        """How long before the motors run dry the next group must be committed, when the end
        is predicted over ``groups`` groups."""
        return self.latency_s() + self.wake_lag_s + self.overstated_s * groups

    def deadline(self, committed: int) -> float:
        """Loop time by which the move after the first ``committed`` must be committed."""
        done = self._anchor[1] if self._anchor is not None else 0
        groups = sum(1 for d in self.durations[done:committed] if d > 0)
        return self.end(committed) - self.lead_s(max(1, groups))


def move_durations(moves: Sequence[PlannedMove], cost: CostModel) -> list[float]:
    """What each move adds to the motors' timeline (see :class:`Timeline`)."""
    out: list[float] = []
    group: list[Move] = []
    for planned in moves:
        group.append(planned.as_move())
        if planned.simultaneous_with_next:
            out.append(0.0)
            continue
        out.append(cost.estimate(group) + cost.settle_s)
        group = []
    return out


def group_ends(moves: Sequence[PlannedMove], start: int) -> list[int]:
    """The positions just after each group that starts at or after ``start``."""
    return [i + 1 for i in range(start, len(moves)) if not moves[i].simultaneous_with_next]


@dataclass
class AnytimeRun:
    """One job's anytime execution: the plan as it stands (job moves ``offset`` on), how many
    of its moves are committed, the cube before it, and what the refinements did."""

    job: Job
    offset: int
    start: Cube
    plan: list[PlannedMove]
    timeline: Timeline
    feed: MoveFeed = field(default_factory=lambda: MoveFeed(closed=False))
    committed: int = 0
    refinements: int = 0
    searches: int = 0
    #: a refinement's time beyond its search (hand back, plan, journal), at most so far
    overhead_s: float = MIN_OVERHEAD_S

    #: a search from this position runs (or its result is being journaled): no move past it
    #: is committed before ``fence_until`` (loop time)
    fence: int | None = None
    fence_until: float = 0.0
    _committed_event: asyncio.Event = field(default_factory=asyncio.Event)
    _fence_event: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def uncommitted(self) -> int:
        return len(self.plan) - self.committed

    def cube_after(self, moves: int) -> Cube:
        """The cube after the plan's first ``moves`` moves."""
        return self.start.apply([m.as_move() for m in self.plan[:moves]])

    def commit(self, upto: int) -> None:
        """Hand the plan's moves up to position ``upto`` (a group boundary) to the firmware."""
        moves = [m.to_wire() for m in self.plan[self.committed : upto]]
        self.committed = upto
        self.feed.commit(moves, last=upto >= len(self.plan))
        self._committed_event.set()

    async def wait_commit(self) -> None:
        """Until the next commit."""
        self._committed_event.clear()
        await self._committed_event.wait()

    def release_fence(self) -> None:
        self.fence = None
        self._fence_event.set()

    async def wait_fence(self, timeout_s: float) -> None:
        """Until the fence is released (at most ``timeout_s``)."""
        self._fence_event.clear()
        if self.fence is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._fence_event.wait(), timeout_s)


async def commit_when_due(run: AnytimeRun) -> None:
    """Commit the plan's next group the moment it is due (never past a refinement being
    journaled), until every move is committed; then close the feed."""
    loop = asyncio.get_running_loop()
    while run.uncommitted:
        run.timeline.observe(run.feed.last_group)
        due = run.timeline.deadline(run.committed)
        now = loop.time()
        if due > now:
            await asyncio.sleep(min(due - now, COMMIT_POLL_S))
            if loop.time() >= due:
                run.timeline.wake_lag_s = max(run.timeline.wake_lag_s, loop.time() - due)
            continue
        upto = group_ends(run.plan, run.committed)[0]
        if run.fence is not None and upto > run.fence and now < run.fence_until:
            # a search from the fence, or its result being journaled: it was given until
            # then (a wasted search costs more robot time than a late commit risks)
            await run.wait_fence(run.fence_until - now)
            continue
        logger.debug(
            "job %s: commit after move %d: %.1f ms before the motors run dry",
            run.job.id,
            run.committed,
            1000 * (run.timeline.end(run.committed) - loop.time()),
        )
        run.commit(upto)
    if not run.feed.closed:  # a refinement found the cube solved after the moves sent
        run.feed.commit([], last=True)


class Anytime:
    """Runs a job's solve and execution the anytime way (see the module docstring).

    ``first_solution(cube, budget_s, **engine_options)`` is the pipeline's solve (the
    configured engine and fallbacks; :class:`JobError` when there is none).
    """

    def __init__(
        self,
        ctx: Context,
        executor: Executor,
        planner: Planner,
        solver: Solver,
        first_solution: Callable[..., Solution],
    ) -> None:
        self.ctx = ctx
        self.executor = executor
        self.planner = planner
        self.solver = solver
        self.first_solution = first_solution
        self.cost = ctx.config.cost_model
        #: the last job's run (for tests and the bench)
        self.last: AnytimeRun | None = None
        #: what the jobs so far measured (a refinement's overhead, the host's wake-up lag, how
        #: early reports came): the next job starts from the worst, slowly forgotten
        self._learnt: tuple[float, ...] = (MIN_OVERHEAD_S, 0.0, 0.0)

    # === the job ==================================================================================

    async def run(self, job: Job, cube: Cube, offset: int) -> None:
        """Solve ``cube`` (the job's cube after its first ``offset`` moves) and execute the
        solution while searching for a faster remainder.

        What must happen before the first motor step is kept short: the firmware's STATUS
        (for the dispatch) is asked for while the first search runs, and the plan, the state
        EXECUTING and the dispatch are journaled in one transaction (the journal skips SOLVING,
        which lasts about a millisecond: a job that never reached the motors is closed at a
        restart whatever its state)."""
        link, journal = self.ctx.link, self.ctx.journal
        self.ctx.set_state(JobState.SOLVING)  # (journaled with the plan: EXECUTING)
        started = time.perf_counter()
        fetched = asyncio.ensure_future(link.status())
        try:
            head_start = self.ctx.config.solver.head_start_s
            # one worker: a budget of a few milliseconds is spent searching, not handing over
            solution = await asyncio.to_thread(self.first_solution, cube, head_start, threads=1)
            program = self._plan(solution.moves)
            status = await fetched
        except LinkError as exc:  # as the executor's first STATUS would
            raise JobError(ErrorCode.FIRMWARE, str(exc)) from exc
        finally:
            if not fetched.done():
                fetched.cancel()
                await asyncio.gather(fetched, return_exceptions=True)
        solve_s = time.perf_counter() - started
        job.stage_times["solve"] = round(job.stage_times.get("solve", 0.0) + solve_s, 4)
        previous = await self._previous_moves(job, offset)
        job.program = program
        job.face_moves = previous + program.face_moves
        job.moves_total = offset + len(program.moves)
        job.moves_done = offset
        dispatch = (status.boot_id, status.last_received + 1, offset) if program.moves else None
        writing = time.perf_counter()
        await journal.call(
            journal.sync.record_plan,
            job.id,
            format_moves(solution.moves),
            {**solution.to_dict(), "program": program.to_dict(), "anytime": True},
            str(program),
            _rows(program.moves),
            state=JobState.EXECUTING if program.moves else None,
            dispatch=dispatch,
        )
        solved = solution_payload(job.id, solution, program.to_dict(), anytime=True)
        self.ctx.out.event(EventName.SOLUTION, solved)
        if not program.moves:
            await journal.call(journal.sync.record_stage_time, job.id, "solve", solve_s)
            return
        self.ctx.set_state(JobState.EXECUTING)
        plan = list(program.moves)
        timeline = Timeline(lambda: link.latency_s, move_durations(plan, self.cost))
        run = AnytimeRun(job, offset, cube, plan, timeline)
        # a refinement's hand-back, planning and journaling: as the jobs before measured it,
        # and at least twice the write just made
        overhead, timeline.wake_lag_s, timeline.overstated_s = self._learnt
        run.overhead_s = max(overhead, 2 * (time.perf_counter() - writing))
        self.last = run
        timeline.started_at = asyncio.get_running_loop().time()
        run.commit(self._first_commit(run))
        refiner = asyncio.create_task(self._refine(run, solve_s), name=f"anytime-refine {job.id}")
        try:
            await self.executor.execute(job, run.feed, offset, dispatched=status)
        finally:
            refiner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await refiner
            self._learnt = tuple(  # the worst so far, forgotten slowly
                max(DECAY * before, now)
                for before, now in zip(
                    self._learnt,
                    (run.overhead_s, timeline.wake_lag_s, timeline.overstated_s),
                    strict=True,
                )
            )
            logger.info(
                "job %s: anytime: %d searches, %d refinements, %d gaps; lead %.1f ms "
                "(link latency %.1f, wake lag %.1f, reports early by %.1f a group)",
                job.id,
                run.searches,
                run.refinements,
                run.feed.gaps,
                1000 * timeline.lead_s(),
                1000 * link.latency_s,
                1000 * timeline.wake_lag_s,
                1000 * timeline.overstated_s,
            )

    def _first_commit(self, run: AnytimeRun) -> int:
        """The fewest whole groups that keep the motors busy longer than the lead time."""
        ends = group_ends(run.plan, 0)
        lead = run.timeline.lead_s()
        for upto in ends:
            if sum(run.timeline.durations[:upto]) > lead:
                return upto
        return len(run.plan)

    # === searching while the motors turn ==========================================================

    async def _refine(self, run: AnytimeRun, solve_s: float) -> None:
        """Commit each group when it is due (:func:`commit_when_due`) and, meanwhile, search
        for faster remainders. Each search starts from the plan's state after ``target``
        moves and ends when move ``target + 1`` is due; the first from the committed moves,
        each next one from further ahead so that it may run about twice as long (a search
        that restarts with the same short budget finds the same plan again)."""
        loop = asyncio.get_running_loop()
        journal = self.ctx.journal
        committer = asyncio.create_task(commit_when_due(run), name=f"anytime-commit {run.job.id}")
        try:
            await journal.call(journal.sync.record_stage_time, run.job.id, "solve", solve_s)
            # the first search: from the state after the first group or two, for about as long
            # as a quarter turn; the later ones from further ahead, each about twice as long
            wanted, after = self.cost.quarter_turn_s, -1
            while not committer.done():
                run.timeline.observe(run.feed.last_group)
                target = self._target(run, wanted, after, loop.time())
                if target is None:
                    break
                budget = run.timeline.deadline(target) - loop.time() - run.overhead_s
                if budget < MIN_SEARCH_S:
                    await run.wait_commit()
                    continue
                await self._improve(run, budget, target)
                wanted, after = GROWTH * budget, target
            await committer
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must not stop the motors: the plan as it stands is valid
            logger.exception(
                "job %s: anytime refinement failed; executing the plan as is", run.job.id
            )
            run.release_fence()
            await committer
        finally:
            committer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await committer

    def _target(self, run: AnytimeRun, wanted_s: float, after: int, now: float) -> int | None:
        """The first group end past ``after`` (the last search's start) and not before the
        committed moves whose search may run ``wanted_s`` (the last one before the plan's end,
        if none may); ``None``: nothing left to search."""
        ends = [run.committed, *group_ends(run.plan, run.committed)]
        ends = [e for e in ends if after < e < len(run.plan)]
        if not ends:
            return None
        for end in ends:
            if run.timeline.deadline(end) - now - run.overhead_s >= wanted_s:
                return end
        return ends[-1]

    async def _improve(self, run: AnytimeRun, budget_s: float, target: int) -> None:
        """One search from the plan's state after ``target`` moves; a faster remainder replaces
        the moves after them (journaled, then announced). Nothing past ``target`` is committed
        meanwhile, until the time the search was planned to end with its result journaled."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        cube = run.cube_after(target)
        run.searches += 1
        run.fence, run.fence_until = target, began + budget_s + run.overhead_s
        try:
            found = await asyncio.to_thread(self._search, cube, budget_s, target)
            await self._apply(run, target, found, budget_s, began)
        finally:
            run.release_fence()
        run.overhead_s = max(run.overhead_s, loop.time() - began - budget_s)

    async def _apply(
        self, run: AnytimeRun, target: int, found: Solution | None, budget_s: float, began: float
    ) -> None:
        """Take a search's result: a faster remainder from move ``target`` replaces the plan's,
        unless moves past ``target`` were committed meanwhile."""
        loop = asyncio.get_running_loop()
        searched = loop.time() - began
        logger.debug(
            "job %s: searched %.1f ms of a %.1f ms budget from move %d (%d committed)",
            run.job.id,
            1000 * searched,
            1000 * budget_s,
            target,
            run.committed,
        )
        if found is None or run.committed > target:  # nothing, or too late to use it
            return
        try:
            candidate = self.planner.plan(found.moves)
        except PlanError as exc:
            logger.info(
                "job %s: a refinement cannot be planned (%s); kept the plan", run.job.id, exc
            )
            return
        current = self._remainder_s(run.plan[target:])
        better = candidate.estimate_s if candidate.moves else 0.0
        logger.debug(
            "job %s: after move %d: remainder %.3f s, found %.3f s (%d moves)",
            run.job.id,
            target,
            current,
            better,
            len(candidate.moves),
        )
        if better < current - 1e-9:
            await self._replace(run, target, candidate, current - better, searched)

    def _search(self, cube: Cube, budget_s: float, kept_htm: int) -> Solution | None:
        """The robot-time search from ``cube`` for ``budget_s`` (in a worker thread)."""
        config = self.ctx.config
        cfg = config.solver
        options: dict[str, Any] = {
            "budget_s": budget_s,
            "timeout_s": budget_s,
            "cost_model": config.cost_model,
            # one worker: the other core keeps the event loop (journal, link) on time; measured
            # on the bench, two workers gave no faster plans but later commits
            "threads": 1,
        }
        if cfg.max_length is not None:
            options["max_length"] = max(0, cfg.max_length - kept_htm)
        if config.motors.missing:
            options["faces"] = [f.name for f in sorted(config.motors.faces)]
        try:
            return self.solver(cube, cfg.engine, **options)
        except CubeError as exc:  # nothing within the budget: the plan stays
            logger.debug("anytime search from %s: %s", cube.to_facelets(), exc)
            return None

    def _remainder_s(self, moves: Sequence[PlannedMove]) -> float:
        return self.cost.estimate([m.as_move() for m in moves]) if moves else 0.0

    async def _replace(
        self,
        run: AnytimeRun,
        target: int,
        candidate: MotorProgram,
        saved_s: float,
        searched_s: float,
    ) -> None:
        """The moves after ``target`` become ``candidate``: journaled while nothing past
        ``target`` may be committed, then in the plan."""
        job = run.job
        plan = run.plan[:target] + list(candidate.moves)
        program = self._combined(plan, candidate)
        keep = run.offset + target
        journal = self.ctx.journal
        run.fence_until = math.inf  # nothing past the fence until the journal has it
        await journal.call(
            journal.sync.record_refinement,
            job.id,
            keep,
            format_moves(program.source),
            {"engine": "twophase", "program": program.to_dict(), "anytime": True},
            str(program),
            _rows(candidate.moves),
        )
        run.plan = plan
        run.timeline.durations = move_durations(plan, self.cost)
        run.refinements += 1
        job.program = program
        job.face_moves = job.face_moves[:keep] + candidate.face_moves
        job.moves_total = run.offset + len(plan)
        refined: SolutionRefinedPayload = {
            "job_id": job.id,
            "refinement": run.refinements,
            "kept": keep,
            "moves": format_moves(program.source),
            "htm": len(plan),
            "robot_time_s": round(program.estimate_s, 4),
            "saved_s": round(saved_s, 4),
            "search_ms": round(1000 * searched_s, 1),
            "program": program.to_dict(),
        }
        self.ctx.out.event(EventName.SOLUTION_REFINED, refined)
        self.ctx.publish_status()

    def _combined(self, plan: list[PlannedMove], remainder: MotorProgram) -> MotorProgram:
        """The plan as it stands as one program (its source: the physical turns)."""
        turns = tuple(m.as_move() for m in plan)
        return MotorProgram(
            tuple(plan),
            turns,
            remainder.orientation,
            remainder.replaced_turns,
            self.cost.estimate(turns),
            sum(1 for m in plan if not m.simultaneous_with_next),
            remainder.notes,
        )

    # === helpers ==================================================================================

    def _plan(self, moves: Sequence[Move]) -> MotorProgram:
        try:
            return self.planner.plan(moves)
        except PlanError as exc:
            raise JobError(ErrorCode.PLAN_FAILED, str(exc)) from exc

    async def _previous_moves(self, job: Job, offset: int) -> tuple[Move, ...]:
        if not offset:
            return ()
        journal = self.ctx.journal
        previous = await journal.call(journal.sync.moves, job.id)
        return tuple(face_move(m.face, m.turns) for m in previous[:offset])

    async def _journal_state(self, job: Job, state: JobState) -> None:
        journal = self.ctx.journal
        await journal.call(journal.sync.set_state, job.id, state)


def _rows(moves: Sequence[PlannedMove]) -> list[tuple[str, int, int, bool]]:
    return [(m.face.name, m.turns, m.motor, m.simultaneous_with_next) for m in moves]
