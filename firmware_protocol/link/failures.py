"""The errors that end an execution, with operator messages naming the port, what happened to
the moves and the next action. Pure: builds exceptions, raises nothing."""

from __future__ import annotations

from firmware_protocol.errors import (
    EmergencyStopError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareContradictionError,
    FirmwareResetError,
    FirmwareStoppedError,
    LinkError,
    MotorFaultError,
    MoveIndexError,
)
from firmware_protocol.link.data import ExecutionReport
from firmware_protocol.messages import ErrorCode, FirmwareState, Nak, NakReason
from firmware_protocol.moves import Face

__all__ = [
    "MAX_MOVE_INDEX",
    "contradiction",
    "indices_exhausted",
    "link_failure",
    "nak_hint",
    "refused_while_stopped",
    "rejected",
    "reset_during",
    "stopped",
]

#: The last move index the protocol has (u32); index 0 means "no move".
MAX_MOVE_INDEX = 0xFFFF_FFFF
_MOTOR_ERRORS = (ErrorCode.STALL, ErrorCode.DRIVER_FAULT, ErrorCode.LIMIT)
_NAK_HINTS = {
    NakReason.BUSY: "wait until the moves in progress have finished",
    NakReason.STOPPED: "run `cuberobot home` to clear the stop",
    NakReason.BAD_MOVE: "a motor is disabled or does not exist, or the move grips more layers "
    "than this firmware's grippers hold; check the robot profile (its motors and max_depth)",
}


def nak_hint(reason: NakReason) -> str:
    """What the operator can do about a refused frame."""
    return _NAK_HINTS.get(reason, "this is a host/firmware mismatch; update both")


def reset_during(
    port: str, old_boot: int, new_boot: int, report: ExecutionReport
) -> FirmwareResetError:
    return FirmwareResetError(
        f"firmware on {port} reset mid-sequence (boot {old_boot:08x} → {new_boot:08x}): "
        f"{report.summary()}; re-scan or reconcile the cube, run `cuberobot home`, then "
        "acknowledge the reset",
        port,
        report,
    )


def stopped(
    port: str, state: FirmwareState, error: ErrorCode, motor: int, report: ExecutionReport
) -> ExecutionError:
    """The firmware latched STOPPED or FAULT while moves were executing."""
    if error is ErrorCode.ESTOP:
        return EmergencyStopError(
            f"emergency stop on {port}: {report.summary()}; make the robot safe, "
            "then run `cuberobot home`",
            port,
            report,
        )
    if error in _MOTOR_ERRORS:
        where = f"motor {Face(motor).name} " if motor < len(Face) else ""
        return MotorFaultError(
            f"{where}{error.name.lower().replace('_', ' ')} on {port}: {report.summary()}; "
            "free the cube and check the gripper, then run `cuberobot home`",
            port,
            report,
        )
    return FirmwareStoppedError(
        f"firmware on {port} is {state.name} ({error.name}): {report.summary()}; "
        "run `cuberobot home`",
        port,
        report,
    )


def refused_while_stopped(
    port: str, state: FirmwareState, error: ErrorCode, report: ExecutionReport
) -> FirmwareStoppedError:
    """``execute()`` while an e-stop or a fault is latched: nothing was sent."""
    return FirmwareStoppedError(
        f"firmware on {port} is {state.name} ({error.name}); nothing was sent; clear the cause, "
        "then run `cuberobot home`",
        port,
        report,
    )


def indices_exhausted(port: str, last: int, count: int) -> MoveIndexError:
    """``count`` moves after index ``last`` would need an index past :data:`MAX_MOVE_INDEX`."""
    left = max(MAX_MOVE_INDEX - last, 0)
    return MoveIndexError(
        f"firmware on {port} cannot take {count} more moves after move index {last}: move "
        f"indices end at {MAX_MOVE_INDEX} ({left} left); nothing was sent; the firmware's "
        "non-volatile move counters are at the end of their range or were never "
        "initialised (an erased EEPROM reads 0xFF): reset them (re-flash the firmware), then "
        "run `cuberobot home`",
        port,
    )


def rejected(port: str, nak: Nak, report: ExecutionReport) -> ExecutionError:
    """The firmware refused moves for good (a NAK that no retransmission can cure)."""
    return ExecutionError(
        f"firmware on {port} refused moves ({nak.reason.name}, detail {nak.detail}): "
        f"{report.summary()}; {nak_hint(nak.reason)}",
        port,
        report,
    )


def contradiction(
    port: str, field: str, value: int, why: str, report: ExecutionReport
) -> FirmwareContradictionError:
    """A report from the firmware cannot be true: stop trusting the execution's counters."""
    return FirmwareContradictionError(
        f"firmware on {port} sent a report the host cannot trust ({field}={value} ({value:#x}) "
        f"{why}): {report.summary()}; the cube's state is uncertain: check the cable and "
        "the firmware, then re-scan the cube (`cuberobot scan`; a daemon job: resume with "
        "rescan) before moving it again",
        port,
        report,
        field,
        value,
    )


def link_failure(port: str, cause: LinkError, report: ExecutionReport) -> ExecutionLinkError:
    """The link itself failed (closed, port lost): sent moves have an unknown fate."""
    err = ExecutionLinkError(f"{cause} — {report.summary()}", port, report)
    err.__cause__ = cause
    return err
