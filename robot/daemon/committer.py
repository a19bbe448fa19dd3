"""Committing an anytime plan's moves (:mod:`robot.daemon.anytime`): when the committed moves
will have executed (:class:`Timeline`, from the cost model's group times re-anchored on the
firmware's reports), the plan as it stands with how much of it is committed (:class:`AnytimeRun`),
and the committer (:func:`commit_when_due`), which hands the plan's next motion group to the
firmware at the last moment that keeps its queue from running dry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from robot.daemon.context import Job
from robot.daemon.execution import MoveFeed
from robot.planner import PlannedMove
from solver.cost import CostModel
from solver.cube.facelets import Cube
from solver.cube.notation import Move

__all__ = [
    "AnytimeRun",
    "FirstSearch",
    "SearchOutcome",
    "Timeline",
    "commit_when_due",
    "group_ends",
    "move_durations",
]

logger = logging.getLogger(__name__)

#: The least time a refinement is assumed to take beyond its search (hand back, plan, journal).
MIN_OVERHEAD_S = 0.005
#: The weight of a new sample in the running mean of how early reports come.
EARLY_GAIN = 0.25
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
    #: how late the host woke up for a commit, at most so far (seconds; a job starts from what
    #: the jobs before measured)
    wake_lag_s: float = 0.0
    #: how late the host woke up for a commit in this job, at most (what the next job learns)
    wake_lag_seen_s: float = 0.0
    #: how much sooner a group's report came than the cost model says (the model overstating
    #: the motors, or the report before it delayed), a running mean, a group
    overstated_s: float = 0.0
    _anchor: tuple[float, int] | None = None
    #: the earliest the committed moves can have executed: ``(loop time, moves committed,
    #: groups)``, chained over the commits (see :meth:`committed`)
    _chain: tuple[float, int, int] | None = None

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

    def committed(self, before: int, upto: int, now: float) -> None:
        """Moves ``before`` to ``upto`` were committed at ``now`` (loop time): chain the
        earliest end of the committed moves. A group starts when the one before it ends, or
        once its moves arrive if later, never before its commit: so the chained end is never
        later than the real one (as far as the cost model is exact; :meth:`end` allows for how
        much it overstates), whenever the firmware's report of a group comes."""
        if self._chain is None:
            at, groups = now, 0
        else:
            at, _, groups = self._chain
            at = max(at, now)
        added = self.durations[before:upto]
        self._chain = (at + sum(added), upto, groups + sum(1 for d in added if d > 0))

    def end(self, committed: int) -> float:
        """Loop time at which the first ``committed`` moves will have executed: predicted from
        the firmware's last report (``at`` is when the host read it, later than the group's
        end by the report's way back, which under load was as long as 25 ms) and from the
        commits (:meth:`committed`), whichever is sooner."""
        if self._anchor is not None:
            at, done = self._anchor
            reported = at + sum(self.durations[done:committed])
        else:
            # the motors start once the first moves arrive, but never before the commit:
            # counting from the commit keeps the predicted end early (on the safe side)
            assert self.started_at is not None
            reported = self.started_at + sum(self.durations[:committed])
        if self._chain is None:
            return reported
        at, upto, groups = self._chain
        if committed >= upto:
            chained = at + sum(self.durations[upto:committed])
            groups += sum(1 for d in self.durations[upto:committed] if d > 0)
        else:
            chained = at - sum(self.durations[committed:upto])
            groups -= sum(1 for d in self.durations[committed:upto] if d > 0)
        # (the cost model's overstatement accumulates over every group since the first commit)
        return min(reported, chained - self.overstated_s * groups)

    def woke_late(self, lag_s: float) -> None:
        """The host woke up ``lag_s`` after a commit was due."""
        self.wake_lag_s = max(self.wake_lag_s, lag_s)
        self.wake_lag_seen_s = max(self.wake_lag_seen_s, lag_s)

    def lead_s(self, groups: int = 1) -> float:
        """How long before the motors run dry the next group must be committed, when the end
        is predicted over ``groups`` groups."""
        return self.latency_s() + self.wake_lag_s + self.overstated_s * groups

    def deadline(self, committed: int) -> float:
        """Loop time by which the move after the first ``committed`` must be committed."""
        done = self._anchor[1] if self._anchor is not None else 0
        groups = sum(1 for d in self.durations[done:committed] if d > 0)
        return self.end(committed) - self.lead_s(max(1, groups))


class SearchOutcome(StrEnum):
    """What became of a search during the motion (the debug log, :class:`FirstSearch`)."""

    LANDED = "landed"
    """a faster remainder replaced the plan's"""
    NOTHING_FASTER = "nothing faster"
    """the search (or the planner) found no remainder faster than the plan's"""
    TOO_LATE = "too late"
    """a faster remainder came after the moves past its start were committed"""
    DROPPED = "dropped"
    """a faster remainder came in time but the longest journal write would not fit"""
    NOT_PLANNED = "not planned"
    """the planner refused the remainder found"""
    TOO_SHORT = "window too short"
    """no search started: the time before the next commit was shorter than the least search"""
    NOT_STARTED = "not started"
    """the job ended (or the searcher failed) before a search started"""


@dataclass
class FirstSearch:
    """What a job's first commit held and what became of its first search during the motion
    (the moves the first commit holds and the state it searches from decide most of what the
    searches during the motion can save): for the debug log and ``bench/time_to_solved.py``."""

    #: motion groups the first commit held, and the lead time it was chosen with (ms)
    commit_groups: int
    lead_ms: float
    #: the plan's moves the first commit held
    commit_moves: int
    #: groups of the plan before the state the first search started from (0: none started)
    start_groups: int = 0
    #: from the search's start to its deadline, and how long it ran (ms)
    window_ms: float = 0.0
    searched_ms: float = 0.0
    #: the robot time it saved when it landed (seconds, the cost model's)
    saved_s: float = 0.0
    outcome: SearchOutcome = SearchOutcome.NOT_STARTED

    def to_dict(self) -> dict[str, object]:
        return {
            "commit_groups": self.commit_groups,
            "lead_ms": round(self.lead_ms, 2),
            "start_groups": self.start_groups,
            "window_ms": round(self.window_ms, 2),
            "searched_ms": round(self.searched_ms, 2),
            "saved_s": round(self.saved_s, 4),
            "outcome": self.outcome.value,
        }


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
    #: how long after its deadline a search's result is in hand (the worst of the last few
    #: searches: a late result costs the refinement, never a commit)
    late_s: float = 0.0
    #: the longest journal write measured (seconds): a refinement is journaled only if this
    #: much time is left before the moves it replaces are due
    write_s: float = 0.0
    #: the latest a search's result came and the longest journal write in this job (``late_s``
    #: and ``write_s`` start from what the jobs before measured; these are what the next learns)
    late_seen_s: float = 0.0
    write_seen_s: float = 0.0
    #: searches whose result came too late to be used, refinements dropped because their
    #: write would not fit before the commit, commits that waited for a write
    late_searches: int = 0
    dropped: int = 0
    late_writes: int = 0
    #: robot time the refinements saved in all (seconds, the cost model's)
    saved_s: float = 0.0
    #: refinements whose first turn joined the group before the state searched from (planned
    #: with the moves not yet sent before it: :meth:`~robot.daemon.searcher.Searcher._joined`)
    joined: int = 0
    #: the first commit and the first search (set by the searcher)
    first: FirstSearch | None = None
    #: how long the head start searched for the first moves (seconds, its deadline's)
    head_start_s: float = 0.0

    #: a search from this position runs, or (``journaling``) its result is being journaled:
    #: then no move past it is committed until the journal has it
    fence: int | None = None
    journaling: bool = False
    _committed_event: asyncio.Event = field(default_factory=asyncio.Event)
    _fence_event: asyncio.Event = field(default_factory=asyncio.Event)

    def searched_late(self, late_s: float, decay: float) -> None:
        """A search's result came ``late_s`` after its deadline (the assumption for the next
        searches: the worse of that and ``decay`` times the one before)."""
        self.late_s = max(decay * self.late_s, late_s)
        self.late_seen_s = max(self.late_seen_s, late_s)

    def wrote(self, write_s: float) -> None:
        """A journal write of the job took ``write_s``."""
        self.write_s = max(self.write_s, write_s)
        self.write_seen_s = max(self.write_seen_s, write_s)

    @property
    def overhead_s(self) -> float:
        """How long before the next commit is due a search must end: its result handed back
        and planned (as usual), then journaled (as long as the longest write)."""
        return max(MIN_OVERHEAD_S, self.late_s + self.write_s)

    @property
    def uncommitted(self) -> int:
        return len(self.plan) - self.committed

    def cube_after(self, moves: int) -> Cube:
        """The cube after the plan's first ``moves`` moves."""
        return self.start.apply([m.as_move() for m in self.plan[:moves]])

    def commit(self, upto: int) -> None:
        """Hand the plan's moves up to position ``upto`` (a group boundary) to the firmware."""
        moves = [m.to_wire() for m in self.plan[self.committed : upto]]
        loop = asyncio.get_running_loop()
        self.timeline.committed(self.committed, upto, loop.time())
        self.committed = upto
        self.feed.commit(moves, last=upto >= len(self.plan))
        self._committed_event.set()

    async def wait_commit(self) -> None:
        """Until the next commit."""
        self._committed_event.clear()
        await self._committed_event.wait()

    def release_fence(self) -> None:
        self.fence = None
        self.journaling = False
        self._fence_event.set()

    async def wait_fence(self, timeout_s: float) -> None:
        """Until the fence is released (at most ``timeout_s``)."""
        self._fence_event.clear()
        if self.fence is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if math.isinf(timeout_s) else timeout_s):
                    await self._fence_event.wait()


async def commit_when_due(run: AnytimeRun) -> None:
    """Commit the plan's next group the moment it is due, until every move is committed; then
    close the feed. A search running from the plan's position does not hold a due commit back
    (its result is then dropped); a refinement being journaled does (its write was only started
    if the worst write measured fits before the commit is due)."""
    loop = asyncio.get_running_loop()
    while run.uncommitted:
        run.timeline.observe(run.feed.last_group)
        due = run.timeline.deadline(run.committed)
        now = loop.time()
        if due > now:
            await asyncio.sleep(min(due - now, COMMIT_POLL_S))
            if loop.time() >= due:
                run.timeline.woke_late(loop.time() - due)
            continue
        upto = group_ends(run.plan, run.committed)[0]
        if run.fence is not None and upto > run.fence and run.journaling:
            # the journal is taking the refinement of the moves past the fence: sending the
            # old plan's moves now would contradict it, the new ones are not durable yet
            run.late_writes += 1
            await run.wait_fence(math.inf)
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
