"""Cached distance tables of the big-cube engine (one ``int8`` array per table).

A table is built on first use by the function its caller hands in, then written to
``nxn/{name}-v{FORMAT_VERSION}.bin`` in the cache folder (``cache_dir`` engine option,
``$CUBEROBOT_CACHE_DIR``, ``$XDG_CACHE_HOME/cuberobot``, ``~/.cache/cuberobot``: the folder of
the two-phase and 2x2 tables), atomically, behind a header with the format version, the size
and a CRC32 of the payload. A missing, damaged or stale file is rebuilt; a folder that cannot
be written gives a :class:`TableError` naming it. Loaded tables are kept per process.
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

__all__ = ["FORMAT_VERSION", "TableError", "default_cache_dir", "load_table", "table_path"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"CRNXNTB1"

Table = npt.NDArray[np.int8]


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


def load_table(
    name: str, size: int, build: Callable[[], Table], cache_dir: str | os.PathLike[str] | None
) -> Table:
    """The table ``name`` of ``size`` entries: from this process, the cache, or ``build()``
    (then cached)."""
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
            table = build()
            if table.shape != (size,) or table.dtype != np.int8:  # pragma: no cover
                raise AssertionError(f"table {name} was built with the wrong shape")
            log.info("built the big-cube table %s in %.1f s", name, time.perf_counter() - start)
            _write(path, table, name)
        _LOADED[key] = table
        return table
