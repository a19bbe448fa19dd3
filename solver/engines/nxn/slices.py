"""Slice commutators: two sets of inner slices of the two axes across a pair of faces.

Inner layers ``A`` of one axis perpendicular to the target pair (U and D: the R axis) and
inner layers ``B`` of the other (the F axis) both move centre pieces of U and D: ``A`` moves
pieces among U, F, D and B, ``B`` among U, R, D and L (an inner layer moves the centres of the
four faces it crosses, none of the two it is parallel to). Their supports meet in the cells of
U and D that lie in a layer of ``A`` *and* a layer of ``B``; ``A`` carries those cells onto F
or B, ``B`` onto R or L, where the other does not reach. So the commutator ``A B A' B'`` is
one 3-cycle per meeting cell: each cell (a, b) of U in the rectangle A x B takes the piece of
a cell of F, B, R or L (which one depends on the turns and on the order of ``A`` and ``B``),
and so does the cell (a, b) of D, at once.

It costs two moves per run of layers (turned and turned back; 2 OBTM each: no run may take an
outer layer along, which would turn a face that the other set moves), and no outer turn: a
single cell of U and one of D for 8 OBTM, where the block commutator of
:mod:`solver.engines.nxn.centres` pays 11 for one cell and the twin of
:mod:`solver.engines.nxn.twins` 14 for two. The cycles' other cells lie on F, R, B and L, so
these commutators only serve the first pair (U and D, from the four faces around them: they
would move the pieces of a finished pair onto the next one).

Each half is fed by one face (F, B, R or L); a quarter or half turn of it first (1 move, not
undone: it moves no piece of U or D) gives that half other pieces, as the setup turns of the
block commutators do. The gains of the U and D cells of each (a, b) are added, and the line
and rectangle search of
:mod:`solver.engines.nxn.centres` (the C line kernel, :func:`~.centres._widen`,
:func:`~.centres._alternate`) picks the layers, with every layer shifted by one so that no
run counts as a wide move. For odd N the cell of the middle layers of both axes is left
out: it holds the fixed centres, whose colours name the faces.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Move
from solver.engines.nxn import _lines
from solver.engines.nxn.blocks import Blocks, Job, make_blocks
from solver.engines.nxn.centres import (
    Candidate,
    _alternate,
    _Config,
    _opposite,
    _Plan,
    _widen,
    interior,
)
from solver.engines.nxn.rectangles import runs_of
from solver.engines.nxn.sim import IntArray, geometry

__all__ = ["slice_candidates", "slice_configs", "slice_job", "slice_moves"]

Colours = npt.NDArray[np.uint8]

#: setup turns of a feeding face tried (1: none; 4: every quarter turn), of one of the two
#: faces at a time (both at once gave no fewer moves: 33229 against 33099 on 6 states at
#: N = 21; no setups 33908)
SETUPS = 4

#: a cell that may not be cycled (the fixed centres of odd N)
_BARRED = -(10**6)


@dataclass(frozen=True)
class SliceConfig:
    """One slice commutator of a pair of faces: ``first`` and ``second`` are the axes (faces)
    turned first and second, by ``d1`` and ``d2`` quarter turns. ``cfg`` holds the cells of the
    pair's first face in the line search's terms: ``u2`` (the line) is a cell's layer of
    ``first``, ``u`` its layer of ``second``, both shifted by one (no wide moves); ``idx`` the
    sticker rows for :func:`._lines.nets` (sources and cells of the first face, then of the
    opposite face, cell by cell the same (a, b)), ``barred`` the cells that may not be cycled
    and ``feeds`` the face that feeds each half."""

    first: Face
    second: Face
    d1: int
    d2: int
    cfg: _Config
    idx: IntArray
    barred: npt.NDArray[np.bool_]
    feeds: tuple[Face, Face]


def _layer(n: int, axis: Face, cells: IntArray) -> IntArray:
    g = geometry(n)
    normal = np.array(FACE_FRAMES[axis][0], dtype=np.int64)
    return (n + 1 - g.centre[cells] @ normal) // 2


@cache
def slice_configs(n: int, target: Face) -> tuple[SliceConfig, ...]:
    """The slice commutators of ``target`` and its opposite face: both orders of the two
    perpendicular axes, each turned either way (8), every cell of ``target`` in the line
    order of the C kernel; checked to be 3-cycles with their other cells off the pair."""
    g = geometry(n)
    o = _opposite(target)
    x, y = (f for f in (Face.U, Face.R, Face.F) if f not in (target, o))
    t_cells = interior(n, target)
    o_cells = interior(n, o)
    tx, ty = _layer(n, x, t_cells), _layer(n, y, t_cells)
    where = {
        (int(a), int(b)): int(c)
        for a, b, c in zip(_layer(n, x, o_cells), _layer(n, y, o_cells), o_cells, strict=True)
    }
    out: list[SliceConfig] = []
    for first, second in ((x, y), (y, x)):
        lay1 = tx if first == x else ty
        lay2 = ty if first == x else tx
        order = np.lexsort((lay2, lay1))  # by line (first), then layer (second)
        cells, l1, l2 = t_cells[order], lay1[order], lay2[order]
        keys = zip(tx[order].tolist(), ty[order].tolist(), strict=True)
        opp = np.array([where[key] for key in keys], dtype=np.int64)
        mid = (n + 1) // 2
        barred = (l1 == mid) & (l2 == mid) if n % 2 else np.zeros(cells.size, dtype=bool)
        for d1 in (1, -1):
            for d2 in (1, -1):
                steps: list[tuple[Face, IntArray | int, int]] = [
                    (first, l1, d1),
                    (second, l2, d2),
                    (first, l1, -d1),
                    (second, l2, -d2),
                ]
                back = [(f, layer, -q) for f, layer, q in reversed(steps)]
                src_t, dst_t = g.trace(cells, back), g.trace(cells, steps)
                src_o, dst_o = g.trace(opp, back), g.trace(opp, steps)
                pair = (target, o)
                if any(np.isin(a // (n * n), pair).any() for a in (src_t, dst_t, src_o, dst_o)):
                    continue  # pragma: no cover - geometry: the cycles leave the pair
                feeds = (Face(int(src_t[0]) // (n * n)), Face(int(src_o[0]) // (n * n)))
                if (src_t // (n * n) != feeds[0]).any() or (src_o // (n * n) != feeds[1]).any():
                    continue  # pragma: no cover - geometry: one face feeds each half
                cfg = _Config(target, target, first, d1, 0, d2, cells, l2 + 1, l1 + 1, src_t)
                idx = np.stack([src_t, cells, src_o, opp])
                out.append(SliceConfig(first, second, d1, d2, cfg, idx, barred, feeds))
    return tuple(out)


def slice_moves(
    sc: SliceConfig,
    rows: list[tuple[int, int]],
    cols: list[tuple[int, int]],
    setups: tuple[int, int] = (0, 0),
) -> list[Move]:
    """The setup turns of the feeding faces, then ``A B A' B'``: ``cols`` (shifted layers of
    ``first``) then ``rows`` (of ``second``)."""
    moves = [Move.outer(f, _TURNS[q]) for f, q in zip(sc.feeds, setups, strict=True) if q]
    a = [Move.block(sc.first, lo - 1, hi - 1, sc.d1) for lo, hi in cols]
    b = [Move.block(sc.second, lo - 1, hi - 1, sc.d2) for lo, hi in rows]
    return [*moves, *a, *b, *[m.inverse() for m in a], *[m.inverse() for m in b]]


_TURNS = {1: 1, 2: 2, 3: -1}


@cache
def _setup_labels(n: int, face: Face) -> tuple[IntArray, ...]:
    """Which sticker shows at each place after 0-3 quarter turns of ``face``."""
    g = geometry(n)
    out = []
    for q in range(4):
        labels = np.arange(6 * n * n, dtype=np.int64)
        if q:
            g.apply_move(labels, Move.outer(face, _TURNS[q]))
        out.append(labels)
    return tuple(out)


@dataclass(frozen=True)
class SliceCandidate(Candidate):
    """The best line of one slice commutator; :meth:`grow` works out its rectangle (no run
    may take the shifted layers 2 or N+1: no wide moves)."""

    def grow(self, n: int) -> _Plan:
        return grow_slices(self, n + 2)


def grow_slices(cand: Candidate, m: int) -> _Plan:
    """The rectangle of a slice commutator's candidate whose line search runs over ``m``
    layers: no run may take the layers 2 or ``m`` - 1 (no cell lies there: no wide moves)."""
    cfg = cand.cfg
    layers = np.empty(m, dtype=np.int64)
    net = cand.net()
    line, _, _, taken = _lines.best_line(net, cfg.u, cfg.u2, m, cand.fixed, layers)
    chosen = [int(v) for v in layers[:taken]]
    lo, hi, _ = _widen(cfg, m, net, chosen, line)
    rows, cols, gain, cost = _alternate(
        cfg, m, net, runs_of(chosen), [(lo, hi)], cand.fixed, (2, m - 1)
    )
    return _Plan(gain, cost, tuple(cand.moves(rows, cols)))


#: the setup turns tried (of the face feeding the first face's half, of the other's)
_PAIRS = [(0, q) for q in range(SETUPS)] + [(q, 0) for q in range(1, SETUPS)]


@cache
def _gathered(n: int, target: Face) -> Blocks:
    """Every slice commutator of ``target`` after each pair of setup turns of :data:`_PAIRS`,
    as :func:`._lines.plan_lines` takes them: the cells of the target's half and of the
    opposite face's and where their pieces come from, with layers shifted by one (line search
    over N + 2 layers: no wide moves) and the barred cells biased out."""
    configs = slice_configs(n, target)
    src = []
    for q1, q2 in _PAIRS:
        src.append(
            [
                [
                    _setup_labels(n, sc.feeds[0])[q1][sc.idx[0]],
                    _setup_labels(n, sc.feeds[1])[q2][sc.idx[2]],
                ]
                for sc in configs
            ]
        )
    cells = [[sc.idx[1], sc.idx[3]] for sc in configs]
    layers = [(sc.cfg.u, sc.cfg.u2) for sc in configs]
    fixed = [int(q1 > 0) + int(q2 > 0) for q1, q2 in _PAIRS]
    bias = np.concatenate([np.where(sc.barred, _BARRED, 0) for sc in configs])
    return make_blocks(cells, src, layers, fixed, bias)


def slice_job(n: int, target: Face, colours: tuple[int, int]) -> Job:
    """The kernel call of :func:`slice_candidates` (line search over N + 2 layers)."""
    return Job(_gathered(n, target), n + 2, (colours[0], -1, colours[1], -1))


def slice_candidates(
    state: Colours,
    n: int,
    target: Face,
    colours: tuple[int, int],
    floor: float = 0.0,
    out: IntArray | None = None,
) -> list[Candidate]:
    """The lines of the slice commutators of ``target`` and its opposite face (``colours``:
    theirs), each as it is and after 1-3 quarter turns of one of the faces feeding them, of
    more than ``floor`` pieces per move, best first. A line's positive cells bound what it
    can gain, so only the lines that could beat the best so far are searched. ``out``:
    :func:`slice_job`'s output on ``state`` if it was run ahead."""
    configs = slice_configs(n, target)
    job = slice_job(n, target, colours)
    blocks, both = job.blocks, job.colours
    out = job.run(state) if out is None else out  # setup-major
    pairs = len(_PAIRS)
    flat = out[:, 4] / (8 + np.repeat(blocks.fixed, len(configs)))
    # configuration-major, as the candidates are numbered
    flat = flat.reshape(pairs, len(configs)).T.reshape(-1)
    tried: list[Candidate] = []
    for order in np.argsort(-flat, kind="stable").tolist():
        if flat[order] <= floor:
            break
        k, p = divmod(order, pairs)
        block = p * len(configs) + k
        gain, cost = int(out[block, 1]), int(out[block, 2])
        if gain > 0 and gain / cost > floor:
            sc = configs[k]
            build = partial(slice_moves, sc, setups=_PAIRS[p])
            net = partial(blocks.net, state, both, block)
            f = int(blocks.fixed[p])
            tried.append(SliceCandidate(gain / cost, order, sc.cfg, net, f, build))
            floor = gain / cost
    tried.sort(key=lambda c: (-c.ratio, c.order))
    return tried
