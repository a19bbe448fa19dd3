"""Checking engine settings: the ``solve(..., name=value)`` keywords an engine takes beyond
:class:`~solver.options.SolveOptions`.

Each engine declares its settings as a frozen dataclass whose fields are the option names and
whose ``__post_init__`` checks every value with the helpers here; :func:`parse_settings` builds
it from ``SolveOptions.extra`` after refusing names the engine does not take. Every error is an
:class:`~solver.errors.OptionError` naming the option and what it accepts.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import fields
from typing import Any, ClassVar, Protocol, TypeVar

from solver.errors import OptionError

__all__ = [
    "check_int",
    "check_known",
    "check_one_of",
    "check_positive",
    "parse_settings",
]

T = TypeVar("T")


class _Settings(Protocol):
    """A settings dataclass (its fields are the option names)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


S = TypeVar("S", bound=_Settings)


def check_known(engine: str, extra: Mapping[str, Any], known: Collection[str]) -> None:
    """Refuse settings that ``engine`` does not take."""
    unknown = sorted(set(extra) - set(known))
    if unknown:
        raise OptionError(
            unknown[0],
            f"{engine} engine: unknown option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(known)) or 'none'}",
        )


def parse_settings(cls: type[S], engine: str, extra: Mapping[str, Any]) -> S:
    """``cls`` (a settings dataclass) from ``extra``, its unknown names refused."""
    check_known(engine, extra, [f.name for f in fields(cls)])
    return cls(**extra)


def check_int(option: str, value: object, lo: int, hi: int | None = None) -> int:
    """An integer (not a bool) from ``lo`` to ``hi`` (no upper bound when None)."""
    in_range = isinstance(value, int) and value >= lo and (hi is None or value <= hi)
    if isinstance(value, bool) or not in_range:
        bounds = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
        raise OptionError(option, f"{option} must be an integer {bounds}, got {value!r}")
    assert isinstance(value, int)
    return value


def check_positive(option: str, value: object) -> float:
    """A finite number of seconds (or other unit) above zero."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:  # type: ignore[arg-type]
        raise OptionError(option, f"{option} must be a number above 0, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_one_of(option: str, value: T, choices: Collection[T]) -> T:
    if value not in choices:
        names = ", ".join(repr(c) for c in choices)
        raise OptionError(option, f"{option} must be one of {names}, got {value!r}")
    return value
