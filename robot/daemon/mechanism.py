"""The daemon's hook for mechanism kinds other than six face motors (``[robot] kind``).

:func:`mechanism_for` gives the pipeline a :class:`KindMechanism` for a turntable or
two-gripper profile (None for a face-turning robot, which the pipeline plans with
:class:`robot.planner.Planner` as before). It owns, for such a robot:

* **solve and plan**: the configured engine, with the kind's co-optimisation where the profile
  asks for it (3x3 two-phase: every candidate solution scored by the kind's exact robot time,
  :mod:`robot.kinds.cooptimise`), then the kind's fastest plan from where the parts are, ending
  with the parts back at their start (:meth:`robot.kinds.KindPlanner.home`);
* **the wire**: each action as motor moves (:mod:`robot.kinds.wire`), executed by the same
  executor as face turns;
* **the journal**: each wire move's row carries the action, its effect on the cube, the cube's
  orientation and the parts' state after it (:meth:`robot.kinds.wire.WireAction.token`), so a
  restart resumes with the remaining moves as planned, or (resume with rescan, a correction)
  plans again from the parts' state the last executed move left.

The tracked cube (``job.physical``) is the cube as it sits in the machine (the physical
frame: what the cameras see), so the check after execution and a rescan need nothing else.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import cache
from typing import Any

from firmware_protocol.moves import Move as WireMove
from robot.config import RobotConfig
from robot.daemon.context import Context, Job
from robot.daemon.events import ErrorCode, EventName, JobState, solution_payload
from robot.daemon.execution import Executor
from robot.daemon.ports import Solver
from robot.errors import JobError, PlanError
from robot.journal import JobRecord, MoveRecord
from robot.kinds.cooptimise import DEFAULT_SLACK, descent_share
from robot.kinds.mechanism import Mechanism, PartsState
from robot.kinds.planner import KindPlanner
from robot.kinds.profile import Kind, TurntableConfig, TwoGripperConfig, build_mechanism
from robot.kinds.wire import WireAction, block_moves, wire_program
from solver.api import engine_for_size
from solver.cube.facelets import Cube
from solver.cube.notation import format_moves
from solver.errors import CubeError
from solver.solution import Solution

__all__ = ["KindMechanism", "mechanism_for", "planner_for", "prepare_planner"]

logger = logging.getLogger(__name__)

#: the longest solution asked of the co-optimising search (the engine's own default)
_COOPT_MAX_LENGTH = 20

#: each kind's start pose, as the operator sets it by hand
_START_POSE = {
    "turntable": "the cover open and the table at its start angle",
    "two-gripper": "both arms closed on the cube at their start angles",
}


@cache
def planner_for(
    kind: Kind, table: TurntableConfig | TwoGripperConfig, n: int
) -> tuple[Mechanism, KindPlanner]:
    """The mechanism of a profile and its planner, one per process (its tables are built once:
    :func:`prepare_planner` at the daemon's start, else on the first solve)."""
    mechanism = build_mechanism(kind, table, n)
    return mechanism, KindPlanner(mechanism)


def prepare_planner(config: RobotConfig) -> None:
    """Build the planner tables of the profile's kind now (blocking; nothing for six-face)."""
    table = config.robot.mechanism_table
    if table is None:
        return
    _, planner = planner_for(config.robot.kind, table, config.robot.cube_size)
    planner.prepare()
    if config.robot.cube_size == 3:
        planner.prepare_seconds()


def mechanism_for(ctx: Context, solver: Solver, executor: Executor) -> KindMechanism | None:
    """The hook for the profile's kind (None: six face motors, the pipeline's own planner)."""
    if ctx.config.robot.kind == "six-face":
        return None
    return KindMechanism(ctx, solver, executor)


class KindMechanism:
    """Solve, plan, journal and execute for a turntable or two-gripper robot."""

    def __init__(self, ctx: Context, solver: Solver, executor: Executor) -> None:
        self.ctx = ctx
        self.solver = solver
        self.executor = executor
        robot = ctx.config.robot
        table = robot.mechanism_table
        assert table is not None  # the profile's validation adds the kind's table
        self.kind = robot.kind
        self.table: TurntableConfig | TwoGripperConfig = table
        self.mechanism, self.planner = planner_for(robot.kind, table, ctx.n)

    # === solve, plan, execute =====================================================================

    async def solve_and_execute(self, job: Job, cube: Cube, offset: int) -> None:
        """Solve ``cube`` (as it sits in the machine), plan it from the parts' state the job's
        first ``offset`` moves left, journal the program and execute it."""
        ctx, journal = self.ctx, self.ctx.journal
        ctx.set_state(JobState.SOLVING)
        await journal.call(journal.sync.set_state, job.id, JobState.SOLVING)
        parts = await self.parts_at(job, offset)
        started = time.perf_counter()
        solution, actions, seconds = await asyncio.to_thread(self._solve_and_plan, cube, parts)
        await ctx.record_stage_time(job, "solve", started)
        job.actions = job.actions[:offset] + tuple(actions)
        job.face_moves = ()
        job.moves_total = offset + len(actions)
        job.moves_done = offset
        program = self._program(actions, seconds)
        await journal.call(
            journal.sync.record_plan,
            job.id,
            format_moves(solution.moves),
            {**solution.to_dict(), "program": program},
            program["moves"],
            [(a.token(), a.turns, a.motor, False) for a in actions],
        )
        solved = solution_payload(job.id, solution, program, robot_time_s=round(seconds, 4))
        ctx.out.event(EventName.SOLUTION, solved)
        if not actions:
            return
        ctx.set_state(JobState.EXECUTING)
        await journal.call(journal.sync.set_state, job.id, JobState.EXECUTING)
        await self.executor.execute(job, [a.wire for a in actions], offset)

    def _program(self, actions: list[WireAction], seconds: float) -> dict[str, Any]:
        """The ``program`` of the solution event: the six-face fields, and the kind's."""
        return {
            "moves": " ".join(a.label for a in actions if a.seconds or a.effect),
            "count": len(actions),
            "groups": len(actions),
            "replaced_turns": 0,
            "estimate_s": round(seconds, 4),
            "kind": self.kind,
            "actions": sum(1 for a in actions if a.seconds),
            "orientation": actions[-1].orientation if actions else 0,
        }

    def _solve_and_plan(
        self, cube: Cube, parts: PartsState
    ) -> tuple[Solution, list[WireAction], float]:
        """(In a worker thread.) The solution, its wire program and the plan's seconds."""
        solution = self._solve(cube)
        moves = block_moves(solution.moves, self.ctx.n)
        try:
            plan = self.planner.home(self.planner.plan(moves, start=parts))
            actions = wire_program(self.table, self.mechanism, plan.actions, parts)
        except PlanError as exc:
            raise JobError(ErrorCode.PLAN_FAILED, str(exc)) from exc
        logger.info(
            "%s: %d solution moves as %d actions (%d wire moves), %.2f s",
            self.kind,
            len(solution.moves),
            len(plan.actions),
            len(actions),
            plan.seconds,
        )
        return solution, actions, plan.seconds

    def _solve(self, cube: Cube) -> Solution:
        cfg = self.ctx.config.solver
        options: dict[str, Any] = {"budget_s": cfg.budget_s, "max_length": cfg.max_length}
        try:
            engine = engine_for_size(self.ctx.n, cfg.engine)  # "auto": two-phase for a 3x3
            if self.table.cooptimise and engine == "twophase":
                self.planner.prepare_seconds()
                options.update(
                    max_length=cfg.max_length or _COOPT_MAX_LENGTH,
                    score=self.planner.seconds,
                    score_slack=DEFAULT_SLACK,
                    score_descent=descent_share(cfg.budget_s),
                )
            return self.solver(cube, engine, **options)
        except CubeError as exc:
            raise JobError(ErrorCode.SOLVE_FAILED, f"solver ({cfg.engine}): {exc}") from exc

    async def parts_before(self, job: Job) -> PartsState:
        """Where the parts are before the first action of ``job`` (no move of it executed):
        where the last job that moved left them (a job stopped mid-scan or mid-solution may
        leave the table turned or the cover closed; jobs refused before their first move
        leave them where they were), or the start pose when the command said the operator
        set it (``start_pose``); the start pose with no job in the journal, unless the journal
        was moved aside at start. :class:`JobError` ``parts_unknown`` when the journal cannot
        say: a plan from a guessed pose could drive a part past its reach."""
        if job.start_pose:
            logger.info("job %s: the operator set the start pose; planning from it", job.id)
            return self.mechanism.start
        journal = self.ctx.journal
        record = await journal.call(journal.sync.last_moved_job, job.id)
        if record is None and self.ctx.journal_problem is not None:
            # the journal that knew was moved aside at start (robot.journal_guard)
            raise self._unknown(
                job.kind, "the job journal was not trusted at start and a new one began"
            )
        if record is None:
            return self.mechanism.start
        if record.error_code is ErrorCode.PARTS_UNKNOWN:
            why = "sent actions whose fate the firmware lost with its counters"
            raise self._unknown(job.kind, f"the last job that moved, {record.id}, {why}")
        rows = await journal.call(journal.sync.moves, record.id)
        parts = self._left_by(rows, record.executed)
        if isinstance(parts, str):
            raise self._unknown(job.kind, f"the last job that moved, {record.id}, {parts}")
        if parts != self.mechanism.start:
            logger.warning(
                "job %s: the previous job %s left the parts at %s; going on from there",
                job.id,
                record.id,
                parts,
            )
        return parts

    async def parts_at(self, job: Job, offset: int) -> PartsState:
        """Where the parts are after the job's first ``offset`` moves (none:
        :meth:`parts_before`); after a restart, from the job's executed journal rows."""
        if not offset:
            return await self.parts_before(job)
        if len(job.actions) < offset:  # resumed with a rescan: the executed rows say where
            journal = self.ctx.journal
            rows = await journal.call(journal.sync.moves, job.id)
            if len(rows) < offset:  # a damaged journal
                raise self._unknown(
                    job.kind, f"job {job.id} journaled {len(rows)} moves but {offset} executed"
                )
            job.actions = self.actions_of(rows[:offset])
        return job.actions[offset - 1].parts

    def parts_lost(self, verb: str, record: JobRecord) -> JobError:
        """The error that ends job ``record`` (resumed, or superseded by a new ``verb`` job)
        when some of its moves were sent and whether they ran is unknown (the firmware lost
        its counters): the parts may be anywhere those actions took them. A job ended with
        it leaves them unknown to the next job too (:meth:`parts_before`),
        until the operator sets the start pose by hand (found by the chaos campaign on the
        turntable, seed 14713: the scan planned from the journal's last row pushed the flipper
        against the closed cover)."""
        return self._unknown(
            verb,
            f"job {record.id} sent actions after its {record.executed} executed one(s) and "
            "whether they ran is unknown",
        )

    def _unknown(self, verb: str, why: str) -> JobError:
        return JobError(
            ErrorCode.PARTS_UNKNOWN,
            f"where the {self.kind}'s parts are is unknown: {why}; set the start pose by hand "
            f"({_START_POSE.get(self.kind, 'the parts at their start')}), then send "
            f'{verb} again with {{"start_pose": true}}',
        )

    def _left_by(self, rows: list[MoveRecord], executed: int) -> PartsState | str:
        """The parts' state a job's first ``executed`` journaled moves left, or why the
        rows cannot say."""
        if len(rows) < executed:  # a damaged journal: the last action is unknown
            return f"journaled {len(rows)} moves but {executed} executed"
        last = rows[executed - 1]
        try:
            parts = WireAction.from_token(last.face, last.motor, last.turns).parts
        except ValueError:
            return f"was not a {self.kind} job (its moves are not this robot's actions)"
        if parts not in self.mechanism.states():
            return f"left the parts at {parts}, a state this {self.kind} does not have"
        return parts

    # === resume ===================================================================================

    def actions_of(self, rows: list[MoveRecord]) -> tuple[WireAction, ...]:
        """Journaled rows as this kind's actions (:class:`JobError` if they are not)."""
        try:
            return tuple(WireAction.from_token(m.face, m.motor, m.turns) for m in rows)
        except ValueError as exc:
            raise JobError(
                ErrorCode.INTERNAL,
                f"the journal's moves are not {self.kind} actions ({exc}): the job was planned "
                "for another robot profile; resume with rescan, or start a new job",
            ) from exc

    async def restore(self, job: Job, record: JobRecord) -> list[WireMove]:
        """The interrupted job's actions from the journal (the cube as the last executed one
        left it); the wire moves still to execute."""
        journal = self.ctx.journal
        rows = await journal.call(journal.sync.moves, record.id)
        job.physical = Cube.from_facelets(record.physical or "", record.size)
        job.actions = self.actions_of(rows)
        job.face_moves = ()
        job.moves_total = record.total_moves
        if record.executed:
            last = job.actions[record.executed - 1]
            logger.info(
                "job %s resumes after move %d (%s): orientation %d, parts %s",
                record.id,
                record.executed,
                last.label,
                last.orientation,
                last.parts,
            )
        return [a.wire for a in job.actions[record.executed :]]
