"""The motion checker: recorded pulses → face turns → a virtual cube, plus timing limits.

A sequence is executed exactly once when the turns cut from the STEP edges, grouped by start
time (two opposite faces of a group start within a millisecond), equal the requested moves
group by group; the virtual cube (the solver's facelet model) scrambled with the inverse of the
moves and then turned by the recorded turns must come out solved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firmware_protocol import Move
from firmware_protocol.moves import Face, groups
from firmware_protocol.pulses import PulseRecord, Turn, check_turn, extract_turns
from solver.cube.facelets import Cube

PAIR_START_S = 1e-3
_SUFFIX = {1: "", -1: "'", 2: "2", -2: "2"}


def notation(motor: int, quarter_turns: int) -> str:
    return Face(motor).name + _SUFFIX[quarter_turns]


def jitter_s(stats: dict[str, Any]) -> float:
    """How late one STEP edge may be: when its compare fires, another interrupt may be running
    and the other step channel (higher priority) may be pending, so the two longest interrupts,
    plus 50 cycles for the main loop's short critical sections."""
    worst = sorted(v["max_cycles"] for v in stats["isr"].values())[-2:]
    return float(sum(worst) + 50) / float(stats["f_cpu"])


def group_turns(turns: Sequence[Turn]) -> list[list[Turn]]:
    out: list[list[Turn]] = []
    for turn in turns:
        if out and turn.start_s - out[-1][0].start_s < PAIR_START_S:
            out[-1].append(turn)
        else:
            out.append([turn])
    return out


def check_motion(
    record: PulseRecord, moves: Sequence[Move], stats: dict[str, Any]
) -> tuple[list[Turn], list[str]]:
    """The recorded turns and every problem: a partial turn, a move missing or executed twice,
    a timing limit broken, a cube that does not come out right."""
    turns = extract_turns(record)
    problems = [f"partial turn: motor {t.motor}, {t.steps} steps" for t in turns if not t.complete]
    done = [sorted((t.motor, t.quarter_turns) for t in g) for g in group_turns(turns)]
    wanted = [
        sorted((m.motor, m.quarter_turns) for m in moves[a:b]) for a, b in groups(list(moves))
    ]
    if done != wanted:
        problems.append(f"executed groups {done} differ from requested {wanted}")
    tolerance = jitter_s(stats)
    for turn in turns:
        problems += check_turn(record, turn, tolerance)
    cube = Cube.solved().apply(
        " ".join(notation(m.motor, -m.quarter_turns) for m in reversed(moves))
    )
    cube = cube.apply(" ".join(notation(t.motor, t.quarter_turns) for t in turns if t.complete))
    if not cube.is_solved():
        problems.append("the virtual cube is not solved after the recorded turns")
    return turns, problems
