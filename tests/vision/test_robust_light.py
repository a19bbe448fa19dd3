"""Right-or-refused under real lighting (issue 13): the evidence behind better reads.

* sampling: a clipped pixel of a white at the clip point is a censored reading, not glare; a
  white and a yellow clipped alike in the middle are told apart by their rims;
* a channel the camera saturated stays constant below the clip after a later gain;
* the assignment under the heavy-tailed cost: one washed-out sticker does not push a cycle
  of good ones along;
* generalisation: the given photo sets under degradations the classifier was never built or
  tuned on (vision.perturb.EXTRA_PHOTO_PERTURBATIONS) are never read wrong and accepted.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from solver.cube.cubie import CubieCube
from solver.cube.facelets import DEFAULT_SCHEME, Cube
from solver.cube.geometry import Face
from tests.vision.conftest import photo_manifest
from vision.calibration import StickerSite
from vision.classify import _clipped_channels
from vision.colour import lab_to_rgb
from vision.locate import sample_sites
from vision.perturb import EXTRA_PHOTO_PERTURBATIONS, PHOTO_PERTURBATIONS, perturb_photo_set
from vision.scan import load_face_images, read_cube, read_rgb

PHOTOS = photo_manifest()


def _patch_image(bgr: tuple[float, float, float], noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = np.full((60, 60, 3), bgr, dtype=np.float64) + rng.normal(0.0, noise, (60, 60, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


_SITE = StickerSite(Face.F, 0, 0, (30.0, 30.0), (), 20.0)


def test_noisy_white_at_the_clip_keeps_its_level() -> None:
    """White at 252 blue with noise σ 8: most of its pixels have a channel at the clip.
    Dropping them read the white a level darker in every channel (towards grey, and towards a
    yellow two levels under it: the 3x3 photo set under noise σ 8 read 4 stickers wrong); as
    censored readings they leave the median within half a level."""
    white = lab_to_rgb(sample_sites(_patch_image((252, 252, 247), 8.0, 1), [_SITE])[0])
    yellow = lab_to_rgb(sample_sites(_patch_image((250, 252, 247), 8.0, 2), [_SITE])[0])
    clean_white = lab_to_rgb(sample_sites(_patch_image((252, 252, 247), 0.0, 1), [_SITE])[0])
    assert np.abs(white - clean_white).max() < 0.6
    assert white[2] > yellow[2]  # blue: two levels apart without noise


def test_glare_on_a_green_is_still_dropped() -> None:
    """A highlight over 40 % of a green sticker: clipped in channels the green does not reach,
    so it is glare and the sample stays green."""
    img = _patch_image((80, 160, 30), 2.0, 3)
    img[10:50, 10:34] = 255
    lab = sample_sites(img, [_SITE])[0]
    clean = sample_sites(_patch_image((80, 160, 30), 2.0, 3), [_SITE])[0]
    assert np.abs(lab - clean).max() < 3.0


def test_saturated_channel_is_recognised_below_the_clip_but_a_dark_flat_one_is_not() -> None:
    labels = np.repeat(np.arange(6), 9)
    rng = np.random.default_rng(0)
    rgb = rng.uniform(20, 200, (54, 3))
    rgb[labels == 0] = (148.0, 151.0, 151.0)  # a white clipped in the camera, then × 0.6
    rgb[labels == 1, 1] = 12.0  # a red's green channel: dark, and flat for that reason
    clipped = _clipped_channels(rgb, labels)
    assert clipped[0].all()
    assert not clipped[1, 1]


def test_saturated_white_and_yellow_one_level_apart_after_darkening() -> None:
    """White and yellow clipped in the camera (white 247/252/252, yellow 247/252/250 on
    every sticker, the real rig photos), then darkened to × 0.6: one level of blue apart on
    every sticker. Constant channels cannot follow the light, so one level decides: right
    and accepted (refused at margin 2.2 before)."""
    rng = np.random.default_rng(7)
    cube = CubieCube.random(random.Random(7)).to_cube()
    scene = {
        "white": (247.0, 252.0, 252.0),
        "yellow": (247.0, 252.0, 250.0),
        "red": (200.0, 12.0, 35.0),
        "orange": (253.0, 180.0, 170.0),
        "green": (46.0, 250.0, 225.0),
        "blue": (20.0, 150.0, 253.0),
    }
    rgb = np.empty((54, 3))
    for i, colour in enumerate(cube.flat):
        name = DEFAULT_SCHEME.colours[int(colour)]
        value = np.array(scene[name])
        if name not in ("white", "yellow"):
            value = value * rng.uniform(0.9, 1.05) + rng.normal(0.0, 2.0, 3)
        rgb[i] = np.minimum(value, 255.0)
    darker = np.round(np.round(rgb) * 0.6)
    result = read_rgb(darker.reshape(6, 3, 3, 3))
    assert result.cube == cube
    assert result.accepted, result.classification.cube_margin


def _centre_orbit_scan(n: int, seed: int) -> tuple[Cube, np.ndarray, int]:
    """A scrambled N×N as RGB samples with one centre sticker (an inner one, interchangeable
    with others of its orbit) washed out by glare to near white."""
    r = random.Random(seed)
    moves = " ".join(
        f"{r.randint(1, n // 2)}{r.choice('URFDLB')}{r.choice(['', chr(39), '2'])}"
        for _ in range(60)
    )
    cube = Cube.solved(n).apply(moves)
    scene = {
        "white": (215.0, 220.0, 215.0),
        "yellow": (235.0, 205.0, 28.0),
        "red": (180.0, 18.0, 42.0),
        "orange": (240.0, 105.0, 18.0),
        "green": (18.0, 152.0, 76.0),
        "blue": (9.0, 76.0, 178.0),
    }
    rng = np.random.default_rng(seed)
    rgb = np.empty((6 * n * n, 3))
    for i, colour in enumerate(cube.flat):
        value = np.array(scene[DEFAULT_SCHEME.colours[int(colour)]]) * rng.uniform(0.92, 1.06)
        rgb[i] = np.clip(value + rng.normal(0.0, 2.0, 3), 0, 255)
    # the first red sticker of face R's inner 2x2 (row 1..2, col 1..2 of a 7x7: an orbit of 24)
    stickers = cube.stickers
    red = DEFAULT_SCHEME.colours.index("red")
    face = int(Face.R)
    row, col = next(
        (rr, cc)
        for rr in range(1, n - 1)
        for cc in range(1, n - 1)
        if stickers[face, rr, cc] == red and (rr, cc) != (n // 2, n // 2)
    )
    index = face * n * n + row * n + col
    rgb[index] = (255.0, 242.0, 243.0)
    return cube, rgb.reshape(6, n, n, 3), index


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_washed_out_centre_sticker_is_not_a_cycle_of_wrong_ones(seed: int) -> None:
    """Under squared costs the cheapest balanced reading gave the washed-out red the white it
    looks like and moved a white, a yellow, an orange one colour along (4 stickers wrong).
    Under the heavy-tailed cost the washed-out sticker is the one that misfits: at most that
    sticker is wrong, and the read is never wrong and accepted."""
    cube, rgb, index = _centre_orbit_scan(7, seed)
    result = read_rgb(rgb)
    wrong = np.flatnonzero(result.cube.flat != cube.flat)
    assert set(wrong.tolist()) <= {index}
    assert result.cube == cube or not result.accepted


@pytest.mark.slow
@pytest.mark.parametrize("name", [*EXTRA_PHOTO_PERTURBATIONS, "rotate-5", "noise-8"])
def test_photos_under_unseen_degradations_are_never_wrong_and_accepted(
    vision_data: Path, name: str
) -> None:
    """The generalisation check of bench/vision.py (real-photo-extra), seed 1: degradations
    the classifier was not built on, and two of the issue's under another seed."""
    assert name in EXTRA_PHOTO_PERTURBATIONS or name in PHOTO_PERTURBATIONS
    for index, (case, meta) in enumerate(sorted(PHOTOS.items())):
        images = load_face_images(vision_data / "photos" / case)
        result = read_cube(perturb_photo_set(images, name, 1000 + index))
        right = result.to_facelets() == meta["expected_kociemba"]
        assert right or not result.accepted, (case, result.classification.cube_margin)


@pytest.mark.parametrize("name", ["noise-8", "bright-0.6", "wb-warm", "wb-cool", "jpeg-q40"])
def test_3x3_photos_now_right_and_accepted(vision_data: Path, name: str) -> None:
    """Refused before (noise σ 8 even wrong): the censored-pixel sampling and the saturated
    channels give the evidence, and under cool white balance and JPEG q40 (white and yellow
    clipped or quantised alike in the middle) the rims; seed 0 as in the bench."""
    case = "3x3x3-random-01"
    images = load_face_images(vision_data / "photos" / case)
    index = sorted(PHOTOS).index(case)
    result = read_cube(perturb_photo_set(images, name, index))
    assert result.to_facelets() == PHOTOS[case]["expected_kociemba"]
    assert result.accepted, result.classification.cube_margin


def test_unknown_perturbation_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="jpeg-q40"):
        perturb_photo_set({}, "sepia", 0)


def test_cast_on_one_face_changes_exactly_one_image() -> None:
    images = {f.name: np.full((8, 8, 3), 120, dtype=np.uint8) for f in Face}
    changed = perturb_photo_set(images, "cast-one-face", 5)
    assert sum(not np.array_equal(images[k], changed[k]) for k in images) == 1


def _sticker_image(rgb: tuple[float, float, float], gain: float, seed: int) -> np.ndarray:
    """A sticker of camera colour ``rgb`` (may lie above the clip) on a dark body, its edge
    blurred over a few pixels, seen at ``gain``; then clipped at 255 and noisy (σ 2)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:60, 0:60]
    # the sticker's share of each pixel: 1 inside a 44-px square, falling to 0 over ~6 px
    inside = np.minimum(np.minimum(x - 8, 51 - x), np.minimum(y - 8, 51 - y))
    share = np.clip(0.5 + inside / 6.0, 0.0, 1.0)[..., None]
    body = np.array([22.0, 22.0, 26.0])
    bgr = np.array(rgb[::-1])
    img = gain * (share * bgr + (1.0 - share) * body) + rng.normal(0.0, 2.0, (60, 60, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def test_white_and_yellow_at_the_clip_are_told_apart_by_their_rims() -> None:
    """Both clipped in every channel in the middle (255/255/255), so the patch alone cannot
    tell them apart; the rim, where each falls off towards the body under the clip, shows
    that the yellow has less blue."""
    white = (300.0, 300.0, 320.0)
    yellow = (310.0, 320.0, 265.0)
    reads = []
    for k, colour in enumerate((white, yellow)):
        img = _sticker_image(colour, 1.0, k)
        assert (img[25:35, 25:35] >= 250).all()  # the middle is clipped
        reads.append(lab_to_rgb(sample_sites(img, [_SITE])[0]))
    w, yel = reads
    assert w[2] - yel[2] > 20.0  # blue
    assert abs(w[1] - yel[1]) < 20.0  # green: both near the top


def test_a_clipped_patch_without_a_body_in_reach_is_left_as_it_is() -> None:
    """No fall-off to a dark body around the patch (a close-up of one sticker): the pixels
    under the clip are noise, not a rim, and the sample is the patch's median."""
    img = _patch_image((255, 255, 255), 3.0, 4)
    lab = sample_sites(img, [_SITE])[0]
    assert np.abs(lab_to_rgb(lab) - 255.0).max() < 3.0
