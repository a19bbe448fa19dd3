"""Calibration files: round trip, hand edits, and errors that name the entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from vision.calibration import (
    Calibration,
    StickerSite,
    ViewCalibration,
    load_calibration,
    merge_views,
    save_calibration,
)
from vision.errors import CalibrationError
from vision.render import RenderParams, render_face_view


def test_round_trip(tmp_path: Path) -> None:
    view = render_face_view(Cube.solved(3), Face.L, RenderParams(), np.random.default_rng(0))
    cal = Calibration(
        3, (ViewCalibration("L", view.sites),), 640, 480, {"white": (95.0, 0.5, -1.0)}
    )
    save_calibration(cal, tmp_path / "cal.toml")
    back = load_calibration(tmp_path / "cal.toml")
    assert back.n == 3 and back.width == 640 and back.palette_lab == {"white": (95.0, 0.5, -1.0)}
    (v,) = back.views
    for a, b in zip(v.sites, view.sites, strict=True):
        assert (a.face, a.row, a.col) == (b.face, b.row, b.col)
        assert a.centre == pytest.approx(b.centre, abs=0.01)
        assert a.patch_half_size() == pytest.approx(b.patch_half_size(), abs=0.01)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("n = 0", "n must be a positive integer", id="n"),
        pytest.param("n = 3\nspeed = 1", "unknown keys", id="unknown"),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["Q", 0, 0, 1.0, 1.0, 2.0]]',
            "face 'Q'",
            id="face",
        ),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["U", 3, 0, 1.0, 1.0, 2.0]]',
            "outside 0..2",
            id="row",
        ),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["U", 0, 0, 1.0, 1.0, -2.0]]',
            "positive",
            id="half",
        ),
        pytest.param('n = 3\n[[view]]\nname = "U"\nsites = [["U", 0, 0]]', "a site is", id="short"),
        pytest.param("n = [", "not valid TOML", id="toml"),
        pytest.param("n = true", "n must be a positive integer", id="n-bool"),
        pytest.param("n = 100000000", "a cube size up to 128", id="n-huge"),
        pytest.param("a = " + "[" * 5000 + "]" * 5000, "nested too deeply", id="deep"),
        pytest.param("n = 3\nview = 5", "view must be", id="view-not-tables"),
        pytest.param("n = 3\nview = [1]", "view #1 must be a", id="view-not-a-table"),
        pytest.param('n = 3\n[[view]]\nname = "U"\nsites = 5', "sites must be", id="sites"),
        pytest.param("n = 3\ncolours = 5", "must be a table", id="colours-not-a-table"),
        pytest.param('n = 3\n[colours]\nwhite = ["a", 1, 2]', "white: expected", id="lab-text"),
        pytest.param("n = 3\n[colours]\nwhite = [nan, 1, 2]", "white: expected", id="lab-nan"),
        pytest.param('n = 3\nwidth = "x"', "width must be", id="width-text"),
        pytest.param("n = 3\nheight = -5", "height must be", id="height-negative"),
        pytest.param("n = 3\nwidth = inf", "width must be", id="width-inf"),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["U", 0, 0, nan, 1.0, 2.0]]',
            "finite numbers",
            id="site-nan",
        ),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["U", true, 0, 1.0, 1.0, 2.0]]',
            "outside 0..2",
            id="row-bool",
        ),
        # a view given twice (the second silently shadowed), a centre left of the image
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = []\n[[view]]\nname = "U"\nsites = []',
            "'U' is given more than once",
            id="view-twice",
        ),
        pytest.param(
            'n = 3\n[[view]]\nname = "U"\nsites = [["U", 0, 0, -40.0, 1.0, 2.0]]',
            "left of or above the image",
            id="x-negative",
        ),
    ],
)
def test_errors_name_the_entry(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "cal.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CalibrationError, match=fragment):
        load_calibration(path)


def test_a_binary_file_is_a_calibration_error(tmp_path: Path) -> None:
    path = tmp_path / "cal.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(CalibrationError, match="is not a text file"):
        load_calibration(path)


def test_completeness() -> None:
    site = StickerSite(Face.U, 0, 0, (1.0, 1.0), (), 2.0)
    with pytest.raises(CalibrationError, match="views A and B"):
        Calibration(
            2, (ViewCalibration("A", (site,)), ViewCalibration("B", (site,)))
        ).check_complete()
    with pytest.raises(CalibrationError, match="covers 1 of 24"):
        Calibration(2, (ViewCalibration("A", (site,)),)).check_complete()


def test_merge_replaces_views_of_the_same_name() -> None:
    a = StickerSite(Face.U, 0, 0, (1.0, 1.0), (), 2.0)
    b = StickerSite(Face.U, 0, 0, (5.0, 5.0), (), 2.0)
    base = Calibration(2, (ViewCalibration("U", (a,)), ViewCalibration("F", ())))
    merged = merge_views(base, [ViewCalibration("U", (b,))], 2)
    assert [v.name for v in merged.views] == ["F", "U"]
    assert merged.view("U").sites == (b,)
    with pytest.raises(CalibrationError, match="no calibration for view 'X'"):
        merged.view("X")
    with pytest.raises(CalibrationError, match="N=2"):
        merge_views(base, [], 3)


def test_an_endless_or_huge_file_is_refused_not_read(tmp_path: Path) -> None:
    """/dev/zero used to be read until memory ran out."""
    with pytest.raises(CalibrationError, match="/dev/zero: not a regular file"):
        load_calibration("/dev/zero")  # a device: refused unread
    path = tmp_path / "cal.toml"
    path.write_text("n = 3\n" + "# padding\n" * 200_000, encoding="utf-8")
    with pytest.raises(CalibrationError, match=r"cal\.toml is larger than"):
        load_calibration(path)
