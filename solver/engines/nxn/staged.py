"""4x4 centres by a staged search on exact distance tables (the classic reduction stages).

The 24 centre pieces of a 4x4 sit at :data:`POSITIONS` (the four centre cells of each face,
faces in U R F D L B order: position ``4 * face + k``). The moves are the 18 outer turns and
the 18 two-layer wide turns (``Rw``), each 1 in OBTM; an inner slice turn is a wide turn and an
outer turn (2 in OBTM), so a table distance is the OBTM of the stage. Three stages, each with an
exact distance table built by breadth-first search with numpy and cached
(:mod:`solver.engines.nxn.tables`):

1. ``axis U/D`` — coordinate: the 8 positions that hold the two colours of one opposite pair
   (a 24-bit mask of popcount 8, ranked in :func:`_masks` order): C(24, 8) = 735,471 entries,
   solved when they are the U and D positions. All 36 moves.
2. ``axis R/L`` — with the first pair kept on U/D: the 8 of the other 16 positions that hold a
   second pair, times the parity of the wing permutation: C(16, 8) · 2 = 25,740 entries,
   solved on the R and L positions with even wings. The 28 moves that keep the U/D positions
   (outer turns, wide turns of the U/D axis, other wide half turns). A wide quarter turn is an
   odd wing permutation (its inner slice is one 4-cycle of wings), every other move even, so
   the stage also removes OLL parity: the later stages are even on wings.
3. ``faces`` — for each axis (U/D, R/L, F/B) the 4 of its 8 positions holding the colour its
   first face gets: 70³ = 343,000 entries, solved with every face one colour. The 24 moves that
   keep every axis (outer turns, wide half turns).

Every opposite colour pair is tried for stage 1 and both remaining pairs for stage 2 (the six
ways to give colour pairs to axes), and stage 3 takes the closest of the four colourings that a
real cube allows (a rotation of the colour scheme, so the corners fit). Optimal stage solutions
are enumerated (up to :data:`STAGE_PATHS` per stage), so a stage is chosen by the total, not
greedily; :func:`staged_centres` returns the shortest few, for the engine to pair edges on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn.centres import orientation_colours
from solver.engines.nxn.sim import IntArray, geometry
from solver.engines.nxn.tables import Progress, Report, Table, load_table
from solver.engines.nxn.wings import wing_parity

__all__ = ["POSITIONS", "StagedCentres", "load_tables", "staged_centres"]

N = 4
#: flat sticker index of each centre position (4 per face, faces in U R F D L B order)
POSITIONS: tuple[int, ...] = tuple(
    f * N * N + r * N + c for f in range(6) for r in (1, 2) for c in (1, 2)
)
#: the 36 moves: outer turns, then two-layer wide turns
MOVES: tuple[Move, ...] = tuple(
    Move.block(f, 1, hi, t) for hi in (1, 2) for f in Face for t in (1, 2, -1)
)
N_STAGE1 = 735_471  # C(24, 8)
N_STAGE2 = 12_870 * 2  # C(16, 8) x wing parity
N_STAGE3 = 70**3  # C(8, 4) per axis
#: optimal solutions tried per stage and colour pair
STAGE_PATHS = 24
_PAIRS = ((0, 3), (1, 4), (2, 5))  # colours of opposite faces (colour f is face f's)
_UD = tuple(p for p in range(24) if p // 4 in (Face.U, Face.D))
_P2 = tuple(p for p in range(24) if p // 4 not in (Face.U, Face.D))
#: stage-3 position order: axis by axis (U/D, R/L, F/B), first face's 4 positions first
_P3 = tuple(4 * f + k for f in (0, 3, 1, 4, 2, 5) for k in range(4))
_FIRST = (Face.U, Face.R, Face.F)

Colours = npt.NDArray[np.uint8]


@cache
def _masks(n: int, k: int) -> IntArray:
    """All n-bit masks with k bits set, ascending (the index of a mask is its rank)."""
    if k == 0:
        return np.zeros(1, dtype=np.int64)
    if k == n:
        return np.array([(1 << n) - 1], dtype=np.int64)
    return np.concatenate([_masks(n - 1, k), _masks(n - 1, k - 1) | (1 << (n - 1))])


@cache
def _rank8() -> IntArray:
    """Rank of each 8-bit mask with 4 bits set among :func:`_masks` (8, 4); -1 otherwise."""
    out = np.full(256, -1, dtype=np.int64)
    out[_masks(8, 4)] = np.arange(70)
    return out


@cache
def _sources() -> IntArray:
    """For each move, the position whose piece each position gets (36 x 24)."""
    where = {flat: p for p, flat in enumerate(POSITIONS)}
    g = geometry(N)
    out = []
    for move in MOVES:
        lab = np.arange(6 * N * N)
        g.apply_move(lab, move)
        out.append([where[int(s)] for s in lab[list(POSITIONS)]])
    return np.array(out, dtype=np.int64)


@cache
def _wing_flips() -> IntArray:
    """1 for the moves that are odd permutations of the wings."""
    g = geometry(N)
    out = []
    for move in MOVES:
        state = np.repeat(np.arange(6, dtype=np.uint8), N * N)
        g.apply_move(state, move)
        out.append(wing_parity(state, N, 1))
    return np.array(out, dtype=np.int64)


def _keeping(groups: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """The moves that map each group of positions onto itself."""
    src = _sources()
    return tuple(
        m for m in range(len(MOVES)) if all(set(src[m][list(g)]) == set(g) for g in groups)
    )


@cache
def _stage_moves() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    axes = tuple(_P3[8 * a : 8 * a + 8] for a in range(3))
    return tuple(range(len(MOVES))), _keeping((_UD,)), _keeping(axes)


@cache
def _local_sources(stage: int) -> IntArray:
    """Stage-local sources (moves of the stage x its positions)."""
    positions = (tuple(range(24)), _P2, _P3)[stage]
    where = {p: i for i, p in enumerate(positions)}
    src = _sources()
    rows = [[where[int(src[m][p])] for p in positions] for m in _stage_moves()[stage]]
    return np.array(rows, dtype=np.int64)


def _permute(masks: IntArray, src: IntArray) -> IntArray:
    """Masks after a move: bit i of the result is bit ``src[i]`` of the mask."""
    out = np.zeros_like(masks)
    for i, s in enumerate(src):
        out |= ((masks >> int(s)) & 1) << i
    return out


def _rank3(masks: IntArray) -> IntArray:
    r = _rank8()
    out: IntArray = (r[masks & 255] * 70 + r[(masks >> 8) & 255]) * 70 + r[(masks >> 16) & 255]
    return out


def _bfs(
    size: int, goal: int, expand: Callable[[IntArray], Iterator[IntArray]], report: Report
) -> Table:
    dist = np.full(size, -1, dtype=np.int8)
    dist[goal] = 0
    frontier = np.array([goal], dtype=np.int64)
    depth, reached = 0, 1
    while frontier.size:
        depth += 1
        for nxt in expand(frontier):
            dist[nxt[dist[nxt] < 0]] = depth
        frontier = np.flatnonzero(dist == depth)
        reached += frontier.size
        report(reached)
    return dist


def _build1(report: Report) -> Table:
    masks = _masks(24, 8)
    goal = int(np.searchsorted(masks, sum(1 << p for p in _UD)))
    src = _local_sources(0)
    return _bfs(
        N_STAGE1,
        goal,
        lambda f: (np.searchsorted(masks, _permute(masks[f], s)) for s in src),
        report,
    )


def _build2(report: Report) -> Table:
    masks = _masks(16, 8)
    goal_mask = sum(1 << i for i, p in enumerate(_P2) if p // 4 in (Face.R, Face.L))
    goal = int(np.searchsorted(masks, goal_mask)) * 2
    src = _local_sources(1)
    flips = _wing_flips()[list(_stage_moves()[1])]

    def expand(frontier: IntArray) -> Iterator[IntArray]:
        rank, parity = np.divmod(frontier, 2)
        for s, flip in zip(src, flips, strict=True):
            yield np.searchsorted(masks, _permute(masks[rank], s)) * 2 + (parity ^ flip)

    return _bfs(N_STAGE2, goal, expand, report)


def _decode3(index: IntArray) -> IntArray:
    comb = _masks(8, 4)
    rest, c = np.divmod(index, 70)
    a, b = np.divmod(rest, 70)
    return comb[a] | (comb[b] << 8) | (comb[c] << 16)


def _build3(report: Report) -> Table:
    goal = int(_rank3(np.array([0x0F0F0F]))[0])
    src = _local_sources(2)
    return _bfs(N_STAGE3, goal, lambda f: (_rank3(_permute(_decode3(f), s)) for s in src), report)


@dataclass(frozen=True)
class _Tables:
    stage1: Table
    stage2: Table
    stage3: Table


def load_tables(cache_dir: str | None = None, progress: Progress | None = None) -> _Tables:
    """The three stage tables (from the cache, or built and cached: a few seconds; shown on
    ``progress`` when slow)."""
    return _Tables(
        load_table("centres4-axis", N_STAGE1, _build1, cache_dir, progress),
        load_table("centres4-axis2-parity", N_STAGE2, _build2, cache_dir, progress),
        load_table("centres4-faces", N_STAGE3, _build3, cache_dir, progress),
    )


@dataclass(frozen=True)
class StagedCentres:
    """One way to solve the centres: the moves of each stage and the colour of each face."""

    stages: tuple[tuple[Move, ...], tuple[Move, ...], tuple[Move, ...]]
    targets: tuple[int, ...]

    @property
    def moves(self) -> tuple[Move, ...]:
        return self.stages[0] + self.stages[1] + self.stages[2]

    @property
    def length(self) -> int:
        return len(self.moves)


def _descents(
    start: int, dist: int, expand: Callable[[int], tuple[list[int], Table]], limit: int
) -> list[tuple[list[int], int]]:
    """Up to ``limit`` optimal paths (stage-move indices, end state) from ``start``."""
    out: list[tuple[list[int], int]] = []

    def walk(state: int, d: int, path: list[int]) -> None:
        if d == 0:
            out.append((path, state))
            return
        nexts, dists = expand(state)
        for m in np.flatnonzero(dists == d - 1):
            if len(out) >= limit:
                return
            walk(nexts[int(m)], d - 1, [*path, int(m)])

    walk(start, dist, [])
    return out


def staged_centres(
    state: Colours, keep: int = 1, cache_dir: str | None = None, progress: Progress | None = None
) -> list[StagedCentres]:
    """The ``keep`` shortest centre solutions found for the 4x4 ``state`` (flat colours; not
    changed), shortest first. Each leaves every face one colour and the wings in an even
    permutation."""
    tables = load_tables(cache_dir, progress)
    src_all = _sources()
    stage_moves = _stage_moves()
    loc = [_local_sources(s) for s in range(3)]
    flips = _wing_flips()[list(stage_moves[1])]
    masks1, masks2 = _masks(24, 8), _masks(16, 8)
    bits24 = 1 << np.arange(24, dtype=np.int64)
    bits16 = bits24[:16]
    parity0 = wing_parity(state, N, 1)
    centres = state[list(POSITIONS)]

    def expand1(mask: int) -> tuple[list[int], Table]:
        b = (mask >> np.arange(24)) & 1
        nxt = b[loc[0]] @ bits24
        return [int(x) for x in nxt], tables.stage1[np.searchsorted(masks1, nxt)]

    def expand2(code: int) -> tuple[list[int], Table]:
        mask, parity = divmod(code, 2)
        b = (mask >> np.arange(16)) & 1
        nxt = (b[loc[1]] @ bits16) * 2 + (parity ^ flips)
        idx = np.searchsorted(masks2, nxt // 2) * 2 + nxt % 2
        return [int(x) for x in nxt], tables.stage2[idx]

    def expand3(mask: int) -> tuple[list[int], Table]:
        b = (mask >> np.arange(24)) & 1
        nxt = b[loc[2]] @ bits24
        return [int(x) for x in nxt], tables.stage3[_rank3(nxt)]

    def turned(colours: Colours, path: list[int], stage: int) -> Colours:
        for m in path:
            colours = colours[src_all[stage_moves[stage][m]]]
        return colours

    found: list[tuple[int, tuple[list[int], list[int], int, tuple[int, ...]]]] = []
    orients = orientation_colours()
    for a in _PAIRS:
        mask1 = int(np.isin(centres, a) @ bits24)
        d1 = int(tables.stage1[np.searchsorted(masks1, mask1)])
        seen1: set[bytes] = set()
        for path1, _ in _descents(mask1, d1, expand1, STAGE_PATHS):
            c1 = turned(centres, path1, 0)
            if c1.tobytes() in seen1:
                continue
            seen1.add(c1.tobytes())
            p1 = parity0 ^ int(sum(_wing_flips()[m] for m in path1) % 2)
            for b in (p for p in _PAIRS if p != a):
                mask2 = int(np.isin(c1[list(_P2)], b) @ bits16)
                code2 = mask2 * 2 + p1
                d2 = int(tables.stage2[np.searchsorted(masks2, mask2) * 2 + p1])
                for path2, _ in _descents(code2, d2, expand2, STAGE_PATHS):
                    c2 = turned(c1, path2, 1)
                    for t in orients:
                        if {t[Face.U], t[Face.D]} != set(a) or {t[Face.R], t[Face.L]} != set(b):
                            continue
                        first = np.array([t[_FIRST[i // 8]] for i in range(24)], dtype=np.uint8)
                        mask3 = int((c2[list(_P3)] == first) @ bits24)
                        d3 = int(tables.stage3[_rank3(np.array([mask3]))[0]])
                        found.append((d1 + d2 + d3, (path1, path2, mask3, t)))
    found.sort(key=lambda item: item[0])
    out: list[StagedCentres] = []
    for _, (path1, path2, mask3, t) in found[: max(1, keep)]:
        d3 = int(tables.stage3[_rank3(np.array([mask3]))[0]])
        path3 = _descents(mask3, d3, expand3, 1)[0][0]
        out.append(
            StagedCentres(
                (
                    tuple(MOVES[stage_moves[0][m]] for m in path1),
                    tuple(MOVES[stage_moves[1][m]] for m in path2),
                    tuple(MOVES[stage_moves[2][m]] for m in path3),
                ),
                t,
            )
        )
    return out
