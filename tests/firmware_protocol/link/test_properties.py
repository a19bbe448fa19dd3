"""Property tests of the sans-IO core: over random loss, duplication and reordering of frames in
both directions, every move executes exactly once and in order, the host never reports a move
before the firmware executed it, and the sender never exceeds its window."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.errors import FirmwareResetError
from firmware_protocol.moves import Face, Move, opposite

from .memfirmware import CONFIG, Driver, MemoryFirmware

single_moves = st.builds(
    Move, st.sampled_from(list(Face)), st.sampled_from([1, -1, 2]), st.just(False)
)


@st.composite
def move_groups(draw: st.DrawFn) -> list[Move]:
    """One move, or two opposite faces turning together."""
    first = draw(single_moves)
    if not draw(st.booleans()):
        return [first]
    second = Move(Face(opposite(first.motor)), draw(st.sampled_from([1, -1, 2])), False)
    return [Move(Face(first.motor), first.quarter_turns, True), second]


def sequences(max_groups: int) -> st.SearchStrategy[list[Move]]:
    return st.lists(move_groups(), min_size=1, max_size=max_groups).map(
        lambda groups: [move for group in groups for move in group]
    )


disturbances = st.lists(st.integers(0, 255), max_size=300)


@settings(max_examples=150, deadline=None)
@given(
    moves=sequences(20),
    chaos=disturbances,
    queue_depth=st.integers(2, 6),
    seed=st.integers(0, 2**16),
)
def test_every_move_executes_exactly_once_in_order(
    moves: list[Move], chaos: list[int], queue_depth: int, seed: int
) -> None:
    driver = Driver(MemoryFirmware(queue_depth=queue_depth), seed=seed)
    driver.open()
    execution = driver.execute(moves)
    for disturbance in chaos:
        driver.step(disturbance)
    driver.run_until(lambda: execution.done)

    assert execution.error is None
    firmware = driver.firmware
    assert [m.index for m in firmware.executed_log] == list(range(1, len(moves) + 1))
    assert [
        (m.motor, m.quarter_turns, m.simultaneous_with_next) for m in firmware.executed_log
    ] == [(m.motor, m.quarter_turns, m.simultaneous_with_next) for m in moves]
    assert [e.position for e in driver.events] == list(range(len(moves)))
    assert [e.move for e in driver.events] == moves
    assert [a.error for a in driver.ended] == [None]
    assert driver.max_window <= CONFIG.window_frames


@settings(max_examples=60, deadline=None)
@given(
    first=sequences(8),
    second=sequences(8),
    chaos=disturbances,
)
def test_consecutive_executions_continue_the_firmware_indices(
    first: list[Move], second: list[Move], chaos: list[int]
) -> None:
    driver = Driver(MemoryFirmware())
    driver.open()
    one = driver.execute(first)
    for disturbance in chaos[: len(chaos) // 2]:
        driver.step(disturbance)
    driver.run_until(lambda: one.done)
    two = driver.execute(second)
    for disturbance in chaos[len(chaos) // 2 :]:
        driver.step(disturbance)
    driver.run_until(lambda: two.done)

    assert one.error is None and two.error is None
    total = len(first) + len(second)
    assert [m.index for m in driver.firmware.executed_log] == list(range(1, total + 1))
    assert [e.index for e in two.events] == list(range(len(first) + 1, total + 1))


@settings(max_examples=100, deadline=None)
@given(
    moves=sequences(14),
    chaos=disturbances,
    reset_at=st.integers(0, 120),
)
def test_a_reset_at_any_moment_is_reported_exactly(
    moves: list[Move], chaos: list[int], reset_at: int
) -> None:
    driver = Driver(MemoryFirmware(queue_depth=4))
    driver.open()
    execution = driver.execute(moves)
    firmware = driver.firmware
    for step in range(max(len(chaos), reset_at + 1)):
        if step == reset_at:
            firmware.reboot()
            driver.wire.to_host.append(firmware._send(firmware._ident(0)))  # boot announcement
        driver.step(chaos[step] if step < len(chaos) else None)
    driver.run_until(lambda: execution.done)

    executed = [m.index for m in firmware.executed_log]
    if execution.error is None:  # every move had executed before the reset
        assert executed == list(range(1, len(moves) + 1))
        return
    assert isinstance(execution.error, FirmwareResetError)
    report = execution.error.report
    assert [e.index for e in report.executed] == executed  # exactly what the firmware did
    assert report.interrupted == ()  # this firmware executes a move atomically
    assert [p.index for p in report.not_executed] == list(range(len(executed) + 1, len(moves) + 1))
    assert driver.core.executions.reset_pending is not None
