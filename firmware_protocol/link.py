"""The reliable asyncio link to the stepper firmware, over any pyserial URL.

Usage (the robot daemon's view)::

    from firmware_protocol import FirmwareLink, Move, ExecutionError, parse_moves

    async with FirmwareLink("/dev/ttyACM0") as link:        # connect(): open, HELLO, IDENT
        print(link.info)                                    # versions, queue depth, boot id
        try:
            async for event in link.execute(parse_moves("R U R' U'")):
                journal.record(event.index, event.move)     # exactly once, in order
        except ExecutionError as err:                       # reset, e-stop, stall, link lost
            report = err.report                             # exactly which moves executed
            ...
            link.acknowledge_reset()                        # only after a FirmwareResetError

What it does (``PROTOCOL.md`` has the wire-level detail):

- Opens the port (a device path, a pty path, ``socket://host:port``) with pyserial-asyncio-fast,
  which never blocks the event loop; opens a session with HELLO and reads the IDENT.
- Sends moves in MOVES frames through a sliding window of sequenced frames; the firmware
  acknowledges RECEIVED frames (ACK, cumulative) separately from reporting EXECUTED moves.
  Unacknowledged frames are retransmitted (go-back-N) on timeout, with exponential back-off,
  and at once on NAK; after ``max_retries`` the session is re-opened with a new HELLO.
- Exactly-once: every move carries a firmware move index; the firmware accepts index ``n`` only
  right after ``n - 1``, so a retransmitted or duplicated move is never queued twice, and its
  counters (received / started / executed) survive resets. The host only reports a move as
  executed when the firmware's cumulative ``last_executed`` passes it.
- Keeps the firmware's queue full: moves are sent as soon as the queue has room (credit =
  ``started_upto + queue_depth``); the first group goes alone in its own small frame so the
  motors start after one short frame time.
- Detects a firmware reset by its boot id (from the boot announcement, STATUS, or the IDENT of
  the next HELLO): the running execution fails with :class:`FirmwareResetError` whose report
  lists exactly which moves executed before the reset (from the firmware's non-volatile
  counters), which were interrupted mid-turn and which never started, and the link refuses new
  executions until :meth:`FirmwareLink.acknowledge_reset` (no continuing blind).
- Reconnects with back-off when the port vanishes, then re-synchronises from the IDENT counters
  and continues the execution. If the port stays away longer than ``reconnect_timeout_s`` the
  execution fails with :class:`ExecutionLinkError` (cause :class:`PortLostError`; its report
  lists the moves whose fate is unknown) but the link keeps reconnecting in the background; once
  back, ``link.info.last_executed`` tells which of those unknown moves executed.
- Sends a heartbeat when otherwise quiet (the firmware's watchdog stops the motors if the host
  goes silent for ``watchdog_ms``) and watches the firmware's own periodic STATUS.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import logging
import random
import urllib.parse
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import serial
import serial_asyncio_fast

from firmware_protocol.codec import BITS_PER_BYTE, Frame, FrameDecoder
from firmware_protocol.errors import (
    CommandRejectedError,
    CorruptFrame,
    EmergencyStopError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareResetError,
    FirmwareStoppedError,
    LinkBusyError,
    LinkClosedError,
    LinkError,
    LinkTimeoutError,
    MalformedMessage,
    MotorFaultError,
    PortError,
    PortLostError,
    PortOpenError,
    ProtocolVersionError,
    ResetNotAcknowledgedError,
)
from firmware_protocol.messages import (
    MAX_MOVES_PER_FRAME,
    PROTOCOL_VERSION,
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
    MoveFlags,
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
from firmware_protocol.moves import Face, Move, format_moves, groups, validate_moves


__all__ = [
    "Execution",
    "ExecutionReport",
    "FirmwareInfo",
    "FirmwareLink",
    "LinkConfig",
    "LinkStats",
    "MoveExecuted",
    "PlannedMove",
]

logger = logging.getLogger(__name__)


# --- public data ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """Timing and sizing of the link. Durations in seconds unless the name says otherwise."""

    baudrate: int = 115200
    #: Retransmission timeout of the oldest unacknowledged frame, before back-off; the time the
    #: window's bytes take on the wire at ``baudrate`` is added.
    ack_timeout_s: float = 0.08
    max_backoff_s: float = 1.0
    #: Retransmissions of one frame before the session is re-opened with HELLO.
    max_retries: int = 8
    window_frames: int = 4
    batch_moves: int = 8
    hello_timeout_s: float = 0.2
    hello_retries: int = 6
    heartbeat_s: float = 0.1
    #: Watchdog the firmware is asked to apply (HELLO); it stops the motors when we go quiet.
    watchdog_ms: int = 1000
    #: No frame at all from the firmware for this long: ask for STATUS; twice as long: re-HELLO.
    firmware_silence_s: float = 1.0
    connect_timeout_s: float = 5.0
    reconnect_timeout_s: float = 30.0
    reconnect_backoff_min_s: float = 0.05
    reconnect_backoff_max_s: float = 2.0
    status_timeout_s: float = 1.0
    home_timeout_s: float = 30.0
    tick_s: float = 0.01

    def __post_init__(self) -> None:
        if self.baudrate <= 0:
            raise ValueError(f"baudrate must be > 0, got {self.baudrate}")
        if not 1 <= self.window_frames <= 64:
            raise ValueError(f"window_frames must be 1..64, got {self.window_frames}")
        if not 1 <= self.batch_moves <= MAX_MOVES_PER_FRAME:
            raise ValueError(f"batch_moves must be 1..{MAX_MOVES_PER_FRAME}")
        if self.max_retries < 1 or self.hello_retries < 1:
            raise ValueError("max_retries and hello_retries must be ≥ 1")
        if not 10 <= self.watchdog_ms <= 65535:
            raise ValueError(f"watchdog_ms must be 10..65535, got {self.watchdog_ms}")
        if self.heartbeat_s * 2 >= self.watchdog_ms / 1000:
            raise ValueError(
                f"heartbeat_s={self.heartbeat_s} must be well under the watchdog "
                f"({self.watchdog_ms} ms)"
            )


@dataclass(frozen=True, slots=True)
class FirmwareInfo:
    """What the firmware said about itself in its IDENT."""

    port: str
    protocol_version: int
    firmware_version: str
    motor_count: int
    queue_depth: int
    max_batch: int
    watchdog_ms: int
    boot_id: int
    last_executed: int
    started_upto: int
    state: FirmwareState
    error: ErrorCode


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """A move of an execution: its position in the sequence and its firmware move index."""

    position: int
    index: int
    move: Move


@dataclass(frozen=True, slots=True)
class MoveExecuted:
    """The firmware executed ``move`` (position ``position`` of the sequence given to
    ``execute()``, firmware move index ``index``); ``at`` is the loop time we learned it."""

    position: int
    index: int
    move: Move
    at: float

    def __str__(self) -> str:
        return f"{self.position + 1} {self.move.notation} index={self.index}"


@dataclass(frozen=True, slots=True)
class ExecutionReport:
    """Exactly what happened to an execution's moves.

    ``executed`` moves have been applied to the physical cube. ``interrupted`` moves started
    and were stopped mid-turn (e-stop, stall, reset): the face may be misaligned; they count as
    not executed. ``not_executed`` never started. ``unknown`` is non-empty only when the link
    itself failed: those moves were sent and may or may not have executed (after reconnecting,
    compare their indices with ``FirmwareInfo.last_executed``).
    """

    moves: tuple[Move, ...]
    executed: tuple[MoveExecuted, ...]
    interrupted: tuple[PlannedMove, ...] = ()
    not_executed: tuple[PlannedMove, ...] = ()
    unknown: tuple[PlannedMove, ...] = ()

    @property
    def executed_moves(self) -> tuple[Move, ...]:
        return tuple(e.move for e in self.executed)

    def summary(self) -> str:
        parts = [f"{len(self.executed)} of {len(self.moves)} moves executed"]
        if self.executed:
            parts[0] += f" ({format_moves(self.executed_moves)})"
        if self.interrupted:
            moves = format_moves(p.move for p in self.interrupted)
            parts.append(f"interrupted mid-turn: {moves} (index {self.interrupted[0].index})")
        if self.unknown:
            parts.append(f"{len(self.unknown)} unconfirmed from index {self.unknown[0].index}")
        if self.not_executed:
            parts.append(f"{len(self.not_executed)} not started")
        return "; ".join(parts)


@dataclass(slots=True)
class LinkStats:
    frames_sent: int = 0
    bytes_sent: int = 0
    retransmissions: int = 0
    naks_received: int = 0
    corrupt_received: int = 0
    duplicates_dropped: int = 0
    sessions: int = 0
    reconnects: int = 0
    resets_detected: int = 0


# --- execution -----------------------------------------------------------------------------------


class _End:
    def __init__(self, error: ExecutionError | None) -> None:
        self.error = error


class Execution:
    """The async iterator returned by :meth:`FirmwareLink.execute`.

    Yields one :class:`MoveExecuted` per move, in order, as the firmware reports it executed.
    Ends normally when every move executed; raises an :class:`ExecutionError` (whose ``report``
    is exact) otherwise. ``await execution.wait()`` runs it to the end and returns all events.
    """

    def __init__(self, moves: Sequence[Move]) -> None:
        self.moves: tuple[Move, ...] = tuple(moves)
        self.groups: list[tuple[int, int]] = groups(self.moves)
        self._group_starts = [lo for lo, _ in self.groups]
        self.base: int | None = None  # firmware index of moves[0], fixed once moves are sent
        self.events: list[MoveExecuted] = []
        self.error: ExecutionError | None = None
        self.sent_upto = -1  # highest position ever transmitted
        self.started_at = asyncio.get_running_loop().time()
        self.finished_at: float | None = None
        self._queue: asyncio.Queue[MoveExecuted | _End] = asyncio.Queue()
        self._ended = False
        self._delivered_end = False

    @property
    def done(self) -> bool:
        return self._ended

    def index_of(self, position: int) -> int:
        assert self.base is not None
        return self.base + position

    def planned(self, positions: range) -> tuple[PlannedMove, ...]:
        base = self.base if self.base is not None else 0
        return tuple(PlannedMove(p, base + p, self.moves[p]) for p in positions)

    def __aiter__(self) -> Execution:
        return self

    async def __anext__(self) -> MoveExecuted:
        if self._delivered_end:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, MoveExecuted):
            return item
        self._delivered_end = True
        if item.error is not None:
            raise item.error
        raise StopAsyncIteration

    async def wait(self) -> list[MoveExecuted]:
        """Consume to the end; return every event (raises the execution's error, if any)."""
        async for _ in self:
            pass
        if self.error is not None:
            raise self.error
        return list(self.events)

    # called by the link
    def _emit(self, event: MoveExecuted) -> None:
        self.events.append(event)
        self._queue.put_nowait(event)

    def _finish(self, error: ExecutionError | None) -> None:
        if self._ended:
            return
        self._ended = True
        self.error = error
        self.finished_at = asyncio.get_running_loop().time()
        self._queue.put_nowait(_End(error))


# --- internals -----------------------------------------------------------------------------------


@dataclass
class _Op:
    """A sequenced non-move command (HOME, ENABLE, CLEAR) and who waits for its ACK."""

    message: Message
    waiter: asyncio.Future[None] | None


@dataclass
class _Outgoing:
    seq: int
    data: bytes
    sent_at: float
    op: _Op | None = None
    first_index: int = 0
    last_index: int = 0
    retries: int = 0


@dataclass
class _StatusWaiter:
    predicate: Callable[[Status], bool]
    future: asyncio.Future[Status]


class _SessionEnded(Exception):
    """Internal: the session must be re-opened (or the port is gone)."""


class _HandshakeFailed(Exception):
    pass


class _PortProtocol(asyncio.Protocol):
    def __init__(self, link: FirmwareLink, generation: int) -> None:
        self._link = link
        self.generation = generation
        self.decoder = FrameDecoder()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            self._link._on_item(self.generation, item)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        self._link._on_connection_lost(self.generation, exc)


def _seq_le(a: int, b: int) -> bool:
    """``a`` ≤ ``b`` in 16-bit serial-number arithmetic."""
    return ((b - a) & 0xFFFF) < 0x8000


class FirmwareLink:
    """A reliable link to one firmware on one port. See the module docstring for the contract.

    All methods must be called from the event loop that called :meth:`connect`. At most one
    :meth:`execute` runs at a time.
    """

    def __init__(self, port: str, *, config: LinkConfig | None = None) -> None:
        self.port = port
        self.config = config or LinkConfig()
        self.info: FirmwareInfo | None = None
        self.last_status: Status | None = None
        self.last_error_report: ErrorReport | None = None
        self.stats = LinkStats()
        self._rng = random.Random()
        self._closed = False
        self._supervisor: asyncio.Task[None] | None = None
        self._first_session: asyncio.Future[FirmwareInfo] | None = None
        self._failure: LinkError | None = None
        self._down: PortLostError | None = None  # the port has been gone too long
        # connection
        self._generation = 0
        self._transport: asyncio.BaseTransport | None = None
        self._protocol: _PortProtocol | None = None
        self._connected = False
        self._last_rx = 0.0
        self._last_tx = 0.0
        self._probed = False
        self._last_frame_key: tuple[int, int, bytes] | None = None
        # session
        self._session_open = False
        self._session_opened_at = 0.0
        self._session_end: asyncio.Event = asyncio.Event()
        self._hello_nonce = 0
        self._ident_waiter: asyncio.Future[Ident] | None = None
        self._next_seq = self._rng.randrange(0x10000)
        self._window: OrderedDict[int, _Outgoing] = OrderedDict()
        self._ops: deque[_Op] = deque()
        self._send_upto = 0  # highest move index transmitted in this session
        # firmware knowledge
        self._boot_id: int | None = None
        self._fw_last_received = 0
        self._fw_started = 0
        self._fw_executed = 0
        self._fw_state = FirmwareState.IDLE
        self._fw_error = ErrorCode.NONE
        self._queue_depth = 16
        self._max_batch = 8
        self._reset_pending: FirmwareResetError | None = None
        # work
        self._execution: Execution | None = None
        self._status_waiters: list[_StatusWaiter] = []

    # === public API ===================================================================

    async def __aenter__(self) -> FirmwareLink:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        """A session with the firmware is open right now."""
        return self._session_open

    @property
    def reset_pending(self) -> bool:
        """A firmware reset interrupted an execution and has not been acknowledged."""
        return self._reset_pending is not None

    @property
    def execution(self) -> Execution | None:
        """The execution in progress (or the last one)."""
        return self._execution

    async def connect(self) -> FirmwareInfo:
        """Open the port and a session; return the firmware's identity.

        Raises :class:`PortOpenError` (cannot open within ``connect_timeout_s``),
        :class:`LinkTimeoutError` (port opens, firmware never answers HELLO) or
        :class:`ProtocolVersionError`. A firmware left STOPPED by its watchdog is cleared;
        one stopped by an e-stop or a fault stays so (see :meth:`home`).
        """
        self._check_open()
        if self._session_open and self.info is not None:
            return self.info
        loop = asyncio.get_running_loop()
        if self._supervisor is None or self._supervisor.done():
            self._failure = None
            self._first_session = loop.create_future()
            self._supervisor = loop.create_task(
                self._supervise(), name=f"fwlink-supervisor {self.port}"
            )
        assert self._first_session is not None
        return await asyncio.shield(self._first_session)

    def execute(self, moves: Sequence[Move]) -> Execution:
        """Start executing ``moves``; return an async iterator of :class:`MoveExecuted`.

        Raises at once: :class:`InvalidMoveError`, :class:`LinkBusyError`,
        :class:`ResetNotAcknowledgedError`, :class:`FirmwareStoppedError` (e-stop or fault
        latched: call :meth:`home`), :class:`LinkClosedError`, or the link's failure.
        """
        self._check_usable()
        if self._execution is not None and not self._execution.done:
            raise LinkBusyError(
                f"{self.port}: an execution of {len(self._execution.moves)} moves is still "
                "running; wait for it before starting another",
                self.port,
            )
        if self._reset_pending is not None:
            raise ResetNotAcknowledgedError(
                f"{self.port}: the firmware reset during the last execution "
                f"({self._reset_pending.report.summary()}); reconcile the cube state, then call "
                "acknowledge_reset()",
                self.port,
            )
        motor_count = self.info.motor_count if self.info else 6
        validate_moves(moves, motor_count)
        execution = Execution(moves)
        if self._fw_state in (FirmwareState.STOPPED, FirmwareState.FAULT) and (
            self._fw_error is not ErrorCode.WATCHDOG
        ):
            report = ExecutionReport(
                execution.moves, (), not_executed=execution.planned(range(len(moves)))
            )
            raise FirmwareStoppedError(
                f"firmware on {self.port} is {self._fw_state.name} ({self._fw_error.name}); "
                "nothing was sent; clear the cause, then run `cuberobot home` (link.home())",
                self.port,
                report,
            )
        self._execution = execution
        if not moves:
            execution._finish(None)
            return execution
        logger.debug("%s: executing %d moves", self.port, len(moves))
        self._pump()
        return execution

    def acknowledge_reset(self) -> None:
        """Allow executions again after a :class:`FirmwareResetError` (the owner has reconciled
        the cube state with the report and, usually, homed the motors)."""
        if self._reset_pending is not None:
            logger.info("%s: firmware reset acknowledged", self.port)
        self._reset_pending = None

    async def status(self) -> Status:
        """Ask for and return a fresh STATUS (:class:`LinkTimeoutError` if none comes)."""
        self._check_usable()
        return await self._request_status(StatusRequest(), lambda s: True, "STATUS")

    async def estop(self) -> Status:
        """Emergency stop: motors stop mid-turn, the queue is flushed, the firmware latches
        STOPPED. The running execution fails with :class:`EmergencyStopError`. Returns the
        STATUS confirming the stop. Recover with :meth:`home`."""
        self._check_open()
        if not self._connected:
            raise PortError(
                f"cannot send the emergency stop: {self.port} is not connected; "
                "press the robot's hardware emergency stop",
                self.port,
            )
        return await self._request_status(
            EStop(), lambda s: s.state in (FirmwareState.STOPPED, FirmwareState.FAULT), "ESTOP"
        )

    async def hold(self) -> Status:
        """Pause after the move group in progress; the queue is kept (see :meth:`resume`)."""
        self._check_usable()
        return await self._request_status(
            Hold(), lambda s: bool(s.flags & StatusFlags.HOLD_REQUESTED), "HOLD"
        )

    async def resume(self) -> Status:
        """Continue after :meth:`hold`."""
        self._check_usable()
        return await self._request_status(
            Resume(), lambda s: not s.flags & StatusFlags.HOLD_REQUESTED, "RESUME"
        )

    async def home(self, motor_mask: int = 0x3F) -> Status:
        """Home the motors (also clears STOPPED and FAULT); return the STATUS once homed."""
        self._check_usable()
        self._require_idle("home")
        started = asyncio.get_running_loop().time()
        await self._send_op(Home(motor_mask), "HOME")

        def homed(status: Status) -> bool:
            return (
                status.state is FirmwareState.IDLE
                and bool(status.flags & StatusFlags.HOMED)
                and status.error is ErrorCode.NONE
            )

        timeout = self.config.home_timeout_s - (asyncio.get_running_loop().time() - started)
        status = await self._wait_status(homed, max(timeout, 0.1), "HOME", poll=True)
        self._fw_state, self._fw_error = status.state, status.error
        return status

    async def enable_motors(self, enabled_mask: int) -> None:
        """Energise the motors in ``enabled_mask`` (bit i = motor i), release the others."""
        self._check_usable()
        self._require_idle("enable motors")
        await self._send_op(Enable(enabled_mask), "ENABLE")

    async def close(self) -> None:
        """Close the port. A running execution fails with :class:`ExecutionLinkError`."""
        if self._closed:
            return
        self._closed = True
        closed = LinkClosedError(f"link to {self.port} closed", self.port)
        self._fail_execution_link(closed)
        self._fail_waiters(closed)
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_exception(closed)
            self._first_session.exception()  # mark retrieved
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        await self._close_transport()

    # === supervisor: port and session lifecycle ========================================

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        lost_at: float | None = None
        attempt = 0
        last_problem: Exception | None = None
        while not self._closed:
            try:
                await self._open_port()
            except (OSError, serial.SerialException, TimeoutError) as err:
                last_problem = err
            else:
                attempt = 0
                if lost_at is not None:
                    self.stats.reconnects += 1
                    logger.info("%s: port back after %.2f s", self.port, loop.time() - lost_at)
                try:
                    await self._serve_connection()
                except _HandshakeFailed as err:
                    last_problem = err
                except LinkError as err:  # fatal (protocol version)
                    self._fail_everything(err)
                    await self._close_transport()
                    return
                await self._close_transport()
                if self._closed:
                    return
                if lost_at is None or self._session_was_open_since(lost_at):
                    lost_at = loop.time()
            now = loop.time()
            if self._first_session is not None and not self._first_session.done():
                if now - began > self.config.connect_timeout_s:
                    self._fail_everything(self._connect_error(last_problem))
                    return
            elif (
                lost_at is not None
                and self._down is None
                and now - lost_at > self.config.reconnect_timeout_s
            ):
                # Give up on what is waiting, not on the port: keep trying in the background,
                # so the link recovers by itself when the cable is plugged back in.
                lost = PortLostError(
                    f"{self.port} gone for {now - lost_at:.1f} s ({last_problem}); "
                    "check the USB cable and the robot's power; the link keeps reconnecting",
                    self.port,
                )
                lost.__cause__ = last_problem
                logger.error("%s", lost)
                self._down = lost
                self._fail_execution_link(lost)
                self._fail_waiters(lost)
            if lost_at is None:
                lost_at = now
            delay = min(
                self.config.reconnect_backoff_min_s * (2**attempt),
                self.config.reconnect_backoff_max_s,
            ) * self._rng.uniform(0.8, 1.2)
            attempt += 1
            logger.debug("%s: reopening in %.3f s (%s)", self.port, delay, last_problem)
            await asyncio.sleep(delay)

    def _session_was_open_since(self, when: float) -> bool:
        return self._session_opened_at > when

    def _connect_error(self, problem: Exception | None) -> LinkError:
        if isinstance(problem, _HandshakeFailed):
            err: LinkError = LinkTimeoutError(
                f"no answer from the firmware on {self.port} within "
                f"{self.config.connect_timeout_s:g} s; check that the robot is powered, runs "
                f"cuberobot firmware and uses {self.config.baudrate} baud",
                self.port,
            )
        else:
            err = PortOpenError(
                f"cannot open {self.port}: {problem}; check the device path and that the robot "
                "is plugged in (or start `cuberobot firmware-sim`)",
                self.port,
            )
        err.__cause__ = problem
        return err

    async def _open_port(self) -> None:
        loop = asyncio.get_running_loop()
        self._generation += 1
        generation = self._generation
        protocol_holder: list[_PortProtocol] = []

        def factory() -> _PortProtocol:
            protocol = _PortProtocol(self, generation)
            protocol_holder.append(protocol)
            return protocol

        transport, _ = await asyncio.wait_for(
            serial_asyncio_fast.create_serial_connection(
                loop, factory, self.port, baudrate=self.config.baudrate
            ),
            timeout=2.0,
        )
        self._transport = transport
        self._protocol = protocol_holder[0]
        self._connected = True
        if urllib.parse.urlparse(self.port).scheme != "socket":
            ser = getattr(transport, "serial", None)
            if ser is not None:
                with contextlib.suppress(OSError, serial.SerialException):
                    ser.reset_input_buffer()  # stale bytes from before we opened
        now = loop.time()
        self._last_rx = now
        self._last_tx = now
        self._probed = False
        self._last_frame_key = None
        self._write(b"\x00")  # end any partial frame the firmware may hold
        logger.debug("%s: port open", self.port)

    async def _close_transport(self) -> None:
        self._connected = False
        self._end_session()
        transport, protocol = self._transport, self._protocol
        self._transport = self._protocol = None
        if transport is None or protocol is None:
            return
        transport.close()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(protocol.lost), 2.0)

    def _on_connection_lost(self, generation: int, exc: Exception | None) -> None:
        if generation != self._generation:
            return
        if not self._closed:
            logger.warning(
                "%s: port lost (%s); reconnecting with back-off", self.port, exc or "closed"
            )
        self._connected = False
        self._end_session()
        waiter = self._ident_waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(_HandshakeFailed(f"{self.port} lost during HELLO"))

    async def _serve_connection(self) -> None:
        loop = asyncio.get_running_loop()
        protocol = self._protocol
        assert protocol is not None
        ticker = loop.create_task(self._tick_loop(protocol), name=f"fwlink-tick {self.port}")
        try:
            while self._connected and not self._closed:
                ident = await self._handshake()
                self._start_session(ident)
                await self._session_end.wait()
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker

    async def _handshake(self) -> Ident:
        loop = asyncio.get_running_loop()
        self._hello_nonce = self._rng.randrange(1, 1 << 32)
        hello_seq = self._next_seq
        self._next_seq = (self._next_seq + 1) & 0xFFFF
        data = encode_message(Hello(self._hello_nonce, self.config.watchdog_ms), hello_seq)
        timeout = self.config.hello_timeout_s
        for attempt in range(self.config.hello_retries):
            if not self._connected:
                raise _HandshakeFailed(f"{self.port} lost during HELLO")
            waiter: asyncio.Future[Ident] = loop.create_future()
            self._ident_waiter = waiter
            self._write(data)
            try:
                ident = await asyncio.wait_for(asyncio.shield(waiter), timeout)
            except TimeoutError:
                logger.debug("%s: no IDENT (attempt %d)", self.port, attempt + 1)
                timeout = min(timeout * 2, self.config.max_backoff_s)
                continue
            finally:
                self._ident_waiter = None
            if ident.protocol_version != PROTOCOL_VERSION:
                raise ProtocolVersionError(
                    f"firmware on {self.port} speaks protocol v{ident.protocol_version}, this "
                    f"host speaks v{PROTOCOL_VERSION}; flash matching firmware or upgrade "
                    "cuberobot",
                    self.port,
                )
            return ident
        raise _HandshakeFailed(f"no IDENT after {self.config.hello_retries} HELLOs")

    def _end_session(self) -> None:
        self._session_open = False
        self._window.clear()
        self._session_end.set()

    def _restart_session(self, why: str) -> None:
        if self._session_open:
            logger.info("%s: re-opening the session: %s", self.port, why)
        self._end_session()

    def _start_session(self, ident: Ident) -> None:
        loop = asyncio.get_running_loop()
        self.stats.sessions += 1
        self._session_end = asyncio.Event()
        self._session_opened_at = loop.time()
        self._queue_depth = ident.queue_depth
        self._max_batch = max(1, ident.max_batch)
        if self._boot_id is not None and ident.boot_id != self._boot_id:
            self._on_reset(ident)
        self._boot_id = ident.boot_id
        # IDENT answers our HELLO, so its counters are current: take them as they are (after a
        # watchdog stop or e-stop ``last_received`` went back to ``started_upto``).
        self._advance_executed(ident.last_executed)
        self._fw_executed = ident.last_executed
        self._fw_last_received = ident.last_received
        self._fw_started = ident.started_upto
        self._fw_state, self._fw_error = ident.state, ident.error
        self._send_upto = ident.last_received
        self._window.clear()
        self.info = FirmwareInfo(
            port=self.port,
            protocol_version=ident.protocol_version,
            firmware_version=".".join(str(v) for v in ident.firmware_version),
            motor_count=ident.motor_count,
            queue_depth=ident.queue_depth,
            max_batch=ident.max_batch,
            watchdog_ms=ident.watchdog_ms,
            boot_id=ident.boot_id,
            last_executed=ident.last_executed,
            started_upto=ident.started_upto,
            state=ident.state,
            error=ident.error,
        )
        logger.debug(
            "%s: session open: firmware %s boot %08x executed %d started %d received %d %s",
            self.port,
            self.info.firmware_version,
            ident.boot_id,
            ident.last_executed,
            ident.started_upto,
            ident.last_received,
            ident.state.name,
        )
        self._session_open = True
        if self._down is not None:
            logger.info("%s: port back; the link is usable again", self.port)
        self._down = None
        if ident.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
            if ident.error is ErrorCode.WATCHDOG:
                logger.info("%s: firmware was stopped by its watchdog; clearing", self.port)
                self._ops.appendleft(_Op(Clear(), None))
            else:
                self._fail_for_state(ident.state, ident.error, 0xFF, ident)
        execution = self._execution
        if (
            execution is not None
            and not execution.done
            and execution.base is not None
            and ident.last_received < execution.base
        ):
            # None of this execution's moves reached the firmware: index them from its count.
            execution.base = ident.last_received + 1
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_result(self.info)
        self._pump()

    # === periodic work ===================================================================

    async def _tick_loop(self, protocol: _PortProtocol) -> None:
        loop = asyncio.get_running_loop()
        cfg = self.config
        while True:
            await asyncio.sleep(cfg.tick_s)
            if protocol is not self._protocol or not self._connected:
                return
            now = loop.time()
            silent = now - self._last_rx
            if silent > 2 * cfg.firmware_silence_s and self._session_open:
                self._restart_session(f"firmware silent for {silent:.2f} s")
                self._last_rx = now
                continue
            if silent > cfg.firmware_silence_s and not self._probed and self._session_open:
                self._probed = True
                self._send_realtime(StatusRequest())
            if not self._session_open:
                continue
            self._check_retransmit(now)
            if now - self._last_tx >= cfg.heartbeat_s:
                self._send_realtime(Heartbeat())

    def _rto(self, retries: int) -> float:
        cfg = self.config
        wire = sum(len(o.data) for o in self._window.values()) * BITS_PER_BYTE / cfg.baudrate
        backoff = min(cfg.ack_timeout_s * (2.0**retries), cfg.max_backoff_s)
        return backoff + 2 * wire

    def _check_retransmit(self, now: float) -> None:
        if not self._window:
            return
        oldest = next(iter(self._window.values()))
        if now - oldest.sent_at < self._rto(oldest.retries):
            return
        if oldest.retries >= self.config.max_retries:
            self._restart_session(
                f"no ACK for frame {oldest.seq} after {oldest.retries} retransmissions"
            )
            return
        self._retransmit_from(oldest.seq, now)

    def _retransmit_from(self, seq: int, now: float) -> None:
        resend = False
        for out in self._window.values():
            if out.seq == seq:
                resend = True
            if resend:
                out.retries += 1
                out.sent_at = now
                self.stats.retransmissions += 1
                self._write(out.data)

    # === sending ===========================================================================

    def _write(self, data: bytes) -> None:
        transport = self._transport
        if transport is None or not self._connected:
            return
        assert isinstance(transport, asyncio.WriteTransport)
        if transport.is_closing():
            return
        transport.write(data)
        self.stats.frames_sent += 1
        self.stats.bytes_sent += len(data)
        self._last_tx = asyncio.get_running_loop().time()

    def _send_realtime(self, message: Message) -> None:
        self._write(encode_message(message, 0))

    def _send_sequenced(self, message: Message, op: _Op | None = None) -> _Outgoing:
        seq = self._next_seq
        self._next_seq = (seq + 1) & 0xFFFF
        out = _Outgoing(
            seq=seq,
            data=encode_message(message, seq),
            sent_at=asyncio.get_running_loop().time(),
            op=op,
        )
        if isinstance(message, Moves):
            out.first_index, out.last_index = message.first_index, message.last_index
        self._window[seq] = out
        self._write(out.data)
        return out

    def _pump(self) -> None:
        """Fill the window: pending operations first, then moves within the queue credit."""
        if not self._session_open:
            return
        queued_ops = {id(o.op) for o in self._window.values() if o.op is not None}
        for op in self._ops:
            if len(self._window) >= self.config.window_frames:
                return
            if id(op) not in queued_ops:
                self._send_sequenced(op.message, op)
        execution = self._execution
        if execution is None or execution.done or self._reset_pending is not None:
            return
        if self._fw_state in (FirmwareState.STOPPED, FirmwareState.FAULT):
            return
        if execution.base is None:
            execution.base = self._fw_last_received + 1
        base = execution.base
        last_index = base + len(execution.moves) - 1
        batch = min(self.config.batch_moves, self._max_batch, MAX_MOVES_PER_FRAME)
        while len(self._window) < self.config.window_frames:
            start = max(self._send_upto + 1, base)
            if start > last_index:
                return
            credit = self._fw_started + self._queue_depth
            first_frame = start == base and self._fw_executed >= base - 1
            wire: list[WireMove] = []
            position = start - base
            for lo, hi in self._groups_from(execution, position):
                if wire and (first_frame or len(wire) + (hi - lo) > batch):
                    break
                if base + hi - 1 > credit:
                    break
                for p in range(lo, hi):
                    move = execution.moves[p]
                    flags = (
                        MoveFlags.SIMULTANEOUS_WITH_NEXT
                        if move.simultaneous_with_next
                        else MoveFlags.NONE
                    )
                    wire.append(WireMove(base + p, move.motor, move.quarter_turns, flags))
            if not wire:
                return
            self._send_sequenced(Moves(tuple(wire)))
            self._send_upto = wire[-1].index
            execution.sent_upto = max(execution.sent_upto, wire[-1].index - base)

    @staticmethod
    def _groups_from(execution: Execution, position: int) -> list[tuple[int, int]]:
        first = bisect.bisect_left(execution._group_starts, position)
        return execution.groups[first : first + MAX_MOVES_PER_FRAME]

    # === receiving ===========================================================================

    def _on_item(self, generation: int, item: Frame | CorruptFrame) -> None:
        if generation != self._generation:
            return
        if isinstance(item, CorruptFrame):
            self.stats.corrupt_received += 1
            logger.debug("%s: corrupt frame from firmware: %s", self.port, item)
            return
        key = (item.seq, item.type, item.payload)
        if key == self._last_frame_key:
            self.stats.duplicates_dropped += 1
            return
        self._last_frame_key = key
        try:
            message = parse_message(item)
        except MalformedMessage as err:
            self.stats.corrupt_received += 1
            logger.debug("%s: malformed frame from firmware: %s", self.port, err)
            return
        self._last_rx = asyncio.get_running_loop().time()
        self._probed = False
        match message:
            case Ident():
                self._on_ident(message)
            case Ack():
                self._on_ack(message)
            case Nak():
                self._on_nak(message)
            case Executed():
                self._on_executed(message)
            case Status():
                self._on_status(message)
            case ErrorReport():
                self._on_error_report(message)
            case _:
                logger.debug("%s: ignoring host-direction frame %s", self.port, message)

    def _on_ident(self, ident: Ident) -> None:
        waiter = self._ident_waiter
        if ident.nonce != 0 and waiter is not None and ident.nonce == self._hello_nonce:
            if not waiter.done():
                waiter.set_result(ident)
            return
        if ident.nonce == 0 and self._boot_id is not None and ident.boot_id != self._boot_id:
            logger.warning("%s: firmware announced a new boot (reset)", self.port)
            self._restart_session("firmware reset")

    def _on_ack(self, ack: Ack) -> None:
        if not self._session_open:
            return
        for seq in list(self._window):
            if not _seq_le(seq, ack.seq):
                break
            out = self._window.pop(seq)
            if out.op is not None:
                self._op_done(out.op, None)
        self._fw_last_received = max(self._fw_last_received, ack.last_received)
        started = ack.last_received - (self._queue_depth - ack.queue_free)
        self._fw_started = max(self._fw_started, started)
        self._pump()

    def _on_nak(self, nak: Nak) -> None:
        self.stats.naks_received += 1
        if not self._session_open:
            return
        logger.debug("%s: NAK %s seq %d detail %d", self.port, nak.reason.name, nak.seq, nak.detail)
        if nak.reason is NakReason.NO_SESSION:
            self._restart_session("firmware has no session (reset or watchdog)")
            return
        if nak.reason in (NakReason.CORRUPT, NakReason.SEQ_GAP):
            # Everything before ``seq`` arrived: an implicit ACK.
            for seq in list(self._window):
                if seq == nak.seq or not _seq_le(seq, (nak.seq - 1) & 0xFFFF):
                    break
                out = self._window.pop(seq)
                if out.op is not None:
                    self._op_done(out.op, None)
            out_nak = self._window.get(nak.seq)
            if out_nak is None:
                return  # nothing of ours is missing (a heartbeat was corrupted)
            now = asyncio.get_running_loop().time()
            holdoff = 2 * len(out_nak.data) * BITS_PER_BYTE / self.config.baudrate + 0.01
            if now - out_nak.sent_at < holdoff:
                return  # already resent; this NAK crossed it on the wire
            if out_nak.retries >= self.config.max_retries:
                self._restart_session(f"frame {nak.seq} NAKed {out_nak.retries} times")
                return
            self._retransmit_from(nak.seq, now)
            return
        refused = self._window.get(nak.seq)
        if refused is None:
            return  # about a frame of an earlier session, or one already dealt with
        if nak.reason is NakReason.QUEUE_FULL:
            refused.sent_at = asyncio.get_running_loop().time()  # retry after the timeout
            return
        if refused.op is not None:
            error = CommandRejectedError(
                f"firmware on {self.port} refused {type(refused.op.message).__name__.upper()}: "
                f"{nak.reason.name}; {self._nak_hint(nak.reason)}",
                self.port,
                nak.reason.name,
            )
            self._ops = deque(o for o in self._ops if o is not refused.op)
            self._op_done(refused.op, error)
        elif nak.reason not in (NakReason.STOPPED, NakReason.MOVE_GAP, NakReason.BUSY):
            self._fail_execution_rejected(nak)
        self._restart_session(f"firmware refused frame {nak.seq}: {nak.reason.name}")

    @staticmethod
    def _nak_hint(reason: NakReason) -> str:
        return {
            NakReason.BUSY: "wait until the moves in progress have finished",
            NakReason.STOPPED: "run `cuberobot home` to clear the stop",
            NakReason.BAD_MOVE: "a motor is disabled or does not exist; check the robot profile",
        }.get(reason, "this is a host/firmware mismatch; update both")

    def _on_executed(self, executed: Executed) -> None:
        self._fw_started = max(self._fw_started, executed.started_upto)
        self._advance_executed(executed.last_executed)
        self._pump()

    def _on_status(self, status: Status) -> None:
        self.last_status = status
        if self._boot_id is not None and status.boot_id != self._boot_id:
            self._restart_session("firmware boot id changed (reset)")
            return
        if self._session_open:
            self._fw_started = max(self._fw_started, status.started_upto)
            self._fw_state, self._fw_error = status.state, status.error
            self._advance_executed(status.last_executed)
            if status.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
                if status.error is ErrorCode.WATCHDOG:
                    if not any(isinstance(op.message, Clear) for op in self._ops):
                        self._restart_session("firmware stopped by its watchdog")
                else:
                    self._fail_for_state(status.state, status.error, status.error_motor, status)
        for waiter in list(self._status_waiters):
            if not waiter.future.done() and waiter.predicate(status):
                waiter.future.set_result(status)
        self._pump()

    def _on_error_report(self, report: ErrorReport) -> None:
        self.last_error_report = report
        motor = Face(report.motor).name if report.motor < 6 else "-"
        logger.warning(
            "%s: firmware error %s (motor %s, move %d)",
            self.port,
            report.code.name,
            motor,
            report.move_index,
        )

    # === executions ==========================================================================

    def _advance_executed(self, last_executed: int) -> None:
        """The firmware says moves up to index ``last_executed`` have executed: emit the events
        of the running execution that this newly covers (each exactly once, in order)."""
        if last_executed > self._fw_executed:
            self._fw_executed = last_executed
            self._fw_started = max(self._fw_started, last_executed)
        execution = self._execution
        if execution is None or execution.base is None:
            return
        if execution.done:
            reported = execution.base + len(execution.events) - 1
            last_planned = execution.base + len(execution.moves) - 1
            if reported < min(last_executed, last_planned) and execution.error is not None:
                unknown_before = isinstance(execution.error, ExecutionLinkError)
                level = logging.INFO if unknown_before else logging.ERROR
                logger.log(
                    level,
                    "%s: firmware reports moves up to index %d executed after the execution "
                    "ended at index %d (%s); reconcile the journal with link.info.last_executed",
                    self.port,
                    last_executed,
                    reported,
                    type(execution.error).__name__,
                )
            return
        now = asyncio.get_running_loop().time()
        done = len(execution.events)
        upto = min(last_executed - execution.base, len(execution.moves) - 1)
        for position in range(done, upto + 1):
            execution._emit(
                MoveExecuted(position, execution.base + position, execution.moves[position], now)
            )
        if len(execution.events) == len(execution.moves):
            logger.debug("%s: execution of %d moves complete", self.port, len(execution.moves))
            execution._finish(None)

    def _report(
        self, execution: Execution, *, started_upto: int, sent_unknown: bool = False
    ) -> ExecutionReport:
        n = len(execution.moves)
        done = len(execution.events)
        base = execution.base
        if base is None:
            return ExecutionReport(execution.moves, (), not_executed=execution.planned(range(n)))
        started = max(done, min(started_upto - base + 1, n))
        if sent_unknown:
            unknown_end = max(done, min(execution.sent_upto + 1, n))
            return ExecutionReport(
                execution.moves,
                tuple(execution.events),
                unknown=execution.planned(range(done, unknown_end)),
                not_executed=execution.planned(range(unknown_end, n)),
            )
        return ExecutionReport(
            execution.moves,
            tuple(execution.events),
            interrupted=execution.planned(range(done, started)),
            not_executed=execution.planned(range(started, n)),
        )

    def _on_reset(self, ident: Ident) -> None:
        self.stats.resets_detected += 1
        old = self._boot_id or 0
        if ident.last_executed < self._fw_executed:
            logger.error(
                "%s: firmware move counters went back from %d to %d across a reset "
                "(non-volatile memory lost); executed moves are known only from reports",
                self.port,
                self._fw_executed,
                ident.last_executed,
            )
        self._advance_executed(ident.last_executed)
        execution = self._execution
        if execution is None or execution.done:
            logger.warning(
                "%s: firmware reset while idle (boot %08x → %08x); nothing was in flight",
                self.port,
                old,
                ident.boot_id,
            )
            return
        report = self._report(execution, started_upto=ident.started_upto)
        error = FirmwareResetError(
            f"firmware on {self.port} reset mid-sequence (boot {old:08x} → "
            f"{ident.boot_id:08x}): {report.summary()}; re-scan or reconcile the cube, run "
            "`cuberobot home`, then acknowledge the reset",
            self.port,
            report,
        )
        logger.warning("%s", error)
        self._reset_pending = error
        self._ops.clear()
        execution._finish(error)

    def _fail_for_state(
        self, state: FirmwareState, error: ErrorCode, motor: int, source: Status | Ident
    ) -> None:
        execution = self._execution
        if execution is None or execution.done:
            return
        report = self._report(execution, started_upto=source.started_upto)
        where = f"motor {Face(motor).name} " if motor < 6 else ""
        cls: type[ExecutionError]
        if error is ErrorCode.ESTOP:
            cls = EmergencyStopError
            text = (
                f"emergency stop on {self.port}: {report.summary()}; make the robot safe, "
                "then run `cuberobot home`"
            )
        elif error in (ErrorCode.STALL, ErrorCode.DRIVER_FAULT, ErrorCode.LIMIT):
            cls = MotorFaultError
            text = (
                f"{where}{error.name.lower().replace('_', ' ')} on {self.port}: "
                f"{report.summary()}; free the cube and check the gripper, then run "
                "`cuberobot home`"
            )
        else:
            cls = FirmwareStoppedError
            text = (
                f"firmware on {self.port} is {state.name} ({error.name}): {report.summary()}; "
                "run `cuberobot home`"
            )
        err = cls(text, self.port, report)
        logger.warning("%s", err)
        execution._finish(err)

    def _fail_execution_rejected(self, nak: Nak) -> None:
        execution = self._execution
        if execution is None or execution.done:
            return
        report = self._report(execution, started_upto=self._fw_started)
        err = ExecutionError(
            f"firmware on {self.port} refused moves ({nak.reason.name}, detail {nak.detail}): "
            f"{report.summary()}; {self._nak_hint(nak.reason)}",
            self.port,
            report,
        )
        execution._finish(err)

    def _fail_execution_link(self, cause: LinkError) -> None:
        execution = self._execution
        if execution is None or execution.done:
            return
        report = self._report(execution, started_upto=self._fw_started, sent_unknown=True)
        err = ExecutionLinkError(f"{cause} — {report.summary()}", self.port, report)
        err.__cause__ = cause
        execution._finish(err)

    def _fail_everything(self, error: LinkError) -> None:
        self._failure = error
        logger.error("%s", error)
        self._fail_execution_link(error)
        self._fail_waiters(error)
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_exception(error)

    # === operations =======================================================================

    def _check_open(self) -> None:
        if self._closed:
            raise LinkClosedError(f"link to {self.port} is closed; open a new one", self.port)

    def _check_usable(self) -> None:
        self._check_open()
        if self._failure is not None:
            raise self._failure
        if self._down is not None:
            raise self._down
        if self._supervisor is None:
            raise LinkError(f"link to {self.port} is not connected; call connect()", self.port)

    def _require_idle(self, what: str) -> None:
        if self._execution is not None and not self._execution.done:
            raise LinkBusyError(
                f"cannot {what} on {self.port} while moves are executing; wait or estop()",
                self.port,
            )

    async def _send_op(self, message: Message, name: str) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        op = _Op(message, future)
        self._ops.append(op)
        self._pump()
        try:
            await asyncio.wait_for(asyncio.shield(future), self.config.status_timeout_s * 5)
        except TimeoutError:
            raise LinkTimeoutError(
                f"{name} not acknowledged by the firmware on {self.port}; check the cable, "
                "then retry",
                self.port,
            ) from None
        finally:
            self._ops = deque(o for o in self._ops if o is not op)

    def _op_done(self, op: _Op, error: LinkError | None) -> None:
        if (
            error is None
            and isinstance(op.message, Clear)
            and self._fw_state in (FirmwareState.STOPPED, FirmwareState.FAULT)
        ):
            self._fw_state, self._fw_error = FirmwareState.IDLE, ErrorCode.NONE
        if op in self._ops:
            self._ops = deque(o for o in self._ops if o is not op)
        if op.waiter is not None and not op.waiter.done():
            if error is None:
                op.waiter.set_result(None)
            else:
                op.waiter.set_exception(error)

    async def _request_status(
        self, message: Message, predicate: Callable[[Status], bool], name: str
    ) -> Status:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.status_timeout_s
        future: asyncio.Future[Status] = loop.create_future()
        waiter = _StatusWaiter(predicate, future)
        self._status_waiters.append(waiter)
        try:
            for attempt in itertools.count():
                self._send_realtime(message)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    return await asyncio.wait_for(
                        asyncio.shield(future), min(0.05 * (2**attempt), remaining)
                    )
        finally:
            self._status_waiters.remove(waiter)
            if not future.done():
                future.cancel()
        raise LinkTimeoutError(
            f"no STATUS answering {name} from the firmware on {self.port} within "
            f"{self.config.status_timeout_s:g} s; check the cable"
            + ("; press the hardware emergency stop" if name == "ESTOP" else ""),
            self.port,
        )

    async def _wait_status(
        self, predicate: Callable[[Status], bool], timeout: float, name: str, poll: bool
    ) -> Status:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Status] = loop.create_future()
        waiter = _StatusWaiter(predicate, future)
        self._status_waiters.append(waiter)
        deadline = loop.time() + timeout
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                if poll:
                    self._send_realtime(StatusRequest())
                with contextlib.suppress(TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(future), min(0.1, remaining))
        finally:
            self._status_waiters.remove(waiter)
            if not future.done():
                future.cancel()
        raise LinkTimeoutError(
            f"{name} did not complete on {self.port} within {timeout:g} s; check the motors "
            "and the cable",
            self.port,
        )

    def _fail_waiters(self, error: LinkError) -> None:
        for waiter in self._status_waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
        for op in self._ops:
            if op.waiter is not None and not op.waiter.done():
                op.waiter.set_exception(error)
        self._ops.clear()
