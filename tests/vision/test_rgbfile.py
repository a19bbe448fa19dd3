"""The vision-data RGB format (U L F R B D blocks, net reading order) ↔ the LTR layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from vision.errors import ScanInputError
from vision.rgbfile import (
    FILE_FACE_ORDER,
    dump_rgb_scan,
    load_rgb_scan,
    parse_rgb_scan,
    to_file_order,
)


def _numbered(n: int) -> dict[str, list[int]]:
    """A file whose sticker j (1-based) has RGB (j, 0, 0)."""
    return {str(j): [j, 0, 0] for j in range(1, 6 * n * n + 1)}


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_file_positions_land_where_the_net_says(n: int) -> None:
    rgb = parse_rgb_scan(_numbered(n))
    value = rgb[..., 0].astype(int)
    block = n * n
    # File block order is U L F R B D.
    assert FILE_FACE_ORDER == (Face.U, Face.L, Face.F, Face.R, Face.B, Face.D)
    # Sticker 1: U's top-left on the net = LTR (N-1, 0) of U.
    assert value[Face.U, n - 1, 0] == 1
    # The last sticker of the U block: U's bottom-right on the net = LTR (0, N-1).
    assert value[Face.U, 0, n - 1] == block
    # Second block is L, third F, fourth R, fifth B, sixth D.
    assert value[Face.L, n - 1, 0] == block + 1
    assert value[Face.F, n - 1, 0] == 2 * block + 1
    assert value[Face.R, n - 1, n - 1] == 3 * block + n
    assert value[Face.B, 0, 0] == 4 * block + (n - 1) * n + 1
    assert value[Face.D, 0, n - 1] == 6 * block


def test_agrees_with_kociemba_reading_order() -> None:
    """Writing a cube's letters in the file order and reading them back gives the cube: the
    file order differs from Kociemba's only by the order of the face blocks."""
    cube = Cube.solved(3).apply("R U F' L2 D B' 2R")
    text = cube.to_facelets("scheme")
    by_face = {face: text[int(face) * 9 : int(face) * 9 + 9] for face in Face}
    file_text = "".join(by_face[f] for f in FILE_FACE_ORDER)
    data = {str(j + 1): [ord(ch), 0, 0] for j, ch in enumerate(file_text)}
    rgb = parse_rgb_scan(data)
    letters = np.vectorize(chr)(rgb[..., 0].astype(int))
    expected = np.array([Face(v).name for v in cube.flat]).reshape(6, 3, 3)
    assert (letters == expected).all()


@pytest.mark.parametrize("n", [2, 3, 6])
def test_round_trip(tmp_path: Path, n: int) -> None:
    rgb = np.random.default_rng(n).integers(0, 256, (6, n, n, 3)).astype(float)
    assert parse_rgb_scan(to_file_order(rgb)).tolist() == rgb.tolist()
    dump_rgb_scan(rgb, tmp_path / "scan.txt")
    assert load_rgb_scan(tmp_path / "scan.txt").tolist() == rgb.tolist()


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        pytest.param({"1": [1, 2, 3]}, "not 6·N²", id="count"),
        pytest.param({**_numbered(2), "3": [1, 2]}, "expected [R, G, B]", id="short-triple"),
        pytest.param({**_numbered(2), "4": [1, 2, 300]}, "outside 0..255", id="range"),
        pytest.param({**_numbered(2), "5": ["a", 2, 3]}, "non-numeric", id="text"),
        pytest.param(
            {k if k != "7" else "x": v for k, v in _numbered(2).items()}, "sticker 7", id="key"
        ),
    ],
)
def test_malformed(data: dict[str, object], fragment: str) -> None:
    with pytest.raises(ScanInputError, match=re.escape(fragment)):
        parse_rgb_scan(data)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ScanInputError, match="cannot read"):
        load_rgb_scan(tmp_path / "missing.txt")
    (tmp_path / "bad.txt").write_text("{", encoding="utf-8")
    with pytest.raises(ScanInputError, match="not JSON"):
        load_rgb_scan(tmp_path / "bad.txt")
    (tmp_path / "list.txt").write_text(json.dumps([1, 2]), encoding="utf-8")
    with pytest.raises(ScanInputError, match="JSON object"):
        load_rgb_scan(tmp_path / "list.txt")


def test_real_scans_parse(vision_data: Path) -> None:
    for path in sorted((vision_data / "rgb-scans").glob("*.txt")):
        rgb = load_rgb_scan(path)
        assert rgb.shape[0] == 6 and rgb.shape[1] == rgb.shape[2] and rgb.shape[1] >= 2
