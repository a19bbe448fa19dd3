"""The sans-IO core of the reliable link: every protocol decision, none of the I/O.

:class:`LinkCore` is fed events — the port opened or closed, a frame (or a corrupt one) arrived,
the time is now, "execute these moves", "send this command", "wait for this STATUS" — and
returns :mod:`~firmware_protocol.link.actions`: bytes to write, moves executed, executions,
commands and waiters that ended, sessions opened. It never reads a clock, never sleeps and
imports neither asyncio nor serial, so the whole protocol can be driven by a test (or mirrored
by the firmware's C core) step by step. :meth:`LinkCore.deadline` says when it next needs
:meth:`LinkCore.tick`.

Its parts: :mod:`~firmware_protocol.link.handshake` (HELLO/IDENT),
:mod:`~firmware_protocol.link.window` (sequence numbers, ACK/NAK, retransmission),
:mod:`~firmware_protocol.link.accounting` (executed-move counters, MOVES batching),
:mod:`~firmware_protocol.link.waiters` (STATUS waiters),
:mod:`~firmware_protocol.link.commands` (HOME, ENABLE, CLEAR awaiting their ACK),
:mod:`~firmware_protocol.link.failures` (the errors that end an execution).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence

from firmware_protocol.codec import Frame
from firmware_protocol.errors import (
    CommandRejectedError,
    CorruptFrame,
    LinkError,
    MalformedMessage,
)
from firmware_protocol.link import failures
from firmware_protocol.link.accounting import ExecutionState, FirmwareCounters, next_moves_frame
from firmware_protocol.link.actions import (
    Action,
    Fatal,
    HandshakeFailed,
    SessionOpened,
    WaiterDone,
    Write,
)
from firmware_protocol.link.commands import Commands
from firmware_protocol.link.data import FirmwareInfo, LinkConfig, LinkStats
from firmware_protocol.link.executions import ExecutionTracker
from firmware_protocol.link.handshake import Handshake, check_version
from firmware_protocol.link.trust import LineGuard, Violation
from firmware_protocol.link.waiters import StatusWaiter, StatusWaiters
from firmware_protocol.link.window import Op, SendWindow
from firmware_protocol.messages import (
    MAX_MOVES_PER_FRAME,
    Ack,
    Clear,
    ErrorCode,
    ErrorReport,
    EStop,
    Executed,
    FirmwareState,
    Heartbeat,
    Ident,
    Message,
    Nak,
    NakReason,
    Status,
    StatusRequest,
    encode_message,
    parse_message,
)
from firmware_protocol.moves import Face, Move

__all__ = ["LinkCore"]

logger = logging.getLogger(__name__)

_NONCE_LIMIT = 1 << 32
_SEQ_LIMIT = 0x10000
_NO_MOTOR = 0xFF
#: NAK reasons a retransmission cannot cure, for moves: the execution fails.
_TRANSIENT_MOVE_NAKS = (NakReason.STOPPED, NakReason.MOVE_GAP, NakReason.BUSY)


class LinkCore:
    """The protocol state of one link. See the module docstring."""

    def __init__(self, port: str, config: LinkConfig, rng: random.Random | None = None) -> None:
        self.port = port
        self.config = config
        self.stats = LinkStats()
        self.info: FirmwareInfo | None = None
        self.last_status: Status | None = None
        self.last_error_report: ErrorReport | None = None
        self.fw = FirmwareCounters()
        self._out: list[Action] = []
        self.executions = ExecutionTracker(port, self.fw, self._out)
        self.guard = LineGuard(port, self.stats)
        self._rx_seq = 0  # the firmware SEQ of the frame being handled
        self._rng = rng or random.Random()
        self.window = SendWindow(config, self._rng.randrange(_SEQ_LIMIT))
        self.connected = False
        self.session_open = False
        self.session_opened_at = 0.0
        #: a stop asked for with the port down: sent first when the next session opens
        self.estop_owed = False
        self._handshake: Handshake | None = None
        self._boot_id: int | None = None
        self._send_upto = 0  # highest move index transmitted in this session
        self._commands = Commands(port)
        self._waiters = StatusWaiters()
        self._next_id = 1
        self._last_rx = 0.0
        self._last_tx = 0.0
        self._probed = False
        self._last_frame_key: tuple[int, int, bytes] | None = None

    # === events from the driver ================================================================

    def connection_made(self, now: float) -> list[Action]:
        """The port is open: flush any partial frame the firmware holds, say HELLO."""
        self.connected = True
        self._last_rx = self._last_tx = now
        self._probed = False
        self._last_frame_key = None
        self._write(b"\x00", now)
        self._start_handshake(now)
        return self._drain()

    def connection_lost(self) -> list[Action]:
        """The port is closed or gone."""
        self.connected = False
        self._handshake = None
        self._end_session()
        return self._drain()

    def receive(self, item: Frame | CorruptFrame, now: float) -> list[Action]:
        """A frame (or a corrupt one) arrived from the firmware."""
        if isinstance(item, CorruptFrame):
            self.stats.corrupt_received += 1
            logger.debug("%s: corrupt frame from firmware: %s", self.port, item)
            return []
        key = (item.seq, item.type, item.payload)
        if key == self._last_frame_key:
            self.stats.duplicates_dropped += 1
            return []
        self._last_frame_key = key
        try:
            message = parse_message(item)
        except MalformedMessage as err:  # it passed the CRC: an unknown type or value
            self.guard.reject(str(err), now)
            return []
        violation = self.guard.check(message, self.fw)
        if violation is not None:
            self._on_violation(violation, now)
            return self._drain()
        self.guard.stale(message, self.fw)
        self._rx_seq = item.seq
        self._last_rx = now
        self._probed = False
        self._dispatch(message, now)
        return self._drain()

    def tick(self, now: float) -> list[Action]:
        """Time has passed: retransmissions, retries, polls, heartbeats, timeouts."""
        self._tick_waiters(now)
        if self.connected:
            self._tick_connection(now)
        return self._drain()

    def deadline(self) -> float | None:
        """When :meth:`tick` has something to do next, at the latest (``None``: nothing)."""
        times = [self._waiters.deadline()]
        awaiting = self.executions.awaiting
        if awaiting is not None and awaiting.confirm_after_seq is not None:
            times.append(awaiting.confirm_poll_at)
        times += self._commands.deadlines()
        if self.connected and self._handshake is not None:
            times.append(self._handshake.deadline)
        if self.connected and self.session_open:
            times += [
                self.window.deadline(),
                self._last_tx + self.config.heartbeat_s,
                self._last_rx + self.config.firmware_silence_s * (2 if self._probed else 1),
            ]
        return min((t for t in times if t is not None), default=None)

    # === requests from the owner ===============================================================

    @property
    def busy(self) -> bool:
        """An execution is running."""
        return self.executions.busy

    @property
    def execution(self) -> ExecutionState | None:
        """The execution in progress (or the last one)."""
        return self.executions.current

    def execute(self, moves: Sequence[Move], now: float) -> tuple[ExecutionState, list[Action]]:
        """Start executing ``moves``. Raises :class:`LinkBusyError`,
        :class:`ResetNotAcknowledgedError`, :class:`InvalidMoveError` or
        :class:`FirmwareStoppedError` (nothing sent)."""
        motor_count = self.info.motor_count if self.info else len(Face)
        execution = self.executions.start(moves, motor_count, now)
        if moves:
            logger.debug("%s: executing %d moves", self.port, len(moves))
            self._pump(now)
        return execution, self._drain()

    def extend(self, moves: Sequence[Move], now: float) -> list[Action]:
        """Append ``moves`` to the running execution, so the firmware's queue never runs dry
        between them and the moves already sent (anytime solving commits moves while the motors
        turn). Their events follow the others'. Raises :class:`ExecutionEndedError` (no
        execution running) or :class:`InvalidMoveError` (nothing sent)."""
        motor_count = self.info.motor_count if self.info else len(Face)
        execution = self.executions.extend(moves, motor_count)
        if moves:
            logger.debug(
                "%s: execution extended by %d moves (%d in all)",
                self.port,
                len(moves),
                len(execution.moves),
            )
            self._pump(now)
        return self._drain()

    def acknowledge_reset(self) -> None:
        """Allow executions again after a firmware reset interrupted one."""
        self.executions.acknowledge_reset()

    def send_command(
        self, message: Message, now: float, timeout: float
    ) -> tuple[int, list[Action]]:
        """Send a sequenced command (HOME, ENABLE); its :class:`OpDone` comes when the firmware
        acknowledges or refuses it, or after ``timeout``. Returns its id."""
        op = Op(self._new_id(), message, now + timeout)
        self._commands.add(op)
        self._pump(now)
        return op.op_id, self._drain()

    def await_status(
        self,
        request: Message,
        predicate: Callable[[Status], bool],
        now: float,
        *,
        timeout: float,
        retry_s: float,
        backoff: float,
        timeout_error: LinkError,
    ) -> tuple[int, list[Action]]:
        """Send ``request`` (again every ``retry_s``, times ``backoff`` each time) until a
        STATUS satisfies ``predicate``: its :class:`WaiterDone` carries it, or
        ``timeout_error`` after ``timeout``. Returns the waiter's id."""
        waiter = StatusWaiter(
            waiter_id=self._new_id(),
            request=request,
            predicate=predicate,
            deadline=now + timeout,
            next_poll=now + retry_s,
            retry_s=retry_s,
            backoff=backoff,
            timeout_error=timeout_error,
        )
        self._waiters.add(waiter)
        self._send_realtime(request, now)
        return waiter.waiter_id, self._drain()

    def forget(self, request_id: int) -> None:
        """The owner no longer waits for command or waiter ``request_id``."""
        self._waiters.discard(request_id)
        self._commands.discard(request_id)

    def note_state(self, status: Status) -> None:
        """Take the state of a STATUS the owner acted on (after HOME)."""
        self.fw.state, self.fw.error = status.state, status.error

    def fail(self, error: LinkError, now: float) -> list[Action]:
        """The link failed (or was closed): end the execution, the commands and the waiters."""
        self.executions.fail_link(error, now)
        for waiter_id in self._waiters.take_all():
            self._out.append(WaiterDone(waiter_id, None, error))
        self._out += self._commands.drop_all(error)
        return self._drain()

    # === sending ===============================================================================

    def _drain(self) -> list[Action]:
        out = list(self._out)
        self._out.clear()
        return out

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _write(self, data: bytes, now: float) -> None:
        if not self.connected:
            return
        self._out.append(Write(data))
        self.stats.frames_sent += 1
        self.stats.bytes_sent += len(data)
        self._last_tx = now

    def _send_realtime(self, message: Message, now: float) -> None:
        self._write(encode_message(message, 0), now)

    def _pump(self, now: float) -> None:
        """Fill the window: pending commands first, then moves within the queue credit."""
        if not self.session_open:
            return
        in_flight = {id(o.op) for o in self.window if o.op is not None}
        for op in self._commands:
            if self.window.full:
                return
            if id(op) not in in_flight:
                self._write(self.window.push(op.message, now, op).data, now)
        execution = self.execution
        if execution is None or execution.done or self.executions.reset_pending is not None:
            return
        if self.fw.stopped:
            return
        if execution.base is None:
            execution.base = self.fw.last_received + 1
            if execution.last_index > failures.MAX_MOVE_INDEX:
                self.executions.fail_exhausted(now)
                return
        batch = min(self.config.batch_moves, self.fw.max_batch, MAX_MOVES_PER_FRAME)
        while not self.window.full:
            frame = next_moves_frame(execution, self._send_upto, self.fw, batch)
            if frame is None:
                return
            self._write(self.window.push(frame, now).data, now)
            self._send_upto = frame.last_index
            self.guard.sent(frame.last_index)
            execution.sent_upto = max(execution.sent_upto, frame.last_index - execution.base)

    # === time ==================================================================================

    def _tick_waiters(self, now: float) -> None:
        awaiting = self.executions.awaiting
        polling = awaiting is not None and awaiting.confirm_after_seq is not None
        if awaiting is not None and polling and now >= awaiting.confirm_poll_at:
            awaiting.confirm_poll_at = now + 2 * self.config.ack_timeout_s
            self._send_realtime(StatusRequest(), now)
        for waiter in self._waiters.expired(now):
            self._out.append(WaiterDone(waiter.waiter_id, None, waiter.timeout_error))
        for request in self._waiters.polls_due(now):
            self._send_realtime(request, now)
        self._out += self._commands.expired(now)

    def _tick_connection(self, now: float) -> None:
        cfg = self.config
        handshake = self._handshake
        if handshake is not None and now >= handshake.deadline:
            if handshake.exhausted:
                logger.debug("%s: no IDENT after %d HELLOs", self.port, handshake.attempts)
                self._handshake = None
                self._out.append(HandshakeFailed(f"no IDENT after {handshake.attempts} HELLOs"))
            else:
                logger.debug("%s: no IDENT (attempt %d)", self.port, handshake.attempts)
                self._write(handshake.retry(now), now)
        if not self.session_open:
            return
        silent = now - self._last_rx
        if silent > 2 * cfg.firmware_silence_s:
            self._restart_session(f"firmware silent for {silent:.2f} s", now)
            self._last_rx = now
            return
        if silent > cfg.firmware_silence_s and not self._probed:
            self._probed = True
            self._send_realtime(StatusRequest(), now)
        self._check_retransmit(now)
        if now - self._last_tx >= cfg.heartbeat_s:
            self._send_realtime(Heartbeat(), now)

    def _check_retransmit(self, now: float) -> None:
        oldest = self.window.timed_out(now)
        if oldest is None:
            return
        if oldest.retries >= self.config.max_retries:
            self._restart_session(
                f"no ACK for frame {oldest.seq} after {oldest.retries} retransmissions", now
            )
            return
        self._retransmit_from(oldest.seq, now)

    def _retransmit_from(self, seq: int, now: float) -> None:
        for data in self.window.retransmit_from(seq, now):
            self.stats.retransmissions += 1
            self._write(data, now)

    # === session ===============================================================================

    def _start_handshake(self, now: float) -> None:
        nonce = self._rng.randrange(1, _NONCE_LIMIT)
        self._handshake = Handshake(self.config, self.window.take_seq(), nonce, now)
        self._write(self._handshake.data, now)

    def _end_session(self) -> None:
        self.session_open = False
        self.window.clear()

    def _restart_session(self, why: str, now: float) -> None:
        """Re-open the session with a new HELLO (if the port is still there)."""
        if not self.session_open:
            self.window.clear()
            return
        logger.info("%s: re-opening the session: %s", self.port, why)
        self._end_session()
        if self.connected and self._handshake is None:
            self._start_handshake(now)

    def _on_ident(self, ident: Ident, now: float) -> None:
        handshake = self._handshake
        if handshake is not None and handshake.answers(ident):
            self._handshake = None
            error = check_version(ident, self.port)
            if error is not None:
                self._out.append(Fatal(error))
            else:
                self._open_session(ident, now)
            return
        if ident.nonce == 0 and self._boot_id is not None and ident.boot_id != self._boot_id:
            logger.warning("%s: firmware announced a new boot (reset)", self.port)
            self._restart_session("firmware reset", now)

    def _open_session(self, ident: Ident, now: float) -> None:
        self.stats.sessions += 1
        self.session_opened_at = now
        beyond = self.guard.announced(ident)
        if beyond is not None:  # before its counters report any move executed
            self._on_violation(beyond, now, taken=True)
        old_boot = self._boot_id
        reset = old_boot is not None and ident.boot_id != old_boot
        if old_boot is not None and reset:
            self.stats.resets_detected += 1
            if self.executions.on_reset(ident, old_boot, now):
                why = f"firmware on {self.port} reset before acknowledging; retry"
                self._out += self._commands.drop_all(LinkError(why, self.port))
        self._boot_id = ident.boot_id
        self.guard.session_opened(ident, reset=reset)
        self.executions.advance(ident.last_executed, now, confirmed=True)
        self.fw.take_ident(ident)
        self._send_upto = ident.last_received
        self.window.clear()
        self.info = FirmwareInfo.from_ident(self.port, ident)
        logger.debug("%s: session open: %s", self.port, ident)  # its counters, boot id, state
        self.session_open = True
        owed, self.estop_owed = self.estop_owed, False
        self._out.append(SessionOpened(self.info, stop_sent=owed))
        if owed:  # before the moves go out again (the owner repeats it until STATUS says so)
            logger.warning("%s: sending the stop asked for while the port was down", self.port)
            self._send_realtime(EStop(), now)
        if self.fw.stopped and not (owed and ident.error is ErrorCode.WATCHDOG):  # it latches
            if ident.error is ErrorCode.WATCHDOG:
                logger.info("%s: firmware was stopped by its watchdog; clearing", self.port)
                self._commands.add_first(Op(self._new_id(), Clear(), None))
            else:
                self.executions.fail_for_state(ident.state, ident.error, _NO_MOTOR, ident, now)
        self.executions.rebase(ident.last_received)
        self._pump(now)

    # === receiving =============================================================================

    def _dispatch(self, message: Message, now: float) -> None:
        match message:
            case Ident():
                self._on_ident(message, now)
            case Ack():
                self._on_ack(message, now)
            case Nak():
                self._on_nak(message, now)
            case Executed():
                self.fw.note_started(message.started_upto)
                self.executions.advance(message.last_executed, now)
                self._await_confirmation(now)
                self._pump(now)
            case Status():
                self._on_status(message, now)
            case ErrorReport():
                self._on_error_report(message)

    def _acknowledged(self, ops: Sequence[Op | None]) -> None:
        for op in ops:
            if op is not None:
                self._op_done(op, None)

    def _on_ack(self, ack: Ack, now: float) -> None:
        if not self.session_open:
            return
        acknowledged = self.window.acknowledge(ack.seq)
        if acknowledged:
            self.executions.refusals = 0
        for out in acknowledged:
            if out.retries == 0:
                self.stats.note_rtt(now - out.sent_at)
        self._acknowledged([out.op for out in acknowledged])
        self.fw.last_received = max(self.fw.last_received, ack.last_received)
        self.fw.note_started(ack.last_received - (self.fw.queue_depth - ack.queue_free))
        self._pump(now)

    def _on_nak(self, nak: Nak, now: float) -> None:
        self.stats.naks_received += 1
        if not self.session_open:
            return
        logger.debug("%s: NAK %s seq %d detail %d", self.port, nak.reason.name, nak.seq, nak.detail)
        if nak.reason is NakReason.NO_SESSION:
            self._restart_session("firmware has no session (reset or watchdog)", now)
        elif nak.reason in (NakReason.CORRUPT, NakReason.SEQ_GAP):
            self._on_nak_missing(nak, now)
        else:
            self._on_nak_refused(nak, now)

    def _on_nak_missing(self, nak: Nak, now: float) -> None:
        """NAK CORRUPT / SEQ_GAP: frames before ``seq`` arrived, ``seq`` did not."""
        self._acknowledged([out.op for out in self.window.acknowledge_before(nak.seq)])
        missing = self.window.get(nak.seq)
        if missing is None:
            return  # nothing of ours is missing (a heartbeat was corrupted)
        if not self.window.nak_holdoff_over(missing, now):
            return  # already resent; this NAK crossed it on the wire
        if missing.retries >= self.config.max_retries:
            self._restart_session(f"frame {nak.seq} NAKed {missing.retries} times", now)
            return
        self._retransmit_from(nak.seq, now)

    def _on_nak_refused(self, nak: Nak, now: float) -> None:
        refused = self.window.get(nak.seq)
        if refused is None:
            return  # about a frame of an earlier session, or one already dealt with
        if nak.reason is NakReason.QUEUE_FULL:
            refused.sent_at = now  # retry after the timeout
            return
        if refused.op is not None:
            error = CommandRejectedError(
                f"firmware on {self.port} refused {type(refused.op.message).__name__.upper()}: "
                f"{nak.reason.name}; {failures.nak_hint(nak.reason)}",
                self.port,
                nak.reason.name,
            )
            self._op_done(refused.op, error)
        elif nak.reason not in _TRANSIENT_MOVE_NAKS:
            self.executions.fail_rejected(nak, now)
        elif self.executions.refused(nak, self.config.max_retries, now):
            self.stats.protocol_errors += 1
        self._restart_session(f"firmware refused frame {nak.seq}: {nak.reason.name}", now)

    def _on_status(self, status: Status, now: float) -> None:
        self.last_status = status
        if self._boot_id is not None and status.boot_id != self._boot_id:
            self._restart_session("firmware boot id changed (reset)", now)
            return
        if self.session_open:
            self.fw.note_started(status.started_upto)
            self.fw.state, self.fw.error = status.state, status.error
            self.executions.advance(status.last_executed, now, confirmed=True)
            if self.executions.denied_by(status, self._rx_seq, now):
                self.stats.protocol_errors += 1
            if self.fw.stopped:
                if status.error is not ErrorCode.WATCHDOG:
                    self.executions.fail_for_state(
                        status.state, status.error, status.error_motor, status, now
                    )
                elif not self._commands.clearing:
                    self._restart_session("firmware stopped by its watchdog", now)
        for waiter_id in self._waiters.matched(status):
            self._out.append(WaiterDone(waiter_id, status, None))
        self._pump(now)

    def _on_violation(self, violation: Violation, now: float, *, taken: bool = False) -> None:
        """A report that cannot be true: count and log it; if it is about move counters, the
        running execution can no longer trust them and fails. ``taken``: the report is acted
        on all the same (an IDENT: the firmware goes on from its counters)."""
        self.guard.reject(str(violation), now, taken=taken)
        if violation.counter:
            self.executions.fail_contradiction(
                violation.field, violation.value, violation.why, self.fw.executed, now
            )

    def _await_confirmation(self, now: float) -> None:
        """Every move is reported executed: ask the firmware's STATUS to confirm it at once."""
        if self.executions.await_status(self._rx_seq, now + 2 * self.config.ack_timeout_s):
            self._send_realtime(StatusRequest(), now)

    def _on_error_report(self, report: ErrorReport) -> None:
        self.last_error_report = report
        motor = Face(report.motor).name if report.motor < len(Face) else "-"
        logger.warning(
            "%s: firmware error %s (motor %s, move %d)",
            self.port,
            report.code.name,
            motor,
            report.move_index,
        )

    def _op_done(self, op: Op, error: LinkError | None) -> None:
        if error is None and isinstance(op.message, Clear) and self.fw.stopped:
            self.fw.state, self.fw.error = FirmwareState.IDLE, ErrorCode.NONE
        end = self._commands.done(op, error)
        if end is not None:
            self._out.append(end)
