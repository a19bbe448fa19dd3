"""The 4x4 staged centre search and the big-cube table cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver import api
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, count
from solver.cube.validate import validate
from solver.engines.nxn import staged, tables
from solver.engines.nxn.centres import interior, orientation_colours
from solver.engines.nxn.sim import geometry
from solver.engines.nxn.wings import wing_parity
from solver.errors import UnsupportedError
from solver.scramble import random_moves, random_state_nxn


def test_tables_have_the_sizes_and_depths_of_the_stages() -> None:
    t = staged.load_tables()
    assert t.stage1.size == 735_471 and t.stage2.size == 25_740 and t.stage3.size == 343_000
    for table in (t.stage1, t.stage2, t.stage3):
        assert table.min() == 0 and int((table == 0).sum()) == 1  # every state reached, one goal
    assert int(t.stage1.max()) == 8 and int(t.stage2.max()) == 8 and int(t.stage3.max()) == 11


@pytest.mark.parametrize("seed", range(6))
def test_staged_centres_solve_every_face_with_even_wings(seed: int) -> None:
    cube = random_state_nxn(4, seed)
    found = staged.staged_centres(cube.flat, keep=3)
    assert 1 <= len(found) <= 3
    assert [f.length for f in found] == sorted(f.length for f in found)
    for option in found:
        assert option.targets in orientation_colours()  # a colour scheme the corners allow
        state = cube.flat.copy()
        geometry(4).apply(state, option.moves)
        for face in Face:
            assert (state[interior(4, face)] == option.targets[face]).all()
        assert wing_parity(state, 4, 1) == 0
        assert option.length <= 22  # 8 + 8 + 11 is the worst case of each stage alone


def test_stage_one_puts_an_opposite_pair_on_the_u_d_axis() -> None:
    cube = random_state_nxn(4, 42)
    option = staged.staged_centres(cube.flat)[0]
    state = cube.flat.copy()
    geometry(4).apply(state, option.stages[0])
    ud = state[np.concatenate([interior(4, Face.U), interior(4, Face.D)])]
    assert len(set(ud.tolist())) == 2
    assert {int(c) for c in ud} == {option.targets[Face.U], option.targets[Face.D]}


def test_a_centre_scramble_of_few_moves_is_undone_in_as_few() -> None:
    scramble = random_moves(4, 3, seed=5)
    cube = Cube.solved(4).apply(scramble)
    assert staged.staged_centres(cube.flat)[0].length <= count(scramble, Metric.HTM, 4)


def test_engine_picks_the_staged_search_for_4x4_and_both_methods_solve() -> None:
    cube = random_state_nxn(4, 8)
    staged_run = api.solve(cube)
    assert [s.name for s in staged_run.stages] == ["centres", "edges", "3x3"]
    assert len(staged_run.stages[0].detail["stages"]) == 3
    commutators = api.solve(cube, centres="commutators")
    assert commutators.stages[0].name == "first centre"
    for solution in (staged_run, commutators):
        assert cube.apply(solution.moves).is_solved()
    with pytest.raises(UnsupportedError, match="centres"):
        api.solve(cube, centres="magic")
    with pytest.raises(UnsupportedError, match="4x4 to 7x7"):
        api.solve(random_state_nxn(8, 0), centres="staged")


def test_table_cache_writes_reads_and_rebuilds_a_damaged_file(tmp_path: Path) -> None:
    calls = []

    def build(report: tables.Report) -> tables.Table:
        calls.append(1)
        return np.arange(10, dtype=np.int8)

    first = tables.load_table("probe", 10, build, tmp_path)
    path = tables.table_path(tmp_path, "probe")
    assert path.exists() and len(calls) == 1
    tables._LOADED.clear()
    assert np.array_equal(tables.load_table("probe", 10, build, tmp_path), first)
    assert len(calls) == 1  # read back, not rebuilt
    tables._LOADED.clear()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    assert np.array_equal(tables.load_table("probe", 10, build, tmp_path), first)
    assert len(calls) == 2  # the damaged copy was rebuilt
    tables._LOADED.clear()


def test_table_cache_in_an_unwritable_place_is_a_typed_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(tables.TableError, match="CUBEROBOT_CACHE_DIR"):
        tables.load_table("probe", 3, lambda report: np.zeros(3, dtype=np.int8), blocker)


@pytest.mark.parametrize("n", [4, 6, 8])
def test_pll_parity_alg_swaps_dedge_parity_and_keeps_the_reduction(n: int) -> None:
    from solver.engines.nxn import engine, pairing

    moves = engine.pll_parity(n)
    assert count(moves, Metric.HTM, n) == 7
    state = Cube.solved(n).apply(list(moves)).flat
    for face in Face:
        assert (state[interior(n, face)] == face).all()
    assert pairing.paired_count(state, n) == 12 * (n - 2)
    assert all(wing_parity(state, n, j) == 0 for j in range(1, n // 2))
    assert engine.corner_parity(state, n) == 0
    assert validate(engine.reduced_3x3(state, n))  # corners even, dedges odd: not a 3x3


def test_even_cube_pairing_takes_a_setup_turn_when_no_macro_pairs() -> None:
    from solver.engines.nxn import engine, pairing

    state = engine._staged(random_state_nxn(4, 3), 1, None)[0][2].copy()
    pairing.pair_edges(state, 4)
    assert pairing.paired_count(state, 4) == 24  # before the setups: stuck at 22


@pytest.mark.parametrize(("n", "seed"), [(6, 1), (7, 2), (12, 3), (13, 4)])
def test_half_insertion_changes_only_target_and_feeder_and_gains_as_planned(
    n: int, seed: int
) -> None:
    from solver.engines.nxn import insert

    state = random_state_nxn(n, seed).flat.copy()
    for target, done in ((Face.U, ()), (Face.F, (Face.U, Face.D))):
        found = insert.best_half_insertion(state, n, target, int(target), done)
        assert found is not None and found.gain > 0
        before = {f: state[interior(n, f)].copy() for f in Face}
        geometry(n).apply(state, found.moves)
        gained = int((state[interior(n, target)] == target).sum()) - int(
            (before[target] == target).sum()
        )
        assert gained == found.gain
        changed = {f for f in Face if not np.array_equal(state[interior(n, f)], before[f])}
        assert target in changed and len(changed) == 2 and not changed & set(done)


@pytest.mark.parametrize("n", [9, 16])
def test_rectangle_commutators_keep_finished_faces(n: int) -> None:
    """Centres of big cubes with m2 block moves: every commutator is checked as it is applied
    (gain as planned, finished faces untouched); the result has every face one colour."""
    from solver.engines.nxn import centres

    state = random_state_nxn(n, 5).flat.copy()
    targets = centres.centre_targets(state, n)
    centres.solve_centres(state, n, targets, centres.ORDER)
    for face in Face:
        assert (state[interior(n, face)] == targets[face]).all()
