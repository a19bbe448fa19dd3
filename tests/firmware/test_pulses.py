"""The pulse reader and the motion checker on synthetic records: they accept an ideal trapezoid
and catch what the emulator tests rely on them to catch (a step too early, a missing or extra
move, a partial turn)."""

from __future__ import annotations

import math
from pathlib import Path

from firmware_protocol import parse_moves
from firmware_protocol.pulses import PulseRecord, check_turn, extract_turns, read_record

from .motion import check_motion

F_CPU = 16_000_000
SPQ = 100  # a small board: 100 steps a quarter turn
RATE = 2_000.0
ACCEL = 100_000.0
HEADER = (
    f"# board test mcu atmega2560 f_cpu {F_CPU} steps_per_quarter {SPQ} max_rate {RATE} "
    f"accel {ACCEL} settle_us 5000 present 63 dir_invert 0"
)
STATS = {"f_cpu": F_CPU, "isr": {"step_a": {"max_cycles": 100}, "tick": {"max_cycles": 50}}}


def _ideal_times(steps: int) -> list[float]:
    """Rising-edge times of a trapezoid: interval before step d is ideal(min(d, S-1-d))."""

    def ideal(r: int) -> float:
        accel = math.sqrt(2 * (r + 1) / ACCEL) - math.sqrt(2 * r / ACCEL)
        return max(accel, 1 / RATE)

    times = [ideal(0)]
    for d in range(1, steps):
        times.append(times[-1] + ideal(min(d, steps - 1 - d)))
    return times


def _write(path: Path, turns: list[tuple[int, int, float]], shorten: int | None = None) -> Path:
    """``turns``: (motor, signed steps, start time in s)."""
    lines = [HEADER]
    for motor, steps, start in turns:
        lines.append(f"D {int(start * F_CPU)} {motor} {1 if steps > 0 else 0}")
        times = _ideal_times(abs(steps))
        if shorten is not None:
            times = times[:shorten] + [t - 0.3 / RATE for t in times[shorten:]]
        for t in times:
            at = int((start + 1e-4 + t) * F_CPU)
            lines.append(f"S {at} {motor} 1")
            lines.append(f"S {at + 40} {motor} 0")
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def _record(tmp_path: Path, turns: list[tuple[int, int, float]], **kw: int) -> PulseRecord:
    return read_record(_write(tmp_path / "r.rec", turns, **kw))


def test_ideal_turns_pass_and_become_face_turns(tmp_path: Path) -> None:
    moves = parse_moves("R U'+D2 R")
    record = _record(tmp_path, [(1, SPQ, 0.0), (0, -SPQ, 0.2), (3, 2 * SPQ, 0.2), (1, SPQ, 0.5)])
    turns, problems = check_motion(record, moves, STATS)
    assert problems == []
    assert [(t.motor, t.quarter_turns) for t in turns] == [(1, 1), (0, -1), (3, 2), (1, 1)]
    assert math.isclose(record.min_pulse_s, 40 / F_CPU)


def test_a_step_too_early_is_caught(tmp_path: Path) -> None:
    record = _record(tmp_path, [(1, SPQ, 0.0)], shorten=50)
    (turn,) = extract_turns(record)
    problems = check_turn(record, turn, jitter_s=1e-6)
    assert problems and "step 50/100" in problems[0]


def test_missing_repeated_and_partial_moves_are_caught(tmp_path: Path) -> None:
    record = _record(tmp_path, [(1, SPQ, 0.0), (1, SPQ, 0.2), (0, SPQ // 2, 0.4)])
    _, problems = check_motion(record, parse_moves("R U"), STATS)
    text = " ".join(problems)
    assert "partial turn: motor 0, 50 steps" in text
    assert "differ from requested" in text
    assert "not solved" in text
