"""Colour spaces and colour differences used by the classifier.

Samples are compared in CIE L*a*b* (D65, sRGB companding): Euclidean distance there is the
CIE76 colour difference, roughly perceptual, and lighting changes mostly move L* while the
sticker's hue stays in a*b*. All functions are pure numpy and work on arrays of any leading
shape ending in 3 channels.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import COLOUR_RGB, ColourScheme

__all__ = [
    "CLIP_LEVEL",
    "FloatArray",
    "invariant_to_lab",
    "lab_to_invariant",
    "lab_to_rgb",
    "nominal_lab",
    "pairwise_sq_dist",
    "rgb_jacobian",
    "rgb_to_lab",
    "sensor_noise_floor",
]

FloatArray = npt.NDArray[np.float64]

# sRGB (D65) -> XYZ, and the D65 white point.
_RGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
_XYZ_TO_RGB = np.linalg.inv(_RGB_TO_XYZ)
_WHITE = np.array([0.95047, 1.0, 1.08883])
_EPS = 216 / 24389
_KAPPA = 24389 / 27


def rgb_to_lab(rgb: npt.ArrayLike) -> FloatArray:
    """sRGB values 0..255 (any shape ``(..., 3)``) to CIE L*a*b* (L* 0..100)."""
    c = np.clip(np.asarray(rgb, dtype=np.float64) / 255.0, 0.0, 1.0)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = linear @ _RGB_TO_XYZ.T / _WHITE
    f = np.where(xyz > _EPS, np.cbrt(xyz), (_KAPPA * xyz + 16) / 116)
    lab: FloatArray = np.empty_like(f, dtype=np.float64)
    lab[..., 0] = 116 * f[..., 1] - 16
    lab[..., 1] = 500 * (f[..., 0] - f[..., 1])
    lab[..., 2] = 200 * (f[..., 1] - f[..., 2])
    return lab


#: :func:`lab_to_rgb` rounds to this many decimals of a level: the round trip RGB → L*a*b* →
#: RGB is exact only to about 1e-12 levels, and *which* way it errs depends on the CPU's vector
#: units (numpy's AVX-512 and AVX2 paths of the powers and cube roots differ in the last bit).
#: The classifier compares the round-tripped levels with thresholds (a channel at or above
#: the clip point, the shading's clip point 244, a colour saturated at a level), and 8-bit
#: samples sit exactly on them: in the real 5x5x5-random-03, yellows reading red 244 came back
#: as 243.99999999999994, under the shading's clip point, for one sticker on one machine and
#: for three others on another, and the read's margin was 0.0 on the first and 8.9 on the second.
RGB_ROUND_DECIMALS = 6


def lab_to_rgb(lab: npt.ArrayLike) -> FloatArray:
    """CIE L*a*b* back to sRGB 0..255 (clipped to the gamut), rounded to
    :data:`RGB_ROUND_DECIMALS` decimals so that the round trip of an RGB sample gives the same
    levels on every machine."""
    lab_arr = np.asarray(lab, dtype=np.float64)
    fy = (lab_arr[..., 0] + 16) / 116
    fx = fy + lab_arr[..., 1] / 500
    fz = fy - lab_arr[..., 2] / 200
    f = np.stack([fx, fy, fz], axis=-1)
    xyz = np.where(f**3 > _EPS, f**3, (116 * f - 16) / _KAPPA) * _WHITE
    linear = np.clip(xyz @ _XYZ_TO_RGB.T, 0.0, 1.0)
    c = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    result: FloatArray = np.round(np.clip(c * 255.0, 0.0, 255.0), RGB_ROUND_DECIMALS)
    return result


#: Scales of the exposure-invariant coordinates (:func:`lab_to_invariant`): chosen so that the
#: six colours spread over a range like L*a*b*'s (tens of units) and a sensor's noise stays
#: about one unit.
INVARIANT_SCALE_L = 30.0
INVARIANT_SCALE_AB = 50.0


def lab_to_invariant(lab: npt.ArrayLike) -> FloatArray:
    """L*a*b* to coordinates in which a change of exposure is a shift of the first one only.

    A light k times brighter multiplies XYZ by k; L* + 16, a* and b* are then all multiplied
    by about k^(1/3) (the cube root of CIE L*a*b*). So ``log(L* + 16)`` moves by a constant
    and ``a*/(L* + 16)``, ``b*/(L* + 16)`` (a chromaticity) do not move at all: a face lit
    brighter or darker shifts every one of its stickers alike along one axis, and red stays
    apart from orange (and white from yellow) by chromaticity, whatever the exposure."""
    arr = np.asarray(lab, dtype=np.float64)
    base = np.maximum(arr[..., 0] + 16.0, 1.0)
    out: FloatArray = np.empty_like(arr)
    out[..., 0] = INVARIANT_SCALE_L * np.log(base / 100.0)
    out[..., 1] = INVARIANT_SCALE_AB * arr[..., 1] / base
    out[..., 2] = INVARIANT_SCALE_AB * arr[..., 2] / base
    return out


def invariant_to_lab(inv: npt.ArrayLike) -> FloatArray:
    """The inverse of :func:`lab_to_invariant`."""
    arr = np.asarray(inv, dtype=np.float64)
    base = 100.0 * np.exp(arr[..., 0] / INVARIANT_SCALE_L)
    lab: FloatArray = np.empty_like(arr)
    lab[..., 0] = base - 16.0
    lab[..., 1] = arr[..., 1] * base / INVARIANT_SCALE_AB
    lab[..., 2] = arr[..., 2] * base / INVARIANT_SCALE_AB
    return lab


#: An RGB channel (0..255) at or above this level is at the sensor's clip point: glare in a
#: pixel (:mod:`vision.locate` drops such pixels), or a channel of a colour too bright for
#: the exposure (a white under strong light), which then reads the same whatever the light.
CLIP_LEVEL = 250.0

#: The noise of a sticker's sample in camera RGB (levels of 0..255, per channel, one σ): a
#: sample is the median (or mean) of a patch of 8-bit pixels, so what is left is about the
#: quantisation of one level (σ = 1/√12 ≈ 0.3) and the sensor noise the median does not
#: average away. The colour model's covariances are never tighter than this.
SENSOR_NOISE_LEVELS = 0.5


def rgb_jacobian(inv: npt.ArrayLike) -> FloatArray:
    """Jacobian of camera RGB (levels) → the invariant coordinates of :func:`lab_to_invariant`
    at the colours ``inv`` (shape ``(..., 3)``; result ``(..., 3, 3)``, row: coordinate,
    column: channel), by central differences, each colour kept one level inside the RGB
    cube."""
    rgb = np.clip(lab_to_rgb(invariant_to_lab(inv)), 1.0, 254.0)
    step = 0.5 * np.eye(3)  # (channel, 3)
    hi = lab_to_invariant(rgb_to_lab(rgb[..., None, :] + step))  # (..., channel, 3)
    lo = lab_to_invariant(rgb_to_lab(rgb[..., None, :] - step))
    result: FloatArray = np.swapaxes((hi - lo) / 1.0, -1, -2)
    return result


def sensor_noise_floor(jacobian: FloatArray, levels: float = SENSOR_NOISE_LEVELS) -> FloatArray:
    """Covariance ``(3, 3)``, in the invariant coordinates of :func:`lab_to_invariant`, of a
    ``levels`` σ noise in each RGB channel of a sample where RGB → invariant has the
    ``jacobian`` (:func:`rgb_jacobian`): ``J·σ²·Jᵀ``. Far larger for a dark colour
    (chromaticity is a ratio to a small lightness) than for a bright one."""
    result: FloatArray = levels**2 * jacobian @ jacobian.T
    return result


def pairwise_sq_dist(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """Squared Euclidean distances between rows of ``a`` (m, 3) and ``b`` (k, 3): (m, k)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    diff = x[:, None, :] - y[None, :, :]
    result: FloatArray = np.einsum("mkc,mkc->mk", diff, diff)
    return result


def nominal_lab(scheme: ColourScheme) -> FloatArray:
    """L*a*b* of each scheme colour's display RGB (U R F D L B order), shape (6, 3)."""
    return rgb_to_lab(np.array([COLOUR_RGB[name] for name in scheme.colours], dtype=np.float64))
