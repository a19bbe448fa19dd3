"""The reference firmware binary in simavr against the real host link (hardware in the loop).

Every test runs the AVR ELF built from ``firmware/`` in the harness, talks to it over a pty with
:class:`firmware_protocol.FirmwareLink`, and checks the motor pins the harness recorded: turns cut
from STEP edges, applied to the solver's cube model, with the board's speed and acceleration
limits. The fault cases are in ``test_emulator_faults.py``.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from firmware_protocol import (
    CommandRejectedError,
    ExecutionError,
    FirmwareLink,
    FirmwareState,
    Move,
    parse_moves,
)
from firmware_protocol.messages import StatusFlags
from firmware_protocol.pulses import extract_turns

from ..firmware_protocol.helpers import run
from .board import EmulatorFactory, stop_and_read
from .motion import check_motion

#: 20 face turns with two simultaneous opposite-face pairs.
TWENTY = parse_moves("R U R' U' F2 B2 U+D' L R2 F' B U2 D2 R L' F B'+F' D L2")
FOUR_FACES = parse_moves("U R D' L2 U+D' R' L U2 R2+L'")


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
    stats, record = stop_and_read(emu)
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
    stats, record = stop_and_read(emu)
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


def test_move_for_a_missing_motor_is_refused_on_the_uno(emulated: EmulatorFactory) -> None:
    emu = emulated("uno_cnc")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            with pytest.raises((CommandRejectedError, ExecutionError)):
                await link.execute(parse_moves("F")).wait()

    run(scenario(), timeout=30)
    _stats, record = stop_and_read(emu)
    assert extract_turns(record) == []


def test_hold_waits_after_the_group_then_resume_finishes_the_queue(
    emulated: EmulatorFactory,
) -> None:
    moves = parse_moves("R U F D L B")
    emu = emulated("mega2560_ramps")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            execution = link.execute(moves)
            await asyncio.sleep(0.15)
            status = await link.hold()
            assert status.flags & StatusFlags.HOLD_REQUESTED
            await asyncio.sleep(0.4)
            await link.resume()
            events = await execution.wait()
            assert [e.index for e in events] == list(range(1, len(moves) + 1))

    run(scenario(), timeout=30)
    stats, record = stop_and_read(emu)
    turns, problems = check_motion(record, moves, stats)
    assert problems == []
    pauses = [b.start_s - a.end_s for a, b in itertools.pairwise(turns)]
    assert max(pauses) > 0.3  # held between two groups, never mid-turn (all turns complete)


def test_estop_frame_then_home_recovers(emulated: EmulatorFactory) -> None:
    emu = emulated("uno_cnc")

    async def scenario() -> None:
        async with FirmwareLink(emu.port) as link:
            execution = link.execute(parse_moves("U2 R2 D2 L2"))
            await asyncio.sleep(0.1)
            stopped = await link.estop()
            assert stopped.state is FirmwareState.STOPPED
            with pytest.raises(ExecutionError):
                await execution.wait()
            homed = await link.home(0x1B)
            assert homed.flags & StatusFlags.HOMED and homed.state is FirmwareState.IDLE
            await link.execute(parse_moves("L'")).wait()

    run(scenario(), timeout=30)
    _, record = stop_and_read(emu)
    turns = extract_turns(record)
    assert not turns[0].complete  # U2 stopped mid-turn
    assert (turns[-1].motor, turns[-1].quarter_turns, turns[-1].complete) == (4, -1, True)
