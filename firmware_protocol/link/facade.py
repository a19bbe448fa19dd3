""":class:`FirmwareLink`: the asyncio facade over the sans-IO core. It owns the port, the clock
and the tasks (supervisor, ticker); every protocol decision is the core's
(:class:`~firmware_protocol.link.core.LinkCore`), whose actions it carries out."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence

import serial

from firmware_protocol.codec import BITS_PER_BYTE, Frame
from firmware_protocol.errors import (
    CorruptFrame,
    EmergencyStopError,
    ExecutionError,
    FirmwareStoppedError,
    LinkBusyError,
    LinkClosedError,
    LinkError,
    LinkTimeoutError,
    MotorFaultError,
    PortError,
    PortLostError,
    PortOpenError,
)
from firmware_protocol.link.actions import (
    Action,
    ExecutionEnded,
    Fatal,
    HandshakeFailed,
    MovesExecuted,
    OpDone,
    SessionOpened,
    WaiterDone,
    Write,
)
from firmware_protocol.link.core import LinkCore
from firmware_protocol.link.data import ExecutionReport, FirmwareInfo, LinkConfig, LinkStats
from firmware_protocol.link.execution import Execution
from firmware_protocol.link.supervisor import (
    GiveUp,
    HandshakeError,
    PortDown,
    ReconnectPolicy,
    SerialPort,
)
from firmware_protocol.messages import (
    Enable,
    ErrorCode,
    ErrorReport,
    EStop,
    FirmwareState,
    Hold,
    Home,
    Message,
    Resume,
    Status,
    StatusFlags,
    StatusRequest,
)
from firmware_protocol.moves import Move
from firmware_protocol.tasks import cancel_and_wait

__all__ = ["FirmwareLink"]

logger = logging.getLogger(__name__)

#: How often a STATUS is asked for while waiting for one (seconds; then doubled each time).
_STATUS_RETRY_S = 0.05
#: How often a STATUS is asked for while homing (seconds).
_HOME_POLL_S = 0.1
_MIN_HOME_WAIT_S = 0.1
#: A command (HOME, ENABLE) waits this many ``status_timeout_s`` for its ACK.
_COMMAND_TIMEOUT_FACTOR = 5
#: The shortest sleep of the ticker (seconds), so an overdue deadline never spins the loop.
_MIN_TICK_S = 0.001
#: How long closing waits for a stop on its way to take the closed link's error (seconds).
_CLOSE_STOP_WAIT_S = 0.1

#: A MOVES frame of a full batch on the wire: header, CRC, COBS and delimiter, 8 moves.
_FULL_MOVES_FRAME_BYTES = 64

_Pending = asyncio.Future[Status | None]


def _retrieved(task: asyncio.Task[Status]) -> None:
    """Mark a shared stop's failure as seen: its callers may all have been cancelled."""
    if not task.cancelled():
        task.exception()


class FirmwareLink:
    """A reliable link to one firmware on one port. See :mod:`firmware_protocol.link`.

    All methods must be called from the event loop that called :meth:`connect`. At most one
    :meth:`execute` runs at a time.
    """

    def __init__(self, port: str, *, config: LinkConfig | None = None) -> None:
        self.port = port
        self.config = config or LinkConfig()
        self._rng = random.Random()
        self._core = LinkCore(port, self.config, self._rng)
        #: What the firmware said in the IDENT of the last session.
        self.info: FirmwareInfo | None = None
        self.stats: LinkStats = self._core.stats
        self._serial = SerialPort(port, self.config.baudrate)
        self._closed = False
        self._supervisor: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._first_session: asyncio.Future[FirmwareInfo] | None = None
        self._connection_end: asyncio.Future[Exception | None] | None = None
        self._failure: LinkError | None = None
        self._down: PortLostError | None = None  # the port has been gone too long
        self._policy: ReconnectPolicy | None = None
        self._pending: dict[int, _Pending] = {}
        self._execution: Execution | None = None
        self._stop: asyncio.Task[Status] | None = None  # the emergency stop on its way

    # === public API ============================================================================

    async def __aenter__(self) -> FirmwareLink:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def last_status(self) -> Status | None:
        return self._core.last_status

    @property
    def last_error_report(self) -> ErrorReport | None:
        return self._core.last_error_report

    @property
    def connected(self) -> bool:
        """A session with the firmware is open right now."""
        return self._core.session_open

    @property
    def reset_pending(self) -> bool:
        """A firmware reset interrupted an execution and has not been acknowledged."""
        return self._core.executions.reset_pending is not None

    @property
    def latency_s(self) -> float:
        """How long moves handed to :meth:`extend` may take to reach the firmware's queue, at
        most: the smoothed ACK round trip plus four mean deviations (TCP's bound, RFC 6298),
        and before any round trip was measured, twice a full MOVES frame's time on the wire."""
        rtt = self.stats.ack_rtt_s
        if rtt is None:
            return 2 * _FULL_MOVES_FRAME_BYTES * BITS_PER_BYTE / self.config.baudrate
        return rtt + 4 * self.stats.ack_rtt_var_s

    @property
    def round_trip_s(self) -> float:
        """The smoothed ACK round trip, typical and not a bound (before one: :attr:`latency_s`)."""
        rtt = self.stats.ack_rtt_s
        return self.latency_s if rtt is None else rtt

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
        if self._core.session_open and self.info is not None:
            return self.info
        loop = asyncio.get_running_loop()
        if self._supervisor is None or self._supervisor.done():
            self._failure = None
            self._first_session = loop.create_future()
            self._supervisor = loop.create_task(
                self._supervise(), name=f"fwlink-supervisor {self.port}"
            )
        if self._ticker is None or self._ticker.done():
            self._ticker = loop.create_task(self._tick_loop(), name=f"fwlink-tick {self.port}")
        assert self._first_session is not None
        return await asyncio.shield(self._first_session)

    def execute(self, moves: Sequence[Move]) -> Execution:
        """Start executing ``moves``; return an async iterator of :class:`MoveExecuted`.

        Raises at once: :class:`InvalidMoveError`, :class:`LinkBusyError`,
        :class:`ResetNotAcknowledgedError`, :class:`FirmwareStoppedError` (e-stop or fault
        latched: :meth:`home` first), :class:`LinkClosedError`, or the link's failure.
        """
        self._check_usable()
        state, actions = self._core.execute(moves, self._now())
        self._execution = Execution(state)
        self._apply(actions)
        return self._execution

    def extend(self, moves: Sequence[Move]) -> None:
        """Append ``moves`` to the running execution (its iterator yields their events after
        the others'): the firmware's queue gets them as soon as it has room, with no pause
        between the moves already sent and these.

        Raises at once: :class:`ExecutionEndedError` (no execution running: start a new one),
        :class:`InvalidMoveError`, :class:`LinkClosedError`, or the link's failure.
        """
        self._check_usable()
        self._apply(self._core.extend(moves, self._now()))

    def acknowledge_reset(self) -> None:
        """Allow executions again after a :class:`FirmwareResetError` (the owner has reconciled
        the cube state with the report and, usually, homed the motors)."""
        self._core.acknowledge_reset()

    async def status(self) -> Status:
        """Ask for and return a fresh STATUS (:class:`LinkTimeoutError` if none comes)."""
        self._check_usable()
        return await self._request_status(StatusRequest(), lambda s: True, "STATUS")

    async def estop(self) -> Status:
        """Emergency stop: motors stop mid-turn, the queue is flushed, the firmware latches
        STOPPED. The running execution fails with :class:`EmergencyStopError`. Returns the
        STATUS confirming the stop. Recover with :meth:`home`.

        Calls made while a stop is on its way (sent, repeated with back-off, not yet confirmed)
        share it and its answer: a storm of stop commands keeps one ESTOP in flight instead of
        one per call. The stop goes on when a caller is cancelled; closing the link ends it.

        With the port down (the link reconnecting) it raises :class:`PortError`, and the stop
        is owed: it is the first thing sent when the session opens again, before any move
        goes out, so the running execution cannot carry on as if it had not been asked for
        (found by bench/chaos.py: a stop during a vanished port was refused, and the job
        finished once the port came back)."""
        self._check_open()
        if not self._core.connected:
            self._core.estop_owed = True
            raise PortError(
                f"cannot send the emergency stop: {self.port} is not connected; "
                "press the robot's hardware emergency stop (the link sends it the moment the "
                "port is back, before any move)",
                self.port,
            )
        return await asyncio.shield(self._stop_on_its_way())

    def _stop_on_its_way(self) -> asyncio.Task[Status]:
        """The ESTOP in flight, started unless one is (every caller shares it)."""
        stop = self._stop
        if stop is None or stop.done():
            stop = self._stop = asyncio.get_running_loop().create_task(
                self._send_stop(), name=f"estop {self.port}"
            )
            stop.add_done_callback(_retrieved)
        return stop

    async def _send_stop(self) -> Status:
        self._check_open()  # closed before this task's first step
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
        """Home the motors (also clears STOPPED and FAULT); return the STATUS once homed.

        A STATUS after HOME was acknowledged that says STOPPED or FAULT (an emergency stop, a
        fault while homing) ends the wait at once: :class:`EmergencyStopError`,
        :class:`MotorFaultError` or :class:`FirmwareStoppedError` (an empty report), rather
        than :class:`LinkTimeoutError` after ``home_timeout_s``."""
        self._check_usable()
        self._require_idle("home")
        started = self._now()
        await self._send_command(Home(motor_mask))
        timeout = max(self.config.home_timeout_s - (self._now() - started), _MIN_HOME_WAIT_S)
        status = await self._await_status(
            StatusRequest(),
            _homed_or_stopped,
            timeout=timeout,
            retry_s=_HOME_POLL_S,
            backoff=1.0,
            timeout_error=LinkTimeoutError(
                f"HOME did not complete on {self.port} within {timeout:g} s; check the motors "
                "and the cable",
                self.port,
            ),
        )
        self._core.note_state(status)
        if not _homed(status):
            raise _home_interrupted(status, self.port)
        return status

    async def enable_motors(self, enabled_mask: int) -> None:
        """Energise the motors in ``enabled_mask`` (bit i = motor i), release the others."""
        self._check_usable()
        self._require_idle("enable motors")
        await self._send_command(Enable(enabled_mask))

    async def close(self) -> None:
        """Close the port. A running execution fails with :class:`ExecutionLinkError`."""
        if self._closed:
            return
        self._closed = True
        closed = LinkClosedError(f"link to {self.port} closed", self.port)
        self._apply(self._core.fail(closed, self._now()))
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_exception(closed)
            self._first_session.exception()  # mark retrieved
        for task in (self._supervisor, self._ticker):
            if task is not None:
                await cancel_and_wait(task)
        if self._stop is not None:  # its callers get the closed link's error, not a cancel
            await asyncio.wait({self._stop}, timeout=_CLOSE_STOP_WAIT_S)
            if not self._stop.done():
                self._stop.cancel()
        await self._close_port()

    # === carrying out the core's actions =======================================================

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            match action:
                case Write():
                    self._serial.write(action.data)
                case MovesExecuted():
                    if self._execution is not None and self._execution.state is action.execution:
                        self._execution._deliver(action.events)
                case ExecutionEnded():
                    if self._execution is not None and self._execution.state is action.execution:
                        self._execution._end(action.error)
                case OpDone():
                    self._settle(action.op_id, None, action.error)
                case WaiterDone():
                    self._settle(action.waiter_id, action.status, action.error)
                case SessionOpened():
                    self._session_opened(action.info, action.stop_sent)
                case HandshakeFailed():
                    self._end_connection(HandshakeError(action.reason))
                case Fatal():
                    self._end_connection(action.error)

    def _settle(self, request_id: int, status: Status | None, error: LinkError | None) -> None:
        future = self._pending.pop(request_id, None)
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(status)

    def _session_opened(self, info: FirmwareInfo, stop_sent: bool) -> None:
        self.info = info
        if stop_sent:  # the owed stop went out first: repeat it until a STATUS confirms it
            self._stop_on_its_way()
        if self._down is not None:
            logger.info("%s: port back; the link is usable again", self.port)
        self._down = None
        if self._policy is not None:
            self._policy.back_up()
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_result(info)

    def _end_connection(self, why: Exception | None) -> None:
        end = self._connection_end
        if end is not None and not end.done():
            end.set_result(why)

    # === requests ==============================================================================

    async def _send_command(self, message: Message) -> None:
        timeout = self.config.status_timeout_s * _COMMAND_TIMEOUT_FACTOR
        op_id, actions = self._core.send_command(message, self._now(), timeout)
        await self._wait_for(op_id, actions)

    async def _request_status(
        self, message: Message, predicate: Callable[[Status], bool], name: str
    ) -> Status:
        """Send ``message`` (ESTOP, HOLD, ...), repeated with back-off, until a STATUS
        satisfies ``predicate``."""
        timeout = self.config.status_timeout_s
        hint = "; press the hardware emergency stop" if name == "ESTOP" else ""
        return await self._await_status(
            message,
            predicate,
            timeout=timeout,
            retry_s=_STATUS_RETRY_S,
            backoff=2.0,
            timeout_error=LinkTimeoutError(
                f"no STATUS answering {name} from the firmware on {self.port} within "
                f"{timeout:g} s; check the cable{hint}",
                self.port,
            ),
        )

    async def _await_status(
        self,
        request: Message,
        predicate: Callable[[Status], bool],
        *,
        timeout: float,
        retry_s: float,
        backoff: float,
        timeout_error: LinkError,
    ) -> Status:
        waiter_id, actions = self._core.await_status(
            request,
            predicate,
            self._now(),
            timeout=timeout,
            retry_s=retry_s,
            backoff=backoff,
            timeout_error=timeout_error,
        )
        status = await self._wait_for(waiter_id, actions)
        assert status is not None
        return status

    async def _wait_for(self, request_id: int, actions: list[Action]) -> Status | None:
        future: _Pending = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._apply(actions)
            return await future
        finally:
            self._pending.pop(request_id, None)
            self._core.forget(request_id)

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
            raise LinkError(
                f"link to {self.port} is not connected yet; connect it before use", self.port
            )

    def _require_idle(self, what: str) -> None:
        if self._core.busy:
            raise LinkBusyError(
                f"cannot {what} on {self.port} while moves are executing; wait for them to "
                "finish or stop them with the emergency stop",
                self.port,
            )

    # === tasks =================================================================================

    async def _tick_loop(self) -> None:
        while True:
            now = self._now()
            deadline = self._core.deadline()
            wait = self.config.tick_s if deadline is None else deadline - now
            await asyncio.sleep(min(self.config.tick_s, max(wait, _MIN_TICK_S)))
            self._apply(self._core.tick(self._now()))

    async def _supervise(self) -> None:
        policy = self._policy = ReconnectPolicy(self.port, self.config, self._rng, self._now())
        problem: Exception | None = None
        while not self._closed:
            try:
                await self._open_port()
            except (OSError, serial.SerialException, TimeoutError) as err:
                problem = err
            except ValueError as err:  # pyserial: a URL it cannot parse; no retry mends it
                error = PortOpenError(
                    f"{self.port} is not a port pyserial can open ({err}); give a device path "
                    "such as /dev/ttyACM0, a pty path or socket://host:port",
                    self.port,
                )
                error.__cause__ = err
                self._fail_everything(error)
                return
            else:
                if policy.lost_at is not None:
                    self._core.stats.reconnects += 1
                    logger.info(
                        "%s: port back after %.2f s", self.port, self._now() - policy.lost_at
                    )
                problem = await self._serve_connection()
                await self._close_port()
                if isinstance(problem, LinkError):  # fatal (protocol version)
                    self._fail_everything(problem)
                    return
                if self._closed:
                    return
                policy.ended(self._now(), self._core.session_opened_at)
            if not await self._after_connection(policy, problem):
                return

    async def _after_connection(self, policy: ReconnectPolicy, problem: Exception | None) -> bool:
        """Give up, declare the port down, or wait before the next try; whether to go on."""
        connecting = self._first_session is not None and not self._first_session.done()
        for step in policy.next_step(self._now(), connecting, problem):
            match step:
                case GiveUp():
                    self._fail_everything(step.error)
                    return False
                case PortDown():
                    # Give up on what is waiting, not on the port: keep trying in the
                    # background, so the link recovers by itself when the cable is back.
                    lost = PortLostError(
                        f"{self.port} gone for {step.seconds:.1f} s ({problem}); check the USB "
                        "cable and the robot's power; the link keeps reconnecting",
                        self.port,
                    )
                    lost.__cause__ = problem
                    logger.error("%s", lost)
                    self._down = lost
                    self._apply(self._core.fail(lost, self._now()))
                case _:
                    logger.debug("%s: reopening in %.3f s (%s)", self.port, step.delay_s, problem)
                    await asyncio.sleep(step.delay_s)
        return True

    async def _open_port(self) -> None:
        self._connection_end = asyncio.get_running_loop().create_future()
        await self._serial.open(self._on_item, self._on_lost)
        self._apply(self._core.connection_made(self._now()))

    async def _serve_connection(self) -> Exception | None:
        """Until the port closes, the handshake fails or the firmware is unusable."""
        assert self._connection_end is not None
        return await self._connection_end

    async def _close_port(self) -> None:
        self._apply(self._core.connection_lost())
        await self._serial.close()

    def _on_item(self, item: Frame | CorruptFrame) -> None:
        self._apply(self._core.receive(item, self._now()))

    def _on_lost(self, exc: Exception | None) -> None:
        if not self._closed:
            logger.warning(
                "%s: port lost (%s); reconnecting with back-off", self.port, exc or "closed"
            )
        self._apply(self._core.connection_lost())
        self._end_connection(HandshakeError(f"{self.port} lost ({exc or 'closed'})"))

    def _fail_everything(self, error: LinkError) -> None:
        self._failure = error
        logger.error("%s", error)
        self._apply(self._core.fail(error, self._now()))
        if self._first_session is not None and not self._first_session.done():
            self._first_session.set_exception(error)
        if self._ticker is not None:
            self._ticker.cancel()


def _homed_or_stopped(status: Status) -> bool:
    """A STATUS after HOME was acknowledged: homed, or stopped while homing (an emergency stop,
    a fault): the firmware will not go on homing by itself, so waiting longer is pointless."""
    return _homed(status) or status.state in (FirmwareState.STOPPED, FirmwareState.FAULT)


def _home_interrupted(status: Status, port: str) -> ExecutionError:
    """The error of a HOME a stop or a fault ended (nothing of a sequence was executing)."""
    nothing = ExecutionReport((), ())
    what = f"{status.state.name} ({status.error.name})"
    message = f"HOME interrupted on {port}: the firmware is {what}"
    if status.error is ErrorCode.ESTOP:
        return EmergencyStopError(f"{message}; make the robot safe, then home again", port, nothing)
    if status.state is FirmwareState.FAULT:
        return MotorFaultError(f"{message}; check the motors, then home again", port, nothing)
    return FirmwareStoppedError(f"{message}; home again", port, nothing)


def _homed(status: Status) -> bool:
    return (
        status.state is FirmwareState.IDLE
        and bool(status.flags & StatusFlags.HOMED)
        and status.error is ErrorCode.NONE
    )
