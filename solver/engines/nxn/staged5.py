"""5x5 centres by a staged search (the classic reduction stages, as for the 4x4 in
:mod:`solver.engines.nxn.staged`).

The 48 movable centre pieces of a 5x5 form two orbits of 24: the x-centres (cells (1, 1),
(1, 3), (3, 1), (3, 3) of each face) and the t-centres (cells (1, 2), (2, 1), (2, 3), (3, 2));
position ``4 * face + k`` of an orbit is its ``k``-th cell on ``face`` (faces in U R F D L B
order). The fixed centres give each face its colour. The moves are the 18 outer turns and the
18 two-layer wide turns (``Rw``), each 1 in OBTM; an inner slice ``2R`` is ``Rw R'`` (2 in
OBTM, as the metric counts it), so a search depth is the OBTM of the stage. None of them moves a
fixed centre, and leaving out the three-layer turns and the middle slices loses nothing:
``3Rw`` is ``Lw'`` and a whole-cube rotation, a middle slice ``Rw' Lw`` and a rotation.

Three stages, each an IDA* on the pair of orbit masks (bit i: stage position i holds a colour
the stage places) in the C kernel ``_staged5.c``:

1. ``axis U/D`` — the 8 positions of each orbit that hold the U and D colours: solved on the U
   and D faces. All 36 moves.
2. ``axis R/L`` — of the other 16 positions, the 8 that hold the R and L colours, solved on R
   and L with the wings in an even permutation, with the 28 moves that keep the U/D positions
   (outer turns, wide turns of the U/D axis, other wide half turns). A wide quarter turn is an
   odd wing permutation and every other move even, so this stage also removes the wing parity
   (the x masks carry it in bit :data:`PARITY_BIT`); stage 3 and everything after are even.
3. ``faces`` — per axis, the positions of its first face's colour (U, R, F): every face its
   colour, with the 24 moves that keep every axis (outer turns, wide half turns).

Pruning: per stage, exact distance tables (breadth-first search in C on first use, about 6.5
s of CPU in all, cached: :mod:`solver.engines.nxn.tables`, 26 MB): stages 1 and 2 one per orbit
(735,471 and 25,740 / 12,870 entries), stage 3 every x mask with the t mask of one axis
(24,010,000 entries, read for the other two axes through a rotation of the cube that keeps the
stage) and every t mask (343,000); the search prunes by the largest. Near the goal, a
*perimeter* (every pair of masks within :data:`PERIMETERS` moves of the goal, hashed, built
in C at load in a fraction of a second, 28 MB) gives the exact distance, so the last moves of
a stage are never searched blindly. Stages 2 and 3 are shortest; stage 1 prunes above the
perimeter by the larger distance plus half the smaller (:data:`STAGE1_BOOST`): not a lower
bound, about half a move longer than the shortest and ten times faster (measured on random
states: the stage-1 search is the one that costs).

The stages run on whole-cube rotations of the cube (:data:`FIRST`, :data:`SECOND`: each of the
six orders of the axes), the moves found mapped back to the cube as given. Up to
:data:`STAGE_PATHS` solutions of stages 1 and 2 are kept, stage 3 is searched for the ones whose
stage-3 lower bound is least, and :func:`staged_centres` returns the shortest few for the
engine to pair edges on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache, partial
from math import comb

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Move, parse
from solver.engines.nxn import _staged5
from solver.engines.nxn.sim import IntArray, face_map, geometry
from solver.engines.nxn.staged import StagedCentres
from solver.engines.nxn.tables import Progress, Report, Table, load_table
from solver.engines.nxn.wings import wing_parity
from solver.errors import NoSolutionError

__all__ = [
    "FIRST",
    "POSITIONS_T",
    "POSITIONS_X",
    "SECOND",
    "StagedCentres",
    "load_tables",
    "staged_centres",
]

log = logging.getLogger(__name__)

N = 5
#: flat sticker index of each x-centre position (4 per face, faces in U R F D L B order)
POSITIONS_X: tuple[int, ...] = tuple(
    f * N * N + r * N + c for f in range(6) for r, c in ((1, 1), (1, 3), (3, 1), (3, 3))
)
#: flat sticker index of each t-centre position
POSITIONS_T: tuple[int, ...] = tuple(
    f * N * N + r * N + c for f in range(6) for r, c in ((1, 2), (2, 1), (2, 3), (3, 2))
)
#: the 36 moves: outer turns, then two-layer wide turns
MOVES: tuple[Move, ...] = tuple(
    Move.block(f, 1, hi, t) for hi in (1, 2) for f in Face for t in (1, 2, -1)
)
#: whole-cube rotations that put each axis first (on U/D: "", "x", "z"), and after each, the
#: ones that put either other axis second (on R/L): all six axis orders
FIRST = ("", "x", "z")
SECOND = ("", "y")
#: shortest solutions kept per stage (stages 1 and 2) and stage-3 searches per axis order
STAGE_PATHS = 8
STAGE3_SEARCHES = 6
#: shortest stage-3 solutions kept per search
STAGE3_PATHS = 1
#: stage 1 prunes by ``max + min * STAGE1_BOOST / 4`` of its two table distances above the
#: perimeter (not a lower bound: about half a move longer than the shortest, ten times faster)
STAGE1_BOOST = 2
#: deepest stage and nodes per search (far beyond what a stage needs: a safety net)
MAX_DEPTH = 30
NODE_LIMIT = 2_000_000_000

_UD = tuple(p for p in range(24) if p // 4 in (Face.U, Face.D))
_S1 = tuple(range(24))
_S2 = tuple(p for p in range(24) if p // 4 not in (Face.U, Face.D))
#: stage-3 position order: axis by axis (U/D, R/L, F/B), first face's 4 positions first
_S3 = tuple(4 * f + k for f in (0, 3, 1, 4, 2, 5) for k in range(4))
_FIRST = (Face.U, Face.R, Face.F)
_ORDERS_POS = (_S1, _S2, _S3)

Colours = npt.NDArray[np.uint8]
MoveTable = npt.NDArray[np.uint32]


@cache
def _sources(rotation: str = "") -> tuple[IntArray, IntArray]:
    """For each move (or for ``rotation`` alone: one row) and orbit (x, t), the position whose
    piece each position gets (36 x 24)."""
    g = geometry(N)
    out: list[IntArray] = []
    for positions in (POSITIONS_X, POSITIONS_T):
        where = {flat: p for p, flat in enumerate(positions)}
        rows = []
        for moves in [parse(rotation)] if rotation else [[move] for move in MOVES]:
            lab = np.arange(6 * N * N)
            g.apply(lab, moves)
            rows.append([where[int(s)] for s in lab[list(positions)]])
        out.append(np.array(rows, dtype=np.int64))
    return out[0], out[1]


@cache
def _wing_flips() -> tuple[int, ...]:
    """1 for the moves that are odd permutations of the wings (wide quarter turns)."""
    g = geometry(N)
    out = []
    for move in MOVES:
        state = np.repeat(np.arange(6, dtype=np.uint8), N * N)
        g.apply_move(state, move)
        out.append(wing_parity(state, N, 1))
    return tuple(out)


def _keeping(groups: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """The moves that map each group of positions onto itself (in both orbits)."""
    return tuple(
        m
        for m in range(len(MOVES))
        if all(set(src[m][list(g)]) == set(g) for src in _sources() for g in groups)
    )


@cache
def _stage_moves() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    axes = tuple(_S3[8 * a : 8 * a + 8] for a in range(3))
    return tuple(range(len(MOVES))), _keeping((_UD,)), _keeping(axes)


def _byte_tables(stage: int, sources: IntArray) -> MoveTable:
    """The kernel's byte tables of position permutations (rows of ``sources``: the position
    whose piece each position gets) in a stage's position order (rows x 768)."""
    positions = _ORDERS_POS[stage]
    where = {p: i for i, p in enumerate(positions)}
    out = np.zeros((len(sources), 3, 256), dtype=np.uint32)
    values = np.arange(256, dtype=np.uint32)
    for row, src in enumerate(sources):
        for i, p in enumerate(positions):  # position i gets the piece of position j
            j = where[int(src[p])]
            out[row, j // 8] |= ((values >> np.uint32(j % 8)) & 1) << np.uint32(i)
    return out.reshape(len(sources), 768)


@cache
def _move_tables(stage: int, orbit: int) -> MoveTable:
    """The byte tables of a stage's moves for one orbit (0: x, 1: t). Stage 2's x masks carry
    the wing parity in bit :data:`PARITY_BIT` (a byte table may map its byte to anything)."""
    moves = _stage_moves()[stage]
    out = _byte_tables(stage, _sources()[orbit][list(moves)])
    if stage == 1 and orbit == 0:
        for row, m in enumerate(moves):
            for v in (0, 1):
                out[row, 512 + v] |= np.uint32((v ^ _wing_flips()[m]) << PARITY_BIT)
    return out


@cache
def _axis_slot(stage: int) -> tuple[bytes, bytes]:
    """Per stage move: its axis (moves of one axis commute) and slot (face and width)."""
    axis, slot = [], []
    for m in _stage_moves()[stage]:
        _, hi = MOVES[m].layers(N)
        axis.append(int(MOVES[m].face) % 3)
        slot.append(2 * (int(MOVES[m].face) // 3) + hi - 1)
    return bytes(axis), bytes(slot)


def _goal(stage: int) -> int:
    if stage == 0:
        return sum(1 << i for i, p in enumerate(_S1) if p // 4 in (Face.U, Face.D))
    if stage == 1:
        return sum(1 << i for i, p in enumerate(_S2) if p // 4 in (Face.R, Face.L))
    return 0x0F0F0F


@cache
def _masks(n: int, k: int) -> MoveTable:
    """All n-bit masks with k bits set, ascending (the index of a mask is its colex rank)."""
    if k == 0:
        return np.zeros(1, dtype=np.uint32)
    if k == n:
        return np.array([(1 << n) - 1], dtype=np.uint32)
    high = _masks(n - 1, k - 1) | np.uint32(1 << (n - 1))
    return np.concatenate([_masks(n - 1, k), high])


#: rank tables: [byte][set bits in the lower bytes, clamped to 8][byte value]
_RANK_SHAPE = (3, 9, 256)


def _colex_ranks(n: int) -> MoveTable:
    """Rank table of the colex rank of n-bit masks with 8 bits set (the index in
    :func:`_masks` (n, 8))."""
    out = np.zeros(_RANK_SHAPE, dtype=np.uint32)
    for b in range(3):
        for k in range(9):
            for v in range(256):
                bits = [j for j in range(8) if v >> j & 1 and 8 * b + j < n]
                out[b, k, v] = sum(comb(8 * b + j, k + t + 1) for t, j in enumerate(bits))
    return out


def _axis_ranks(weights: tuple[int, int, int]) -> MoveTable:
    """Rank table of a stage-3 mask: the sum of each byte's rank among the 4-of-8 masks
    (:func:`_masks` (8, 4)) times its weight."""
    r8 = np.zeros(256, dtype=np.uint32)
    r8[_masks(8, 4)] = np.arange(70, dtype=np.uint32)
    out = np.zeros(_RANK_SHAPE, dtype=np.uint32)
    for b in range(3):
        out[b] = r8 * np.uint32(weights[b])
    return out


@dataclass(frozen=True)
class _Spec:
    """A distance table over (x mask, t mask): masks by index (``ux``, ``ut``) and back
    (rank tables ``lx``, ``lt``: the index of (x, t) is rank(lx, x) + rank(lt, t))."""

    name: str
    stage: int
    ux: MoveTable
    ut: MoveTable
    lx: MoveTable
    lt: MoveTable

    @property
    def size(self) -> int:
        return len(self.ux) * len(self.ut)


_NONE = np.zeros(1, dtype=np.uint32)
#: the bit of a stage-2 x mask that holds the wing parity (above the 16 positions)
PARITY_BIT = 16


@cache
def _specs() -> tuple[tuple[_Spec, ...], ...]:
    """The tables of each stage. Stages 1 and 2: one per orbit (stage 2's x masks with the
    wing parity). Stage 3: every x mask with the t mask of the U/D axis (read for the other
    axes through a rotation of the cube), and every t mask."""
    zero = np.zeros(_RANK_SHAPE, dtype=np.uint32)
    one = []
    for stage, n in ((0, 24), (1, 16)):
        masks, ranks = _masks(n, 8), _colex_ranks(n)
        ux, lx = masks, ranks
        if stage == 1:  # x masks x wing parity
            ux = np.concatenate([masks, masks | np.uint32(1 << PARITY_BIT)])
            lx = ranks.copy()
            lx[2, :, 1] += np.uint32(len(masks))
        one.append(
            (
                _Spec(f"centres5-{_NAMES[stage]}-x", stage, ux, _NONE, lx, zero),
                _Spec(f"centres5-{_NAMES[stage]}-t", stage, _NONE, masks, zero, ranks),
            )
        )
    m8 = _masks(8, 4)
    grid = m8[:, None, None] | (m8[None, :, None] << 8) | (m8[None, None, :] << 16)
    all3: MoveTable = np.asarray(grid, dtype=np.uint32).ravel()
    xt = _Spec(
        "centres5-faces-xt",
        2,
        all3,
        m8.copy(),
        _axis_ranks((4900 * 70, 70 * 70, 70)),
        _axis_ranks((1, 0, 0)),
    )
    t = _Spec("centres5-faces-t", 2, _NONE, all3, zero, _axis_ranks((4900, 70, 1)))
    return one[0], one[1], (xt, t)


def _build(spec: _Spec, report: Report) -> Table:
    dist = np.full(spec.size, -1, dtype=np.int8)
    goal = _goal(spec.stage)  # a rank table reads only the bytes its table keeps
    start = _rank(spec.lx.ravel(), goal) + _rank(spec.lt.ravel(), goal)
    dist[start] = 0
    mx, mt = _move_tables(spec.stage, 0), _move_tables(spec.stage, 1)
    depth, added, left = 0, 1, spec.size - 1
    while added:
        # every stage's moves are closed under inverses: once fewer entries are left than
        # were just reached, each of them looks for a neighbour instead
        backward = left < added
        added = _staged5.bfs_level(
            dist, depth, mx, mt, spec.ux, spec.ut, spec.lx, spec.lt, backward
        )
        left -= added
        report(spec.size - left)
        log.debug("table %s: %d at depth %d", spec.name, added, depth + 1)
        depth += 1
    return dist


def _rank(lut: MoveTable, mask: int) -> int:
    """The rank of ``mask`` by a flattened rank table (as the kernel computes it)."""
    out, k = 0, 0
    for b in range(3):
        v = mask >> (8 * b) & 255
        out += int(lut[(b * 9 + min(k, 8)) * 256 + v])
        k += bin(v).count("1")
    return out


_NAMES = ("axis", "axis2-parity", "faces")
#: rotations that bring the R/L and the F/B axis onto U/D, keeping U, R, F first faces
_TO_UD = ("x' z'", "x y")

#: a heuristic as the kernel takes it: (dist, lx, lt, sym_x, sym_t)
Heuristic = tuple[Table, MoveTable, MoveTable, MoveTable | None, MoveTable | None]


#: per stage: the perimeter's depth and its hash's slots (log2; at most half of them filled)
PERIMETERS = ((5, 21), (6, 20), (5, 19))


@dataclass(frozen=True)
class _Tables:
    heuristics: tuple[tuple[Heuristic, ...], ...]
    perimeters: tuple[tuple[npt.NDArray[np.uint64], int], ...]


def _perimeter(stage: int) -> tuple[npt.NDArray[np.uint64], int]:
    """Every pair of masks within :data:`PERIMETERS` moves of the stage's goal, hashed."""
    depth, bits = PERIMETERS[stage]
    table = np.zeros(1 << bits, dtype=np.uint64)
    goal = _goal(stage)
    count = _staged5.perimeter(
        table, _move_tables(stage, 0), _move_tables(stage, 1), goal, goal, depth
    )
    log.debug("5x5 centre stage %d: %d pairs within %d moves", stage + 1, count, depth)
    return table, depth


def load_tables(cache_dir: str | None = None, progress: Progress | None = None) -> _Tables:
    """The stage tables (from the cache, or built in C and cached: a few seconds, shown on
    ``progress``)."""
    stages: list[tuple[Heuristic, ...]] = []
    for specs in _specs():
        heur: list[Heuristic] = []
        for spec in specs:
            dist = load_table(spec.name, spec.size, partial(_build, spec), cache_dir, progress)
            heur.append((dist, spec.lx, spec.lt, None, None))
            if spec.name.endswith("-xt"):  # the same table for the other two axes
                for rotation in _TO_UD:
                    sx, st = (_byte_tables(2, src)[0] for src in _sources(rotation))
                    heur.append((dist, spec.lx, spec.lt, sx, st))
        stages.append(tuple(heur))
    return _Tables(tuple(stages), _perimeters())


@cache
def _perimeters() -> tuple[tuple[npt.NDArray[np.uint64], int], ...]:
    return tuple(_perimeter(stage) for stage in range(3))


def _mask(colours: Colours, stage: int, wanted: tuple[tuple[int, ...], ...]) -> int:
    """The stage mask: bit i when stage position i holds one of the colours wanted there
    (``wanted`` per face)."""
    out = 0
    for i, p in enumerate(_ORDERS_POS[stage]):
        if int(colours[p]) in wanted[p // 4]:
            out |= 1 << i
    return out


class _Stager:
    """The stage searches in one frame (a whole-cube rotation of the cube; the colour of each
    face fixed by its fixed centre)."""

    def __init__(self, state: Colours, tables: _Tables) -> None:
        self.tables = tables
        c = tuple(int(state[f * N * N + N * N // 2]) for f in range(6))
        ud, rl = (c[Face.U], c[Face.D]), (c[Face.R], c[Face.L])
        self.wanted: tuple[tuple[tuple[int, ...], ...], ...] = (
            tuple(ud for _ in range(6)),
            tuple(rl for _ in range(6)),
            tuple((c[_FIRST[f % 3]],) for f in range(6)),
        )
        self.nodes = 0

    def masks(self, cx: Colours, ct: Colours, stage: int, parity: int = 0) -> tuple[int, int]:
        """The stage's masks (stage 2: ``parity``, the wing parity, in the x mask)."""
        mx = _mask(cx, stage, self.wanted[stage])
        if stage == 1:
            mx |= parity << PARITY_BIT
        return mx, _mask(ct, stage, self.wanted[stage])

    def bound(self, cx: Colours, ct: Colours, stage: int) -> int:
        """The stage's lower bound: the largest table distance."""
        mx, mt = self.masks(cx, ct, stage)
        out = 0
        for dist, lx, lt, sx, st in self.tables.heuristics[stage]:
            x = mx if sx is None else _turn(sx, mx)
            t = mt if st is None else _turn(st, mt)
            out = max(out, int(dist[_rank(lx.ravel(), x) + _rank(lt.ravel(), t)]))
        return out

    def search(
        self,
        cx: Colours,
        ct: Colours,
        stage: int,
        limit: int,
        depths: tuple[int, int] = (0, MAX_DEPTH),
        node_limit: int = NODE_LIMIT,
        boost: int = 0,
        parity: int = 0,
    ) -> list[list[int]]:
        """Up to ``limit`` shortest stage solutions (move indices) of ``depths`` (least, most)
        moves; none when there is none or ``node_limit`` nodes did not find one."""
        mx, mt = self.masks(cx, ct, stage, parity)
        axis, slot = _axis_slot(stage)
        goal = _goal(stage)
        found, nodes = _staged5.search(
            self.tables.heuristics[stage],
            _move_tables(stage, 0),
            _move_tables(stage, 1),
            axis,
            slot,
            mx,
            mt,
            goal,
            goal,
            *depths,
            limit,
            node_limit,
            *self.tables.perimeters[stage],
            boost,
        )
        self.nodes += nodes
        if not found and node_limit >= NODE_LIMIT and depths[1] >= MAX_DEPTH:
            raise NoSolutionError(  # pragma: no cover - every stage state is solvable
                f"5x5 centre stage {stage + 1} found no solution within {MAX_DEPTH} moves"
            )
        moves = _stage_moves()[stage]
        return [[moves[m] for m in path] for path in found]


def _turn(table: MoveTable, mask: int) -> int:
    return int(table[mask & 255] | table[256 + (mask >> 8 & 255)] | table[512 + (mask >> 16)])


def _turned(cx: Colours, ct: Colours, path: list[int]) -> tuple[Colours, Colours]:
    sx, st = _sources()
    for m in path:
        cx, ct = cx[sx[m]], ct[st[m]]
    return cx, ct


def _distinct(
    cx: Colours, ct: Colours, paths: list[list[int]]
) -> list[tuple[list[int], Colours, Colours]]:
    """The paths with the states they reach, one path per state."""
    out, seen = [], set()
    for path in paths:
        nx, nt = _turned(cx, ct, path)
        key = nx.tobytes() + nt.tobytes()
        if key not in seen:
            seen.add(key)
            out.append((path, nx, nt))
    return out


@cache
def _to_given(rotation: str) -> tuple[int, ...]:
    """For each move index in the frame of ``rotation``, the index of the same move on the
    cube as given."""
    fmap = face_map(rotation)
    index = {(m.face, m.hi, m.turns): i for i, m in enumerate(MOVES)}
    return tuple(index[(fmap[m.face], m.hi, m.turns)] for m in MOVES)


def _reframe(path: list[int], source: str, target: str) -> list[int]:
    """Move indices found in the frame ``source`` as indices in the frame ``target``."""
    back = {g: i for i, g in enumerate(_to_given(target))}
    return [back[_to_given(source)[m]] for m in path]


def _first_stages(
    state: Colours, tables: _Tables
) -> dict[str, tuple[_Stager, Colours, Colours, list[list[int]]]]:
    """Stage 1 for each axis first (rotations :data:`FIRST`), each with its
    frame's stager and colours and its stage-1 solutions (by the boosted bound: near
    shortest)."""
    out = {}
    for rotation in FIRST:
        rotated = state.copy()
        geometry(N).apply(rotated, parse(rotation))
        stager = _Stager(rotated, tables)
        cx, ct = rotated[list(POSITIONS_X)], rotated[list(POSITIONS_T)]
        paths = stager.search(cx, ct, 0, STAGE_PATHS, boost=STAGE1_BOOST)
        out[rotation] = (stager, cx, ct, paths)
    return out


def staged_centres(
    state: Colours,
    keep: int = 1,
    cache_dir: str | None = None,
    progress: Progress | None = None,
    searches: int | None = None,
    paths3: int = STAGE3_PATHS,
) -> list[StagedCentres]:
    """The ``keep`` shortest centre solutions found for the 5x5 ``state`` (flat colours; not
    changed), shortest first, in the frame of ``state``. Each leaves every face the colour of
    its fixed centre and the wings in an even permutation. Stage 3 is searched after the
    ``searches`` (default: ``keep``, at least :data:`STAGE3_SEARCHES`) best first two stages,
    ``paths3`` shortest solutions each."""
    tables = load_tables(cache_dir, progress)
    targets = tuple(int(state[f * N * N + N * N // 2]) for f in range(6))
    parity0 = wing_parity(state, N, 1)  # a whole-cube rotation is even on the wings
    candidates: list[tuple[int, str, list[int], list[int], _Stager, Colours, Colours]] = []
    nodes = 0
    for first, (stager1, cx, ct, paths1) in _first_stages(state, tables).items():
        nodes += stager1.nodes
        for second in SECOND:
            frame = f"{first} {second}".strip()
            rotated = state.copy()
            geometry(N).apply(rotated, parse(frame))
            stager = _Stager(rotated, tables) if second else stager1
            cx, ct = rotated[list(POSITIONS_X)], rotated[list(POSITIONS_T)]
            framed = [_reframe(p, first, frame) for p in paths1]
            for path1, c1x, c1t in _distinct(cx, ct, framed):
                parity = (parity0 + sum(_wing_flips()[m] for m in path1)) % 2
                paths2 = stager.search(c1x, c1t, 1, STAGE_PATHS, parity=parity)
                for path2, c2x, c2t in _distinct(c1x, c1t, paths2):
                    low = len(path1) + len(path2) + stager.bound(c2x, c2t, 2)
                    candidates.append((low, frame, path1, path2, stager, c2x, c2t))
            nodes += stager.nodes if second else 0
    candidates.sort(key=lambda item: item[0])
    found: list[tuple[int, StagedCentres]] = []
    for _, frame, path1, path2, stager, c2x, c2t in candidates[
        : searches or max(keep, STAGE3_SEARCHES)
    ]:
        given = _to_given(frame)
        for path3 in stager.search(c2x, c2t, 2, paths3):
            stages = tuple(tuple(MOVES[given[m]] for m in p) for p in (path1, path2, path3))
            option = StagedCentres(stages, targets)  # type: ignore[arg-type]
            found.append((option.length, option))
    found.sort(key=lambda item: item[0])
    log.debug("5x5 staged centres: %d candidates, %d stage nodes", len(candidates), nodes)
    return [option for _, option in found[: max(1, keep)]]
