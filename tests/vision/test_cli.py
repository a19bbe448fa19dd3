"""``cuberobot scan`` and ``cuberobot vision …``: the command-line contract."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from robot.cli import main
from solver.cube.facelets import COLOUR_RGB, DEFAULT_SCHEME, Cube
from solver.cube.geometry import Face
from tests.vision.conftest import photo_manifest, rgb_manifest
from vision.calibration import load_calibration
from vision.render import RenderParams, render_face_view, sample_params
from vision.rgbfile import dump_rgb_scan


def _write_faces(folder: Path, cube: Cube, pattern: str = "{}.png", severity: float = 0.2) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    for face in Face:
        view = render_face_view(
            cube, face, sample_params(rng, severity, base=RenderParams(clutter_items=0)), rng
        )
        cv2.imwrite(str(folder / pattern.format(face.name)), view.image)


def test_scan_rendered_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cube = Cube.solved(3).apply("R U F' D2 L B")
    _write_faces(tmp_path / "imgs", cube, "rubiks-side-{}.png")
    assert main(["scan", str(tmp_path / "imgs"), "--annotate", str(tmp_path / "ann")]) == 0
    assert capsys.readouterr().out.strip() == cube.to_facelets()
    assert sorted(p.name for p in (tmp_path / "ann").iterdir()) == sorted(
        [f"{f.name}.png" for f in Face] + ["net.png"]
    )


def test_scan_real_photos_json(vision_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = photo_manifest()
    assert (
        main(
            [
                "scan",
                str(vision_data / "photos" / "4x4x4-random-02"),
                "--size",
                "4",
                "--format",
                "json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["facelets"] == manifest["4x4x4-random-02"]["expected_kociemba"]
    assert doc["valid"] is True and doc["n"] == 4
    assert {"repairs", "low_confidence", "problems"} <= set(doc)


def test_scan_rgb(vision_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "5x5x5-random-01.txt"
    assert main(["scan", "--rgb", str(vision_data / "rgb-scans" / name)]) == 0
    assert capsys.readouterr().out.strip() == rgb_manifest()[name]["expected_kociemba"]


def test_scan_json_carries_the_verdict(
    vision_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "3x3x3-random-01.txt"
    assert main(["scan", "--rgb", str(vision_data / "rgb-scans" / name), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "accepted" and doc["in_doubt"] == []
    assert doc["confidence"] >= doc["accept_threshold"]
    assert doc["facelets"] == rgb_manifest()[name]["expected_kociemba"]


def test_refused_read_exits_1_with_json_and_no_facelets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid read the classifier is not sure of: the json is still printed (verdict
    refused, the stickers in doubt named), the plain form prints no cube, and both exit 1."""
    cube = Cube.solved(3).apply("R U R' U' F2 D L2 B'")
    rgb = np.array(
        [
            [[COLOUR_RGB[DEFAULT_SCHEME.colours[c]] for c in row] for row in face]
            for face in cube.stickers
        ],
        dtype=np.float64,
    )
    # the white and yellow stickers made alike: the scan cannot tell them apart
    white, yellow = COLOUR_RGB[DEFAULT_SCHEME.colours[0]], COLOUR_RGB[DEFAULT_SCHEME.colours[3]]
    mid = (np.array(white) + np.array(yellow)) / 2
    rgb[(cube.stickers == 0) | (cube.stickers == 3)] = mid
    rgb += np.random.default_rng(1).normal(0, 1.0, rgb.shape)
    path = tmp_path / "scan.txt"
    dump_rgb_scan(np.clip(rgb, 0, 255), path)
    assert main(["scan", "--rgb", str(path), "--format", "json"]) == 1
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["verdict"] == "refused" and doc["in_doubt"]
    assert "refused" in out.err or "no valid cube" in out.err
    assert main(["scan", "--rgb", str(path)]) == 1
    assert capsys.readouterr().out == ""


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["scan"]) == 2
    (tmp_path / "U.png").write_bytes(b"")
    bad = tmp_path / "bad.txt"
    bad.write_text('{"1": [1, 2, 3]}', encoding="utf-8")
    assert main(["scan", "--rgb", str(bad)]) == 2
    assert "6·N²" in capsys.readouterr().err


def test_no_grid_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for face in Face:
        cv2.imwrite(str(tmp_path / f"{face.name}.png"), np.full((120, 160, 3), 90, dtype=np.uint8))
    assert main(["scan", str(tmp_path)]) == 1
    assert "no valid cube could be read" in capsys.readouterr().err


def test_calibrate_then_scan_in_robot_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_faces(tmp_path / "first", Cube.solved(3).apply("R U"))
    cal = tmp_path / "cal.toml"
    assert main(["vision", "calibrate", str(tmp_path / "first"), "--out", str(cal)]) == 0
    assert len(load_calibration(cal).views) == 6
    cube = Cube.solved(3).apply("F' L2 D B R'")
    _write_faces(tmp_path / "second", cube)
    capsys.readouterr()
    assert main(["scan", str(tmp_path / "second"), "--calibration", str(cal)]) == 0
    assert capsys.readouterr().out.strip() == cube.to_facelets()


def test_learn_colors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_faces(tmp_path / "solved", Cube.solved(3))
    cal = tmp_path / "cal.toml"
    assert main(["vision", "learn-colors", str(tmp_path / "solved"), "--out", str(cal)]) == 0
    palette = load_calibration(cal).palette_lab
    assert set(palette) == {"white", "red", "green", "yellow", "orange", "blue"}
    assert palette["yellow"][2] > 40 > palette["white"][2]
    _write_faces(tmp_path / "scrambled", Cube.solved(3).apply("R U"))
    assert main(["vision", "learn-colors", str(tmp_path / "scrambled"), "--out", str(cal)]) == 1


@pytest.mark.parametrize("size", ["2", "4"])
def test_size_the_photos_contradict_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], size: str
) -> None:
    """--size 2 or 4 on photos of a 3x3 used to print a 2x2 / 4x4 cube."""
    _write_faces(tmp_path / "faces", Cube.solved(3).apply("R U F' L2 D"))
    assert main(["scan", str(tmp_path / "faces"), "--size", size, "--format", "json"]) == 1
    out = capsys.readouterr()
    # no cube on stdout: only the --format json error document (robot.cli.exits)
    assert list(json.loads(out.out)) == ["error"]
    assert json.loads(out.out)["error"]["type"] == "SizeMismatchError"
    assert f"3x3 sticker grid, not the {size}x{size}" in out.err


@pytest.mark.parametrize("size", ["2", "4"])
def test_size_the_real_photos_contradict_exits_1(
    vision_data: Path, capsys: pytest.CaptureFixture[str], size: str
) -> None:
    folder = vision_data / "photos" / "3x3x3-random-01"
    assert main(["scan", str(folder), "--size", size]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert "sticker grid, not the" in out.err


def test_calibrate_and_calibrated_scan_refuse_an_image_declaring_too_many_pixels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`vision calibrate FOLDER` and `scan --calibration` decoded their images with cv2.imread
    directly, past the 64 MP limit the other scan paths keep (a few-kB PNG declaring
    12,000 x 12,000 pixels became 430 MB a face)."""
    from tests.vision.test_bad_input import _png_bomb

    _write_faces(tmp_path / "first", Cube.solved(3).apply("R U"))
    cal = tmp_path / "cal.toml"
    assert main(["vision", "calibrate", str(tmp_path / "first"), "--out", str(cal)]) == 0
    capsys.readouterr()
    bombs = tmp_path / "bombs"
    bombs.mkdir()
    for face in Face:
        (bombs / f"{face.name}.png").write_bytes(_png_bomb(12_000, 12_000))
    assert main(["vision", "calibrate", str(bombs), "--out", str(tmp_path / "c2.toml")]) == 2
    assert "declares 12000x12000 pixels" in capsys.readouterr().err
    assert main(["scan", str(bombs), "--calibration", str(cal)]) == 2  # as an unreadable input
    err = capsys.readouterr().err
    assert "declares 12000x12000 pixels" in err and "Traceback" not in err
