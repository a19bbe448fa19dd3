"""Channels at the clip, judged per sticker, for the confidences.

A colour whose channel the camera saturated reads the same level in that channel on every
sticker (:func:`saturated_levels`): the channel passes none of the scene's light, so a face's
light is not taken off it and the colour's spread there is the sensor's noise. That holds for
the stickers *at* the level. A sticker of the colour in a shade deep enough brings the channel
under the clip, and from there it follows the light like any other channel. Judged by the
colour alone, a near-clip yellow of the real 5x5x5-random-03 (244/252/248, green at the clip)
had its face's light taken off a green that cannot follow it, and read as white more cheaply
than as yellow; judged by the colour alone the other way (the colour's saturated channels kept
off the light for every sticker), a cast scan's whites at 192/254/255 took a yellow at
202/255/214 as one of theirs with blue in a shade its red did not see. So it is decided per
sticker and per colour the sticker might be (:func:`at_level`):

* at the colour's saturated level (within the sensor's noise, or above): the channel stays off
  the face's light (:func:`sticker_projectors`) and the colour's tight spread applies;
* under it: the channel follows the light, and the scene's spread reaches it
  (:func:`vision.references.colour_costs`, ``below``); but the sensor saw more than the level
  (that is why the colour clipped), so the channel can be under it only by as much as the
  sticker's light is under the colour's, and the light is what the colour's other channels
  show. What no light explains is a cost of its own (:func:`deficit_cost`).

A colour saturated in every channel (a white at the clip) has no channel that shows a sticker's
light: its stickers are all taken at the level (no face light, the colour's spread), as before
(per sticker there too, 5x5x5-random-03 reads at margin 5.3 instead of 11.7).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vision.colour import SENSOR_NOISE_LEVELS, FloatArray, rgb_jacobian

__all__ = [
    "AT_LEVEL_TOLERANCE",
    "DEFICIT_MIN_LEVEL",
    "SATURATED_MIN_LEVEL",
    "at_level",
    "chroma_spread",
    "clip_deficit",
    "deficit_cost",
    "per_sticker_hypothesis",
    "saturated_levels",
    "sticker_projectors",
]

IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

#: A bright channel (at or above this level, 0..255) that reads the same on every sticker of a
#: colour does not follow the light: the camera saturated it before any later gain (a white
#: at the camera's clip point, then darkened or white-balanced). See :func:`saturated_levels`.
SATURATED_MIN_LEVEL = 64.0
#: A sticker's channel is at its colour's saturated level when it is at most this far under it
#: (levels): the spread that makes a channel count as saturated (two σ of the sensor's noise).
AT_LEVEL_TOLERANCE = 2.0 * SENSOR_NOISE_LEVELS
#: Channels darker than this (levels) measure no light for :func:`clip_deficit` (too noisy for
#: a ratio: the same floor as the shading's, :data:`vision.shading.SHADING_MIN_LEVEL`).
DEFICIT_MIN_LEVEL = 24.0


def saturated_levels(rgb: FloatArray, labels: IntArray) -> tuple[BoolArray, FloatArray]:
    """``(saturated (6, 3), level (6, 3))``: which RGB channel of which colour (frame label)
    was saturated in the camera, and the colour's median level in every channel. A channel is
    saturated when it reads the same on every sticker of the colour (robust spread within the
    sensor's noise), as a channel that cannot go higher does, and it is bright (at least
    :data:`SATURATED_MIN_LEVEL`).

    Not only at :data:`~vision.colour.CLIP_LEVEL`: a channel the camera clipped and a later
    gain (a darker exposure setting, a white balance applied after the sensor) scaled down
    stays just as constant below it (the real rig photo's white reads 252 blue on every
    sticker, and 151 on all of them at brightness ×0.6, its yellow 250 and 150). A bright
    channel that followed the light would vary by several levels over the stickers of a
    scan (a light varying by 1.5 % moves a level-64 channel by one level); a dark one may
    not, which is why the level floor is there."""
    saturated = np.zeros((6, 3), dtype=bool)
    level = np.full((6, 3), np.nan)
    counts = np.bincount(labels, minlength=6)
    if counts.min() >= 2 and counts.max() == counts.min():
        # every colour N² times (the usual case): all six at once, one median call each
        groups = rgb[np.argsort(labels, kind="stable")].reshape(6, -1, 3)
        level = np.median(groups, axis=1)
        spread = 1.4826 * np.median(np.abs(groups - level[:, None, :]), axis=1)
        saturated = (spread <= 2.0 * SENSOR_NOISE_LEVELS) & (level >= SATURATED_MIN_LEVEL)
        return saturated, level
    for k in range(6):
        members = rgb[labels == k]
        if members.shape[0] < 2:
            continue
        level[k] = np.median(members, axis=0)
        spread_k = 1.4826 * np.median(np.abs(members - level[k]), axis=0)
        saturated[k] = (spread_k <= 2.0 * SENSOR_NOISE_LEVELS) & (level[k] >= SATURATED_MIN_LEVEL)
    return saturated, level


def at_level(rgb: FloatArray, saturated: BoolArray, level: FloatArray) -> BoolArray:
    """``(m, 6, 3)``: the channels of every sticker that are at the saturated level of each
    colour it might be (within :data:`AT_LEVEL_TOLERANCE` under it, or above it); every
    channel of a colour saturated in all three (module docstring)."""
    floor = np.where(saturated, level - AT_LEVEL_TOLERANCE, np.inf)
    floor[saturated.all(axis=1)] = -np.inf
    result: BoolArray = rgb[:, None, :] >= floor[None, :, :]
    return result


def sticker_projectors(refs: FloatArray, at: BoolArray) -> FloatArray:
    """``(m, 6, 3, 3)``: how a face's light (a shift of the invariant coordinates) moves every
    sticker if it is each colour: through the channels that follow the light only,
    ``J·diag(passes)·J⁺`` with the Jacobian of RGB → invariant coordinates at the colour
    (the identity where every channel follows it, zero where none does)."""
    jacs = rgb_jacobian(refs)  # (6, 3, 3)
    inv = np.linalg.pinv(jacs)
    passes = 1.0 - at.astype(np.float64)  # (m, 6, 3)
    result: FloatArray = np.einsum("kic,mkc,kcj->mkij", jacs, passes, inv)
    return result


def per_sticker_hypothesis(
    flat: FloatArray, offsets: FloatArray, projectors: FloatArray
) -> FloatArray:
    """``(m, 6, 3)``: every sticker's sample as it would read in the average light if it were
    each colour, its face's light taken off through its own projector
    (:func:`sticker_projectors`)."""
    m = flat.shape[0]
    faces = np.arange(m) // (m // 6)
    shift = np.einsum("mkij,mj->mki", projectors, offsets[faces])
    result: FloatArray = flat[:, None, :] - shift
    return result


def chroma_spread(rgb: FloatArray, labels: IntArray, saturated: BoolArray) -> FloatArray:
    """``(3,)`` levels: σ of each channel about its sticker's light (the mean log level of the
    sticker's channels) and its colour's chroma, pooled over the colours with no saturated
    channel and no channel under :data:`DEFICIT_MIN_LEVEL`: how far a colour's channels vary
    from sticker to sticker when the light does not enter (it cancels in a ratio); the log
    residuals are taken to levels at each sticker's own level (a dark channel's ratio is mostly
    its noise)."""
    usable = ~np.asarray(saturated.any(axis=1), dtype=bool)
    logs = np.log(np.maximum(rgb, 1.0))
    chroma = logs - logs.mean(axis=1, keepdims=True)
    keep = usable[labels] & (rgb.min(axis=1) >= DEFICIT_MIN_LEVEL)
    residual = []
    groups = 0
    for k in range(6):
        rows = keep & (labels == k)
        if rows.sum() >= 2:
            members = chroma[rows]
            residual.append((members - members.mean(axis=0)) * rgb[rows])
            groups += 1
    if not residual:
        return np.full(3, np.inf)
    stacked = np.concatenate(residual)
    dof = max(stacked.shape[0] - groups, 1)
    result: FloatArray = np.sqrt((stacked**2).sum(axis=0) / dof)
    return result


def clip_deficit(rgb: FloatArray, saturated: BoolArray, level: FloatArray) -> FloatArray:
    """``(m, 6, 3)`` levels: how far every sticker's channel is under where its colour's
    saturated channel can be, if it were each colour.

    A saturated channel of a colour reads its level, or, for a sticker in a shade deep enough,
    the level times at most that sticker's light: the sensor saw more than the level (that is
    why it clipped), so the channel falls below the clip only once the light has fallen at least
    as far. The sticker's light is read off the colour's channels that follow it (the median
    log ratio to the colour's levels); a saturated channel darker than that light allows is a
    deficit no light explains (a sticker 202/255/214 as a colour at 192/254/255 with blue at the
    clip: red says a brighter light than the colour's, blue a light 16 % dimmer)."""
    known = np.isfinite(level) & (level >= 1.0)
    follows = ~saturated & known & (level >= DEFICIT_MIN_LEVEL)  # (6, 3)
    ratio = np.log(np.maximum(rgb, 1.0)[:, None, :] / np.where(known, level, 1.0))
    # the median log ratio over the following channels (one to three of them)
    masked = np.where(follows[None], ratio, np.inf)
    ordered = np.sort(masked, axis=2)
    count = follows.sum(axis=1)  # (6,)
    lo = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[None, :, None], axis=2)
    hi = np.take_along_axis(ordered, np.maximum(count // 2, 0)[None, :, None], axis=2)
    light = np.where(count[None, :, None] > 0, np.minimum(0.5 * (lo + hi), 0.0), 0.0)
    allowed = np.where(saturated, level, 0.0)[None] * np.exp(light)
    measured = np.asarray(follows.any(axis=1), dtype=bool)
    has = measured[None, :, None] & saturated[None]
    result: FloatArray = np.where(has, np.maximum(allowed - rgb[:, None, :], 0.0), 0.0)
    return result


def deficit_cost(
    rgb: FloatArray, labels: IntArray, saturated: BoolArray, level: FloatArray
) -> FloatArray:
    """``(m, 6)``: the squared deficits of :func:`clip_deficit` in units of their noise: the
    sensor's, the scan's chroma spread (:func:`chroma_spread`) in the saturated channel, and
    the error of the light read off the colour's other channels (the error of the mean of
    their relative spreads, taken to the saturated level: a light read off one channel at 32
    levels, an orange's green, is uncertain by a tenth or more, which at the clip is 25
    levels)."""
    deficit = clip_deficit(rgb, saturated, level)
    spread = chroma_spread(rgb, labels, saturated)
    if not np.all(np.isfinite(spread)):
        return np.zeros(deficit.shape[:2])
    known = np.isfinite(level) & (level >= DEFICIT_MIN_LEVEL) & ~saturated
    each = np.where(known, spread[None, :] / np.where(known, level, 1.0), 0.0)
    relative = np.sqrt((each**2).sum(axis=1)) / np.maximum(known.sum(axis=1), 1)
    light = np.nan_to_num(level) * relative[:, None]  # (6, 3)
    sigma = np.sqrt(SENSOR_NOISE_LEVELS**2 + spread[None, :] ** 2 + light**2)
    result: FloatArray = ((deficit / sigma[None]) ** 2).sum(axis=2)
    return result
