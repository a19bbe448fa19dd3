"""Types of the C search kernel (``_twophase.c`` next to this file; see its header for the
contract)."""

from typing import Any

class Collector:
    """Candidates of a collecting search, shared by its worker threads."""

    def __init__(
        self, max_length: int, slack: int, descent_s: float = ..., capacity: int = ..., /
    ) -> None: ...
    def drain(self, timeout_s: float = ..., /) -> list[tuple[int, int, list[int]]]: ...
    def stop(self) -> None: ...
    def stats(self) -> dict[str, int]: ...

def search(
    tables: tuple[Any, ...],
    starts: list[tuple[int, int, int, int, int, int, int]],
    max_length: int,
    budget_s: float,
    timeout_s: float,
    phase2_max: int,
    cost: tuple[float, float, float, float, bool] | None,
    phase2_slack: int = ...,
    axial: tuple[Any, ...] | None = ...,
    shared_found: bytearray | None = ...,
    collector: Collector | None = ...,
    chunk: int = ...,
    /,
) -> tuple[int, list[int], dict[str, Any]]: ...
def mech_search(
    tables: tuple[Any, ...],
    starts: list[tuple[int, int, int, int, int, int, int]],
    max_length: int,
    budget_s: float,
    timeout_s: float,
    phase2_max: int,
    phase2_slack: int,
    length_slack: int,
    mech: tuple[Any, ...],
    shared_found: bytearray | None,
    /,
) -> tuple[int, list[int], dict[str, Any]]: ...
def peek(shared: bytearray, /) -> tuple[int, int, list[int], float] | None: ...
def stop(shared: bytearray, /) -> None: ...
def phase1_depth(tables: tuple[Any, ...], twist: int, flip: int, slice_sorted: int, /) -> int: ...
def phase2_depth(tables: tuple[Any, ...], corners: int, ud_edges: int, /) -> int: ...
def bfs_level(
    depth: Any,
    d: int,
    backward: bool,
    class_move: Any,
    class_sym: Any,
    raw_move: Any,
    raw_conj: Any,
    stab: Any,
    n_raw: int,
    /,
) -> int: ...
def down_axes(
    depth: Any,
    class_move: Any,
    class_sym: Any,
    raw_move: Any,
    raw_conj: Any,
    n_raw: int,
    axis_of: Any,
    /,
) -> int: ...
