"""Light that varies *across* a face, corrected in camera RGB before classification.

A face is rarely lit evenly: a lamp to one side, the shadow of a gripper or of the rig's frame
darkens a corner of it. The classifier's per-face light model (:func:`vision.references.
face_offsets`) removes one shift per face; what is left is a gain that varies smoothly from
sticker to sticker. It matters most where a channel is clipped: a white whose red and green are
at the sensor's clip point does not darken in those channels, only in blue, so in a shadow it
turns *yellower* rather than darker, and no shift of lightness corrects it (a real 4x4 scan: a
white in a shadowed row of its face reads blue 195, a yellow elsewhere 190).

The light is a gain applied before the sensor clips, so it is measured and undone in camera RGB
levels, on unclipped channels only:

1. every sticker's gain is the median over its usable channels of ``value / reference``, the
   reference being that channel's median over all stickers of the sticker's colour (a first
   reading gives the colours); a channel is usable when neither the value nor the reference is
   at the clip point or too dark to measure;
2. the gain *at* a sticker is a Gaussian-weighted mean (in sticker pitches) of the gains of the
   *other* stickers of its face, shrunk towards no change, so a sticker's own colour, which is
   what is in question, never corrects itself (a median instead, or pulling outlying gains in
   to the face's spread, made the real 4x4 scans worse: a real shadow *is* an outlier);
3. each channel that follows the light is divided by that gain; a clipped channel stays at the
   clip point (it is only a lower bound), and so does a channel the camera saturated before a
   later gain (a white that reads 151 blue on every sticker of a photo darkened to ×0.6: it
   measures no light, and correcting it would hide from the classifier that it is saturated).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vision.colour import CLIP_LEVEL, FloatArray

__all__ = ["SHADING_SIGMA", "correct_shading", "frozen_channels", "local_gains"]

IntArray = npt.NDArray[np.intp]

#: Width of the neighbourhood whose light a sticker shares (σ of a Gaussian, sticker pitches).
SHADING_SIGMA = 0.7
#: Weight of "no change" against the neighbours' evidence (in units of one adjacent sticker).
SHADING_PRIOR_WEIGHT = 0.25
#: Channels darker than this (levels) are too noisy for a ratio and are not used to measure.
SHADING_MIN_LEVEL = 24.0
#: A sticker's gain is taken no further than this factor either way before it votes: a gain
#: further from its colour's average is a sticker washed out by glare or misread in the first
#: reading, not the shading of a face (1.6 let glare on rendered 5x5/6x6 cubes shade their
#: neighbours; the real scans' shadows are within 15 %).
SHADING_MAX_GAIN = 1.3
#: Channels at or above this level are clipped (a little under :data:`CLIP_LEVEL`: a clipped
#: channel of a sample, a median of noisy pixels at the clip point, reads a few levels lower).
_CLIPPED = CLIP_LEVEL - 6.0


def frozen_channels(
    rgb: FloatArray, labels: IntArray, saturated: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.bool_]:
    """``(m, 3)``: the channels that do not follow the light: at the clip point, or of a colour
    whose channel the camera saturated before a later gain (``saturated`` ``(6, 3)`` per frame
    label, as :func:`vision.classify` finds them: the same reading on every sticker of the
    colour). Such a channel measures no light and must not be corrected."""
    frozen = rgb >= _CLIPPED
    if saturated is not None:
        frozen = frozen | np.asarray(saturated, dtype=bool)[labels]
    result: npt.NDArray[np.bool_] = frozen
    return result


def local_gains(
    rgb: FloatArray, labels: IntArray, n: int, frozen: npt.NDArray[np.bool_] | None = None
) -> FloatArray:
    """Log gain of the light at every sticker (flat, ``(6·N²,)``) relative to the scan's
    average for its colour, measured from the *other* stickers of its face (see the module
    docstring). ``rgb``: ``(6·N², 3)`` levels 0..255, ``labels``: a first reading, ``frozen``:
    channels that measure no light (:func:`frozen_channels`; default: those at the clip)."""
    m = rgb.shape[0]
    if frozen is None:
        frozen = frozen_channels(rgb, labels)
    ref = np.full((6, 3), np.nan)
    for k in range(6):
        members = rgb[labels == k]
        if members.shape[0]:
            ref[k] = np.median(members, axis=0)
    own = ref[labels]  # (m, 3)
    usable = (
        ~frozen
        & (own < _CLIPPED)
        & (rgb >= SHADING_MIN_LEVEL)
        & (own >= SHADING_MIN_LEVEL)
        & np.isfinite(own)
    )
    ratio = np.where(usable, np.log(np.maximum(rgb, 1.0) / np.where(usable, own, 1.0)), np.nan)
    has = usable.any(axis=1)
    gain = np.zeros(m)
    gain[has] = np.nanmedian(ratio[has], axis=1)
    limit = float(np.log(SHADING_MAX_GAIN))
    gain = np.clip(gain, -limit, limit)

    rows, cols = np.divmod(np.arange(n * n), n)
    d2 = (rows[:, None] - rows[None, :]) ** 2 + (cols[:, None] - cols[None, :]) ** 2
    weight = np.exp(-d2 / (2.0 * SHADING_SIGMA**2))
    np.fill_diagonal(weight, 0.0)
    field = np.zeros(m)
    for face in range(6):
        part = slice(face * n * n, (face + 1) * n * n)
        w = weight * has[part][None, :]
        field[part] = (w @ gain[part]) / (w.sum(axis=1) + SHADING_PRIOR_WEIGHT)
    return field


def correct_shading(
    rgb: FloatArray, gains: FloatArray, frozen: npt.NDArray[np.bool_] | None = None
) -> FloatArray:
    """Divide every channel that follows the light by its sticker's gain (``exp(gains)``);
    ``frozen`` channels (default: those at the clip point) stay as they are, and no channel is
    pushed past the clip point."""
    if frozen is None:
        frozen = rgb >= _CLIPPED
    scaled = rgb / np.exp(gains)[:, None]
    corrected: FloatArray = np.where(frozen, rgb, np.minimum(scaled, _CLIPPED - 0.5))
    return corrected
