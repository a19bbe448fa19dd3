"""Motor pulses recorded by the emulator harness, turned back into face turns and checked.

The harness (``firmware/sim/record.h``) writes one event a line, times in CPU cycles::

    # board <name> mcu <mcu> f_cpu <hz> steps_per_quarter <n> max_rate <steps/s> accel <steps/s²>
    #   settle_us <µs> present <mask> dir_invert <mask>
    S <cycles> <motor> <level>     D <cycles> <motor> <level>     E <cycles> <mask> <level>
    X <cycles> <level>             R <cycles>

:func:`read_record` parses it; :func:`extract_turns` cuts each motor's rising STEP edges into
turns (a pause longer than any interval inside a move separates two turns), with the DIR level
at each step giving the sense; :func:`check_turn` compares a turn's step intervals with the
board's speed and acceleration limits. Pure: no I/O beyond reading the file.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BoardInfo",
    "PulseRecord",
    "Turn",
    "check_turn",
    "extract_turns",
    "read_record",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BoardInfo:
    """The board facts the harness writes in the record's header."""

    name: str
    f_cpu: int
    steps_per_quarter: int
    max_rate: float  # steps/s
    accel: float  # steps/s²
    settle_s: float
    present: int
    dir_invert: int

    @property
    def first_interval_s(self) -> float:
        """The longest interval inside a move: the first step from rest."""
        return math.sqrt(2.0 / self.accel)


@dataclass
class PulseRecord:
    """Everything the harness saw, times in seconds of emulated time."""

    board: BoardInfo
    #: per motor: (time of each rising STEP edge, DIR level at that edge)
    steps: dict[int, list[tuple[float, int]]] = field(default_factory=dict)
    #: per motor: times DIR changed, to check the set-up time before a step
    dir_changes: dict[int, list[float]] = field(default_factory=dict)
    #: (time, motor mask, level) of every ENABLE pin change
    enables: list[tuple[float, int, int]] = field(default_factory=list)
    estops: list[tuple[float, int]] = field(default_factory=list)
    resets: list[float] = field(default_factory=list)
    min_pulse_s: float = math.inf


@dataclass(frozen=True, slots=True)
class Turn:
    """One motor's run of steps: ``steps`` signed (+ clockwise looking at the face)."""

    motor: int
    steps: int
    times: tuple[float, ...]
    steps_per_quarter: int

    @property
    def start_s(self) -> float:
        return self.times[0]

    @property
    def end_s(self) -> float:
        return self.times[-1]

    @property
    def complete(self) -> bool:
        return self.steps % self.steps_per_quarter == 0

    @property
    def quarter_turns(self) -> int:
        """Whole quarter turns (only meaningful when ``complete``)."""
        return int(self.steps / self.steps_per_quarter)


def _parse_header(line: str) -> BoardInfo:
    words = line.lstrip("#").split()
    values = dict(zip(words[::2], words[1::2], strict=False))
    return BoardInfo(
        name=values["board"],
        f_cpu=int(values["f_cpu"]),
        steps_per_quarter=int(float(values["steps_per_quarter"])),
        max_rate=float(values["max_rate"]),
        accel=float(values["accel"]),
        settle_s=int(values["settle_us"]) / 1e6,
        present=int(values["present"]),
        dir_invert=int(values["dir_invert"]),
    )


class _Reader:
    def __init__(self, board: BoardInfo) -> None:
        self.record = PulseRecord(board)
        self.dir_level: dict[int, int] = {}
        self.step_high: dict[int, float] = {}

    def event(self, kind: str, fields: list[str]) -> None:
        t = int(fields[0]) / self.record.board.f_cpu
        if kind == "S":
            self._step(t, int(fields[1]), int(fields[2]))
        elif kind == "D":
            motor = int(fields[1])
            self.dir_level[motor] = int(fields[2])
            self.record.dir_changes.setdefault(motor, []).append(t)
        elif kind == "E":
            self.record.enables.append((t, int(fields[1]), int(fields[2])))
        elif kind == "X":
            self.record.estops.append((t, int(fields[1])))
        elif kind == "R":
            self.record.resets.append(t)
            self.step_high.clear()

    def _step(self, t: float, motor: int, level: int) -> None:
        if level:
            self.step_high[motor] = t
            sense = self.dir_level.get(motor, 0) ^ ((self.record.board.dir_invert >> motor) & 1)
            self.record.steps.setdefault(motor, []).append((t, sense))
        elif motor in self.step_high:
            width = t - self.step_high.pop(motor)
            self.record.min_pulse_s = min(self.record.min_pulse_s, width)


def read_record(path: Path, *, growing: bool = False) -> PulseRecord:
    """Parse a harness record file. ``growing``: the harness is still writing it, so a last
    line without its newline is left for the next read."""
    text = path.read_text(encoding="ascii")
    if growing and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# board"):
        raise ValueError(f"{path}: not a harness record (no '# board' header)")
    reader = _Reader(_parse_header(lines[0]))
    for line in lines[1:]:
        parts = line.split()
        if parts and not line.startswith("#"):
            reader.event(parts[0], parts[1:])
    return reader.record


def extract_turns(record: PulseRecord, gap_s: float | None = None) -> list[Turn]:
    """Every motor's turns, in start order. A pause longer than ``gap_s`` (default: 1.5 × the
    first interval from rest, shorter than the settle time between moves) separates turns."""
    board = record.board
    gap = gap_s if gap_s is not None else 1.5 * board.first_interval_s
    turns: list[Turn] = []
    for motor, steps in record.steps.items():
        run: list[tuple[float, int]] = []
        for t, sense in steps:
            if run and (t - run[-1][0] > gap or sense != run[-1][1]):
                turns.append(_turn(motor, run, board))
                run = []
            run.append((t, sense))
        if run:
            turns.append(_turn(motor, run, board))
    turns.sort(key=lambda turn: turn.start_s)
    return turns


def _turn(motor: int, run: list[tuple[float, int]], board: BoardInfo) -> Turn:
    sign = 1 if run[0][1] else -1
    times = tuple(t for t, _ in run)
    return Turn(motor, sign * len(run), times, board.steps_per_quarter)


def _ideal_interval(board: BoardInfo, r: int) -> float:
    accel_interval = math.sqrt(2.0 * (r + 1) / board.accel) - math.sqrt(2.0 * r / board.accel)
    return max(accel_interval, 1.0 / board.max_rate)


def check_turn(record: PulseRecord, turn: Turn, jitter_s: float) -> list[str]:
    """Problems with ``turn``'s timing: a step interval shorter than the board's speed and
    acceleration allow (minus ``jitter_s``, the interrupt latency that can delay one edge), an
    average rate over the turn above the maximum, DIR changed less than 1 µs before a step."""
    board = record.board
    problems: list[str] = []
    n = len(turn.times)
    for d in range(1, n):
        interval = turn.times[d] - turn.times[d - 1]
        allowed = _ideal_interval(board, min(d, n - 1 - d)) - jitter_s
        if interval < allowed:
            problems.append(
                f"motor {turn.motor} step {d}/{n}: interval {interval * 1e6:.2f} µs < "
                f"{allowed * 1e6:.2f} µs allowed"
            )
            break
    if n > 1 and (n - 1) / (turn.end_s - turn.start_s) > board.max_rate * (1 + 1e-6):
        problems.append(f"motor {turn.motor}: mean rate above {board.max_rate:.0f} steps/s")
    changes = record.dir_changes.get(turn.motor, [])
    if any(0 <= turn.start_s - t < 1e-6 for t in changes):
        problems.append(f"motor {turn.motor}: DIR changed < 1 µs before the first step")
    return problems
