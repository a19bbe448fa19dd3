"""Robot-mode calibration: for each camera view, where each sticker lies in the image.

A :class:`Calibration` maps view names (``"U"``, ``"URF"``, ``"cam0"`` …) to the sticker sites
seen in that view: for each site, the sticker's ``(face, row, col)`` in the project's LTR layout,
its centre in pixels and (optionally) its outline. It is written to TOML so that it can be kept
in (or next to) the robot profile and edited by hand::

    n = 3
    width = 1920
    height = 1080

    [[view]]
    name = "U"
    sites = [
      # face, row, col, x, y, half-size of the sampled patch in pixels
      ["U", 2, 0, 812.0, 402.5, 38.0],
      ...
    ]

A learned colour palette (``cuberobot vision learn-colors``) is stored the same way under
``[colours]`` with one L*a*b* triple per colour name; it only names colours and is never needed.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from solver.cube.facelets import DEFAULT_SCHEME, MAX_N, ColourScheme
from solver.cube.geometry import Face
from vision.errors import CalibrationError
from vision.imagefile import read_regular

__all__ = [
    "Calibration",
    "StickerSite",
    "ViewCalibration",
    "load_calibration",
    "save_calibration",
]

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class StickerSite:
    """One sticker as a view sees it: LTR position and pixel geometry."""

    face: Face
    row: int
    col: int
    centre: Point
    quad: tuple[Point, ...] = ()  # outline corners (top-left, top-right, bottom-right, bottom-left)
    half_size: float = 0.0  # half-side of the square patch to sample (0: derived from quad)

    def patch_half_size(self) -> float:
        """Half-side of the sampled patch in pixels: an inner part of the sticker."""
        if self.half_size > 0:
            return self.half_size
        if len(self.quad) >= 3:
            sides = [
                math.dist(self.quad[i], self.quad[(i + 1) % len(self.quad)])
                for i in range(len(self.quad))
            ]
            return 0.3 * min(sides)
        return 4.0


@dataclass(frozen=True, slots=True)
class ViewCalibration:
    name: str
    sites: tuple[StickerSite, ...]


@dataclass(frozen=True, slots=True)
class Calibration:
    """Sticker sites of every view; together the views must cover all 6·N² stickers."""

    n: int
    views: tuple[ViewCalibration, ...]
    width: int = 0
    height: int = 0
    palette_lab: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)

    def view(self, name: str) -> ViewCalibration:
        for v in self.views:
            if v.name == name:
                return v
        known = ", ".join(v.name for v in self.views) or "none"
        raise CalibrationError(f"no calibration for view {name!r} (calibrated views: {known})")

    def check_complete(self) -> None:
        """Raise :class:`CalibrationError` unless every sticker is seen exactly once."""
        seen: dict[tuple[int, int, int], str] = {}
        for v in self.views:
            for s in v.sites:
                key = (int(s.face), s.row, s.col)
                if key in seen:
                    raise CalibrationError(
                        f"sticker {s.face.name}[{s.row},{s.col}] is calibrated in views "
                        f"{seen[key]} and {v.name}; remove one"
                    )
                seen[key] = v.name
        missing = 6 * self.n * self.n - len(seen)
        if missing:
            raise CalibrationError(
                f"the calibration covers {len(seen)} of {6 * self.n * self.n} stickers; "
                "calibrate the missing views with `cuberobot vision calibrate`"
            )

    def palette(
        self, scheme: ColourScheme = DEFAULT_SCHEME
    ) -> tuple[tuple[float, float, float], ...] | None:
        """Learned L*a*b* of each scheme colour (U R F D L B order), if all six are known."""
        if not all(name in self.palette_lab for name in scheme.colours):
            return None
        return tuple(self.palette_lab[name] for name in scheme.colours)


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def save_calibration(cal: Calibration, path: str | Path) -> None:
    """Write a calibration as TOML (see the module docstring), atomically: a new file renamed
    over the old one, so a full disk or a crash never leaves half a calibration. What cannot be
    written raises ``OSError`` (nothing is left behind)."""
    lines = [
        "# cuberobot vision calibration: sticker sites per camera view (edit freely).",
        "# site = [face, row, col, x, y, half-size of the sampled patch in pixels];",
        "# row/col in the LTR layout: row 0 at the bottom of the face as seen on the net.",
        f"n = {cal.n}",
        f"width = {cal.width}",
        f"height = {cal.height}",
        "",
    ]
    if cal.palette_lab:
        lines.append("[colours]  # learned L*a*b* per colour name (optional)")
        for name, lab in cal.palette_lab.items():
            lines.append(f"{name} = [{', '.join(_fmt(v) for v in lab)}]")
        lines.append("")
    for view in cal.views:
        lines.append("[[view]]")
        lines.append(f'name = "{view.name}"')
        lines.append("sites = [")
        for s in view.sites:
            lines.append(
                f'  ["{s.face.name}", {s.row}, {s.col}, {_fmt(s.centre[0])}, '
                f"{_fmt(s.centre[1])}, {_fmt(s.patch_half_size())}],"
            )
        lines.append("]")
        lines.append("")
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text("\n".join(lines), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _number(value: object) -> float | None:
    """``value`` as a finite float, or None (a bool, text, NaN or infinity is no number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _site(raw: object, where: str, n: int) -> StickerSite:
    if not isinstance(raw, list) or len(raw) != 6:
        raise CalibrationError(f"{where}: a site is [face, row, col, x, y, half], got {raw!r}")
    face_name, row, col, x, y, half = raw
    if not isinstance(face_name, str) or face_name not in Face.__members__:
        raise CalibrationError(f"{where}: face {face_name!r} is not one of U R F D L B")
    if (
        isinstance(row, bool)
        or isinstance(col, bool)
        or not isinstance(row, int)
        or not isinstance(col, int)
        or not (0 <= row < n and 0 <= col < n)
    ):
        raise CalibrationError(f"{where}: row/col {row!r},{col!r} outside 0..{n - 1}")
    xf, yf, hf = _number(x), _number(y), _number(half)
    if xf is None or yf is None or hf is None:
        raise CalibrationError(f"{where}: x, y and half-size must be finite numbers")
    if xf < 0 or yf < 0:
        raise CalibrationError(f"{where}: the centre ({xf}, {yf}) lies left of or above the image")
    if hf <= 0:
        raise CalibrationError(f"{where}: half-size must be positive, got {hf}")
    return StickerSite(Face[face_name], row, col, (xf, yf), (), hf)


#: the largest image side a calibration may name (pixels; 0 = not recorded)
MAX_IMAGE_SIDE = 100_000


#: Largest calibration file read (bytes): a 7x7's is about 30 kB.
MAX_FILE_BYTES = 1 << 20


def _read_toml(p: Path) -> dict[str, object]:
    try:  # bounded, a regular file: /dev/zero, a FIFO or a huge file is refused, not read
        raw = read_regular(p, MAX_FILE_BYTES)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise CalibrationError(
                f"{p} is larger than {MAX_FILE_BYTES} bytes: not a calibration (a 7x7's is ~30 kB)"
            ) from exc
        raise CalibrationError(f"cannot read calibration {p}: {exc.strerror}") from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CalibrationError(
            f"{p} is not a text file (byte {exc.start} is not UTF-8): a calibration is the TOML "
            "file `cuberobot vision calibrate` writes"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"{p} is not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise CalibrationError(f"{p} is not a calibration (TOML nested too deeply)") from exc


def _views(raw: object, p: Path, n: int) -> tuple[ViewCalibration, ...]:
    if not isinstance(raw, list):
        raise CalibrationError(f"{p}: view must be [[view]] tables, got {raw!r:.40}")
    views: list[ViewCalibration] = []
    for i, raw_view in enumerate(raw):
        if not isinstance(raw_view, dict):
            raise CalibrationError(f"{p}: view #{i + 1} must be a [[view]] table")
        name = raw_view.get("name")
        if not isinstance(name, str):
            raise CalibrationError(f"{p}: view #{i + 1} has no name")
        raw_sites = raw_view.get("sites", [])
        if not isinstance(raw_sites, list):
            raise CalibrationError(f"{p} view {name}: sites must be a list of sites")
        sites = tuple(
            _site(s, f"{p} view {name} site #{k + 1}", n) for k, s in enumerate(raw_sites)
        )
        if any(v.name == name for v in views):
            raise CalibrationError(f"{p}: view {name!r} is given more than once; keep one")
        views.append(ViewCalibration(name, sites))
    return tuple(views)


def _palette(raw: object, p: Path) -> dict[str, tuple[float, float, float]]:
    if not isinstance(raw, dict):
        raise CalibrationError(f"{p}: [colours] must be a table of name = [L, a, b]")
    palette: dict[str, tuple[float, float, float]] = {}
    for name, lab in raw.items():
        values = [_number(v) for v in lab] if isinstance(lab, list) and len(lab) == 3 else []
        if len(values) != 3 or any(v is None for v in values):
            raise CalibrationError(f"{p} [colours] {name}: expected [L, a, b] (finite numbers)")
        palette[name] = (float(values[0] or 0), float(values[1] or 0), float(values[2] or 0))
    return palette


def _side(data: Mapping[str, object], key: str, p: Path) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_IMAGE_SIDE:
        raise CalibrationError(
            f"{p}: {key} must be a whole number of pixels 0..{MAX_IMAGE_SIDE}, got {value!r}"
        )
    return value


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration TOML file; errors name the file, the view and the bad entry (a file
    that is not text, not TOML or of the wrong shape is a :class:`CalibrationError`)."""
    p = Path(path)
    data = _read_toml(p)
    unknown = set(data) - {"n", "width", "height", "view", "colours"}
    if unknown:
        raise CalibrationError(f"{p}: unknown keys {sorted(unknown)}")
    n = data.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise CalibrationError(
            f"{p}: n must be a positive integer (a cube size up to {MAX_N}), got {n!r}"
        )
    views = _views(data.get("view", []), p, n)
    palette = _palette(data.get("colours", {}), p)
    return Calibration(n, views, _side(data, "width", p), _side(data, "height", p), palette)


def merge_views(base: Calibration | None, views: Iterable[ViewCalibration], n: int) -> Calibration:
    """``base`` with ``views`` added (replacing views of the same name)."""
    new = list(views)
    names = {v.name for v in new}
    kept = [v for v in base.views if v.name not in names] if base else []
    if base is not None and base.n != n:
        raise CalibrationError(f"the calibration is for N={base.n}, these images are N={n}")
    return Calibration(
        n,
        tuple(kept + new),
        base.width if base else 0,
        base.height if base else 0,
        dict(base.palette_lab) if base else {},
    )


__all__ += ["merge_views"]
