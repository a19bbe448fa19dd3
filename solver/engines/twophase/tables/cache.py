"""The table cache on disk: where it is, the file format, atomic writes and checked reads.

Each group of tables is one file in the cache directory's ``twophase/`` folder, named
``twophase-v{FORMAT_VERSION}-{group}.bin``; the layout is drawn in the package docstring
(:mod:`solver.engines.twophase.tables`). A file whose magic, version, size, checksum or array
list does not match raises :class:`Corrupt` on read; the loader then rebuilds it.

The checks cover the header as well as the payload: ``header_crc32`` is the CRC-32 of the
header's canonical JSON without that key, and the array list must tile the payload exactly
(each array starts where the previous one ended, its bytes are its shape times its item size,
the last one ends at the payload's end, dtypes are plain numeric ones). A file written before
``header_crc32`` existed is still accepted when its array list passes those checks, so an
upgrade does not rebuild good tables.
"""

from __future__ import annotations

import itertools
import json
import logging
import mmap
import os
import stat
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.engines.common.tablefile import default_cache_dir, write_atomic
from solver.errors import CubeError

__all__ = [
    "AXIAL_GROUPS",
    "FORMAT_VERSION",
    "GROUPS",
    "MAGIC",
    "Array",
    "Corrupt",
    "TableError",
    "default_cache_dir",
    "read_bundle",
    "remove_stale",
    "table_path",
    "write_bundle",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
MAGIC = b"CRTABLE\0"
#: the face-turn search's groups; ``moves`` comes first (every other group is built from it)
GROUPS = ("moves", "phase1axes", "phase2", "cornslice", "slicepair", "cornertwist", "cornergoal")
#: built on first use of the robot-time objective (see :func:`~.sets.load_axial_tables`)
AXIAL_GROUPS = ("axial1", "axial2", "axialgoal")

#: arrays a group's file must hold (a file of an older layout is rebuilt)
_REQUIRED_ARRAYS = {
    "axial1": (
        "axial1_axes",
        "axial_slice_twist_mask",
        "axial_slice_flip_mask",
    ),
    "axial2": ("axial2_depth", "axial_cornslice", "axial_edgeslice"),
    "axialgoal": ("axial_corner_goal", "axial_corner_goal_max"),
    "slicepair": ("slice_twist_mask", "slice_flip_mask"),
}
#: bytes before the JSON header: the magic, then the header length (uint32, little endian)
_PREFIX = len(MAGIC) + 4

Array = npt.NDArray[Any]


class TableError(CubeError):
    """The table cache cannot be used (unwritable directory, ...); the message says where."""


class Corrupt(Exception):
    """A cache file that cannot be used as it is (the message says why); it is rebuilt."""


def table_path(cache_dir: Path, group: str) -> Path:
    return cache_dir / "twophase" / f"twophase-v{FORMAT_VERSION}-{group}.bin"


def _header(group: str, arrays: dict[str, Array]) -> bytes:
    """The JSON header of a file holding ``arrays`` (the CRC runs over every payload byte)."""
    entries = []
    offset = 0
    crc = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        entries.append(
            {"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset}
        )
        offset += arr.nbytes
        crc = zlib.crc32(arr.data.cast("B"), crc)
    header: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "group": group,
        "payload": offset,
        "crc32": crc,
        "arrays": entries,
    }
    header["header_crc32"] = _header_crc(header)
    return json.dumps(header).encode()


def _header_crc(header: dict[str, Any]) -> int:
    """CRC-32 of the header's canonical JSON without its own ``header_crc32``."""
    rest = {k: v for k, v in header.items() if k != "header_crc32"}
    return zlib.crc32(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode())


#: dtypes a table may have (anything else in a header is damage, not a table)
_DTYPES = frozenset(np.dtype(t).str for t in ("u1", "i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8"))


def _check_layout(header: dict[str, Any]) -> None:
    """The array list tiles the payload exactly, with plain dtypes (see the module docs)."""
    if "header_crc32" in header and header["header_crc32"] != _header_crc(header):
        raise Corrupt("header checksum mismatch")
    entries = header.get("arrays")
    payload = header.get("payload")
    if not isinstance(entries, list) or not entries or not isinstance(payload, int):
        raise Corrupt("header has no array list or payload size")
    offset = 0
    names: set[str] = set()
    for e in entries:
        try:
            name, dtype, shape, start = e["name"], np.dtype(e["dtype"]), e["shape"], e["offset"]
        except (KeyError, TypeError) as exc:
            raise Corrupt(f"array entry {e!r} is incomplete ({exc})") from None
        if dtype.str not in _DTYPES or name in names:
            raise Corrupt(f"array {name!r}: dtype {dtype.str} or name not allowed")
        if not all(isinstance(n, int) and n >= 0 for n in shape) or start != offset:
            raise Corrupt(f"array {name!r}: shape {shape} or offset {start} does not fit")
        names.add(name)
        offset += int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if offset != payload:
        raise Corrupt(f"arrays cover {offset} bytes, the payload has {payload}")


def write_bundle(path: Path, group: str, arrays: dict[str, Array]) -> None:
    """Write ``arrays`` as ``group``'s file at ``path``: to a temporary name first, renamed when
    complete, so a crash never leaves half a file under the real name; what cannot be written
    (an unwritable folder, a full disk, a folder at ``path``) is a :class:`TableError`."""
    header = _header(group, arrays)
    chunks = (np.ascontiguousarray(arr).data.cast("B") for arr in arrays.values())
    write_atomic(
        path,
        itertools.chain((MAGIC, len(header).to_bytes(4, "little"), header), chunks),
        TableError,
        "two-phase tables",
    )


#: groups of earlier versions that a group replaces (their files are removed with its stale ones)
_REPLACES = {"phase1axes": ("phase1",)}


def remove_stale(directory: Path, group: str) -> None:
    """Delete this group's files of other format versions, and those of the groups it
    replaces."""
    for name in (group, *_REPLACES.get(group, ())):
        for old in (directory / "twophase").glob(f"twophase-v*-{name}.bin"):
            if old != table_path(directory, group):
                log.info("removing stale two-phase table %s", old)
                old.unlink(missing_ok=True)


def _map(path: Path) -> mmap.mmap:
    """The file mapped read-only (its pages are the page cache's, shared by every process that
    maps it, and never copied into this one's heap)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not wait for a writer
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Corrupt("not a regular file")
        if info.st_size == 0:
            raise Corrupt("empty file")
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def read_bundle(path: Path, group: str) -> dict[str, Array]:
    """The arrays of ``group``'s file: read-only views of the file mapped into memory (several
    processes loading the same cache share one copy); :class:`Corrupt` when the file is not a
    complete, current-format file of that group. The CRC check reads every payload byte once,
    through the mapping. Cache files are only ever replaced by a rename, never rewritten in
    place, so a mapping stays valid while a rebuild writes the new file."""
    data = _map(path)
    if data[: len(MAGIC)] != MAGIC:
        raise Corrupt("not a table file (bad magic)")
    hlen = int.from_bytes(data[len(MAGIC) : _PREFIX], "little")
    try:
        header = json.loads(data[_PREFIX : _PREFIX + hlen])
    except (ValueError, RecursionError) as exc:  # RecursionError: nested thousands deep
        raise Corrupt(f"unreadable header ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise Corrupt("header is not a JSON object")
    if header.get("format") != FORMAT_VERSION or header.get("group") != group:
        raise Corrupt(
            f"format {header.get('format')}/{header.get('group')} is not {FORMAT_VERSION}/{group}"
        )
    try:
        _check_layout(header)
    except (TypeError, ValueError, OverflowError) as exc:  # values of the wrong type
        raise Corrupt(f"header does not describe arrays ({exc})") from None
    payload = memoryview(data)[_PREFIX + hlen :]
    if len(payload) != header["payload"]:
        raise Corrupt(f"size {len(payload)} bytes, expected {header['payload']}")
    if zlib.crc32(payload) != header["crc32"]:
        raise Corrupt("checksum mismatch")
    missing = set(_REQUIRED_ARRAYS.get(group, ())) - {e["name"] for e in header["arrays"]}
    if missing:
        raise Corrupt(f"made by an older cuberobot (no {', '.join(sorted(missing))})")
    out: dict[str, Array] = {}
    for e in header["arrays"]:
        dtype = np.dtype(e["dtype"])
        count = int(np.prod(e["shape"], dtype=np.int64))
        arr = np.frombuffer(payload, dtype=dtype, count=count, offset=e["offset"])
        out[e["name"]] = arr.reshape(e["shape"])
    return out
