"""Types of the edge-pairing beam's scoring kernel (``_pairing.c`` next to this file; see its
header for the contract)."""

from typing import Any

def gains(
    codes: Any,
    rows: Any,
    index: Any,
    split: Any,
    edges: Any,
    counted: Any,
    refs: Any,
    width: int,
    length: int,
    out: Any,
    /,
) -> None: ...
