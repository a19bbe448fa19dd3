"""Cached distance tables of the big-cube engine (one ``int8`` array per table).

A table is built on first use by the function its caller hands in, then written to
``nxn/{name}-v{FORMAT_VERSION}.bin`` in the cache folder (``cache_dir`` engine option,
``$CUBEROBOT_CACHE_DIR``, ``$XDG_CACHE_HOME/cuberobot``, ``~/.cache/cuberobot``: the folder of
the two-phase and 2x2 tables), atomically, behind a header with the format version, the size
and a CRC32 of the payload. A missing, damaged or stale file is rebuilt; a folder that cannot
be written gives a :class:`TableError` naming it. Loaded tables are kept per process.

A build is handed a ``report(done)`` callback (entries reached so far). With a ``progress``
callback (:data:`~solver.engines.twophase.tables.progress.Progress`: ``(task, done, total)``,
the display of the two-phase table build), a build that takes longer than
:data:`PROGRESS_AFTER_S` is shown, the table's name as the task.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solver.engines.common.tablefile import default_cache_dir, read_table, write_table
from solver.errors import CubeError

__all__ = [
    "FORMAT_VERSION",
    "PROGRESS_AFTER_S",
    "Progress",
    "Report",
    "TableError",
    "default_cache_dir",
    "load_table",
    "table_path",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"CRNXNTB1"

Table = npt.NDArray[np.int8]
#: a build's progress callback: entries reached so far
Report = Callable[[int], None]
#: the caller's progress display: (task, done, total), as the two-phase table build's
Progress = Callable[[str, int, int], None]
#: builds shorter than this (seconds) are not shown
PROGRESS_AFTER_S = 2.0


class TableError(CubeError):
    """A big-cube table cannot be written to the cache folder."""


def table_path(cache_dir: Path, name: str) -> Path:
    return cache_dir / "nxn" / f"{name}-v{FORMAT_VERSION}.bin"


def _write(path: Path, table: Table, name: str) -> None:
    fields = {"format": FORMAT_VERSION, "name": name}
    write_table(path, table, MAGIC, fields, TableError, f"the big-cube table {name}")


def _read(path: Path, name: str, size: int) -> Table | None:
    """The cached table, or None when missing, damaged or of another format."""
    fields = {"format": FORMAT_VERSION, "name": name}
    return read_table(path, MAGIC, fields, size, f"the big-cube table {name}")


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], Table] = {}


def _reporter(name: str, size: int, progress: Progress | None, start: float) -> Report:
    """The ``report`` of one build: forwards to ``progress`` once the build has taken
    :data:`PROGRESS_AFTER_S` (and then every call, the last one saying it is done)."""
    shown = False

    def report(done: int) -> None:
        nonlocal shown
        if progress is None:
            return
        if shown or time.perf_counter() - start >= PROGRESS_AFTER_S:
            shown = True
            progress(name, min(done, size), size)

    return report


def load_table(
    name: str,
    size: int,
    build: Callable[[Report], Table],
    cache_dir: str | os.PathLike[str] | None,
    progress: Progress | None = None,
) -> Table:
    """The table ``name`` of ``size`` entries: from this process, the cache, or
    ``build(report)`` (then cached; shown on ``progress`` when it takes a while)."""
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    key = (str(directory), name)
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        path = table_path(directory, name)
        table = _read(path, name, size)
        if table is None:
            start = time.perf_counter()
            log.info("building the big-cube table %s (%d entries)", name, size)
            report = _reporter(name, size, progress, start)
            table = build(report)
            report(size)  # shown only when the build was
            if table.shape != (size,) or table.dtype != np.int8:  # pragma: no cover
                raise AssertionError(f"table {name} was built with the wrong shape")
            log.info("built the big-cube table %s in %.1f s", name, time.perf_counter() - start)
            _write(path, table, name)
        _LOADED[key] = table
        return table
