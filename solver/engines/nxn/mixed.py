"""Mixed slice commutators: inner layers of one axis turned a quarter, of the other a half.

For a pair of opposite faces ``T`` and ``O`` and its two perpendicular axes, ``Q`` inner
layers of one axis turned a quarter turn and ``H`` inner layers of the other turned a half
turn: ``Q H Q' H`` (or ``H Q H Q'``). The half turns swap the lines of ``T`` with those of
``O`` and the lines of the two other faces they cross with each other; a cell of those two
faces that ``H`` moves is moved back by ``H`` again, ``Q`` never reaching it, so those two
faces keep every piece. The quarter turns carry lines of ``T`` and ``O`` onto the two faces
``Q`` crosses besides them (its *sides*). With no layer of ``Q`` the mirror ``N + 1 - q`` of
another of ``Q`` (and the same for ``H``), each cell ``(q, h)`` of ``T`` in a layer of both is
one 3-cycle with a cell of ``O`` and a cell of a side, and each such cell of ``O`` one with a
cell of ``T`` and a cell of the other side: a 3-cycle can put a piece in place on ``T`` *and*
one on ``O`` (the side feeds one of them, the other gives its piece to the side), and a run of
layers each way cycles the whole rectangle ``Q x H`` of both faces, for 8 OBTM (four inner
turns, 2 OBTM each; no wide move) and no outer turn.

The sides must be free to change: U and D (sides F and B, or R and L: both axes), F and B
once U and D are finished (``Q`` the U axis, sides R and L), never R and L (their sides would
be a finished pair). The engine uses them for F and B (:mod:`.twins`: for U and D they gave
no fewer moves at N = 101 for 1.1x the CPU time). As in :mod:`solver.engines.nxn.halves` the
layers of each axis come from one half of it (quadrants), each set is turned first or second
and ``Q`` either way, and each configuration is tried as it is and after a quarter turn of
one side (:data:`SETUPS`; not undone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn.blocks import Blocks, Job, make_blocks
from solver.engines.nxn.centres import Candidate, _Config, _opposite, interior
from solver.engines.nxn.halves import HalfCandidate, best_first, quadrant_size, quadrants
from solver.engines.nxn.sim import IntArray, geometry
from solver.engines.nxn.slices import _layer, _setup_labels

__all__ = [
    "MixedConfig",
    "mixed_candidates",
    "mixed_configs",
    "mixed_job",
    "mixed_moves",
    "quarter_axes",
]

Colours = npt.NDArray[np.uint8]

#: setup turns of a side tried (1: none; 4: every quarter turn), of one side at a time (2:
#: the same moves as 4 at N = 51, 0.86x the CPU time of the centres at N = 101)
SETUPS = 2

_TURNS = {1: 1, 2: 2, 3: -1}

#: the setups tried (of the first side, of the second)
_PAIRS = [(0, q) for q in range(SETUPS)] + [(q, 0) for q in range(1, SETUPS)]


@dataclass(frozen=True)
class MixedConfig:
    """One mixed slice commutator of a pair: ``first`` and ``second`` are the axes turned
    first and second (by ``d1`` and ``d2`` quarter turns, one of them 2), each within one half
    of its layers: a line-search layer ``k`` is layer ``k + off`` of its axis. ``cfg`` holds
    the cells of the pair's first face in the line search's terms (``u2``: the line, of
    ``first``; ``u``: of ``second``), ``cells`` and ``src`` four rows of cells of the pair and
    where each gets its piece from (the 3-cycle of the first face's cell (q, h): that cell,
    then its cell on the opposite face; the 3-cycle of the opposite face's cell: that cell,
    then its cell on the first face), ``sides`` the faces the quarter turns reach."""

    first: Face
    second: Face
    d1: int
    d2: int
    off1: int
    off2: int
    size: int
    cfg: _Config
    cells: IntArray
    src: IntArray
    sides: tuple[Face, Face]


def quarter_axes(target: Face, frozen: Sequence[Face]) -> list[Face]:
    """The axes across the pair of ``target`` whose quarter turns move no ``frozen`` face."""
    o = _opposite(target)
    axes = [f for f in (Face.U, Face.R, Face.F) if f not in (target, o)]
    return [a for a in axes if all(f in (a, _opposite(a)) for f in frozen)]


def _cycle_rows(
    n: int, start: IntArray, steps: list[tuple[Face, IntArray | int, int]], other: Face
) -> tuple[IntArray, IntArray, IntArray, IntArray] | None:
    """The 3-cycles through ``start``: (start, its source, the cycle's cell on ``other``, its
    source), or None when a cycle is not a 3-cycle with one cell on ``other``."""
    g = geometry(n)
    back = [(f, layer, -q) for f, layer, q in reversed(steps)]
    s1 = g.trace(start, back)
    s2 = g.trace(s1, back)
    if not np.array_equal(g.trace(s2, back), start):
        return None
    on1, on2 = s1 // (n * n) == other, s2 // (n * n) == other
    if not (on1 ^ on2).all():
        return None
    cell = np.where(on1, s1, s2)
    return start, s1, cell, np.where(on1, s2, start)


@cache
def mixed_configs(n: int, target: Face, quarter: Face) -> tuple[MixedConfig, ...]:
    """The mixed slice commutators of ``target`` and its opposite face with quarter turns of
    ``quarter``'s layers: both orders, either direction, every quadrant (16); checked to be
    3-cycles, each with one cell of each face of the pair and one of a side."""
    o = _opposite(target)
    half = next(f for f in (Face.U, Face.R, Face.F) if f not in (target, o, quarter))
    s1, s2 = (f for f in Face if f not in (target, o, quarter, _opposite(quarter)))
    t_cells, o_cells = interior(n, target), interior(n, o)
    tq, th = _layer(n, quarter, t_cells), _layer(n, half, t_cells)
    oq, oh = _layer(n, quarter, o_cells), _layer(n, half, o_cells)
    where = {(int(a), int(b)): int(c) for a, b, c in zip(oq, oh, o_cells, strict=True)}
    out: list[MixedConfig] = []
    for d in (1, -1):
        for first, d1, second, d2 in ((quarter, d, half, 2), (half, 2, quarter, d)):
            lay1, lay2 = (tq, th) if first == quarter else (th, tq)
            for sel, u, u2, off1, off2 in quadrants(n, lay1, lay2):
                keys = zip(tq[sel].tolist(), th[sel].tolist(), strict=True)
                opp = np.array([where[key] for key in keys], dtype=np.int64)
                steps: list[tuple[Face, IntArray | int, int]] = [
                    (first, lay1[sel], d1),
                    (second, lay2[sel], d2),
                    (first, lay1[sel], -d1),
                    (second, lay2[sel], -d2),
                ]
                rows_t = _cycle_rows(n, t_cells[sel], steps, o)
                rows_o = _cycle_rows(n, opp, steps, target)
                if rows_t is None or rows_o is None:  # pragma: no cover - geometry
                    continue
                cells = np.stack([rows_t[0], rows_t[2], rows_o[0], rows_o[2]])
                src = np.stack([rows_t[1], rows_t[3], rows_o[1], rows_o[3]])
                cfg = _Config(target, o, first, d1, 0, d2, cells[0], u, u2, src[0])
                size = quadrant_size(n)
                out.append(
                    MixedConfig(first, second, d1, d2, off1, off2, size, cfg, cells, src, (s1, s2))
                )
    return tuple(out)


def mixed_moves(
    mc: MixedConfig,
    rows: list[tuple[int, int]],
    cols: list[tuple[int, int]],
    setups: tuple[int, int] = (0, 0),
) -> list[Move]:
    """The setup turns of the sides, then ``A B A' B'``: ``cols`` (line-search layers of
    ``first``) then ``rows`` (of ``second``)."""
    moves = [Move.outer(f, _TURNS[q]) for f, q in zip(mc.sides, setups, strict=True) if q]
    a = [Move.block(mc.first, lo + mc.off1, hi + mc.off1, mc.d1) for lo, hi in cols]
    b = [Move.block(mc.second, lo + mc.off2, hi + mc.off2, mc.d2) for lo, hi in rows]
    return [*moves, *a, *b, *[m.inverse() for m in a], *[m.inverse() for m in b]]


@cache
def _gathered(n: int, target: Face, quarter: Face) -> Blocks:
    """Every mixed slice commutator of ``target`` with quarter turns of ``quarter`` after
    each pair of setups of :data:`_PAIRS`, as :func:`._lines.plan_lines` takes them (four
    colour pairs: the cells of the two 3-cycles on the pair's faces; no cell is on a side, so
    only the sources turn with the setups)."""
    configs = mixed_configs(n, target, quarter)
    sides = configs[0].sides
    src = []
    for q1, q2 in _PAIRS:
        lab1, lab2 = _setup_labels(n, sides[0])[q1], _setup_labels(n, sides[1])[q2]
        src.append([list(lab2[lab1[mc.src]]) for mc in configs])
    cells = [list(mc.cells) for mc in configs]
    layers = [(mc.cfg.u, mc.cfg.u2) for mc in configs]
    return make_blocks(cells, src, layers, [int(q1 > 0) + int(q2 > 0) for q1, q2 in _PAIRS])


def mixed_job(n: int, target: Face, quarter: Face, colours: tuple[int, int]) -> Job | None:
    """The kernel call of :func:`mixed_candidates` (None: no mixed slice commutator)."""
    configs = mixed_configs(n, target, quarter)
    if not configs:  # pragma: no cover - geometry: every pair has them
        return None
    c_t, c_o = colours
    four = (c_t, -1, c_o, -1, c_o, -1, c_t, -1)
    return Job(_gathered(n, target, quarter), configs[0].size, four)


def mixed_candidates(
    state: Colours,
    n: int,
    target: Face,
    quarter: Face,
    colours: tuple[int, int],
    floor: float = 0.0,
    out: IntArray | None = None,
) -> list[Candidate]:
    """The lines of the mixed slice commutators of ``target`` and its opposite face
    (``colours``: theirs) with quarter turns of ``quarter``, each as it is and after 1-3
    quarter turns of one side, of more than ``floor`` pieces per move, best first. ``out``:
    :func:`mixed_job`'s output on ``state`` if it was run ahead."""
    job = mixed_job(n, target, quarter, colours)
    if job is None:  # pragma: no cover - geometry: every pair has them
        return []
    configs, blocks, four, size = mixed_configs(n, target, quarter), job.blocks, job.colours, job.n
    out = job.run(state) if out is None else out  # setup-major

    def make(block: int, setup: int, k: int, ratio: float) -> Candidate:
        build = partial(mixed_moves, configs[k], setups=_PAIRS[setup])
        net = partial(blocks.net, state, four, block)
        fixed = int(blocks.fixed[setup])
        return HalfCandidate(ratio, block, configs[k].cfg, net, fixed, build, size)

    return best_first(out, blocks, len(configs), floor, make)
