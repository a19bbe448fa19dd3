"""The job pipeline: scan → validate → solve → execute → check, and how a job ends (DONE,
ERROR with a code, or ABORTED).

CPU work (reading the cameras and the colours, the solver's search) runs in threads. The robot
never solves a state that is not a valid cube read with confidence: a read in doubt gets active
re-scans (:mod:`robot.daemon.rescan`: face turns that show the doubtful stickers from another
view, each undone); a scan that is still repaired or impossible ends the job with code
``scan_invalid``, one still in doubt with ``scan_refused``, naming the stickers. After
execution the cube is read again and must read as solved (:mod:`robot.daemon.verify`). Every
step is journaled before the next one starts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from firmware_protocol.errors import LinkError
from firmware_protocol.moves import Move as WireMove
from robot.daemon.anytime import Anytime
from robot.daemon.context import Context, Job, face_move
from robot.daemon.events import (
    ABORT_CODES,
    RESCAN_CODES,
    RESUMABLE_CODES,
    AbortedPayload,
    DonePayload,
    ErrorCode,
    ErrorPayload,
    EventName,
    JobState,
    ScanCompletePayload,
    ScanInvalidDetail,
    solution_payload,
)
from robot.daemon.execution import Executor
from robot.daemon.mechanism import mechanism_for
from robot.daemon.onecamera import one_camera_for
from robot.daemon.ports import Cameras, Solver
from robot.daemon.recovery import Recovery
from robot.daemon.rescan import Rescanner, sure
from robot.daemon.verify import Verifier
from robot.errors import JobError, PlanError
from robot.journal import JobRecord
from robot.planner import Planner
from solver.api import engine_for_size
from solver.cube.facelets import SCHEMES, Cube
from solver.cube.geometry import Face
from solver.cube.notation import format_moves
from solver.cube.validate import validate
from solver.errors import CubeError
from solver.solution import Solution

if TYPE_CHECKING:
    from vision.evidence import Evidence

__all__ = ["Pipeline"]

logger = logging.getLogger(__name__)


class Pipeline:
    def __init__(
        self, ctx: Context, cameras: Cameras | None, solver: Solver, recovery: Recovery
    ) -> None:
        self.ctx = ctx
        self.cameras = cameras
        self.solver = solver
        self.recovery = recovery
        self.executor = Executor(ctx)
        #: a turntable or two-gripper robot's solve, plan and resume (None: six face motors)
        self.mechanism = mechanism_for(ctx, solver, self.executor)
        self.anytime: Anytime | None = None
        self.scheme = SCHEMES[ctx.config.colours.scheme]
        #: a turntable or two-gripper robot's one-camera scan (None: cameras see every face)
        self.one_camera = one_camera_for(ctx, self.mechanism, self.executor, cameras, self.scheme)
        self.planner = Planner(ctx.config.motors, ctx.config.cost_model, ctx.n)
        self.rescanner = Rescanner(ctx, self.executor, self.planner, self._read_once)
        self.verifier = Verifier(
            ctx, self.rescanner, self._read_once, self._solve_and_execute, self.scheme
        )
        if ctx.config.solver.anytime:
            self.anytime = Anytime(ctx, self.executor, self.planner, self._solve)
        #: the reads of the job's first state (for the check after execution) and the job
        #: move they were taken after
        self.evidence: Evidence | None = None
        self.reference = 0

    # === a job from start to end ==================================================================

    async def run_job(self, job: Job, given: Cube | None) -> None:
        """A new job: scan (unless ``given``), validate, solve, execute."""
        await self._guarded(job, self._job_body(job, given))

    async def resume_job(self, job: Job, record: JobRecord, rescan: bool) -> None:
        """Finish the interrupted job ``record``: its remaining moves, or (``rescan``) a new
        solution from the cube as scanned now."""
        self.ctx.resumable = None
        await self._guarded(job, self._resume_body(job, record, rescan))

    async def _guarded(self, job: Job, body: Awaitable[None]) -> None:
        """Run a job's body and end the job: DONE, ERROR (with the cause) or ABORTED."""
        try:
            await body
            await self._finish(job)
        except JobError as exc:
            await self._fail(job, exc)
        except asyncio.CancelledError:
            if job.abort_requested:
                task = asyncio.current_task()
                if task is not None:  # the abort's cancellation ends here (counted no more)
                    task.uncancel()
                await self._fail(job, JobError(ErrorCode.ABORTED, "aborted on request"))
                return
            raise
        except Exception as exc:  # a bug must not take the daemon (and its journal) down
            logger.exception("job %s: unexpected failure", job.id)
            await self._fail(job, JobError(ErrorCode.INTERNAL, f"internal error: {exc!r}"))

    async def _job_body(self, job: Job, given: Cube | None) -> None:
        self.evidence = None
        if given is None:
            cube = await self._scan(job)
            if job.kind == "scan":
                return
        else:
            cube = given
            journal = self.ctx.journal
            await journal.call(
                journal.sync.record_scan, job.id, cube.to_facelets("scheme"), {"given": True}
            )
        self._validate(job, cube)
        job.physical = cube
        await self._solve_and_execute(job, cube, offset=job.moves_done)
        await self._check(job)

    async def _resume_body(self, job: Job, record: JobRecord, rescan: bool) -> None:
        # moves of the job sent and not known to have run or not: a cube is read again, but a
        # mechanism's parts cannot be (its scan would plan from the journal's last row)
        unknown = self.ctx.moves_unknown
        try:
            record = await self.recovery.settle(job, record)
        except LinkError as exc:  # the link went again: the job stays as it was, resumable
            raise JobError(ErrorCode.LINK_LOST, f"resume: {exc}") from exc
        except JobError as exc:
            if exc.code is not ErrorCode.FIRMWARE_COUNTER:
                raise
            unknown = unknown or self.recovery.denial is None  # not a denial: lost counters
            if not rescan:
                # the job stays open (a resumable code), but only a rescan can finish it
                self.ctx.rescan_required = True
                self.ctx.moves_unknown = unknown
                raise JobError(
                    ErrorCode.FIRMWARE_COUNTER,
                    f'{exc}: send resume with {{"rescan": true}} to finish from a fresh scan',
                ) from exc
            logger.warning("job %s: %s; going on from a fresh scan", job.id, exc)
            # the journal as reconciled (moves the firmware's counter denies withdrawn)
            journal = self.ctx.journal
            reconciled = await journal.call(journal.sync.job, record.id)
            if reconciled is not None:
                record = reconciled
        # interrupted during its one-camera scan (the cube is not read yet): the scan goes on
        # from where the journal's rows left the cube and the parts, with the looks it took
        # (with rescan: a fresh scan from there)
        resume_scan = record.physical is None and not rescan
        if record.physical is None:
            logger.info(
                "job %s: %s its scan after %d action(s)",
                job.id,
                "starting again" if rescan else "going on with",
                record.executed,
            )
            rescan = True
        if unknown and self.mechanism is not None:  # the job ends so, for the next to see
            self.ctx.rescan_required = self.ctx.moves_unknown = False
            raise self.mechanism.parts_lost(job.kind, record)
        if rescan:
            self.ctx.rescan_required = self.ctx.moves_unknown = False
        job.moves_done = record.executed
        self.evidence = None
        if rescan:
            cube = await self._scan(job, resume=resume_scan)
            if job.kind == "scan":  # a scan job interrupted mid-scan: the read is all it does
                return
            self._validate(job, cube)
            job.physical = cube
            await self._solve_and_execute(job, cube, offset=job.moves_done)
            await self._check(job)
            return
        if self.mechanism is not None:
            remaining = await self.mechanism.restore(job, record)
        else:
            journal = self.ctx.journal
            moves = await journal.call(journal.sync.moves, record.id)
            job.physical = Cube.from_facelets(record.physical or "", record.size)
            job.face_moves = tuple(face_move(m.face, m.turns, m.depth) for m in moves)
            job.moves_total = record.total_moves
            remaining = [
                WireMove(
                    m.motor,
                    -m.turns if self._reversed(m.face) else m.turns,
                    m.simultaneous,
                    m.depth,
                )
                for m in moves[record.executed :]
            ]
        self.ctx.set_state(JobState.EXECUTING)
        await self._journal_state(job, JobState.EXECUTING)
        await self.executor.execute(job, remaining, offset=record.executed)
        await self._check(job)

    async def _check(self, job: Job) -> None:
        """The check after execution (when the robot has cameras and it is configured)."""
        if self.cameras is None or self.cameras.calibration is None:
            return
        if not self.ctx.config.scan.verify or job.physical is None:
            return
        started = time.perf_counter()
        try:
            await self.verifier.check(job, self.evidence, self.reference)
        finally:
            await self.ctx.record_stage_time(job, "scan", started)

    def _reversed(self, face: str) -> bool:
        cfg = self.ctx.config.motors.motor_of(Face[face])
        return bool(cfg and cfg.reversed)

    # === scan and validate ========================================================================

    async def _scan(self, job: Job, *, resume: bool = False) -> Cube:
        """Read the cube (``resume``: going on with a one-camera scan a crash interrupted)."""
        self.ctx.set_state(JobState.SCANNING)
        await self._journal_state(job, JobState.SCANNING)
        cameras = self.cameras
        if cameras is None or cameras.calibration is None:
            problems = cameras.calibration_problems if cameras else {}
            if problems:
                unusable = "; ".join(f"{name}: {why}" for name, why in problems.items())
                raise JobError(
                    ErrorCode.NO_CALIBRATION,
                    f"cannot scan: the calibration of camera(s) {unusable}; run `cuberobot "
                    "vision calibrate` to write it again (or fix [[cameras]] calibration in the "
                    "profile)",
                )
            missing = ", ".join(cameras.missing_calibration) if cameras else "all"
            raise JobError(
                ErrorCode.NO_CALIBRATION,
                f"cannot scan: camera(s) {missing} have no calibration; run `cuberobot vision "
                "calibrate` and set [[cameras]] calibration in the profile",
            )
        started = time.perf_counter()
        try:
            if self.one_camera is not None:
                result, views = await self.one_camera.scan(job, resume=resume)
            else:
                result, views = await self._settle(job, await self._read(cameras))
        finally:
            await self.ctx.record_stage_time(job, "scan", started)
        summary = result.to_json()
        facelets = result.cube.to_facelets("scheme")
        journal = self.ctx.journal
        await journal.call(journal.sync.record_scan, job.id, facelets, summary)
        scanned: ScanCompletePayload = {
            "job_id": job.id,
            "facelets": facelets,
            "valid": summary["valid"],
            "repairs": summary["repairs"],
            "low_confidence": summary["low_confidence"],
            "min_confidence": summary["min_confidence"],
            "timings_ms": summary["timings_ms"],
            "verdict": summary["verdict"],
            "confidence": summary["confidence"],
            "in_doubt": summary["in_doubt"],
        }
        self.ctx.out.event(EventName.SCAN_COMPLETE, scanned)
        if sure(result.classification, views):
            sure_cube: Cube = result.cube
            return sure_cube
        if not result.valid or result.repairs:
            raise _scan_invalid(summary)
        if not result.accepted:
            raise _scan_refused(summary, job.rescans)
        cube: Cube = result.cube
        return cube

    async def _read(self, cameras: Cameras) -> list[Any]:
        """Read the cube, once more (``[scan] attempts``) if a read is not a valid cube as is;
        every read made."""
        reads: list[Any] = []
        attempts = self.ctx.config.scan.attempts
        for attempt in range(1, attempts + 1):
            result = await self._read_once()
            reads.append(result)
            if result.valid and not result.repairs and result.accepted:
                break
            logger.info(
                "scan attempt %d: %s; %s",
                attempt,
                "not a valid cube"
                if not result.valid
                else "valid only after repairs"
                if result.repairs
                else f"too uncertain (confidence {result.cube_confidence:.3f})",
                "reading again" if attempt < attempts else "done with this view",
            )
        return reads

    async def _read_once(self) -> Any:
        """One read of the cube as it is now (a :class:`vision.scan.ScanResult`)."""
        from vision.errors import VisionError
        from vision.scan import read_cube

        if self.one_camera is not None:
            return await self.one_camera.read_now()
        cameras = self.cameras
        assert cameras is not None and cameras.calibration is not None
        try:
            frames = await asyncio.to_thread(cameras.capture)
            result = await asyncio.to_thread(
                read_cube, frames, cameras.calibration, self.ctx.n, scheme=self.scheme
            )
        except VisionError as exc:
            raise JobError(ErrorCode.SCAN_FAILED, f"scan failed: {exc}") from exc
        self.ctx.last_scan = (frames, result)
        return result

    async def _settle(self, job: Job, reads: list[Any]) -> tuple[Any, int]:
        """Keep the reads (of a cube's colours) as the job's evidence; if they are not sure,
        active re-scans. Returns the reading of all reads combined (a ScanResult) and how many
        viewpoints it combines (:attr:`vision.evidence.Evidence.viewpoints`)."""
        from vision.evidence import Evidence
        from vision.scan import ScanResult

        distinct = [r for r in reads if r.classification.distinct]
        if not distinct:
            return reads[-1], 1  # not a cube's colours: nothing to look at again
        evidence = Evidence(self.ctx.n, scheme=self.scheme)
        for read in distinct:
            evidence.add(read.classification)
        self.evidence, self.reference = evidence, job.moves_done
        last = distinct[-1]
        combined = evidence.combined() if len(distinct) > 1 else last.classification
        views = evidence.viewpoints
        if sure(combined, views) or self.rescanner.limit == 0:
            return ScanResult(combined, last.samples, last.sites, last.timings_ms), views
        journal = self.ctx.journal
        facelets = combined.cube.to_facelets("scheme")
        await journal.call(journal.sync.record_scan, job.id, facelets, last.to_json())
        job.physical = combined.cube  # tracked through the turns (each one undone)
        combined = await self.rescanner.settle(job, evidence, combined, [], "scan")
        return ScanResult(combined, last.samples, last.sites, last.timings_ms), evidence.viewpoints

    async def _journal_state(self, job: Job, state: JobState) -> None:
        """Keep the journal's job state with the daemon's, so that after a crash the journal
        says where the job was (``recovered.state``)."""
        journal = self.ctx.journal
        await journal.call(journal.sync.set_state, job.id, state)

    def _validate(self, job: Job, cube: Cube) -> None:
        self.ctx.set_state(JobState.VALIDATING)
        started = time.perf_counter()
        problems = validate(cube, self.scheme)
        seconds = time.perf_counter() - started
        job.stage_times["validate"] = round(job.stage_times.get("validate", 0.0) + seconds, 4)
        if problems:
            detail: ScanInvalidDetail = {
                "stickers": sorted({p.where for p in problems}),
                "problems": [
                    {"code": p.code, "where": p.where, "message": p.message} for p in problems
                ],
                "low_confidence": [],
            }
            raise JobError(
                ErrorCode.SCAN_INVALID,
                "impossible cube: " + "; ".join(p.message for p in problems),
                detail,
            )

    # === solve and execute ========================================================================

    async def _solve_and_execute(self, job: Job, cube: Cube, offset: int) -> None:
        if self.mechanism is not None:
            await self.mechanism.solve_and_execute(job, cube, offset)
            return
        if self.anytime is not None:  # the motors start on the first solution
            await self.anytime.run(job, cube, offset)
            return
        job.mark("solving")
        self.ctx.set_state(JobState.SOLVING)
        await self._journal_state(job, JobState.SOLVING)
        started = time.perf_counter()
        solution = await asyncio.to_thread(self._solve, cube)
        job.mark("searched")
        try:
            program = self.planner.plan(solution.moves)
        except PlanError as exc:
            raise JobError(ErrorCode.PLAN_FAILED, str(exc)) from exc
        job.mark("planned")
        await self.ctx.record_stage_time(job, "solve", started)
        job.program = program
        job.face_moves = program.face_moves
        job.moves_total = offset + len(program.moves)
        job.moves_done = offset
        journal = self.ctx.journal
        if offset:
            previous = await journal.call(journal.sync.moves, job.id)
            done = tuple(face_move(m.face, m.turns, m.depth) for m in previous[:offset])
            job.face_moves = done + program.face_moves
        await journal.call(
            journal.sync.record_plan,
            job.id,
            format_moves(solution.moves),
            {**solution.to_dict(), "program": program.to_dict()},
            str(program),
            [
                (m.face.name, m.turns, m.motor, m.simultaneous_with_next, m.depth)
                for m in program.moves
            ],
        )
        self.ctx.out.event(
            EventName.SOLUTION, solution_payload(job.id, solution, program.to_dict())
        )
        if not program.moves:
            return
        job.mark("journaled")
        self.ctx.set_state(JobState.EXECUTING)
        await self._journal_state(job, JobState.EXECUTING)
        job.mark("sending")
        await self.executor.execute(job, program.wire_moves(), offset)

    def _solve(self, cube: Cube, budget_s: float | None = None, **extra: Any) -> Solution:
        """Run the configured engine (in a worker thread) for ``budget_s`` (default: the
        profile's), with the engine options ``extra``. A robot with a face missing asks for a
        solution that avoids it first (longer, but far cheaper than replacing each turn: about
        22 moves against 20 plus 12 per replaced turn); if the engine cannot, the planner
        replaces the turns."""
        config = self.ctx.config
        cfg = config.solver
        try:  # "auto": the engine for the cube size (the profile check made a named one fit)
            engine = engine_for_size(cube.n, cfg.engine)
        except CubeError as exc:
            raise JobError(ErrorCode.SOLVE_FAILED, f"solver ({cfg.engine}): {exc}") from exc
        budget = cfg.budget_s if budget_s is None else budget_s
        options: dict[str, Any] = {
            **extra,
            "budget_s": budget,
            "max_length": cfg.max_length,
            "cost_model": config.cost_model,
        }
        if config.motors.missing:
            restricted = {
                **options,
                "faces": [f.name for f in sorted(config.motors.faces)],
                "max_length": cfg.max_length or 26,
            }
            if engine == "twophase":
                restricted["timeout_s"] = max(2.0, 4 * budget)
            try:
                return self.solver(cube, engine, **restricted)
            except CubeError as exc:
                logger.info(
                    "engine %s found no solution avoiding %s (%s); the planner replaces its turns",
                    engine,
                    "".join(f.name for f in config.motors.missing),
                    exc,
                )
        try:
            return self.solver(cube, engine, **options)
        except CubeError as exc:
            raise JobError(ErrorCode.SOLVE_FAILED, f"solver ({engine}): {exc}") from exc

    # === the end of a job =========================================================================

    async def _finish(self, job: Job) -> None:
        """The body ran to its end: DONE if the tracked cube is solved (a scan job: read)."""
        elapsed = round(time.monotonic() - job.started, 4)
        stage_times = dict(job.stage_times)
        if job.kind != "scan" and (job.physical is None or not job.physical.is_solved()):
            await self._fail(
                job,
                JobError(
                    ErrorCode.NOT_SOLVED,
                    "every move executed but the tracked cube is not solved; rescan",
                ),
            )
            return
        journal = self.ctx.journal
        await journal.call(journal.sync.finish, job.id, JobState.DONE, None, None)
        self.ctx.out.forget(job.id)
        done: DonePayload = {
            "job_id": job.id,
            "kind": job.kind,
            "moves": job.moves_total,
            "stage_times_s": stage_times,
            "total_s": elapsed,
            "solved": job.physical.is_solved() if job.physical is not None else None,
            "verified": job.verified,
            "rescans": job.rescans,
            "corrections": job.corrections,
        }
        self.ctx.out.event(EventName.DONE, done)
        if job.kind != "solve":  # a job that scanned the cube: its state is known again
            self.ctx.journal_problem = None
        self.ctx.set_state(JobState.DONE)

    async def _fail(self, job: Job, exc: JobError) -> None:
        """End the job ERROR or ABORTED; a job whose executed moves are journaled and that
        failed for a link or firmware reset stays open for ``resume``."""
        logger.error("job %s failed: %s", job.id, exc)
        aborted = exc.code in ABORT_CODES
        state = JobState.ABORTED if aborted else JobState.ERROR
        journal = self.ctx.journal
        record = await journal.call(journal.sync.job, job.id)
        resumable = (
            exc.code in RESUMABLE_CODES
            and record is not None
            and (record.remaining > 0 or exc.code in RESCAN_CODES)
        )
        if resumable:
            # the moves that did execute are in the journal: the job stays open for resume
            await journal.call(journal.sync.set_state, job.id, JobState.EXECUTING)
            self.ctx.resumable = await journal.call(journal.sync.job, job.id)
        else:
            await journal.call(journal.sync.finish, job.id, state, exc.code, str(exc))
        self.ctx.set_error(exc.code, str(exc))
        if aborted:
            stopped: AbortedPayload = {
                "job_id": job.id,
                "code": exc.code,
                "message": str(exc),
                "moves_done": job.moves_done,
            }
            self.ctx.out.event(EventName.ABORTED, {**stopped, **exc.detail})
        else:
            failed: ErrorPayload = {
                "job_id": job.id,
                "code": exc.code,
                "message": str(exc),
                "moves_done": job.moves_done,
            }
            if resumable:
                failed["resumable"] = True
            self.ctx.out.event(EventName.ERROR, {**failed, **exc.detail})
        self.ctx.set_state(state)


def _scan_refused(summary: dict[str, Any], turns: int = 0) -> JobError:
    """A possible cube, read with too little confidence to run the motors on (after ``turns``
    active re-scans)."""
    doubt = [d["sticker"] for d in summary["in_doubt"]]
    named = ", ".join(doubt[:12]) + (f" and {len(doubt) - 12} more" if len(doubt) > 12 else "")
    looked = f", also after {turns} face turn(s) that showed them from other views" if turns else ""
    return JobError(
        ErrorCode.SCAN_REFUSED,
        f"the scan read a possible cube but is not sure enough to act on it{looked} (confidence "
        f"{summary['confidence']:.3f}, needs {summary['accept_threshold']:.3f}); stickers in "
        f"doubt: {named or 'none named'}; improve the light on those faces, then start again",
        {"in_doubt": summary["in_doubt"], "confidence": summary["confidence"]},
    )


def _scan_invalid(summary: dict[str, Any]) -> JobError:
    """The error of a scan that is not a valid cube as read (``summary``: the scan's JSON)."""
    stickers = sorted(
        {s for r in summary["repairs"] for s in r["stickers"]}
        | {p["where"] for p in summary["problems"]}
    )
    reasons = [r["message"] for r in summary["repairs"]] + [
        p["message"] for p in summary["problems"]
    ]
    detail: ScanInvalidDetail = {
        "stickers": stickers,
        "problems": summary["problems"],
        "repairs": summary["repairs"],
        "low_confidence": summary["low_confidence"],
    }
    return JobError(
        ErrorCode.SCAN_INVALID,
        "the scan is not a valid cube as read ("
        + "; ".join(reasons)
        + f"); stickers at fault: {', '.join(stickers) or 'unknown'}; check that the "
        "cube is assembled correctly and evenly lit, then start again",
        detail,
    )
