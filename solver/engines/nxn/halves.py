"""Half-turn slice commutators: a pair of opposite faces trades pieces, nothing else moves.

Inner layers ``A`` of one axis across a pair of opposite faces ``T`` and ``O`` (for F and B:
the U axis) and inner layers ``B`` of the other (the R axis), each turned a half turn:
``A B A B`` (= ``[A, B]``). A half turn of ``A`` swaps lines of ``T`` with lines of ``O`` (and
lines of the two other faces it crosses with each other), one of ``B`` likewise; the two meet
only on ``T`` and ``O``, in the cells in a layer of ``A`` and a layer of ``B``. Every other
cell that one set moves is moved back by it, the other set never reaching where it went. When
no layer of ``A`` is the mirror ``N + 1 - a`` of another layer of ``A`` (and the same for
``B``), each meeting cell ``(a, b)`` of ``T`` is one 3-cycle with the cells of ``O`` in the
layers ``(N + 1 - a, b)`` and ``(a, N + 1 - b)``, and each meeting cell of ``O`` one with two
cells of ``T``. So for 8 OBTM (one run of layers each way: four inner half turns, 2 OBTM each;
no wide move: an outer layer would turn a face that the other set moves) the rectangle
``A x B`` of *both* faces takes pieces from the other face of the pair, and no other face's
centres change: these serve every pair at any stage (U and D, then F and B, then R and L),
where the plain commutators between opposite faces pay 3 outer turns more for a rectangle of
one face.

To keep the mirror rule the layers of each axis are taken from one half (2..N/2 or
N+1-N/2..N-1; the middle layer of odd N, which holds the fixed centres, is in neither): four
quadrants, each set turned first or second (8 configurations), each as it is and after 1-3
quarter turns of ``O`` (a setup turn, not undone; a turn of ``T`` gives what a turn of ``O``
and another configuration give). Each configuration's cells are laid out for the line and
rectangle search of :mod:`solver.engines.nxn.centres` (the C line kernel,
:func:`~.centres._widen`, :func:`~.centres._alternate`) on layers renumbered inside its
quadrant, with two empty layers at the ends so that no run counts as a wide move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn.blocks import Blocks, Job, make_blocks
from solver.engines.nxn.centres import Candidate, _Config, _opposite, _Plan, interior
from solver.engines.nxn.sim import IntArray, geometry
from solver.engines.nxn.slices import _layer, _setup_labels, grow_slices

__all__ = ["HalfConfig", "half_candidates", "half_configs", "half_job", "half_moves", "quadrants"]

Colours = npt.NDArray[np.uint8]

#: setup turns of the opposite face tried (1: none; 4: every quarter turn)
SETUPS = 4

_TURNS = {1: 1, 2: 2, 3: -1}


@dataclass(frozen=True)
class HalfConfig:
    """One half-turn slice commutator of a pair: ``first`` and ``second`` are the axes (faces)
    turned first and second, each within one half of its layers. ``cfg`` holds the cells of
    the pair's first face in the line search's terms: ``u2`` (the line) is a cell's layer of
    ``first`` minus ``off1``, ``u`` its layer of ``second`` minus ``off2`` (both 3..``size``-2);
    ``idx`` the sticker rows: where the first face's cells get their pieces from (on the
    opposite face), those cells, the opposite face's cells (cell by cell the same layers) and
    where those get theirs from (on the first face)."""

    first: Face
    second: Face
    off1: int
    off2: int
    size: int
    cfg: _Config
    idx: IntArray


def quadrant_size(n: int) -> int:
    """Layers of a quadrant's line search: 3..N/2+1 and an empty one at each end (no run is a
    wide move)."""
    return n // 2 + 3


def quadrants(
    n: int, lay1: IntArray, lay2: IntArray
) -> Iterator[tuple[IntArray, IntArray, IntArray, int, int]]:
    """The cells (indices into ``lay1`` and ``lay2``, their layers of two axes) of each
    quadrant, one half of each axis' inner layers (the middle layer of odd N in neither), in
    the line order of the C kernel: (cells, u, u2, off1, off2) with ``u2 = lay1 - off1`` the
    line and ``u = lay2 - off2`` the layer, both from 3 on."""
    h = n // 2
    halves = ((2, h), (n + 1 - h, n - 1))
    for lo1, hi1 in halves:
        for lo2, hi2 in halves:
            box = (lay1 >= lo1) & (lay1 <= hi1) & (lay2 >= lo2) & (lay2 <= hi2)
            inside = np.flatnonzero(box)
            u2, u = lay1[inside] - (lo1 - 3), lay2[inside] - (lo2 - 3)
            order = np.lexsort((u, u2))  # by line (first), then layer (second)
            yield inside[order], u[order], u2[order], lo1 - 3, lo2 - 3


@cache
def half_configs(n: int, target: Face) -> tuple[HalfConfig, ...]:
    """The half-turn slice commutators of ``target`` and its opposite face: both orders of
    the two perpendicular axes, each set in either half of its layers (8), cells in the line
    order of the C kernel; checked to be 3-cycles within the pair."""
    g = geometry(n)
    o = _opposite(target)
    x, y = (f for f in (Face.U, Face.R, Face.F) if f not in (target, o))
    t_cells, o_cells = interior(n, target), interior(n, o)
    tx, ty = _layer(n, x, t_cells), _layer(n, y, t_cells)
    where = {
        (int(a), int(b)): int(c)
        for a, b, c in zip(_layer(n, x, o_cells), _layer(n, y, o_cells), o_cells, strict=True)
    }
    out: list[HalfConfig] = []
    for first, second in ((x, y), (y, x)):
        lay1, lay2 = (tx, ty) if first == x else (ty, tx)
        for sel, u, u2, off1, off2 in quadrants(n, lay1, lay2):
            cells = t_cells[sel]
            keys = zip(tx[sel].tolist(), ty[sel].tolist(), strict=True)
            opp = np.array([where[key] for key in keys], dtype=np.int64)
            steps: list[tuple[Face, IntArray | int, int]] = [
                (first, lay1[sel], 2),
                (second, lay2[sel], 2),
                (first, lay1[sel], 2),
                (second, lay2[sel], 2),
            ]
            back = list(reversed(steps))  # half turns: each its own inverse
            src_t, dst_t = g.trace(cells, back), g.trace(cells, steps)
            src_o, dst_o = g.trace(opp, back), g.trace(opp, steps)
            if not (
                (src_t // (n * n) == o).all()
                and (dst_t // (n * n) == o).all()
                and (src_o // (n * n) == target).all()
                and (dst_o // (n * n) == target).all()
            ):  # pragma: no cover - geometry: the cycles stay in the pair
                continue
            cfg = _Config(target, o, first, 2, 0, 2, cells, u, u2, src_t)
            idx = np.stack([src_t, cells, opp, src_o])
            out.append(HalfConfig(first, second, off1, off2, quadrant_size(n), cfg, idx))
    return tuple(out)


def half_moves(
    hc: HalfConfig, rows: list[tuple[int, int]], cols: list[tuple[int, int]], setup: int = 0
) -> list[Move]:
    """The setup turn of the opposite face, then ``A B A B``: ``cols`` (renumbered layers of
    ``first``) then ``rows`` (of ``second``), half turns."""
    moves = [Move.outer(_opposite(hc.cfg.target), _TURNS[setup])] if setup else []
    a = [Move.block(hc.first, lo + hc.off1, hi + hc.off1, 2) for lo, hi in cols]
    b = [Move.block(hc.second, lo + hc.off2, hi + hc.off2, 2) for lo, hi in rows]
    return [*moves, *a, *b, *a, *b]


@cache
def _gathered(n: int, target: Face) -> Blocks:
    """Every half-turn slice commutator of ``target`` after 0-3 quarter turns of the opposite
    face, as :func:`._lines.plan_lines` takes them. Its two colour pairs: the first face's
    cells (fed from the turned opposite face), and the opposite face's cells read the other
    way round (the kernel's fixed cells are their sources on the first face, its turned
    sources the cells: the same nets, see :func:`half_candidates`)."""
    configs = half_configs(n, target)
    labels = _setup_labels(n, _opposite(target))
    src = [[[labels[q][hc.idx[0]], labels[q][hc.idx[2]]] for hc in configs] for q in range(SETUPS)]
    cells = [[hc.idx[1], hc.idx[3]] for hc in configs]
    layers = [(hc.cfg.u, hc.cfg.u2) for hc in configs]
    return make_blocks(cells, src, layers, [int(q > 0) for q in range(SETUPS)])


@dataclass(frozen=True)
class HalfCandidate(Candidate):
    """The best line of one half-turn slice commutator; :meth:`grow` works out its rectangle
    on the configuration's renumbered layers."""

    size: int = 0

    def grow(self, n: int) -> _Plan:
        return grow_slices(self, self.size)


def half_job(n: int, target: Face, colours: tuple[int, int]) -> Job | None:
    """The kernel call of :func:`half_candidates` (None: no half-turn slice commutator)."""
    configs = half_configs(n, target)
    if not configs:
        return None
    both = (colours[0], colours[1], colours[0], colours[1])
    return Job(_gathered(n, target), configs[0].size, both)


def half_candidates(
    state: Colours,
    n: int,
    target: Face,
    colours: tuple[int, int],
    floor: float = 0.0,
    out: IntArray | None = None,
) -> list[Candidate]:
    """The lines of the half-turn slice commutators of ``target`` and its opposite face
    (``colours``: theirs), each as it is and after 1-3 quarter turns of the opposite face, of
    more than ``floor`` pieces per move, best first. A cell of the first face gains the
    piece of its source (on the opposite face) and gives its own; a cell of the opposite face
    likewise, so both rows count (c_in, c_out) = (the first face's colour, the opposite's):
    for the second row the kernel's "cell" is the source on the first face and its "source"
    the (turned) cell, which gives the same net with the signs of both terms swapped twice.
    ``out``: :func:`half_job`'s output on ``state`` if it was run ahead."""
    job = half_job(n, target, colours)
    if job is None:
        return []
    configs, blocks, both, size = half_configs(n, target), job.blocks, job.colours, job.n
    out = job.run(state) if out is None else out  # setup-major

    def make(block: int, setup: int, k: int, ratio: float) -> Candidate:
        build = partial(half_moves, configs[k], setup=setup)
        net = partial(blocks.net, state, both, block)
        fixed = int(blocks.fixed[setup])
        return HalfCandidate(ratio, block, configs[k].cfg, net, fixed, build, size)

    return best_first(out, blocks, len(configs), floor, make)


def best_first(
    out: IntArray,
    blocks: Blocks,
    configs: int,
    floor: float,
    make: Callable[[int, int, int, float], Candidate],
) -> list[Candidate]:
    """The candidates of :func:`plan_blocks`' rows (setup-major, ``configs`` per setup) of more
    than ``floor`` pieces per move, best first; ``make(block, setup, config, ratio)`` builds
    one. Blocks are looked at by their bound (the largest line's total over the commutator's 8
    moves and its setup turns) and each kept one raises the floor, so a block whose bound is
    under the best so far is never worked out."""
    bounds = out[:, 4] / (8 + np.repeat(blocks.fixed, configs))
    tried: list[Candidate] = []
    for block in np.argsort(-bounds, kind="stable").tolist():
        if bounds[block] <= floor:
            break
        gain, cost = int(out[block, 1]), int(out[block, 2])
        if gain > 0 and gain / cost > floor:
            setup, k = divmod(block, configs)
            tried.append(make(block, setup, k, gain / cost))
            floor = gain / cost
    tried.sort(key=lambda c: (-c.ratio, c.order))
    return tried
