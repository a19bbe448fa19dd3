"""Free-mode grid finding and sampling, on rendered faces and on the real rig photos."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from tests.vision.conftest import photo_manifest
from vision.calibration import StickerSite
from vision.errors import GridNotFoundError, ScanInputError, SizeMismatchError
from vision.locate import find_grid, sample_sites
from vision.render import RenderParams, render_face_view, sample_params


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_grid_found_on_rendered_faces(n: int) -> None:
    rng = np.random.default_rng(n)
    cube = Cube.solved(n).apply("R U2 F' L D' B")
    params = sample_params(rng, 0.4, base=RenderParams(clutter_items=0))
    view = render_face_view(cube, Face.R, params, rng)
    fit = find_grid(view.image, None, Face.R)
    assert fit.n == n
    truth = {(s.row, s.col): s.centre for s in view.sites}
    for site in fit.sites:
        tx, ty = truth[(site.row, site.col)]
        assert abs(site.centre[0] - tx) < 0.2 * fit.pitch
        assert abs(site.centre[1] - ty) < 0.2 * fit.pitch


def test_given_size_is_respected() -> None:
    view = render_face_view(
        Cube.solved(3), Face.F, RenderParams(clutter_items=0), np.random.default_rng(0)
    )
    assert find_grid(view.image, 3).n == 3


def test_no_grid_in_a_plain_image() -> None:
    with pytest.raises(GridNotFoundError, match="no sticker grid"):
        find_grid(np.full((300, 400, 3), 128, dtype=np.uint8))


@pytest.mark.parametrize("case", sorted(photo_manifest()) or ["(no data)"])
def test_grid_found_on_real_photos(vision_data: Path, case: str) -> None:
    n = int(case[0])
    for face in Face:
        image = cv2.imread(str(vision_data / "photos" / case / f"rubiks-side-{face.name}.png"))
        fit = find_grid(image, None, face)
        assert fit.n == n
        assert fit.detected >= n * n - 1


def test_glare_is_rejected_when_sampling() -> None:
    image = np.zeros((60, 60, 3), dtype=np.uint8)
    image[:] = (30, 40, 200)  # BGR red
    image[25:35, 25:35] = 255  # a specular spot
    site = StickerSite(Face.U, 0, 0, (30.0, 30.0), (), 20.0)
    lab = sample_sites(image, [site])[0]
    clean = sample_sites(np.ascontiguousarray(np.full_like(image, (30, 40, 200))), [site])[0]
    assert np.allclose(lab, clean, atol=1.0)


def test_sites_outside_the_image_are_reported() -> None:
    site = StickerSite(Face.F, 1, 2, (500.0, 10.0), (), 5.0)
    with pytest.raises(ScanInputError, match=r"F\[1,2\].*outside"):
        sample_sites(np.zeros((50, 50, 3), dtype=np.uint8), [site])


def test_a_size_the_image_contradicts_is_refused() -> None:
    cube = Cube.solved(4)
    rng = np.random.default_rng(5)
    view = render_face_view(cube, Face.F, sample_params(rng, 0.1), rng)
    assert find_grid(view.image, 4, Face.F).n == 4
    for wrong in (3, 5):
        with pytest.raises(SizeMismatchError, match=f"4x4 sticker grid, not the {wrong}x{wrong}"):
            find_grid(view.image, wrong, Face.F)


@pytest.mark.parametrize("extra", [1, 2])
def test_grid_does_not_run_onto_a_frame_row(extra: int) -> None:
    """A dark frame bar under the face with a few sticker-like shapes on it, one pitch beyond
    the face's last row, on the lattice: N must stay the face's (a 7x7 was read as 8x8 that
    way)."""
    n = 5
    rng = np.random.default_rng(9)
    view = render_face_view(
        Cube.solved(n).apply("R U F"), Face.F, RenderParams(clutter_items=0), rng
    )
    fit = find_grid(view.image, None, Face.F)
    assert fit.n == n
    image = view.image.copy()
    centres = {(s.row, s.col): np.array(s.centre) for s in fit.sites}
    step = centres[(0, 0)] - centres[(1, 0)]  # one row down the image
    half = int(0.4 * fit.pitch)
    bar_x, bar_y = (centres[(0, 0)] + step).astype(int)
    image[bar_y - 2 * half : bar_y + 2 * half, bar_x - 2 * half :] = (20, 20, 20)  # the frame
    for col in range(extra):
        x, y = (centres[(0, col)] + step).astype(int)
        image[y - half : y + half, x - half : x + half] = (200, 200, 200)
    assert find_grid(image, None, Face.F).n == n
