"""Twin block commutators: one commutator that fills a face and its opposite face at once.

The block commutator of :mod:`solver.engines.nxn.centres` is ``[A, B]`` with ``A = m`` (runs
of layers of an axis ``X`` perpendicular to the target ``T`` and the source ``S``) and
``B = T m2 T'``. Conjugating ``m2`` by a turn of the opposite face ``O`` as well,
``B = T O m2 O' T'``, makes the supports of ``A`` and ``B`` meet on ``O`` too: the commutator
then cycles the rectangle rows x lines of ``T`` with ``S`` *and* a rectangle of ``O`` with the
face opposite ``S`` (``S'``, which ``m`` carries onto ``O``), while the faces ``S`` and ``S'``
keep their other pieces and nothing else changes. The runs of ``m`` and ``m2``, which cost
most, are paid once for two faces. The closing ``O' T'`` only turns ``T`` and ``O`` (their
pieces stay on them) and is left out: 6 outer turns, + 1 for a setup turn of ``S``.

Both halves are planned on one gain per (layer, line): the sum of the two cells' gains, so the
line and rectangle search of :mod:`solver.engines.nxn.centres` (the C line kernel, the
widening and the row/column alternation) is used unchanged.

:func:`paired_centres` finishes a set of faces with these and the plain commutators: each
step is the plan (plain or twin commutator, half insertion, or one of the slice commutators
without outer turns: :mod:`.slices` for U and D, :mod:`.mixed` for F and B, :mod:`.halves`
for F and B and for R and L) with most pieces put on the faces being finished
per move. The engine runs it for N > 8 on U and D together (sources F, R, B, L; the
wing-parity turns after it keep U and D), then on F and B (sources R, L), then R and L.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Move
from solver.engines.nxn import _lines
from solver.engines.nxn.blocks import Blocks, Job, Pending, make_blocks
from solver.engines.nxn.centres import (
    Candidate,
    _block,
    _Config,
    _configs,
    _opposite,
    _Plan,
    candidates,
    candidates_job,
    interior,
)
from solver.engines.nxn.halves import half_candidates, half_job
from solver.engines.nxn.insert import best_half_insertion
from solver.engines.nxn.mixed import mixed_candidates, mixed_job, quarter_axes
from solver.engines.nxn.sim import IntArray, geometry
from solver.engines.nxn.slices import slice_candidates, slice_job
from solver.optimize import optimize

__all__ = [
    "THREADS_ENV",
    "finish_pairs",
    "first_pair",
    "paired_centres",
    "thread_count",
    "twin_candidates",
    "twin_configs",
    "twin_job",
]

log = logging.getLogger(__name__)

Colours = npt.NDArray[np.uint8]

#: setup turns of the face opposite the source tried (1: none, 4: every quarter turn)
#: (4 gave the same moves at N = 33 and 51 for 1.7x the CPU)
OPPOSITE_SETUPS = 1

#: outer turns of a twin commutator (T, O, O', T', T, O; the closing O' T' left out)
TWIN_FIXED = 6


@dataclass(frozen=True)
class Twin:
    """A twin commutator: ``cfg`` on the target side and the cells of the opposite face that
    it cycles with the same runs (``o_cells[i]`` with ``cfg.cells[i]``) and where their
    pieces come from (on the face opposite the source)."""

    cfg: _Config
    t2: int  # the quarter turn of the opposite face that conjugates m2
    o_cells: IntArray
    o_src: IntArray


def _twin_steps(
    cfg: _Config, t2: int, u: IntArray | int, u2: IntArray | int
) -> list[tuple[Face, IntArray | int, int]]:
    o = _opposite(cfg.target)
    b = [(cfg.target, 1, cfg.t), (o, 1, t2)]
    b_inv = [(o, 1, -t2), (cfg.target, 1, -cfg.t)]
    return [
        (cfg.axis, u, cfg.d),
        *b,
        (cfg.axis, u2, cfg.e),
        *b_inv,
        (cfg.axis, u, -cfg.d),
        *b,
        (cfg.axis, u2, -cfg.e),
        *b_inv,
    ]


@cache
def twin_configs(n: int, target: Face, source: Face) -> tuple[Twin, ...]:
    """The twin commutators of a target and an adjacent source: for each configuration of
    the pair, each turn of the opposite face whose rectangle cell exists for every target
    cell, with every piece the twin moves on the faces it is meant to."""
    g = geometry(n)
    o, s2 = _opposite(target), _opposite(source)
    if source in (target, o):
        return ()
    out: list[Twin] = []
    o_cells = interior(n, o)
    for cfg in _configs(n, target, source):
        na = np.array(FACE_FRAMES[cfg.axis][0], dtype=np.int64)
        o_u = (n + 1 - g.centre[o_cells] @ na) // 2
        for t2 in (1, -1):
            turned = g.trace(o_cells, [(o, 1, t2)])
            o_u2 = (n + 1 - g.centre[turned] @ na) // 2
            where = {(int(a), int(b)): int(c) for a, b, c in zip(o_u, o_u2, o_cells, strict=True)}
            pick = [where.get((int(a), int(b)), -1) for a, b in zip(cfg.u, cfg.u2, strict=True)]
            if min(pick) < 0:
                continue
            cells = np.array(pick, dtype=np.int64)
            steps = _twin_steps(cfg, t2, cfg.u, cfg.u2)
            back = [(f, layer, -q) for f, layer, q in reversed(steps)]
            dst, src = g.trace(cells, steps), g.trace(cells, back)
            t_src = g.trace(cfg.cells, back)
            if (
                np.array_equal(t_src, cfg.src)
                and (src // (n * n) == s2).all()
                and (dst // (n * n) == s2).all()
            ):
                out.append(Twin(cfg, t2, cells, src))
    return tuple(out)


def twin_moves(
    twin: Twin, n: int, rows: list[tuple[int, int]], cols: list[tuple[int, int]], setup: int
) -> list[Move]:
    cfg = twin.cfg
    a = [_block(n, cfg.axis, lo, hi, cfg.d) for lo, hi in rows]
    b = [_block(n, cfg.axis, lo, hi, cfg.e) for lo, hi in cols]
    t, o = Move.outer(cfg.target, cfg.t), Move.outer(_opposite(cfg.target), twin.t2)
    turns = {1: 1, 2: 2, 3: -1}
    s_setup, o_setup = setup % 4, setup // 4
    moves = [Move.outer(cfg.source, turns[s_setup])] if s_setup else []
    if o_setup:
        moves.append(Move.outer(_opposite(cfg.source), turns[o_setup]))
    moves += [*a, t, o, *b, o.inverse(), t.inverse(), *[m.inverse() for m in a], t, o]
    moves += [m.inverse() for m in b]
    return moves


@cache
def _gathered(n: int, target: Face, source: Face) -> Blocks:
    """The twins' cells (target side, opposite side) and the stickers whose colours their
    sources show after each setup turn of the source (the target side's sources turn with it;
    the opposite side is not set up), as :func:`._lines.plan_lines` takes them."""
    g = geometry(n)
    twins = twin_configs(n, target, source)
    src, fixed = [], []
    for setup in range(4 * OPPOSITE_SETUPS):
        labels = np.arange(6 * n * n, dtype=np.int64)
        if setup % 4:
            g.apply_move(labels, Move.outer(source, setup % 4))
        if setup // 4:
            g.apply_move(labels, Move.outer(_opposite(source), setup // 4))
        src.append([[labels[tw.cfg.src], labels[tw.o_src]] for tw in twins])
        fixed.append(TWIN_FIXED + (setup % 4 > 0) + (setup >= 4))  # the setup turns
    cells = [[tw.cfg.cells, tw.o_cells] for tw in twins]
    layers = [(tw.cfg.u, tw.cfg.u2) for tw in twins]
    return make_blocks(cells, src, layers, fixed)


def twin_job(n: int, target: Face, source: Face, colours: tuple[int, int, int, int]) -> Job | None:
    """The kernel call of :func:`twin_candidates` (None: no twin commutator)."""
    if not twin_configs(n, target, source):
        return None
    return Job(_gathered(n, target, source), n, colours)


def twin_candidates(
    state: Colours,
    n: int,
    target: Face,
    source: Face,
    colours: tuple[int, int, int, int],
    floor: float = 0.0,
    out: IntArray | None = None,
) -> list[Candidate]:
    """The lines of the twin commutators of ``target`` and its opposite from ``source`` and
    its opposite, of more than ``floor`` pieces per move, best first; ``colours``: of the
    target, of the source (-1: its own pieces do not count), of the opposite face and of the
    face opposite the source (-1 too). ``out``: :func:`twin_job`'s output if run ahead."""
    job = twin_job(n, target, source, colours)
    if job is None:
        return []
    twins, blocks = twin_configs(n, target, source), job.blocks
    out = job.run(state) if out is None else out
    tried: list[Candidate] = []
    # as in :func:`~.centres.candidates`: m and m2 wide (2 each) besides the outer turns
    for k in _lines.rank_lines(out, blocks.fixed, 4, floor):
        gain, cost = int(out[k, 1]), int(out[k, 2])
        setup, t = divmod(k, len(twins))
        build = partial(twin_moves, twins[t], n, setup=setup)
        net = partial(blocks.net, state, colours, k)
        fixed = int(blocks.fixed[setup])
        tried.append(Candidate(gain / cost, k, twins[t].cfg, net, fixed, build))
    tried.sort(key=lambda c: (-c.ratio, c.order))
    return tried


def _count(state: Colours, n: int, faces: Sequence[Face], targets: tuple[int, ...]) -> int:
    return sum(int((state[interior(n, f)] == targets[f]).sum()) for f in faces)


def paired_centres(
    state: Colours,
    n: int,
    targets: tuple[int, ...],
    todo: Sequence[Face],
    sources: Sequence[Face],
    threads: int | None = None,
) -> list[Move]:
    """Moves that give the ``todo`` faces their target colours from the ``sources`` (the
    other faces stay as they are); ``state`` is turned in place. ``threads``: of each step
    (:func:`_step`; None: :func:`thread_count`), the moves do not depend on it. Each step: the plain
    commutator, twin commutator or half insertion with most pieces put on the ``todo`` faces
    per move (for the first pair also the slice commutators of :mod:`.slices`); every step is
    checked as it is applied. The moves are returned merged along each axis
    (:func:`~solver.optimize.optimize`: consecutive plans often turn the same axis; ~1 % fewer
    moves at N = 21..33)."""
    g = geometry(n)
    frozen = [f for f in Face if f not in todo and f not in sources]
    threads = thread_count() if threads is None else threads
    moves: list[Move] = []
    steps = 0
    listed: dict[tuple[Face, ...], list[Face | tuple[_Search, Job | None]]] = {}
    while True:
        open_faces = [f for f in todo if (state[interior(n, f)] != targets[f]).any()]
        if not open_faces:
            names = "".join(f.name for f in todo)
            merged = optimize(moves, n)
            log.debug("centres %s on %dx%d: %d steps, %d moves", names, n, n, steps, len(merged))
            return merged
        steps += 1
        key = tuple(open_faces)
        if key not in listed:  # the searches read ``state``, turned in place
            listed[key] = _searches(state, n, targets, todo, sources, open_faces)
        plan = _step(state, n, targets, todo, sources, open_faces, threads, listed[key])
        before = _count(state, n, todo, targets)
        kept = {f: state[interior(n, f)].copy() for f in frozen}
        g.apply(state, plan.moves)
        if _count(state, n, todo, targets) - before != plan.gain or any(
            not np.array_equal(state[interior(n, f)], v) for f, v in kept.items()
        ):  # pragma: no cover - the planner and the geometry disagree
            raise AssertionError("a centre commutator did not do what was planned")
        moves.extend(plan.moves)


#: slice commutators (:mod:`solver.engines.nxn.slices`) in the first pair's steps
SLICES = True

#: half-turn slice commutators (:mod:`solver.engines.nxn.halves`) in the steps of F + B and
#: R + L (in the first pair's too: +0.6 % moves at N = 21, -0.3 % at N = 51, with the mixed
#: ones; without the mixed ones they gave -0.4 to -0.8 % at N = 51, +0.3 % at N = 33)
HALVES = True

#: mixed slice commutators (:mod:`solver.engines.nxn.mixed`) in the steps of F + B (in the
#: first pair's too: -1.9 / +1.3 / -0.9 % centre moves at N = 15 / 21 / 33, +0.1 % at N = 101
#: for 1.10x its CPU time)
MIXED = True

#: how many of a step's best lines (of every face pair) are grown into rectangles
GROWN = 2


#: environment variable: how many threads run a step's kernel calls (1: all on the calling
#: thread; unset: 2, or 1 on a one-core machine)
THREADS_ENV = "CUBEROBOT_NXN_THREADS"


def thread_count() -> int:
    """The threads a centre step uses (:data:`THREADS_ENV`); a ValueError names a bad value."""
    raw = os.environ.get(THREADS_ENV)
    if raw is None:
        return min(2, os.cpu_count() or 1)
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{THREADS_ENV}={raw!r}: give a number of threads >= 1 (1: no threads)")
    return value


#: one line search of a step: called with the floor and the kernel's output (None: the
#: search runs the kernel itself)
_Search = Callable[[float, IntArray | None], list[Candidate]]


def _searches(
    state: Colours,
    n: int,
    targets: tuple[int, ...],
    todo: Sequence[Face],
    sources: Sequence[Face],
    open_faces: list[Face],
) -> list[Face | tuple[_Search, Job | None]]:
    """A step's searches in the order they raise the floor: a face (its half insertion), or
    a line search and its kernel call (the calls do not depend on each other or the floor)."""
    frozen = [f for f in Face if f not in todo and f not in sources]
    out: list[Face | tuple[_Search, Job | None]] = []
    for target in open_faces:
        out.append(target)
        for source in [*todo, *sources]:
            o, s2 = _opposite(target), _opposite(source)
            if source == target:
                continue
            c_s = targets[source] if source in todo else -1
            if target < o and o in open_faces and source in sources and s2 in sources:
                c_s2 = targets[s2] if s2 in todo else -1
                four = (targets[target], c_s, targets[o], c_s2)
                search = partial(twin_candidates, state, n, target, source, four)
                out.append((search, twin_job(n, target, source, four)))
            two = (targets[target], c_s)
            search = partial(candidates, state, n, target, source, two)
            out.append((search, candidates_job(n, target, source, two)))
    if len(todo) == 2 and todo[1] == _opposite(todo[0]):
        first, second = sorted(todo)
        pair = (targets[first], targets[second])
        if SLICES and not frozen:
            search = partial(slice_candidates, state, n, first, pair)
            out.append((search, slice_job(n, first, pair)))
        if HALVES and frozen:
            search = partial(half_candidates, state, n, first, pair)
            out.append((search, half_job(n, first, pair)))
        for quarter in quarter_axes(first, frozen) if MIXED and frozen else []:
            search = partial(mixed_candidates, state, n, first, quarter, pair)
            out.append((search, mixed_job(n, first, quarter, pair)))
    return out


def _step(
    state: Colours,
    n: int,
    targets: tuple[int, ...],
    todo: Sequence[Face],
    sources: Sequence[Face],
    open_faces: list[Face],
    threads: int = 1,
    searches: list[Face | tuple[_Search, Job | None]] | None = None,
) -> _Plan:
    """The plan with most pieces put on the ``todo`` faces per move: the best lines of every
    face pair (plain and twin commutators) and of the slice commutators of the pair (lines
    that cannot beat the best one so far are not worked out), the :data:`GROWN` best of them
    grown into rectangles, and the half insertions. The kernel calls (:class:`~.blocks.Job`,
    about 60 % of the time at N = 101) are started first, in the order the searches take
    them, on ``threads`` - 1 helper threads (:class:`~.blocks.Pending`); the calling thread
    meanwhile works out the half insertions (they need no kernel output), then runs the
    searches in the order they always run in, each waiting for its own call's output (or
    making the call itself when no helper has taken it), so the plan does not depend on the
    threads. ``searches``: :func:`_searches` of these arguments if already listed (they only
    depend on the open faces: ``state`` is turned in place)."""
    frozen = [f for f in Face if f not in todo and f not in sources]
    if searches is None:
        searches = _searches(state, n, targets, todo, sources, open_faces)
    jobs = {i: s[1] for i, s in enumerate(searches) if not isinstance(s, Face) and s[1]}
    slot = {i: k for k, i in enumerate(jobs)}
    plans: list[_Plan] = []
    lines: list[Candidate] = []
    floor = 0.0
    with Pending(state, list(jobs.values()), threads) as pending:
        halves = {}
        for item in searches:
            if isinstance(item, Face):
                others = [*frozen, *(f for f in todo if f != item)]
                halves[item] = best_half_insertion(state, n, item, targets[item], others)
        for i, item in enumerate(searches):
            if isinstance(item, Face):
                half = halves[item]
                if half and half.gain > 0:
                    plans.append(_Plan(half.gain, half.cost, half.moves))
                    floor = max(floor, half.gain / half.cost)
                continue
            found = item[0](floor, pending.out(slot[i]) if i in slot else None)[:GROWN]
            lines += found
            floor = max([floor, *(c.ratio for c in found)])  # the floor covers the earlier ones
    lines.sort(key=lambda c: -c.ratio)
    plans += [c.grow(n) for c in lines[:GROWN]]
    if not plans:  # pragma: no cover - every open face can be reached from a source
        raise AssertionError("no centre piece can be put in place")
    return max(plans, key=lambda p: p.gain / p.cost)


def first_pair(
    state: Colours, n: int, targets: tuple[int, ...], threads: int | None = None
) -> list[Move]:
    """The first centre stage: U and D together, from F, R, B and L (``state`` turned in
    place; ``threads`` as for :func:`paired_centres`)."""
    sides = (Face.F, Face.R, Face.B, Face.L)
    return paired_centres(state, n, targets, (Face.U, Face.D), sides, threads)


def finish_pairs(
    state: Colours, n: int, targets: tuple[int, ...], threads: int | None = None
) -> list[Move]:
    """The other centres once U and D are finished: F and B from R and L, then R and L."""
    moves = paired_centres(state, n, targets, (Face.F, Face.B), (Face.R, Face.L), threads)
    return moves + paired_centres(state, n, targets, (Face.R, Face.L), (), threads)
