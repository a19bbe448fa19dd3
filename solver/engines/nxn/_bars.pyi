"""Types of the bar beam's scoring kernel (``_bars.c`` next to this file; see its header for
the contract)."""

from typing import Any

def scores(
    colours: Any,
    cells: Any,
    split: Any,
    sources: Any,
    own: Any,
    lut: Any,
    width: int,
    length: int,
    now: int,
    unpaired: int,
    out: Any,
    /,
) -> None: ...
