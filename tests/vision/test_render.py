"""The simulated camera: deterministic, oriented as on the net, and truthful about its sites."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.facelets import DEFAULT_SCHEME, Cube
from solver.cube.geometry import Face
from vision.colour import rgb_to_lab
from vision.locate import sample_sites
from vision.render import (
    DEFAULT_STICKER_RGB,
    RenderParams,
    corner_faces,
    render_corner_view,
    render_face,
    render_face_view,
    sample_params,
)

CUBE = Cube.solved(3).apply("R U F' L2 D B'")


def test_same_seed_same_image() -> None:
    a = render_face(CUBE, Face.F, sample_params(np.random.default_rng(1)), np.random.default_rng(2))
    b = render_face(CUBE, Face.F, sample_params(np.random.default_rng(1)), np.random.default_rng(2))
    c = render_face(CUBE, Face.F, sample_params(np.random.default_rng(1)), np.random.default_rng(3))
    assert a.dtype == np.uint8 and a.shape == (480, 640, 3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("face", list(Face))
def test_face_view_is_oriented_as_on_the_net(face: Face) -> None:
    n = 4
    view = render_face_view(Cube.solved(n), face, RenderParams(), np.random.default_rng(0))
    sites = {(s.row, s.col): s.centre for s in view.sites}
    assert len(sites) == n * n
    # LTR row N-1 is the top edge (smaller y), column 0 the left edge (smaller x).
    assert sites[(n - 1, 0)][1] < sites[(0, 0)][1]
    assert sites[(0, 0)][0] < sites[(0, n - 1)][0]


def test_clean_render_shows_the_sticker_colours() -> None:
    view = render_face_view(
        CUBE, Face.U, RenderParams(noise_sigma=0, clutter_items=0), np.random.default_rng(0)
    )
    lab = sample_sites(view.image, view.sites)
    for site, value in zip(view.sites, lab, strict=True):
        name = DEFAULT_SCHEME.colours[int(CUBE.stickers[site.face, site.row, site.col])]
        expected = rgb_to_lab(np.array(DEFAULT_STICKER_RGB[name], dtype=float))
        # Lambert shading darkens a little; the hue stays.
        assert abs(value[1] - expected[1]) < 12 and abs(value[2] - expected[2]) < 12


def test_corner_view_shows_three_faces() -> None:
    view = render_corner_view(CUBE, "DLB", RenderParams(), np.random.default_rng(0))
    assert {s.face for s in view.sites} == {Face.D, Face.L, Face.B}
    assert len(view.sites) == 27
    h, w = view.image.shape[:2]
    assert all(0 <= s.centre[0] < w and 0 <= s.centre[1] < h for s in view.sites)


def test_corner_names() -> None:
    assert corner_faces("urf") == (Face.U, Face.R, Face.F)
    for bad in ("URD", "UU F", "XYZ", "UR"):
        with pytest.raises(ValueError, match="not a corner"):
            corner_faces(bad)


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="too small"):
        RenderParams(width=4)
    with pytest.raises(ValueError, match="inside the cube"):
        RenderParams(distance=1)
    with pytest.raises(ValueError, match="severity"):
        sample_params(np.random.default_rng(0), 2.0)


def test_severity_zero_is_clean_and_one_is_not() -> None:
    rng = np.random.default_rng(0)
    clean = sample_params(rng, 0.0)
    rough = sample_params(rng, 1.0)
    assert clean.gradient == 0 and clean.blur_sigma == 0 and clean.light_rgb == (1.0, 1.0, 1.0)
    assert rough.noise_sigma > clean.noise_sigma
