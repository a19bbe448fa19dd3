"""The running execution of a link, and how the firmware's reports end it. Pure: turns counter
updates, resets and failures into :class:`MovesExecuted` and :class:`ExecutionEnded` actions."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from firmware_protocol.errors import (
    ExecutionEndedError,
    ExecutionError,
    ExecutionLinkError,
    LinkBusyError,
    LinkError,
    ResetNotAcknowledgedError,
)
from firmware_protocol.link import failures
from firmware_protocol.link.accounting import ExecutionState, FirmwareCounters
from firmware_protocol.link.actions import Action, ExecutionEnded, MovesExecuted
from firmware_protocol.link.data import ExecutionReport
from firmware_protocol.link.window import seq_le
from firmware_protocol.messages import ErrorCode, FirmwareState, Ident, Nak, Status
from firmware_protocol.moves import Move, validate_moves

__all__ = ["ExecutionTracker"]

logger = logging.getLogger(__name__)


class ExecutionTracker:
    """One execution at a time; ``reset_pending`` (the report of an execution a firmware reset
    interrupted) blocks the next until acknowledged. Actions go to ``out``."""

    def __init__(self, port: str, fw: FirmwareCounters, out: list[Action]) -> None:
        self.port = port
        self.fw = fw
        self.current: ExecutionState | None = None
        self.reset_pending: ExecutionReport | None = None
        #: MOVES frames refused in a row with a reason a new session should cure (no ACK since:
        #: the core sets it back to 0 on an ACK)
        self.refusals = 0
        self._out = out

    @property
    def busy(self) -> bool:
        return self.current is not None and not self.current.done

    def start(self, moves: Sequence[Move], motor_count: int, now: float) -> ExecutionState:
        """A new execution (raises, sending nothing, if one may not start now)."""
        if self.current is not None and not self.current.done:
            raise LinkBusyError(
                f"{self.port}: an execution of {len(self.current.moves)} moves is still "
                "running; wait for it before starting another",
                self.port,
            )
        if self.reset_pending is not None:
            raise ResetNotAcknowledgedError(
                f"{self.port}: the firmware reset during the last execution "
                f"({self.reset_pending.summary()}); re-scan or reconcile the cube, run "
                "`cuberobot home`, then acknowledge the reset",
                self.port,
            )
        validate_moves(moves, motor_count)
        execution = ExecutionState(moves)
        if self.fw.stopped and self.fw.error is not ErrorCode.WATCHDOG:
            report = ExecutionReport(
                execution.moves, (), not_executed=execution.planned(range(len(moves)))
            )
            raise failures.refused_while_stopped(self.port, self.fw.state, self.fw.error, report)
        self._check_indices(self.fw.last_received + 1, len(moves))
        self.current = execution
        self.refusals = 0
        if not moves:
            self._finish(execution, None, now)
        return execution

    def extend(self, moves: Sequence[Move], motor_count: int) -> ExecutionState:
        """Append ``moves`` to the running execution (raises, sending nothing, if none runs)."""
        execution = self.current
        if execution is None or execution.done:
            raise ExecutionEndedError(
                f"{self.port}: no execution is running to extend (the last one ended); start a "
                "new execution with these moves",
                self.port,
            )
        validate_moves(moves, motor_count)
        base = execution.base if execution.base is not None else self.fw.last_received + 1
        self._check_indices(base, len(execution.moves) + len(moves), extra=len(moves))
        execution.extend(moves)
        return execution

    def _check_indices(self, first: int, count: int, extra: int | None = None) -> None:
        """Raise :class:`MoveIndexError` if ``count`` moves from index ``first`` on would pass
        the last move index (``extra``: how many of them are new, for the message)."""
        if count and first + count - 1 > failures.MAX_MOVE_INDEX:
            new = count if extra is None else extra
            raise failures.indices_exhausted(self.port, first - 1 + count - new, new)

    def fail_exhausted(self, now: float) -> None:
        """The running execution's indices, fixed only now (the firmware's counters moved on
        since :meth:`start`), would pass the last move index: it fails, nothing of it sent."""
        execution = self.current
        if execution is None or execution.done:
            return
        cause = failures.indices_exhausted(self.port, self.fw.last_received, len(execution.moves))
        report = ExecutionReport(
            execution.moves, (), not_executed=execution.planned(range(len(execution.moves)))
        )
        error = ExecutionError(str(cause), self.port, report)
        error.__cause__ = cause
        logger.error("%s", error)
        self._finish(execution, error, now)

    def acknowledge_reset(self) -> None:
        if self.reset_pending is not None:
            logger.info("%s: firmware reset acknowledged", self.port)
        self.reset_pending = None

    @property
    def awaiting(self) -> ExecutionState | None:
        """The running execution, if every move of it is reported and it awaits a STATUS."""
        execution = self.current
        if execution is None or execution.done or execution.base is None:
            return None
        return execution if execution.all_reported else None

    def advance(self, last_executed: int, now: float, *, confirmed: bool = False) -> None:
        """The firmware says moves up to index ``last_executed`` have executed: report what
        this newly covers of the running execution. ``confirmed``: the report is a state
        snapshot (STATUS, IDENT), which alone may end the execution."""
        self.fw.note_executed(last_executed)
        execution = self.current
        if execution is None or execution.base is None:
            return
        if execution.done:
            self._log_late(execution, last_executed)
            return
        events = execution.advance(last_executed, now)
        if events:
            self._out.append(MovesExecuted(execution, tuple(events)))
        if confirmed and execution.all_reported and last_executed >= execution.last_index:
            logger.debug("%s: execution of %d moves complete", self.port, len(execution.moves))
            self._finish(execution, None, now)

    def on_reset(self, ident: Ident, old_boot: int, now: float) -> bool:
        """The firmware rebooted (IDENT with a new boot id); whether it interrupted an
        execution (which then fails with :class:`FirmwareResetError`)."""
        # counters that came back at zero behind what was reported, or that the firmware says
        # started at zero (v2 boot_flags: its memory held none): the memory was lost, so
        # nothing says which of the moves sent since the last report ran (without the flag a
        # loss before any report looks like intact counters with nothing started)
        lost = (
            ident.last_executed == 0
            and ident.started_upto == 0
            and (self.fw.executed > 0 or ident.counters_lost)
        )
        if ident.last_executed < self.fw.executed:
            logger.error(
                "%s: firmware move counters went back from %d to %d across a reset: its "
                "non-volatile memory was lost, or a report was false (the daemon believes "
                "the counters unless they came back at zero)",
                self.port,
                self.fw.executed,
                ident.last_executed,
            )
        self.advance(ident.last_executed, now, confirmed=True)
        execution = self.current
        if execution is None or execution.done:
            logger.warning(
                "%s: firmware reset (boot %08x → %08x) with no execution running",
                self.port,
                old_boot,
                ident.boot_id,
            )
            return False
        report = execution.report(started_upto=ident.started_upto, sent_unknown=lost)
        error = failures.reset_during(self.port, old_boot, ident.boot_id, report)
        logger.warning("%s", error)
        self.reset_pending = report
        self._finish(execution, error, now)
        return True

    def fail_for_state(
        self, state: FirmwareState, error: ErrorCode, motor: int, source: Status | Ident, now: float
    ) -> None:
        """The firmware latched STOPPED or FAULT (e-stop, stall, ...)."""
        execution = self.current
        if execution is None or execution.done:
            return
        report = execution.report(started_upto=source.started_upto)
        err = failures.stopped(self.port, state, error, motor, report)
        logger.warning("%s", err)
        self._finish(execution, err, now)

    def rebase(self, last_received: int) -> None:
        """A new session's IDENT says the firmware received moves up to ``last_received``:
        if none of the running execution's moves reached it, index them from its count."""
        execution = self.current
        if execution is None or execution.done or execution.base is None:
            return
        if last_received < execution.base:
            execution.base = last_received + 1

    def refused(self, nak: Nak, limit: int, now: float) -> bool:
        """Moves refused with a reason the new session should cure (its IDENT says where to
        go on, or that the firmware is stopped). Refused ``limit`` times in a row, each time
        after an IDENT that said they would be taken, the firmware contradicts itself (the
        host re-opened the session ~30 times a second for ever): the execution fails
        (``True``). BUSY while the firmware says it homes is waited out."""
        if self.fw.state is FirmwareState.HOMING:  # it said so: wait
            return False
        self.refusals += 1
        if self.refusals < limit:
            return False
        self.fail_contradiction(
            "detail",
            nak.detail,
            f"of NAK {nak.reason.name}: the firmware refused the moves {self.refusals} times "
            "in a row, each time after the IDENT of a new session said it would take them",
            self.fw.executed,
            now,
        )
        return True

    def fail_rejected(self, nak: Nak, now: float) -> None:
        """The firmware refused moves for good."""
        execution = self.current
        if execution is None or execution.done:
            return
        report = execution.report(started_upto=self.fw.started)
        self._finish(execution, failures.rejected(self.port, nak, report), now)

    def await_status(self, rx_seq: int, poll_at: float) -> bool:
        """The report with firmware SEQ ``rx_seq`` was handled: whether it just completed the
        running execution's reports (then a STATUS must confirm it; ask at once)."""
        awaiting = self.awaiting
        if awaiting is None or awaiting.confirm_after_seq is not None:
            return False
        awaiting.confirm_after_seq = rx_seq
        awaiting.confirm_poll_at = poll_at
        return True

    def denied_by(self, status: Status, rx_seq: int, now: float) -> bool:
        """A STATUS (firmware SEQ ``rx_seq``) did not confirm the awaiting execution: if the
        firmware sent it after the report that completed the execution, it contradicts that
        report and the execution fails (``True``)."""
        awaiting = self.awaiting
        if awaiting is None or awaiting.confirm_after_seq is None:
            return False
        if seq_le(rx_seq, awaiting.confirm_after_seq):
            return False  # sent before that report (late on the line): no evidence either way
        self.fail_contradiction(
            "last_executed",
            status.last_executed,
            f"in a STATUS sent after an EXECUTED reported move {awaiting.last_index} executed",
            status.last_executed,
            now,
        )
        return True

    def fail_contradiction(
        self, field: str, value: int, why: str, trusted: int, now: float
    ) -> None:
        """A report contradicts what the host sent or what the firmware said: the moves past
        index ``trusted`` that were sent have an unknown fate."""
        execution = self.current
        if execution is None or execution.done:
            return
        report = execution.contradicted(trusted)
        err = failures.contradiction(self.port, field, value, why, report)
        logger.error("%s", err)
        self._finish(execution, err, now)

    def fail_link(self, cause: LinkError, now: float) -> None:
        """The link failed or was closed: sent moves not reported executed are unknown."""
        execution = self.current
        if execution is None or execution.done:
            return
        report = execution.report(started_upto=self.fw.started, sent_unknown=True)
        self._finish(execution, failures.link_failure(self.port, cause, report), now)

    def _finish(self, execution: ExecutionState, error: ExecutionError | None, now: float) -> None:
        if execution.finish(error, now):
            self._out.append(ExecutionEnded(execution, error))

    def _log_late(self, execution: ExecutionState, last_executed: int) -> None:
        reported = execution.last_index - len(execution.moves) + len(execution.events)
        if execution.error is None or reported >= min(last_executed, execution.last_index):
            return
        logger.log(
            logging.INFO if isinstance(execution.error, ExecutionLinkError) else logging.ERROR,
            "%s: firmware reports moves up to index %d executed after the execution ended at "
            "index %d (%s); reconcile the journal with the firmware's counters",
            self.port,
            last_executed,
            reported,
            type(execution.error).__name__,
        )
