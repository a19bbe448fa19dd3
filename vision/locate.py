"""Locating stickers in an image, and sampling their colour.

Robot mode: the sticker sites of a view come from its calibration (:mod:`vision.calibration`);
:func:`sample_sites` reads each one.

Free mode: :func:`find_grid` finds the N×N grid of one face in an arbitrary photo:

1. sticker candidates are square-ish bright blobs cut out by the dark gaps of the cube body,
   found at several brightness thresholds (on a downscaled copy, for speed);
2. candidates of similar size and angle vote for a lattice (pitch and direction from the
   candidates themselves); the largest consistent lattice wins, outliers (background clutter)
   drop out;
3. N is the lattice's extent (unless given); a homography (affine with few points) fitted from
   lattice coordinates to image positions places every sticker, including those that were not
   detected (glare, a sticker that merges with the background).

Sampling (:func:`sample_sites`): an inner square patch of each sticker, converted to L*a*b*;
glare pixels (clipped in a channel the sticker itself does not reach: a clipped pixel of a
white or yellow at the clip point is a censored reading and kept; nothing is dropped when the
whole patch is clipped, as white stickers in strong light are) and pixels far from the patch's
median lightness (softer highlights, the black border) are
rejected, and the per-channel median of the rest is the sample. (Keeping only the darker,
least-glared pixels was tried and rejected: it pulls orange towards red on real photos.)
A sticker whose sample is clipped in two or more channels (a white or a yellow at the clip
point, which then read alike) takes its hue from its rim instead, where the sticker's edge
falls off towards the dark body and no channel is clipped (:func:`_rim_chroma`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from vision.calibration import StickerSite
from vision.colour import CLIP_LEVEL, FloatArray
from vision.errors import GridNotFoundError, ScanInputError, SizeMismatchError

__all__ = ["GridFit", "find_grid", "sample_sites"]

log = logging.getLogger(__name__)

#: Free-mode detection runs on a copy whose longer side is at most this many pixels.
DETECT_MAX_SIDE = 800
#: Shortest side (after that scaling) an image may have to be searched for a grid.
MIN_DETECT_SIDE = 16
#: Largest N free mode will infer.
MAX_FREE_N = 9
#: Lattice fit tolerance, in lattice units.
LATTICE_TOLERANCE = 0.22
#: A pixel with a channel at or above this level is clipped (glare or overexposure).
CLIPPED_LEVEL = round(CLIP_LEVEL)
#: Clipped pixels are dropped unless they make up more than this share of a patch.
CLIPPED_MAX_SHARE = 0.85
#: A clipped pixel is a censored reading, not glare, in a channel whose median over the patch
#: is within this many levels of the clip point (the sensor noise of a bright channel).
CENSORED_BAND = 12
#: Samples per patch side at most (patches are subsampled beyond this).
PATCH_SAMPLES = 24
#: Use the sticker's rim to recover the hue of a sticker clipped in two or more channels.
RIM_CHROMA = True
#: The rim: pixels of the square of this many patch half-sizes around the centre.
RIM_REACH = 1.6
#: Samples per side of the rim's square at most (the rim is a thin band: denser than a patch).
RIM_SAMPLES = 64
#: Rim pixels used: every channel under the clip, the brightest at least this share of it.
RIM_MIN_SHARE = 0.6
#: The rim must reach the dark body: the darkest :data:`RIM_BODY_SHARE` of its pixels under
#: this share of the clip point (otherwise pixels under the clip are only noise).
RIM_BODY_SHARE = 0.05
RIM_BODY_LEVEL = 0.5
#: Fewest rim pixels to trust.
RIM_MIN_PIXELS = 12


@dataclass(frozen=True, slots=True)
class GridFit:
    """A face grid found in a free photo."""

    n: int
    sites: tuple[StickerSite, ...]
    detected: int  # stickers found directly (the rest were placed by the lattice)
    pitch: float  # pixels from one sticker centre to the next


def sample_sites(image: npt.ArrayLike, sites: Sequence[StickerSite]) -> FloatArray:
    """L*a*b* of each site (shape ``(len(sites), 3)``), from a BGR uint8 image."""
    img = np.asarray(image)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ScanInputError(f"expected a BGR uint8 image, got shape {img.shape} {img.dtype}")
    patches = []
    for s in sites:
        half = max(1.0, s.patch_half_size())
        patches.append(_patch(img, s, half))
    sizes = [p.shape[0] for p in patches]
    raw = np.concatenate(patches)
    stacked = raw.reshape(1, -1, 3).astype(np.float32) / 255.0
    lab = cv2.cvtColor(stacked, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float64)
    out = np.empty((len(sites), 3))
    start = 0
    for i, size in enumerate(sizes):
        px = lab[start : start + size]
        start += size
        patch = raw[start - size : start]
        keep = _not_glare(patch)
        px = px[keep]
        light = px[:, 0]
        med = np.median(light)
        mad = np.median(np.abs(light - med)) * 1.4826
        near = np.abs(light - med) <= max(3.0 * mad, 4.0)
        out[i] = np.median(px[near], axis=0)
        if RIM_CHROMA:
            bgr = np.median(patch[keep][near], axis=0)
            if int((bgr >= CLIPPED_LEVEL).sum()) >= 2:
                rim = _rim_chroma(img, sites[i])
                if rim is not None:
                    out[i] = _to_lab(rim * float(bgr.max()))
    return out


def _rim_chroma(img: npt.NDArray[np.uint8], s: StickerSite) -> FloatArray | None:
    """BGR chromaticity (largest channel 1) of a sticker from its rim, where its edge falls off
    towards the dark body: there the light is dimmer and no channel is clipped, so the hue the
    clipped centre hides is seen (a white and a yellow that both read 255/255/255 in the
    middle differ in blue at the rim). None when too few rim pixels qualify."""
    half = max(1.0, s.patch_half_size()) * RIM_REACH
    px = _patch(img, s, half, RIM_SAMPLES).astype(np.float64)
    top = px.max(axis=1)
    if float(np.quantile(top, RIM_BODY_SHARE)) >= RIM_BODY_LEVEL * CLIPPED_LEVEL:
        return None  # no dark body in reach: no fall-off, only noise, under the clip
    ok = (top < CLIPPED_LEVEL - 5) & (top >= RIM_MIN_SHARE * CLIPPED_LEVEL)
    if int(ok.sum()) < RIM_MIN_PIXELS:
        return None
    chroma = np.median(px[ok] / top[ok, None], axis=0)
    result: FloatArray = chroma / chroma.max()
    return result


def _to_lab(bgr: FloatArray) -> FloatArray:
    one = np.clip(bgr, 0.0, 255.0).reshape(1, 1, 3).astype(np.float32) / 255.0
    result: FloatArray = cv2.cvtColor(one, cv2.COLOR_BGR2Lab).reshape(3).astype(np.float64)
    return result


def _not_glare(bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Which pixels of a patch to keep: all but the glare.

    A pixel with a channel at the clip point is either glare (a highlight on the sticker) or
    a *censored* reading of a channel that is itself at the clip point (a white or a yellow
    in bright light, noise pushing some of its pixels over): only the first is dropped. A
    clipped pixel is glare when it is clipped in a channel whose median over the patch's
    unclipped pixels is below the clip point by more than :data:`CENSORED_BAND` levels.
    (Dropping every clipped pixel keeps only the darker half of a noisy white, a bias
    towards grey that made white and yellow look alike; the median over the unclipped pixels,
    not all of them, so that a glare spot covering most of a green does not make its green
    channel look bright.) When nearly all of the patch is clipped (a white in strong light)
    nothing is dropped."""
    over = bgr >= CLIPPED_LEVEL  # (m, 3)
    clipped = over.any(axis=1)
    share = float(clipped.mean())
    if share == 0.0 or share >= CLIPPED_MAX_SHARE:
        return np.ones(bgr.shape[0], dtype=bool)
    bright = np.median(bgr[~clipped], axis=0) >= CLIPPED_LEVEL - CENSORED_BAND  # (3,)
    glare = (over & ~bright[None, :]).any(axis=1)
    keep: npt.NDArray[np.bool_] = ~glare
    return keep


def _patch(
    img: npt.NDArray[np.uint8], s: StickerSite, half: float, samples: int = PATCH_SAMPLES
) -> npt.NDArray[np.uint8]:
    h, w = img.shape[:2]
    x0, x1 = round(s.centre[0] - half), round(s.centre[0] + half) + 1
    y0, y1 = round(s.centre[1] - half), round(s.centre[1] + half) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    # the centre itself must be in the image: a patch clipped down to the image's edge reads
    # the frame's border, not the sticker (a calibration made at a larger resolution)
    if x1 <= x0 or y1 <= y0 or not (0 <= s.centre[0] < w and 0 <= s.centre[1] < h):
        raise ScanInputError(
            f"sticker {s.face.name}[{s.row},{s.col}] at ({s.centre[0]:.0f}, "
            f"{s.centre[1]:.0f}) is outside the {w}x{h} image; recalibrate this view"
        )
    step = max(1, (x1 - x0) // samples, (y1 - y0) // samples)
    result: npt.NDArray[np.uint8] = img[y0:y1:step, x0:x1:step].reshape(-1, 3)
    return result


# ---------------------------------------------------------------------------------------------
# Free mode


@dataclass(frozen=True, slots=True)
class _Blob:
    x: float
    y: float
    size: float  # sqrt(area)
    angle: float  # radians, modulo 90°


def _candidates(gray: npt.NDArray[np.uint8]) -> list[_Blob]:
    h, w = gray.shape
    area_img = float(h * w)
    found: list[_Blob] = []
    otsu, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    levels = sorted({int(v) for v in (otsu * 0.5, otsu * 0.8, otsu, 40, 70, 100, 140)})
    kernel = np.ones((3, 3), np.uint8)
    for level in levels:
        _, mask = cv2.threshold(gray, level, 255, cv2.THRESH_BINARY)
        mask = cv2.erode(mask, kernel)
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for c in contours:
            area = cv2.contourArea(c)
            if not area_img / 4000 <= area <= area_img / 6:
                continue
            (cx, cy), (rw, rh), angle = cv2.minAreaRect(c)
            if rw <= 0 or rh <= 0 or max(rw, rh) / min(rw, rh) > 1.4:
                continue
            if area / (rw * rh) < 0.78:
                continue
            hull = cv2.convexHull(c)
            if area / max(cv2.contourArea(hull), 1.0) < 0.9:
                continue
            found.append(_Blob(cx, cy, math.sqrt(area), math.radians(angle % 90.0)))
    # Merge the same sticker found at several thresholds (keep the largest outline).
    found.sort(key=lambda b: -b.size)
    merged: list[_Blob] = []
    for b in found:
        if all(math.hypot(b.x - m.x, b.y - m.y) > 0.5 * m.size for m in merged):
            merged.append(b)
    return merged


def _lattice(blobs: list[_Blob], seed: _Blob) -> tuple[list[tuple[int, int, _Blob]], FloatArray]:
    """Blobs consistent with a lattice through ``seed``: (i, j, blob) and the basis (2, 2)."""
    similar = [
        b
        for b in blobs
        if 0.75 < b.size / seed.size < 1.33
        and abs(math.remainder(b.angle - seed.angle, math.pi / 2)) < math.radians(12)
    ]
    if len(similar) < 2:
        return [], np.eye(2)
    others = [b for b in similar if b is not seed]
    dists = sorted(math.hypot(b.x - seed.x, b.y - seed.y) for b in others)
    near = [d for d in dists if d > 0.8 * seed.size]
    if not near:
        return [], np.eye(2)
    pitch = near[0]
    if pitch > 2.0 * seed.size:
        return [], np.eye(2)
    theta = math.remainder(seed.angle, math.pi / 2)  # closest to the image x axis
    u = np.array([math.cos(theta), math.sin(theta)]) * pitch
    v = np.array([-math.sin(theta), math.cos(theta)]) * pitch
    basis = np.stack([u, v], axis=1)
    inv = np.linalg.inv(basis)
    members = []
    for b in similar:
        q = inv @ np.array([b.x - seed.x, b.y - seed.y])
        r = np.round(q)
        if np.all(np.abs(q - r) < LATTICE_TOLERANCE) and np.all(np.abs(r) <= MAX_FREE_N):
            members.append((int(r[0]), int(r[1]), b))
    # One blob per lattice cell (the one nearest its ideal position).
    cells: dict[tuple[int, int], tuple[int, int, _Blob]] = {}
    for i, j, b in members:
        cells.setdefault((i, j), (i, j, b))
    # Stickers of a face touch each other: keep the cells 4-connected to the seed's, which
    # drops background shapes that happen to sit on the lattice further away.
    connected = {(0, 0)} if (0, 0) in cells else set()
    frontier = list(connected)
    while frontier:
        i, j = frontier.pop()
        for nb in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if nb in cells and nb not in connected:
                connected.add(nb)
                frontier.append(nb)
    return [cells[c] for c in sorted(connected)], basis


def find_grid(image: npt.ArrayLike, n: int | None = None, face: Face = Face.F) -> GridFit:
    """The N×N sticker grid of the face shown in a free photo (N inferred if not given).

    Raises :class:`GridNotFoundError` when no grid of at least 2×2 stickers is found."""
    img = np.asarray(image)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ScanInputError(f"expected a BGR colour image, got shape {img.shape}")
    h, w = img.shape[:2]
    scale = min(1.0, DETECT_MAX_SIDE / max(h, w, 1))
    if min(h, w) * scale < MIN_DETECT_SIDE:
        # an empty or very thin image: nothing to find (and cv2.resize would assert)
        raise GridNotFoundError(
            f"the image is {w}x{h} pixels: too small or too narrow to show a sticker grid "
            f"(its shorter side needs {MIN_DETECT_SIDE} pixels once the longer is scaled to "
            f"{DETECT_MAX_SIDE})"
        )
    # Downscale, then take the brightest channel (stickers of every colour are bright in one),
    # with OpenCV calls: several times faster than numpy reductions on a full-HD frame.
    dsize = (int(w * scale), int(h * scale))
    small = cv2.resize(img, dsize, interpolation=cv2.INTER_LINEAR) if scale < 1 else img
    b, g, r = cv2.split(small)
    gray = np.asarray(cv2.GaussianBlur(cv2.max(cv2.max(b, g), r), (3, 3), 0), dtype=np.uint8)
    blobs = _candidates(gray)
    best: tuple[list[tuple[int, int, _Blob]], FloatArray] = ([], np.eye(2))
    for seed in blobs:
        members, basis = _lattice(blobs, seed)
        key = (len(members), -_spread(members))
        if key > (len(best[0]), -_spread(best[0])):
            best = (members, basis)
    members, basis = best
    members = _trim_sparse_border(members)
    if len(members) < 3:
        raise GridNotFoundError(
            f"no sticker grid found ({len(blobs)} sticker-like shapes, none forming a grid); "
            "check that the face fills a good part of the picture and is in focus"
        )
    if n is not None:
        _check_size(members, n)
        members = _best_window(members, n)
    imin = min(m[0] for m in members)
    jmin = min(m[1] for m in members)
    extent = max(max(m[0] for m in members) - imin, max(m[1] for m in members) - jmin) + 1
    size = n if n is not None else extent
    if size < 2 or size > MAX_FREE_N:
        raise GridNotFoundError(f"found a {extent}x{extent} grid, which is no cube face")
    # Centre the window on the detected stickers when some rows or columns were not seen.
    imax = max(m[0] for m in members)
    jmax = max(m[1] for m in members)
    i0 = imin - (size - (imax - imin + 1)) // 2
    j0 = jmin - (size - (jmax - jmin + 1)) // 2
    src = np.array([[m[0] - i0, m[1] - j0] for m in members], dtype=np.float64)
    dst = np.array([[m[2].x, m[2].y] for m in members], dtype=np.float64) / scale
    mapping = _fit(src, dst)
    pitch = float(np.linalg.norm(basis[:, 0])) / scale
    sites = []
    for j in range(size):  # image rows from the top
        for i in range(size):
            x, y = mapping(np.array([[i, j]], dtype=np.float64))[0]
            sites.append(StickerSite(face, size - 1 - j, i, (float(x), float(y)), (), 0.28 * pitch))
    log.debug(
        "grid %dx%d found with %d of %d stickers detected", size, size, len(members), size * size
    )
    return GridFit(size, tuple(sites), len(members), pitch)


def _extent(members: list[tuple[int, int, _Blob]]) -> tuple[int, int]:
    rows = max(m[0] for m in members) - min(m[0] for m in members) + 1
    cols = max(m[1] for m in members) - min(m[1] for m in members) + 1
    return rows, cols


def _trim_sparse_border(members: list[tuple[int, int, _Blob]]) -> list[tuple[int, int, _Blob]]:
    """Drop outer lattice rows and columns that hold less than half as many stickers as the
    face is wide: the rig's frame or a background shape that lines up with the lattice (a
    7x7 was read as an 8x8 that way), not a row of the cube, whose stickers are nearly all
    found."""
    while len(members) >= 4:
        edge = _sparse_edge(members)
        if edge is None:
            break
        axis, index = edge
        members = [m for m in members if (m[0] if axis == 0 else m[1]) != index]
    return members


def _sparse_edge(members: list[tuple[int, int, _Blob]]) -> tuple[int, int] | None:
    """(axis, index) of an outer row or column too sparse to be the cube's, if any."""
    width = max(_extent(members))
    if width <= 2:
        return None
    for axis in (0, 1):
        values = [m[0] if axis == 0 else m[1] for m in members]
        for index in (min(values), max(values)):
            if 2 * values.count(index) < width - 1:
                return axis, index
    return None


def _check_size(members: list[tuple[int, int, _Blob]], n: int) -> None:
    """Refuse a size given by the caller that the image contradicts: a grid found (nearly)
    complete whose extent is not N."""
    rows, cols = _extent(members)
    seen = max(rows, cols)
    complete = len(members) >= 0.8 * rows * cols and rows == cols
    if seen > n or (complete and seen != n):
        raise SizeMismatchError(
            f"the image shows a {seen}x{seen} sticker grid, not the {n}x{n} asked for; "
            f"check --size (or leave it out to infer N)"
        )


def _spread(members: list[tuple[int, int, _Blob]]) -> float:
    if not members:
        return 0.0
    return float(sum(m[2].size for m in members))


def _best_window(members: list[tuple[int, int, _Blob]], n: int) -> list[tuple[int, int, _Blob]]:
    if not members:
        return members
    best: list[tuple[int, int, _Blob]] = []
    ivals = {m[0] for m in members}
    jvals = {m[1] for m in members}
    for i0 in ivals:
        for j0 in jvals:
            inside = [m for m in members if i0 <= m[0] < i0 + n and j0 <= m[1] < j0 + n]
            if len(inside) > len(best):
                best = inside
    return best


def _fit(src: FloatArray, dst: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """A map from lattice to image coordinates: homography with enough points, else affine."""
    if src.shape[0] >= 6 and len({tuple(r) for r in src[:, :1].tolist()}) >= 2:
        hom, _ = cv2.findHomography(src, dst, 0)
        if hom is not None:

            def project(p: FloatArray) -> FloatArray:
                q = np.hstack([p, np.ones((p.shape[0], 1))]) @ hom.T
                result: FloatArray = np.asarray(q[:, :2] / q[:, 2:], dtype=np.float64)
                return result

            return project
    design = np.hstack([src, np.ones((src.shape[0], 1))])
    coef, *_ = np.linalg.lstsq(design, dst, rcond=None)

    def affine(p: FloatArray) -> FloatArray:
        result: FloatArray = np.hstack([p, np.ones((p.shape[0], 1))]) @ coef
        return result

    return affine
