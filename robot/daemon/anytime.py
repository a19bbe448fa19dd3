"""Anytime solving (``[solver] anytime = true``): the motors start on the first solution and the
search goes on while they turn, from the cube as it will be after moves of the plan.

A longer search finds a plan the robot executes faster, but a fixed budget is paid before the
first move. Here the head start (on both worker threads: ``[solver] head_start_s``, 5 ms by
default, lengthened to ``first_step_s`` less the host's measured part of the time to the first
motor step, :meth:`Anytime.head_start_s`) is the only search the robot waits for; then two
tasks share the job:

* **The committer** (:func:`~robot.daemon.committer.commit_when_due`, with the timeline and
  the run's state in :mod:`robot.daemon.committer`) hands the plan's next motion group to the
  firmware (appended to the running execution, :meth:`FirmwareLink.extend`) at the last moment
  that keeps the firmware's queue from running dry: the predicted end of the committed moves (the
  cost model's group times, re-anchored on each group the firmware reports executed) less the
  *lead time* — how long a committed move may take to reach the firmware (the link's measured
  latency, :attr:`FirmwareLink.latency_s`), how late the host has woken up, and how much sooner
  than the cost model the reports have come. So only the moves the firmware needs are sent.
* **The searcher** (:class:`~robot.daemon.searcher.Searcher`) runs the robot-time search on
  both cores while the motors turn, from the plan's state after the committed moves, for a
  remainder faster than the plan's; one found in time replaces the moves not yet committed
  (journaled first, then announced: ``solution_refined``).

Here: the head start, the plan and its journal write, the first commit (the fewest groups
that keep the motors busy longer than the lead time), and what each job measured for the next
(how late searches hand back, the longest journal write, the host's wake-up lag, how early the
reports come: each job starts from the worst the jobs before measured, slowly forgotten).

The journal always holds the whole plan as it stands, so a crash mid-job resumes (``resume``)
from the executed moves with the moves planned after them, as for a fixed plan. The moves are
journaled as executed by the :class:`~robot.daemon.execution.Executor`, which also recovers
from firmware resets; an e-stop or abort ends the execution, and the search with it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from firmware_protocol.errors import LinkError
from firmware_protocol.messages import Status
from firmware_protocol.tasks import cancel_and_wait
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
from robot.daemon.events import ErrorCode, EventName, JobState, solution_payload
from robot.daemon.execution import Executor
from robot.daemon.searcher import Searcher, Started, group_count, journal_rows
from robot.daemon.sessions import HEAD_THREADS, Sessions, make_sessions
from robot.errors import JobError, PlanError
from robot.planner import MotorProgram, PlannedMove, Planner
from solver.cube.facelets import Cube
from solver.cube.notation import Move, format_moves
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

#: How much of the worst delays measured in a job the next job still assumes.
DECAY = 0.9
#: A head start that holds no solution at its deadline (its threads started late: under load,
#: 7 jobs in 30 at load 5) goes on until its first one, at most this long after the deadline,
#: rather than hand over to the pipeline's first solution (a search from scratch, and not the
#: fastest plan the robot-time search finds first: 0.1-0.4 s more motor time in those jobs).
HEAD_TIMEOUT_S = 1.0
#: ``[solver] first_step_s``: the head start is sized from the host's part of the time to the
#: first motor step in this many jobs before (:meth:`Anytime.head_start_s`) ...
OVERHEAD_JOBS = 16
#: ... once there are this many ...
OVERHEAD_MIN_JOBS = 3
#: ... so that this share of them would have reached the first step in time
OVERHEAD_QUANTILE = 0.75
#: A head start that handed back later than this after its deadline (it went on for its first
#: solution) counts as this late: the host's part, not the search's.
OVERHEAD_LATE_CAP_S = 0.002


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
        #: the STATUS asked for before a job's start (:meth:`prefetch_status`), by job id
        #: (``None``: the job is not made yet)
        self._prefetched: tuple[str | None, asyncio.Future[Status]] | None = None
        self._lock = threading.Lock()
        self.cost = ctx.config.cost_model
        self.searcher = Searcher(ctx, planner, self._warm)
        #: the last job's run (for tests and the bench)
        self.last: AnytimeRun | None = None
        #: what the jobs so far measured (how late searches hand back, the longest journal
        #: write, the host's wake-up lag, how early reports came): the next job starts from
        #: the worst, slowly forgotten
        self._learnt: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
        #: the host's part of the time to the first motor step in the last jobs (seconds:
        #: from the head start's deadline to the first moves written, and their way to the
        #: firmware), for ``first_step_s``
        self._overheads: deque[float] = deque(maxlen=OVERHEAD_JOBS)

    # === the job ==================================================================================

    async def run(self, job: Job, cube: Cube, offset: int) -> None:
        """Solve ``cube`` (the job's cube after its first ``offset`` moves) and execute the
        solution while searching for a faster remainder.

        What must happen before the first motor step is kept short (each step is marked on
        the job, :attr:`Job.marks`): the head start runs on the warm session's threads until
        ``head_start_s`` after the job entered SOLVING (an absolute deadline: a thread that
        starts late does not end late), the firmware's STATUS (for the dispatch) asked for
        before the job was journaled (:meth:`prefetch_status`); the plan, the state EXECUTING
        and the dispatch are journaled in one transaction (the journal skips SOLVING, which
        lasts milliseconds: a job that never reached the motors is closed at a restart
        whatever its state), and while that syncs the loop makes the run and prepares the
        first search; the first moves go to the firmware at once, then the first search's
        threads start, and the ``solution`` event and the status only after them."""
        journal = self.ctx.journal
        job.mark("solving")
        self.ctx.set_state(JobState.SOLVING)  # (journaled with the plan: EXECUTING)
        started = time.perf_counter()
        head_start = self.head_start_s()
        fetched = self._status(job)
        try:
            solution = await self._head_start(cube, started, head_start)
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
        # the plan, the state EXECUTING and the dispatch in one transaction (an fsync): while it
        # syncs the loop makes the run (its first commit) and prepares the first search (from
        # the state after the first commit; its threads start once the first moves are
        # written). Not before the sync: the transaction's statements want the GIL, and the
        # loop's Python work beside them made the write 1-2.5 ms longer (load 5-9)
        loop = asyncio.get_running_loop()
        syncing: asyncio.Future[None] = loop.create_future()

        def synced(*_: object) -> None:
            if not syncing.done():
                syncing.set_result(None)

        writing = time.perf_counter()
        written = asyncio.ensure_future(
            journal.call(
                journal.sync.record_plan,
                job.id,
                format_moves(solution.moves),
                {**solution.to_dict(), "program": program.to_dict(), "anytime": True},
                str(program),
                journal_rows(program.moves),
                state=JobState.EXECUTING if program.moves else None,
                dispatch=dispatch,
                syncing=lambda: loop.call_soon_threadsafe(synced),
            )
        )
        written.add_done_callback(synced)  # (a write that fails before its sync)
        run: AnytimeRun | None = None
        early: Started | None = None
        try:
            if program.moves:
                await syncing
                run = self._new_run(job, offset, cube, list(program.moves))
                run.head_start_s = head_start
                early = self.searcher.start_first(run, self._sessions)
            await written
            wrote = time.perf_counter() - writing
            job.mark("journaled")
            if run is None:
                self._announce(job, solution, program)
                await journal.call(journal.sync.record_stage_time, job.id, "solve", solve_s)
                return
            run.wrote(wrote)
            # the motors start once the first moves arrive: counted from now (the first
            # search's deadline was counted from before the write, on the safe side)
            run.timeline.started_at = loop.time()
            assert run.first is not None
            run.commit(run.first.commit_moves)
            self.ctx.state = JobState.EXECUTING  # announced once the first moves are sent
            loop.call_soon(self._announce, job, solution, program)
            refiner = asyncio.create_task(
                self.searcher.refine(run, early), name=f"anytime-refine {job.id}"
            )
            try:
                job.mark("sending")  # the executor writes the first moves before it waits
                self._overhead(job, started, head_start)
                await self.executor.execute(job, run.feed, offset, dispatched=status)
            finally:
                await cancel_and_wait(refiner)
                self._learn(run)
                # (not while the motors turn: a journal write then delays the refinements')
                await journal.call(journal.sync.record_stage_time, job.id, "solve", solve_s)
        finally:
            if not written.done():  # (cancelled: the write goes on in the journal's thread)
                written.cancel()
                await asyncio.gather(written, return_exceptions=True)
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
        run.first = FirstSearch(group_count(plan, first), 1000 * timeline.lead_s(), first)
        return run

    def prefetch_status(self) -> None:
        """Ask the firmware now for the STATUS that the next job's first dispatch is journaled
        with (the intake asks before it journals a new job; :meth:`claim_status` gives it to
        the job once made): nothing is sent to the firmware before that dispatch, so it is as
        current then as one asked for later, and its round trip (a request and a 36-byte
        STATUS on the serial line, 4 ms at 115200 baud) is over while the job and its scan are
        journaled, before the head start takes both cores (asked for once the job was made,
        it came 1-2 ms after the plan at the median)."""
        self._drop_prefetched()
        fetched = asyncio.ensure_future(self.ctx.link.status())
        fetched.add_done_callback(_retrieved)  # a job that fails before it never reads it
        self._prefetched = (None, fetched)

    def claim_status(self, job: Job) -> None:
        """``job`` takes the STATUS :meth:`prefetch_status` asked for (none: it asks its own)."""
        if self._prefetched is not None and self._prefetched[0] is None:
            self._prefetched = (job.id, self._prefetched[1])

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

    def head_start_s(self) -> float:
        """The next job's head start: ``[solver] head_start_s``; with ``first_step_s``,
        lengthened to that less the host's part of the time to the first motor step (its
        :data:`OVERHEAD_QUANTILE` over the last :data:`OVERHEAD_JOBS` jobs), so that the
        time the host leaves under the aim goes to the search that chooses the first moves."""
        solver = self.ctx.config.solver
        least, aim = solver.head_start_s, solver.first_step_s
        if aim <= 0 or least <= 0 or len(self._overheads) < OVERHEAD_MIN_JOBS:
            return least
        measured = sorted(self._overheads)
        overhead = measured[min(len(measured) - 1, int(OVERHEAD_QUANTILE * len(measured)))]
        return max(least, aim - overhead)

    def _overhead(self, job: Job, started: float, head_start: float) -> None:
        """Note the host's part of ``job``'s time to the first motor step: from the deadline of
        the head start begun at ``started`` (:func:`time.perf_counter`) to the first moves
        written (a hand-back later than :data:`OVERHEAD_LATE_CAP_S` counted as that: the search
        went on for its first solution), and half the link's smoothed round trip for their way
        to the firmware (its typical time, not its bound :attr:`FirmwareLink.latency_s`: the
        quantile over the jobs is the margin, and the bound's deviations counted it twice, the
        first step landing 1-1.5 ms under the aim at the median). Not when the job's marks are
        an earlier attempt's (a job solved again keeps its first marks)."""
        marks = job.marks
        if "searched" not in marks or "sending" not in marks or marks["searched"] < started * 1e9:
            return
        late = min(max(marks["searched"] / 1e9 - started - head_start, 0.0), OVERHEAD_LATE_CAP_S)
        host = (marks["sending"] - marks["searched"]) / 1e9
        self._overheads.append(late + host + self.ctx.link.round_trip_s / 2)

    async def _head_start(self, cube: Cube, started: float, head_start: float) -> Solution:
        """The first solution: the warm session's search until ``head_start`` after
        ``started`` (:func:`time.perf_counter`, the clock of :func:`time.monotonic` here;
        holding none then, until its first, :data:`HEAD_TIMEOUT_S` at most), or, with no head
        start, a robot with a face missing, or nothing found by then, the pipeline's first
        solution within the length limit."""
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
                # (what this job measured: the run's own figures start from the learnt ones)
                (
                    run.late_seen_s,
                    run.write_seen_s,
                    timeline.wake_lag_seen_s,
                    timeline.overstated_s,
                ),
                strict=True,
            )
        )
        marks = run.job.marks
        logger.info(
            "job %s: anytime: %d searches, %d refinements saving %.3f s (%d joined with the "
            "moves before them, %d too late, %d dropped, %d commits waited for a write), %d "
            "gaps; lead %.1f ms (link latency "
            "%.1f, wake lag %.1f, reports early by %.1f a group); searches hand back %.1f ms "
            "late, a journal write takes %.1f ms at most; before the first step: %s; the "
            "first commit and search: %s",
            run.job.id,
            run.searches,
            run.refinements,
            run.saved_s,
            run.joined,
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

    # === the search sessions ======================================================================

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


def _retrieved(future: asyncio.Future[Status]) -> None:
    """Mark a prefetched STATUS's failure as seen (the job reads it, if it gets that far)."""
    if not future.cancelled():
        future.exception()
