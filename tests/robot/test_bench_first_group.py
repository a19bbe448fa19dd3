"""``bench/first_group.py``: the anytime head start's first group, variants side by side."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from solver.cube.facelets import Cube
from solver.cube.notation import parse
from tests.benchload import load_bench

pytestmark = pytest.mark.usefixtures("solver_tables")


def _bench() -> ModuleType:
    return load_bench("first_group")


def test_the_45_motion_groups_are_distinct_and_each_one_axis() -> None:
    bench = _bench()
    assert len(bench.GROUPS) == 45
    states = {Cube.solved(3).apply(parse(g)).to_facelets() for g in bench.GROUPS}
    assert len(states) == 45  # no two the same turn
    for group in bench.GROUPS:
        faces = {m.face.name for m in parse(group)}
        assert any(faces <= set(axis) for axis in bench.AXES), group


def test_variants_compared_state_by_state_against_the_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _bench()
    argv = "--states 3 --seed 5 --heads 0.002,0.004 --remainder 0.004 --every-group 1 --json"
    assert bench.main(argv.split()) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["head_start_s"], r["head_directions"]) for r in rows] == [(0.002, 6), (0.004, 6)]
    reference, other = rows
    assert reference["d_whole_s"] == 0 and reference["se_s"] == 0
    for row in rows:
        assert row["states"] == 3
        # the better of the head start's remainder and the fresh one: never slower
        assert row["whole_s"] <= row["head_s"] + 1e-9
        assert 0 <= row["landed"] <= 3
    # the difference is taken state by state: the mean difference is the difference of means
    assert other["d_whole_s"] == pytest.approx(other["whole_s"] - reference["whole_s"], abs=2e-4)
    assert reference["oracle_states"] == 1 and 0 <= reference["reference_rank"] <= 44
    assert reference["oracle_s"] > 0 and reference["oracle_reference_s"] > 0
    assert "oracle_s" not in other
