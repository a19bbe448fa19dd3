"""Seeded camera and lighting degradations, for the benchmark and the confidence calibration.

Two families:

* :data:`PHOTO_PERTURBATIONS` act on a BGR photo the way cheap webcams and room light do: JPEG
  quality 40, 50 % and 25 % scale, 5° and 15° rotation, brightness ×0.6 and ×1.4 (clipped),
  warm and cool white balance, sensor noise σ 8, blur. Each is ``f(image, rng) -> image``.
* :data:`EXTRA_PHOTO_PERTURBATIONS` are the generalisation check, never used to build or tune
  the classifier: other severities of the same (JPEG q25, brightness ×0.8/×1.2, noise σ 4 and
  σ 12) and other degradations (gamma 0.7/1.4, vignetting, defocus, a colour cast on one face
  only, a seeded mix of several at once).
* :func:`perturb_rgb` acts on a scan's mean RGB per sticker (``(6, N, N, 3)``): a random
  exposure, white balance, per-face light and gamma, clipping and per-sticker noise, with a
  ``severity`` in 0..1 that scales all of them. It turns a few real scans into many real-like
  ones, right answer known, for measuring how the confidence separates right reads from wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "EXTRA_PHOTO_PERTURBATIONS",
    "PHOTO_PERTURBATIONS",
    "perturb_photo_set",
    "perturb_rgb",
]

UInt8Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
PhotoPerturbation = Callable[[UInt8Image, np.random.Generator], UInt8Image]

#: Channel gains (B, G, R) of a warm (tungsten-like) and a cool (shade-like) white balance.
WARM_GAINS = (0.72, 0.95, 1.25)
COOL_GAINS = (1.25, 1.0, 0.78)


def _gain(image: UInt8Image, gains: tuple[float, float, float]) -> UInt8Image:
    scaled = image.astype(np.float32) * np.array(gains, dtype=np.float32)
    return np.clip(scaled, 0, 255).astype(np.uint8)


def _jpeg(image: UInt8Image, quality: int) -> UInt8Image:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)


def _scale(image: UInt8Image, factor: float) -> UInt8Image:
    h, w = image.shape[:2]
    size = (max(1, round(w * factor)), max(1, round(h * factor)))
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)


def _rotate(image: UInt8Image, degrees: float) -> UInt8Image:
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    rotated = cv2.warpAffine(image, matrix, (w, h), borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(rotated, dtype=np.uint8)


def _noise(image: UInt8Image, sigma: float, rng: np.random.Generator) -> UInt8Image:
    noisy = image.astype(np.float32) + rng.normal(0.0, sigma, image.shape).astype(np.float32)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def _blur(image: UInt8Image) -> UInt8Image:
    sigma = max(image.shape[:2]) / 800.0  # about 2.4 px at 1920: a soft focus
    return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), dtype=np.uint8)


PHOTO_PERTURBATIONS: Mapping[str, PhotoPerturbation] = {
    "jpeg-q40": lambda img, rng: _jpeg(img, 40),
    "scale-50": lambda img, rng: _scale(img, 0.5),
    "scale-25": lambda img, rng: _scale(img, 0.25),
    "rotate-5": lambda img, rng: _rotate(img, 5.0 * float(rng.choice([-1.0, 1.0]))),
    "rotate-15": lambda img, rng: _rotate(img, 15.0 * float(rng.choice([-1.0, 1.0]))),
    "bright-0.6": lambda img, rng: _gain(img, (0.6, 0.6, 0.6)),
    "bright-1.4": lambda img, rng: _gain(img, (1.4, 1.4, 1.4)),
    "wb-warm": lambda img, rng: _gain(img, WARM_GAINS),
    "wb-cool": lambda img, rng: _gain(img, COOL_GAINS),
    "noise-8": lambda img, rng: _noise(img, 8.0, rng),
    "blur": lambda img, rng: _blur(img),
}


def _gamma(image: UInt8Image, gamma: float) -> UInt8Image:
    table = np.clip(255.0 * (np.arange(256) / 255.0) ** gamma + 0.5, 0, 255).astype(np.uint8)
    return np.asarray(cv2.LUT(image, table), dtype=np.uint8)


def _vignette(image: UInt8Image, corner: float) -> UInt8Image:
    """Light falling off towards the corners (to ``corner`` of the centre's), as a cheap lens."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xs - w / 2) ** 2 + (ys - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    gain = 1.0 - (1.0 - corner) * r2
    scaled = image.astype(np.float32) * gain[:, :, None]
    result: UInt8Image = np.clip(scaled, 0, 255).astype(np.uint8)
    return result


def _defocus(image: UInt8Image) -> UInt8Image:
    """A lens out of focus: a disc kernel (radius about 5 px at 1920), not a Gaussian."""
    radius = max(1, round(max(image.shape[:2]) / 400))
    size = 2 * radius + 1
    kernel = np.zeros((size, size), np.float32)
    cv2.circle(kernel, (radius, radius), radius, 1.0, -1)
    kernel /= kernel.sum()
    return np.asarray(cv2.filter2D(image, -1, kernel), dtype=np.uint8)


def _mixed(image: UInt8Image, rng: np.random.Generator) -> UInt8Image:
    """A seeded mix: a random exposure and white balance, gamma, noise, then JPEG."""
    gains = tuple(float(g) for g in np.exp(rng.uniform(-0.15, 0.15, 3)) * rng.uniform(0.8, 1.15))
    out = _gain(image, (gains[0], gains[1], gains[2]))
    out = _gamma(out, float(np.exp(rng.uniform(-0.2, 0.2))))
    out = _noise(out, float(rng.uniform(2.0, 6.0)), rng)
    return _jpeg(out, int(rng.integers(50, 90)))


#: Gains (B, G, R) of the colour cast that ``cast-one-face`` puts on one face's image.
ONE_FACE_CAST = (0.85, 1.0, 1.18)

EXTRA_PHOTO_PERTURBATIONS: Mapping[str, PhotoPerturbation] = {
    "jpeg-q25": lambda img, rng: _jpeg(img, 25),
    "bright-0.8": lambda img, rng: _gain(img, (0.8, 0.8, 0.8)),
    "bright-1.2": lambda img, rng: _gain(img, (1.2, 1.2, 1.2)),
    "noise-4": lambda img, rng: _noise(img, 4.0, rng),
    "noise-12": lambda img, rng: _noise(img, 12.0, rng),
    "gamma-0.7": lambda img, rng: _gamma(img, 0.7),
    "gamma-1.4": lambda img, rng: _gamma(img, 1.4),
    "vignette": lambda img, rng: _vignette(img, 0.55),
    "defocus": lambda img, rng: _defocus(img),
    # set-level: the cast is put on one image only (chosen by the seed, see perturb_photo_set)
    "cast-one-face": lambda img, rng: _gain(img, ONE_FACE_CAST),
    "mixed": _mixed,
}

#: Perturbations applied to one image of a set only (the others are left as they are).
_ONE_IMAGE = frozenset({"cast-one-face"})


def perturb_photo_set(
    images: Mapping[str, UInt8Image], name: str, seed: int
) -> dict[str, UInt8Image]:
    """Every image of a set under the perturbation ``name`` of :data:`PHOTO_PERTURBATIONS` or
    :data:`EXTRA_PHOTO_PERTURBATIONS` (seeded per image; ``cast-one-face`` changes one image,
    chosen by the seed)."""
    fn = PHOTO_PERTURBATIONS.get(name) or EXTRA_PHOTO_PERTURBATIONS.get(name)
    if fn is None:
        known = ", ".join([*PHOTO_PERTURBATIONS, *EXTRA_PHOTO_PERTURBATIONS])
        raise KeyError(f"unknown perturbation {name!r}; known: {known}")
    only = int(np.random.default_rng(seed).integers(len(images))) if name in _ONE_IMAGE else None
    return {
        key: fn(img, np.random.default_rng([seed, i])) if only in (None, i) else img
        for i, (key, img) in enumerate(images.items())
    }


def perturb_rgb(rgb: npt.ArrayLike, rng: np.random.Generator, severity: float) -> FloatArray:
    """A scan's mean RGB per sticker under a random exposure, white balance, per-face light,
    gamma and noise; clipped to 0..255 like a sensor. ``severity`` 0 leaves it unchanged."""
    x = np.asarray(rgb, dtype=np.float64) / 255.0
    s = float(np.clip(severity, 0.0, 1.0))
    exposure = float(np.exp(rng.uniform(-0.7, 0.5) * s))
    balance = np.exp(rng.uniform(-0.3, 0.3, 3) * s)
    per_face = np.exp(rng.normal(0.0, 0.15 * s, (6, 1, 1, 1)))
    gamma = float(np.exp(rng.uniform(-0.25, 0.25) * s))
    x = np.clip(x * exposure * balance * per_face, 0.0, 1.0) ** gamma
    x = x * 255.0 + rng.normal(0.0, 4.0 * s, x.shape)
    result: FloatArray = np.clip(x, 0.0, 255.0)
    return result
