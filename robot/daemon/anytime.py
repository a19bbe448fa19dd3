"""Anytime solving (``[solver] anytime = true``): the motors start on the first solution and the
search goes on while they turn, from the cube as it will be after moves of the plan.

A longer search finds a plan the robot executes faster, but a fixed budget is paid before the
first move. Here the head start (``[solver] head_start_s``, 3 ms on both worker threads) is
the only search the robot waits for; then two tasks share the job:

* **The committer** (:func:`~robot.daemon.committer.commit_when_due`, with the timeline and
  the run's state in :mod:`robot.daemon.committer`) hands the plan's next motion group to the
  firmware (appended to the running execution, :meth:`FirmwareLink.extend`) at the last moment
  that keeps the firmware's queue from running dry: the predicted end of the committed moves (the
  cost model's group times, re-anchored on each group the firmware reports executed) less the
  *lead time* — how long a committed move may take to reach the firmware (the link's measured
  latency, :attr:`FirmwareLink.latency_s`), how late the host has woken up, and how much sooner
  than the cost model the reports have come. So only the moves the firmware needs are sent.
* **The searcher** runs the robot-time search (the profile's cost model) on both cores (at
  the process's priority, :data:`~robot.daemon.sessions.SEARCH_NICE`), through one engine
  search session
  (:meth:`~solver.engines.twophase.engine.TwoPhaseSolver.session`: tables and threads kept,
  each search a restart from a new state until an absolute deadline). It searches from the
  plan's state after ``target`` moves for a remainder faster than the plan's (the plan's
  remainder is the search's bound), until move ``target + 1`` is due less how late searches
  have handed back lately and the longest journal write measured (each job starts from the
  worst the jobs before measured, slowly forgotten). The first search starts right after the
  moves committed first (a plan's first groups decide most of what can be saved); each next
  one starts further ahead and may run about twice as long as the one before, up to
  :data:`MAX_SEARCH_S` (a search restarted with the same short budget finds the same plan
  again). A search never holds a due commit back: a result that comes too late is dropped.

A remainder faster than the plan's **replaces** the moves after ``target`` if the longest
journal write measured fits before move ``target + 1`` is due: journaled first
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
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from firmware_protocol.errors import LinkError
from firmware_protocol.messages import Status
from robot.daemon.committer import (
    AnytimeRun,
    FirstSearch,
    SearchOutcome,
    Timeline,
    commit_when_due,
    group_ends,
    move_durations,
)
from robot.daemon.context import Context, Job, face_move
from robot.daemon.events import (
    ErrorCode,
    EventName,
    JobState,
    SolutionRefinedPayload,
    solution_payload,
)
from robot.daemon.execution import Executor
from robot.daemon.sessions import HEAD_THREADS, Sessions, make_sessions
from robot.errors import JobError, PlanError
from robot.planner import MotorProgram, PlannedMove, Planner
from solver.cube.facelets import Cube
from solver.cube.notation import Move, format_moves
from solver.engines.twophase.session import Pending, SearchSession
from solver.errors import CubeError
from solver.solution import Solution

__all__ = [
    "Anytime",
    "AnytimeRun",
    "FirstSearch",
    "SearchOutcome",
    "Timeline",
    "commit_when_due",
    "group_ends",
    "move_durations",
]

logger = logging.getLogger(__name__)

#: A search shorter than this is not started: the next group is committed at once instead.
MIN_SEARCH_S = 0.004
#: How much of the latest search's lateness the next one still assumes, unless it is later:
#: a result that comes too late to be journaled wastes the whole search, ending a search a
#: little sooner costs little.
LATE_DECAY = 0.8
#: How much of the worst delays measured in a job the next job still assumes.
DECAY = 0.9
#: The first search, from the moves committed first, runs for at least this long if it can
#: (seconds): measured offline, a search from the state after the first group saves most of
#: what any search during the motion saves (a plan's first moves decide it most), so even a
#: short one there beats a longer one from further ahead (20 ms before: under load the first
#: group's window, less the lead and the overheads, was often shorter, and the first search
#: went to the second group).
FIRST_SEARCH_S = 0.008
#: A head start that holds no solution at its deadline (its threads started late: under load,
#: 7 jobs in 30 at load 5) goes on until its first one, at most this long after the deadline,
#: rather than hand over to the pipeline's first solution (a search from scratch, and not the
#: fastest plan the robot-time search finds first: 0.1-0.4 s more motor time in those jobs).
HEAD_TIMEOUT_S = 1.0
#: Each search may run this many times as long as the one before (from further ahead)...
GROWTH = 2.0
#: ... up to this long (seconds): then the searches go on from further ahead, each from a
#: plan as good as the ones before made it.
MAX_SEARCH_S = 0.4


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
        first_solution: Callable[..., Solution],
    ) -> None:
        self.ctx = ctx
        self.executor = executor
        self.planner = planner
        self.first_solution = first_solution
        self._sessions: Sessions | None = None
        #: the STATUS asked for at a job's start (:meth:`prefetch_status`), by job id
        self._prefetched: tuple[str, asyncio.Future[Status]] | None = None
        self._lock = threading.Lock()
        self.cost = ctx.config.cost_model
        #: the last job's run (for tests and the bench)
        self.last: AnytimeRun | None = None
        #: what the jobs so far measured (how late searches hand back, the longest journal
        #: write, the host's wake-up lag, how early reports came): the next job starts from
        #: the worst, slowly forgotten
        self._learnt: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)

    # === the job ==================================================================================

    async def run(self, job: Job, cube: Cube, offset: int) -> None:
        """Solve ``cube`` (the job's cube after its first ``offset`` moves) and execute the
        solution while searching for a faster remainder.

        What must happen before the first motor step is kept short (each step is marked on
        the job, :attr:`Job.marks`): the head start runs on the warm session's threads until
        ``head_start_s`` after the job entered SOLVING (an absolute deadline: a thread that
        starts late does not end late) while the firmware's STATUS (for the dispatch) is
        asked for; the plan, the state EXECUTING and the dispatch are journaled in one
        transaction (the journal skips SOLVING, which lasts milliseconds: a job that never
        reached the motors is closed at a restart whatever its state); the first moves go to
        the firmware at once, and the ``solution`` event and the status only after them."""
        journal = self.ctx.journal
        job.mark("solving")
        self.ctx.set_state(JobState.SOLVING)  # (journaled with the plan: EXECUTING)
        started = time.perf_counter()
        fetched = self._status(job)
        try:
            solution = await self._head_start(cube, started)
            job.mark("searched")
            program = self._plan(solution.moves)
            job.mark("planned")
            status = await fetched
            job.mark("status")
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
        run = self._new_run(job, offset, cube, list(program.moves)) if program.moves else None
        # the first search (from the state after the first commit, on one thread while the
        # first moves go out, the other once they are) starts once the plan is journaled:
        # the first commit's groups and that search decide most of what can be saved
        early: _Started | None = None
        try:
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
            wrote = time.perf_counter() - writing
            job.mark("journaled")
            if run is None:
                self._announce(job, solution, program)
                await journal.call(journal.sync.record_stage_time, job.id, "solve", solve_s)
                return
            run.write_s = max(run.write_s, wrote)
            # the first search starts once the plan is journaled: beside the write (an fsync)
            # it slowed the write, and so the first step, by about 5 ms on an idle machine
            # (17.2 against 10.4 ms visible at the median), for 5 ms more of search
            early = self._start_first(run)
            # the motors start once the first moves arrive: counted from now (the first
            # search's deadline was counted from before the write, on the safe side)
            run.timeline.started_at = asyncio.get_running_loop().time()
            assert run.first is not None
            run.commit(run.first.commit_moves)
            self.ctx.state = JobState.EXECUTING  # announced once the first moves are sent
            asyncio.get_running_loop().call_soon(self._announce, job, solution, program)
            refiner = asyncio.create_task(self._refine(run, early), name=f"anytime-refine {job.id}")
            try:
                job.mark("sending")  # the executor writes the first moves before it waits
                await self.executor.execute(job, run.feed, offset, dispatched=status)
            finally:
                refiner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refiner
                self._learn(run)
                # (not while the motors turn: a journal write then delays the refinements')
                await journal.call(journal.sync.record_stage_time, job.id, "solve", solve_s)
        finally:
            if early is not None and not early.task.done():
                early.release()  # (its threads end at its deadline)
                early.task.cancel()
                await asyncio.gather(early.task, return_exceptions=True)

    def _new_run(self, job: Job, offset: int, cube: Cube, plan: list[PlannedMove]) -> AnytimeRun:
        """The job's run: its timeline counted from now (until the first moves go out), what
        the jobs before measured, and how many moves the first commit holds."""
        timeline = Timeline(lambda: self.ctx.link.latency_s, move_durations(plan, self.cost))
        run = AnytimeRun(job, offset, cube, plan, timeline)
        # a refinement's hand-back, planning and journaling: as the jobs before measured it
        # (and at least the plan's own write, once made)
        run.late_s, run.write_s, timeline.wake_lag_s, timeline.overstated_s = self._learnt
        self.last = run
        timeline.started_at = asyncio.get_running_loop().time()
        first = self._first_commit(run)
        run.first = FirstSearch(_groups(plan, first), 1000 * timeline.lead_s(), first)
        return run

    def _start_first(self, run: AnytimeRun) -> _Started | None:
        """The first search, from the state after the first commit, started now (``None``:
        the sessions are not warm yet, or its window is too short)."""
        assert run.first is not None
        target = run.first.commit_moves
        if self._sessions is None or target >= len(run.plan):
            return None
        now = asyncio.get_running_loop().time()
        deadline = run.timeline.deadline(target) - run.overhead_s
        if deadline - now < MIN_SEARCH_S:
            return None
        # one thread now, the other once the first moves are out (the plan's journal write
        # and the first moves' way to the firmware want a core)
        return self._start_search(run, self._sessions.refine, deadline, target, held=1)

    def prefetch_status(self, job: Job) -> None:
        """Ask the firmware for the STATUS that ``job``'s first dispatch is journaled with, now
        (while the given state is journaled and validated): nothing is sent to the firmware
        before that dispatch, so it is as current then as one asked for later."""
        self._drop_prefetched()
        fetched = asyncio.ensure_future(self.ctx.link.status())
        fetched.add_done_callback(_retrieved)  # a job that fails before it never reads it
        self._prefetched = (job.id, fetched)

    def _status(self, job: Job) -> asyncio.Future[Status]:
        """The firmware's STATUS for ``job``'s dispatch: the one asked for at its start, or a
        new request."""
        prefetched, self._prefetched = self._prefetched, None
        if prefetched is not None and prefetched[0] == job.id:
            return prefetched[1]
        if prefetched is not None:
            prefetched[1].cancel()
        return asyncio.ensure_future(self.ctx.link.status())

    def _drop_prefetched(self) -> None:
        if self._prefetched is not None:
            self._prefetched[1].cancel()
            self._prefetched = None

    async def _head_start(self, cube: Cube, started: float) -> Solution:
        """The first solution: the warm session's search until ``head_start_s`` after
        ``started`` (:func:`time.perf_counter`, the clock of :func:`time.monotonic` here;
        holding none then, until its first, :data:`HEAD_TIMEOUT_S` at most), or, with no head
        start, a robot with a face missing, or nothing found by then, the pipeline's first
        solution within the length limit."""
        head_start = self.ctx.config.solver.head_start_s
        if head_start > 0 and not self.ctx.config.motors.missing:
            session = (await self._warm()).head
            deadline = time.monotonic() + head_start - (time.perf_counter() - started)
            found = await asyncio.wrap_future(
                session.submit(
                    cube,
                    deadline,
                    max_length=self.ctx.config.solver.max_length,
                    timeout_at=deadline + HEAD_TIMEOUT_S,
                )
            )
            if found is not None:
                return found
            logger.info(
                "head start: nothing found in %.1f ms; the first solution",
                1e3 * (head_start + HEAD_TIMEOUT_S),
            )
        return await asyncio.to_thread(self.first_solution, cube, 0.0, threads=HEAD_THREADS)

    def _announce(self, job: Job, solution: Solution, program: MotorProgram) -> None:
        """The ``solution`` event and the state (after the first moves went out)."""
        solved = solution_payload(job.id, solution, program.to_dict(), anytime=True)
        self.ctx.out.event(EventName.SOLUTION, solved)
        if program.moves:
            self.ctx.set_state(JobState.EXECUTING)

    def _learn(self, run: AnytimeRun) -> None:
        """Keep what the run measured for the next job (the worst so far, slowly forgotten),
        and log it."""
        timeline, link = run.timeline, self.ctx.link
        self._learnt = tuple(
            max(DECAY * before, now)
            for before, now in zip(
                self._learnt,
                (run.late_s, run.write_s, timeline.wake_lag_s, timeline.overstated_s),
                strict=True,
            )
        )
        marks = run.job.marks
        logger.info(
            "job %s: anytime: %d searches, %d refinements saving %.3f s (%d too late, %d "
            "dropped, %d commits waited for a write), %d gaps; lead %.1f ms (link latency "
            "%.1f, wake lag %.1f, reports early by %.1f a group); searches hand back %.1f ms "
            "late, a journal write takes %.1f ms at most; before the first step: %s; the "
            "first commit and search: %s",
            run.job.id,
            run.searches,
            run.refinements,
            run.saved_s,
            run.late_searches,
            run.dropped,
            run.late_writes,
            run.feed.gaps,
            1000 * timeline.lead_s(),
            1000 * link.latency_s,
            1000 * timeline.wake_lag_s,
            1000 * timeline.overstated_s,
            1000 * run.late_s,
            1000 * run.write_s,
            ", ".join(
                f"{step} {(at - marks['solving']) / 1e6:.1f} ms"
                for step, at in marks.items()
                if "solving" in marks and step != "solving"
            ),
            run.first.to_dict() if run.first is not None else None,
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

    def warm(self) -> Sessions:
        """The engine's search sessions for the head start and the refinements, ready: options
        checked, robot-metric tables loaded, worker threads started (a search of each), the
        hot tables' huge-page copies begun. Blocks (the daemon runs it in a thread at start,
        after the tables; else the first job does)."""
        with self._lock:
            if self._sessions is not None:
                return self._sessions
            sessions = make_sessions(self.ctx.config)
            self._sessions = sessions
            return sessions

    async def _warm(self) -> Sessions:
        return self._sessions if self._sessions is not None else await asyncio.to_thread(self.warm)

    async def _refine(self, run: AnytimeRun, early: _Started | None = None) -> None:
        """Commit each group when it is due (:func:`commit_when_due`) and, meanwhile, search
        for faster remainders. Each search starts from the plan's state after ``target``
        moves and ends when move ``target + 1`` is due, less a refinement's overhead; the
        first runs about as long as a quarter turn, each next one from further ahead may run
        up to twice as long as the one before (at most :data:`MAX_SEARCH_S`): a search of
        the same length from a similar state finds about the same plan. ``early``: the first
        search, started before the first commit."""
        loop = asyncio.get_running_loop()
        committer = asyncio.create_task(commit_when_due(run), name=f"anytime-commit {run.job.id}")
        try:
            session = (await self._warm()).refine
            if early is not None:
                await asyncio.sleep(self.ctx.link.latency_s / 2)  # (as below)
                early.release()
                wanted, after = self._grown(early, await self._improve(run, early)), early.target
            else:
                # the first moves reach the firmware before the searches take both cores:
                # 2.5 against 7.2 ms from the write to the (simulated) firmware's read, 30
                # jobs, load 4
                await asyncio.sleep(self.ctx.link.latency_s / 2)
                wanted, after = FIRST_SEARCH_S, -1
            while not committer.done():
                run.timeline.observe(run.feed.last_group)
                now = loop.time()
                target = self._target(run, wanted, after, now)
                if target is None:
                    break
                deadline = run.timeline.deadline(target) - run.overhead_s
                if deadline - now < MIN_SEARCH_S:
                    if run.first is not None and not run.first.start_groups:
                        run.first.outcome = SearchOutcome.TOO_SHORT
                    await run.wait_commit()
                    continue
                started = self._start_search(run, session, deadline, target)
                wanted, after = self._grown(started, await self._improve(run, started)), target
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
        committed moves whose search may run ``wanted_s``; else the one whose search may run
        longest (the last one before the plan's end). ``None``: nothing left to search."""
        ends = [run.committed, *group_ends(run.plan, run.committed)]
        ends = [e for e in ends if after < e < len(run.plan)]
        if not ends:
            return None
        for end in ends:
            if run.timeline.deadline(end) - now - run.overhead_s >= wanted_s:
                return end
        return ends[-1]

    @staticmethod
    def _grown(started: _Started, searched: float) -> float:
        """How long the next search may run after ``started`` searched ``searched`` seconds:
        twice as long if it used its window (one that ended sooner covered its state)."""
        window = started.deadline - started.began
        ran = min(searched, window)
        grown = GROWTH * ran if searched >= 0.9 * window else ran
        return min(MAX_SEARCH_S, max(FIRST_SEARCH_S, grown))

    def _start_search(
        self,
        run: AnytimeRun,
        session: SearchSession,
        deadline: float,
        target: int,
        held: int = 0,
    ) -> _Started:
        """Start one search from the plan's state after ``target`` moves until ``deadline``
        (loop time) for a remainder faster than the plan's (see :meth:`_improve`; ``held``
        threads wait for :meth:`_Started.release`)."""
        began = asyncio.get_running_loop().time()
        current = self._remainder_s(run.plan[target:])
        run.searches += 1
        run.fence = target
        first = run.first is not None and not run.first.start_groups
        if run.first is not None and first:
            run.first.start_groups = _groups(run.plan, target)
            run.first.window_ms = 1000 * (deadline - began)
            run.first.outcome = SearchOutcome.NOT_STARTED
        pending, task = self._search(
            session, run.cube_after(target), deadline, current, target, held
        )
        return _Started(target, deadline, began, current, task, first, pending)

    async def _improve(self, run: AnytimeRun, started: _Started) -> float:
        """Wait for a search (:meth:`_start_search`); a faster remainder it found replaces the
        moves after its start (journaled, then announced) if that is still in time. Nothing
        past its start is committed while its result is journaled. Returns how long it
        searched."""
        loop = asyncio.get_running_loop()
        target, deadline, began = started.target, started.deadline, started.began
        first = run.first if started.first else None
        try:
            found = await started.task
            searched = loop.time() - began
            if searched >= deadline - began:  # (one that covered its state ends sooner)
                run.late_s = max(LATE_DECAY * run.late_s, loop.time() - deadline)
            saved = run.saved_s
            outcome = await self._apply(run, target, found, started.bound_s, deadline, searched)
            if first is not None:
                first.searched_ms, first.outcome = 1000 * searched, outcome
                first.saved_s = run.saved_s - saved
        finally:
            run.release_fence()
        return searched

    def _search(
        self,
        session: SearchSession,
        cube: Cube,
        deadline: float,
        bound_s: float,
        kept_htm: int,
        held: int = 0,
    ) -> tuple[Pending | None, asyncio.Future[Solution | None]]:
        """The robot-time search from ``cube`` until ``deadline`` (loop time: the default
        event loop's clock is :func:`time.monotonic`, the session's) for a solution faster than
        ``bound_s``, started on the session's threads (``held`` of them wait for
        :meth:`Pending.release`): the last to end wakes the loop (one hand-back, no thread in
        between), which picks the best (Python, the GIL held: kept out of the search threads,
        which may run at a lower priority)."""
        max_length = self.ctx.config.solver.max_length
        try:
            pending = session.start(
                cube,
                deadline,
                bound_s=bound_s,
                max_length=None if max_length is None else max(0, max_length - kept_htm),
                held=held,
            )
        except CubeError as exc:  # nothing to search: the plan stays
            logger.debug("anytime search from %s: %s", cube.to_facelets(), exc)
            nothing: asyncio.Future[Solution | None] = asyncio.get_running_loop().create_future()
            nothing.set_result(None)
            return None, nothing
        return pending, asyncio.ensure_future(_result(pending, cube))

    async def _apply(
        self,
        run: AnytimeRun,
        target: int,
        found: Solution | None,
        current: float,
        deadline: float,
        searched: float,
    ) -> SearchOutcome:
        """Take a search's result: a faster remainder from move ``target`` replaces the plan's
        if no move past ``target`` was committed meanwhile and the worst journal write measured
        fits before the next commit is due. Returns what became of it."""
        loop = asyncio.get_running_loop()
        logger.debug(
            "job %s: searched %.1f ms from move %d (%d committed), deadline %+.1f ms: %s",
            run.job.id,
            1000 * searched,
            target,
            run.committed,
            1000 * (loop.time() - deadline),
            "nothing faster" if found is None else f"{found.robot_time_s:.3f} s",
        )
        if found is None:
            return SearchOutcome.NOTHING_FASTER
        if run.committed > target:  # too late to use it
            run.late_searches += 1
            return SearchOutcome.TOO_LATE
        try:
            candidate = self.planner.plan(found.moves)
        except PlanError as exc:
            logger.info(
                "job %s: a refinement cannot be planned (%s); kept the plan", run.job.id, exc
            )
            return SearchOutcome.NOT_PLANNED
        better = candidate.estimate_s if candidate.moves else 0.0
        logger.debug(
            "job %s: after move %d: remainder %.3f s, found %.3f s (%d moves)",
            run.job.id,
            target,
            current,
            better,
            len(candidate.moves),
        )
        if not better < current - 1e-9:
            return SearchOutcome.NOTHING_FASTER
        left = run.timeline.deadline(target) - loop.time()
        if left < run.write_s:
            logger.debug(
                "job %s: a refinement saving %.3f s dropped: %.1f ms left before the commit, "
                "a journal write may take %.1f ms",
                run.job.id,
                current - better,
                1000 * left,
                1000 * run.write_s,
            )
            run.dropped += 1
            return SearchOutcome.DROPPED
        await self._replace(run, target, candidate, current - better, searched)
        return SearchOutcome.LANDED

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
        run.journaling = True  # nothing past the fence until the journal has it
        writing = time.perf_counter()
        await journal.call(
            journal.sync.record_refinement,
            job.id,
            keep,
            format_moves(program.source),
            {"engine": "twophase", "program": program.to_dict(), "anytime": True},
            str(program),
            _rows(candidate.moves),
        )
        run.write_s = max(run.write_s, time.perf_counter() - writing)
        run.plan = plan
        run.timeline.durations = move_durations(plan, self.cost)
        run.refinements += 1
        run.saved_s += saved_s
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


@dataclass
class _Started:
    """A search during the motion, started (:meth:`Anytime._start_search`)."""

    #: the plan's moves before the state it searches from; its deadline and start (loop time)
    target: int
    deadline: float
    began: float
    #: the plan's remainder from there (the search's bound, seconds)
    bound_s: float
    task: asyncio.Future[Solution | None]
    #: the job's first search during the motion (:attr:`AnytimeRun.first` records it)
    first: bool = False
    pending: Pending | None = None

    def release(self) -> None:
        """Start the threads held back (:meth:`SearchSession.start`)."""
        if self.pending is not None:
            self.pending.release()


async def _result(pending: Pending, cube: Cube) -> Solution | None:
    """A started search's result, once its threads have ended (``None``: nothing faster)."""
    try:
        await asyncio.wrap_future(pending.done)
        return pending.result()
    except CubeError as exc:  # nothing found: the plan stays
        logger.debug("anytime search from %s: %s", cube.to_facelets(), exc)
        return None


def _retrieved(future: asyncio.Future[Status]) -> None:
    """Mark a prefetched STATUS's failure as seen (the job reads it, if it gets that far)."""
    if not future.cancelled():
        future.exception()


def _groups(plan: Sequence[PlannedMove], moves: int) -> int:
    """How many motion groups the plan's first ``moves`` moves (a group boundary) make."""
    return sum(1 for m in plan[:moves] if not m.simultaneous_with_next)


def _rows(moves: Sequence[PlannedMove]) -> list[tuple[str, int, int, bool]]:
    return [(m.face.name, m.turns, m.motor, m.simultaneous_with_next) for m in moves]
