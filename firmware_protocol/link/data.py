"""What the link says to its owner: its configuration, the firmware's identity, executed moves,
execution reports and counters. Pure data: no asyncio, no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from firmware_protocol.messages import MAX_MOVES_PER_FRAME, ErrorCode, FirmwareState, Ident
from firmware_protocol.moves import Move, format_moves

__all__ = [
    "ExecutionReport",
    "FirmwareInfo",
    "LinkConfig",
    "LinkStats",
    "MoveExecuted",
    "PlannedMove",
]


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """Timing and sizing of the link. Durations in seconds unless the name says otherwise."""

    baudrate: int = 115200
    #: Retransmission timeout of the oldest unacknowledged frame, before back-off; the time the
    #: window's bytes take on the wire at ``baudrate`` is added.
    ack_timeout_s: float = 0.08
    max_backoff_s: float = 1.0
    #: Retransmissions of one frame before the session is re-opened with HELLO; also MOVES
    #: frames refused in a row (STOPPED, MOVE_GAP, BUSY, each after a new session) before the
    #: execution fails as a contradiction.
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
    #: this boot's counters started at zero, the memory holding none (v2; False from v1)
    counters_lost: bool = False

    @classmethod
    def from_ident(cls, port: str, ident: Ident) -> FirmwareInfo:
        return cls(
            port=port,
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
            counters_lost=ident.counters_lost,
        )


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
    #: reports that passed the CRC but could not be true (unknown type, impossible value,
    #: a counter past what the host sent): counted, logged, never acted on
    protocol_errors: int = 0
    #: counters that went backwards within a boot (late or replayed reports): ignored
    stale_reports: int = 0
    #: smoothed round trip of a sequenced frame to its ACK (seconds; ``None`` before the first
    #: ACK of a frame sent once) and its mean deviation, as TCP keeps them (RFC 6298; frames
    #: that were retransmitted are not sampled)
    ack_rtt_s: float | None = None
    ack_rtt_var_s: float = 0.0

    def note_rtt(self, sample_s: float) -> None:
        """Take one round-trip sample into :attr:`ack_rtt_s` and :attr:`ack_rtt_var_s`."""
        if self.ack_rtt_s is None:
            self.ack_rtt_s, self.ack_rtt_var_s = sample_s, sample_s / 2
            return
        self.ack_rtt_var_s = 0.75 * self.ack_rtt_var_s + 0.25 * abs(self.ack_rtt_s - sample_s)
        self.ack_rtt_s = 0.875 * self.ack_rtt_s + 0.125 * sample_s
