"""In-memory fakes for the daemon's seams (:mod:`robot.daemon.ports`) and a rig that runs a
:class:`~robot.daemon.Daemon` on them: no pty, no broker, no real camera.

* :class:`FakeFirmware` holds what survives a link: the physical cube its motors turn, the
  boot id, the move counters, the latched state, and the faults to inject. :class:`FakeLink`
  is one connection to it (the daemon's ``link``; ``link_factory`` makes new ones).
* :class:`FakeCameras` renders the firmware's cube with the simulated renderer at a small size;
  the real vision reads it.
* :class:`MemorySink` records status, events and replies; it acknowledges events at once, or
  holds the acknowledgements (a broker that never answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from firmware_protocol.errors import (
    EmergencyStopError,
    ExecutionEndedError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareContradictionError,
    FirmwareResetError,
    FirmwareStoppedError,
    LinkClosedError,
    LinkError,
    MotorFaultError,
    PortLostError,
    PortOpenError,
    ResetNotAcknowledgedError,
)
from firmware_protocol.link import ExecutionReport, FirmwareInfo, MoveExecuted, PlannedMove
from firmware_protocol.messages import ErrorCode as FwError
from firmware_protocol.messages import FirmwareState, Status, StatusFlags
from firmware_protocol.moves import Face as WireFace
from firmware_protocol.moves import Move as WireMove
from robot.cameras import CameraRig
from robot.config import RobotConfig
from robot.daemon import Daemon, EventName, JobState, Solver
from robot.journal_async import AsyncJournal
from robot.journal_guard import open_journal
from solver.api import solve
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move
from tests.robot.helpers import sim_config
from vision.errors import VisionError
from vision.spotlight import Spotlight

PORT = "fake://firmware"
FaultKind = Literal[
    "reset",
    "estop",
    "motor_fault",
    "link_lost",
    "stopped",
    "out_of_order",
    "contradiction",
    "forged_ahead",
    "forged_estop",
    "estop_forged_status",
    "forged_reset",
]


def fast_config(**motors: Any) -> RobotConfig:
    """configs/simulated.toml with small camera frames, the first solution the solver finds,
    and ``[motors.<FACE>]`` overrides (``None`` removes a motor)."""
    base = sim_config()
    cameras = [c.model_copy(update={"width": 320, "height": 240}) for c in base.cameras]
    updates: dict[str, Any] = {}
    for face, value in motors.items():
        current = getattr(base.motors, face)
        updates[face] = None if value is None else current.model_copy(update=value)
    return base.model_copy(
        update={
            "cameras": cameras,
            "solver": base.solver.model_copy(update={"budget_s": 0.0}),
            "motors": base.motors.model_copy(update=updates),
        }
    )


@dataclass
class Fault:
    """``kind`` strikes when the firmware has executed ``after`` moves (in all)."""

    kind: FaultKind
    after: int


@dataclass
class FakeFirmware:
    cube: Cube
    boot_id: int = 0x1000
    last_received: int = 0
    started_upto: int = 0
    last_executed: int = 0
    state: FirmwareState = FirmwareState.IDLE
    error: FwError = FwError.NONE
    faults: list[Fault] = field(default_factory=list)
    #: connect() fails this many times first (PortOpenError)
    connect_failures: int = 0
    #: raised by execute() at once (the firmware refuses to start)
    refuse: LinkError | None = None
    #: raised by estop() and home() (a bug of the link, not a LinkError)
    broken: Exception | None = None
    #: an execution waits (once) at the group boundary when this many moves executed, until
    #: :meth:`proceed` or an estop
    pause_after: int | None = None
    #: the USB cable is out: links report not connected and every call fails (PortLostError)
    unplugged: bool = False
    #: how long each move group takes on the motors (0: at once)
    group_time_s: float = 0.0
    executed: list[WireMove] = field(default_factory=list)
    homes: int = 0
    resumes: int = 0  # RESUME after HOLD
    reset_pending: bool = False
    hold_requested: bool = False
    running: bool = False
    queued: list[WireMove] = field(default_factory=list)  # received, not executed yet
    #: the firmware runs its queue on its own when the link is lost mid-execution (its
    #: watchdog fed, e.g. the dead daemon's port still open) or the host walks away from an
    #: execution (its task cancelled): the moves left go to ``backlog``
    autonomous: bool = False
    #: (firmware index, move) received and still to run with no execution of a link behind
    #: them; ``backlog_step`` of them complete at every STATUS (0: the motors are stuck)
    backlog: list[tuple[int, WireMove]] = field(default_factory=list)
    backlog_step: int = 1
    paused: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: a forged STATUS (valid CRC) answers the next STATUS request in place of the real one
    forged_status: Status | None = None
    #: the next STATUS request waits for this event before it is answered (once)
    status_gate: asyncio.Event | None = None

    def apply(self, move: WireMove, index: int) -> None:
        face = Face[WireFace(move.motor).name]
        # the gripper turns ``depth`` outer layers (big cubes), like the simulated firmware
        self.cube = self.cube.apply([Move.block(face, 1, move.depth, move.quarter_turns)])
        self.executed.append(move)
        self.last_executed = self.started_upto = index

    def finish_queue(self, count: int) -> None:
        """Execute ``count`` queued moves with no host listening (the daemon is dead)."""
        for move in self.queued[:count]:
            self.apply(move, self.last_executed + 1)
        del self.queued[:count]

    def proceed(self) -> None:
        self.pause_after = None
        self.paused.clear()
        self.wake.set()

    def take_fault(self) -> Fault | None:
        for fault in self.faults:
            if fault.after <= len(self.executed):
                self.faults.remove(fault)
                return fault
        return None

    def run_backlog(self, count: int | None = None) -> None:
        """Complete ``count`` (all: ``None``) moves of the backlog, in order."""
        take = len(self.backlog) if count is None else count
        for index, move in self.backlog[:take]:
            self.apply(move, index)
        del self.backlog[:take]

    def status(self) -> Status:
        state = self.state
        if state is FirmwareState.IDLE and self.backlog and not self.running:
            if self.hold_requested:
                state = FirmwareState.HOLD
            else:
                self.run_backlog(self.backlog_step)
                state = FirmwareState.RUNNING if self.backlog else FirmwareState.IDLE
        if state is FirmwareState.IDLE and self.running:
            held = self.hold_requested and self.paused.is_set()
            state = FirmwareState.HOLD if held else FirmwareState.RUNNING
        return Status(
            boot_id=self.boot_id,
            state=state,
            error=self.error,
            error_motor=0xFF,
            flags=StatusFlags.HOLD_REQUESTED if self.hold_requested else StatusFlags.NONE,
            enabled_mask=0x3F,
            queue_free=16,
            expected_seq=0,
            last_received=self.last_received,
            started_upto=self.started_upto,
            last_executed=self.last_executed,
            uptime_ms=0,
        )


class FakeLink:
    """One connection to a :class:`FakeFirmware` (a :class:`~robot.daemon.FirmwarePort`)."""

    def __init__(self, firmware: FakeFirmware) -> None:
        self.fw = firmware
        self.info: FirmwareInfo | None = None
        self._connected = False
        self._closed = False
        self._running: list[WireMove] | None = None  # the moves of the running execution

    @property
    def connected(self) -> bool:
        return self._connected and not self.fw.unplugged

    @property
    def latency_s(self) -> float:
        return 0.002

    @property
    def round_trip_s(self) -> float:
        return 0.0015

    async def connect(self) -> FirmwareInfo:
        fw = self.fw
        if self._closed:
            raise LinkClosedError(f"link to {PORT} closed", PORT)
        if fw.connect_failures > 0:
            fw.connect_failures -= 1
            raise PortOpenError(f"cannot open {PORT}: no such device", PORT)
        self._connected = True
        self.info = FirmwareInfo(
            PORT, 1, "fake-1.0", 6, 16, 8, 1000, fw.boot_id, fw.last_executed,
            fw.started_upto, fw.state, fw.error,
        )  # fmt: skip
        return self.info

    def _check(self) -> None:
        if self._closed or not self._connected:
            raise LinkClosedError(f"link to {PORT} is not connected", PORT)
        if self.fw.unplugged:
            raise PortLostError(f"{PORT}: the port is gone (unplugged)", PORT)

    async def status(self) -> Status:
        self._check()
        gate, self.fw.status_gate = self.fw.status_gate, None
        if gate is not None:
            await gate.wait()
        await asyncio.sleep(0)
        forged, self.fw.forged_status = self.fw.forged_status, None
        return forged if forged is not None else self.fw.status()

    async def estop(self) -> Status:
        self._check()
        if self.fw.broken is not None:
            raise self.fw.broken
        self.fw.state, self.fw.error = FirmwareState.STOPPED, FwError.ESTOP
        self.fw.queued.clear()
        self.fw.backlog.clear()
        self.fw.wake.set()
        return self.fw.status()

    async def hold(self) -> Status:
        self._check()
        self.fw.hold_requested = True
        return self.fw.status()

    async def resume(self) -> Status:
        self._check()
        self.fw.resumes += 1
        self.fw.hold_requested = False
        self.fw.paused.clear()
        self.fw.wake.set()
        return self.fw.status()

    async def home(self, motor_mask: int = 0x3F) -> Status:
        self._check()
        if self.fw.broken is not None:
            raise self.fw.broken
        fw = self.fw
        fw.state, fw.error, fw.hold_requested = FirmwareState.IDLE, FwError.NONE, False
        fw.homes += 1
        return fw.status()

    def acknowledge_reset(self) -> None:
        self.fw.reset_pending = False

    async def close(self) -> None:
        self._closed = True
        self._connected = False
        self.fw.wake.set()

    def execute(self, moves: Sequence[WireMove]) -> AsyncIterator[MoveExecuted]:
        self._check()
        fw = self.fw
        if fw.reset_pending:
            raise ResetNotAcknowledgedError(f"{PORT}: acknowledge the reset first", PORT)
        base = fw.last_received + 1
        if fw.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
            report = ExecutionReport(tuple(moves), (), not_executed=_planned(moves, base, 0))
            raise FirmwareStoppedError(
                f"firmware on {PORT} is {fw.state.name}; run `cuberobot home`", PORT, report
            )
        if fw.refuse is not None:
            raise fw.refuse
        fw.last_received += len(moves)
        fw.queued = list(moves)
        self._running = list(moves)
        return self._run(self._running, base)

    def extend(self, moves: Sequence[WireMove]) -> None:
        self._check()
        if self._running is None:
            raise ExecutionEndedError(f"{PORT}: no execution is running to extend", PORT)
        self.fw.last_received += len(moves)
        self.fw.queued += list(moves)
        self._running.extend(moves)

    async def _run(self, running: list[WireMove], base: int) -> AsyncIterator[MoveExecuted]:
        fw = self.fw
        done: list[MoveExecuted] = []
        fw.running = True
        unapplied = 0  # the first move of ``running`` not applied yet
        try:
            fw.run_backlog()  # the firmware's queue: what it still had runs first
            for position, move in enumerate(running):  # grows with extend()
                moves = tuple(running)
                if position == 0 or not moves[position - 1].simultaneous_with_next:
                    await self._gate(moves, base, done, position)
                fault = fw.take_fault()
                if fault is not None and fault.kind == "forged_reset":
                    # a forged EXECUTED claims this move done, then the board resets: its
                    # counters (kept across the reset) say the move never completed
                    at = asyncio.get_running_loop().time()
                    forged = MoveExecuted(position, base + position, move, at)
                    yield forged
                    fw.boot_id += 1
                    fw.reset_pending = True
                    fw.queued.clear()
                    rest = _planned(moves, base, position + 1)
                    lost = ExecutionReport(moves, (*done, forged), not_executed=rest)
                    raise FirmwareResetError(f"firmware on {PORT} reset mid-sequence", PORT, lost)
                if fault is not None and fault.kind == "forged_estop":
                    # a forged EXECUTED claims this move done before the motors ran it, and
                    # an emergency stop comes before any STATUS could deny it
                    at = asyncio.get_running_loop().time()
                    forged = MoveExecuted(position, base + position, move, at)
                    yield forged
                    fw.state, fw.error = FirmwareState.STOPPED, FwError.ESTOP
                    rest = _planned(moves, base, position + 1)
                    stopped = ExecutionReport(moves, (*done, forged), not_executed=rest)
                    raise EmergencyStopError(f"emergency stop on {PORT}", PORT, stopped)
                if fault is not None and fault.kind == "forged_ahead":
                    # a forged EXECUTED (valid CRC, within what was sent) claims this move
                    # done before the motors ran it; the next STATUS denies it
                    at = asyncio.get_running_loop().time()
                    yield MoveExecuted(position, base + position, move, at)
                    unknown = ExecutionReport(
                        moves, tuple(done), unknown=_planned(moves, base, position)
                    )
                    raise FirmwareContradictionError(
                        f"firmware on {PORT} sent a report the host cannot trust (last_executed="
                        f"{fw.last_executed} in a STATUS sent after an EXECUTED reported move "
                        f"{base + position} executed)",
                        PORT,
                        unknown,
                        "last_executed",
                        fw.last_executed,
                    )
                if fault is not None and fault.kind != "out_of_order":
                    raise self._fault(fault.kind, moves, base, done, position)
                fw.apply(move, base + position)
                unapplied = position + 1
                if fw.queued:
                    fw.queued.pop(0)
                at = asyncio.get_running_loop().time()
                shown = position + 1 if fault is not None else position
                event = MoveExecuted(shown, base + position, move, at)
                done.append(event)
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            # the host walked away from the execution (its task cancelled): an ``autonomous``
            # firmware goes on with what it received, as a real one does
            if fw.autonomous and fw.state is FirmwareState.IDLE:
                fw.backlog = [(base + k, m) for k, m in enumerate(running) if k >= unapplied]
            raise
        finally:
            self._running = None
            fw.running = False
            fw.paused.clear()

    async def _gate(
        self, moves: tuple[WireMove, ...], base: int, done: list[MoveExecuted], position: int
    ) -> None:
        """A group boundary: let the loop run, wait while paused or held, stop if stopped."""
        fw = self.fw
        await asyncio.sleep(fw.group_time_s)
        paused = fw.pause_after is not None and len(fw.executed) >= fw.pause_after
        if paused:
            fw.pause_after = None  # once
        if paused or fw.hold_requested:
            fw.paused.set()
            fw.wake.clear()
            while fw.state is FirmwareState.IDLE and not self._closed and fw.paused.is_set():
                await fw.wake.wait()
                fw.wake.clear()
        if self._closed:
            report = ExecutionReport(moves, tuple(done), unknown=_planned(moves, base, position))
            raise ExecutionLinkError(f"link to {PORT} closed", PORT, report)
        if fw.state is FirmwareState.STOPPED:
            raise self._fault("estop", moves, base, done, position, set_state=False)

    def _fault(
        self,
        kind: FaultKind,
        moves: tuple[WireMove, ...],
        base: int,
        done: list[MoveExecuted],
        position: int,
        *,
        set_state: bool = True,
    ) -> ExecutionError:
        fw = self.fw
        rest = _planned(moves, base, position)
        report = ExecutionReport(moves, tuple(done), interrupted=rest[:1], not_executed=rest[1:])
        if kind == "reset":
            fw.boot_id += 1
            fw.reset_pending = True
            fw.queued.clear()
            return FirmwareResetError(f"firmware on {PORT} reset mid-sequence", PORT, report)
        if kind in ("estop", "estop_forged_status"):
            if set_state:
                fw.state, fw.error = FirmwareState.STOPPED, FwError.ESTOP
            if kind == "estop_forged_status":  # the next STATUS asked for is forged, behind
                real = fw.status()
                fw.forged_status = replace(
                    real, last_executed=real.last_executed - 2, started_upto=real.last_executed - 2
                )
            return EmergencyStopError(f"emergency stop on {PORT}", PORT, report)
        if kind == "motor_fault":
            fw.state, fw.error = FirmwareState.FAULT, FwError.STALL
            return MotorFaultError(f"motor U stall on {PORT}; run `cuberobot home`", PORT, report)
        if kind == "link_lost":
            if fw.autonomous:
                fw.backlog = [(p.index, p.move) for p in rest]
            lost = ExecutionReport(moves, tuple(done), unknown=rest)
            return ExecutionLinkError(f"lost the link to {PORT}", PORT, lost)
        if kind == "contradiction":  # a forged EXECUTED; the firmware goes on with its queue
            unknown = ExecutionReport(moves, tuple(done), unknown=rest)
            message = f"firmware on {PORT} sent a report the host cannot trust"
            return FirmwareContradictionError(message, PORT, unknown, "last_executed", 0xFFFFFF00)
        fw.state, fw.error = FirmwareState.STOPPED, FwError.WATCHDOG
        return FirmwareStoppedError(f"firmware on {PORT} is STOPPED (WATCHDOG)", PORT, report)


def _planned(moves: Sequence[WireMove], base: int, start: int) -> tuple[PlannedMove, ...]:
    return tuple(PlannedMove(p, base + p, moves[p]) for p in range(start, len(moves)))


class FakeCameras:
    """The cameras of the simulated profile, rendering ``cube_source()`` at 320×240; under
    ``spotlight`` (when set) some sticker positions are lit by a coloured lamp."""

    def __init__(self, config: RobotConfig, cube_source: Callable[[], Cube]) -> None:
        self._rig = CameraRig(config, cube_source, seed=3)
        self.calibration = self._rig.calibration
        self.missing_calibration = self._rig.missing_calibration
        self.calibration_problems = self._rig.calibration_problems
        self.failure: VisionError | None = None
        self.captures = 0
        #: when set, capture() waits (in its worker thread) until ``release`` is set
        self.hold = False
        self.capturing = threading.Event()
        self.release = threading.Event()
        self.spotlight: Spotlight | None = None

    def capture(self) -> dict[str, Any]:
        self.captures += 1
        self.capturing.set()
        if self.hold:
            self.release.wait(10.0)
        if self.failure is not None:
            raise self.failure
        frames = dict(self._rig.capture())
        if self.spotlight is not None and self.calibration is not None:
            frames = self.spotlight.apply(frames, self.calibration)
        return frames


class MemorySink:
    """Records what the daemon publishes (an :class:`~robot.daemon.EventSink`)."""

    def __init__(self) -> None:
        self.statuses: list[dict[str, Any]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.replies: list[tuple[str, dict[str, Any]]] = []
        #: False: hold the acknowledgements (the broker never answered)
        self.acknowledge = True
        self.unacknowledged: list[Callable[[], None]] = []

    def publish_status(self, status: dict[str, Any]) -> None:
        self.statuses.append(status)

    def publish_event(
        self, name: str, payload: dict[str, Any], on_delivered: Callable[[], None] | None = None
    ) -> None:
        self.events.append((name, payload))
        if on_delivered is not None:
            if self.acknowledge:
                on_delivered()
            else:
                self.unacknowledged.append(on_delivered)

    def reply(self, verb: str, payload: dict[str, Any]) -> None:
        self.replies.append((verb, payload))

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    def of(self, name: EventName) -> list[dict[str, Any]]:
        return [payload for n, payload in self.events if n == name]

    def states(self) -> list[str]:
        """The states the status went through, repeats collapsed."""
        out: list[str] = []
        for status in self.statuses:
            if not out or out[-1] != status["state"]:
                out.append(status["state"])
        return out

    def ended(self) -> bool:
        return any(n in (EventName.DONE, EventName.ERROR, EventName.ABORTED) for n in self.names())

    async def wait(self, predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition not met; events so far: {self.names()}")
            await asyncio.sleep(0.005)


@dataclass
class Rig:
    daemon: Daemon
    firmware: FakeFirmware
    cameras: FakeCameras
    sink: MemorySink
    journal: AsyncJournal

    async def job(self, verb: str = "start", payload: Any = b"") -> dict[str, Any]:
        """Submit a job command and wait until the job ends; return the command's reply."""
        reply = await self.daemon.submit(verb, payload)
        assert reply["ok"], reply
        await self.daemon.job_done.wait()
        return reply

    def state(self) -> JobState:
        return self.daemon.state


def scrambled(moves: str = "R U F' D2 L B R2 U' F2") -> Cube:
    return Cube.solved(3).apply(moves)


@contextlib.asynccontextmanager
async def running(
    journal_path: Path,
    start: Cube | None = None,
    *,
    config: RobotConfig | None = None,
    firmware: FakeFirmware | None = None,
    solver: Solver = solve,
    sink: MemorySink | None = None,
    cameras: bool = True,
    wait_ready: bool = True,
    spotlight: Spotlight | None = None,
    link_type: type[FakeLink] = FakeLink,
) -> AsyncIterator[Rig]:
    """A daemon on fakes (its links ``link_type``), running; stopped (and its journal closed)
    at the end."""
    config = config or fast_config()
    fw = firmware or FakeFirmware(start if start is not None else scrambled())
    fake_cameras = FakeCameras(config, lambda: fw.cube)
    fake_cameras.spotlight = spotlight
    sink = sink or MemorySink()
    sync_journal, problem = open_journal(journal_path)
    journal = AsyncJournal(sync_journal)
    daemon = Daemon(
        config,
        link=link_type(fw),
        link_factory=lambda: link_type(fw),
        cameras=fake_cameras if cameras else None,
        journal=journal,
        sink=sink,
        solver=solver,
        firmware_retry_s=0.001,
        journal_problem=problem,
    )
    task = asyncio.create_task(daemon.run())
    try:
        await daemon.ready.wait()
        if wait_ready:
            await daemon.firmware_ready.wait()
        yield Rig(daemon, fw, fake_cameras, sink, journal)
    finally:
        daemon.stop()
        await task
        await journal.close()
