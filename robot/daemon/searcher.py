"""The searches of anytime solving while the motors turn (:mod:`robot.daemon.anytime` runs the
job; :mod:`robot.daemon.committer` commits the plan's groups when they are due).

:class:`Searcher` runs the robot-time search (the profile's cost model) on both cores through
the refinement session (:attr:`~robot.daemon.sessions.Sessions.refine`: tables and threads
kept, each search a restart from a new state until an absolute deadline). It searches from the
plan's state after ``target`` moves for a remainder faster than the plan's (the plan's
remainder is the search's bound), until move ``target + 1`` is due less how late searches have
handed back lately and the longest journal write measured. The first search starts right
after the moves committed first (a plan's first groups decide most of what can be saved); each
next one starts further ahead and may run about twice as long as the one before, up to
:data:`MAX_SEARCH_S` (a search restarted with the same short budget finds the same plan
again). A search never holds a due commit back: a result that comes too late is dropped.

A remainder faster than the plan's **replaces** the moves after ``target`` if the longest
journal write measured fits before move ``target + 1`` is due: journaled first
(:meth:`~robot.journal.Journal.record_refinement`: moves sent never change; nothing past
``target`` is committed until the journal has it), then announced (``solution_refined``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from firmware_protocol.tasks import cancel_and_wait
from robot.daemon.committer import (
    AnytimeRun,
    SearchOutcome,
    commit_when_due,
    group_ends,
    move_durations,
)
from robot.daemon.context import Context
from robot.daemon.events import EventName, SolutionRefinedPayload
from robot.daemon.sessions import Sessions
from robot.errors import PlanError
from robot.planner import MotorProgram, PlannedMove, Planner
from solver.cube.facelets import Cube
from solver.cube.notation import OPPOSITE, format_moves
from solver.engines.twophase.session import Pending, SearchSession
from solver.errors import CubeError
from solver.solution import Solution

__all__ = ["Searcher", "Started", "group_count", "journal_rows"]

logger = logging.getLogger(__name__)

#: A search shorter than this is not started: the next group is committed at once instead.
MIN_SEARCH_S = 0.004
#: How much of the latest search's lateness the next one still assumes, unless it is later:
#: a result that comes too late to be journaled wastes the whole search, ending a search a
#: little sooner costs little.
LATE_DECAY = 0.8
#: The first search, from the moves committed first, runs for at least this long if it can
#: (seconds): measured offline, a search from the state after the first group saves most of
#: what any search during the motion saves (a plan's first moves decide it most), so even a
#: short one there beats a longer one from further ahead (20 ms before: under load the first
#: group's window, less the lead and the overheads, was often shorter, and the first search
#: went to the second group).
FIRST_SEARCH_S = 0.008
#: A search whose window (from its start to its deadline) is at least twice
#: :data:`FIRST_SEARCH_S` is read after this share of it (:meth:`Pending.peek`, its threads
#: going on): a faster remainder it holds then is journaled with the rest of the window to
#: spare, and the search, bounded by it, goes on from the same state for the rest. Only
#: read at its end, a search lost what it found whenever it handed back late or the commit
#: came due sooner than foreseen (the lead grows while the searches take both cores): the
#: first search's result was dropped in about a third of the jobs on a quiet machine (32 of
#: 100), and most of what a search saves it finds in its first tens of milliseconds
#: (offline: 15 of 20 states in 50 ms, 17 in 300). Ended at that point and started again
#: for the rest (as before), it walked its shallow depths again: one search read halfway
#: gives 4-8 ms less robot time after the first search (offline, a 7 ms head start's first
#: group, 3 x 60-100 states) and 8 ms less wall time a job on the bench (1.9584 s over nine
#: runs of 100 jobs against 1.9665 over two).
FIRST_PART = 0.5
#: Each search may run this many times as long as the one before (from further ahead)...
GROWTH = 2.0
#: ... up to this long (seconds): then the searches go on from further ahead, each from a
#: plan as good as the ones before made it.
MAX_SEARCH_S = 0.4


class Searcher:
    """Searches for faster remainders of an anytime run's plan while its moves are committed
    (see the module docstring). ``warm()`` gives the engine's search sessions (made once)."""

    def __init__(
        self, ctx: Context, planner: Planner, warm: Callable[[], Awaitable[Sessions]]
    ) -> None:
        self.ctx = ctx
        self.planner = planner
        self.cost = ctx.config.cost_model
        self._warm = warm

    def start_first(self, run: AnytimeRun, sessions: Sessions | None) -> Started | None:
        """The first search, from the state after the first commit, prepared now with every
        thread held (:meth:`refine` starts them once the first moves are written): the job
        prepares it while the plan's journal write syncs, so its Python work (the state's
        coordinates and directions, 0.2-0.6 ms) is off the way to the first step (threads
        that start after its deadline end at once). ``None``: the ``sessions`` are not warm
        yet, or its window is too short."""
        assert run.first is not None
        target = run.first.commit_moves
        if sessions is None or target >= len(run.plan):
            return None
        now = asyncio.get_running_loop().time()
        deadline = run.timeline.deadline(target) - run.overhead_s
        if deadline - now < MIN_SEARCH_S:
            return None
        # (the first commit is made right after the write: no join before its state)
        return self._start_search(
            run, sessions.refine, deadline, target, held=None, split=True, committed=target
        )

    async def refine(self, run: AnytimeRun, early: Started | None = None) -> None:
        """Commit each group when it is due (:func:`commit_when_due`) and, meanwhile, search
        for faster remainders. Each search starts from the plan's state after ``target``
        moves and ends when move ``target + 1`` is due, less a refinement's overhead; the
        first runs about as long as a quarter turn, each next one from further ahead may run
        up to twice as long as the one before (at most :data:`MAX_SEARCH_S`): a search of
        the same length from a similar state finds about the same plan. ``early``: the first
        search, started before the first commit."""
        loop = asyncio.get_running_loop()
        committer = asyncio.create_task(commit_when_due(run), name=f"anytime-commit {run.job.id}")
        #: the latest search (ended with the refinement: the job is over, or stopped)
        latest = early
        try:
            session = (await self._warm()).refine
            #: a search read after the first part of its window, its threads going on from the
            #: same state for the rest
            going: Started | None = None
            if early is not None:
                # (prepared while the plan was journaled) its threads once the first moves
                # are on their way, as below: one thread at once left the (simulated) firmware
                # less of the machine while they arrived (the first step 12.6-13.1 ms against
                # 13.1-13.3 at the median, 100-job runs; the wall time the same within them)
                await asyncio.sleep(self.ctx.link.latency_s / 2)
                early.release()
                searched, _ = await self._improve(run, early)
                wanted, after = self._grown(early, searched), early.target
                going = self._going_on(run, early)
            else:
                # the first moves reach the firmware before the searches take both cores:
                # 2.5 against 7.2 ms from the write to the (simulated) firmware's read, 30
                # jobs, load 4
                await asyncio.sleep(self.ctx.link.latency_s / 2)
                wanted, after = FIRST_SEARCH_S, -1
            while not committer.done():
                run.timeline.observe(run.feed.last_group)
                if going is not None:  # the rest of its window
                    started, going = going, None
                    searched, _ = await self._improve(run, started, rest=True)
                    wanted, after = self._grown(started, searched), started.target
                    continue
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
                started = latest = self._start_search(run, session, deadline, target, split=True)
                searched, _ = await self._improve(run, started)
                wanted, after = self._grown(started, searched), target
                going = self._going_on(run, started)
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
            if latest is not None and not latest.task.done():
                latest.stop()
            await cancel_and_wait(committer)

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
    def _going_on(run: AnytimeRun, started: Started) -> Started | None:
        """``started`` when it was read after the first part of its window and its threads go
        on from a state that is still the plan's after its ``target`` moves, a group end not
        committed past (a remainder joined with the moves before it, :meth:`_joined`, may
        have changed the plan there); else ``None``, and a search still running is ended."""
        if not started.part or started.task.done():
            return None
        target = started.target
        if (
            run.committed <= target < len(run.plan)
            and (target == 0 or not run.plan[target - 1].simultaneous_with_next)
            and run.cube_after(target) == started.cube
        ):
            return started
        started.stop()
        return None

    @staticmethod
    def _grown(started: Started, searched: float) -> float:
        """How long the next search may run after ``started`` searched ``searched`` seconds:
        twice as long if it used its window (one that ended sooner covered its state; one
        read after the first part of its window that ran that long counts as the whole window
        used)."""
        window = started.deadline - started.began
        whole = started.full_deadline - started.began
        grown = GROWTH * whole if searched >= 0.9 * window else min(searched, whole)
        return min(MAX_SEARCH_S, max(FIRST_SEARCH_S, grown))

    def _start_search(
        self,
        run: AnytimeRun,
        session: SearchSession,
        deadline: float,
        target: int,
        held: int | None = 0,
        *,
        split: bool = False,
        committed: int | None = None,
    ) -> Started:
        """Start one search from the plan's state after ``target`` moves until ``deadline``
        (loop time) for a remainder faster than the plan's (see :meth:`_improve`; ``held``
        threads wait for :meth:`Started.release`, ``None``: all). With ``split`` a window of
        at least twice :data:`FIRST_SEARCH_S` is read after its first part
        (:data:`FIRST_PART` of it; the threads go on to ``deadline``). The job's first search
        is recorded (:attr:`AnytimeRun.first`). ``committed``: the moves committed by the time
        it runs (default: now)."""
        began = asyncio.get_running_loop().time()
        current = self._remainder_s(run.plan[target:])
        run.searches += 1
        run.fence = target
        whole = deadline
        part = split and deadline - began >= 2 * FIRST_SEARCH_S
        if part:
            deadline = began + FIRST_PART * (whole - began)
        first = run.first is not None and not run.first.start_groups
        if run.first is not None and first:
            run.first.start_groups = group_count(run.plan, target)
            run.first.window_ms = 1000 * (whole - began)
            run.first.outcome = SearchOutcome.NOT_STARTED
        # a remainder whose first group joins the group before ``target`` (not committed yet)
        # is worth more than its own time says: the search is bounded that much later
        done = run.committed if committed is None else committed
        bound = current + (self._join_s() if target > done else 0.0)
        cube = run.cube_after(target)
        pending, task = self._search(session, cube, whole, bound, target, held)
        return Started(target, deadline, began, current, task, first, pending, part, whole, cube)

    async def _improve(
        self, run: AnytimeRun, started: Started, *, rest: bool = False
    ) -> tuple[float, SearchOutcome]:
        """Wait for a search (:meth:`_start_search`), or for the first part of its window
        (then read what it holds, :meth:`Pending.peek`, its threads going on), or with
        ``rest`` for the end of its window after that (then read it and end its threads: its
        result does not wait for their hand-back, and its window ends sooner if the moves
        after its state came due sooner than foreseen); a faster remainder it found replaces
        the moves after its start (journaled, then announced) if that is still in time.
        Nothing past its start is committed while its result is journaled. Returns how long
        it searched and what became of its result."""
        loop = asyncio.get_running_loop()
        target, began = started.target, started.began
        deadline = started.deadline
        if rest:  # (when its moves are due now: the timeline may have moved since it started)
            due = run.timeline.deadline(target) - run.overhead_s
            deadline = min(started.full_deadline, due)
        first = run.first if started.first else None
        run.fence = target
        try:
            if started.part:
                # what it holds then, not waiting for its threads to hand back
                await asyncio.wait({started.task}, timeout=max(0.0, deadline - loop.time()))
                found = started.task.result() if started.task.done() else started.peek()
                if rest:
                    started.stop()
            else:
                found = await started.task
            searched = loop.time() - began
            if searched >= deadline - began:  # (one that covered its state ends sooner)
                run.searched_late(loop.time() - deadline, LATE_DECAY)
            # (after the first part the plan's remainder may be one it found)
            current = self._remainder_s(run.plan[target:]) if rest else started.bound_s
            saved = run.saved_s
            outcome = await self._apply(run, target, found, current, deadline, searched)
            if first is not None:
                first.searched_ms = 1000 * searched  # (from its start)
                if first.outcome is not SearchOutcome.LANDED:  # (a first part's stays)
                    first.outcome = outcome
                first.saved_s += run.saved_s - saved
        finally:
            run.release_fence()
        return searched, outcome

    def _search(
        self,
        session: SearchSession,
        cube: Cube,
        deadline: float,
        bound_s: float,
        kept_htm: int,
        held: int | None = 0,
    ) -> tuple[Pending | None, asyncio.Future[Solution | None]]:
        """The robot-time search from ``cube`` until ``deadline`` (loop time: the default
        event loop's clock is :func:`time.monotonic`, the session's) for a solution faster than
        ``bound_s``, started on the session's threads (``held`` of them wait for
        :meth:`Pending.release`; ``None``: all of them, the search only prepared): the last to
        end wakes the loop (one hand-back, no thread in between), which picks the best
        (Python, the GIL held: kept out of the search threads, which may run at a lower
        priority)."""
        max_length = self.ctx.config.solver.max_length
        length = None if max_length is None else max(0, max_length - kept_htm)
        try:
            if held is None:
                pending = session.prepare(cube, deadline, bound_s=bound_s, max_length=length)
            else:
                pending = session.start(
                    cube, deadline, bound_s=bound_s, max_length=length, held=held
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
        fits before the next commit is due. If moves before ``target`` are not committed yet,
        they are planned together with the remainder (:meth:`_joined`): where its first turn
        joins the group before ``target`` (a simultaneous pair, or one turn of that face) the
        plan from the committed moves on is replaced. Returns what became of it."""
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
        handed = loop.time()
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
        options = [(current - better, target, candidate)]
        joined = self._joined(run, target, candidate)
        if joined is not None:
            options.append(joined)
        # the one that saves most, if it can still be journaled before its moves are due
        options = [o for o in options if o[0] > 1e-9]
        if not options:
            return SearchOutcome.NOTHING_FASTER
        options.sort(key=lambda o: -o[0])
        for saved, at, program in options:
            if run.timeline.deadline(at) - loop.time() >= run.write_s:
                await self._replace(run, at, program, saved, searched)
                run.joined += at < target
                return SearchOutcome.LANDED
        saved, at = options[0][:2]
        logger.debug(
            "job %s: a refinement saving %.3f s dropped: %.1f ms left before the commit, "
            "a journal write may take %.1f ms (handed back %+.1f ms after its deadline, "
            "planned in %.1f ms; allowed late %.1f ms; lead now %.1f ms)",
            run.job.id,
            saved,
            1000 * (run.timeline.deadline(at) - loop.time()),
            1000 * run.write_s,
            1000 * (handed - deadline),
            1000 * (loop.time() - handed),
            1000 * run.late_s,
            1000 * run.timeline.lead_s(),
        )
        run.dropped += 1
        return SearchOutcome.DROPPED

    def _joined(
        self, run: AnytimeRun, target: int, candidate: MotorProgram
    ) -> tuple[float, int, MotorProgram] | None:
        """The plan's moves from the committed ones to ``target`` (not sent yet) planned
        together with ``candidate``, the remainder found from ``target``: ``(robot time saved
        against the plan from the committed moves, where it starts, the program)`` when its
        first turn joins the group before ``target`` (the planner pairs it with that group,
        or merges it into a turn of the same face), else ``None``. Each search starts from
        a state of the plan and knows nothing of the moves before it; planned apart, such a
        remainder's first turn costs a motion group and a settle of its own."""
        start = run.committed
        if not target > start or not candidate.moves:
            return None
        last, first = run.plan[target - 1], candidate.moves[0]
        if first.face is not last.face and first.face is not OPPOSITE[last.face]:
            return None
        try:
            joined = self.planner.plan(
                [m.as_move() for m in run.plan[start:target]]
                + [m.as_move() for m in candidate.moves]
            )
        except PlanError:
            return None
        now = self._remainder_s(run.plan[start:])
        return now - (joined.estimate_s if joined.moves else 0.0), start, joined

    def _remainder_s(self, moves: Sequence[PlannedMove]) -> float:
        return self.cost.estimate([m.as_move() for m in moves]) if moves else 0.0

    def _join_s(self) -> float:
        """The most a remainder's first group can save by joining the group before it: its
        own time (a half turn at most, paired) and a settle."""
        cost = self.cost
        return max(cost.quarter_turn_s, cost.half_turn_s) + cost.pair_extra_s + cost.settle_s

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
        run.fence = target if run.fence is None else min(run.fence, target)
        run.journaling = True  # nothing past the fence until the journal has it
        writing = time.perf_counter()
        await journal.call(
            journal.sync.record_refinement,
            job.id,
            keep,
            format_moves(program.source),
            {"engine": "twophase", "program": program.to_dict(), "anytime": True},
            str(program),
            journal_rows(candidate.moves),
        )
        run.wrote(time.perf_counter() - writing)
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


@dataclass
class Started:
    """A search during the motion, started (:meth:`Searcher._start_search`)."""

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
    #: read after the first part of its window (:data:`FIRST_PART`; ``deadline``), its
    #: threads going on to ``full_deadline``
    part: bool = False
    full_deadline: float = 0.0
    #: the state it searches from (the plan's after ``target`` moves when it started)
    cube: Cube | None = None

    def peek(self) -> Solution | None:
        """The best remainder the search holds so far (its threads may still run)."""
        return None if self.pending is None else self.pending.peek()

    def stop(self) -> None:
        """End the search's threads soon, finding nothing more."""
        if self.pending is not None:
            self.pending.stop()

    def release(self, threads: int | None = None) -> None:
        """Start the threads held back (:meth:`SearchSession.start`), or ``threads`` of
        them."""
        if self.pending is not None:
            self.pending.release(threads)


async def _result(pending: Pending, cube: Cube) -> Solution | None:
    """A started search's result, once its threads have ended (``None``: nothing faster)."""
    try:
        await asyncio.wrap_future(pending.done)
        return pending.result()
    except CubeError as exc:  # nothing found: the plan stays
        logger.debug("anytime search from %s: %s", cube.to_facelets(), exc)
        return None


def group_count(plan: Sequence[PlannedMove], moves: int) -> int:
    """How many motion groups the plan's first ``moves`` moves (a group boundary) make."""
    return sum(1 for m in plan[:moves] if not m.simultaneous_with_next)


def journal_rows(moves: Sequence[PlannedMove]) -> list[tuple[str, int, int, bool]]:
    """The journal's rows for ``moves`` (face, turns, motor, simultaneous with the next)."""
    return [(m.face.name, m.turns, m.motor, m.simultaneous_with_next) for m in moves]
