"""``bench/vision_adversarial.py``'s turned-face sweep: each face after each outer turn."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from solver.cube.facelets import Cube
from solver.cube.notation import parse
from tests.benchload import load_bench


def _bench() -> ModuleType:
    return load_bench("vision_adversarial")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_each_face_after_each_turn_that_changes_it(n: int) -> None:
    bench = _bench()
    cube = Cube.solved(n).apply(parse("R U F' D2 L B'"))
    shown = cube.stickers.astype(np.intp).reshape(6, n, n)
    ids = np.arange(6 * n * n, dtype=np.float64)
    rgb = np.stack([ids, ids, ids], axis=1).reshape(6, n, n, 3)  # each sample names its sticker
    cases = bench.turned_faces(rgb, shown)
    assert len(cases) == 90  # 6 faces x 15 turns (the opposite face's 3 leave it as it was)
    assert len({what for what, _, _ in cases}) == 90
    for what, x, colours in cases:
        face, _, turn = what.split()
        f = "URFDLB".index(face)
        others = [g for g in range(6) if g != f]
        assert np.array_equal(x[others], rgb[others])
        assert np.array_equal(colours[others], shown[others])
        after = cube.apply(parse(turn)).stickers.astype(np.intp).reshape(6, n, n)
        assert np.array_equal(colours[f], after[f])  # the face shows the cube after the turn
        source = x[f, :, :, 0].astype(np.intp)  # and each sample went with its sticker
        assert np.array_equal(shown.reshape(-1)[source], colours[f])


def test_the_sweep_over_one_scan_counts_every_read(vision_data: Path) -> None:
    bench = _bench()
    scans = bench._real_scans(vision_data)
    rows = bench.sweep_rows(vision_data, 0, len(scans))  # the first scan only
    name, rgb, _ = scans[0]
    n = rgb.shape[1]
    assert [r["class"] for r in rows] == [f"turned-face {n}x{n}", "turned-face-sweep"]
    size, every = rows
    for row in rows:
        assert row["row"] == "sweep" and row["cases"] == 90
        assert row["right_accepted"] + row["wrong_accepted"] + row["refused"] == 90
        assert all(case.startswith(name) for case in row["wrong_cases"])
    assert {k: v for k, v in size.items() if k != "class"} == {
        k: v for k, v in every.items() if k != "class"
    }


def test_the_sweep_part_is_checked() -> None:
    bench = _bench()
    assert bench._part("1/2") == (1, 2)
    for bad in ("2/2", "x", "1/0", "-1/3"):
        with pytest.raises(Exception, match="expected"):
            bench._part(bad)
