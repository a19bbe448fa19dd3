"""One ``int8`` table in a cache file, as the 2x2 (:mod:`solver.engines.pocket`) and big-cube
(:mod:`solver.engines.nxn.tables`) engines keep theirs.

A file is 8 bytes of magic, a little-endian ``u32`` header length, a JSON header (the caller's
fields plus the payload's ``size`` and ``crc32``) and the payload. It is written atomically (a
temporary file in the same folder, then renamed) and read mapped read-only, so processes solving
at the same time share the page cache's one copy. A file that is missing, damaged or written
with other header fields reads as None: the caller rebuilds it.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import stat
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["default_cache_dir", "read_table", "write_atomic", "write_table"]

log = logging.getLogger(__name__)

_PREFIX = 12  # magic (8) + header length (4)


def default_cache_dir() -> Path:
    """``$CUBEROBOT_CACHE_DIR``, else ``$XDG_CACHE_HOME/cuberobot``, else ``~/.cache/cuberobot``:
    the one folder of every engine's tables."""
    env = os.environ.get("CUBEROBOT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cuberobot"


def write_atomic(
    path: Path, chunks: Iterable[bytes | memoryview], unwritable: type[Exception], what: str
) -> None:
    """Write ``chunks`` to ``path`` under a temporary name in the same folder, renamed once
    complete (a crash never leaves half a file under the real name); a folder that cannot be
    written, a full disk or a folder at ``path`` raises ``unwritable`` naming the place
    (``what``: the tables, for the message) and leaves no temporary file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise unwritable(
            f"cannot write {what} to {path.parent}: {exc}; set CUBEROBOT_CACHE_DIR to a "
            "writable folder"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, or a folder sitting where the file goes
        Path(tmp).unlink(missing_ok=True)
        raise unwritable(
            f"cannot write {what} to {path}: {exc.strerror or exc}; free the disk or remove "
            "what is at that path, or set CUBEROBOT_CACHE_DIR to a writable folder"
        ) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_table(
    path: Path,
    table: npt.NDArray[np.int8],
    magic: bytes,
    fields: Mapping[str, object],
    unwritable: type[Exception],
    what: str,
) -> None:
    """Write ``table`` to ``path`` behind ``magic`` and a header of ``fields``, atomically
    (:func:`write_atomic`: what cannot be written raises ``unwritable`` naming the place)."""
    payload = table.tobytes()
    header = json.dumps({**fields, "size": len(payload), "crc32": zlib.crc32(payload)}).encode()
    write_atomic(
        path, (magic, len(header).to_bytes(4, "little"), header, payload), unwritable, what
    )


def read_table(
    path: Path, magic: bytes, fields: Mapping[str, object], size: int, what: str
) -> npt.NDArray[np.int8] | None:
    """The table of ``size`` entries cached at ``path`` with the header ``fields``, or None
    when it is missing, damaged or stale (then logged, naming ``what``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not wait for a writer
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fd)
            data: bytes | mmap.mmap = (
                mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                if stat.S_ISREG(info.st_mode) and info.st_size
                else b""
            )
    except OSError:
        return None
    try:
        length = int.from_bytes(data[8:_PREFIX], "little")
        header = json.loads(data[_PREFIX : _PREFIX + length])
    except (ValueError, RecursionError):  # RecursionError: a header nested thousands deep
        header = None
    if not isinstance(header, dict):
        header = {}
    payload = memoryview(data)[_PREFIX + length :] if header else memoryview(b"")
    ok = (
        data[:8] == magic
        and all(header.get(k) == v for k, v in fields.items())
        and len(payload) == size
        and header.get("size") == size
        and zlib.crc32(payload) == header.get("crc32")
    )
    if not ok:
        log.warning("%s at %s is damaged or stale; rebuilding it", what, path)
        return None
    return np.frombuffer(payload, dtype=np.int8)
