"""The reference firmware in simavr under faults: the e-stop input, line garbage, the host going
silent (watchdog), an MCU reset mid-sequence, and the link's noisy-line cases (bit flips, dropped
bytes, duplicated chunks, a vanishing port) through a mangling relay. Each checks the recorded
pins: zero lost, duplicated or wrong moves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from firmware_protocol import (
    EmergencyStopError,
    ExecutionReport,
    FirmwareLink,
    FirmwareResetError,
    LinkConfig,
    parse_moves,
)
from firmware_protocol.messages import Hello, Moves, WireMove, encode_message
from firmware_protocol.pulses import extract_turns

from ..firmware_protocol.helpers import run
from .board import EmulatorFactory, random_moves, raw_pty, stop_and_read
from .motion import check_motion
from .noisy import LineFaults, NoisyLine
from .test_emulator import TWENTY


@pytest.mark.parametrize("press_after_s", [0.1, 0.19, 0.27, 0.36])
def test_estop_input_stops_within_one_step_and_the_report_matches_the_pins(
    emulated: EmulatorFactory, press_after_s: float
) -> None:
    """Pressed at several points (mid-pair, near a group boundary, mid-single): the motors stop
    within one step period, and what the host reports executed / interrupted is exactly what
    the pins show complete / partial."""
    moves = parse_moves("U2+D2 R2 L2 F2 B2")
    emu = emulated("mega2560_ramps")

    async def scenario() -> tuple[int, int]:
        async with FirmwareLink(emu.port) as link:
            execution = link.execute(moves)
            await asyncio.sleep(press_after_s)
            emu.press_estop()
            with pytest.raises(EmergencyStopError) as info:
                await execution.wait()
            report = info.value.report
            emu.press_estop(False)
            return len(report.executed), len(report.interrupted)

    executed, interrupted = run(scenario(), timeout=30)
    _stats, record = stop_and_read(emu)
    pressed = next(t for t, level in record.estops if level == 0)
    cruise = 1.0 / record.board.max_rate
    for motor, steps in record.steps.items():
        late = [t for t, _ in steps if t > pressed]
        assert len(late) <= 1, f"motor {motor} stepped {len(late)} times after the e-stop"
        assert all(t - pressed < cruise + 20e-6 for t in late)
    turns = extract_turns(record)
    complete = [(t.motor, t.quarter_turns) for t in turns if t.complete]
    assert complete == [(m.motor, m.quarter_turns) for m in moves[:executed]]
    assert sum(not t.complete for t in turns) == interrupted


def test_line_garbage_never_moves_a_motor(emulated: EmulatorFactory) -> None:
    emu = emulated("mega2560_ramps")
    rng = random.Random(16)
    fd = raw_pty(emu.port)
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
    stats, record = stop_and_read(emu)
    turns = extract_turns(record)
    assert [(t.motor, t.quarter_turns) for t in turns] == [(1, 1), (0, 1)]
    assert stats["resets"] == 0


def test_watchdog_finishes_the_group_then_releases_the_drivers(
    emulated: EmulatorFactory,
) -> None:
    emu = emulated("mega2560_ramps")
    fd = raw_pty(emu.port)
    try:
        os.write(fd, b"\x00" + encode_message(Hello(nonce=5, watchdog_ms=100), 10))
        time.sleep(0.05)
        moves = Moves(tuple(WireMove(i, 1, 2) for i in range(1, 4)))
        os.write(fd, encode_message(moves, 11))
        time.sleep(0.8)  # silent: the watchdog fires during move 1 or 2
    finally:
        os.close(fd)
    _stats, record = stop_and_read(emu)
    turns = extract_turns(record)
    assert 1 <= len(turns) <= 2 and all(t.complete for t in turns)
    released = [t for t, mask, level in record.enables if level == 1 and mask == 1 << 1]
    assert released and released[-1] >= turns[-1].end_s


async def _reset_mid_sequence(
    link: FirmwareLink, reset: Callable[[], None], after_s: float = 0.6
) -> ExecutionReport:
    """Run the twenty moves, ``reset`` the board ``after_s`` in; the reset's report."""
    execution = link.execute(TWENTY)
    await asyncio.sleep(after_s)
    reset()
    with pytest.raises(FirmwareResetError) as info:
        await execution.wait()
    return info.value.report


@pytest.mark.slow
def test_reset_mid_sequence_reports_the_exact_prefix(emulated: EmulatorFactory) -> None:
    emu = emulated("mega2560_ramps")

    async def scenario() -> tuple[int, int]:
        async with FirmwareLink(emu.port, config=LinkConfig()) as link:
            report = await _reset_mid_sequence(link, emu.reset)
            assert link.info is not None and not link.info.counters_lost  # .noinit kept
            link.acknowledge_reset()
            await link.execute(parse_moves("R U")).wait()  # the board goes on after the reset
            return len(report.executed), len(report.interrupted)

    executed, interrupted = run(scenario(), timeout=60)
    stats, record = stop_and_read(emu)
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


NOISY = [
    pytest.param(LineFaults(flip=5e-3), id="bit-flips"),
    pytest.param(LineFaults(drop=5e-3), id="dropped-bytes"),
    pytest.param(LineFaults(dup=0.1), id="duplicated-chunks"),
    pytest.param(LineFaults(flip=3e-3, drop=1e-3, dup=0.05), id="everything"),
]


@pytest.mark.parametrize("faults", NOISY)
def test_noisy_line_executes_exactly_once(
    emulated: EmulatorFactory, tmp_path: Path, faults: LineFaults
) -> None:
    emu = emulated("mega2560_ramps")
    moves = random_moves(7, 24)

    async def scenario() -> int:
        line = NoisyLine(emu.port, tmp_path, faults, seed=7)
        path = line.start()
        try:
            async with FirmwareLink(path) as link:
                events = await link.execute(moves).wait()
                assert [e.index for e in events] == list(range(1, len(moves) + 1))
        finally:
            line.close()
        return line.mangled

    mangled = run(scenario(), timeout=90)
    assert mangled > 0  # the faults really happened
    stats, record = stop_and_read(emu)
    _, problems = check_motion(record, moves, stats)
    assert problems == []


def test_vanishing_port_loses_and_repeats_nothing(
    emulated: EmulatorFactory, tmp_path: Path
) -> None:
    emu = emulated("mega2560_ramps")
    moves = random_moves(11, 20)

    async def scenario() -> None:
        line = NoisyLine(emu.port, tmp_path, LineFaults(), seed=11)
        path = line.start()
        try:
            async with FirmwareLink(path) as link:
                execution = link.execute(moves)
                await asyncio.sleep(0.5)
                await line.vanish(0.3)
                events = await execution.wait()
                assert [e.index for e in events] == list(range(1, len(moves) + 1))
                assert link.stats.reconnects >= 1  # the port really went away
        finally:
            line.close()

    run(scenario(), timeout=90)
    stats, record = stop_and_read(emu)
    _, problems = check_motion(record, moves, stats)
    assert problems == []


@pytest.mark.slow
def test_power_cut_mid_sequence_loses_the_counters_and_the_moves_in_flight(
    emulated: EmulatorFactory,
) -> None:
    """A power cut (the SRAM back with noise): the firmware's guard rejects its .noinit
    counters, which come back at zero with a new boot id; the link names the moves it had sent
    but not seen reported as unknown, and the board's move indices start at 1 again."""
    emu = emulated("mega2560_ramps")

    async def scenario() -> tuple[int, int, tuple[int, int], list[int]]:
        async with FirmwareLink(emu.port, config=LinkConfig()) as link:
            assert link.info is not None
            boot = link.info.boot_id
            report = await _reset_mid_sequence(link, emu.power_cycle)
            assert link.info is not None and link.info.boot_id != boot
            assert link.info.counters_lost  # IDENT's boot_flags (protocol v2)
            counters = (link.info.started_upto, link.info.last_executed)
            link.acknowledge_reset()
            rest = await link.execute(parse_moves("R U")).wait()  # the board goes on
            return len(report.executed), len(report.unknown), counters, [e.index for e in rest]

    executed, unknown, counters, indices = run(scenario(), timeout=60)
    stats, record = stop_and_read(emu)
    assert executed >= 1 and unknown >= 1 and stats["resets"] == 1
    assert counters == (0, 0)
    assert indices == [1, 2]
    turns = extract_turns(record)
    after = [(t.motor, t.quarter_turns) for t in turns if t.start_s > record.resets[0]]
    assert after == [(1, 1), (0, 1)]


@pytest.mark.slow
def test_power_cut_before_the_first_report_makes_the_moves_sent_unknown(
    emulated: EmulatorFactory,
) -> None:
    """A power cut before the firmware reported any move: counters at zero are what intact
    memory says too, but the firmware found its .noinit guard broken and says so in IDENT's
    ``boot_flags``: the moves sent are unknown, none believed "not started"."""
    emu = emulated("mega2560_ramps")

    async def scenario() -> tuple[int, int, bool]:
        async with FirmwareLink(emu.port, config=LinkConfig()) as link:
            assert link.info is not None
            report = await _reset_mid_sequence(link, emu.power_cycle, after_s=0.05)
            assert link.info is not None
            return len(report.executed), len(report.unknown), link.info.counters_lost

    executed, unknown, lost = run(scenario(), timeout=60)
    assert lost and executed == 0 and unknown >= 1
