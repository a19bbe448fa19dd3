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
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from firmware_protocol.codec import Frame, FrameDecoder
from firmware_protocol.errors import CorruptFrame, MalformedMessage
from firmware_protocol.messages import (
    BOOT_COUNTERS_LOST,
    SEQUENCED_TYPES,
    Ack,
    Clear,
    Enable,
    ErrorCode,
    ErrorReport,
    EStop,
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
    encode_message,
    parse_message,
)
from firmware_protocol.moves import opposite
from firmware_protocol.sim.board import (
    NO_MOTOR,
    FirmwareConfig,
    MoveRecord,
    NonVolatile,
    PortControl,
    TurnableCube,
)
from firmware_protocol.sim.faults import FaultSpec, SerialLine
from firmware_protocol.sim.motion import MotionControl
from firmware_protocol.tasks import cancel_and_wait

__all__ = ["SimulatedFirmware"]

logger = logging.getLogger(__name__)

_KNOWN_TYPES = frozenset(int(t) for t in MessageType)


@dataclass
class _Session:
    nonce: int
    expected_seq: int
    watchdog_s: float
    last_rx: float
    nak_expected: int = -1
    nak_at: float = -1.0


class SimulatedFirmware(MotionControl):
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
        super().__init__(
            cube=cube,
            config=config or FirmwareConfig(),
            faults=faults or FaultSpec(),
            state_file=state_file,
            nv=nv or NonVolatile(),
        )
        self.baud = baud
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
        # volatile state (reset at boot)
        self._session: _Session | None = None
        self._homed = False
        self._enabled_mask = 0x3F
        self._tx_seq = 0
        self._booted_at = 0.0
        self._booting = True
        self._counters_lost = True
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        # telemetry
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
            await cancel_and_wait(task)
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

    def reset(self, wipe: bool = False) -> None:
        """A firmware reset (watchdog, brown-out, reset button): volatile state is lost.
        ``wipe``: the non-volatile memory is lost as well (its counters come back at zero)."""
        logger.info(
            "firmware reset%s (boot id %08x): last executed %d, started up to %d",
            " losing its non-volatile memory" if wipe else "",
            self.nv.boot_id,
            self.nv.last_executed,
            self.nv.started_upto,
        )
        self.resets.append((self.nv.boot_id, self.nv.last_executed, self.nv.started_upto))
        self._interrupt_group()
        self._discard_queue()
        if wipe:  # in place: a harness may hold the same memory across firmware instances
            nv = self.nv
            nv.boot_count = nv.last_received = nv.started_upto = nv.last_executed = 0
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
        #: this boot found no counters (a fresh or wiped memory): IDENT's boot_flags say so
        self._counters_lost = nv.boot_count == 0
        nv.boot_count += 1
        old = nv.boot_id
        while nv.boot_id in (0, old):
            nv.boot_id = self._rng.getrandbits(32)
        nv.last_received = nv.started_upto  # the queue was RAM
        self.state = FirmwareState.IDLE
        self.error = ErrorCode.NONE
        self._error_motor = NO_MOTOR
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
            if not self._enabled_mask & (1 << move.motor) or move.depth > self.config.max_depth:
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
                move.index,
                move.motor,
                move.quarter_turns,
                self.nv.boot_id,
                received_at=now,
                depth=move.depth,
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
        self._error_motor = NO_MOTOR
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
            self._error_motor = NO_MOTOR
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
        self._send(ErrorReport(ErrorCode.WATCHDOG, NO_MOTOR, self.nv.started_upto))
        if self._group is not None:
            self._stop_after_group = True
        else:
            self.error = ErrorCode.WATCHDOG
            self._hold = False
            self._set_state(FirmwareState.STOPPED)

    # --- replies -------------------------------------------------------------------------------

    def _ack(self, seq: int) -> Ack:
        return Ack(seq, self.nv.last_received, self._queue_free())

    def _ident(self, nonce: int) -> Ident:
        return Ident(
            nonce=nonce,
            protocol_version=self.config.protocol_version,
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
            boot_flags=(
                BOOT_COUNTERS_LOST
                if self._counters_lost and self.config.protocol_version >= 2
                else 0
            ),
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
