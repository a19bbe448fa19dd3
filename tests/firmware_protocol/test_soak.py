"""Short soak: seeded random move streams through bit flips, drops, duplicates, delays, resets and
the odd vanishing port. Nothing may be lost, duplicated or executed wrongly, every reset must be
reported exactly, and the virtual cube must end where the host believes it is.

``bench/link.py --runs 1000`` is the long version of the same runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from firmware_protocol.moves import Move
from firmware_protocol.sim.harness import soak_run

from .helpers import RecordingCube, run


def expected_log(moves: Sequence[Move]) -> str:
    return " ".join(f"{'URFDLB'[m.motor]}{m.quarter_turns:+d}" for m in moves)


def _check(seed: int, **kwargs: Any) -> None:
    result = run(
        soak_run(seed, cube_factory=RecordingCube, expected_facelets=expected_log, **kwargs),
        timeout=60,
    )
    assert result.ok, result.problems
    assert result.problems == []


@pytest.mark.parametrize("seed", range(24))
def test_soak(seed: int) -> None:
    _check(seed)


@pytest.mark.parametrize("seed", range(3))
def test_soak_harsh_line(seed: int) -> None:
    """Ten times the byte error rate of the benchmark, and a reset in every run."""
    _check(10_000 + seed, flip=1e-2, drop=2e-3, dup=0.05, reset_probability=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_soak_long(block: int) -> None:
    for seed in range(1000 + 30 * block, 1000 + 30 * (block + 1)):
        _check(seed)
