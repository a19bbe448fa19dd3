"""Argument types several commands share (argparse ``type=`` callables).

Each raises :class:`argparse.ArgumentTypeError` with the value in the message, which argparse
reports as a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import errno
import math
from collections.abc import Callable
from pathlib import Path

__all__ = ["baud_rate", "cube_size", "file_path_problem", "host_port", "new_file", "seconds"]


def cube_size(largest: int) -> Callable[[str], int]:
    """A cube size N from 2 to ``largest``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"size must be a whole number, got {text!r}") from None
        if not 2 <= value <= largest:
            raise argparse.ArgumentTypeError(f"size must be between 2 and {largest}, got {value}")
        return value

    return parse


def baud_rate(text: str) -> int:
    """A serial line speed in baud (> 0)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"baud rate must be a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"baud rate must be > 0, got {value}")
    return value


def seconds(text: str) -> float:
    """A duration in seconds (> 0)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"seconds must be a finite number > 0, got {text}")
    return value


def host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of an MQTT broker."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:1883)")
    try:
        host.encode("idna")  # a label over 63 characters: UnicodeError when connecting
    except UnicodeError:
        raise argparse.ArgumentTypeError(
            f"{text[:60]!r} is not HOST:PORT: the host's parts between dots are 1..63 characters"
        ) from None
    return host, int(port)


def file_path_problem(path: Path) -> str | None:
    """Why a file cannot be created at ``path`` because of its folders (a file where a folder
    should be), or ``None``; the rest (permissions, a full disk) shows when it is written."""
    for folder in path.expanduser().absolute().parents:
        if folder.exists():
            return None if folder.is_dir() else f"{folder} is a file, not a folder"
    return None


def new_file(text: str) -> Path:
    """A path where a file (a journal) can be created: its nearest existing folder is one."""
    path = Path(text)
    try:
        path.stat()
    except OSError as exc:  # a name too long, a loop of links: is_dir() would raise it
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            shown = text if len(text) <= 80 else f"{text[:60]}…({len(text):,} characters)"
            raise argparse.ArgumentTypeError(f"{shown}: {exc.strerror}") from None
    problem = file_path_problem(path)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text}: {problem}; choose a path in a folder")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name a file in it")
    if path.exists() and not path.is_file():  # a journal on a FIFO: SQLite "disk I/O error"
        raise argparse.ArgumentTypeError(
            f"{text} is not a regular file (a device, a FIFO, a socket); name a file"
        )
    return path
