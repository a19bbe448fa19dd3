"""Vision under inputs the sets do not cover: right or refused, never a confident wrong read.

Usage::

    python bench/vision_adversarial.py [--seeds 4] [--photo-seeds 2] [--first-seed 0]
        [--sweep-part K/M | --no-sweep] [--json]

A held-out check (never used to build or tune the classifier). Every labelled real RGB scan of
``shared/vision-data/rgb-scans`` under seeded classes of input beyond the lighting the sets span,
and the real photo sets under a few photo-level ones; per class: cases, right and accepted, wrong
and accepted, refused (a read that raises is refused). "Right" is what the stickers *show*: for
a face taken from another state of the cube, or a face given twice, the input is usually no
legal cube at all, and then every accepted read is wrong.

RGB classes (per sticker mean RGB, 0..255):

* ``strong-light``: :func:`vision.perturb.perturb_rgb`'s model at severity 1.5-3 (its own is at
  most 1); ``perturbed-twice``: ``perturb_rgb`` at severity 1 applied twice;
* ``mixed-light``: 1-3 faces under tungsten (R ×1.45, B ×0.55), the others under daylight;
* ``tint``: one strong colour cast on everything (each channel ×e^±0.9, then normalised);
* ``low-light``: exposure ×0.08-0.25 with sensor noise σ 1.5-5, rounded to levels;
* ``over-exposure``: ×1.6-3, clipped;
* ``glare``: 2-8 stickers blended 40-90 % towards white;
* ``centre-logo``: a dark logo over 40-70 % of U's centre sticker (a corner on the 2x2);
* ``other-brand``: one colour of another brand of stickers (its RGB ×e^±0.35 per channel);
* ``missing-sticker``: 1-2 stickers 60-100 % black plastic; ``finger``: one sticker 30-60 %
  under a grey gripper finger;
* ``channel-swap``: one face's RGB channels permuted;
* ``halfway``: one sticker moved 35-65 % of the way to a sticker of another colour;
* ``moved-face``: one face from the cube after a random turn (the cube moved between shots);
* ``face-twice``: one face's samples replaced by another face's, turned;
* ``face-turned``: one face's samples turned by 90°, 180° or 270° (a camera mounted turned).

The ``turned-face-sweep`` (kind ``sweep``, one row per cube size and one for all): every real
scan with each face taken after each of the 15 outer turns that change what it shows (a turn of
the opposite face leaves it as it was), the other faces before: 90 reads a scan, 2,700 in all
(the gripper slipped or a face turned between photos). No seeds; ``--sweep-part K/M`` reads the
scans whose index modulo M is K only (``0/2`` and ``1/2`` to tune on one half and confirm on the
other), ``--no-sweep`` none.

Photo classes (free mode, the given photo sets): ``jpeg-q10``, ``motion-blur`` (a 15-pixel
line at 1920 px), ``tint-strong`` (B ×0.55, R ×1.45 on every image), ``tungsten-one-face``
(that cast on one image only), ``low-light`` (×0.2, noise σ 3), ``over-exposure`` (×2.2),
``photo-twice`` (one face's photo given for another face too).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
_HERE = Path(__file__).resolve().parent
# (bench/'s own helper module first, while bench/ is still on sys.path)
import _args  # noqa: E402

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

from solver.cube.facelets import Cube, sequence_permutation  # noqa: E402
from solver.cube.notation import parse  # noqa: E402
from vision.errors import VisionError  # noqa: E402
from vision.perturb import perturb_rgb  # noqa: E402
from vision.rgbfile import load_rgb_scan  # noqa: E402
from vision.scan import load_face_images, read_cube, read_rgb  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "vision-data"

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
UInt8Image = npt.NDArray[np.uint8]
#: An RGB class: (rgb (6, N, N, 3), the colours shown (6, N, N), rng) -> (rgb, colours shown)
RgbClass = Callable[[FloatArray, IntArray, np.random.Generator], tuple[FloatArray, IntArray]]

TUNGSTEN = np.array([1.45, 1.0, 0.55])
DAYLIGHT = np.array([0.85, 1.0, 1.25])


def _clip(x: FloatArray) -> FloatArray:
    return np.clip(x, 0.0, 255.0)


def strong_light(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    s = rng.uniform(1.5, 3.0)
    x = rgb / 255.0
    exposure = np.exp(rng.uniform(-0.7, 0.5) * s)
    balance = np.exp(rng.uniform(-0.3, 0.3, 3) * s)
    per_face = np.exp(rng.normal(0.0, 0.15 * s, (6, 1, 1, 1)))
    gamma = np.exp(rng.uniform(-0.25, 0.25) * s)
    x = np.clip(x * exposure * balance * per_face, 0.0, 1.0) ** gamma
    return _clip(x * 255.0 + rng.normal(0.0, 4.0 * s, x.shape)), shown


def perturbed_twice(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    return perturb_rgb(perturb_rgb(rgb, rng, 1.0), rng, 1.0), shown


def mixed_light(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    tungsten = rng.choice(6, size=int(rng.integers(1, 4)), replace=False)
    x = rgb.copy()
    for f in range(6):
        x[f] *= (TUNGSTEN if f in tungsten else DAYLIGHT) * rng.uniform(0.8, 1.2)
    return _clip(x + rng.normal(0.0, 2.0, x.shape)), shown


def tint(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    gains = np.exp(rng.uniform(-0.9, 0.9, 3))
    x = rgb * gains / gains.max() * rng.uniform(0.9, 1.6)
    return _clip(x + rng.normal(0.0, 2.0, x.shape)), shown


def low_light(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    x = rgb * rng.uniform(0.08, 0.25) + rng.normal(0.0, rng.uniform(1.5, 5.0), rgb.shape)
    return np.round(_clip(x)), shown


def over_exposure(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    return _clip(rgb * rng.uniform(1.6, 3.0) + rng.normal(0.0, 2.0, rgb.shape)), shown


def _blend(
    rgb: FloatArray, rng: np.random.Generator, count: int, lo: float, hi: float, to: FloatArray
) -> FloatArray:
    x = rgb.copy().reshape(-1, 3)
    idx = rng.choice(len(x), count, replace=False)
    a = rng.uniform(lo, hi, (count, 1))
    x[idx] = x[idx] * (1.0 - a) + to * a
    return _clip(x.reshape(rgb.shape))


def glare(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    return _blend(rgb, rng, int(rng.integers(2, 9)), 0.4, 0.9, np.full(3, 255.0)), shown


def missing_sticker(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    black = np.array([25.0, 25.0, 28.0])
    return _blend(rgb, rng, int(rng.integers(1, 3)), 0.6, 1.0, black), shown


def finger(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    return _blend(rgb, rng, 1, 0.3, 0.6, np.full(3, 60.0)), shown


def centre_logo(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    """A dark logo over 40-70 % of U's sticker (N//2, N//2): the centre for odd N, a centre
    sticker for even N ≥ 4, a corner sticker on the 2x2."""
    n = rgb.shape[1]
    x = rgb.copy()
    a = rng.uniform(0.4, 0.7)
    x[0, n // 2, n // 2] = x[0, n // 2, n // 2] * (1.0 - a) + np.array([40.0, 40.0, 45.0]) * a
    return x, shown


def other_brand(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    colour = int(rng.integers(6))
    x = rgb.copy()
    x[shown == colour] *= np.exp(rng.uniform(-0.35, 0.35, 3))
    return _clip(x + rng.normal(0.0, 2.0, x.shape)), shown


def channel_swap(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    x = rgb.copy()
    f = int(rng.integers(6))
    x[f] = x[f][..., rng.permutation(3) if rng.random() < 0.5 else [2, 1, 0]]
    return x, shown


def halfway(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    flat, colours = rgb.copy().reshape(-1, 3), shown.reshape(-1)
    i = int(rng.integers(len(flat)))
    j = int(rng.choice(np.flatnonzero(colours != colours[i])))
    t = rng.uniform(0.35, 0.65)
    flat[i] = flat[i] * (1.0 - t) + flat[j] * t
    return flat.reshape(rgb.shape), shown


def moved_face(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    n = rgb.shape[1]
    move = f"{rng.choice(list('URFDLB'))}{rng.choice(['', chr(39), '2'])}"
    if n > 3 and rng.random() < 0.5:
        move = f"{int(rng.integers(2, n // 2 + 1))}{move}"
    perm = sequence_permutation(parse(move), n)  # new = old[perm]
    f = int(rng.integers(6))
    x, colours = rgb.copy(), shown.copy()
    x[f] = rgb.reshape(-1, 3)[perm].reshape(rgb.shape)[f]
    colours[f] = shown.reshape(-1)[perm].reshape(shown.shape)[f]
    return x, colours


def face_twice(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    f, g = (int(v) for v in rng.choice(6, 2, replace=False))
    k = int(rng.integers(4))
    x, colours = rgb.copy(), shown.copy()
    x[f], colours[f] = np.rot90(rgb[g], k), np.rot90(shown[g], k)
    return x, colours


def face_turned(rgb: FloatArray, shown: IntArray, rng: np.random.Generator) -> Any:
    f, k = int(rng.integers(6)), int(rng.integers(1, 4))
    x, colours = rgb.copy(), shown.copy()
    x[f], colours[f] = np.rot90(rgb[f], k), np.rot90(shown[f], k)
    return x, colours


RGB_CLASSES: dict[str, RgbClass] = {
    "strong-light": strong_light,
    "perturbed-twice": perturbed_twice,
    "mixed-light": mixed_light,
    "tint": tint,
    "low-light": low_light,
    "over-exposure": over_exposure,
    "glare": glare,
    "other-brand": other_brand,
    "centre-logo": centre_logo,
    "missing-sticker": missing_sticker,
    "finger": finger,
    "channel-swap": channel_swap,
    "halfway": halfway,
    "moved-face": moved_face,
    "face-twice": face_twice,
    "face-turned": face_turned,
}


FACE_NAMES = "URFDLB"
OPPOSITE = {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}
OUTER_TURNS = tuple(f"{face}{amount}" for face in FACE_NAMES for amount in ("", "'", "2"))


def turned_faces(rgb: FloatArray, shown: IntArray) -> list[tuple[str, FloatArray, IntArray]]:
    """Each face taken after each outer turn that changes it, the others before: (what, rgb,
    colours shown)."""
    n = rgb.shape[1]
    cases = []
    for f, face in enumerate(FACE_NAMES):
        for turn in OUTER_TURNS:
            if turn[0] == OPPOSITE[face]:
                continue
            perm = sequence_permutation(parse(turn), n)  # new = old[perm]
            x, colours = rgb.copy(), shown.copy()
            x[f] = rgb.reshape(-1, 3)[perm].reshape(rgb.shape)[f]
            colours[f] = shown.reshape(-1)[perm].reshape(shown.shape)[f]
            cases.append((f"{face} after {turn}", x, colours))
    return cases


def _gain(image: UInt8Image, bgr: tuple[float, float, float]) -> UInt8Image:
    return np.clip(image.astype(np.float32) * np.array(bgr, np.float32), 0, 255).astype(np.uint8)


def _motion_blur(image: UInt8Image, rng: np.random.Generator) -> UInt8Image:
    length = max(3, round(15 * max(image.shape[:2]) / 1920))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    angle = float(rng.uniform(0.0, 180.0))
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), angle, 1.0)
    kernel = cv2.warpAffine(kernel, rot, (length, length))
    kernel /= kernel.sum()
    return np.asarray(cv2.filter2D(image, -1, kernel), dtype=np.uint8)


def _jpeg(image: UInt8Image, quality: int) -> UInt8Image:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)


def _noisy(image: UInt8Image, gain: float, sigma: float, rng: np.random.Generator) -> UInt8Image:
    x = image.astype(np.float32) * gain + rng.normal(0.0, sigma, image.shape).astype(np.float32)
    return np.clip(x, 0, 255).astype(np.uint8)


TUNGSTEN_BGR = (0.55, 1.0, 1.45)
PhotoClass = Callable[[dict[str, UInt8Image], np.random.Generator], dict[str, UInt8Image]]


def _each(fn: Callable[[UInt8Image, np.random.Generator], UInt8Image]) -> PhotoClass:
    return lambda images, rng: {k: fn(v, rng) for k, v in images.items()}


def _one_face_tungsten(images: dict[str, UInt8Image], rng: np.random.Generator) -> Any:
    face = str(rng.choice(sorted(images)))
    return {k: _gain(v, TUNGSTEN_BGR) if k == face else v for k, v in images.items()}


def _photo_twice(images: dict[str, UInt8Image], rng: np.random.Generator) -> Any:
    a, b = (str(v) for v in rng.choice(sorted(images), 2, replace=False))
    return {**images, b: images[a]}


PHOTO_CLASSES: dict[str, PhotoClass] = {
    "jpeg-q10": _each(lambda img, rng: _jpeg(img, 10)),
    "motion-blur": _each(_motion_blur),
    "tint-strong": _each(lambda img, rng: _gain(img, TUNGSTEN_BGR)),
    "tungsten-one-face": _one_face_tungsten,
    "low-light": _each(lambda img, rng: _noisy(img, 0.2, 3.0, rng)),
    "over-exposure": _each(lambda img, rng: _noisy(img, 2.2, 1.0, rng)),
    "photo-twice": _photo_twice,
}


class Tally:
    def __init__(self, name: str) -> None:
        self.name = name
        self.counts = {"cases": 0, "right_accepted": 0, "wrong_accepted": 0, "refused": 0}
        self.wrong: list[str] = []

    def add(self, case: str, read: Any, shown: str) -> None:
        self.counts["cases"] += 1
        if isinstance(read, VisionError) or not read.accepted:
            self.counts["refused"] += 1
        elif read.to_facelets() == shown:
            self.counts["right_accepted"] += 1
        else:
            self.counts["wrong_accepted"] += 1
            margin = read.classification.cube_margin
            self.wrong.append(f"{case} (margin {margin:.1f})")

    def row(self, kind: str) -> dict[str, Any]:
        return {"row": kind, "class": self.name, **self.counts, "wrong_cases": self.wrong[:6]}


def _read(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except VisionError as exc:
        return exc


def _real_scans(data: Path) -> list[tuple[str, FloatArray, str]]:
    manifest = json.loads((data / "rgb-scans" / "MANIFEST.json").read_text(encoding="utf-8"))
    return [
        (name, load_rgb_scan(data / "rgb-scans" / name), meta["expected_kociemba"])
        for name, meta in sorted(manifest.items())
        if meta["expected_kociemba"] and "older" not in meta["source"]
    ]


def rgb_rows(data: Path, seeds: int, first: int = 0) -> list[dict[str, Any]]:
    cases = _real_scans(data)
    rows = []
    for name, fn in RGB_CLASSES.items():
        tally = Tally(name)
        for index, (case, rgb, expected) in enumerate(cases):
            colours = Cube.from_facelets(expected).stickers.astype(np.intp).reshape(rgb.shape[:3])
            for seed in range(first, first + seeds):
                rng = np.random.default_rng([zlib.crc32(name.encode()), index, seed])
                x, shown = fn(rgb, colours, rng)
                shown_cube = Cube(shown.astype(np.uint8), rgb.shape[1]).to_facelets()
                tally.add(f"{case} seed {seed}", _read(read_rgb, x), shown_cube)
        rows.append(tally.row("rgb"))
    return rows


def sweep_rows(data: Path, part: int = 0, parts: int = 1) -> list[dict[str, Any]]:
    """The turned-face sweep over the real scans whose index modulo ``parts`` is ``part``: a row
    per cube size, then one for all."""
    tallies: dict[str, Tally] = {}
    every = Tally("turned-face-sweep")
    for index, (case, rgb, expected) in enumerate(_real_scans(data)):
        if index % parts != part:
            continue
        n = rgb.shape[1]
        tally = tallies.setdefault(f"turned-face {n}x{n}", Tally(f"turned-face {n}x{n}"))
        colours = Cube.from_facelets(expected).stickers.astype(np.intp).reshape(rgb.shape[:3])
        for what, x, shown in turned_faces(rgb, colours):
            shown_cube = Cube(shown.astype(np.uint8), n).to_facelets()
            read = _read(read_rgb, x)
            tally.add(f"{case} {what}", read, shown_cube)
            every.add(f"{case} {what}", read, shown_cube)
    return [t.row("sweep") for _, t in sorted(tallies.items())] + [every.row("sweep")]


def _part(text: str) -> tuple[int, int]:
    try:
        part, parts = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/M (e.g. 0/2), got {text!r}") from None
    if parts < 1 or not 0 <= part < parts:
        raise argparse.ArgumentTypeError(f"expected 0 <= K < M, got {text!r}")
    return part, parts


def photo_rows(data: Path, seeds: int, first: int = 0) -> list[dict[str, Any]]:
    manifest = json.loads((data / "photos" / "MANIFEST.json").read_text(encoding="utf-8"))
    photos = {case: load_face_images(data / "photos" / case) for case in sorted(manifest)}
    rows = []
    for name, fn in PHOTO_CLASSES.items():
        tally = Tally(name)
        for index, (case, images) in enumerate(photos.items()):
            for seed in range(first, first + seeds):
                rng = np.random.default_rng([zlib.crc32(name.encode()), index, seed])
                read = _read(read_cube, fn(images, rng))
                tally.add(f"{case} seed {seed}", read, manifest[case]["expected_kociemba"])
        rows.append(tally.row("photo"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--seeds", type=_args.count(0), default=4, help="cases per real scan and class"
    )
    parser.add_argument(
        "--photo-seeds", type=_args.count(0), default=2, help="cases per photo set, class"
    )
    parser.add_argument(
        "--first-seed", type=_args.count(0, what="a seed"), default=0, help="seeds start here"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--sweep-part",
        type=_part,
        default=(0, 1),
        metavar="K/M",
        help="turned-face sweep over the real scans with index %% M == K (default 0/1: all)",
    )
    parser.add_argument("--no-sweep", action="store_true", help="skip the turned-face sweep")
    args = parser.parse_args(argv)
    for folder in ("rgb-scans", "photos"):
        if not (args.data / folder / "MANIFEST.json").is_file():
            parser.error(f"--data {args.data}: no {folder}/MANIFEST.json (the labelled sets)")
    rows = rgb_rows(args.data, args.seeds, args.first_seed)
    rows += photo_rows(args.data, args.photo_seeds, args.first_seed)
    if not args.no_sweep:
        rows += sweep_rows(args.data, *args.sweep_part)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'kind':6} {'class':18} {'cases':>5} {'right':>5} {'wrong':>5} {'refused':>7}")
    for r in rows:
        print(
            f"{r['row']:6} {r['class']:18} {r['cases']:5d} {r['right_accepted']:5d} "
            f"{r['wrong_accepted']:5d} {r['refused']:7d}  {'; '.join(r['wrong_cases'][:3])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
