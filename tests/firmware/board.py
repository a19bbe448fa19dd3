"""Shared helpers of the emulator tests: stop a board and read its pin record, open its pty raw,
random move sequences."""

from __future__ import annotations

import contextlib
import os
import random
import time
import tty
from collections.abc import Callable
from typing import Any

from firmware_protocol import Move, parse_moves
from firmware_protocol.emulator import EmulatedBoard
from firmware_protocol.pulses import PulseRecord, read_record

EmulatorFactory = Callable[..., EmulatedBoard]


def stop_and_read(emu: EmulatedBoard) -> tuple[dict[str, Any], PulseRecord]:
    stats = emu.stop()
    assert emu.record_path is not None
    return stats, read_record(emu.record_path)


def raw_pty(port: str) -> int:
    """The board's pty, raw, once the board has booted (its boot IDENT has arrived): bytes sent
    before the UART is initialised are lost, on a real board as here."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    tty.setraw(fd)
    deadline = time.monotonic() + 5.0
    data = b""
    while b"\x00" not in data and time.monotonic() < deadline:
        time.sleep(0.01)
        with contextlib.suppress(BlockingIOError):
            data += os.read(fd, 4096)
    assert b"\x00" in data, "no boot announcement from the emulated board"
    return fd


def random_moves(seed: int, count: int) -> list[Move]:
    rng = random.Random(seed)
    text: list[str] = []
    faces = "URFDLB"
    while len(text) < count:
        face = rng.randrange(6)
        suffix = rng.choice(("", "'", "2"))
        if rng.random() < 0.15:
            other = faces[(face + 3) % 6] + rng.choice(("", "'", "2"))
            text.append(f"{faces[face]}{suffix}+{other}")
        else:
            text.append(faces[face] + suffix)
    return parse_moves(" ".join(text))
