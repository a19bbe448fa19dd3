"""Fixtures of the firmware tests: the emulated board (simavr) when this machine can build it.

Tests that need avr-gcc and simavr skip with the reason naming what is missing and the command
that installs it (``make test`` installs it on Debian; see the top-level Makefile).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware_protocol.emulator import (
    APT_PACKAGES,
    EmulatedBoard,
    build,
    missing_tools,
    start_emulator,
)

SKIP_REASON = (
    "AVR emulator tests skipped: missing {missing}; "
    f"install with `apt-get install -y {' '.join(APT_PACKAGES)}` (or run `make test` as root)"
)


@pytest.fixture(scope="session")
def emulator_ready() -> None:
    missing = missing_tools()
    if missing:
        pytest.skip(SKIP_REASON.format(missing=", ".join(missing)))
    for board in ("mega2560_ramps", "uno_cnc"):
        build(board)


@pytest.fixture(scope="session")
def host_cc() -> str:
    cc = shutil.which("cc")
    if cc is None or shutil.which("make") is None:
        pytest.skip("host C core tests skipped: no `cc` or `make` on this machine")
    return cc


@pytest.fixture
def emulated(emulator_ready: None, tmp_path: Path) -> Iterator[Callable[..., EmulatedBoard]]:
    """Factory: ``emulated(board)`` starts a board recording to ``tmp_path``; all are stopped
    at the end of the test."""
    boards: list[EmulatedBoard] = []

    def start(board: str = "mega2560_ramps", **kwargs: Any) -> EmulatedBoard:
        name = f"{board}-{len(boards)}"
        emu = start_emulator(
            board,
            record=tmp_path / f"{name}.rec",
            stats=tmp_path / f"{name}.json",
            **kwargs,
        )
        boards.append(emu)
        return emu

    yield start
    for emu in boards:
        emu.stop()
