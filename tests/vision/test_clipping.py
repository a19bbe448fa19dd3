"""Channels at the clip judged per sticker (vision.clipping): which channels follow a face's
light, and the deficit a saturated channel shows against the light of the sticker's others."""

from __future__ import annotations

import numpy as np

from vision.clipping import (
    AT_LEVEL_TOLERANCE,
    at_level,
    chroma_spread,
    clip_deficit,
    deficit_cost,
    per_sticker_hypothesis,
    saturated_levels,
    sticker_projectors,
)
from vision.colour import lab_to_invariant, rgb_jacobian, rgb_to_lab

#: Six colours as a bright camera sees them: white clipped in blue (a cool cast), yellow
#: clipped in green, the others following the light.
LEVELS = np.array(
    [
        [192.0, 240.0, 255.0],  # white: blue at the clip
        [140.0, 30.0, 25.0],
        [40.0, 170.0, 110.0],
        [235.0, 253.0, 200.0],  # yellow: green at the clip
        [200.0, 90.0, 50.0],
        [30.0, 100.0, 210.0],
    ]
)


def _scan(rng: np.random.Generator, n_per: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """Stickers of the six colours under a light varying by ±8 %, clipped channels constant."""
    labels = np.repeat(np.arange(6), n_per)
    light = rng.uniform(0.92, 1.08, labels.size)
    rgb = LEVELS[labels] * light[:, None]
    clipped = np.zeros((6, 3), dtype=bool)
    clipped[0, 2] = clipped[3, 1] = True
    rgb = np.where(clipped[labels], LEVELS[labels], rgb)
    rgb = np.clip(np.round(rgb + rng.normal(0.0, 1.5, rgb.shape) * ~clipped[labels]), 0, 255)
    return rgb, labels


def test_a_constant_bright_channel_is_saturated_and_a_varying_one_is_not() -> None:
    rgb, labels = _scan(np.random.default_rng(0))
    saturated, level = saturated_levels(rgb, labels)
    expected = np.zeros((6, 3), dtype=bool)
    expected[0, 2] = expected[3, 1] = True
    assert np.array_equal(saturated, expected)
    assert level[0, 2] == 255.0 and level[3, 1] == 253.0


def test_a_sticker_is_at_its_colours_level_within_the_sensor_noise() -> None:
    saturated = np.zeros((6, 3), dtype=bool)
    saturated[3, 1] = True
    saturated[0] = True  # a white saturated in every channel
    level = np.full((6, 3), 250.0)
    rgb = np.array(
        [
            [240.0, 250.0 - AT_LEVEL_TOLERANCE, 200.0],  # at yellow's level
            [240.0, 252.0, 200.0],  # above it
            [240.0, 247.0, 200.0],  # three levels under it: follows the light
        ]
    )
    at = at_level(rgb, saturated, level)
    assert at.shape == (3, 6, 3)
    assert at[:, 3, 1].tolist() == [True, True, False]
    assert not at[:, 3, [0, 2]].any()  # yellow's other channels always follow the light
    assert at[:, 0].all()  # no channel of an all-saturated colour shows a sticker's light
    assert not at[:, [1, 2, 4, 5]].any()


def test_a_face_light_reaches_a_sticker_only_through_channels_under_the_clip() -> None:
    refs = lab_to_invariant(rgb_to_lab(LEVELS))
    at = np.zeros((2, 6, 3), dtype=bool)
    at[0, 3, 1] = True  # sticker 0: green at yellow's level
    at[1, 3, :] = True  # sticker 1: every channel at it
    proj = sticker_projectors(refs, at)
    assert proj.shape == (2, 6, 3, 3)
    assert np.allclose(proj[:, 0], np.eye(3))  # nothing at white's level
    assert np.allclose(proj[1, 3], 0.0)
    jac = rgb_jacobian(refs[3])
    # a light that would move yellow's green moves sticker 0 not at all; red and blue pass
    assert np.allclose(proj[0, 3] @ jac[:, 1], 0.0, atol=1e-9)
    assert np.allclose(proj[0, 3] @ jac[:, [0, 2]], jac[:, [0, 2]])
    flat = np.zeros((12, 3))
    offsets = np.arange(18, dtype=np.float64).reshape(6, 3)
    projectors = np.broadcast_to(np.eye(3), (12, 6, 3, 3))
    x = per_sticker_hypothesis(flat, offsets, projectors)
    assert np.allclose(x[:, 2], -offsets[np.arange(12) // 2])


def test_a_saturated_channel_under_the_light_its_other_channels_show_is_a_deficit() -> None:
    saturated = np.zeros((6, 3), dtype=bool)
    saturated[0, 2] = True
    level = LEVELS.copy()
    rgb = np.array(
        [
            [202.0, 250.0, 214.0],  # red brighter than white's, blue 41 under the clip
            [170.0, 212.0, 226.0],  # a white in a shade of 0.885 in every channel
            [180.0, 230.0, 255.0],  # a white at the clip
        ]
    )
    deficit = clip_deficit(rgb, saturated, level)
    assert deficit.shape == (3, 6, 3)
    assert np.isclose(deficit[0, 0, 2], 41.0)
    assert deficit[1, 0, 2] < 1.0 and deficit[2, 0, 2] == 0.0
    assert not deficit[:, 1:].any() and not deficit[:, 0, :2].any()


def test_the_deficit_is_measured_against_the_scans_chroma_spread() -> None:
    rgb, labels = _scan(np.random.default_rng(1))
    saturated, level = saturated_levels(rgb, labels)
    spread = chroma_spread(rgb, labels, saturated)
    assert np.all((spread > 0.5) & (spread < 5.0))  # the scan's noise: σ 1.5 levels
    # every sticker of the scan is its own colour's without a deficit; the yellow-like white
    # of a cast (202/250/214 against 192/240/255 with blue at the clip) is not white's
    odd = np.vstack([rgb, [[202.0, 250.0, 214.0]]])
    cost = deficit_cost(odd, np.append(labels, 0), saturated, level)
    assert np.all(cost[np.arange(labels.size), labels] < 1.0)
    assert cost[-1, 0] > 50.0


def test_a_light_read_off_a_dark_channel_is_uncertain() -> None:
    """An orange clipped in red whose green (32 levels) is its only channel bright enough to
    show a sticker's light: a corner darkened by vignetting to red 190 with green 35 is a
    deficit of 63 levels against a light of green's, but green's noise (1.5-3 levels) is 5-10 %
    of 32 levels, 12-25 at the clip: it costs units, not the ~1,400 the scan's chroma noise in
    red alone would make it (a real photo under the seeded mix of degradations, vignetted)."""
    rng = np.random.default_rng(2)
    rgb, labels = _scan(rng)
    orange = labels == 4
    rgb[orange] = np.column_stack(
        [
            np.full(orange.sum(), 253.0),
            rng.normal(32.0, 3.0, orange.sum()),
            np.full(orange.sum(), 6.0),
        ]
    )
    saturated, level = saturated_levels(rgb, labels)
    assert saturated[4].tolist() == [True, False, False]
    corner = np.vstack([rgb, [[190.0, 35.0, 9.0]]])
    cost = deficit_cost(corner, np.append(labels, 4), saturated, level)
    assert 0.0 < cost[-1, 4] < 20.0
