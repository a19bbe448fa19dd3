"""The simulated stepper firmware: the firmware side of ``PROTOCOL.md``, in asyncio.

It is transport-agnostic: an endpoint (:mod:`firmware_protocol.sim.endpoints`, a pty or a TCP port)
calls :meth:`SimulatedFirmware.port_attached`, feeds it the host's bytes with
:meth:`SimulatedFirmware.port_bytes`, and receives its bytes through the ``write`` callback. Between
the two sits the serial line model (:class:`~firmware_protocol.sim.faults.SerialLine`): baud-rate
pacing and the seeded byte faults of the :class:`~firmware_protocol.sim.faults.FaultSpec`.

What it models:

- a finite move queue (``queue_depth`` moves), groups of two opposite faces that start together;
- motor timing (:mod:`firmware_protocol.sim.motors`): a group lasts as long as its slowest motor;
- non-volatile move counters that survive resets (:class:`NonVolatile`), a boot id that changes
  at every reset;
- the state machine IDLE / RUNNING / HOLD / STOPPED / FAULT / HOMING, the watchdog, ESTOP;
- a virtual cube (any :class:`TurnableCube`, injected: this package knows no cube model) to which
  every executed move is applied, optionally mirrored to a state file (facelets, URFDLB);
- a log of every move (:class:`MoveRecord`) with receive/start/finish times, for tests and
  benchmarks to check exactly-once execution and host-caused gaps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from firmware_protocol.codec import Frame, FrameDecoder
from firmware_protocol.errors import CorruptFrame, MalformedMessage
from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    SEQUENCED_TYPES,
    Ack,
    Clear,
    Enable,
    ErrorCode,
    ErrorReport,
    EStop,
    Executed,
    FirmwareState,
    Heartbeat,
    Hello,
    Hold,
    Home,
    Ident,
    Message,
    MessageType,
    Moves,
    Nak,
    NakReason,
    Resume,
    Status,
    StatusFlags,
    StatusRequest,
    WireMove,
    encode_message,
    parse_message,
)
from firmware_protocol.moves import Face, opposite
from firmware_protocol.sim.faults import FaultSpec, SerialLine
from firmware_protocol.sim.motors import MotorProfile, group_time_s

__all__ = [
    "FirmwareConfig",
    "MoveRecord",
    "NonVolatile",
    "PortControl",
    "SimulatedFirmware",
    "TurnableCube",
]

logger = logging.getLogger(__name__)

_NO_MOTOR = 0xFF
_KNOWN_TYPES = frozenset(int(t) for t in MessageType)


class TurnableCube(Protocol):
    """What the simulated firmware needs of a cube: turn a face, show the facelets."""

    def apply(self, face: str, quarter_turns: int) -> None:
        """Turn ``face`` (one of ``URFDLB``) by ``quarter_turns`` (±1, ±2; + is clockwise)."""

    def facelets(self) -> str:
        """The facelet string, faces U R F D L B (Kociemba order)."""


class PortControl(Protocol):
    """What an endpoint lets the firmware do to the port (for the ``vanish`` fault)."""

    def vanish(self, seconds: float) -> None:
        """Make the port disappear for ``seconds``, then come back."""


@dataclass
class NonVolatile:
    """Memory that survives a reset (EEPROM / backup RAM on a real board)."""

    boot_count: int = 0
    boot_id: int = 0
    last_received: int = 0
    started_upto: int = 0
    last_executed: int = 0


@dataclass(frozen=True, slots=True)
class FirmwareConfig:
    """The simulated board. Times in seconds unless the name says otherwise."""

    motors: tuple[MotorProfile, ...] = (MotorProfile(),) * 6
    queue_depth: int = 16
    max_batch: int = 16
    watchdog_ms: int = 1000
    status_period_s: float = 0.25
    boot_time_s: float = 0.05
    home_time_s: float = 0.3
    nak_holdoff_s: float = 0.02
    firmware_version: tuple[int, int, int] = (1, 0, 0)

    def __post_init__(self) -> None:
        if len(self.motors) != 6:
            raise ValueError(f"the simulated firmware has 6 motors, got {len(self.motors)}")
        if not 2 <= self.queue_depth <= 255:
            raise ValueError(f"queue_depth must be 2..255, got {self.queue_depth}")
        if not 1 <= self.max_batch <= 36:
            raise ValueError(f"max_batch must be 1..36, got {self.max_batch}")
        if not 10 <= self.watchdog_ms <= 65535:
            raise ValueError(f"watchdog_ms must be 10..65535, got {self.watchdog_ms}")

    def with_speed(self, factor: float) -> FirmwareConfig:
        """Every motor ``factor`` times faster (for quick tests)."""
        from dataclasses import replace

        return replace(self, motors=tuple(m.scaled(factor) for m in self.motors))


@dataclass
class MoveRecord:
    """One move as the firmware saw it. ``outcome``: queued, executed, interrupted, discarded."""

    index: int
    motor: int
    quarter_turns: int
    boot_id: int
    received_at: float
    started_at: float | None = None
    finished_at: float | None = None
    group_time_s: float = 0.0
    outcome: str = "queued"


@dataclass
class _Session:
    nonce: int
    expected_seq: int
    watchdog_s: float
    last_rx: float
    nak_expected: int = -1
    nak_at: float = -1.0


@dataclass
class _Group:
    moves: list[WireMove]
    records: list[MoveRecord]
    done: asyncio.Future[bool]
    time_s: float
    handles: list[asyncio.TimerHandle] = field(default_factory=list)


class SimulatedFirmware:
    """The firmware side of the protocol, with motors, a virtual cube and fault injection."""

    def __init__(
        self,
        *,
        cube: TurnableCube | None = None,
        config: FirmwareConfig | None = None,
        faults: FaultSpec | None = None,
        seed: int = 0,
        baud: int = 115200,
        state_file: Path | None = None,
        nv: NonVolatile | None = None,
    ) -> None:
        self.cube = cube
        self.config = config or FirmwareConfig()
        self.faults = faults or FaultSpec()
        self.baud = baud
        self.state_file = state_file
        self.nv = nv or NonVolatile()
        self._rng = random.Random(seed)
        self._fault_rng = random.Random(seed ^ 0x5EED)
        self._rx_line = SerialLine(
            self._on_line_rx, baud=baud, faults=self.faults, rng=self._fault_rng, name="host→fw"
        )
        self._tx_line = SerialLine(
            self._on_line_tx, baud=baud, faults=self.faults, rng=self._fault_rng, name="fw→host"
        )
        self._decoder = FrameDecoder()
        self._write: Callable[[bytes], None] | None = None
        self._control: PortControl | None = None
        self._fired: set[tuple[str, int]] = set()
        # volatile state (reset at boot)
        self.state = FirmwareState.IDLE
        self.error = ErrorCode.NONE
        self._error_motor = _NO_MOTOR
        self._session: _Session | None = None
        self._queue: deque[tuple[WireMove, MoveRecord]] = deque()
        self._group: _Group | None = None
        self._hold = False
        self._stop_after_group = False
        self._homed = False
        self._enabled_mask = 0x3F
        self._tx_seq = 0
        self._booted_at = 0.0
        self._booting = True
        self._home_handle: asyncio.TimerHandle | None = None
        self._wake = asyncio.Event()
        self._motor_free_at = 0.0
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        # telemetry
        self.records: list[MoveRecord] = []
        self.resets: list[tuple[int, int, int]] = []  # (old boot id, last_executed, started_upto)
        self.frames_received = 0
        self.corrupt_received = 0

    # --- power and ports ----------------------------------------------------------------------

    @property
    def boot_id(self) -> int:
        return self.nv.boot_id

    @property
    def line_stats(self) -> dict[str, int]:
        out = {}
        for name, line in (("rx", self._rx_line), ("tx", self._tx_line)):
            for key in ("bytes_in", "flipped", "dropped", "duplicated", "stalls"):
                out[f"{name}_{key}"] = getattr(line, key)
        return out

    async def start(self) -> None:
        """Power on: boot (the boot announcement goes out once a port is attached)."""
        self._running = True
        self._boot()
        if self.state_file is not None:
            self._write_state_file()

    async def stop(self) -> None:
        """Power off: stop every task (the non-volatile memory is kept)."""
        self._running = False
        self._interrupt_group()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self._rx_line.clear()
        self._tx_line.clear()
        if self._home_handle is not None:
            self._home_handle.cancel()

    def port_attached(self, write: Callable[[bytes], None], control: PortControl | None) -> None:
        """An endpoint connected a host; ``write`` puts bytes on the port."""
        self._write = write
        self._control = control
        self._decoder.reset()

    def port_detached(self) -> None:
        """The port went away; bytes in flight are lost."""
        self._write = None
        self._rx_line.clear()
        self._tx_line.clear()
        self._decoder.reset()

    def port_bytes(self, data: bytes) -> None:
        """Bytes the host wrote, as they enter the line (paced and faulted before decoding)."""
        self._rx_line.send(data)

    def reset(self) -> None:
        """A firmware reset (watchdog, brown-out, reset button): volatile state is lost."""
        logger.info(
            "firmware reset (boot id %08x): last executed %d, started up to %d",
            self.nv.boot_id,
            self.nv.last_executed,
            self.nv.started_upto,
        )
        self.resets.append((self.nv.boot_id, self.nv.last_executed, self.nv.started_upto))
        self._interrupt_group()
        self._discard_queue()
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        if self._home_handle is not None:
            self._home_handle.cancel()
        self._boot()

    # --- boot --------------------------------------------------------------------------------

    def _boot(self) -> None:
        loop = asyncio.get_running_loop()
        nv = self.nv
        nv.boot_count += 1
        old = nv.boot_id
        while nv.boot_id in (0, old):
            nv.boot_id = self._rng.getrandbits(32)
        nv.last_received = nv.started_upto  # the queue was RAM
        self.state = FirmwareState.IDLE
        self.error = ErrorCode.NONE
        self._error_motor = _NO_MOTOR
        self._session = None
        self._queue.clear()
        self._group = None
        self._hold = False
        self._stop_after_group = False
        self._homed = False
        self._enabled_mask = 0x3F
        self._tx_seq = 0
        self._decoder.reset()
        self._booting = True
        self._booted_at = loop.time()
        self._wake = asyncio.Event()
        self._tasks = [
            loop.create_task(self._boot_then_run(), name="fwsim-boot"),
        ]

    async def _boot_then_run(self) -> None:
        await asyncio.sleep(self.config.boot_time_s)
        self._booting = False
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._motor_loop(), name="fwsim-motors"))
        self._tasks.append(loop.create_task(self._tick_loop(), name="fwsim-tick"))
        self._send(self._ident(nonce=0))

    # --- lines ------------------------------------------------------------------------------

    def _on_line_tx(self, data: bytes) -> None:
        if self._write is not None:
            self._write(data)

    def _on_line_rx(self, data: bytes) -> None:
        if self._booting or not self._running:
            return
        for item in self._decoder.feed(data):
            if isinstance(item, CorruptFrame):
                self.corrupt_received += 1
                self._nak_corrupt()
            else:
                self.frames_received += 1
                self._on_frame(item)

    def _send(self, message: Message) -> None:
        self._tx_line.send(encode_message(message, self._tx_seq))
        self._tx_seq = (self._tx_seq + 1) & 0xFFFF

    # --- frames -------------------------------------------------------------------------------

    def _nak_corrupt(self) -> None:
        session = self._session
        if session is None:
            return
        now = asyncio.get_running_loop().time()
        if (
            session.nak_expected == session.expected_seq
            and now - session.nak_at < self.config.nak_holdoff_s
        ):
            return
        session.nak_expected = session.expected_seq
        session.nak_at = now
        self._send(Nak(session.expected_seq, NakReason.CORRUPT))

    def _on_frame(self, frame: Frame) -> None:
        now = asyncio.get_running_loop().time()
        try:
            message = parse_message(frame)
        except MalformedMessage as err:
            logger.debug("malformed frame: %s", err)
            known = frame.type in _KNOWN_TYPES
            if frame.type in SEQUENCED_TYPES or not known:
                # An intact frame the host meant to be sequenced (or one we cannot classify):
                # refuse it in sequence so the host learns which frame and why.
                self._feed_watchdog(now)
                reason = NakReason.BAD_PAYLOAD if known else NakReason.UNKNOWN_TYPE
                self._sequenced(frame.seq, lambda: (reason, 0))
            return
        self._feed_watchdog(now)
        match message:
            case Hello():
                self._on_hello(message, frame.seq, now)
            case EStop():
                self._estop()
                self._send(self._status())
            case Hold():
                self._on_hold()
                self._send(self._status())
            case Resume():
                self._on_resume()
                self._send(self._status())
            case StatusRequest():
                self._send(self._status())
            case Heartbeat():
                if self._session is None:  # tell a host that thinks it has a session
                    self._send(Nak(0, NakReason.NO_SESSION))
            case Moves():
                self._sequenced(frame.seq, lambda: self._on_moves(message))
            case Home():
                self._sequenced(frame.seq, lambda: self._on_home(message))
            case Enable():
                self._sequenced(frame.seq, lambda: self._on_enable(message))
            case Clear():
                self._sequenced(frame.seq, self._on_clear)
            case _:
                logger.debug("ignoring firmware-direction frame %s", message)

    def _feed_watchdog(self, now: float) -> None:
        if self._session is not None:
            self._session.last_rx = now

    def _sequenced(self, seq: int, action: Callable[[], tuple[NakReason, int] | None]) -> None:
        session = self._session
        if session is None:
            self._send(Nak(seq, NakReason.NO_SESSION))
            return
        distance = (seq - session.expected_seq) & 0xFFFF
        if distance >= 0x8000:  # already processed: a duplicate or a retransmission
            self._send(self._ack((session.expected_seq - 1) & 0xFFFF))
            return
        if distance > 0:  # a frame before this one was lost
            now = asyncio.get_running_loop().time()
            if (
                session.nak_expected != session.expected_seq
                or now - session.nak_at >= self.config.nak_holdoff_s
            ):
                session.nak_expected = session.expected_seq
                session.nak_at = now
                self._send(Nak(session.expected_seq, NakReason.SEQ_GAP))
            return
        refused = action()
        if refused is not None:
            reason, detail = refused
            self._send(Nak(seq, reason, detail))
            return
        session.expected_seq = (seq + 1) & 0xFFFF
        self._send(self._ack(seq))

    def _on_hello(self, hello: Hello, seq: int, now: float) -> None:
        session = self._session
        if session is None or session.nonce != hello.nonce:
            watchdog = hello.watchdog_ms or self.config.watchdog_ms
            self._session = _Session(
                nonce=hello.nonce,
                expected_seq=(seq + 1) & 0xFFFF,
                watchdog_s=watchdog / 1000.0,
                last_rx=now,
            )
            logger.debug("session %08x opened at seq %d", hello.nonce, seq)
            self._stop_after_group = False  # the host is back before the watchdog stop landed
        self._send(self._ident(hello.nonce))

    # --- commands ----------------------------------------------------------------------------

    def _on_moves(self, message: Moves) -> tuple[NakReason, int] | None:
        if self.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
            return NakReason.STOPPED, int(self.error)
        if self.state is FirmwareState.HOMING:
            return NakReason.BUSY, 0
        moves = message.moves
        if len(moves) > self.config.max_batch:
            return NakReason.BAD_PAYLOAD, self.config.max_batch
        if moves[-1].simultaneous_with_next:
            return NakReason.BAD_GROUP, moves[-1].index
        for k, move in enumerate(moves):
            if not self._enabled_mask & (1 << move.motor):
                return NakReason.BAD_MOVE, move.index
            if move.simultaneous_with_next:
                nxt = moves[k + 1]
                if nxt.motor != opposite(move.motor) or nxt.simultaneous_with_next:
                    return NakReason.BAD_GROUP, move.index
        new = [m for m in moves if m.index > self.nv.last_received]
        if not new:
            return None  # all of it is already queued or done: a harmless repeat
        if new[0].index != self.nv.last_received + 1:
            return NakReason.MOVE_GAP, self.nv.last_received + 1
        free = self.config.queue_depth - len(self._queue)
        if len(new) > free:
            return NakReason.QUEUE_FULL, free
        now = asyncio.get_running_loop().time()
        for move in new:
            record = MoveRecord(
                move.index, move.motor, move.quarter_turns, self.nv.boot_id, received_at=now
            )
            self.records.append(record)
            self._queue.append((move, record))
        self.nv.last_received = new[-1].index
        if self.state is FirmwareState.IDLE:
            self._set_state(FirmwareState.HOLD if self._hold else FirmwareState.RUNNING)
        self._wake.set()
        return None

    def _on_home(self, message: Home) -> tuple[NakReason, int] | None:
        if self._queue or self._group is not None or self.state is FirmwareState.HOMING:
            return NakReason.BUSY, 0
        loop = asyncio.get_running_loop()
        self._hold = False
        self._set_state(FirmwareState.HOMING)
        self._home_handle = loop.call_later(self.config.home_time_s, self._home_done)
        return None

    def _home_done(self) -> None:
        self._home_handle = None
        self._homed = True
        self.error = ErrorCode.NONE
        self._error_motor = _NO_MOTOR
        self._set_state(FirmwareState.IDLE)

    def _on_enable(self, message: Enable) -> tuple[NakReason, int] | None:
        if self._queue or self._group is not None or self.state is FirmwareState.HOMING:
            return NakReason.BUSY, 0
        self._enabled_mask = message.enabled_mask
        self._send(self._status())
        return None

    def _on_clear(self) -> tuple[NakReason, int] | None:
        if self.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
            self.error = ErrorCode.NONE
            self._error_motor = _NO_MOTOR
            self._set_state(FirmwareState.IDLE)
        return None

    def _on_hold(self) -> None:
        self._hold = True
        if self._group is None and self.state in (FirmwareState.RUNNING, FirmwareState.IDLE):
            self.state = FirmwareState.HOLD

    def _on_resume(self) -> None:
        self._hold = False
        if self.state is FirmwareState.HOLD:
            self.state = FirmwareState.RUNNING if self._queue else FirmwareState.IDLE
            self._wake.set()

    def _estop(self) -> None:
        if self._home_handle is not None:
            self._home_handle.cancel()
            self._home_handle = None
        if self.state is FirmwareState.STOPPED and self.error is ErrorCode.ESTOP:
            return  # ESTOP is repeated until the host sees STOPPED: idempotent
        logger.info("emergency stop")
        index = self._group.moves[0].index if self._group is not None else 0
        self._stop(FirmwareState.STOPPED, ErrorCode.ESTOP, _NO_MOTOR, index)

    def _stop(self, state: FirmwareState, error: ErrorCode, motor: int, index: int) -> None:
        """Stop now: interrupt the group in progress, flush the queue, report ``error``."""
        self._interrupt_group()
        self._discard_queue()
        self._hold = False
        self._stop_after_group = False
        self.error = error
        self._error_motor = motor
        self.state = state
        self._send(ErrorReport(error, motor, index))

    def _interrupt_group(self) -> None:
        group = self._group
        if group is None:
            return
        for handle in group.handles:
            handle.cancel()
        for record in group.records:
            record.outcome = "interrupted"
        if not group.done.done():
            group.done.set_result(False)
        self._group = None

    def _discard_queue(self) -> None:
        for _, record in self._queue:
            record.outcome = "discarded"
        self._queue.clear()
        self.nv.last_received = self.nv.started_upto

    def _set_state(self, state: FirmwareState) -> None:
        if state is not self.state:
            self.state = state
            self._send(self._status())

    # --- motors -------------------------------------------------------------------------------

    def _can_start(self) -> bool:
        return (
            self.state is FirmwareState.RUNNING
            and bool(self._queue)
            and not self._hold
            and not self._stop_after_group
        )

    async def _motor_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._motor_free_at = max(self._motor_free_at, loop.time())  # idle until now
            while self._can_start():
                await self._run_group()

    def _pop_group(self) -> tuple[list[WireMove], list[MoveRecord]]:
        moves: list[WireMove] = []
        records: list[MoveRecord] = []
        while self._queue:
            move, record = self._queue.popleft()
            moves.append(move)
            records.append(record)
            if not move.simultaneous_with_next:
                break
        return moves, records

    async def _run_group(self) -> None:
        loop = asyncio.get_running_loop()
        moves, records = self._pop_group()
        # The motor timeline is kept like a microcontroller's hardware timer: a group starts when
        # the previous one ends (or when its moves arrived, if later), and ends exactly
        # ``time_s`` after that; the event loop's timer lateness does not accumulate.
        now = loop.time()
        start = min(now, max(self._motor_free_at, max(r.received_at for r in records)))
        time_s = group_time_s(self.config.motors, [(m.motor, m.quarter_turns) for m in moves])
        group = _Group(moves, records, loop.create_future(), time_s)
        self._group = group
        self.nv.started_upto = moves[-1].index
        for record in records:
            record.started_at = start
            record.group_time_s = time_s
        group.handles.append(loop.call_at(start + time_s, self._group_done, group))
        self._schedule_faults(group, start)
        completed = await group.done
        if not completed or self._group is not group:
            # Interrupted (ESTOP, stall, reset) — possibly in the same loop iteration as the
            # completion timer fired: the interruption wins, the records already say so.
            self._motor_free_at = loop.time()
            return
        finished = start + time_s
        self._motor_free_at = finished
        for move, record in zip(moves, records, strict=True):
            record.finished_at = finished
            record.outcome = "executed"
            if self.cube is not None:
                self.cube.apply(Face(move.motor).name, move.quarter_turns)
        self.nv.last_executed = moves[-1].index
        self._group = None
        if self.state_file is not None:
            self._write_state_file()
        self._send(Executed(self.nv.last_executed, self.nv.started_upto, self._queue_free()))
        if self._stop_after_group:
            self._stop_after_group = False
            self._discard_queue()
            self.error = ErrorCode.WATCHDOG
            self._set_state(FirmwareState.STOPPED)
        elif self._hold:
            self._set_state(FirmwareState.HOLD)
        elif not self._queue:
            self._set_state(FirmwareState.IDLE)

    def _group_done(self, group: _Group) -> None:
        if not group.done.done():
            group.done.set_result(True)

    def _schedule_faults(self, group: _Group, start: float) -> None:
        loop = asyncio.get_running_loop()
        half = start + group.time_s / 2
        for move in group.moves:
            if move.index in self.faults.resets and ("reset", move.index) not in self._fired:
                self._fired.add(("reset", move.index))
                group.handles.append(loop.call_at(half, self.reset))
            for motor, index in self.faults.stalls:
                if index == move.index and ("stall", index) not in self._fired:
                    self._fired.add(("stall", index))
                    group.handles.append(loop.call_at(half, self._stall, motor, index))
            for index, millis in self.faults.vanish:
                if index == move.index and ("vanish", index) not in self._fired:
                    self._fired.add(("vanish", index))
                    if self._control is not None:
                        self._control.vanish(millis / 1000.0)

    def _stall(self, motor: int, index: int) -> None:
        logger.info("motor %s stalled during move %d", Face(motor).name, index)
        self._stop(FirmwareState.FAULT, ErrorCode.STALL, motor, index)
        self._send(self._status())

    def _write_state_file(self) -> None:
        if self.cube is None or self.state_file is None:
            return
        path = self.state_file
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.cube.facelets() + "\n", encoding="ascii")
        os.replace(tmp, path)

    # --- periodic: heartbeat STATUS and the watchdog --------------------------------------------

    async def _tick_loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_status = loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            session = self._session
            if session is None:
                continue
            if now - session.last_rx > session.watchdog_s:
                self._watchdog_expired()
                continue
            if now >= next_status:
                next_status = now + self.config.status_period_s
                self._send(self._status())

    def _watchdog_expired(self) -> None:
        self._session = None
        if self._group is None and not self._queue and self.state is not FirmwareState.HOMING:
            logger.debug("watchdog: host quiet while idle; session closed")
            return
        logger.info("watchdog: host quiet; stopping after the move group in progress")
        if self._home_handle is not None:
            self._home_handle.cancel()
            self._home_handle = None
        self._discard_queue()
        self._send(ErrorReport(ErrorCode.WATCHDOG, _NO_MOTOR, self.nv.started_upto))
        if self._group is not None:
            self._stop_after_group = True
        else:
            self.error = ErrorCode.WATCHDOG
            self._hold = False
            self._set_state(FirmwareState.STOPPED)

    # --- replies -------------------------------------------------------------------------------

    def _queue_free(self) -> int:
        return self.config.queue_depth - len(self._queue)

    def _ack(self, seq: int) -> Ack:
        return Ack(seq, self.nv.last_received, self._queue_free())

    def _ident(self, nonce: int) -> Ident:
        return Ident(
            nonce=nonce,
            protocol_version=PROTOCOL_VERSION,
            firmware_version=self.config.firmware_version,
            motor_count=6,
            queue_depth=self.config.queue_depth,
            max_batch=self.config.max_batch,
            watchdog_ms=(
                int(self._session.watchdog_s * 1000) if self._session else self.config.watchdog_ms
            ),
            boot_id=self.nv.boot_id,
            last_received=self.nv.last_received,
            started_upto=self.nv.started_upto,
            last_executed=self.nv.last_executed,
            state=self.state,
            error=self.error,
        )

    def _status(self) -> Status:
        flags = StatusFlags.NONE
        if self._homed:
            flags |= StatusFlags.HOMED
        if self._session is not None:
            flags |= StatusFlags.SESSION
        if self._hold:
            flags |= StatusFlags.HOLD_REQUESTED
        now = asyncio.get_running_loop().time()
        return Status(
            boot_id=self.nv.boot_id,
            state=self.state,
            error=self.error,
            error_motor=self._error_motor,
            flags=flags,
            enabled_mask=self._enabled_mask,
            queue_free=self._queue_free(),
            expected_seq=self._session.expected_seq if self._session else 0,
            last_received=self.nv.last_received,
            started_upto=self.nv.started_upto,
            last_executed=self.nv.last_executed,
            uptime_ms=int((now - self._booted_at) * 1000) & 0xFFFF_FFFF,
        )
