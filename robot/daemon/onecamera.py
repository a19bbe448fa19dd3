"""The one-camera scan of a turntable or two-gripper robot in the daemon.

A kind profile whose ``[[cameras]]`` is one camera with ``view = "face"``
(:attr:`robot.config.RobotConfig.scan_camera`) has a camera that looks at that face of the cube
as it sits in the machine (``faces = ["U"]``: above the turntable, as on CUBOTino). The daemon
reads the cube by the kind's scan choreography (:mod:`robot.kinds.choreography`, docs
kinds-scanning.md) through the real motors:

* it starts from the parts' state the journal's last executed action left (this job's, or, for
  a new job, the previous job's: a scan interrupted by a crash may leave the table turned);
* each action is journaled before it is sent: its wire moves (:mod:`robot.kinds.wire`) become
  job moves whose rows carry the action, its effect (a whole-cube rotation), the orientation
  since the scan began and the parts' state after it, executed by the job's
  :class:`~robot.daemon.execution.Executor` (firmware resets recovered as for any move). The
  cube is not known until the scan ends, so the journal's ``physical`` stays empty until then;
  the rows' orientation is the cube's against how it sat when the job's first scan began, so
  after a crash mid-scan (:mod:`robot.daemon.recovery`: the job stays resumable) ``resume``
  scans on from the orientation and parts' state of the last executed row, in the same frame
  (a new job instead starts its scan from that parts' state);
* after each view action it takes the camera's frame, samples it at the camera's calibrated
  sticker sites and places the samples by the camera-grid bookkeeping; the whole cube is then
  classified, and faces with doubtful stickers are shown again in new views (up to
  ``[scan] attempts - 1`` more passes) with the looks combined;
* the read is returned in the frame of the cube **as it sits in the machine when the scan
  ends** (so ``scan_complete``'s facelets and stickers in doubt name the cube as it sits then),
  which is where the planner starts, from the parts' state the scan left.

The same read serves the check after execution (the pipeline's reader): it reads the cube as it
sits after the read's own actions, which the job's tracked cube follows move by move.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from robot.daemon.context import Context, Job
from robot.daemon.events import ErrorCode
from robot.daemon.execution import Executor
from robot.daemon.mechanism import KindMechanism
from robot.daemon.ports import Cameras
from robot.errors import JobError, PlanError
from robot.kinds.choreography import Look, MachineState
from robot.kinds.frames import frames
from robot.kinds.kindscan import TakenLook, run_scan
from robot.kinds.mechanism import Action, PartsState
from robot.kinds.planner import PlannedAction
from robot.kinds.wire import wire_program
from solver.cube.facelets import ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.validate import validate

if TYPE_CHECKING:
    from vision.calibration import StickerSite
    from vision.classify import Classification
    from vision.scan import ScanResult

__all__ = ["OneCameraScan", "held_read", "one_camera_for"]

logger = logging.getLogger(__name__)

UInt8Image = npt.NDArray[np.uint8]


def one_camera_for(
    ctx: Context,
    mechanism: KindMechanism | None,
    executor: Executor,
    cameras: Cameras | None,
    scheme: ColourScheme,
) -> OneCameraScan | None:
    """The one-camera scan of the profile (None: six face motors, or cameras that see every
    face at once)."""
    camera = ctx.config.scan_camera
    if mechanism is None or cameras is None or camera is None:
        return None
    return OneCameraScan(ctx, mechanism, executor, cameras, scheme)


def held_read(read: Classification, orientation: int) -> Classification:
    """``read`` (of the cube in the frame where the machine's orientation is the identity) as
    a read of the cube as it sits in ``orientation``: every per-sticker field moved with its
    sticker (sticker ``j`` of the result is sticker ``q[j]`` of ``read``, ``q`` the
    orientation's permutation, as :meth:`robot.kinds.kindscan.KindScan.cube_as_held`)."""
    from vision.classify import StickerRef

    n = read.n
    q = frames(n).perms[orientation]
    where = np.argsort(q)  # sticker i of ``read`` is sticker where[i] of the result

    def grid(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
        flat = values.reshape(6 * n * n, *values.shape[3:])
        moved: npt.NDArray[Any] = flat[q].reshape(values.shape)
        return moved

    def ref(sticker: StickerRef) -> StickerRef:
        return StickerRef.from_flat(int(where[sticker.flat(n)]), n)

    cube = Cube(read.cube.flat[q], n)
    return replace(
        read,
        cube=cube,
        confidence=grid(read.confidence),
        low_confidence=tuple(ref(s) for s in read.low_confidence),
        repairs=tuple(replace(r, stickers=tuple(ref(s) for s in r.stickers)) for r in read.repairs),
        problems=tuple(validate(cube, read.scheme)),
        margins=None if read.margins is None else grid(read.margins),
        colour_costs=None if read.colour_costs is None else grid(read.colour_costs),
        disputed=None if read.disputed is None else grid(read.disputed),
    )


class OneCameraScan:
    """Reads the cube of a turntable or two-gripper robot with its one camera."""

    def __init__(
        self,
        ctx: Context,
        mechanism: KindMechanism,
        executor: Executor,
        cameras: Cameras,
        scheme: ColourScheme,
    ) -> None:
        camera = ctx.config.scan_camera
        assert camera is not None  # one_camera_for checks it
        self.ctx = ctx
        self.kind = mechanism
        self.executor = executor
        self.cameras = cameras
        self.scheme = scheme
        self.name = camera.name
        self.face = Face[camera.faces[0]]
        # the scan in progress: the job, the parts' state it started from, its actions so far
        # and how many wire moves they made
        self._job: Job | None = None
        self._start: PartsState = mechanism.mechanism.start
        self._orientation = 0
        #: journal the looks (the job's first read: a crash would leave the cube unknown)
        self._keep_looks = False
        self._planned: list[PlannedAction] = []
        self._wired = 0
        self._frames: dict[str, UInt8Image] = {}

    # === the scan =================================================================================

    def _sites(self) -> tuple[StickerSite, ...]:
        from vision.errors import CalibrationError

        calibration = self.cameras.calibration
        if calibration is None:
            raise JobError(
                ErrorCode.NO_CALIBRATION,
                f"cannot scan: camera {self.name} has no calibration; run `cuberobot vision "
                "calibrate` and set [[cameras]] calibration in the profile",
            )
        try:
            return calibration.view(self.name).sites
        except CalibrationError as exc:
            raise JobError(ErrorCode.NO_CALIBRATION, f"cannot scan: {exc}") from exc

    async def scan(self, job: Job, *, resume: bool = False) -> tuple[ScanResult, int]:
        """Run the choreography on ``job`` (its actions journaled as job moves); the read of
        the cube as it sits in the machine afterwards, and how many passes it combines.
        ``resume``: go on with the job's first scan, interrupted by a crash (its looks are
        used again, the rows keep its frame); else a fresh scan."""
        from vision.errors import VisionError
        from vision.scan import ScanResult

        sites = self._sites()
        self._job = job
        # the parts' state the last executed action left: this job's, or the last job's that
        # moved (a scan interrupted by a crash may have left the table turned)
        self._start = await self.kind.parts_at(job, job.moves_done)
        self._keep_looks = await self._unread(job)
        if resume and self._keep_looks:
            self._orientation, prior = await self._resumed(job)
        else:
            self._orientation, prior = 0, []
            if self._keep_looks:  # a fresh first read: earlier looks are in another frame
                await self.ctx.journal.call(self.ctx.journal.sync.forget_looks, job.id)
        self._planned = []
        self._wired = 0
        config = self.ctx.config
        try:
            kscan = await run_scan(
                self.kind.mechanism,
                self._act,
                self._capture,
                sites,
                camera=self.face,
                start=MachineState(self._orientation, self._start),
                second_looks=config.scan.attempts - 1,
                scheme=self.scheme,
                prior=prior,
                on_look=self._journal_look,
            )
        except VisionError as exc:
            raise JobError(ErrorCode.SCAN_FAILED, f"scan failed: {exc}") from exc
        except PlanError as exc:
            raise JobError(
                ErrorCode.SCAN_FAILED,
                f"scan failed: {exc}; check the profile's [[cameras]] faces and the "
                f"[robot.{'turntable' if config.robot.kind == 'turntable' else 'two_gripper'}] "
                "table",
            ) from exc
        finally:
            self._job = None
        orientation = kscan.state.orientation
        read = held_read(kscan.read, orientation)
        q = frames(kscan.n).perms[orientation]
        samples = kscan.samples.reshape(-1, 3)[q].reshape(kscan.samples.shape)
        result = ScanResult(read, samples, {self.name: sites})
        self.ctx.last_scan = (dict(self._frames), result)
        logger.info(
            "one-camera scan: %d action(s), %d frame(s) in %d pass(es), %.2f s of machine "
            "time; %s, confidence %.4f",
            len(self._planned),
            sum(len(p.looks) for p in kscan.passes),
            len(kscan.passes),
            kscan.seconds,
            read.verdict,
            read.cube_confidence,
        )
        return result, len(kscan.passes)

    async def read_now(self) -> ScanResult:
        """A read of the cube as it sits now, for the check after execution (the current
        job's)."""
        job = self.ctx.job
        if job is None:
            raise JobError(ErrorCode.INTERNAL, "a one-camera read outside a job")
        result, _ = await self.scan(job)
        return result

    async def _resumed(self, job: Job) -> tuple[int, list[TakenLook]]:
        """Where the job's first read, interrupted by a crash, goes on from (no read yet: the
        rows since it began are all its actions): the last executed row's orientation, in
        that scan's frame, and the looks it journaled (0 and none: no action executed)."""
        if not job.moves_done:
            return 0, []
        journal = self.ctx.journal
        last = job.actions[job.moves_done - 1]
        n = self.kind.mechanism.n
        prior = [
            TakenLook(
                Look(0, r.orientation, Face[r.face], r.turn),
                np.asarray(r.samples, dtype=np.float64).reshape(n * n, 3),
            )
            for r in await journal.call(journal.sync.looks, job.id)
            if r.after <= job.moves_done and len(r.samples) == n * n
        ]
        logger.info(
            "job %s: the scan goes on after %d action(s) (%s): orientation %d, parts %s; "
            "%d look(s) taken before (%s)",
            job.id,
            job.moves_done,
            last.label,
            last.orientation,
            last.parts,
            len(prior),
            " ".join(t.look.face.name for t in prior) or "none",
        )
        return last.orientation, prior

    async def _unread(self, job: Job) -> bool:
        """Whether this scan is the job's first read (none recorded yet)."""
        journal = self.ctx.journal
        record = await journal.call(journal.sync.job, job.id)
        return record is not None and record.scanned is None

    async def _journal_look(self, taken: TakenLook) -> None:
        """Keep a frame of the job's first read (its view, orientation and samples), so that
        a scan interrupted by a crash goes on from its looks (a later read, e.g. the check
        after execution, starts again from the start if interrupted: nothing is kept)."""
        job = self._job
        assert job is not None
        if not self._keep_looks:
            return
        look = taken.look
        journal = self.ctx.journal
        await journal.call(
            journal.sync.record_look,
            job.id,
            job.moves_done,
            look.orientation,
            look.face.name,
            look.turn,
            taken.samples.tolist(),
        )

    async def _act(self, action: Action) -> None:
        """Journal ``action``'s wire moves as the job's next moves, then execute them."""
        job = self._job
        assert job is not None
        if job.abort_requested:  # the abort stopped the motors after the last action
            raise JobError(ErrorCode.ABORTED, "aborted on request")
        mechanism = self.kind.mechanism
        parts = job.actions[job.moves_done - 1].parts if self._wired else self._start
        step = next((s for s in mechanism.free_steps(parts) if s.action == action), None)
        if step is None:
            raise JobError(
                ErrorCode.PLAN_FAILED,
                f"the scan's action {action} is not possible with the parts at {parts}",
            )
        self._planned.append(PlannedAction(action, step.seconds))
        try:
            program = wire_program(self.kind.table, mechanism, self._planned, self._start)
        except PlanError as exc:
            raise JobError(ErrorCode.PLAN_FAILED, str(exc)) from exc
        # the rows' orientation is the cube's since the job's first scan began
        after = frames(mechanism.n).after
        wires = [
            replace(w, orientation=int(after[self._orientation, w.orientation]))
            for w in program[self._wired :]
        ]
        self._wired = len(program)
        offset = job.moves_done
        job.actions = job.actions[:offset] + tuple(wires)
        job.moves_total = offset + len(wires)
        journal = self.ctx.journal
        record = await journal.call(journal.sync.job, job.id)
        assert record is not None
        await journal.call(
            journal.sync.record_plan,
            job.id,
            record.solution or "",
            record.solution_detail,
            record.program or "",
            [(a.token(), a.turns, a.motor, False) for a in wires],
        )
        await self.executor.execute(job, [a.wire for a in wires], offset)

    async def _capture(self) -> UInt8Image:
        from vision.errors import CaptureError

        frames_ = await asyncio.to_thread(self.cameras.capture)
        if self.name not in frames_:
            raise CaptureError(f"camera {self.name} gave no frame")
        image: UInt8Image = np.asarray(frames_[self.name], dtype=np.uint8)
        self._frames = {self.name: image}
        return image
