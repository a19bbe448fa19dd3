"""What the rooms of the daemon share: the current job, the state, the parts (link, journal),
and the way out (:class:`Outbox`: status, events and replies to the sink and the listeners)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from firmware_protocol.errors import LinkError
from firmware_protocol.messages import FirmwareState, Status
from robot.config import RobotConfig
from robot.daemon.events import (
    STATUS,
    ErrorCode,
    ErrorInfo,
    EventName,
    JobState,
    JournalStatus,
    MoveExecutedPayload,
    PreparingStatus,
    ResumableInfo,
    StatusPayload,
)
from robot.daemon.ports import EventSink, FirmwarePort, Listener
from robot.journal import JobRecord, MoveRecord
from robot.journal_async import AsyncJournal
from robot.kinds.wire import WireAction
from robot.planner import MotorProgram
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, invert

__all__ = ["Context", "Job", "Outbox", "apply_journaled", "face_move", "journaled"]

logger = logging.getLogger(__name__)


@dataclass
class Job:
    """The job in progress (the journal has the durable record)."""

    id: str
    kind: str  # the verb that started it: start, solve, scan (a resumed job keeps its kind)
    command_id: str | None
    started: float  # time.monotonic()
    program: MotorProgram | None = None
    moves_total: int = 0
    moves_done: int = 0
    #: the cube as the executed moves left it (None while a one-camera scan's actions run:
    #: the cube is not read yet)
    physical: Cube | None = None
    face_moves: tuple[Move, ...] = ()  # every face turn of the job, executed ones first
    stage_times: dict[str, float] = field(default_factory=dict)
    abort_requested: bool = False
    rescans: int = 0  # face turns made to read doubtful stickers from another view
    corrections: int = 0  # solves started again after the check after execution
    verified: bool | None = None  # the cube read as solved after execution
    #: the command said the operator set the mechanism's start pose by hand (``start_pose``)
    start_pose: bool = False
    #: a mechanism kind's job (turntable, two-gripper): every wire move of the job as an
    #: action with its effect in the physical frame (:mod:`robot.daemon.mechanism`); empty
    #: for a face-turning robot, whose moves are ``face_moves``
    actions: tuple[WireAction, ...] = ()
    #: when the job first passed each step on its way to the first motor step
    #: (:func:`time.perf_counter_ns`, the clock of :func:`time.monotonic` on Linux): the
    #: breakdown of the compute the robot waits for (``bench/time_to_solved.py``)
    marks: dict[str, int] = field(default_factory=dict)

    def mark(self, step: str) -> None:
        """Note the time the job first reaches ``step`` (any thread)."""
        self.marks.setdefault(step, time.perf_counter_ns())

    def advance(self, idx: int) -> str:
        """Job move ``idx`` executed: turn the tracked cube by it; its text for the events."""
        if self.actions:
            action = self.actions[idx]
            if self.physical is not None:  # else a one-camera scan is still reading it
                self.physical = action.apply(self.physical)
            return str(action)
        assert self.physical is not None
        move = self.face_moves[idx]
        self.physical = self.physical.apply([move])
        return str(move)

    def unwind(self, keep: int) -> None:
        """Only the job's first ``keep`` executed moves are believed now (the report of the
        others was denied): the tracked cube goes back to before the rest."""
        if self.physical is not None:
            self.physical = self.physical.apply(invert(self.moved(keep, self.moves_done)))
        self.moves_done = keep

    def moved(self, start: int, stop: int) -> list[Move]:
        """What job moves ``start`` to ``stop - 1`` did to the cube, as moves."""
        if self.actions:
            return [m for action in self.actions[start:stop] for m in action.effect]
        return list(self.face_moves[start:stop])


def face_move(face: str, turns: int, depth: int = 1) -> Move:
    """A journaled move (face letter, signed quarter turns, layers the gripper held) as the
    turn of that outer block."""
    return Move.block(Face[face], 1, depth, turns)


def journaled(move: MoveRecord) -> Move | WireAction:
    """A journaled move: a face turn, or a mechanism kind's action (its token in ``face``)."""
    if ";" in move.face:
        return WireAction.from_token(move.face, move.motor, move.turns)
    return face_move(move.face, move.turns, move.depth)


def apply_journaled(cube: Cube, move: Move | WireAction) -> Cube:
    """``cube`` after a journaled move (:func:`journaled`)."""
    return move.apply(cube) if isinstance(move, WireAction) else cube.apply([move])


def unapply_journaled(cube: Cube, moves: Sequence[Move | WireAction]) -> Cube:
    """``cube`` as it was before the journaled ``moves`` (in order) were made."""
    made = [m for move in moves for m in (move.effect if isinstance(move, WireAction) else [move])]
    return cube.apply(invert(made))


async def still_running(link: FirmwarePort) -> bool:
    """Whether the firmware is running or holding queued moves (a link that cannot say: no;
    what follows reports its error). Such a firmware has no stop to clear: HOME would be
    refused (BUSY), and a resume waits for its queue (:meth:`Recovery.settle`), as one with
    rescan now does too (the chaos campaign, big-cube gripper, seed 14804: a killed daemon's
    queue still running, every resume with rescan refused at once)."""
    try:
        status = await link.status()
    except LinkError:
        return False
    return status.state in (FirmwareState.RUNNING, FirmwareState.HOLD)


async def counter_denies(
    link: FirmwarePort, below: int, boot_id: int | None, first: Status | None = None
) -> tuple[Status | None, Status]:
    """Whether the firmware's own counter denies that move index ``below`` executed (the
    journal has it from an EXECUTED): two STATUS in a row (``first``, when given, is the
    first; one alone may be a forgery) of boot ``boot_id`` (None: of one boot, whichever),
    both with ``last_executed`` < ``below``, neither with counters at zero (the memory was
    lost: the reports are all there is). Returns the denying STATUS with the higher counter
    (None: not denied) and the last STATUS read. :class:`LinkError` passes through."""
    statuses = [first] if first is not None else []
    while len(statuses) < 2:
        statuses.append(await link.status())
    last = statuses[-1]
    for status in statuses:
        if boot_id is not None and status.boot_id != boot_id:
            return None, last
        boot_id = status.boot_id
        if status.last_executed >= below or status.started_upto == 0:
            return None, last
    return max(statuses, key=lambda s: s.last_executed), last


class Outbox:
    """Publishes to the sink (the MQTT bridge, or none) and to the in-process listeners.

    Keeps, per job, how many executed moves (from the first) the sink acknowledged as
    ``move_executed`` events; the journal stores that mark with the next move, so a restart
    announces the rest again.
    """

    def __init__(self, sink: EventSink | None) -> None:
        self.sink = sink
        self.listeners: list[Listener] = []
        self._reported: dict[str, int] = {}
        #: job id -> who asked for it (the command's ``source``), added to that job's events
        self.sources: dict[str, str | None] = {}

    def status(self, status: StatusPayload) -> None:
        body = dict(status)
        if self.sink is not None:
            self.sink.publish_status(body)
        for listener in self.listeners:
            listener(STATUS, body)

    def event(
        self,
        name: EventName,
        payload: Mapping[str, Any],
        on_delivered: Callable[[], None] | None = None,
    ) -> None:
        body = dict(payload)
        job_id = body.get("job_id")
        if isinstance(job_id, str) and job_id in self.sources:
            body.setdefault("source", self.sources[job_id])
        if self.sink is not None:
            self.sink.publish_event(name, body, on_delivered)
        elif on_delivered is not None:
            on_delivered()
        for listener in self.listeners:
            listener(name, body)

    def move_executed(self, payload: MoveExecutedPayload) -> None:
        """Announce executed move ``payload["index"]`` (1-based) of a job; the sink's
        acknowledgement raises the job's reported mark."""
        job_id, index = payload["job_id"], payload["index"]

        def delivered() -> None:
            if self._reported.get(job_id, 0) == index - 1:
                self._reported[job_id] = index

        self.event(EventName.MOVE_EXECUTED, payload, delivered)

    def reply(self, verb: str, reply: dict[str, Any]) -> None:
        if self.sink is not None:
            self.sink.reply(verb, reply)

    def reported(self, job_id: str) -> int:
        return self._reported.get(job_id, 0)

    def set_reported(self, job_id: str, count: int) -> None:
        self._reported[job_id] = count

    def forget(self, job_id: str) -> None:
        self._reported.pop(job_id, None)


class Context:
    """The daemon's shared state. ``link`` may be replaced (a fresh session after a stop)."""

    def __init__(
        self, config: RobotConfig, link: FirmwarePort, journal: AsyncJournal, out: Outbox
    ) -> None:
        self.config = config
        self.link = link
        self.journal = journal
        self.out = out
        self.n = config.robot.cube_size
        self.state = JobState.IDLE
        self.job: Job | None = None
        self.last_error: ErrorInfo | None = None
        self.resumable: JobRecord | None = None
        #: the resumable job's firmware does not match the journal: resume only with rescan
        self.rescan_required = False
        #: ... because it lost its counters: moves were sent whose fate no one knows (a
        #: mechanism's parts are unknown too, :meth:`KindMechanism.parts_lost`)
        self.moves_unknown = False
        #: the journal was not trusted at start (cleared once a job has scanned the cube)
        self.journal_problem: JournalStatus | None = None
        #: the solver tables being prepared at start (None once ready)
        self.preparing: PreparingStatus | None = None
        #: set once the solver's tables are ready: a job command waits for it
        self.prepared = asyncio.Event()
        self.prepared.set()
        #: the frames and vision's result of the last scan (for the web page's camera view)
        self.last_scan: tuple[Mapping[str, Any], Any] | None = None
        self.firmware_ready = asyncio.Event()

    def set_state(self, state: JobState) -> None:
        self.state = state
        logger.info("state %s%s", state, f" (job {self.job.id})" if self.job else "")
        self.publish_status()

    def set_error(self, code: ErrorCode | None, message: str | None) -> None:
        self.last_error = {"code": code, "message": message}

    async def record_stage_time(self, job: Job, stage: str, started: float) -> None:
        """Add the time since ``started`` (``time.perf_counter()``) to the job's ``stage``."""
        seconds = time.perf_counter() - started
        job.stage_times[stage] = round(job.stage_times.get(stage, 0.0) + seconds, 4)
        await self.journal.call(self.journal.sync.record_stage_time, job.id, stage, seconds)

    def publish_status(self) -> None:
        self.out.status(self.status())

    def status(self) -> StatusPayload:
        job = self.job
        done = job.moves_done if job else 0
        total = job.moves_total if job else 0
        if self.state is JobState.DONE:
            progress = 100
        elif total:
            progress = round(100 * done / total)
        else:
            progress = 0
        eta: float | None = None
        if job is not None and self.state is JobState.EXECUTING and job.actions:
            eta = round(sum(a.seconds for a in job.actions[done:]), 2)
        elif job is not None and self.state is JobState.EXECUTING and job.face_moves:
            # a turn takes as long whatever the layers its gripper holds
            rest = [Move.outer(m.face, m.turns) for m in job.face_moves[done:]]
            eta = round(self.config.cost_model.estimate(rest), 2)
        elif self.state is JobState.DONE:
            eta = 0.0
        info = self.link.info
        resumable: ResumableInfo | None = None
        if self.resumable is not None:
            resumable = {
                "job_id": self.resumable.id,
                "moves_done": self.resumable.executed,
                "moves_total": self.resumable.total_moves,
                "needs_rescan": self.rescan_required,
            }
        return {
            "state": str(self.state),
            "job_id": job.id if job else None,
            "kind": job.kind if job else None,
            "progress": progress,
            "moves_done": done,
            "moves_total": total,
            "eta_s": eta,
            "error": self.last_error,
            "resumable": resumable,
            "firmware": {
                "connected": self.link.connected,
                "version": info.firmware_version if info else None,
                "boot_id": info.boot_id if info else None,
            },
            "robot_id": self.config.robot.id,
            "cube_size": self.n,
            "journal": self.journal_problem,
            "preparing": self.preparing,
            "vision": (
                {"rescans": job.rescans, "corrections": job.corrections, "verified": job.verified}
                if job
                else None
            ),
        }
