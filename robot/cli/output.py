"""How commands write to a terminal: colour only where the reader wants it.

Colours (ANSI escapes) are written to a terminal only, and never when the environment asks
for none: ``NO_COLOR`` set to anything but "" (https://no-color.org) or ``TERM=dumb``. The
``rich`` console of ``demo`` applies the same two rules itself; :func:`colour_wanted` is for
output written without it (``apply``'s net).
"""

from __future__ import annotations

import os
from typing import TextIO

__all__ = ["colour_wanted"]


def colour_wanted(stream: TextIO) -> bool:
    """Whether ``stream`` may carry ANSI colours."""
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False
