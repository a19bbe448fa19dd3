"""The sliding window of sequenced frames: sequence numbers, cumulative and implicit ACKs,
retransmission deadlines with exponential back-off (go-back-N). Pure: time is an argument.

A sequenced frame (HELLO, MOVES, HOME, ENABLE, CLEAR) takes the next 16-bit sequence number and
stays in the window until the firmware acknowledges it (ACK ``seq`` acknowledges every frame up
to ``seq``; NAK CORRUPT / SEQ_GAP ``seq`` acknowledges every frame before ``seq``). The oldest
frame's retransmission deadline is ``sent_at + rto(retries)``; when it passes, that frame and
every later one are sent again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from firmware_protocol.codec import BITS_PER_BYTE, MAX_SEQ
from firmware_protocol.link.data import LinkConfig
from firmware_protocol.messages import Message, encode_message

__all__ = ["Op", "Outgoing", "SendWindow", "seq_le"]

_HALF_SEQ_SPACE = (MAX_SEQ + 1) // 2
#: Extra wait before a NAK may trigger a retransmission of a frame just sent (seconds).
_NAK_HOLDOFF_MARGIN_S = 0.01


def seq_le(a: int, b: int) -> bool:
    """``a`` ≤ ``b`` in 16-bit serial-number arithmetic."""
    return ((b - a) & MAX_SEQ) < _HALF_SEQ_SPACE


@dataclass(eq=False)
class Op:
    """A sequenced non-move command (HOME, ENABLE, CLEAR): ``op_id`` names it in the
    :class:`~firmware_protocol.link.actions.OpDone` that ends it; ``deadline`` is when it
    fails for want of an ACK (``None``: never, for the link's own CLEAR)."""

    op_id: int
    message: Message
    deadline: float | None


@dataclass
class Outgoing:
    """A sequenced frame in flight."""

    seq: int
    data: bytes
    sent_at: float
    op: Op | None = None
    retries: int = 0


class SendWindow:
    """The frames sent and not yet acknowledged, oldest first."""

    def __init__(self, config: LinkConfig, first_seq: int) -> None:
        self.config = config
        self._next_seq = first_seq & MAX_SEQ
        self._frames: OrderedDict[int, Outgoing] = OrderedDict()

    def __len__(self) -> int:
        return len(self._frames)

    def __iter__(self) -> Iterator[Outgoing]:
        return iter(self._frames.values())

    @property
    def full(self) -> bool:
        return len(self._frames) >= self.config.window_frames

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def take_seq(self) -> int:
        """Allocate a sequence number for a frame the window does not track (HELLO)."""
        seq = self._next_seq
        self._next_seq = (seq + 1) & MAX_SEQ
        return seq

    def push(self, message: Message, now: float, op: Op | None = None) -> Outgoing:
        """Number ``message``, keep it until acknowledged, return it (its ``data`` to write)."""
        seq = self.take_seq()
        out = Outgoing(seq=seq, data=encode_message(message, seq), sent_at=now, op=op)
        self._frames[seq] = out
        return out

    def get(self, seq: int) -> Outgoing | None:
        return self._frames.get(seq)

    def clear(self) -> None:
        self._frames.clear()

    def acknowledge(self, upto: int) -> list[Outgoing]:
        """ACK ``upto``: drop and return every frame up to and including ``upto``."""
        return self._pop_while(lambda seq: seq_le(seq, upto))

    def acknowledge_before(self, seq: int) -> list[Outgoing]:
        """NAK ``seq`` (CORRUPT, SEQ_GAP): every frame before ``seq`` arrived."""
        before = (seq - 1) & MAX_SEQ
        return self._pop_while(lambda s: s != seq and seq_le(s, before))

    def _pop_while(self, arrived: Callable[[int], bool]) -> list[Outgoing]:
        done: list[Outgoing] = []
        for seq in list(self._frames):
            if not arrived(seq):
                break
            done.append(self._frames.pop(seq))
        return done

    def rto(self, retries: int) -> float:
        """Retransmission timeout after ``retries`` retransmissions: the back-off plus twice the
        time the window's bytes take on the wire."""
        cfg = self.config
        wire_bytes = sum(len(o.data) for o in self._frames.values())
        backoff = min(cfg.ack_timeout_s * (2.0**retries), cfg.max_backoff_s)
        return backoff + 2 * wire_bytes * BITS_PER_BYTE / cfg.baudrate

    def deadline(self) -> float | None:
        """When the oldest frame times out (``None``: nothing in flight)."""
        oldest = self.oldest()
        return None if oldest is None else oldest.sent_at + self.rto(oldest.retries)

    def oldest(self) -> Outgoing | None:
        return next(iter(self._frames.values()), None)

    def timed_out(self, now: float) -> Outgoing | None:
        """The oldest frame if its retransmission deadline has passed."""
        deadline = self.deadline()
        if deadline is None or now < deadline:
            return None
        return self.oldest()

    def nak_holdoff_over(self, out: Outgoing, now: float) -> bool:
        """Whether a NAK of ``out`` may trigger a retransmission: not if ``out`` was sent so
        recently that the NAK crossed it on the wire."""
        wire = len(out.data) * BITS_PER_BYTE / self.config.baudrate
        return now - out.sent_at >= 2 * wire + _NAK_HOLDOFF_MARGIN_S

    def retransmit_from(self, seq: int, now: float) -> list[bytes]:
        """Go-back-N: the frames from ``seq`` on, counted as retransmitted, to write again."""
        resend: list[bytes] = []
        for out in self._frames.values():
            if out.seq == seq or resend:
                out.retries += 1
                out.sent_at = now
                resend.append(out.data)
        return resend
