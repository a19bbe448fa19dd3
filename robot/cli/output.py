"""How commands write to a terminal: colour only where the reader wants it; each error once.

Colours (ANSI escapes) are written to a terminal only, and never when the environment asks
for none: ``NO_COLOR`` set to anything but "" (https://no-color.org) or ``TERM=dumb``. The
``rich`` console of ``demo`` applies the same two rules itself; :func:`colour_wanted` is for
output written without it (``apply``'s net).

A command that drives the firmware link itself (``send``, ``home --port``) ends with the link's
error on stderr; :func:`link_errors_reported_once` keeps the link's own log line of that error
from printing it a second time (it shows with ``-v``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import TextIO

__all__ = ["colour_wanted", "link_errors_reported_once"]


def colour_wanted(stream: TextIO) -> bool:
    """Whether ``stream`` may carry ANSI colours."""
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class _RaisedInstead(logging.Filter):
    """Drops the link's ERROR records: the command raises the same error, reported once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


@contextlib.contextmanager
def link_errors_reported_once() -> Iterator[None]:
    """While a command drives the link itself, every link error ends the command with that
    error on stderr (:mod:`robot.cli.exits`), so the link's own log line of it would print it
    twice; it is kept only at ``-v`` (INFO) and more. Warnings (retries, resets) still show."""
    link_logger = logging.getLogger("firmware_protocol.link")
    if logging.getLogger().getEffectiveLevel() <= logging.INFO:
        yield
        return
    quiet = _RaisedInstead()
    link_logger.addFilter(quiet)
    try:
        yield
    finally:
        link_logger.removeFilter(quiet)
