"""Types of the 5x5 staged centre search kernel (``_staged5.c`` next to this file; see its
header for the contract)."""

from typing import Any

def bfs_level(
    dist: Any,
    d: int,
    moves_x: Any,
    moves_t: Any,
    ux: Any,
    ut: Any,
    lx: Any,
    lt: Any,
    backward: bool = ...,
    /,
) -> int: ...
def perimeter(
    table: Any, moves_x: Any, moves_t: Any, goal_x: int, goal_t: int, depth: int, /
) -> int: ...
def search(
    heuristics: tuple[tuple[Any, Any, Any, Any, Any], ...],
    moves_x: Any,
    moves_t: Any,
    axis: bytes,
    slot: bytes,
    start_x: int,
    start_t: int,
    goal_x: int,
    goal_t: int,
    min_depth: int,
    max_depth: int,
    limit: int,
    node_limit: int,
    perimeter: Any,
    perimeter_depth: int,
    boost: int = ...,
    /,
) -> tuple[list[list[int]], int]: ...
