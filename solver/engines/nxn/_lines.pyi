"""Types of the block-commutator line planner kernel (``_lines.c`` next to this file; see its
header for the contract)."""

from collections.abc import Sequence
from typing import Any

def best_line(
    net: Any, u: Any, u2: Any, n: int, fixed: int, layers_out: Any, /
) -> tuple[int, int, int, int]: ...
def nets(state: Any, idx: Any, colours: Any, out: Any, /) -> None: ...
def plan_lines(
    state: Any,
    cells: Any,
    src: Any,
    colours: Any,
    u: Any,
    u2: Any,
    groups: Any,
    fixed: Any,
    bias: Any,
    n: int,
    out: Any,
    /,
) -> None: ...
def max_runs(values: Any, allowed: Any, lam: float, n: int, taken_out: Any, /) -> int: ...
def plan_start(state: Any, jobs: Sequence[tuple[Any, ...]], threads: int, /) -> object: ...
def plan_wait(pending: object, index: int, /) -> None: ...
def plan_finish(pending: object, /) -> None: ...
def rank_lines(out: Any, fixed: Any, extra: int, floor: float, /) -> list[int]: ...
