"""Progress of a table build: a callback ``(task, done, total)``, shown as a bar or log lines."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

__all__ = ["Progress", "no_progress", "stderr_progress"]

log = logging.getLogger(__name__)

#: progress callback: (task, done, total); total 0 means "unknown"
Progress = Callable[[str, int, int], None]

#: the shortest time between two redraws of one task's bar, in seconds
_REDRAW_S = 0.2
_BAR_WIDTH = 30


def stderr_progress() -> Progress:
    """A one-line text bar on standard error when it is a terminal; log lines otherwise."""
    last: dict[str, float] = {}

    def report(task: str, done: int, total: int) -> None:
        now = time.monotonic()
        finished = total > 0 and done >= total
        if not finished and now - last.get(task, 0.0) < _REDRAW_S:
            return
        last[task] = now
        if sys.stderr.isatty():
            frac = done / total if total else 0.0
            filled = int(_BAR_WIDTH * frac)
            bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
            sys.stderr.write(f"\rbuilding two-phase tables: {task:<22} [{bar}] {100 * frac:5.1f}%")
            if finished:
                sys.stderr.write("\n")
            sys.stderr.flush()
        elif finished or done == 0:
            log.info("building two-phase tables: %s %d/%d", task, done, total)

    return report


def no_progress(task: str, done: int, total: int) -> None:
    """The callback used when none is given."""
    return None
