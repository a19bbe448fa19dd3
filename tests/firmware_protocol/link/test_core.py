"""The sans-IO core, driven step by step: no port, no event loop, no clock."""

from __future__ import annotations

import itertools
import random

import pytest

from firmware_protocol.codec import FrameDecoder
from firmware_protocol.errors import (
    CommandRejectedError,
    CorruptFrame,
    EmergencyStopError,
    ExecutionEndedError,
    ExecutionLinkError,
    FirmwareResetError,
    FirmwareStoppedError,
    InvalidMoveError,
    LinkClosedError,
    LinkTimeoutError,
    ProtocolVersionError,
    ResetNotAcknowledgedError,
)
from firmware_protocol.link.actions import (
    Action,
    ExecutionEnded,
    Fatal,
    HandshakeFailed,
    OpDone,
    WaiterDone,
    Write,
)
from firmware_protocol.link.core import LinkCore
from firmware_protocol.link.data import LinkConfig
from firmware_protocol.messages import (
    Ack,
    FirmwareState,
    Heartbeat,
    Hello,
    Home,
    Message,
    Nak,
    NakReason,
    StatusRequest,
    encode_message,
    parse_message,
)
from firmware_protocol.moves import Move, parse_moves

from .memfirmware import CONFIG, TICK_S, Driver, MemoryFirmware

MOVES = parse_moves("R U R' U' F2 B2 L D")


def messages(actions: list[Action]) -> list[Message]:
    """The messages the core wrote, decoded."""
    decoder = FrameDecoder()
    out: list[Message] = []
    for action in actions:
        if isinstance(action, Write):
            out += [
                parse_message(f)
                for f in decoder.feed(action.data)
                if not isinstance(f, CorruptFrame)
            ]
    return out


def feed(core: LinkCore, message: Message, now: float, seq: int = 0) -> list[Action]:
    (frame,) = FrameDecoder().feed(encode_message(message, seq))
    assert not isinstance(frame, CorruptFrame)
    return core.receive(frame, now)


def test_hello_is_retried_with_back_off_then_the_handshake_fails() -> None:
    config = LinkConfig(hello_timeout_s=0.1, hello_retries=3, max_backoff_s=1.0)
    core = LinkCore("mem0", config, random.Random(1))
    hellos = [m for m in messages(core.connection_made(0.0)) if isinstance(m, Hello)]
    assert len(hellos) == 1 and core.deadline() == pytest.approx(0.1)
    assert messages(core.tick(0.099)) == []
    assert messages(core.tick(0.1)) == hellos  # the same HELLO, same nonce
    assert core.deadline() == pytest.approx(0.3)  # back-off doubled
    assert messages(core.tick(0.3 + 1e-9)) == hellos
    deadline = core.deadline()
    assert deadline is not None and deadline == pytest.approx(0.7)
    assert [type(a) for a in core.tick(deadline)] == [HandshakeFailed]


def test_an_ident_for_another_hello_is_ignored_and_a_version_mismatch_is_fatal() -> None:
    driver = Driver(MemoryFirmware())
    ident = driver.firmware._ident(nonce=12345)
    assert feed(driver.core, ident, 0.0) == [] and not driver.core.session_open
    (hello,) = [m for m in messages(driver.core.tick(1.0)) if isinstance(m, Hello)]
    wrong = driver.firmware._ident(hello.nonce)
    object.__setattr__(wrong, "protocol_version", 9)
    (action,) = feed(driver.core, wrong, 1.0)
    assert isinstance(action, Fatal) and isinstance(action.error, ProtocolVersionError)
    assert "flash matching firmware" in str(action.error)


@pytest.mark.parametrize("field", ["queue_depth", "motor_count"])
def test_an_ident_announcing_nothing_to_run_moves_on_is_fatal(field: str) -> None:
    """A firmware announcing a queue of 0 moves was taken: every execution then waited for
    room for ever, with no error (hostile-input sweep, 2026-11-27)."""
    driver = Driver(MemoryFirmware())
    (hello,) = [m for m in messages(driver.core.tick(1.0)) if isinstance(m, Hello)]
    lie = driver.firmware._ident(hello.nonce)
    object.__setattr__(lie, field, 0)
    (action,) = feed(driver.core, lie, 1.0)
    assert isinstance(action, Fatal) and isinstance(action.error, ProtocolVersionError)
    assert f"{field} 0" in str(action.error) and "flash matching firmware" in str(action.error)


def test_lost_frames_are_retransmitted_go_back_n_after_the_timeout() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    driver.execute(MOVES)
    in_flight = list(driver.wire.to_firmware)
    assert len(driver.core.window) == CONFIG.window_frames
    driver.wire.to_firmware.clear()  # all lost
    oldest = driver.core.window.oldest()
    assert oldest is not None
    deadline = oldest.sent_at + driver.core.window.rto(0)
    assert driver.core.tick(deadline - 1e-6) == []
    resent = [a.data for a in driver.core.tick(deadline) if isinstance(a, Write)]
    assert resent == in_flight
    assert driver.core.stats.retransmissions == len(in_flight)


def test_a_frame_never_acknowledged_reopens_the_session() -> None:
    config = LinkConfig(max_retries=2, ack_timeout_s=0.05, max_backoff_s=0.1)
    driver = Driver(MemoryFirmware(), config=config)
    driver.open()
    driver.execute(MOVES[:1])
    driver.wire.to_firmware.clear()
    hellos: list[Message] = []
    for k in range(1, 100):
        hellos += [m for m in messages(driver.core.tick(k * 0.05)) if isinstance(m, Hello)]
        if hellos:
            break
    assert hellos and not driver.core.session_open
    assert driver.core.stats.retransmissions == 2


def test_nak_seq_gap_acknowledges_the_frames_before_and_resends_from_the_gap() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    driver.execute(MOVES)
    _, second, third = driver.core.window
    now = driver.now + 1.0  # past the hold-off
    actions = feed(driver.core, Nak(second.seq, NakReason.SEQ_GAP), now)
    assert [o.seq for o in driver.core.window][:2] == [second.seq, third.seq]
    assert [a.data for a in actions if isinstance(a, Write)][:2] == [second.data, third.data]
    # a NAK that crosses the retransmission on the wire is not answered twice
    assert feed(driver.core, Nak(second.seq, NakReason.CORRUPT), now, seq=1) == []


def test_queue_full_defers_the_frame_without_reopening_the_session() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    driver.execute(MOVES)
    first = driver.core.window.oldest()
    assert first is not None
    feed(driver.core, Nak(first.seq, NakReason.QUEUE_FULL, 0), 5.0)
    assert driver.core.session_open and first.sent_at == 5.0


def test_a_refused_command_fails_with_the_operator_action() -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    op_id, actions = driver.core.send_command(Home(), driver.now, timeout=1.0)
    (home,) = [o for o in driver.core.window]
    actions = feed(driver.core, Nak(home.seq, NakReason.STOPPED), driver.now)
    (done,) = [a for a in actions if isinstance(a, OpDone)]
    assert done.op_id == op_id and isinstance(done.error, CommandRejectedError)
    assert "`cuberobot home`" in str(done.error)


def test_an_unacknowledged_command_times_out() -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    op_id, _ = driver.core.send_command(Home(), driver.now, timeout=0.5)
    driver.wire.to_firmware.clear()
    assert driver.core.deadline() is not None
    actions = driver.core.tick(driver.now + 0.5)
    (done,) = [a for a in actions if isinstance(a, OpDone)]
    assert done.op_id == op_id and isinstance(done.error, LinkTimeoutError)
    assert "HOME not acknowledged" in str(done.error)


def test_a_status_waiter_polls_with_back_off_until_its_deadline() -> None:
    core = LinkCore("mem0", CONFIG, random.Random(2))
    core.connection_made(0.0)
    timeout = LinkTimeoutError("no STATUS", "mem0")
    waiter_id, actions = core.await_status(
        StatusRequest(),
        lambda s: True,
        0.0,
        timeout=1.0,
        retry_s=0.05,
        backoff=2.0,
        timeout_error=timeout,
    )
    assert isinstance(messages(actions)[0], StatusRequest)
    polls = [0.0]
    for ms in range(1, 1000):
        if any(isinstance(m, StatusRequest) for m in messages(core.tick(ms / 1000))):
            polls.append(ms / 1000)
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(polls)]
    assert gaps == pytest.approx([0.05, 0.1, 0.2, 0.4], abs=0.002)  # then the deadline
    assert core.tick(1.0) == [WaiterDone(waiter_id, None, timeout)]


def test_a_status_satisfying_the_predicate_ends_the_waiter() -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    waiter_id, actions = driver.core.await_status(
        StatusRequest(),
        lambda s: s.state is FirmwareState.IDLE,
        driver.now,
        timeout=1.0,
        retry_s=0.1,
        backoff=1.0,
        timeout_error=LinkTimeoutError("no STATUS", "mem0"),
    )
    driver.apply(actions)
    driver.run_until(lambda: waiter_id in driver.settled)
    done = driver.settled[waiter_id]
    assert isinstance(done, WaiterDone) and done.status is not None and done.error is None


def test_a_reset_mid_execution_reports_exactly_and_blocks_until_acknowledged() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES)
    driver.run_until(lambda: len(driver.firmware.executed_log) == 3)
    driver.firmware.reboot()
    driver.wire.to_host += [driver.firmware._send(driver.firmware._ident(0))]  # boot announcement
    driver.run_until(lambda: execution.done)
    assert isinstance(execution.error, FirmwareResetError)
    report = execution.error.report
    assert [e.index for e in report.executed] == [1, 2, 3]
    assert [p.index for p in report.not_executed] == list(range(4, len(MOVES) + 1))
    assert "`cuberobot home`" in str(execution.error)
    with pytest.raises(ResetNotAcknowledgedError, match="cuberobot home"):
        driver.execute(MOVES)
    driver.core.acknowledge_reset()
    again = driver.execute(MOVES[3:])
    driver.run_until(lambda: again.done)
    assert again.error is None and again.events[0].index == 4


def test_an_emergency_stop_fails_the_execution_and_refuses_the_next() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES)
    driver.run_until(lambda: len(driver.firmware.executed_log) == 2)
    driver.firmware.estop()
    driver.wire.to_host.append(driver.firmware._send(driver.firmware.status()))
    driver.run_until(lambda: execution.done)
    assert isinstance(execution.error, EmergencyStopError)
    assert len(execution.error.report.executed) == 2
    with pytest.raises(FirmwareStoppedError) as refused:
        driver.execute(MOVES)
    assert "nothing was sent" in str(refused.value) and "()" not in str(refused.value)


def test_a_failed_link_reports_sent_moves_as_unknown() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    driver.execute(MOVES)
    waiter_id, _ = driver.core.await_status(
        StatusRequest(),
        lambda s: False,
        driver.now,
        timeout=9.0,
        retry_s=1.0,
        backoff=1.0,
        timeout_error=LinkTimeoutError("no STATUS", "mem0"),
    )
    closed = LinkClosedError("link to mem0 closed", "mem0")
    actions = driver.core.fail(closed, driver.now)
    assert WaiterDone(waiter_id, None, closed) in actions
    (ended,) = [a for a in actions if isinstance(a, ExecutionEnded)]
    assert isinstance(ended.error, ExecutionLinkError) and ended.error.__cause__ is closed
    assert ended.error.report.unknown and not ended.error.report.executed


def test_consecutive_duplicate_frames_are_dropped() -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    (frame,) = FrameDecoder().feed(encode_message(Ack(3, 0, 4), 7))
    assert not isinstance(frame, CorruptFrame)
    driver.core.receive(frame, driver.now)
    assert driver.core.receive(frame, driver.now) == []
    assert driver.core.stats.duplicates_dropped == 1


def test_heartbeats_keep_the_firmware_watchdog_fed_when_idle() -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    sent: list[Message] = []
    start = driver.now
    while driver.now < start + 0.35:
        driver.now += TICK_S
        sent += messages(driver.core.tick(driver.now))
    assert sum(isinstance(m, Heartbeat) for m in sent) == 3


def test_the_deadline_is_the_next_thing_to_do() -> None:
    core = LinkCore("mem0", CONFIG, random.Random(3))
    assert core.deadline() is None
    core.connection_made(2.0)
    assert core.deadline() == pytest.approx(2.0 + CONFIG.hello_timeout_s)
    core.connection_lost()
    assert core.deadline() is None


def test_executed_moves_count_as_received_when_their_ack_was_lost() -> None:
    """Found by the property tests: with the ACK lost and the frame acknowledged implicitly by
    a NAK (which carries no counter), the next execution was indexed from a stale
    ``last_received``; the firmware dropped its first move as a repeat and the host then
    reported it executed."""
    driver = Driver(MemoryFirmware())
    driver.open()
    first = driver.execute(MOVES[:1])
    (frame,) = driver.core.window
    driver.wire.to_host += driver.firmware.receive(driver.wire.to_firmware.pop())
    driver.wire.to_host.clear()  # the ACK is lost
    feed(driver.core, Nak((frame.seq + 1) & 0xFFFF, NakReason.SEQ_GAP), driver.now, seq=1)
    assert len(driver.core.window) == 0 and driver.core.fw.last_received == 0
    driver.run_until(lambda: first.done)
    second = driver.execute(MOVES[1:2])
    assert second.base == 2
    driver.run_until(lambda: second.done)
    assert [m.index for m in driver.firmware.executed_log] == [1, 2]


def test_an_execution_extended_while_it_runs_executes_every_move_in_order() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES[:2])
    driver.run_until(lambda: len(driver.firmware.executed_log) == 1)
    driver.apply(driver.core.extend(parse_moves("U+D' F"), driver.now))
    driver.run_until(lambda: execution.done)
    assert execution.error is None
    assert [e.index for e in execution.events] == [1, 2, 3, 4, 5]
    assert [str(e.move) for e in execution.events] == ["R", "U", "U+", "D'", "F"]
    assert [len(a.execution.events) for a in driver.ended] == [5]  # ended once, at the end


def test_extending_an_execution_that_had_every_move_reported_keeps_it_open() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES[:1])
    # every move reported; the STATUS confirming it has been asked for but not received
    driver.run_until(lambda: execution.all_reported and execution.confirm_after_seq is not None)
    driver.apply(driver.core.extend(MOVES[1:3], driver.now))
    assert not execution.done and execution.confirm_after_seq is None
    driver.run_until(lambda: execution.done)
    assert execution.error is None and [e.index for e in execution.events] == [1, 2, 3]


def test_extend_after_the_execution_ended_or_with_a_bad_group_sends_nothing() -> None:
    driver = Driver(MemoryFirmware(queue_depth=16))
    driver.open()
    with pytest.raises(ExecutionEndedError, match="start a new execution"):
        driver.core.extend(MOVES[:1], driver.now)
    execution = driver.execute(MOVES[:2])
    with pytest.raises(InvalidMoveError):
        driver.core.extend([Move(0, 1, True)], driver.now)  # an open group
    driver.run_until(lambda: execution.done)
    with pytest.raises(ExecutionEndedError):
        driver.core.extend(MOVES[:1], driver.now)
    assert len(execution.moves) == 2
