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

__all__ = ["LINK_LOGGER", "colour_wanted", "link_errors_reported_once"]


def colour_wanted(stream: TextIO) -> bool:
    """Whether ``stream`` may carry ANSI colours."""
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


#: The logger of the firmware link (a package: its modules log under this name).
LINK_LOGGER = "firmware_protocol.link"


class _RaisedInstead(logging.Filter):
    """Drops the link's ERROR records: the command raises the same error, reported once."""

    def filter(self, record: logging.LogRecord) -> bool:
        from_link = record.name == LINK_LOGGER or record.name.startswith(LINK_LOGGER + ".")
        return not (from_link and record.levelno >= logging.ERROR)


@contextlib.contextmanager
def link_errors_reported_once() -> Iterator[None]:
    """While a command drives the link itself, every link error ends the command with that
    error on stderr (:mod:`robot.cli.exits`), so the link's own log line of it would print it
    twice; it is kept only at ``-v`` (INFO) and more. Warnings (retries, resets) still show.
    The filter sits on the root logger's handlers, where the records of every module of the
    link arrive (a filter on a parent logger would not see its children's records)."""
    root = logging.getLogger()
    if root.getEffectiveLevel() <= logging.INFO:
        yield
        return
    quiet = _RaisedInstead()
    handlers = list(root.handlers)
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)
