"""What the sans-IO core (:class:`~firmware_protocol.link.core.LinkCore`) asks its driver to do.

Every call into the core returns a list of these, in order. The driver (the asyncio facade, or a
test) writes the bytes of :class:`Write` to the port and delivers the rest to whoever waits.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware_protocol.errors import ExecutionError, LinkError
from firmware_protocol.link.accounting import ExecutionState
from firmware_protocol.link.data import FirmwareInfo, MoveExecuted
from firmware_protocol.messages import Status

__all__ = [
    "Action",
    "ExecutionEnded",
    "Fatal",
    "HandshakeFailed",
    "MovesExecuted",
    "OpDone",
    "SessionOpened",
    "WaiterDone",
    "Write",
]


@dataclass(frozen=True, slots=True)
class Write:
    """Write ``data`` (one or more encoded frames) to the port."""

    data: bytes


@dataclass(frozen=True, slots=True)
class SessionOpened:
    """A session is open (after every successful HELLO/IDENT); ``stop_sent``: the emergency
    stop owed since the port went down went out first (the owner repeats it until confirmed)."""

    info: FirmwareInfo
    stop_sent: bool = False


@dataclass(frozen=True, slots=True)
class HandshakeFailed:
    """No IDENT after every HELLO: close the port and open it again."""

    reason: str


@dataclass(frozen=True, slots=True)
class Fatal:
    """The link cannot work with this firmware (protocol version): fail everything."""

    error: LinkError


@dataclass(frozen=True, slots=True)
class MovesExecuted:
    """Moves of ``execution`` the firmware executed, in order, each reported once."""

    execution: ExecutionState
    events: tuple[MoveExecuted, ...]


@dataclass(frozen=True, slots=True)
class ExecutionEnded:
    """``execution`` ended: every move executed (``error`` is ``None``) or ``error``."""

    execution: ExecutionState
    error: ExecutionError | None


@dataclass(frozen=True, slots=True)
class OpDone:
    """The command ``op_id`` (HOME, ENABLE) was acknowledged, or failed with ``error``."""

    op_id: int
    error: LinkError | None


@dataclass(frozen=True, slots=True)
class WaiterDone:
    """The status waiter ``waiter_id`` got ``status``, or failed with ``error``."""

    waiter_id: int
    status: Status | None
    error: LinkError | None


Action = (
    Write
    | SessionOpened
    | HandshakeFailed
    | Fatal
    | MovesExecuted
    | ExecutionEnded
    | OpDone
    | WaiterDone
)
