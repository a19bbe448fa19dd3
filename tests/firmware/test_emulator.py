"""The reference firmware binary in simavr against the real host link (hardware in the loop).

Every test runs the AVR ELF built from ``firmware/`` in the harness, talks to it over a pty with
:class:`firmware_protocol.FirmwareLink` (or raw bytes), and checks the motor pins the harness
recorded: turns cut from STEP edges, applied to the solver's cube model, with the board's speed
and acceleration limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
import tty
from collections.abc import Callable
from typing import Any

import pytest

from firmware_protocol import (
    CommandRejectedError,
    EmergencyStopError,
    ExecutionError,
    FirmwareLink,
    FirmwareResetError,
    LinkConfig,
    Move,
    parse_moves,
)
from firmware_protocol.emulator import EmulatedBoard
from firmware_protocol.messages import Hello, Moves, WireMove, encode_message
from firmware_protocol.pulses import PulseRecord, extract_turns, read_record

from ..firmware_protocol.helpers import run
from .motion import check_motion

EmulatorFactory = Callable[..., EmulatedBoard]

#: 20 face turns with two simultaneous opposite-face pairs.
TWENTY = parse_moves("R U R' U' F2 B2 U+D' L R2 F' B U2 D2 R L' F B'+F' D L2")
FOUR_FACES = parse_moves("U R D' L2 U+D' R' L U2 R2+L'")


def _stop_and_read(emu: EmulatedBoard) -> tuple[dict[str, Any], PulseRecord]:
    stats = emu.stop()
    assert emu.record_path is not None
    return stats, read_record(emu.record_path)


@pytest.mark.parametrize(
    ("board", "moves"),
    [("mega2560_ramps", TWENTY), ("uno_cnc", FOUR_FACES)],
    ids=["mega2560-20-moves", "uno-4-faces"],
)
def test_sequence_executes_exactly_once_and_solves_the_cube(
    emulated: EmulatorFactory, board: str, moves: list[Move]
) -> None:
    emu = emulated(board)

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            events = await link.execute(moves).wait()
            assert [e.index for e in events] == list(range(1, len(moves) + 1))
            assert [e.move for e in events] == moves
            assert link.stats.retransmissions == 0

    run(scenario(), timeout=60)
    stats, record = _stop_and_read(emu)
    _turns, problems = check_motion(record, moves, stats)
    assert problems == []
    assert record.min_pulse_s >= 1.9e-6  # DRV8825 minimum STEP high time


def test_two_motors_step_above_20_khz_on_the_mega(emulated: EmulatorFactory) -> None:
    moves = parse_moves("U2+D2' R2+L2")
    emu = emulated("mega2560_ramps")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            await link.execute(moves).wait()

    run(scenario(), timeout=30)
    stats, record = _stop_and_read(emu)
    turns, problems = check_motion(record, moves, stats)
    assert problems == []
    for a, b in ((0, 1), (2, 3)):
        both = (turns[a], turns[b])
        assert abs(both[0].start_s - both[1].start_s) < 1e-3
        for turn in both:
            gaps = [y - x for x, y in zip(turn.times, turn.times[1:], strict=False)]
            middle = gaps[len(gaps) // 3 : 2 * len(gaps) // 3]
            rate = len(middle) / sum(middle)
            assert rate > 20_000, f"motor {turn.motor}: {rate:.0f} steps/s"
    step_isr = max(stats["isr"]["step_a"]["max_cycles"], stats["isr"]["step_b"]["max_cycles"])
    # both channels at the cruise rate leave the CPU more than a third of its time
    assert 2 * step_isr * record.board.max_rate < 0.66 * record.board.f_cpu


def test_estop_input_stops_every_motor_within_one_step(emulated: EmulatorFactory) -> None:
    moves = parse_moves("U2+D2 R2 L2 F2 B2")
    emu = emulated("mega2560_ramps")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            execution = link.execute(moves)
            await asyncio.sleep(0.25)
            emu.press_estop()
            with pytest.raises((EmergencyStopError, ExecutionError)) as info:
                await execution.wait()
            report = info.value.report
            assert len(report.interrupted) >= 1
            emu.press_estop(False)

    run(scenario(), timeout=30)
    _stats, record = _stop_and_read(emu)
    pressed = next(t for t, level in record.estops if level == 0)
    cruise = 1.0 / record.board.max_rate
    for motor, steps in record.steps.items():
        late = [t for t, _ in steps if t > pressed]
        assert len(late) <= 1, f"motor {motor} stepped {len(late)} times after the e-stop"
        assert all(t - pressed < cruise + 20e-6 for t in late)


def _raw_pty(port: str) -> int:
    """The board's pty, raw, once the board has booted (its boot IDENT has arrived): bytes sent
    before the UART is initialised are lost, on a real board as here."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    tty.setraw(fd)
    deadline = time.monotonic() + 5.0
    data = b""
    while b"\x00" not in data and time.monotonic() < deadline:
        time.sleep(0.01)
        with contextlib.suppress(BlockingIOError):
            data += os.read(fd, 4096)
    assert b"\x00" in data, "no boot announcement from the emulated board"
    return fd


def test_line_garbage_never_moves_a_motor(emulated: EmulatorFactory) -> None:
    emu = emulated("mega2560_ramps")
    rng = random.Random(16)
    fd = _raw_pty(emu.port)
    try:
        # a session first, so corrupt frames are answered; then ~1.5 s of noise at line rate
        os.write(fd, b"\x00" + encode_message(Hello(nonce=77, watchdog_ms=5000), 100))
        for _ in range(100):
            noise = bytes(rng.choice((0, rng.randrange(256))) for _ in range(160))
            os.write(fd, noise)
            time.sleep(0.015)
            with contextlib.suppress(BlockingIOError):
                os.read(fd, 4096)
    finally:
        os.close(fd)

    async def scenario() -> None:  # the board still works
        async with FirmwareLink(emu.port) as link:
            await link.execute(parse_moves("R U")).wait()

    run(scenario(), timeout=30)
    stats, record = _stop_and_read(emu)
    turns = extract_turns(record)
    assert [(t.motor, t.quarter_turns) for t in turns] == [(1, 1), (0, 1)]
    assert stats["resets"] == 0


def test_watchdog_finishes_the_group_then_releases_the_drivers(
    emulated: EmulatorFactory,
) -> None:
    emu = emulated("mega2560_ramps")
    fd = _raw_pty(emu.port)
    try:
        os.write(fd, b"\x00" + encode_message(Hello(nonce=5, watchdog_ms=100), 10))
        time.sleep(0.05)
        moves = Moves(tuple(WireMove(i, 1, 2) for i in range(1, 4)))
        os.write(fd, encode_message(moves, 11))
        time.sleep(0.8)  # silent: the watchdog fires during move 1 or 2
    finally:
        os.close(fd)
    _stats, record = _stop_and_read(emu)
    turns = extract_turns(record)
    assert 1 <= len(turns) <= 2 and all(t.complete for t in turns)
    released = [t for t, mask, level in record.enables if level == 1 and mask == 1 << 1]
    assert released and released[-1] >= turns[-1].end_s


@pytest.mark.slow
def test_reset_mid_sequence_reports_the_exact_prefix(emulated: EmulatorFactory) -> None:
    emu = emulated("mega2560_ramps")

    async def scenario() -> tuple[int, int]:
        async with FirmwareLink(emu.port, config=LinkConfig()) as link:
            execution = link.execute(TWENTY)
            await asyncio.sleep(0.6)
            emu.reset()
            with pytest.raises(FirmwareResetError) as info:
                await execution.wait()
            report = info.value.report
            link.acknowledge_reset()
            await link.execute(parse_moves("R U")).wait()  # the board goes on after the reset
            return len(report.executed), len(report.interrupted)

    executed, interrupted = run(scenario(), timeout=60)
    stats, record = _stop_and_read(emu)
    assert executed >= 1 and interrupted <= 2 and stats["resets"] == 1
    turns = extract_turns(record)
    reset_at = record.resets[0]
    before = [t for t in turns if t.start_s < reset_at]
    after = [(t.motor, t.quarter_turns) for t in turns if t.start_s > reset_at]
    assert [(t.motor, t.quarter_turns) for t in before if t.complete] == [
        (m.motor, m.quarter_turns) for m in TWENTY[:executed]
    ]
    assert sum(not t.complete for t in before) == interrupted
    assert after == [(1, 1), (0, 1)]


def test_move_for_a_missing_motor_is_refused_on_the_uno(emulated: EmulatorFactory) -> None:
    emu = emulated("uno_cnc")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            with pytest.raises((CommandRejectedError, ExecutionError)):
                await link.execute(parse_moves("F")).wait()

    run(scenario(), timeout=30)
    _stats, record = _stop_and_read(emu)
    assert extract_turns(record) == []
