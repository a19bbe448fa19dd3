"""Light varying across a face (vision.shading): measured from the neighbours, undone in RGB."""

from __future__ import annotations

import numpy as np

from solver.cube.facelets import DEFAULT_SCHEME, Cube
from solver.scramble import random_state_nxn
from vision.classify import classify
from vision.colour import rgb_to_lab
from vision.shading import correct_shading, frozen_channels, local_gains

# A camera that clips red and green of white and yellow: only blue tells them apart.
_CAMERA = {
    "white": (254.0, 254.0, 226.0),
    "yellow": (254.0, 254.0, 178.0),
    "red": (230.0, 76.0, 52.0),
    "orange": (254.0, 160.0, 98.0),
    "green": (100.0, 146.0, 87.0),
    "blue": (65.0, 82.0, 84.0),
}


def _scan(cube: Cube, shade: np.ndarray) -> np.ndarray:
    """Camera RGB of ``cube`` under a gain ``shade`` (6, N, N) applied before the clip."""
    n = cube.n
    names = DEFAULT_SCHEME.colours
    rgb = np.array([_CAMERA[names[c]] for c in cube.stickers.reshape(-1)])
    true = np.where(rgb >= 254.0, 330.0, rgb)  # what the sensor would have seen unclipped
    shaded = true * shade.reshape(-1)[:, None]
    # a camera's noise (without it every colour reads the same wherever the light is even, and
    # would pass for a channel saturated in the camera)
    shaded += np.random.default_rng(7).normal(0.0, 1.5, shaded.shape)
    return np.minimum(np.round(shaded), 254.0).reshape(6, n, n, 3)


def _shadow(n: int, depth: float) -> np.ndarray:
    """Every face darker towards its top-right corner (a lamp low on the left)."""
    rows, cols = np.mgrid[0:n, 0:n] / (n - 1)
    face = 1.0 - depth * rows * cols
    return np.broadcast_to(face, (6, n, n)).copy()


def test_gains_follow_the_neighbours_not_the_sticker_itself() -> None:
    cube = Cube.solved(4).apply("R U Rw' F2 u L' 2B D")
    rgb = _scan(cube, _shadow(4, 0.3)).reshape(-1, 3)
    labels = cube.stickers.reshape(-1).astype(np.intp)
    gains = np.exp(local_gains(rgb, labels, 4)).reshape(6, 4, 4)
    # darker at the shaded corner than at the lit one, on every face
    assert np.all(gains[:, 3, 3] < gains[:, 0, 0] - 0.08)
    assert np.all(gains[:, 3, 3] < 0.95)
    # an unclipped channel comes back to its colour's level; a clipped one is left alone
    fixed = correct_shading(rgb, np.log(gains.reshape(-1)))
    reds = labels == DEFAULT_SCHEME.colours.index("red")
    assert np.std(fixed[reds, 0]) < 0.75 * np.std(rgb[reds, 0])
    clipped = rgb >= 250.0
    assert clipped.any()
    assert np.array_equal(fixed[clipped], rgb[clipped])


def test_a_shadowed_white_is_read_as_white() -> None:
    # At the shaded corner a white's blue (330 × 0.55 = 181) is under the yellows' blue
    # elsewhere (178 at full light, up to ~200 between): without the correction its reading
    # is yellow or in doubt. With it the reading is right; whether this one cube clears the
    # bar is the class's business (next test): white and yellow are both clipped in red and
    # green here, so blue alone tells them apart and the margin is honest about it.
    cube = Cube.solved(4).apply("R U Rw' F2 u L' 2B D f' 2R")
    rgb = _scan(cube, _shadow(4, 0.45))
    without = classify(rgb_to_lab(rgb), shading=False)
    with_ = classify(rgb_to_lab(rgb))
    assert not (without.accepted and np.array_equal(without.cube.stickers, cube.stickers))
    assert np.array_equal(with_.cube.stickers, cube.stickers)


def test_shadowed_cubes_are_read_right_and_accepted() -> None:
    """Random 4x4 states under the same deep shadow: without the correction none is right
    and accepted; with it most are (13 of 16 with the per-sticker clip model, 5 before it),
    and none is accepted wrong."""
    counts: dict[bool, int] = {}
    for shading in (True, False):
        right = wrong = 0
        for seed in range(16):
            cube = random_state_nxn(4, seed)
            read = classify(rgb_to_lab(_scan(cube, _shadow(4, 0.45))), shading=shading)
            same = np.array_equal(read.cube.stickers, cube.stickers)
            right += read.accepted and same
            wrong += read.accepted and not same
        assert wrong == 0
        counts[shading] = right
    assert counts[False] == 0
    assert counts[True] >= 12


def test_even_light_is_left_alone() -> None:
    cube = Cube.solved(3).apply("R U F' D2 L B'")
    rgb = _scan(cube, np.ones((6, 3, 3))).reshape(-1, 3)
    labels = cube.stickers.reshape(-1).astype(np.intp)
    assert np.allclose(local_gains(rgb, labels, 3), 0.0, atol=0.02)


def test_a_channel_saturated_in_the_camera_is_not_corrected() -> None:
    """A white clipped in the camera and then darkened (× 0.6) reads 151 blue on every sticker:
    below the clip, but it measures no light. Correcting it for shading would make it vary
    like a colour that follows the light, and hide that it is saturated."""
    cube = Cube.solved(4).apply("R U Rw' F2 u L' 2B D")
    rgb = _scan(cube, _shadow(4, 0.3)).reshape(-1, 3)
    labels = cube.stickers.reshape(-1).astype(np.intp)
    whites = labels == DEFAULT_SCHEME.colours.index("white")
    rgb[whites] = (151.0, 151.0, 151.0)
    saturated = np.zeros((6, 3), dtype=bool)
    saturated[DEFAULT_SCHEME.colours.index("white")] = True
    frozen = frozen_channels(rgb, labels, saturated)
    fixed = correct_shading(rgb, local_gains(rgb, labels, 4, frozen), frozen)
    assert np.array_equal(fixed[whites], rgb[whites])
    reds = labels == DEFAULT_SCHEME.colours.index("red")
    assert not np.array_equal(fixed[reds], rgb[reds])  # the others are corrected
