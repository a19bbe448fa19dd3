"""Whole scans: real rig photos, and the simulated robot in face and corner views."""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest

from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from tests.vision.conftest import photo_manifest
from vision.calibration import Calibration, ViewCalibration
from vision.capture import SimulatedCamera
from vision.errors import CalibrationError, ScanInputError
from vision.render import (
    RenderParams,
    random_light,
    render_corner_view,
    render_face_view,
    sample_params,
)
from vision.rgbfile import load_rgb_scan
from vision.scan import face_images_in, load_face_images, read_cube, read_rgb

PHOTOS = photo_manifest()


@pytest.mark.parametrize("case", sorted(PHOTOS) or ["(no data)"])
def test_real_photos_are_read_exactly(vision_data: Path, case: str) -> None:
    result = read_cube(load_face_images(vision_data / "photos" / case))
    assert result.valid
    assert result.to_facelets() == PHOTOS[case]["expected_kociemba"]


@pytest.mark.parametrize("case", sorted(PHOTOS) or ["(no data)"])
def test_reference_tracker_readings_of_the_photos(vision_data: Path, case: str) -> None:
    result = read_rgb(load_rgb_scan(vision_data / "photos" / PHOTOS[case]["rgb_reading"]))
    assert result.to_facelets() == PHOTOS[case]["expected_kociemba"]


def _scrambled(n: int, seed: int) -> Cube:
    if n == 3:
        return CubieCube.random(random.Random(seed)).to_cube()
    r = random.Random(seed)
    return Cube.solved(n).apply(
        " ".join(
            f"{r.randint(1, n // 2)}{r.choice('URFDLB')}{r.choice(['', chr(39), '2'])}"
            for _ in range(50)
        )
    )


@pytest.mark.parametrize("n", [3, 4, 5])
def test_simulated_robot_face_views(n: int) -> None:
    for seed in range(4):
        rng = np.random.default_rng(100 * n + seed)
        cube = _scrambled(n, seed)
        # 3x3 across the whole lighting range; for bigger cubes up to 0.6: at full severity a
        # glare spot can wash out one of their interchangeable centre stickers (the benchmark
        # measures that rate).
        severity = seed / 3 if n == 3 else seed / 5
        light = random_light(rng, severity)
        views = {
            f.name: render_face_view(cube, f, sample_params(rng, severity, light_rgb=light), rng)
            for f in Face
        }
        cal = Calibration(n, tuple(ViewCalibration(k, v.sites) for k, v in views.items()))
        result = read_cube({k: v.image for k, v in views.items()}, cal)
        assert result.cube == cube, f"seed {seed}"
        free = read_cube({k: v.image for k, v in views.items()}) if severity < 0.5 else None
        if free is not None:
            assert free.cube == cube


def test_simulated_corner_cameras_cover_the_cube() -> None:
    """Two cameras at opposite corners (URF, DLB) see all six faces. A read is right or
    refused (seed 2 has a glare spot that spoils one sticker's colour); never wrong and
    accepted."""
    accepted = 0
    for seed in range(3):
        cube = _scrambled(3, seed + 50)
        rng = np.random.default_rng(seed)
        base = RenderParams(1280, 960)
        views = {
            c: render_corner_view(cube, c, sample_params(rng, 0.5, base=base), rng)
            for c in ("URF", "DLB")
        }
        cal = Calibration(3, tuple(ViewCalibration(k, v.sites) for k, v in views.items()))
        result = read_cube({k: v.image for k, v in views.items()}, cal)
        assert result.cube == cube or result.verdict == "refused"
        accepted += result.accepted
    assert accepted >= 2


def test_simulated_camera_and_its_calibration() -> None:
    cube = _scrambled(3, 7)
    cams = [SimulatedCamera(lambda: cube, view, seed=i) for i, view in enumerate(("URF", "DLB"))]
    cal = Calibration(3, tuple(c.calibration() for c in cams))
    result = read_cube({c.view: c.read() for c in cams}, cal)
    assert result.cube == cube


def test_full_hd_3x3_is_fast() -> None:
    """Target: a 3x3 from six 1920×1080 images in ≤ 100 ms on one core (robot mode). The
    assertion leaves room for a loaded CI machine; the benchmark reports the real figure."""
    cube = _scrambled(3, 1)
    rng = np.random.default_rng(0)
    base = RenderParams(1920, 1080)
    views = {
        f.name: render_face_view(cube, f, sample_params(rng, 0.5, base=base), rng) for f in Face
    }
    cal = Calibration(3, tuple(ViewCalibration(k, v.sites) for k, v in views.items()))
    images = {k: v.image for k, v in views.items()}
    read_cube(images, cal)  # warm-up (OpenCV initialisation)
    best = min(_timed(lambda: read_cube(images, cal)) for _ in range(3))
    assert best < 0.3


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def test_missing_faces_and_views_are_reported() -> None:
    img = np.zeros((50, 50, 3), dtype=np.uint8)
    with pytest.raises(ScanInputError, match="missing R, F, D, L, B"):
        read_cube({"U": img})
    cal = Calibration(3, (ViewCalibration("U", ()),))
    with pytest.raises(CalibrationError, match="covers 0 of 54"):
        read_cube({"U": img}, cal)
    with pytest.raises(ScanInputError, match="not a BGR colour image"):
        read_cube({f.name: np.zeros((5, 5)) for f in Face})


def test_face_image_names(tmp_path: Path) -> None:
    for name in ("U.png", "rubiks-side-R.png", "scan_F.jpg", "notes.txt", "BLUE.png", "x-D.PNG"):
        (tmp_path / name).write_bytes(b"")
    assert sorted(face_images_in(tmp_path)) == ["D", "F", "R", "U"]
    (tmp_path / "other-U.png").write_bytes(b"")
    with pytest.raises(ScanInputError, match="two images for face U"):
        face_images_in(tmp_path)
