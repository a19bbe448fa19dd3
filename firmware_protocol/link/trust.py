"""Trust nothing from the line that the host did not send. Pure: time is an argument.

A frame with a valid CRC is not yet a true report: noise can pass a 16-bit CRC, a man in the
middle can forge one, and a confused firmware can send nonsense. :class:`LineGuard` checks every
firmware report against what the host knows before the core lets it change any state:

- a counter (``last_received``, ``started_upto``, ``last_executed``) above the highest move
  index the firmware can hold — the most the first IDENT (or, after a reset, the new boot's
  IDENT) announced, or the highest index the host has transmitted since — is a violation: the
  firmware cannot have moves the host never sent; so is such a counter in the IDENT answering
  a later HELLO (:meth:`LineGuard.announced`), of the same boot or after a reset;
- within one report, ``last_executed ≤ started_upto ≤ last_received`` must hold;
- a motor index past the motor count, queue space past the queue depth, an unknown type, an
  enum value that does not exist, or a host-direction type is a violation.

Violations are counted (:attr:`LinkStats.protocol_errors`) and logged at most once per
:data:`LOG_INTERVAL_S` (the rest at debug level, with a count); the core drops the report.
Counters that go backwards within a boot (late or replayed reports) are not violations: they are
counted as :attr:`LinkStats.stale_reports` and their counters ignored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from firmware_protocol.link.accounting import FirmwareCounters
from firmware_protocol.link.data import LinkStats
from firmware_protocol.messages import Ack, ErrorReport, Executed, Ident, Message, Nak, Status

__all__ = ["LOG_INTERVAL_S", "LineGuard", "Violation"]

logger = logging.getLogger(__name__)

#: At most one warning about protocol violations per this many seconds on one link.
LOG_INTERVAL_S = 5.0
_NO_MOTOR = 0xFF


@dataclass(frozen=True, slots=True)
class Violation:
    """Why a report cannot be true: the field, its value, and what it contradicts."""

    field: str
    value: int
    why: str

    @property
    def counter(self) -> bool:
        """A move counter lied (the running execution can no longer be trusted)."""
        return self.field in ("last_received", "started_upto", "last_executed")

    def __str__(self) -> str:
        return f"{self.field}={self.value} ({self.value:#x}) {self.why}"


class LineGuard:
    """The checks of one link (see the module docstring)."""

    def __init__(self, port: str, stats: LinkStats) -> None:
        self.port = port
        self.stats = stats
        #: the highest move index the firmware can hold; ``None`` before the first IDENT
        self.bound: int | None = None
        self.motor_count = 6
        self._logged_at: float | None = None
        self._suppressed = 0

    # === what the host knows ===================================================================

    def session_opened(self, ident: Ident, *, reset: bool = False) -> None:
        """A trusted IDENT (it answered our HELLO) announced the firmware's counters. After a
        ``reset`` (another boot) they are all it holds: a reset that lost them (back to 0)
        lowers the bound, so a report of a move the new boot never received is a violation."""
        held = max(ident.last_received, ident.started_upto)
        self.bound = held if reset else max(self.bound or 0, held)
        self.motor_count = ident.motor_count

    def announced(self, ident: Ident) -> Violation | None:
        """Why the counters of an IDENT answering a HELLO cannot be true: past the highest move
        index the firmware can hold, once an earlier session set it (a reset keeps the
        counters, never adds moves; the first IDENT may announce any, from an earlier host).
        Checked before the IDENT is taken; the session opens all the same."""
        return self._bounded("last_received", ident.last_received)

    def sent(self, last_index: int) -> None:
        """The host transmitted moves up to ``last_index``."""
        self.bound = max(self.bound or 0, last_index)

    # === checks ================================================================================

    def check(self, message: Message, fw: FirmwareCounters) -> Violation | None:
        """Why ``message`` cannot be true, or ``None``."""
        match message:
            case Ident():
                return _ordered(message.last_executed, message.started_upto, message.last_received)
            case Ack():
                return self._bounded("last_received", message.last_received) or self._room(
                    message.queue_free, fw
                )
            case Executed():
                return (
                    self._bounded("started_upto", message.started_upto)
                    or _ordered(message.last_executed, message.started_upto, None)
                    or self._room(message.queue_free, fw)
                )
            case Status():
                return (
                    self._bounded("last_received", message.last_received)
                    or _ordered(message.last_executed, message.started_upto, message.last_received)
                    or self._motor("error_motor", message.error_motor)
                    or self._room(message.queue_free, fw)
                )
            case ErrorReport():
                return self._motor("motor", message.motor) or self._bounded(
                    "move_index", message.move_index
                )
            case Nak():
                return None
            case _:
                return Violation("type", int(message.TYPE), "is a host → firmware message")

    def stale(self, message: Message, fw: FirmwareCounters) -> bool:
        """Whether ``message`` reports counters behind what the host already knows (counted)."""
        match message:
            case Executed() | Status():
                behind = message.last_executed < fw.executed or message.started_upto < fw.started
            case _:
                behind = False
        if behind:
            self.stats.stale_reports += 1
        return behind

    def _bounded(self, field: str, value: int) -> Violation | None:
        if self.bound is None or value <= self.bound:
            return None
        return Violation(
            field, value, f"is past move index {self.bound}, the highest the host has sent"
        )

    def _room(self, queue_free: int, fw: FirmwareCounters) -> Violation | None:
        if self.bound is None or queue_free <= fw.queue_depth:
            return None  # the queue depth is known from the first IDENT on
        return Violation("queue_free", queue_free, f"is past the queue depth {fw.queue_depth}")

    def _motor(self, field: str, motor: int) -> Violation | None:
        if motor == _NO_MOTOR or motor < self.motor_count:
            return None
        return Violation(field, motor, f"is not a motor (the firmware has {self.motor_count})")

    # === reporting =============================================================================

    def reject(self, what: str, now: float, *, taken: bool = False) -> None:
        """Count a protocol violation and log it (at most one warning per interval);
        ``taken``: the report is acted on all the same (an IDENT opening a session)."""
        self.stats.protocol_errors += 1
        due = self._logged_at is None or now - self._logged_at >= LOG_INTERVAL_S
        if not due:
            self._suppressed += 1
            logger.debug("%s: protocol violation from the firmware: %s", self.port, what)
            return
        more = f" ({self._suppressed} more since the last warning)" if self._suppressed else ""
        logger.warning(
            "%s: protocol violation from the firmware, %s: %s%s; %d so far",
            self.port,
            "its counters taken for the next moves" if taken else "report ignored",
            what,
            more,
            self.stats.protocol_errors,
        )
        self._logged_at = now
        self._suppressed = 0


def _ordered(executed: int, started: int, received: int | None) -> Violation | None:
    if executed > started:
        return Violation("last_executed", executed, f"is past started_upto={started}")
    if received is not None and started > received:
        return Violation("started_upto", started, f"is past last_received={received}")
    return None
