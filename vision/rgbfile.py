"""The mean-RGB-per-sticker scan format of ``shared/vision-data`` (rubiks-color-resolver's).

A file is a JSON object ``{"1": [R, G, B], ..., "<6N²>": [R, G, B]}``: keys are 1-based, in face
blocks of N² in the order **U, L, F, R, B, D**, each face read row by row from its top-left corner
as it lies on the usual unfolded net (U above F, D below F, L F R B in a row). Values are 0-255.

That is *not* the project's layout (faces U R F D L B, each face LTR with row 0 at the bottom,
see :mod:`solver.cube.facelets`). The conversion lives here and only here::

    file block b = (U, L, F, R, B, D)[b];  position k in the block → LTR (N-1-k//N, k%N)
"""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from vision.errors import ScanInputError
from vision.imagefile import read_regular

__all__ = ["FILE_FACE_ORDER", "dump_rgb_scan", "load_rgb_scan", "parse_rgb_scan", "to_file_order"]

#: Largest cube a scan file may hold (the CLI's --size range).
MAX_SCAN_N = 9
#: Largest scan file read (bytes): a 9x9 scan is about 10 kB.
MAX_SCAN_BYTES = 1 << 20
#: The face order of the file's blocks.
FILE_FACE_ORDER: tuple[Face, ...] = (Face.U, Face.L, Face.F, Face.R, Face.B, Face.D)


def _file_index_table(n: int) -> npt.NDArray[np.intp]:
    """``table[j]`` = flat LTR index of the file's j-th (0-based) sticker."""
    k = np.arange(n * n)
    within = (n - 1 - k // n) * n + k % n
    faces = np.array([int(f) for f in FILE_FACE_ORDER], dtype=np.intp)
    return (faces[:, None] * n * n + within[None, :]).reshape(-1).astype(np.intp)


def parse_rgb_scan(data: Mapping[str, object], source: str = "scan") -> npt.NDArray[np.float64]:
    """RGB per sticker, shape ``(6, N, N, 3)`` in LTR layout, from the decoded JSON object."""
    count = len(data)
    n = round((count / 6) ** 0.5)
    if n < 1 or 6 * n * n != count:
        raise ScanInputError(f"{source}: {count} stickers is not 6·N² for any N")
    if not 2 <= n <= MAX_SCAN_N:
        raise ScanInputError(f"{source}: a {n}x{n} cube; scans of N = 2..{MAX_SCAN_N} are read")
    rgb = np.zeros((6 * n * n, 3), dtype=np.float64)
    table = _file_index_table(n)
    for j in range(count):
        key = str(j + 1)
        value = data.get(key)
        if not isinstance(value, list | tuple) or len(value) != 3:
            raise ScanInputError(f"{source}: sticker {key} is {value!r}, expected [R, G, B]")
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in value):
            raise ScanInputError(f"{source}: sticker {key} has non-numeric RGB {value!r}")
        triple = [float(v) for v in value]
        if any(not 0 <= v <= 255 for v in triple):  # also rejects NaN
            raise ScanInputError(f"{source}: sticker {key} has RGB {value!r} outside 0..255")
        rgb[table[j]] = triple
    return rgb.reshape(6, n, n, 3)


def load_rgb_scan(path: str | Path) -> npt.NDArray[np.float64]:
    """Read a scan file; raises :class:`ScanInputError` naming the file on any format error."""
    p = Path(path)
    try:  # bounded, a regular file: /dev/zero, a FIFO or a huge file is refused, not read
        raw = read_regular(p, MAX_SCAN_BYTES)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ScanInputError(
                f"{p} is larger than {MAX_SCAN_BYTES} bytes: not an RGB scan (a 9x9 scan is "
                "about 10 kB)"
            ) from exc
        raise ScanInputError(f"cannot read RGB scan {p}: {exc.strerror}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ScanInputError(
            f"{p} is not a text file (byte {exc.start} is not UTF-8): an RGB scan is a JSON "
            'object {"1": [R, G, B], ...}; for photos give a folder: cuberobot scan IMAGE_DIR'
        ) from exc
    except json.JSONDecodeError as exc:
        raise ScanInputError(f"{p} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    except RecursionError as exc:
        raise ScanInputError(f"{p} is not an RGB scan (JSON nested too deeply)") from exc
    except ValueError as exc:  # an integer past Python's digit limit (not a JSONDecodeError)
        raise ScanInputError(f"{p} is not an RGB scan (a number in it is too long)") from exc
    if not isinstance(data, dict):
        raise ScanInputError(f"{p}: expected a JSON object of sticker number → [R, G, B]")
    return parse_rgb_scan(data, str(p))


def to_file_order(rgb: npt.ArrayLike) -> dict[str, list[int]]:
    """The inverse of :func:`parse_rgb_scan`: LTR ``(6, N, N, 3)`` to the file's JSON object."""
    arr = np.asarray(rgb, dtype=np.float64)
    n = arr.shape[1]
    flat = arr.reshape(-1, 3)
    table = _file_index_table(n)
    return {str(j + 1): [round(v) for v in flat[table[j]]] for j in range(6 * n * n)}


def dump_rgb_scan(rgb: npt.ArrayLike, path: str | Path) -> None:
    """Write a scan file in the shared format."""
    Path(path).write_text(json.dumps(to_file_order(rgb)), encoding="utf-8")
