"""Execution accounting: what the firmware has received, started and executed, which moves of an
execution that covers, and the next MOVES frame to send. Pure: time is an argument.

Exactly-once rests on two facts: the firmware accepts move index ``n`` only right after
``n - 1``, and the host reports a move executed only when the firmware's cumulative
``last_executed`` passes its index (:meth:`ExecutionState.advance`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from firmware_protocol.codes import move_flags
from firmware_protocol.errors import ExecutionError
from firmware_protocol.link.data import ExecutionReport, MoveExecuted, PlannedMove
from firmware_protocol.messages import (
    MAX_MOVES_PER_FRAME,
    ErrorCode,
    FirmwareState,
    Ident,
    Moves,
    WireMove,
)
from firmware_protocol.moves import Move, groups

__all__ = ["ExecutionState", "FirmwareCounters", "next_moves_frame"]

#: The firmware's queue depth and batch size assumed until its IDENT says otherwise.
DEFAULT_QUEUE_DEPTH = 16
DEFAULT_MAX_BATCH = 8
STOPPED_STATES = (FirmwareState.STOPPED, FirmwareState.FAULT)


@dataclass
class FirmwareCounters:
    """What the host knows of the firmware's move counters and state (all cumulative)."""

    last_received: int = 0
    started: int = 0
    executed: int = 0
    state: FirmwareState = FirmwareState.IDLE
    error: ErrorCode = ErrorCode.NONE
    queue_depth: int = DEFAULT_QUEUE_DEPTH
    max_batch: int = DEFAULT_MAX_BATCH

    @property
    def stopped(self) -> bool:
        """Latched STOPPED or FAULT (the firmware refuses moves)."""
        return self.state in STOPPED_STATES

    @property
    def credit(self) -> int:
        """The highest move index the firmware's queue has room for."""
        return self.started + self.queue_depth

    def take_ident(self, ident: Ident) -> None:
        """Take an IDENT's counters and limits as they are: it answers our HELLO, so they are
        current (after a watchdog stop or e-stop ``last_received`` went back to
        ``started_upto``)."""
        self.queue_depth = ident.queue_depth
        self.max_batch = max(1, ident.max_batch)
        self.executed = ident.last_executed
        self.last_received = ident.last_received
        self.started = ident.started_upto
        self.state, self.error = ident.state, ident.error

    def note_started(self, started_upto: int) -> None:
        self.started = max(self.started, started_upto)
        self._received_at_least(self.started)

    def note_executed(self, last_executed: int) -> bool:
        """Take a cumulative ``last_executed``; whether it is news."""
        if last_executed <= self.executed:
            return False
        self.executed = last_executed
        self.note_started(last_executed)
        return True

    def _received_at_least(self, index: int) -> None:
        # A move that started was received, even if the ACK saying so was lost (a NAK's implicit
        # acknowledgement carries no counter). A lagging ``last_received`` would index the next
        # execution's moves below what the firmware holds: it would drop them as repeats and
        # its counters would then seem to report them executed.
        self.last_received = max(self.last_received, index)


class ExecutionState:
    """One ``execute()``: its moves, their firmware indices, what has been reported executed."""

    def __init__(self, moves: Sequence[Move]) -> None:
        self.moves: tuple[Move, ...] = tuple(moves)
        self.groups: list[tuple[int, int]] = groups(self.moves)
        self._group_starts = [lo for lo, _ in self.groups]
        self.base: int | None = None  # firmware index of moves[0], fixed once moves are sent
        self.events: list[MoveExecuted] = []
        self.error: ExecutionError | None = None
        self.sent_upto = -1  # highest position ever transmitted
        self.finished_at: float | None = None
        #: every move reported executed: the execution ends when a STATUS (or IDENT) confirms
        #: it; the firmware SEQ of the report that completed it, and when to ask STATUS again
        self.confirm_after_seq: int | None = None
        self.confirm_poll_at = 0.0

    @property
    def done(self) -> bool:
        return self.finished_at is not None

    def extend(self, moves: Sequence[Move]) -> None:
        """Append ``moves`` (whole groups) to the running execution: they get the firmware
        indices after the last move, and an execution that had every move reported (and was
        waiting for the STATUS that confirms it) is no longer complete."""
        self.moves += tuple(moves)
        self.groups = groups(self.moves)
        self._group_starts = [lo for lo, _ in self.groups]
        self.confirm_after_seq = None

    @property
    def all_reported(self) -> bool:
        """Every move has been reported executed (the execution may await confirmation)."""
        return len(self.events) == len(self.moves)

    @property
    def last_index(self) -> int:
        assert self.base is not None
        return self.base + len(self.moves) - 1

    def planned(self, positions: range) -> tuple[PlannedMove, ...]:
        base = self.base if self.base is not None else 0
        return tuple(PlannedMove(p, base + p, self.moves[p]) for p in positions)

    def groups_from(self, position: int) -> list[tuple[int, int]]:
        """The move groups from ``position`` on, at most as many as fit in one frame."""
        first = bisect.bisect_left(self._group_starts, position)
        return self.groups[first : first + MAX_MOVES_PER_FRAME]

    def advance(self, last_executed: int, now: float) -> list[MoveExecuted]:
        """The firmware executed every move up to index ``last_executed``: the events this newly
        covers (each exactly once, in order). The execution does not finish here: the tracker
        ends it once a STATUS confirms the last move."""
        if self.done or self.base is None:
            return []
        upto = min(last_executed - self.base, len(self.moves) - 1)
        new = [
            MoveExecuted(p, self.base + p, self.moves[p], now)
            for p in range(len(self.events), upto + 1)
        ]
        self.events.extend(new)
        return new

    def finish(self, error: ExecutionError | None, now: float) -> bool:
        """End the execution (once); whether this call ended it."""
        if self.done:
            return False
        self.error = error
        self.finished_at = now
        return True

    def report(self, *, started_upto: int, sent_unknown: bool = False) -> ExecutionReport:
        """Exactly what happened to the moves. ``started_upto`` is the firmware's counter;
        ``sent_unknown``: the link failed, so sent moves not reported executed are unknown."""
        n = len(self.moves)
        done = len(self.events)
        if self.base is None:
            return ExecutionReport(self.moves, (), not_executed=self.planned(range(n)))
        if sent_unknown:
            unknown_end = max(done, min(self.sent_upto + 1, n))
            return ExecutionReport(
                self.moves,
                tuple(self.events),
                unknown=self.planned(range(done, unknown_end)),
                not_executed=self.planned(range(unknown_end, n)),
            )
        started = max(done, min(started_upto - self.base + 1, n))
        return ExecutionReport(
            self.moves,
            tuple(self.events),
            interrupted=self.planned(range(done, started)),
            not_executed=self.planned(range(started, n)),
        )

    def contradicted(self, trusted: int) -> ExecutionReport:
        """The report after a contradiction: moves up to index ``trusted`` (what every report
        agrees on) executed, the rest of what was sent unknown, the others not executed."""
        if self.base is None:
            return self.report(started_upto=0)
        n = len(self.moves)
        known = [e for e in self.events if e.index <= trusted]
        unknown_end = max(len(self.events), min(self.sent_upto + 1, n))
        return ExecutionReport(
            self.moves,
            tuple(known),
            unknown=self.planned(range(len(known), unknown_end)),
            not_executed=self.planned(range(unknown_end, n)),
        )


def next_moves_frame(
    execution: ExecutionState, send_upto: int, counters: FirmwareCounters, batch: int
) -> Moves | None:
    """The next MOVES frame of ``execution`` (``None``: all sent, or no queue credit).

    Moves after index ``send_upto`` go in whole groups, at most ``batch`` moves a frame, within
    the firmware's queue credit. The first frame of an execution that starts on an idle firmware
    carries one group alone, so that the motors start after one short frame time.
    """
    assert execution.base is not None
    base = execution.base
    start = max(send_upto + 1, base)
    if start > execution.last_index:
        return None
    first_frame = start == base and counters.executed >= base - 1
    wire: list[WireMove] = []
    for lo, hi in execution.groups_from(start - base):
        if wire and (first_frame or len(wire) + (hi - lo) > batch):
            break
        if base + hi - 1 > counters.credit:
            break
        wire.extend(_wire_move(base + p, execution.moves[p]) for p in range(lo, hi))
    return Moves(tuple(wire)) if wire else None


def _wire_move(index: int, move: Move) -> WireMove:
    flags = move_flags(simultaneous_with_next=move.simultaneous_with_next, depth=move.depth)
    return WireMove(index, move.motor, move.quarter_turns, flags)
