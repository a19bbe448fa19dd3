"""The coordinate level of the 3x3 cube: integers that index the two-phase engine's tables.

Every function here is vectorised: it takes numpy arrays of many cubies (shape ``(k, 8)`` for
corners, ``(k, 12)`` for edges, in :mod:`solver.cube.cubie`'s replaced-by convention and numbering)
or of many coordinates, and returns arrays. Nothing loops in Python over more than a few dozen
items, so a whole move table is a handful of numpy operations.

Coordinates (range, solved value, phase)::

    twist         0..2186   (3^7)        solved 0   phase 1   corner orientations 0..6, base 3
    flip          0..2047   (2^11)       solved 0   phase 1   edge orientations 0..10, base 2
    slice         0..494    (12 C 4)     solved 0   phase 1   where the FR FL BL BR edges are
    slice_sorted  0..11879  (495 * 24)   solved 0   phase 1+2 slice * 24 + their order;
                                                              < 24 exactly in phase 2
    u_edges       0..11879               solved *   phase 1   where, in which order, UR UF UL UB are
    d_edges       0..11879               solved *   phase 1   same for DR DF DL DB
    corners       0..40319  (8!)         solved 0   phase 1+2 corner permutation (Lehmer code)
    ud_edges      0..40319  (8!)         solved 0   phase 2   permutation of the 8 U and D edges
    flipslice     0..1013759             solved 0   phase 1   slice * 2048 + flip

(*) 11856 and 1656 for the solved cube. ``u_edges``/``d_edges`` use the same 4-of-12 encoding
as ``slice_sorted`` and are only combined into ``ud_edges`` (:func:`ud_edges_from_u_d`) once
phase 1 has put the slice edges home.

A 4-of-12 coordinate (``slice_sorted``, ``u_edges``, ``d_edges``) of edges ``e0<e1<e2<e3`` is
``24 * a + b``: ``a`` ranks the set of the 4 positions they occupy (positions ``p`` mapped to
``11 - p``, then ranked colexicographically, so the set {8, 9, 10, 11} ranks 0) and ``b`` is the
Lehmer code of which edge sits at each of those positions in increasing position order.

Symmetries: the 48 symmetries of the cube are ``S(urf3, f2, u4, lr2) = ROT_URF3^urf3 ·
ROT_F2^f2 · ROT_U4^u4 · MIRR_LR2^lr2`` indexed ``16*urf3 + 8*f2 + 2*u4 + lr2`` (Kociemba's
order); the first 16 keep the UD axis and reduce the pruning tables. Mirrored cubies carry corner
orientations 3..5 (see :func:`corner_multiply`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import CubieCube
from solver.cube.geometry import Face
from solver.cube.notation import Move

__all__ = [
    "AXIAL_MOVES",
    "D_EDGES",
    "MOVE_NAMES",
    "N_AXIAL",
    "N_CORNERS",
    "N_CORNER_CLASS",
    "N_FLIP",
    "N_FLIPSLICE",
    "N_FLIPSLICE_CLASS",
    "N_MOVE",
    "N_PERM_4",
    "N_SLICE",
    "N_SLICE_SORTED",
    "N_SYM",
    "N_SYM_D4H",
    "N_TWIST",
    "N_UD_EDGES",
    "PHASE2_AXIAL",
    "PHASE2_MOVES",
    "SLICE_EDGES",
    "SYM_URF3",
    "SYM_URF3_INV",
    "U_EDGES",
    "IntArray",
    "coordinates",
    "coordinates_many",
    "corner_multiply",
    "corners_of",
    "edge_multiply",
    "flip_of",
    "four_edges_of",
    "move_arrays",
    "move_index",
    "move_of_index",
    "perm_rank",
    "perm_unrank",
    "set_corners",
    "set_flip",
    "set_four_edges",
    "set_twist",
    "set_ud_edges",
    "start_coordinates",
    "sym_arrays",
    "sym_inverse",
    "twist_of",
    "ud_edges_from_u_d",
    "ud_edges_of",
]

IntArray = npt.NDArray[np.int64]

N_TWIST = 2187  # 3^7
N_FLIP = 2048  # 2^11
N_SLICE = 495  # 12 choose 4
N_PERM_4 = 24  # 4!
N_SLICE_SORTED = N_SLICE * N_PERM_4  # 11880
N_CORNERS = 40320  # 8!
N_UD_EDGES = 40320  # 8!
N_FLIPSLICE = N_SLICE * N_FLIP  # 1013760
N_FLIPSLICE_CLASS = 64430  # classes of flipslice under the 16 UD symmetries
N_CORNER_CLASS = 2768  # classes of corners under the 16 UD symmetries
N_SYM = 48  # symmetries of the cube: 3 (URF3) * 2 (F2) * 4 (U4) * 2 (LR2)
N_SYM_D4H = 16  # the symmetries that keep the UD axis (urf3 = 0): the pruning tables' reduction
#: index of ROT_URF3, the 120° turn about the URF-DBL diagonal (``16 * urf3`` with urf3 = 1): the
#: cube seen along the RL axis; ``SYM_URF3 * k`` is ROT_URF3^k
SYM_URF3 = N_SYM_D4H
#: index of ROT_URF3^2 = ROT_URF3^-1 (urf3 = 2): the cube seen along the FB axis
SYM_URF3_INV = 2 * N_SYM_D4H
N_MOVE = 18

SLICE_EDGES = (8, 9, 10, 11)  # FR FL BL BR
U_EDGES = (0, 1, 2, 3)  # UR UF UL UB
D_EDGES = (4, 5, 6, 7)  # DR DF DL DB

#: move index ``3 * face + k``: k = 0 clockwise quarter, 1 half, 2 anticlockwise (U1 U2 U3 R1 ...)
MOVE_NAMES: tuple[str, ...] = tuple(f + s for f in "URFDLB" for s in ("", "2", "'"))
#: the moves that keep phase 2's subgroup <U, D, R2, F2, L2, B2>
PHASE2_MOVES: tuple[int, ...] = (0, 1, 2, 4, 7, 9, 10, 11, 13, 16)

_TURNS = (1, 2, -1)
#: the moves by table index (moves are immutable: made once)
_MOVES = tuple(Move.outer(Face(m // 3), _TURNS[m % 3]) for m in range(18))


def _axial_moves() -> tuple[tuple[int, int], ...]:
    out = []
    for axis in range(3):
        for a in range(4):
            for b in range(4):
                if a or b:
                    out.append((3 * axis + a - 1 if a else -1, 3 * (axis + 3) + b - 1 if b else -1))
    return tuple(out)


#: The robot's groups: turns of the two faces of one axis at once, ``(first, second)`` move
#: indices (U R F face first, its opposite second; -1 = that face does not turn). 15 per axis,
#: index ``15 * axis + ...``; a single face turn is a group too.
AXIAL_MOVES: tuple[tuple[int, int], ...] = _axial_moves()
N_AXIAL = 45
#: the groups made of phase-2 turns only (any U/D group; R2, L2, R2 L2; F2, B2, F2 B2)
PHASE2_AXIAL: tuple[int, ...] = tuple(
    k
    for k, (a, b) in enumerate(AXIAL_MOVES)
    if (a < 0 or a in PHASE2_MOVES) and (b < 0 or b in PHASE2_MOVES)
)


def move_index(move: Move) -> int:
    """The table index of an outer face turn."""
    return 3 * int(move.face) + _TURNS.index(move.turns if move.turns != -2 else 2)


def move_of_index(m: int) -> Move:
    return _MOVES[m]


# --- ranking ----------------------------------------------------------------------------------

_FACTORIAL = [1, 1, 2, 6, 24, 120, 720, 5040, 40320]


def perm_rank(perm: npt.NDArray[np.integer]) -> IntArray:
    """Lehmer code of each row of ``perm`` (a permutation of 0..k-1); the identity ranks 0."""
    perm = np.asarray(perm, dtype=np.int64)
    k = perm.shape[1]
    rank = np.zeros(perm.shape[0], dtype=np.int64)
    for i in range(k - 1):
        smaller = (perm[:, i + 1 :] < perm[:, i : i + 1]).sum(axis=1)
        rank += smaller * _FACTORIAL[k - 1 - i]
    return rank


def perm_unrank(rank: npt.ArrayLike, k: int) -> IntArray:
    """Inverse of :func:`perm_rank`: rows of permutations of 0..k-1."""
    rank = np.asarray(rank, dtype=np.int64).copy()
    n = rank.shape[0]
    digits = np.empty((n, k), dtype=np.int64)
    for i in range(k):
        digits[:, i] = rank // _FACTORIAL[k - 1 - i]
        rank %= _FACTORIAL[k - 1 - i]
    # Digit i says how many of the values not used so far are smaller than the one at i.
    out = np.empty((n, k), dtype=np.int64)
    available = np.tile(np.arange(k, dtype=np.int64), (n, 1))
    rows = np.arange(n)
    for i in range(k):
        # the digits[i]-th smallest still-available value; used values are pushed to k
        order = np.sort(available, axis=1)
        chosen = order[rows, digits[:, i]]
        out[:, i] = chosen
        available[available == chosen[:, None]] = k
    return out


@cache
def _comb_sets() -> tuple[IntArray, dict[tuple[int, ...], int]]:
    """All 495 position sets, ascending, indexed by their rank; and the rank of each set."""
    sets = np.empty((N_SLICE, 4), dtype=np.int64)
    ranks: dict[tuple[int, ...], int] = {}
    for combo in itertools.combinations(range(12), 4):
        c = sorted(11 - p for p in combo)
        a = sum(_binom(c[i], i + 1) for i in range(4))
        sets[a] = sorted(combo)
        ranks[tuple(sorted(combo))] = a
    return sets, ranks


@cache
def _binom_table() -> IntArray:
    return np.array([[_binom(n, k) for k in range(5)] for n in range(12)], dtype=np.int64)


def _binom(n: int, k: int) -> int:
    if k > n:
        return 0
    out = 1
    for i in range(k):
        out = out * (n - i) // (i + 1)
    return out


# --- corners ------------------------------------------------------------------------------------


def twist_of(co: npt.NDArray[np.integer]) -> IntArray:
    weights = 3 ** np.arange(6, -1, -1, dtype=np.int64)
    return np.asarray(co, dtype=np.int64)[:, :7] @ weights


def set_twist(twist: npt.ArrayLike) -> IntArray:
    t = np.asarray(twist, dtype=np.int64)
    co = np.empty((t.shape[0], 8), dtype=np.int64)
    for i in range(7):
        co[:, i] = (t // 3 ** (6 - i)) % 3
    co[:, 7] = (-co[:, :7].sum(axis=1)) % 3
    return co


def corners_of(cp: npt.NDArray[np.integer]) -> IntArray:
    return perm_rank(cp)


def set_corners(corners: npt.ArrayLike) -> IntArray:
    return perm_unrank(corners, 8)


def _gather(a: IntArray, idx: IntArray) -> IntArray:
    """Row-wise ``a[i, idx[i, j]]``, where either side may be one row broadcast to all."""
    out: IntArray
    if a.shape[0] == 1:
        out = a[0][idx]
    elif idx.shape[0] == 1:
        out = a[:, idx[0]]
    else:
        out = np.take_along_axis(a, idx, axis=1)
    return out


def corner_multiply(
    a_cp: IntArray, a_co: IntArray, b_cp: IntArray, b_co: IntArray
) -> tuple[IntArray, IntArray]:
    """``a * b`` for corners, mirrored cubies included (orientations 3..5 mark a mirror image;
    the rule is Kociemba's: mirrored composed with mirrored is regular). Either operand may be a
    single row, applied to every row of the other."""
    cp = _gather(a_cp, b_cp)
    oa = _gather(a_co, b_cp)
    ob = np.broadcast_to(b_co, oa.shape)
    if (oa < 3).all() and (ob < 3).all():
        return cp, (oa + ob) % 3
    both_reg = (oa < 3) & (ob < 3)
    b_mirr = (oa < 3) & (ob >= 3)
    a_mirr = (oa >= 3) & (ob < 3)
    co = np.empty_like(oa)
    s = oa + ob
    d = oa - ob
    co[both_reg] = (s % 3)[both_reg]
    co[b_mirr] = np.where(s >= 6, s - 3, s)[b_mirr]
    co[a_mirr] = np.where(d < 3, d + 3, d)[a_mirr]
    rest = ~(both_reg | b_mirr | a_mirr)
    co[rest] = np.where(d < 0, d + 3, d)[rest]
    return cp, co


# --- edges -------------------------------------------------------------------------------------


def flip_of(eo: npt.NDArray[np.integer]) -> IntArray:
    weights = 2 ** np.arange(10, -1, -1, dtype=np.int64)
    return np.asarray(eo, dtype=np.int64)[:, :11] @ weights


def set_flip(flip: npt.ArrayLike) -> IntArray:
    f = np.asarray(flip, dtype=np.int64)
    eo = np.empty((f.shape[0], 12), dtype=np.int64)
    for i in range(11):
        eo[:, i] = (f >> (10 - i)) & 1
    eo[:, 11] = eo[:, :11].sum(axis=1) % 2
    return eo


def edge_multiply(
    a_ep: IntArray, a_eo: IntArray, b_ep: IntArray, b_eo: IntArray
) -> tuple[IntArray, IntArray]:
    """``a * b`` for edges; either operand may be a single row."""
    return _gather(a_ep, b_ep), _gather(a_eo, b_ep) ^ b_eo


def four_edges_of(ep: npt.NDArray[np.integer], edges: tuple[int, ...]) -> IntArray:
    """The 4-of-12 coordinate (see the module docstring) of ``edges`` (four consecutive edge
    numbers) in each row of ``ep``."""
    ep = np.asarray(ep, dtype=np.int64)
    lo, hi = edges[0], edges[-1]
    assert tuple(range(lo, hi + 1)) == tuple(edges)
    rows, cols = np.nonzero((ep >= lo) & (ep <= hi))  # row-major: positions ascending per row
    pos = cols.reshape(-1, 4)
    order = ep[rows, cols].reshape(-1, 4) - lo  # which edge sits at each position
    c = 11 - pos[:, ::-1]  # ascending
    binom = _binom_table()
    a = binom[c[:, 0], 1] + binom[c[:, 1], 2] + binom[c[:, 2], 3] + binom[c[:, 3], 4]
    out: IntArray = N_PERM_4 * a + perm_rank(order)
    return out


def set_four_edges(coord: npt.ArrayLike, edges: tuple[int, ...]) -> IntArray:
    """An edge permutation with the given 4-of-12 coordinate; the other 8 edges fill the
    remaining positions in increasing order."""
    x = np.asarray(coord, dtype=np.int64)
    sets, _ = _comb_sets()
    pos = sets[x // N_PERM_4]
    order = perm_unrank(x % N_PERM_4, 4)
    k = x.shape[0]
    ep = np.full((k, 12), -1, dtype=np.int64)
    rows = np.arange(k)[:, None]
    ep[rows, pos] = np.asarray(edges, dtype=np.int64)[order]
    others = np.array([e for e in range(12) if e not in edges], dtype=np.int64)
    free = ep < 0
    ep[free] = np.tile(others, k)
    return ep


def ud_edges_of(ep: npt.NDArray[np.integer]) -> IntArray:
    """Phase 2: rank of the permutation of edges 0..7 in positions 0..7."""
    return perm_rank(np.asarray(ep)[:, :8])


def set_ud_edges(coord: npt.ArrayLike) -> IntArray:
    p = perm_unrank(coord, 8)
    return np.concatenate([p, np.tile(np.arange(8, 12, dtype=np.int64), (p.shape[0], 1))], axis=1)


def ud_edges_from_u_d() -> IntArray:
    """Table ``[u_edges * 24 + d_edges % 24] -> ud_edges`` for states whose U edges lie in the
    U and D layers (-1 elsewhere): at the end of phase 1 the D edges fill the positions the U
    edges leave free, so their order (``d_edges % 24``) is all that is needed."""
    _, ranks = _comb_sets()
    table = np.full(N_SLICE_SORTED * N_PERM_4, -1, dtype=np.int64)
    u_sets = [s for s in itertools.combinations(range(8), 4)]
    u_rank = np.array([ranks[s] for s in u_sets], dtype=np.int64)
    u = (u_rank[:, None] * N_PERM_4 + np.arange(N_PERM_4)[None, :]).reshape(-1)  # 70 * 24
    ep_u = set_four_edges(u, U_EDGES)
    for dperm in range(N_PERM_4):
        # D edges take the free positions among 0..7 in the order dperm
        order = perm_unrank(np.array([dperm]), 4)[0]
        ep = ep_u.copy()
        free = ep[:, :8] >= 4  # positions 0..7 not holding a U edge (hold 4..7 from filler)
        idx = np.nonzero(free)
        ep[idx[0], idx[1]] = np.tile(np.asarray(D_EDGES)[order], u.shape[0])
        table[u * N_PERM_4 + dperm] = ud_edges_of(ep)
    return table


# --- moves and symmetries -----------------------------------------------------------------------


@cache
def move_arrays() -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """(cp, co, ep, eo) of the 18 face turns, shape (18, 8) / (18, 12), read off the facelet
    model (not typed in)."""
    cubes = [CubieCube.from_moves([move_of_index(m)]) for m in range(N_MOVE)]
    return (
        np.array([c.cp for c in cubes], dtype=np.int64),
        np.array([c.co for c in cubes], dtype=np.int64),
        np.array([c.ep for c in cubes], dtype=np.int64),
        np.array([c.eo for c in cubes], dtype=np.int64),
    )


# The four basic symmetries (Kociemba's), replaced-by convention; the tests check that each
# conjugates every face turn to a face turn and that the 48 products are distinct.
_BASIC = {
    "ROT_URF3": (
        (0, 4, 5, 1, 3, 7, 6, 2),
        (1, 2, 1, 2, 2, 1, 2, 1),
        (1, 8, 5, 9, 3, 11, 7, 10, 0, 4, 6, 2),
        (1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1),
    ),
    "ROT_F2": (
        (5, 4, 7, 6, 1, 0, 3, 2),
        (0,) * 8,
        (6, 5, 4, 7, 2, 1, 0, 3, 9, 8, 11, 10),
        (0,) * 12,
    ),
    "ROT_U4": (
        (3, 0, 1, 2, 7, 4, 5, 6),
        (0,) * 8,
        (3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10),
        (0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1),
    ),
    "MIRR_LR2": (
        (1, 0, 3, 2, 5, 4, 7, 6),
        (3,) * 8,
        (2, 1, 0, 3, 6, 5, 4, 7, 9, 8, 11, 10),
        (0,) * 12,
    ),
}


@cache
def sym_arrays() -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """(cp, co, ep, eo) of the 48 symmetries, shape (48, 8) / (48, 12)."""

    def arr(name: str) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        cp, co, ep, eo = _BASIC[name]
        return (
            np.array([cp], dtype=np.int64),
            np.array([co], dtype=np.int64),
            np.array([ep], dtype=np.int64),
            np.array([eo], dtype=np.int64),
        )

    def mul(
        a: tuple[IntArray, IntArray, IntArray, IntArray],
        b: tuple[IntArray, IntArray, IntArray, IntArray],
    ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        cp, co = corner_multiply(a[0], a[1], b[0], b[1])
        ep, eo = edge_multiply(a[2], a[3], b[2], b[3])
        return cp, co, ep, eo

    ident = (
        np.arange(8, dtype=np.int64)[None, :],
        np.zeros((1, 8), dtype=np.int64),
        np.arange(12, dtype=np.int64)[None, :],
        np.zeros((1, 12), dtype=np.int64),
    )
    out = []
    cc = ident
    for _urf3 in range(3):
        for _f2 in range(2):
            for _u4 in range(4):
                for _lr2 in range(2):
                    out.append(cc)
                    cc = mul(cc, arr("MIRR_LR2"))
                cc = mul(cc, arr("ROT_U4"))
            cc = mul(cc, arr("ROT_F2"))
        cc = mul(cc, arr("ROT_URF3"))
    return (
        np.concatenate([o[0] for o in out]),
        np.concatenate([o[1] for o in out]),
        np.concatenate([o[2] for o in out]),
        np.concatenate([o[3] for o in out]),
    )


@cache
def sym_inverse() -> IntArray:
    """``inv[s]``: the symmetry with ``S[s] * S[inv[s]] = identity``."""
    cp, co, ep, eo = sym_arrays()
    inv = np.empty(N_SYM, dtype=np.int64)
    for s in range(N_SYM):
        pcp, pco = corner_multiply(cp[s : s + 1], co[s : s + 1], cp, co)
        pep, peo = edge_multiply(ep[s : s + 1], eo[s : s + 1], ep, eo)
        ok = (
            (pcp == np.arange(8)).all(1)
            & (pco == 0).all(1)
            & (pep == np.arange(12)).all(1)
            & (peo == 0).all(1)
        )
        (found,) = np.flatnonzero(ok)
        inv[s] = found
    return inv


def coordinates(cube: CubieCube) -> dict[str, int]:
    """Every coordinate of one cubie state (for tests and for starting a search)."""
    return coordinates_many([cube])[0]


_BINOM = tuple(tuple(_binom(n, k) for k in range(5)) for n in range(12))


def _rank(perm: Sequence[int]) -> int:
    """:func:`perm_rank` of one permutation, in plain integers."""
    k, rank = len(perm), 0
    left = (1 << k) - 1  # the values after position i: those not seen yet
    for i in range(k - 1):
        p = perm[i]
        left ^= 1 << p
        rank += (left & ((1 << p) - 1)).bit_count() * _FACTORIAL[k - 1 - i]
    return rank


def _four_edges(ep: Sequence[int], lo: int) -> int:
    """:func:`four_edges_of` of one edge permutation, for the edges ``lo..lo+3``."""
    pos = [i for i, e in enumerate(ep) if lo <= e < lo + 4]
    c = [11 - i for i in reversed(pos)]
    a = _BINOM[c[0]][1] + _BINOM[c[1]][2] + _BINOM[c[2]][3] + _BINOM[c[3]][4]
    return N_PERM_4 * a + _rank([ep[i] - lo for i in pos])


def start_coordinates(
    cp: Sequence[int], co: Sequence[int], ep: Sequence[int], eo: Sequence[int]
) -> tuple[int, int, int, int, int, int]:
    """``(twist, flip, slice_sorted, u_edges, d_edges, corners)`` of one state, as
    :func:`coordinates` gives them, in plain integers: a search's start is prepared on the way
    to the robot's first move, where numpy's per-call cost for a handful of states is most of
    the time (a state's six directions, with their products and inverses: 0.10 against
    0.32 ms)."""
    twist = 0
    for x in co[:7]:
        twist = 3 * twist + x
    flip = 0
    for x in eo[:11]:
        flip = 2 * flip + x
    return (
        twist,
        flip,
        _four_edges(ep, SLICE_EDGES[0]),
        _four_edges(ep, U_EDGES[0]),
        _four_edges(ep, D_EDGES[0]),
        _rank(cp),
    )


def coordinates_many(cubes: Sequence[CubieCube]) -> list[dict[str, int]]:
    """:func:`coordinates` of several states in one vectorised pass."""
    cp = np.array([c.cp for c in cubes], dtype=np.int64)
    co = np.array([c.co for c in cubes], dtype=np.int64)
    ep = np.array([c.ep for c in cubes], dtype=np.int64)
    eo = np.array([c.eo for c in cubes], dtype=np.int64)
    columns = {
        "twist": twist_of(co),
        "flip": flip_of(eo),
        "slice_sorted": four_edges_of(ep, SLICE_EDGES),
        "u_edges": four_edges_of(ep, U_EDGES),
        "d_edges": four_edges_of(ep, D_EDGES),
        "corners": corners_of(cp),
    }
    return [{k: int(v[i]) for k, v in columns.items()} for i in range(len(cubes))]
