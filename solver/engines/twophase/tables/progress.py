"""Progress of a table build: a callback ``(task, done, total)``, shown on standard error.

In a terminal each task (one per table) has its own line with a bar, redrawn in place (the
cursor moves up to it with ANSI escapes), so tasks built side by side never share a line.
Elsewhere (a pipe, a log file, ``TERM=dumb``) each task writes one plain line when it starts
and one when it ends. The display is plain text with no colour; it is drawn here rather than
with a terminal library because the solver package depends on numpy only.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "TaskLines", "no_progress", "stderr_progress"]

log = logging.getLogger(__name__)

#: progress callback: (task, done, total); total 0 means "unknown"
Progress = Callable[[str, int, int], None]

#: the shortest time between two redraws of one task's line, in seconds
_REDRAW_S = 0.2
_BAR_WIDTH = 30
_PREFIX = "building two-phase tables:"


class TaskLines:
    """The progress callback of :func:`stderr_progress`, writing to ``stream``; ``live``
    chooses the terminal display (one redrawn line per task) or plain lines."""

    def __init__(self, stream: TextIO, live: bool, prefix: str = _PREFIX) -> None:
        self._stream = stream
        self._live = live
        self._prefix = prefix
        self._order: list[str] = []
        self._started: dict[str, float] = {}
        self._drawn: dict[str, float] = {}
        self._ended: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, task: str, done: int, total: int) -> None:
        with self._lock:
            now = time.monotonic()
            finished = total > 0 and done >= total
            if task not in self._started:
                if self._live and not self._order:
                    self._write(f"{self._prefix}\n")
                self._started[task] = now
                self._order.append(task)
                if not self._live:
                    self._write(f"{self._prefix} {task} ...\n")
            if self._live:
                self._draw(task, done, total, now, finished)
            elif finished and task not in self._ended:
                self._write(f"{self._prefix} {task} done in {now - self._started[task]:.1f} s\n")
            if finished:
                self._ended.add(task)

    def _draw(self, task: str, done: int, total: int, now: float, finished: bool) -> None:
        if task in self._drawn and not finished and now - self._drawn[task] < _REDRAW_S:
            return
        if task in self._ended:
            return
        frac = min(1.0, done / total) if total else 0.0
        filled = int(_BAR_WIDTH * frac)
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        tail = f" {now - self._started[task]:.0f} s" if finished else ""
        text = f"{task:<24} [{bar}] {100 * frac:5.1f}%{tail}"
        text = text[: max(20, shutil.get_terminal_size().columns - 1)]
        if task not in self._drawn:  # a new line below the others
            self._write(f"{text}\n")
        else:
            up = len(self._order) - self._order.index(task)
            self._write(f"\x1b[{up}A\r{text}\x1b[K\x1b[{up}B\r")
        self._drawn[task] = now

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()


def stderr_progress(prefix: str = _PREFIX) -> Progress:
    """Progress on standard error: a line per task redrawn in place when it is a terminal
    (and ``TERM`` is not ``dumb``), a plain line per task start and end otherwise; ``prefix``
    heads the display (the big-cube tables use it too)."""
    live = sys.stderr.isatty() and os.environ.get("TERM", "") != "dumb"
    return TaskLines(sys.stderr, live, prefix)


def no_progress(task: str, done: int, total: int) -> None:
    """The callback used when none is given."""
    return None
