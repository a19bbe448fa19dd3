"""The running execution of a link, and how the firmware's reports end it. Pure: turns counter
updates, resets and failures into :class:`MovesExecuted` and :class:`ExecutionEnded` actions."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from firmware_protocol.errors import (
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
        self.current = execution
        if not moves:
            self._finish(execution, None, now)
        return execution

    def acknowledge_reset(self) -> None:
        if self.reset_pending is not None:
            logger.info("%s: firmware reset acknowledged", self.port)
        self.reset_pending = None

    def advance(self, last_executed: int, now: float) -> None:
        """The firmware says moves up to index ``last_executed`` have executed: report what
        this newly covers of the running execution."""
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
        if execution.done:
            logger.debug("%s: execution of %d moves complete", self.port, len(execution.moves))
            self._out.append(ExecutionEnded(execution, None))

    def on_reset(self, ident: Ident, old_boot: int, now: float) -> bool:
        """The firmware rebooted (IDENT with a new boot id); whether it interrupted an
        execution (which then fails with :class:`FirmwareResetError`)."""
        if ident.last_executed < self.fw.executed:
            logger.error(
                "%s: firmware move counters went back from %d to %d across a reset "
                "(non-volatile memory lost); executed moves are known only from reports",
                self.port,
                self.fw.executed,
                ident.last_executed,
            )
        self.advance(ident.last_executed, now)
        execution = self.current
        if execution is None or execution.done:
            logger.warning(
                "%s: firmware reset while idle (boot %08x → %08x); nothing was in flight",
                self.port,
                old_boot,
                ident.boot_id,
            )
            return False
        report = execution.report(started_upto=ident.started_upto)
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

    def fail_rejected(self, nak: Nak, now: float) -> None:
        """The firmware refused moves for good."""
        execution = self.current
        if execution is None or execution.done:
            return
        report = execution.report(started_upto=self.fw.started)
        self._finish(execution, failures.rejected(self.port, nak, report), now)

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
