"""Typed errors of the solver package.

Exception tree::

    CubeError                       base of everything the solver raises on bad input
    ├── NotationError               a move string that cannot be parsed (column + token)
    ├── FaceletFormatError          text that is not a facelet string at all (length, letters)
    ├── InvalidCubeError            a well-formed cube that cannot exist physically;
    │                               ``problems`` lists every fault found, each naming its place
    ├── UnsupportedError            a request this cube size or engine cannot do (e.g. M on 2x2)
    │   └── OptionError             an engine option that is unknown, of the wrong type or out
    │                               of range; ``option`` names it
    └── NoSolutionError             a valid cube for which the engine found no solution within
                                    the limits asked for (length, faces, time)

Results are objects; formatting for people happens at the edge (CLI, MQTT).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CubeError",
    "FaceletFormatError",
    "InvalidCubeError",
    "NoSolutionError",
    "NotationError",
    "OptionError",
    "Problem",
    "UnsupportedError",
]


class CubeError(Exception):
    """Base class of the solver's input errors."""


class NotationError(CubeError, ValueError):
    """A move sequence that cannot be parsed.

    ``column`` is 1-based into the text given; ``token`` is the offending text.
    """

    def __init__(self, message: str, *, text: str, column: int, token: str) -> None:
        self.text = text
        self.column = column
        self.token = token
        self.reason = message
        super().__init__(
            f"{message} at column {column}: {_excerpt(token, 0)!r} in {_excerpt(text, column)!r}"
        )


#: the longest text an error message quotes whole; longer text is quoted around the column
_QUOTE_CHARS = 80


def _excerpt(text: str, column: int) -> str:
    """``text`` whole when short, else the part around ``column`` (1-based; 0 = the start)
    with ``…`` marking what was cut, so a huge input never makes a huge message."""
    if len(text) <= _QUOTE_CHARS:
        return text
    start = max(0, min(column - 1 - _QUOTE_CHARS // 2, len(text) - _QUOTE_CHARS))
    end = start + _QUOTE_CHARS
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


class FaceletFormatError(CubeError, ValueError):
    """Text that is not a facelet string (wrong length, unknown letters)."""


class UnsupportedError(CubeError, ValueError):
    """A move or request that does not exist for this cube size."""


class OptionError(UnsupportedError):
    """An engine option (``solve(..., name=value)``) that the engine does not take, of the wrong
    type or out of range; ``option`` is its name and the message says what it accepts."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class Problem:
    """One fault found by validation.

    ``code`` is a stable machine-readable identifier (``colour_count``, ``centre_duplicate``,
    ``corner_invalid``, ``corner_mirrored``, ``corner_duplicate``, ``corner_missing``,
    ``edge_invalid``, ``edge_duplicate``, ``edge_missing``, ``wing_invalid``, ``wing_count``,
    ``centre_count``, ``twist``, ``flip``, ``parity``; for N ≥ 4 also ``centre_orbit``,
    ``wing_mirrored``, ``wing_duplicate``, ``midge_flip``, ``midge_parity``); ``where`` names
    the place (a corner position such as ``UFR``, a face, a colour, a wing such as ``UF#2``,
    a centre orbit such as ``centres(1, 2)``); ``message`` is for an operator.
    """

    code: str
    where: str
    message: str

    def __str__(self) -> str:
        return self.message


class InvalidCubeError(CubeError, ValueError):
    """A cube state that cannot exist; ``problems`` holds every fault found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = "; ".join(p.message for p in self.problems) or "invalid cube"
        super().__init__(f"impossible cube: {lines}")


class NoSolutionError(CubeError):
    """The search ended without a solution inside the limits (``max_length``, the allowed faces,
    the time limit); the message names the limit to relax."""
