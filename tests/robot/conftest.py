"""Fixtures of the robot tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_RAM = Path("/dev/shm")


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder for the journals of the fast daemon tests: in RAM where the machine has one
    (half of those tests' time is the journal's fsyncs on a disk; durability is the
    end-to-end tests' business), else ``tmp_path``."""
    if not _RAM.is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(prefix="cuberobot-daemon-", dir=_RAM) as folder:
        yield Path(folder)
