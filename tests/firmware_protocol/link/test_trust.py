"""Reports the host cannot trust: one test per kind of violation, each checked to change no
state, to be counted, and (for move counters) to fail the running execution with
:class:`FirmwareContradictionError`."""

from __future__ import annotations

import logging
import struct

import pytest

from firmware_protocol.codec import Frame, FrameDecoder, encode_frame
from firmware_protocol.errors import CorruptFrame, FirmwareContradictionError
from firmware_protocol.link.actions import Action, ExecutionEnded
from firmware_protocol.link.trust import LOG_INTERVAL_S
from firmware_protocol.messages import (
    Ack,
    ErrorCode,
    ErrorReport,
    Executed,
    Hello,
    Message,
    StatusRequest,
    encode_message,
)
from firmware_protocol.moves import parse_moves

from .memfirmware import TICK_S, Driver, MemoryFirmware
from .test_core import feed, messages

MOVES = parse_moves("R U R' U' F2 B2 L D")
FORGED = 0xFFFFFF00


def running(n_executed: int = 3, moves: int = 8) -> Driver:
    """A driver whose firmware holds the first ``moves`` of :data:`MOVES` and has executed
    ``n_executed`` of them, each reported."""
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    driver.execute(MOVES[:moves])
    for _ in range(1000):
        if len(driver.events) >= n_executed and driver.firmware.last_received == moves:
            break
        driver.step(execute=driver.firmware.executed < n_executed)
    assert driver.firmware.executed == n_executed and driver.firmware.last_received == moves
    return driver


def firmware_frame(driver: Driver, message: Message) -> list[Action]:
    """``message`` as if the firmware sent it next (its SEQ continues the firmware's)."""
    (frame,) = FrameDecoder().feed(driver.firmware._send(message))
    assert not isinstance(frame, CorruptFrame)
    actions = driver.core.receive(frame, driver.now)
    driver.apply(actions)  # checks that no move is reported before the firmware executed it
    return actions


def raw(driver: Driver, type_: int, payload: bytes) -> list[Action]:
    (frame,) = FrameDecoder().feed(encode_frame(Frame(type_, 7, payload)))
    assert not isinstance(frame, CorruptFrame)
    return driver.core.receive(frame, driver.now)


def contradiction(actions: list[Action]) -> FirmwareContradictionError:
    (ended,) = [a for a in actions if isinstance(a, ExecutionEnded)]
    assert isinstance(ended.error, FirmwareContradictionError)
    return ended.error


def test_a_forged_executed_past_what_was_sent_fails_the_execution_and_changes_nothing() -> None:
    driver = running(3)
    before = (driver.core.fw.executed, driver.core.fw.started, driver.core.fw.last_received)
    error = contradiction(firmware_frame(driver, Executed(FORGED, FORGED, 0)))
    assert (driver.core.fw.executed, driver.core.fw.started, driver.core.fw.last_received) == before
    assert [e.index for e in error.report.executed] == [1, 2, 3]  # only what was in bounds
    assert [p.index for p in error.report.unknown] == list(range(4, 9))  # sent, fate unknown
    assert error.field == "started_upto" and error.value == FORGED
    assert "mem0" in str(error) and f"{FORGED:#x}" in str(error) and "cuberobot scan" in str(error)
    assert driver.core.stats.protocol_errors == 1
    assert len(driver.events) == 3


@pytest.mark.parametrize(
    "message",
    [
        Ack(0, FORGED, 0),
        Executed(4, 9, 0),  # started_upto past the 8 moves sent
        Executed(5, 4, 0),  # executed past started
    ],
    ids=["ack-last-received", "executed-started", "executed-past-started"],
)
def test_counter_violations_of_each_kind(message: Message) -> None:
    driver = running(3)
    error = contradiction(firmware_frame(driver, message))
    assert [e.index for e in error.report.executed] == [1, 2, 3]
    assert driver.core.fw.executed == 3 and driver.core.stats.protocol_errors == 1


def test_a_status_with_counters_out_of_order_or_bounds_is_a_violation() -> None:
    driver = running(3)
    status = driver.firmware.status()
    object.__setattr__(status, "started_upto", status.last_received + 1)
    error = contradiction(firmware_frame(driver, status))
    assert error.field == "started_upto"
    assert driver.core.last_status != status  # no state taken from it


def test_counters_going_backwards_are_stale_not_failures() -> None:
    driver = running(3)
    actions = firmware_frame(driver, Executed(1, 1, 15))
    assert not [a for a in actions if isinstance(a, ExecutionEnded)]
    assert driver.core.stats.stale_reports == 1 and driver.core.stats.protocol_errors == 0
    assert driver.core.fw.executed == 3
    driver.run_until(lambda: driver.core.execution is not None and driver.core.execution.done)
    assert driver.ended[-1].error is None


@pytest.mark.parametrize(
    ("type_", "payload"),
    [
        (0xEE, b"\x01\x02"),  # unknown type
        (0x84, b"\x01\x00"),  # EXECUTED of the wrong size
        (0x85, struct.pack("<IBBBBBBHIIII", 0xB007, 9, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0)),
        (0x86, bytes([7, 0xFF, 0, 0, 0, 0, 0, 0])),  # error code 7
    ],
    ids=["unknown-type", "bad-size", "status-state-9", "bad-error-code"],
)
def test_unknown_types_and_values_are_counted_and_ignored(type_: int, payload: bytes) -> None:
    driver = running(3)
    assert raw(driver, type_, payload) == []
    assert driver.core.stats.protocol_errors == 1
    assert driver.core.execution is not None and not driver.core.execution.done


def test_a_motor_past_the_motor_count_or_a_host_message_is_a_protocol_error() -> None:
    driver = running(3)
    assert firmware_frame(driver, ErrorReport(ErrorCode.STALL, 9, 4)) == []
    assert driver.core.last_error_report is None
    assert firmware_frame(driver, Hello(0x1234, 1000)) == []
    assert driver.core.stats.protocol_errors == 2
    assert driver.core.execution is not None and not driver.core.execution.done


def test_violations_are_logged_at_most_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    driver = running(0)
    with caplog.at_level(logging.WARNING, logger="firmware_protocol.link.trust"):
        for k in range(50):
            raw(driver, 0xEE, bytes([k]))  # distinct: exact repeats are dropped as duplicates
        driver.now += LOG_INTERVAL_S + TICK_S
        raw(driver, 0xEE, b"")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and "49 more" in warnings[1].getMessage()
    assert driver.core.stats.protocol_errors == 51


def test_the_last_move_ends_the_execution_only_after_a_status_confirms_it() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES[:2])
    driver.run_until(lambda: driver.firmware.executed == 2)
    driver.wire.to_firmware.clear()
    driver.wire.to_host.clear()
    actions = firmware_frame(driver, Executed(2, 2, 16))
    assert not execution.done and len(driver.events) == 2
    assert StatusRequest() in messages(actions)  # asked at once
    firmware_frame(driver, driver.firmware.status())
    assert execution.done and execution.error is None


def test_a_status_that_denies_the_executed_report_is_a_contradiction() -> None:
    driver = running(1, moves=2)
    execution = driver.core.execution
    assert execution is not None
    driver.wire.to_firmware.clear()
    feed(driver.core, Executed(2, 2, 16), driver.now, seq=driver.firmware._tx_seq)
    driver.firmware._tx_seq += 1
    assert not execution.done
    error = contradiction(firmware_frame(driver, driver.firmware.status()))
    assert [e.index for e in error.report.executed] == [1]  # what both reports agree on
    assert [p.index for p in error.report.unknown] == [2]
    assert driver.core.stats.protocol_errors == 1


def test_a_status_sent_before_the_last_executed_is_no_evidence() -> None:
    driver = running(1, moves=2)
    execution = driver.core.execution
    assert execution is not None
    early = encode_message(driver.firmware.status(), 0)  # SEQ 0: long before
    driver.run_until(lambda: len(driver.events) == 2)
    (frame,) = FrameDecoder().feed(early)
    assert not isinstance(frame, CorruptFrame)
    driver.core.receive(frame, driver.now)
    assert not (execution.done and execution.error is not None)
    driver.run_until(lambda: execution.done)
    assert execution.error is None


def test_after_a_reset_that_lost_the_counters_the_bound_is_what_the_firmware_holds() -> None:
    """The bound reports are held to stayed at the old boot's highest index: after a reset
    that lost the counters (back to 0), a forged EXECUTED under that old index passed the check
    and moved the host's counters on to moves the new boot never had."""
    driver = running(3)  # 8 moves sent: the bound is 8
    driver.firmware.reboot()
    driver.firmware.last_received = driver.firmware.started = driver.firmware.executed = 0
    driver.wire.to_host += [driver.firmware._send(driver.firmware._ident(0))]  # boot announcement
    driver.run_until(
        lambda: (
            driver.core.session_open
            and driver.core.info is not None
            and driver.core.info.boot_id == driver.firmware.boot_id
        )
    )
    assert driver.core.fw.executed == 0
    errors = driver.core.stats.protocol_errors
    firmware_frame(driver, Executed(5, 5, 0))  # under the old bound, past anything it holds
    assert driver.core.stats.protocol_errors == errors + 1
    assert driver.core.fw.executed == 0 and driver.core.fw.started == 0
