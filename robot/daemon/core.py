"""The robot daemon: one asyncio ``TaskGroup``, a job state machine, the journal and MQTT.

States (published in ``status.state``)::

    IDLE ──start──► SCANNING ──► VALIDATING ──► SOLVING ──► EXECUTING ──► DONE
      ▲  ──solve (given state)──────►┘                          │
      │  ──scan─► SCANNING ─► VALIDATING ─► DONE                 ├──► ERROR    (with a code)
      └───────────── any of DONE / ERROR / ABORTED ◄────────────┴──► ABORTED  (abort, estop)

Tasks of the group (named): ``mqtt`` (the bridge, when MQTT is on), ``firmware`` (connects the
link, with back-off), ``job`` (at most one at a time), ``cmd-<verb>`` (one per command that
takes time). CPU work — reading the cameras and the colours, the solver's search — runs in
threads (``asyncio.to_thread``); the journal has its own writer thread. The loop never blocks.

Nothing is lost: the scanned state, the plan and every executed move (as the firmware reports
it) are in the journal before the next thing happens. After a crash the daemon reconciles an
unfinished job with the firmware's non-volatile executed counter (moves that completed while
it was down are recorded as executed, with ``recovered: true``; moves journaled whose events the
broker never acknowledged are announced again, with ``replayed: true``), and waits for
``resume`` (the remaining moves) or ``resume`` with ``rescan`` (scan, solve and execute from the
cube as it is).
A firmware reset mid-job is reconciled the same way from the link's exact report; the job then
homes the motors and continues with the moves that did not execute (up to
:attr:`Daemon.max_resets` resets per job).

The robot never moves on a state that is not a valid cube: a scan that vision had to repair, or
that is still impossible, ends the job with an ``error`` event (code ``scan_invalid``) naming the
stickers at fault and the low-confidence ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from firmware_protocol.errors import (
    EmergencyStopError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareResetError,
    LinkError,
    MotorFaultError,
)
from firmware_protocol.link import FirmwareInfo, LinkConfig, MoveExecuted
from firmware_protocol.messages import FirmwareState, Status
from firmware_protocol.moves import Move as WireMove
from robot.commands import (
    Command,
    ResumeCommand,
    SolveCommand,
    command_id_of,
    error_reply,
    ok_reply,
    parse_command,
)
from robot.config import RobotConfig
from robot.errors import CommandError, JobError, PlanError
from robot.journal import AsyncJournal, JobRecord
from robot.planner import MotorProgram, Planner
from solver.api import solve as solver_solve
from solver.cube.facelets import SCHEMES, Cube
from solver.cube.notation import Move, format_moves
from solver.cube.validate import validate
from solver.errors import CubeError
from solver.solution import Solution

__all__ = ["Cameras", "Daemon", "FirmwarePort", "Solver", "State", "link_config"]

logger = logging.getLogger(__name__)


class State(StrEnum):
    IDLE = "IDLE"
    SCANNING = "SCANNING"
    VALIDATING = "VALIDATING"
    SOLVING = "SOLVING"
    EXECUTING = "EXECUTING"
    DONE = "DONE"
    ERROR = "ERROR"
    ABORTED = "ABORTED"


BUSY_STATES = (State.SCANNING, State.VALIDATING, State.SOLVING, State.EXECUTING)


class FirmwarePort(Protocol):
    """What the daemon uses of :class:`firmware_protocol.link.FirmwareLink`."""

    info: FirmwareInfo | None

    async def connect(self) -> FirmwareInfo: ...
    def execute(self, moves: list[WireMove]) -> Any: ...
    def acknowledge_reset(self) -> None: ...
    async def status(self) -> Status: ...
    async def estop(self) -> Status: ...
    async def hold(self) -> Status: ...
    async def home(self, motor_mask: int = 0x3F) -> Status: ...
    async def close(self) -> None: ...

    @property
    def connected(self) -> bool: ...


class Cameras(Protocol):
    """What the daemon uses of :class:`robot.simrobot.CameraRig`."""

    calibration: Any
    missing_calibration: tuple[str, ...]

    def capture(self) -> dict[str, Any]: ...


Solver = Callable[..., Solution]
Listener = Callable[[str, dict[str, Any]], None]


@dataclass
class _Job:
    id: str
    kind: str
    command_id: str | None
    started: float
    program: MotorProgram | None = None
    moves_total: int = 0
    moves_done: int = 0
    physical: Cube | None = None
    face_moves: tuple[Move, ...] = ()
    stage_times: dict[str, float] | None = None
    abort_requested: bool = False


def link_config(config: RobotConfig) -> LinkConfig:
    return LinkConfig(
        baudrate=config.serial.baud,
        connect_timeout_s=config.serial.connect_timeout_s,
        reconnect_timeout_s=config.serial.reconnect_budget_s,
    )


class Daemon:
    """One robot's daemon. Build it with the pieces (link, cameras, journal), then ``await
    run()``; ``submit(verb, payload)`` is the CLI's way in (MQTT commands go the same way)."""

    max_resets = 3
    scan_attempts = 2

    def __init__(
        self,
        config: RobotConfig,
        *,
        link: FirmwarePort,
        link_factory: Callable[[], FirmwarePort] | None = None,
        cameras: Cameras | None,
        journal: AsyncJournal,
        mqtt_host: str | None = None,
        mqtt_port: int = 1883,
        solver: Solver = solver_solve,
        sw_version: str = "",
        firmware_retry_s: float = 1.0,
    ) -> None:
        self.config = config
        self.link = link
        self.link_factory = link_factory
        self.cameras = cameras
        self.journal = journal
        self.solver = solver
        self.sw_version = sw_version
        self.firmware_retry_s = firmware_retry_s
        self.n = config.robot.cube_size
        self.scheme = SCHEMES[config.colours.scheme]
        self.planner = Planner(config.motors, config.cost_model, self.n)
        self.state = State.IDLE
        self.job: _Job | None = None
        self.last_error: dict[str, Any] | None = None
        self.resumable: JobRecord | None = None
        self.listeners: list[Listener] = []
        self.firmware_ready = asyncio.Event()
        self.ready = asyncio.Event()
        self._group: asyncio.TaskGroup | None = None
        self._job_task: asyncio.Task[None] | None = None
        self._job_done = asyncio.Event()
        self._job_done.set()
        self._seen_ids: set[str] = set()
        #: per job: how many executed moves (from the first) the broker acknowledged as events
        self._reported: dict[str, int] = {}
        self._stop = asyncio.Event()
        self.mqtt = None
        if mqtt_host is not None:
            from robot.mqtt import MqttBridge

            self.mqtt = MqttBridge(
                config, self._on_mqtt_command, host=mqtt_host, port=mqtt_port, sw_version=sw_version
            )

    # === lifecycle ===============================================================================

    async def run(self) -> None:
        """Run until :meth:`stop` (or cancellation)."""
        logger.info(
            "daemon %s starting: N=%d, %d motors, engine %s, cuberobot %s",
            self.config.robot.id,
            self.n,
            len(self.config.motors.faces),
            self.config.solver.engine,
            self.sw_version,
        )
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                if self.mqtt is not None:
                    group.create_task(self.mqtt.run(), name="mqtt")
                group.create_task(self._firmware(), name="firmware")
                self._publish_status()
                self.ready.set()
                await self._stop.wait()
                await self._shutdown()
                raise _Stopped
        except* _Stopped:
            pass
        finally:
            self._group = None

    def stop(self) -> None:
        self._stop.set()

    async def _shutdown(self) -> None:
        if self._job_task is not None and not self._job_task.done():
            self._job_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._job_task
        if self.mqtt is not None:
            await self.mqtt.close()
        await self.link.close()

    async def _firmware(self) -> None:
        """Connect the link (retrying with back-off), then reconcile an unfinished job."""
        delay = self.firmware_retry_s
        while True:
            try:
                info = await self.link.connect()
                break
            except LinkError as exc:
                logger.warning("firmware: %s; retrying in %.1f s", exc, delay)
                self._event("error", {"code": "firmware_unavailable", "message": str(exc)})
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
        logger.info(
            "firmware %s on %s: boot %08x, %d motors, executed counter %d",
            info.firmware_version,
            info.port,
            info.boot_id,
            info.motor_count,
            info.last_executed,
        )
        await self._recover()
        self.firmware_ready.set()
        self._publish_status()

    async def _recover(self) -> None:
        """Reconcile the journal's unfinished job (the daemon died, or the link failed)."""
        record = await self.journal.call(self.journal.sync.unfinished_job)
        if record is None:
            return
        if record.total_moves == 0 or record.physical is None:
            # it never reached the motors: the cube is as it was; nothing to resume
            await self.journal.call(
                self.journal.sync.finish,
                record.id,
                "ABORTED",
                "interrupted",
                f"daemon stopped during {record.state}; no move had been sent",
            )
            self._event(
                "recovered",
                {"job_id": record.id, "state": record.state, "moves_done": 0, "resumable": False},
            )
            return
        await self._replay_unreported(record)
        record = await self._reconcile(record)
        self.resumable = record
        self._event(
            "recovered",
            {
                "job_id": record.id,
                "state": record.state,
                "moves_done": record.executed,
                "moves_total": record.total_moves,
                "physical": record.physical,
                "resumable": True,
            },
        )

    async def _reconcile(self, record: JobRecord) -> JobRecord:
        """Record the moves the firmware executed after the journal last heard (from its
        non-volatile counter), so the journal's physical state is exact."""
        if record.first_index is None or record.dispatch_offset is None:
            return record
        status = await self.link.status()
        fw_done = status.last_executed - record.first_index + 1
        dispatched = record.total_moves - record.dispatch_offset
        in_dispatch = record.executed - record.dispatch_offset
        if fw_done < in_dispatch:
            raise JobError(
                "firmware_counter",
                f"the firmware's executed counter ({status.last_executed}) is behind the "
                f"journal (move index {record.first_index + in_dispatch - 1} executed): this is "
                "not the firmware that ran the job; resume with rescan",
            )
        fw_done = min(fw_done, dispatched)
        if fw_done == in_dispatch:
            return record
        moves = await self.journal.call(self.journal.sync.moves, record.id)
        cube = Cube.from_facelets(record.physical or "", record.size)
        for idx in range(record.executed, record.dispatch_offset + fw_done):
            m = moves[idx]
            move = Move.outer(_face(m.face), m.turns)
            cube = cube.apply([move])
            await self.journal.call(
                self.journal.sync.record_executed,
                record.id,
                idx,
                cube.to_facelets("scheme"),
                record.first_index + idx - record.dispatch_offset,
                self._reported.get(record.id, 0),
            )
            self._move_event(
                record.id,
                idx + 1,
                {
                    "total": record.total_moves,
                    "move": str(move),
                    "motor": m.motor,
                    "recovered": True,
                },
            )
        logger.info(
            "job %s: %d moves executed while the daemon was away",
            record.id,
            fw_done - in_dispatch,
        )
        updated = await self.journal.call(self.journal.sync.job, record.id)
        assert updated is not None
        return updated

    # === status and events ======================================================================

    def status(self) -> dict[str, Any]:
        job = self.job
        done = job.moves_done if job else 0
        total = job.moves_total if job else 0
        if self.state is State.DONE:
            progress = 100
        elif total:
            progress = round(100 * done / total)
        else:
            progress = 0
        eta: float | None = None
        if job is not None and self.state is State.EXECUTING and job.face_moves:
            eta = round(self.config.cost_model.estimate(job.face_moves[done:]), 2)
        elif self.state is State.DONE:
            eta = 0.0
        info = self.link.info
        return {
            "state": str(self.state),
            "job_id": job.id if job else None,
            "kind": job.kind if job else None,
            "progress": progress,
            "moves_done": done,
            "moves_total": total,
            "eta_s": eta,
            "error": self.last_error,
            "resumable": (
                {
                    "job_id": self.resumable.id,
                    "moves_done": self.resumable.executed,
                    "moves_total": self.resumable.total_moves,
                }
                if self.resumable is not None
                else None
            ),
            "firmware": {
                "connected": self.link.connected,
                "version": info.firmware_version if info else None,
                "boot_id": info.boot_id if info else None,
            },
            "robot_id": self.config.robot.id,
            "cube_size": self.n,
        }

    def _publish_status(self) -> None:
        status = self.status()
        if self.mqtt is not None:
            self.mqtt.publish_status(status)
        for listener in self.listeners:
            listener("status", status)

    def _event(
        self, name: str, payload: dict[str, Any], on_delivered: Callable[[], None] | None = None
    ) -> None:
        if self.mqtt is not None:
            self.mqtt.publish_event(name, payload, on_delivered)
        elif on_delivered is not None:
            on_delivered()
        for listener in self.listeners:
            listener(name, payload)

    def _move_event(self, job_id: str, index: int, payload: dict[str, Any]) -> None:
        """Announce executed move ``index`` (1-based) of a job; the broker's acknowledgement
        raises the job's reported mark, which the journal keeps with the next move."""

        def delivered() -> None:
            if self._reported.get(job_id, 0) == index - 1:
                self._reported[job_id] = index

        self._event("move_executed", {"job_id": job_id, "index": index, **payload}, delivered)

    async def _replay_unreported(self, record: JobRecord) -> None:
        """Announce again the executed moves whose events the broker may never have had (the
        daemon died between journaling a move and the broker's acknowledgement). They carry
        ``replayed: true``; a dashboard keys moves by (job_id, index)."""
        self._reported[record.id] = record.reported
        if record.reported >= record.executed:
            return
        moves = await self.journal.call(self.journal.sync.moves, record.id)
        for m in moves[record.reported : record.executed]:
            self._move_event(
                record.id,
                m.idx + 1,
                {
                    "total": record.total_moves,
                    "move": str(Move.outer(_face(m.face), m.turns)),
                    "motor": m.motor,
                    "fw_index": m.fw_index,
                    "replayed": True,
                },
            )
        logger.info(
            "job %s: announced moves %d..%d again (the broker had not acknowledged them)",
            record.id,
            record.reported + 1,
            record.executed,
        )

    def _set_state(self, state: State) -> None:
        self.state = state
        logger.info("state %s%s", state, f" (job {self.job.id})" if self.job else "")
        self._publish_status()

    # === commands ===============================================================================

    async def _on_mqtt_command(self, verb: str, payload: bytes) -> None:
        reply = await self._accept(verb, payload)
        if reply is not None and self.mqtt is not None:
            self.mqtt.reply(verb, reply)

    async def submit(
        self, verb: str, payload: bytes | str | dict[str, Any] = b""
    ) -> dict[str, Any]:
        """Run a command as if it came over MQTT; return its reply (after it completes)."""
        replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        first = await self._accept(verb, payload, replies.put_nowait)
        if first is not None:
            return first
        return await replies.get()

    async def _accept(
        self,
        verb: str,
        payload: bytes | str | dict[str, Any],
        deliver: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any] | None:
        """Validate, de-duplicate and start a command. Returns an immediate reply, or None when
        the reply comes later (through ``deliver`` or MQTT)."""
        try:
            command = parse_command(verb, payload)
        except CommandError as exc:
            raw = payload if isinstance(payload, bytes | str) else b""
            logger.warning("command %s refused: %s", verb, exc)
            return error_reply(verb, command_id_of(raw), exc.code, str(exc))
        if command.id is not None:
            if command.id in self._seen_ids:
                previous = await self.journal.call(self.journal.sync.seen_command, command.id)
                return {**(previous or {}), "duplicate": True, "id": command.id, "verb": verb}
            self._seen_ids.add(command.id)
            new = await self.journal.call(self.journal.sync.record_command, command.id, verb)
            if not new:
                previous = await self.journal.call(self.journal.sync.seen_command, command.id)
                logger.info("command %s %s is a duplicate: ignored", verb, command.id)
                return {**(previous or {}), "duplicate": True, "id": command.id, "verb": verb}

        async def respond(reply: dict[str, Any]) -> None:
            if command.id is not None:
                await self.journal.call(self.journal.sync.record_reply, command.id, reply)
            if deliver is not None:
                deliver(reply)
            elif self.mqtt is not None:
                self.mqtt.reply(verb, reply)

        group = self._group
        if group is None:
            return error_reply(verb, command.id, "not_running", "the daemon is not running")
        group.create_task(self._execute_command(command, respond), name=f"cmd-{verb}")
        return None

    async def _execute_command(
        self, command: Command, respond: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> None:
        try:
            reply = await self._command(command)
        except CommandError as exc:
            reply = error_reply(command.verb, command.id, exc.code, str(exc))
        except LinkError as exc:
            reply = error_reply(command.verb, command.id, "firmware", str(exc))
        except Exception as exc:
            logger.exception("command %s: unexpected failure", command.verb)
            reply = error_reply(command.verb, command.id, "internal", f"internal error: {exc!r}")
        await respond(reply)

    async def _command(self, command: Command) -> dict[str, Any]:
        verb = command.verb
        if verb == "status":
            return ok_reply(command, status=self.status())
        if verb == "estop":
            status = await self.link.estop()
            return ok_reply(command, firmware_state=status.state.name)
        if verb == "abort":
            if self._job_task is None or self._job_task.done():
                raise CommandError("not_running", "abort: no job is running")
            assert self.job is not None
            self.job.abort_requested = True
            was_executing = self.state is State.EXECUTING
            await self._abort_execution()
            await self._job_done.wait()
            if was_executing:
                await self._fresh_session()
                await self.link.home()  # clear the latched stop: ready for the next job
            return ok_reply(command, job_id=self.job.id, state=str(self.state))
        if self._job_task is not None and not self._job_task.done():
            raise CommandError(
                "busy",
                f"{verb}: job {self.job.id if self.job else '?'} is {self.state}; wait for it or "
                "send abort",
            )
        if verb == "home":
            await self._fresh_session()
            status = await self.link.home()
            return ok_reply(command, firmware_state=status.state.name)
        if not self.firmware_ready.is_set():
            raise CommandError(
                "firmware_unavailable",
                f"{verb}: the firmware on {self.config.serial.url} is not connected yet; check "
                "the cable and the [serial] url, then retry",
            )
        if verb == "resume":
            assert isinstance(command, ResumeCommand)
            if self.resumable is None:
                raise CommandError("not_resumable", "resume: no interrupted job in the journal")
            record = self.resumable
            job = _Job(record.id, record.kind, command.id, time.monotonic())
            job.stage_times = dict(record.stage_times)
            self._start_job(job, self._resume_job(job, record, command.rescan))
            return ok_reply(command, job_id=job.id, resumed=True)
        given: Cube | None = None
        if isinstance(command, SolveCommand):
            try:
                given = Cube.from_facelets(command.facelets)
            except CubeError as exc:
                raise CommandError("malformed", f"solve: facelets: {exc}") from None
            if given.n != self.n:
                raise CommandError(
                    "malformed", f"solve: this robot holds an N={self.n} cube, not N={given.n}"
                )
        if self.resumable is not None:
            # a new job on purpose: the interrupted one is closed, its cube state carried over
            await self.journal.call(
                self.journal.sync.finish,
                self.resumable.id,
                "ABORTED",
                "superseded",
                f"superseded by a new {verb} job",
            )
            self.resumable = None
        job_id = await self.journal.call(self.journal.sync.create_job, verb, self.n, command.id)
        job = _Job(job_id, verb, command.id, time.monotonic(), stage_times={})
        self._start_job(job, self._run_job(job, given))
        return ok_reply(command, job_id=job_id)

    def _start_job(self, job: _Job, body: Awaitable[None]) -> None:
        assert self._group is not None
        self.job = job
        self.last_error = None
        self._job_done.clear()

        async def wrapped() -> None:
            try:
                await body
            finally:
                self._job_done.set()

        self._job_task = self._group.create_task(wrapped(), name="job")

    async def _fresh_session(self) -> None:
        """After a stop the firmware discarded its queue: open a new link so that the next
        execution starts from the counters the firmware announces (IDENT), not from what this
        link last sent."""
        if self.link_factory is None:
            return
        old = self.link
        await old.close()
        self.link = self.link_factory()
        await self.link.connect()

    async def _abort_execution(self) -> None:
        """Stop gracefully: hold after the group in progress, then latch a stop (no face is left
        mid-turn), then home so the robot is ready again."""
        if self.state is not State.EXECUTING:
            if self._job_task is not None:
                self._job_task.cancel()
            return
        try:
            await self.link.hold()
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                status = await self.link.status()
                if status.state is not FirmwareState.RUNNING:
                    break
                await asyncio.sleep(0.02)
            await self.link.estop()
        except LinkError as exc:
            logger.warning("abort: %s", exc)

    # === jobs ===================================================================================

    async def _guarded(self, job: _Job, body: Awaitable[None]) -> None:
        """Run a job's body and end the job: DONE, ERROR (with the cause) or ABORTED."""
        try:
            await body
            await self._finish(job, State.DONE)
        except JobError as exc:
            await self._fail(job, exc)
        except asyncio.CancelledError:
            if job.abort_requested:
                await self._finish(job, State.ABORTED, "aborted", "aborted on request")
                return
            raise
        except Exception as exc:  # a bug must not take the daemon (and its journal) down
            logger.exception("job %s: unexpected failure", job.id)
            await self._fail(job, JobError("internal", f"internal error: {exc!r}"))

    async def _run_job(self, job: _Job, given: Cube | None) -> None:
        await self._guarded(job, self._job_body(job, given))

    async def _job_body(self, job: _Job, given: Cube | None) -> None:
        if given is None:
            cube = await self._scan(job)
            if job.kind == "scan":
                return
        else:
            cube = given
            await self.journal.call(
                self.journal.sync.record_scan,
                job.id,
                cube.to_facelets("scheme"),
                {"given": True},
            )
        self._validate(job, cube)
        job.physical = cube
        await self._solve_and_execute(job, cube, offset=0)

    async def _resume_job(self, job: _Job, record: JobRecord, rescan: bool) -> None:
        self.resumable = None
        await self._guarded(job, self._resume_body(job, record, rescan))

    async def _resume_body(self, job: _Job, record: JobRecord, rescan: bool) -> None:
        record = await self._reconcile(record)
        job.moves_done = record.executed
        if rescan:
            cube = await self._scan(job)
            self._validate(job, cube)
            job.physical = cube
            await self._solve_and_execute(job, cube, offset=record.executed)
        else:
            moves = await self.journal.call(self.journal.sync.moves, record.id)
            job.physical = Cube.from_facelets(record.physical or "", record.size)
            job.face_moves = tuple(Move.outer(_face(m.face), m.turns) for m in moves)
            job.moves_total = record.total_moves
            remaining = [
                WireMove(
                    m.motor, m.turns if not self._reversed(m.face) else -m.turns, m.simultaneous
                )
                for m in moves[record.executed :]
            ]
            self._set_state(State.EXECUTING)
            await self._execute(job, remaining, offset=record.executed)

    def _reversed(self, face: str) -> bool:
        cfg = self.config.motors.motor_of(_face(face))
        return bool(cfg and cfg.reversed)

    async def _timed(self, job: _Job, stage: str, started: float) -> None:
        seconds = time.perf_counter() - started
        assert job.stage_times is not None
        job.stage_times[stage] = round(job.stage_times.get(stage, 0.0) + seconds, 4)
        await self.journal.call(self.journal.sync.record_stage_time, job.id, stage, seconds)

    async def _scan(self, job: _Job) -> Cube:
        from vision.errors import VisionError
        from vision.scan import read_cube

        self._set_state(State.SCANNING)
        cameras = self.cameras
        if cameras is None or cameras.calibration is None:
            missing = ", ".join(cameras.missing_calibration) if cameras else "all"
            raise JobError(
                "no_calibration",
                f"cannot scan: camera(s) {missing} have no calibration; run `cuberobot vision "
                "calibrate` and set [[cameras]] calibration in the profile",
            )
        started = time.perf_counter()
        result: Any = None
        for attempt in range(1, self.scan_attempts + 1):
            try:
                frames = await asyncio.to_thread(cameras.capture)
                result = await asyncio.to_thread(
                    read_cube, frames, cameras.calibration, self.n, scheme=self.scheme
                )
            except VisionError as exc:
                await self._timed(job, "scan", started)
                raise JobError("scan_failed", f"scan failed: {exc}") from exc
            if result.valid and not result.repairs:
                break
            logger.info(
                "scan attempt %d: %s; %s",
                attempt,
                "valid only after repairs" if result.valid else "not a valid cube",
                "rescanning" if attempt < self.scan_attempts else "giving up",
            )
        await self._timed(job, "scan", started)
        summary = result.to_json()
        await self.journal.call(
            self.journal.sync.record_scan, job.id, result.cube.to_facelets("scheme"), summary
        )
        self._event(
            "scan_complete",
            {
                "job_id": job.id,
                "facelets": result.cube.to_facelets("scheme"),
                "valid": summary["valid"],
                "repairs": summary["repairs"],
                "low_confidence": summary["low_confidence"],
                "min_confidence": summary["min_confidence"],
                "timings_ms": summary["timings_ms"],
            },
        )
        if not result.valid or result.repairs:
            stickers = sorted(
                {s for r in summary["repairs"] for s in r["stickers"]}
                | {p["where"] for p in summary["problems"]}
            )
            reasons = [r["message"] for r in summary["repairs"]] + [
                p["message"] for p in summary["problems"]
            ]
            raise JobError(
                "scan_invalid",
                "the scan is not a valid cube as read ("
                + "; ".join(reasons)
                + f"); stickers at fault: {', '.join(stickers) or 'unknown'}; check that the "
                "cube is assembled correctly and evenly lit, then start again",
                {
                    "stickers": stickers,
                    "problems": summary["problems"],
                    "repairs": summary["repairs"],
                    "low_confidence": summary["low_confidence"],
                },
            )
        cube: Cube = result.cube
        return cube

    def _validate(self, job: _Job, cube: Cube) -> None:
        self._set_state(State.VALIDATING)
        started = time.perf_counter()
        problems = validate(cube, self.scheme)
        seconds = time.perf_counter() - started
        assert job.stage_times is not None
        job.stage_times["validate"] = round(job.stage_times.get("validate", 0.0) + seconds, 4)
        if problems:
            raise JobError(
                "scan_invalid",
                "impossible cube: " + "; ".join(p.message for p in problems),
                {
                    "stickers": sorted({p.where for p in problems}),
                    "problems": [
                        {"code": p.code, "where": p.where, "message": p.message} for p in problems
                    ],
                    "low_confidence": [],
                },
            )

    async def _solve_and_execute(self, job: _Job, cube: Cube, offset: int) -> None:
        self._set_state(State.SOLVING)
        started = time.perf_counter()
        solution = await asyncio.to_thread(self._solve, cube)
        try:
            program = self.planner.plan(solution.moves)
        except PlanError as exc:
            raise JobError("plan_failed", str(exc)) from exc
        await self._timed(job, "solve", started)
        job.program = program
        job.face_moves = program.face_moves
        job.moves_total = offset + len(program.moves)
        job.moves_done = offset
        if offset:
            previous = await self.journal.call(self.journal.sync.moves, job.id)
            job.face_moves = (
                tuple(Move.outer(_face(m.face), m.turns) for m in previous[:offset])
                + program.face_moves
            )
        detail = {**solution.to_dict(), "program": program.to_dict()}
        await self.journal.call(
            self.journal.sync.record_plan,
            job.id,
            format_moves(solution.moves),
            detail,
            str(program),
            [(m.face.name, m.turns, m.motor, m.simultaneous_with_next) for m in program.moves],
        )
        self._event(
            "solution",
            {
                "job_id": job.id,
                "moves": format_moves(solution.moves),
                "engine": solution.engine,
                "htm": solution.htm,
                "qtm": solution.qtm,
                "robot_time_s": solution.robot_time_s,
                "program": program.to_dict(),
            },
        )
        if not program.moves:
            return
        self._set_state(State.EXECUTING)
        await self._execute(job, program.wire_moves(), offset)

    def _solve(self, cube: Cube) -> Solution:
        """Run the configured engine (in a worker thread). A robot with a face missing asks for
        a solution that avoids it first (longer, but far cheaper than replacing each turn:
        about 22 moves against 20 plus 12 per replaced turn); if the engine cannot, the planner
        replaces the turns."""
        cfg = self.config.solver
        options: dict[str, Any] = {
            "budget_s": cfg.budget_s,
            "max_length": cfg.max_length,
            "cost_model": self.config.cost_model,
        }
        if self.config.motors.missing:
            restricted = {
                **options,
                "faces": [f.name for f in sorted(self.config.motors.faces)],
                "max_length": cfg.max_length or 26,
            }
            if cfg.engine == "twophase":
                restricted["timeout_s"] = max(2.0, 4 * cfg.budget_s)
            try:
                return self.solver(cube, cfg.engine, **restricted)
            except CubeError as exc:
                logger.info(
                    "engine %s found no solution avoiding %s (%s); the planner replaces its turns",
                    cfg.engine,
                    "".join(f.name for f in self.config.motors.missing),
                    exc,
                )
        try:
            return self.solver(cube, cfg.engine, **options)
        except CubeError as exc:
            raise JobError("solve_failed", f"solver ({cfg.engine}): {exc}") from exc

    async def _execute(self, job: _Job, moves: list[WireMove], offset: int) -> None:
        """Execute ``moves`` (job moves ``offset`` on), journaling each as it executes; recover
        from firmware resets."""
        started = time.perf_counter()
        resets = 0
        position = 0  # moves of ``moves`` executed so far
        try:
            while position < len(moves):
                batch = moves[position:]
                base_offset = offset + position
                status = await self.link.status()
                await self.journal.call(
                    self.journal.sync.record_dispatch,
                    job.id,
                    status.boot_id,
                    status.last_received + 1,
                    base_offset,
                )
                execution = self.link.execute(batch)
                recorded = 0
                try:
                    async for event in execution:
                        await self._executed(job, event, base_offset, recorded)
                        recorded += 1
                    position += recorded
                except ExecutionError as exc:
                    for event in exc.report.executed[recorded:]:
                        await self._executed(job, event, base_offset, recorded)
                        recorded += 1
                    position += recorded
                    if isinstance(exc, FirmwareResetError):
                        resets += 1
                        self._event(
                            "firmware_reset",
                            {
                                "job_id": job.id,
                                "moves_done": job.moves_done,
                                "moves_total": job.moves_total,
                                "interrupted": [str(p.move) for p in exc.report.interrupted],
                                "message": str(exc),
                                "recovering": resets <= self.max_resets,
                            },
                        )
                        if resets > self.max_resets:
                            raise JobError(
                                "firmware_reset",
                                f"the firmware reset {resets} times during the job; "
                                f"{job.moves_done} of {job.moves_total} moves executed; check "
                                "the power supply, then resume",
                            ) from exc
                        self.link.acknowledge_reset()
                        await self.link.home()
                        continue
                    if isinstance(exc, EmergencyStopError):
                        raise JobError(
                            "aborted" if job.abort_requested else "estop",
                            f"{'aborted' if job.abort_requested else 'emergency stop'} after "
                            f"{job.moves_done} of {job.moves_total} moves",
                        ) from exc
                    if isinstance(exc, MotorFaultError):
                        raise JobError("motor_fault", str(exc)) from exc
                    if isinstance(exc, ExecutionLinkError):
                        raise JobError("link_lost", str(exc)) from exc
                    raise JobError("execution_failed", str(exc)) from exc
        except LinkError as exc:  # refused before anything moved (stopped, busy, closed)
            raise JobError("firmware", str(exc)) from exc
        finally:
            await self._timed(job, "execute", started)

    async def _executed(
        self, job: _Job, event: MoveExecuted, base_offset: int, expected: int
    ) -> None:
        if event.position != expected:
            raise JobError(
                "execution_order",
                f"the firmware reported move {event.position + 1} after {expected}; stopping",
            )
        idx = base_offset + event.position
        move = job.face_moves[idx]
        assert job.physical is not None
        job.physical = job.physical.apply([move])
        await self.journal.call(
            self.journal.sync.record_executed,
            job.id,
            idx,
            job.physical.to_facelets("scheme"),
            event.index,
            self._reported.get(job.id, 0),
        )
        job.moves_done = idx + 1
        self._move_event(
            job.id,
            idx + 1,
            {
                "total": job.moves_total,
                "move": str(move),
                "motor": event.move.motor,
                "fw_index": event.index,
                "progress": round(100 * job.moves_done / job.moves_total),
            },
        )
        self._publish_status()

    async def _finish(
        self, job: _Job, state: State, code: str | None = None, message: str | None = None
    ) -> None:
        elapsed = round(time.monotonic() - job.started, 4)
        stage_times = dict(job.stage_times or {})
        if state is State.DONE and job.kind != "scan":
            solved = job.physical is not None and job.physical.is_solved()
            if not solved:
                await self._fail(
                    job,
                    JobError(
                        "not_solved",
                        "every move executed but the tracked cube is not solved; rescan",
                    ),
                )
                return
        await self.journal.call(self.journal.sync.finish, job.id, str(state), code, message)
        if state is State.DONE:
            self._reported.pop(job.id, None)
            self._event(
                "done",
                {
                    "job_id": job.id,
                    "kind": job.kind,
                    "moves": job.moves_total,
                    "stage_times_s": stage_times,
                    "total_s": elapsed,
                    "solved": job.physical.is_solved() if job.physical is not None else None,
                },
            )
        else:
            self.last_error = {"code": code, "message": message}
            self._event(
                "aborted" if state is State.ABORTED else "error",
                {"job_id": job.id, "code": code, "message": message, "moves_done": job.moves_done},
            )
        self._set_state(state)

    async def _fail(self, job: _Job, exc: JobError) -> None:
        logger.error("job %s failed: %s", job.id, exc)
        state = State.ABORTED if exc.code in ("aborted", "estop") else State.ERROR
        payload = {
            "job_id": job.id,
            "code": exc.code,
            "message": str(exc),
            "moves_done": job.moves_done,
            **exc.detail,
        }
        record = await self.journal.call(self.journal.sync.job, job.id)
        if exc.code in ("link_lost", "firmware_reset") and record is not None and record.remaining:
            # the moves that did execute are in the journal: the job stays open for resume
            await self.journal.call(self.journal.sync.set_state, job.id, "EXECUTING")
            self.resumable = await self.journal.call(self.journal.sync.job, job.id)
            payload["resumable"] = True
        else:
            await self.journal.call(
                self.journal.sync.finish, job.id, str(state), exc.code, str(exc)
            )
        self.last_error = {"code": exc.code, "message": str(exc)}
        self._event("aborted" if state is State.ABORTED else "error", payload)
        self._set_state(state)


class _Stopped(Exception):
    """Raised inside the task group to end :meth:`Daemon.run`."""


def _face(name: str) -> Any:
    from solver.cube.geometry import Face

    return Face[name]
