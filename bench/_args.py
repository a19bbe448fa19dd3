"""Argument types of the benchmark scripts: argparse ``type=`` factories with ranges.

Each factory returns a callable that turns one command-line string into a checked value or
raises :class:`argparse.ArgumentTypeError` saying what was expected and what was given; argparse
reports that as ``error: argument --NAME: ...`` after the usage line and exits with status 2,
so a bad value never reaches the benchmark (nor ends in a traceback halfway through it).

* :func:`count`: a whole number in a range (states, runs, seeds, sizes);
* :func:`number` and :func:`seconds`: a finite number in a range;
* :func:`int_list`, :func:`float_list`, :func:`seconds_list`, :func:`name_list`:
  comma-separated lists, each item
  checked as the single types are, the item named by its place when it is refused.

This file's name starts with ``_``: it is a helper of the scripts, not a benchmark. The
scripts import it as ``_args`` (run as ``python bench/<name>.py``, ``bench/`` is first on
``sys.path``; ``tests/benchload.py`` appends it for the tests).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

__all__ = [
    "MAX_BUDGET_S",
    "count",
    "float_list",
    "int_list",
    "name_list",
    "number",
    "seconds",
    "seconds_list",
]

T = TypeVar("T")

#: the longest search budget or wait a benchmark takes from its command line, in seconds
#: (``bench/time_to_solved.py``'s ``--modes`` took the same bound first)
MAX_BUDGET_S = 60.0


def _range_text(lo: float, hi: float | None, unit: str = "") -> str:
    """``from 1 up``, ``from 0 to 60 s``."""
    suffix = f" {unit}" if unit else ""
    if hi is None:
        return f"from {_text(lo)}{suffix} up"
    return f"from {_text(lo)} to {_text(hi)}{suffix}"


def _text(value: float) -> str:
    """A bound as written: a whole number in full (4000000), another one short (0.001)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _whole(text: str, lo: int, hi: int | None, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected {what} (a whole number {_range_text(lo, hi)}), got {text!r}"
        ) from None
    if value < lo or (hi is not None and value > hi):
        raise argparse.ArgumentTypeError(f"expected {what} {_range_text(lo, hi)}, got {value}")
    return value


def _real(text: str, lo: float, hi: float, what: str, unit: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(
            f"expected {what} {_range_text(lo, hi, unit)}, got {text!r}"
        )
    return value


def count(lo: int = 1, hi: int | None = None, *, what: str = "a count") -> Callable[[str], int]:
    """A whole number from ``lo`` to ``hi`` (no upper bound: ``None``)."""

    def parse(text: str) -> int:
        return _whole(text, lo, hi, what)

    return parse


def number(
    lo: float, hi: float, *, what: str = "a number", unit: str = ""
) -> Callable[[str], float]:
    """A finite number from ``lo`` to ``hi`` (both included)."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"a range of finite numbers, lo <= hi: got {lo}, {hi}")

    def parse(text: str) -> float:
        return _real(text, lo, hi, what, unit)

    return parse


def seconds(lo: float = 0.0, hi: float = MAX_BUDGET_S) -> Callable[[str], float]:
    """A duration: a finite number of seconds from ``lo`` to ``hi`` (both included)."""
    return number(lo, hi, what="a duration", unit="s")


def _items(text: str, skip_blank: bool, allow_empty: bool, example: str) -> list[str]:
    """The comma-separated items of ``text`` (stripped); a blank one refused unless
    ``skip_blank`` (then dropped), and no item at all refused unless ``allow_empty``."""
    parts = [part.strip() for part in text.split(",")]
    if skip_blank:
        parts = [part for part in parts if part]
    elif not text.strip():
        parts = []
    elif "" in parts:
        raise argparse.ArgumentTypeError(
            f"item {parts.index('') + 1} of {text!r} is empty: expected a comma-separated "
            f"list (e.g. {example})"
        )
    if not parts and not allow_empty:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list (e.g. {example}), got {text!r}"
        )
    return parts


def _each(text: str, parts: Sequence[str], parse: Callable[[str], T], unique: bool) -> list[T]:
    """Every item parsed; a refused one named by its place in ``text``."""
    values: list[T] = []
    for place, part in enumerate(parts, start=1):
        try:
            value = parse(part)
        except argparse.ArgumentTypeError as exc:
            where = f"item {place} of {text!r}: " if len(parts) > 1 else ""
            raise argparse.ArgumentTypeError(f"{where}{exc}") from None
        if unique and value in values:
            raise argparse.ArgumentTypeError(f"item {place} of {text!r} repeats {part!r}")
        values.append(value)
    return values


def int_list(
    lo: int,
    hi: int | None = None,
    *,
    what: str = "a whole number",
    choices: Collection[int] | None = None,
    unique: bool = False,
    skip_blank: bool = False,
    allow_empty: bool = False,
) -> Callable[[str], list[int]]:
    """Comma-separated whole numbers, each from ``lo`` to ``hi`` (and one of ``choices``, if
    given); ``unique``: no value twice; ``skip_blank``: blank items dropped (``3,,4,``);
    ``allow_empty``: no item at all gives ``[]`` (else refused)."""
    example = ",".join(str(c) for c in sorted(choices)[:2]) if choices else f"{lo},{lo + 1}"

    def item(text: str) -> int:
        value = _whole(text, lo, hi, what)
        if choices is not None and value not in choices:
            allowed = ", ".join(str(c) for c in sorted(choices))
            raise argparse.ArgumentTypeError(f"expected {what}: one of {allowed}, got {value}")
        return value

    def parse(text: str) -> list[int]:
        return _each(text, _items(text, skip_blank, allow_empty, example), item, unique)

    return parse


def float_list(
    lo: float,
    hi: float,
    *,
    what: str = "a number",
    unit: str = "",
    unique: bool = False,
    skip_blank: bool = False,
) -> Callable[[str], list[float]]:
    """Comma-separated finite numbers, each from ``lo`` to ``hi``; ``unique`` and
    ``skip_blank`` as :func:`int_list`'s (the list is never empty)."""
    one = number(lo, hi, what=what, unit=unit)
    example = f"{lo:g},{hi:g}"

    def parse(text: str) -> list[float]:
        return _each(text, _items(text, skip_blank, False, example), one, unique)

    return parse


def seconds_list(
    lo: float = 0.0, hi: float = MAX_BUDGET_S, *, unique: bool = False, skip_blank: bool = False
) -> Callable[[str], list[float]]:
    """Comma-separated durations in seconds, each from ``lo`` to ``hi``
    (:func:`float_list`)."""
    return float_list(lo, hi, what="a duration", unit="s", unique=unique, skip_blank=skip_blank)


def name_list(choices: Sequence[str], *, skip_blank: bool = False) -> Callable[[str], list[str]]:
    """Comma-separated names, each one of ``choices`` (the list is never empty)."""
    allowed = ", ".join(choices)

    def item(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"expected one of {allowed}, got {text!r}")
        return text

    def parse(text: str) -> list[str]:
        return _each(text, _items(text, skip_blank, False, ",".join(choices[:2])), item, False)

    return parse
