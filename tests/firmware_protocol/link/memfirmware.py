"""An in-memory firmware and wire for driving :class:`LinkCore` without any I/O.

:class:`MemoryFirmware` follows ``PROTOCOL.md`` for what the link's reliability rests on —
sessions by HELLO nonce, sequenced frames (ACK, NAK SEQ_GAP, duplicates re-ACKed), move indices
accepted only in order, a finite queue, cumulative EXECUTED reports — and nothing else (no
motors, timing, watchdog or faults of its own). One queued move executes per :meth:`step`.

:class:`Wire` carries whole frames both ways; a test loses, duplicates and reorders them.
:class:`Driver` runs a core against the firmware over the wire on a simulated clock and checks
the invariants after every action.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from firmware_protocol.codec import FrameDecoder
from firmware_protocol.errors import CorruptFrame
from firmware_protocol.link.accounting import ExecutionState
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
from firmware_protocol.link.data import LinkConfig, MoveExecuted
from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    Clear,
    Enable,
    ErrorCode,
    EStop,
    Executed,
    FirmwareState,
    Heartbeat,
    Hello,
    Home,
    Ident,
    Message,
    Moves,
    Nak,
    NakReason,
    Status,
    StatusFlags,
    StatusRequest,
    WireMove,
    encode_message,
    parse_message,
)
from firmware_protocol.moves import Move

SEQ_MASK = 0xFFFF


class MemoryFirmware:
    """The firmware side, pure. ``executed_log`` lists every move it executed, in order."""

    def __init__(self, *, queue_depth: int = 4, max_batch: int = 8, boot_id: int = 0xB007) -> None:
        self.queue_depth = queue_depth
        self.max_batch = max_batch
        self.boot_id = boot_id
        self.nonce: int | None = None
        self.expected_seq = 0
        self.last_received = 0
        self.started = 0
        self.executed = 0
        self.state = FirmwareState.IDLE
        self.error = ErrorCode.NONE
        self.queue: deque[WireMove] = deque()
        self.executed_log: list[WireMove] = []
        self._decoder = FrameDecoder()
        self._tx_seq = 0

    def receive(self, data: bytes) -> list[bytes]:
        """Bytes from the host; the frames to send back."""
        out: list[bytes] = []
        for item in self._decoder.feed(data):
            if not isinstance(item, CorruptFrame):
                out += self._on(parse_message(item), item.seq)
        return out

    def step(self) -> list[bytes]:
        """Execute the next queued move (if any)."""
        if not self.queue:
            return []
        move = self.queue.popleft()
        self.started = self.executed = move.index
        self.executed_log.append(move)
        if not self.queue and self.state is FirmwareState.RUNNING:
            self.state = FirmwareState.IDLE
        return [self._send(Executed(self.executed, self.started, self._queue_free()))]

    def reboot(self) -> None:
        """A reset: the session and the queue are lost, the counters survive."""
        self.boot_id += 1
        self.nonce = None
        self.queue.clear()
        self.last_received = self.started = self.executed

    def estop(self) -> None:
        self.queue.clear()
        self.last_received = self.started
        self.state, self.error = FirmwareState.STOPPED, ErrorCode.ESTOP

    def _send(self, message: Message) -> bytes:
        data = encode_message(message, self._tx_seq)
        self._tx_seq = (self._tx_seq + 1) & SEQ_MASK
        return data

    def _queue_free(self) -> int:
        return self.queue_depth - len(self.queue)

    def _on(self, message: Message, seq: int) -> list[bytes]:
        match message:
            case Hello():
                if self.nonce != message.nonce:
                    self.nonce = message.nonce
                    self.expected_seq = (seq + 1) & SEQ_MASK
                return [self._send(self._ident(message.nonce))]
            case Moves() | Home() | Enable() | Clear():
                return self._sequenced(seq, message)
            case StatusRequest():
                return [self._send(self.status())]
            case EStop():
                self.estop()
                return [self._send(self.status())]
            case Heartbeat() if self.nonce is None:
                return [self._send(Nak(0, NakReason.NO_SESSION))]
            case _:
                return []

    def _sequenced(self, seq: int, message: Message) -> list[bytes]:
        if self.nonce is None:
            return [self._send(Nak(seq, NakReason.NO_SESSION))]
        distance = (seq - self.expected_seq) & SEQ_MASK
        if distance >= 0x8000:  # a duplicate or a retransmission
            return [self._send(self._ack((self.expected_seq - 1) & SEQ_MASK))]
        if distance > 0:
            return [self._send(Nak(self.expected_seq, NakReason.SEQ_GAP))]
        refused = self._accept(message)
        if refused is not None:
            return [self._send(Nak(seq, *refused))]
        self.expected_seq = (seq + 1) & SEQ_MASK
        return [self._send(self._ack(seq))]

    def _accept(self, message: Message) -> tuple[NakReason, int] | None:
        if isinstance(message, Clear | Home):
            self.state, self.error = FirmwareState.IDLE, ErrorCode.NONE
            return None
        if not isinstance(message, Moves):
            return None
        if self.state is FirmwareState.STOPPED:
            return NakReason.STOPPED, int(self.error)
        new = [m for m in message.moves if m.index > self.last_received]
        if not new:
            return None
        if new[0].index != self.last_received + 1:
            return NakReason.MOVE_GAP, self.last_received + 1
        if len(new) > self._queue_free():
            return NakReason.QUEUE_FULL, self._queue_free()
        self.queue.extend(new)
        self.last_received = new[-1].index
        self.state = FirmwareState.RUNNING
        return None

    def _ack(self, seq: int) -> Ack:
        return Ack(seq, self.last_received, self._queue_free())

    def _ident(self, nonce: int) -> Ident:
        return Ident(
            nonce=nonce,
            protocol_version=PROTOCOL_VERSION,
            firmware_version=(1, 0, 0),
            motor_count=6,
            queue_depth=self.queue_depth,
            max_batch=self.max_batch,
            watchdog_ms=1000,
            boot_id=self.boot_id,
            last_received=self.last_received,
            started_upto=self.started,
            last_executed=self.executed,
            state=self.state,
            error=self.error,
        )

    def status(self) -> Status:
        return Status(
            boot_id=self.boot_id,
            state=self.state,
            error=self.error,
            error_motor=0xFF,
            flags=StatusFlags.HOMED | StatusFlags.SESSION,
            enabled_mask=0x3F,
            queue_free=self._queue_free(),
            expected_seq=self.expected_seq,
            last_received=self.last_received,
            started_upto=self.started,
            last_executed=self.executed,
            uptime_ms=0,
        )


@dataclass
class Wire:
    """Frames in flight, each direction in order unless a test disturbs it."""

    to_firmware: list[bytes] = field(default_factory=list)
    to_host: list[bytes] = field(default_factory=list)

    def lane(self, towards_host: bool) -> list[bytes]:
        return self.to_host if towards_host else self.to_firmware

    def disturb(self, choice: int) -> None:
        """Lose (0), duplicate (1) or swap with the next (2) the first frame of one lane;
        3 and above leave the wire alone. Bit 7 picks the lane (set: towards the host)."""
        lane = self.lane(bool(choice & 0x80))
        kind = (choice & 0x7F) % 6
        if not lane or kind >= 3:
            return
        if kind == 0:
            lane.pop(0)
        elif kind == 1:
            lane.insert(0, lane[0])
        elif len(lane) > 1:
            lane[0], lane[1] = lane[1], lane[0]


#: A link tuned for the simulated clock: small window, quick retransmissions.
CONFIG = LinkConfig(window_frames=3, batch_moves=3, ack_timeout_s=0.03, max_backoff_s=0.2)
TICK_S = 0.01


@dataclass
class Driver:
    """A core, a firmware and the wire between them, on a simulated clock. Every action is
    checked against the invariants as it happens."""

    firmware: MemoryFirmware
    config: LinkConfig = CONFIG
    seed: int = 0
    now: float = 0.0
    wire: Wire = field(default_factory=Wire)
    events: list[MoveExecuted] = field(default_factory=list)
    ended: list[ExecutionEnded] = field(default_factory=list)
    settled: dict[int, OpDone | WaiterDone] = field(default_factory=dict)
    sessions: int = 0
    max_window: int = 0

    def __post_init__(self) -> None:
        self.core = LinkCore("mem0", self.config, random.Random(self.seed))
        self._decoder = FrameDecoder()
        self.apply(self.core.connection_made(self.now))

    def apply(self, actions: Sequence[Action]) -> None:
        for action in actions:
            match action:
                case Write():
                    self.wire.to_firmware.append(action.data)
                case MovesExecuted():
                    self.events.extend(action.events)
                    # the host never reports a move the firmware has not executed
                    assert self.events[-1].index <= self.firmware.executed
                case ExecutionEnded():
                    self.ended.append(action)
                case OpDone():
                    self.settled[action.op_id] = action
                case WaiterDone():
                    self.settled[action.waiter_id] = action
                case SessionOpened():
                    self.sessions += 1
                case HandshakeFailed():  # the facade closes and re-opens the port
                    self.apply(self.core.connection_lost())
                    self.apply(self.core.connection_made(self.now))
                case Fatal():
                    raise AssertionError(f"unexpected fatal error {action.error}")
            self.max_window = max(self.max_window, len(self.core.window))
            assert len(self.core.window) <= self.config.window_frames

    def step(self, disturbance: int | None = None, *, execute: bool = True) -> None:
        """One tick: maybe disturb the wire, deliver one frame each way, run a move."""
        if disturbance is not None:
            self.wire.disturb(disturbance)
        if self.wire.to_firmware:
            self.wire.to_host += self.firmware.receive(self.wire.to_firmware.pop(0))
        if self.wire.to_host:
            for item in self._decoder.feed(self.wire.to_host.pop(0)):
                self.apply(self.core.receive(item, self.now))
        if execute:
            self.wire.to_host += self.firmware.step()
        self.now += TICK_S
        self.apply(self.core.tick(self.now))

    def run_until(self, done: Callable[[], bool], limit: int = 5000) -> None:
        """Step without disturbances until ``done()`` is true (at most ``limit`` steps)."""
        for _ in range(limit):
            if done():
                return
            self.step()
        raise AssertionError(f"not done after {limit} steps")

    def open(self) -> None:
        self.run_until(lambda: self.core.session_open)

    def execute(self, moves: Sequence[Move]) -> ExecutionState:
        state, actions = self.core.execute(moves, self.now)
        self.apply(actions)
        return state
