"""Image files read within limits: the size a file declares is checked before it is decoded.

A PNG of 48 kB may declare 20,000 x 20,000 pixels; ``cv2.imread`` then allocates 1.2 GB for it
(six such "face photos" take the machine's memory). OpenCV's own guard
(``OPENCV_IO_MAX_IMAGE_PIXELS``, 2^30 pixels) is read once when the library loads and is far too
generous. Here the width and height are read from the file's header (PNG, JPEG, BMP, TIFF and
WebP: the formats of :data:`vision.scan.IMAGE_SUFFIXES`, recognised by content as OpenCV does),
refused past :data:`MAX_IMAGE_PIXELS`, and only then decoded. A file of none of these formats is
refused by name. Pure apart from reading the file.

:func:`read_regular` reads the other files vision is handed (calibrations, RGB scans) the same
careful way: only a regular file, never more than a limit.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from pathlib import Path
from typing import BinaryIO

import cv2
import numpy as np
import numpy.typing as npt

from vision.errors import CaptureError

__all__ = ["MAX_IMAGE_PIXELS", "image_size", "read_image", "read_regular"]

#: Largest image decoded (pixels): 64 MP, e.g. 9248 x 6936; a 4K frame is 8.3 MP.
MAX_IMAGE_PIXELS = 64_000_000

# JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic ...): they hold the size
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def read_image(path: str | Path) -> npt.NDArray[np.uint8]:
    """The BGR uint8 image in ``path``; :class:`CaptureError` names the file when it cannot be
    read, is of no known format, declares more than :data:`MAX_IMAGE_PIXELS` or does not
    decode."""
    p = Path(path)
    if p.exists() and not p.is_file():  # a folder, a FIFO (opening it would wait), a device
        raise CaptureError(f"cannot read image {p}: not a regular file")
    try:
        with p.open("rb") as file:
            size = image_size(file)
    except OSError as exc:
        raise CaptureError(f"cannot read image {p}: {exc.strerror}") from exc
    except (ValueError, struct.error):
        size = None
    if size is None:
        raise CaptureError(
            f"cannot decode image {p}: not a PNG, JPEG, BMP, TIFF or WebP file (or its header "
            "is cut short)"
        )
    width, height = size
    if width * height > MAX_IMAGE_PIXELS:
        raise CaptureError(
            f"image {p} declares {width}x{height} pixels; at most {MAX_IMAGE_PIXELS:,} are "
            "decoded: scale the photo down"
        )
    img = cv2.imread(str(p), cv2.IMREAD_COLOR)
    if img is None:
        raise CaptureError(f"cannot decode image {p}; is it a PNG/JPEG file?")
    return np.asarray(img, dtype=np.uint8)


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``; ``OSError`` (the reason in ``strerror``) for
    anything else or a file longer than ``limit``. A FIFO is opened without waiting for a
    writer (``O_NONBLOCK``, which a regular file ignores) and refused; a device is not read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        raw = file.read(limit + 1)
    if len(raw) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return raw


def image_size(file: BinaryIO) -> tuple[int, int] | None:
    """(width, height) declared by the header of an image file; None for an unknown format.
    Raises ``ValueError`` / ``struct.error`` for a header cut short."""
    head = file.read(32)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head.startswith(b"\xff\xd8"):
        file.seek(2)
        return _jpeg_size(file)
    if head.startswith(b"BM") and len(head) >= 26:
        width, height = struct.unpack("<ii", head[18:26])
        return abs(int(width)), abs(int(height))
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        file.seek(0)
        return _tiff_size(file)
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp_size(head)
    return None


def _jpeg_size(file: BinaryIO) -> tuple[int, int] | None:
    while True:
        byte = file.read(1)
        if not byte:
            return None
        if byte != b"\xff":
            continue
        marker = file.read(1)
        while marker == b"\xff":  # fill bytes
            marker = file.read(1)
        if not marker:
            return None
        code = marker[0]
        if code == 0xD8 or 0xD0 <= code <= 0xD7 or code == 0x01:  # no length field
            continue
        (length,) = struct.unpack(">H", file.read(2))
        if code in _SOF:
            _, height, width = struct.unpack(">BHH", file.read(5))
            return int(width), int(height)
        if code == 0xDA:  # start of scan before any frame header
            return None
        file.seek(length - 2, 1)


def _tiff_size(file: BinaryIO) -> tuple[int, int] | None:
    head = file.read(8)
    order = "<" if head[:2] == b"II" else ">"
    (ifd,) = struct.unpack(order + "I", head[4:8])
    file.seek(ifd)
    (count,) = struct.unpack(order + "H", file.read(2))
    entries = file.read(12 * min(count, 1024))
    found: dict[int, int] = {}
    for k in range(len(entries) // 12):
        entry = entries[12 * k : 12 * k + 12]
        tag, kind = struct.unpack(order + "HH", entry[:4])
        if tag in (256, 257):  # ImageWidth, ImageLength: SHORT or LONG
            fmt = order + ("H" if kind == 3 else "I")
            found[tag] = int(struct.unpack(fmt, entry[8 : 8 + struct.calcsize(fmt)])[0])
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    kind = head[12:16]
    if kind == b"VP8 ":
        width, height = struct.unpack("<HH", head[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if kind == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X":
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None
