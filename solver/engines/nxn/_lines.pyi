"""Types of the block-commutator line planner kernel (``_lines.c`` next to this file; see its
header for the contract)."""

from typing import Any

def best_line(
    net: Any, u: Any, u2: Any, n: int, setup: int, layers_out: Any, /
) -> tuple[int, int, int, int]: ...
