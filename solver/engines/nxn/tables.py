"""Cached distance tables of the big-cube engine (one ``int8`` array per table).

A table is built on first use by the function its caller hands in, then written to
``nxn/{name}-v{FORMAT_VERSION}.bin`` in the cache folder (``cache_dir`` engine option,
``$CUBEROBOT_CACHE_DIR``, ``$XDG_CACHE_HOME/cuberobot``, ``~/.cache/cuberobot``: the folder of
the two-phase and 2x2 tables), atomically, behind a header with the format version, the size
and a CRC32 of the payload. A missing, damaged or stale file is rebuilt; a folder that cannot
be written gives a :class:`TableError` naming it. Loaded tables are kept per process.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solver.errors import CubeError

__all__ = ["FORMAT_VERSION", "TableError", "default_cache_dir", "load_table", "table_path"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"CRNXNTB1"

Table = npt.NDArray[np.int8]


class TableError(CubeError):
    """A big-cube table cannot be written to the cache folder."""


def default_cache_dir() -> Path:
    """The cache folder shared with the other engines' tables."""
    env = os.environ.get("CUBEROBOT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "cuberobot"
    return Path.home() / ".cache" / "cuberobot"


def table_path(cache_dir: Path, name: str) -> Path:
    return cache_dir / "nxn" / f"{name}-v{FORMAT_VERSION}.bin"


def _write(path: Path, table: Table, name: str) -> None:
    payload = table.tobytes()
    header = json.dumps(
        {"format": FORMAT_VERSION, "name": name, "size": len(payload), "crc32": zlib.crc32(payload)}
    ).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise TableError(
            f"cannot write the big-cube table {name} to {path.parent}: {exc}; set "
            "CUBEROBOT_CACHE_DIR to a writable folder"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + len(header).to_bytes(4, "little") + header + payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: Path, name: str, size: int) -> Table | None:
    """The cached table, or None when missing, damaged or of another format."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        hlen = int.from_bytes(data[8:12], "little")
        header = json.loads(data[12 : 12 + hlen])
    except ValueError:
        header = {}
    payload = data[12 + hlen :] if isinstance(header, dict) and header else b""
    ok = (
        data[:8] == MAGIC
        and header.get("format") == FORMAT_VERSION
        and header.get("name") == name
        and len(payload) == size
        and zlib.crc32(payload) == header.get("crc32")
    )
    if not ok:
        if path.exists():
            log.warning("big-cube table %s is damaged or stale; rebuilding it", path)
        return None
    return np.frombuffer(payload, dtype=np.int8)


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
