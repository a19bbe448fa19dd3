"""The coordinate level: ranks round-trip, symmetries are symmetries, move tables agree with
cubie arithmetic."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.cube.cubie import CubieCube
from solver.cube.geometry import Face
from solver.engines.twophase import coord as C
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.tables import TwoPhaseTables


@pytest.fixture(scope="module")
def tables() -> TwoPhaseTables:
    """The process-wide tables (built into the user cache on the first run, ~1 minute)."""
    return get_solver().tables


@pytest.mark.parametrize("k", [4, 8])
def test_perm_rank_round_trip(k: int) -> None:
    n = [1, 1, 2, 6, 24, 120, 720, 5040, 40320][k]
    perms = C.perm_unrank(np.arange(n), k)
    assert len({tuple(p) for p in perms.tolist()}) == n
    assert (C.perm_rank(perms) == np.arange(n)).all()
    assert (perms[0] == np.arange(k)).all()  # the identity ranks 0


@pytest.mark.parametrize(
    "edges",
    [
        pytest.param(C.SLICE_EDGES, id="slice"),
        pytest.param(C.U_EDGES, id="u"),
        pytest.param(C.D_EDGES, id="d"),
    ],
)
def test_four_edge_coordinate_round_trip(edges: tuple[int, ...]) -> None:
    x = np.arange(C.N_SLICE_SORTED)
    ep = C.set_four_edges(x, edges)
    assert (np.sort(ep, axis=1) == np.arange(12)).all()
    assert (C.four_edges_of(ep, edges) == x).all()


def test_twist_and_flip_round_trip() -> None:
    t = np.arange(C.N_TWIST)
    co = C.set_twist(t)
    assert (co.sum(axis=1) % 3 == 0).all()
    assert (C.twist_of(co) == t).all()
    f = np.arange(C.N_FLIP)
    eo = C.set_flip(f)
    assert (eo.sum(axis=1) % 2 == 0).all()
    assert (C.flip_of(eo) == f).all()


def test_solved_coordinates() -> None:
    k = C.coordinates(CubieCube())
    assert (k["twist"], k["flip"], k["slice_sorted"], k["corners"]) == (0, 0, 0, 0)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_start_coordinates_are_the_vectorised_ones(seed: int) -> None:
    """The plain-integer coordinates of one state (a search's start) equal the numpy ones, for
    random states and their inverses."""
    rng = random.Random(seed)
    cubes = [CubieCube.random(rng) for _ in range(8)]
    cubes += [c.inverse() for c in cubes]
    names = ("twist", "flip", "slice_sorted", "u_edges", "d_edges", "corners")
    for cube, k in zip(cubes, C.coordinates_many(cubes), strict=True):
        assert C.start_coordinates(cube.cp, cube.co, cube.ep, cube.eo) == tuple(k[n] for n in names)


def test_start_coordinates_of_every_corner_and_edge_order() -> None:
    """Every corner permutation ranks as :func:`perm_rank` ranks it, every 4-of-12 edge
    placement as :func:`four_edges_of` (the whole ranges, not samples)."""
    perms = C.perm_unrank(np.arange(40320), 8)
    assert [C._rank(p) for p in perms.tolist()] == list(range(40320))
    for edges in (C.SLICE_EDGES, C.U_EDGES, C.D_EDGES):
        ep = C.set_four_edges(np.arange(C.N_SLICE_SORTED), edges)
        assert [C._four_edges(e, edges[0]) for e in ep.tolist()] == list(range(C.N_SLICE_SORTED))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_search_directions_are_the_conjugated_cubes(tables: TwoPhaseTables, seed: int) -> None:
    """The engine's six search directions (its plain-tuple arithmetic) start from the cube seen
    along each axis, and its inverse, as :class:`CubieCube` computes them."""
    solver = get_solver()
    cube = CubieCube.random(random.Random(seed))
    urf3, urf3_inv = (
        CubieCube(*(tuple(int(x) for x in a[s]) for a in C.sym_arrays()))
        for s in (C.SYM_URF3, C.SYM_URF3_INV)
    )
    bases = [cube, urf3_inv * cube * urf3, urf3 * cube * urf3_inv]
    expected = [(r, inv, b.inverse() if inv else b) for r, b in enumerate(bases) for inv in (0, 1)]
    names = ("twist", "flip", "slice_sorted", "u_edges", "d_edges", "corners")
    got = solver._directions(cube, frozenset(Face), 6)
    want = [
        (r, bool(inv), tuple(k[n] for n in names))
        for (r, inv, _), k in zip(
            expected, C.coordinates_many([e[2] for e in expected]), strict=True
        )
    ]
    firsts: dict[tuple[int, ...], tuple[int, bool, tuple[int, ...]]] = {}
    for w in want:  # (a direction equal to one before it is searched once)
        firsts.setdefault(w[2], w)
    assert [(r, inv, start[:6]) for r, inv, start in got] == list(firsts.values())


def test_phase2_means_slice_sorted_below_24() -> None:
    rng = random.Random(3)
    for _ in range(50):
        seq = " ".join(
            rng.choice(["U", "U'", "U2", "D", "D2", "D'", "R2", "L2", "F2", "B2"])
            for _ in range(15)
        )
        assert C.coordinates(CubieCube().apply(seq))["slice_sorted"] < 24
    assert C.coordinates(CubieCube().apply("R"))["slice_sorted"] >= 24


def test_symmetries_are_48_distinct_and_conjugate_moves_to_moves() -> None:
    cp, co, ep, eo = C.sym_arrays()
    keys = {(tuple(cp[s]), tuple(co[s]), tuple(ep[s]), tuple(eo[s])) for s in range(C.N_SYM)}
    assert len(keys) == C.N_SYM
    inv = C.sym_inverse()
    assert (inv[inv] == np.arange(C.N_SYM)).all()
    # the first 16 keep the UD axis: U and D turns map to U or D turns
    mcp, mco, _, _ = C.move_arrays()
    for s in range(C.N_SYM_D4H):
        a = C.corner_multiply(cp[s : s + 1], co[s : s + 1], mcp[0:1], mco[0:1])
        b = C.corner_multiply(a[0], a[1], cp[inv[s] : inv[s] + 1], co[inv[s] : inv[s] + 1])
        matches = [m for m in range(18) if (b[0][0] == mcp[m]).all() and (b[1][0] == mco[m]).all()]
        assert len(matches) == 1 and matches[0] // 3 in (0, 3)


def test_conj_move_table(tables: TwoPhaseTables) -> None:
    conj = tables.conj_move
    for s in range(C.N_SYM):
        assert sorted(conj[s].tolist()) == list(range(18))  # a bijection of the 18 moves
    # the 120-degree rotation about URF-DBL takes U to R, R to F, F to U
    assert [int(conj[16, m]) // 3 for m in (0, 3, 6)] in ([1, 2, 0], [2, 0, 1])


MOVE_TABLES = [
    pytest.param("twist_move", lambda c: C.coordinates(c)["twist"], range(18), id="twist"),
    pytest.param("flip_move", lambda c: C.coordinates(c)["flip"], range(18), id="flip"),
    pytest.param(
        "slice_sorted_move", lambda c: C.coordinates(c)["slice_sorted"], range(18), id="slice"
    ),
    pytest.param("u_edges_move", lambda c: C.coordinates(c)["u_edges"], range(18), id="u_edges"),
    pytest.param("d_edges_move", lambda c: C.coordinates(c)["d_edges"], range(18), id="d_edges"),
    pytest.param("corners_move", lambda c: C.coordinates(c)["corners"], range(18), id="corners"),
]


@pytest.mark.parametrize(("name", "coordinate", "moves"), MOVE_TABLES)
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_move_tables_agree_with_cubies(
    tables: TwoPhaseTables, name: str, coordinate: object, moves: range, seed: int
) -> None:
    rng = random.Random(seed)
    cube = CubieCube.random(rng)
    table = getattr(tables, name)
    fn = coordinate
    assert callable(fn)
    for m in moves:
        after = cube.apply([C.move_of_index(m)])
        assert table[fn(cube), m] == fn(after)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_phase2_tables_and_ud_merge(tables: TwoPhaseTables, seed: int) -> None:
    rng = random.Random(seed)
    names = [C.MOVE_NAMES[m] for m in C.PHASE2_MOVES]
    cube = CubieCube().apply(" ".join(rng.choice(names) for _ in range(20)))
    ud = int(C.ud_edges_of(np.array([cube.ep]))[0])
    k = C.coordinates(cube)
    assert tables.ud_from_u_d[k["u_edges"] * 24 + k["d_edges"] % 24] == ud
    for m in C.PHASE2_MOVES:
        after = cube.apply([C.move_of_index(m)])
        assert tables.ud_edges_move[ud, m] == int(C.ud_edges_of(np.array([after.ep]))[0])


def test_symmetry_classes(tables: TwoPhaseTables) -> None:
    assert int(tables.flipslice_classidx.max()) + 1 == C.N_FLIPSLICE_CLASS
    assert int(tables.corner_classidx.max()) + 1 == C.N_CORNER_CLASS
    # the representative of each class maps to itself with the symmetry 0
    reps = tables.flipslice_rep.astype(np.int64)
    assert (tables.flipslice_classidx[reps] == np.arange(C.N_FLIPSLICE_CLASS)).all()
    assert (tables.flipslice_sym[reps] == 0).all()
