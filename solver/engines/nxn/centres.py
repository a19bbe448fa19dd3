"""Centres of an N ≥ 4 cube by block commutators (seed 003).

The commutator ``[m, T, m2, T', m', T, m2', T']`` with ``m`` inner layers of an axis ``X``
perpendicular to the target face ``T`` and the source face ``S`` (turned the way that carries
``S`` onto ``T``), ``T`` a quarter turn of the target and ``m2`` the layer of ``X`` that the turn
``T`` brings the target line into, is ``[A, B]`` with ``A = m`` and ``B = T m2 T'``. On the
centres the two overlap only in the target cells, so it is a 3-cycle: source cells on ``S`` →
target cells on ``T`` → other cells on ``S`` (the direction of ``m2`` is chosen so that the
third block lies on ``S`` too). Nothing else on any face moves: faces already finished stay
finished.

* **Slice choice per face pair**: ``X`` is the face along ``S × T`` (one of the two axes
  perpendicular to both), its turn direction the one carrying ``S`` to ``T``; the 24 ordered
  pairs of adjacent faces work the same way, read off the 3D geometry. Seed 003 says "30
  pairs" but also lists opposite pairs as unsupported (36 - 6 - 6 = 24); its own table has
  B → F by ``M2``. Here opposite pairs are supported too, with half turns for ``m`` and ``m2``
  (either perpendicular axis): all 30 ordered pairs of different faces.
* **Intersection rule**: ``m2`` must not be one of the layers of ``m`` (the blocks would
  overlap); ``T`` or ``T'`` gives two choices of ``m2``, and cells whose own layer is ``m2`` are
  left for another commutator.
* **Blocks**: many target cells go in one commutator, ``m`` being every layer holding one
  of them (one range move per run of adjacent layers), so the cost per piece falls as N
  grows. A run that starts at layer 2 (or ends at N-1) is turned together
  with the outer layer (a wide move, 1 in OBTM instead of 2): during the centre stage edges and
  corners do not matter, and the outer face's centres come back when ``m'`` undoes ``m``.
* **Open end**: the closing ``T'`` is left out (7 moves, not 8): it only turns the target
  face, whose centre pieces stay on it, and no other face's centre; the piece count per face
  is what the stage works on.
* **Setup**: the source face may be turned first (any outer turn keeps every face's centre
  colours); it is not undone — edges are paired after the centres.
* **Even cubes**: no fixed centre; the colour each face gets is the cube orientation (of 24)
  that already has most centre pieces in place. For odd N the middle pieces decide.

Three ways of running the stage:

* **Opposite faces in pairs** (N ≥ :data:`TWIN_MIN_N`, what :func:`first_centres` and
  :func:`finish_centres` run there): U and D, then F and B, then R and L, with the twin
  commutators of :mod:`solver.engines.nxn.twins` besides the ones here.
* **Face by face** (:func:`solve_centres`; the engine's method for N > 8 before the twins,
  4-6 % longer at N = 9..51, kept for the tests of the block commutators): faces are
  finished in the order U, D, F, R, B (L is then done), each from every unfinished face with
  the best ratio of pieces to moves; the first face also by plain block turns
  (:func:`~solver.engines.nxn.insert.best_block_turn`), and for every N the line insertions
  ``m T2 m'`` (:func:`~solver.engines.nxn.insert.best_half_insertion`).
* **Every face at once** (:func:`first_centres` then :func:`finish_centres`, N ≤
  :data:`MAX_MACRO_N`): each step is the sequence that puts most centre pieces of the whole
  cube on their face per move; a commutator's 3-cycle also counts the pieces it brings to
  (or takes from) its source face, so faces fill up together and the last pieces of a face
  are rarely moved one at a time. Candidates: the commutators of every ordered pair of open
  faces, the half insertions, and the macros of :mod:`solver.engines.nxn.macros`
  (insertions, slice half turns, and plain block turns in the first stage). The first stage
  ends when U and D are finished (the engine's wing-parity turns keep both); later steps
  keep every wing parity. Measured on random states (centres only, one orientation): 5x5
  130 → 115, 6x6 276 → 244, 7x7 439 → 391, 8x8 659 → 600 moves.

* **Rectangles**: ``m`` and ``m2`` are both sets of runs of layers and every cell in the
  rectangle of the ``m`` layers × the ``m2`` lines is cycled, each as if alone, because
  ``m`` and ``m2`` never share a layer. The best line of a face pair (its ``m`` runs joined
  over neutral cells) first grows ``m2`` over adjacent lines (:func:`_widen`), then rows and
  columns are chosen in turn, each side exactly for the other (:func:`_alternate`: a dynamic
  programme over the layers inside Dinkelbach's iteration on the ratio of pieces to moves,
  :mod:`solver.engines.nxn.rectangles`), as long as the ratio grows.
Each commutator is planned for every cell at once by tracing 3D positions
(:meth:`Geometry.trace`), and checked after it is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np

from solver.cube.facelets import Cube
from solver.cube.geometry import FACE_FRAMES, Face, face_from_normal, rotation_matrix
from solver.cube.notation import Move
from solver.engines.nxn import _lines
from solver.engines.nxn.blocks import Blocks, Colours, Job, make_blocks
from solver.engines.nxn.insert import MAX_N as MAX_INSERT_N
from solver.engines.nxn.insert import best_block_turn, best_half_insertion, best_insertion
from solver.engines.nxn.macros import MAX_N as MAX_MACRO_N
from solver.engines.nxn.macros import best_macro
from solver.engines.nxn.rectangles import run_cost, runs_of, select_runs
from solver.engines.nxn.sim import IntArray, geometry

__all__ = [
    "ORDER",
    "centre_targets",
    "finish_centres",
    "first_centres",
    "orientation_colours",
    "solve_centres",
]

ORDER = (Face.U, Face.D, Face.F, Face.R, Face.B, Face.L)
_ROTATIONS = [
    pre + post for pre in ("", "x ", "x2 ", "x' ", "z ", "z' ") for post in ("", "y", "y2", "y'")
]


def _opposite(face: Face) -> Face:
    return Face((face + 3) % 6)


@cache
def interior(n: int, face: Face) -> IntArray:
    """Flat indices of a face's centre stickers (rows and columns 1..N-2; cached, read-only)."""
    idx = np.arange(1, n - 1)
    cells = (int(face) * n * n + idx[:, None] * n + idx[None, :]).reshape(-1).astype(np.int64)
    cells.flags.writeable = False
    return cells


@cache
def orientation_colours() -> tuple[tuple[int, ...], ...]:
    """The colour on each face for each of the 24 ways of holding a solved cube."""
    return tuple(
        tuple(int(Cube.solved(3).apply(rot).flat[f * 9 + 4]) for f in range(6))
        for rot in _ROTATIONS
    )


def centre_targets(state: Colours, n: int) -> tuple[int, ...]:
    """The colour each face's centres end up: the middle pieces (odd N), or the orientation
    with most centre pieces already in place (even N)."""
    if n % 2:
        mid = n // 2
        return tuple(int(state[f * n * n + mid * n + mid]) for f in range(6))
    best: tuple[int, ...] = tuple(range(6))
    best_score = -1
    for colours in orientation_colours():
        score = sum(int((state[interior(n, Face(f))] == colours[f]).sum()) for f in range(6))
        if score > best_score:
            best, best_score = colours, score
    return best


@dataclass(frozen=True)
class _Config:
    """One way of running the commutator from ``source`` to ``target`` (fixed ``t``, ``e``),
    planned for every target cell as if it were alone."""

    target: Face
    source: Face
    axis: Face
    d: int
    t: int
    e: int
    cells: IntArray  # target cells (valid ones: own layer != m2 layer)
    u: IntArray  # X layer of each cell
    u2: IntArray  # the m2 layer of each cell (its line)
    src: IntArray  # where the piece that lands on the cell comes from (on source)


@cache
def _configs(n: int, target: Face, source: Face) -> tuple[_Config, ...]:
    nt = np.array(FACE_FRAMES[target][0])
    ns = np.array(FACE_FRAMES[source][0])
    if source == _opposite(target):  # half turns of the slices: m2, m2'... (seed 003's B→F)
        axes = [f for f in (Face.U, Face.R, Face.F) if int(np.array(FACE_FRAMES[f][0]) @ nt) == 0]
        return tuple(c for axis in axes for c in _axis_configs(n, target, source, axis, 2, (2,)))
    axis = face_from_normal(tuple(int(v) for v in np.cross(ns, nt)))  # type: ignore[arg-type]
    d = 1 if np.array_equal(rotation_matrix(FACE_FRAMES[axis][0], 1) @ ns, nt) else -1
    return _axis_configs(n, target, source, axis, d, (1, -1))


def _axis_configs(
    n: int, target: Face, source: Face, axis: Face, d: int, es: tuple[int, ...]
) -> tuple[_Config, ...]:
    g = geometry(n)
    na = np.array(FACE_FRAMES[axis][0])
    cells = interior(n, target)
    u = (n + 1 - g.centre[cells] @ na) // 2
    out = []
    for t in (1, -1):
        turned = g.trace(cells, [(target, 1, t)])
        u2 = (n + 1 - g.centre[turned] @ na) // 2
        valid = np.flatnonzero(u != u2)
        valid = valid[np.lexsort((u[valid], u2[valid]))]  # by line, then layer: see _lines.c
        c, cu, cu2 = cells[valid], u[valid], u2[valid]
        for e in es:
            steps = _steps(target, axis, d, t, e, cu, cu2)
            dst = g.trace(c, steps)
            back = [(f, layer, -q) for f, layer, q in reversed(steps)]
            src = g.trace(c, back)
            on_source = (src // (n * n) == source) & (dst // (n * n) == source)
            if on_source.all():
                out.append(_Config(target, source, axis, d, t, e, c, cu, cu2, src))
    return tuple(out)


def _steps(
    target: Face, axis: Face, d: int, t: int, e: int, u: IntArray | int, u2: IntArray | int
) -> list[tuple[Face, IntArray | int, int]]:
    return [
        (axis, u, d),
        (target, 1, t),
        (axis, u2, e),
        (target, 1, -t),
        (axis, u, -d),
        (target, 1, t),
        (axis, u2, -e),
        (target, 1, -t),
    ]


@dataclass(frozen=True)
class _Plan:
    gain: int
    cost: int
    moves: tuple[Move, ...]


def _block(n: int, axis: Face, lo: int, hi: int, turns: int) -> Move:
    """Layers lo..hi of ``axis``, taking the outer layer along when that is free (lo = 2 or
    hi = N-1, see the module docstring)."""
    if lo == 2:
        return Move.block(axis, 1, hi, turns)
    if hi == n - 1:
        return Move.block(_opposite(axis), 1, n + 1 - lo, 2 if turns == 2 else -turns)
    return Move.block(axis, lo, hi, turns)


def _commutator(
    cfg: _Config,
    n: int,
    rows: list[tuple[int, int]],
    cols: list[tuple[int, int]],
    setup: int,
) -> list[Move]:
    a = [_block(n, cfg.axis, lo, hi, cfg.d) for lo, hi in rows]
    b = [_block(n, cfg.axis, lo, hi, cfg.e) for lo, hi in cols]
    t = Move.outer(cfg.target, cfg.t)
    moves = [Move.outer(cfg.source, {1: 1, 2: 2, 3: -1}[setup])] if setup else []
    # the closing T' is left out: it only turns the target face (its pieces stay on it)
    moves += [*a, t, *b, t.inverse(), *[m.inverse() for m in a], t, *[m.inverse() for m in b]]
    return moves


@cache
def _gathered(n: int, target: Face, source: Face) -> Blocks:
    """The configurations of a face pair after each setup (0-3 quarter turns of the source),
    all at once: the target cells and the stickers whose colours the source cells then show,
    as :func:`._lines.plan_lines` takes them; a setup turn is one more outer turn."""
    g = geometry(n)
    configs = _configs(n, target, source)
    src = []
    for setup in range(4):
        labels = np.arange(6 * n * n, dtype=np.int64)
        if setup:
            g.apply_move(labels, Move.outer(source, setup))
        src.append([[labels[c.src]] for c in configs])
    cells = [[c.cells] for c in configs]
    layers = [(c.u, c.u2) for c in configs]
    return make_blocks(cells, src, layers, [3, 4, 4, 4])


def _best_plan(
    state: Colours,
    n: int,
    target: Face,
    source: Face,
    colours: tuple[int, int],
    floor: float = 0.0,
) -> _Plan | None:
    """The commutator from ``source`` (turned first by 0-3 quarter turns) with most pieces
    gained per move. ``colours`` are the target's colour and the colour counted for the
    source (-1: the source's own pieces do not count, only the target's). Only plans of more
    than ``floor`` pieces per move are looked for: a configuration whose gaining cells could
    not beat it with the cheapest commutator (7 moves) is skipped."""
    tried = candidates(state, n, target, source, colours, floor)
    best: _Plan | None = None
    for cand in tried[: FINALISTS if n <= MAX_MACRO_N else BIG_FINALISTS]:
        plan = cand.grow(n)
        if best is None or plan.gain * best.cost > best.gain * plan.cost:
            best = plan
    return best


@dataclass(frozen=True)
class Candidate:
    """The best line of one configuration after one setup, ``ratio`` its pieces per move;
    :meth:`grow` works out its rectangle and moves (``moves(rows, columns)``) from its cells'
    nets (``net()``, worked out then: the state must not have changed)."""

    ratio: float
    order: int
    cfg: _Config
    net: Callable[[], IntArray]
    fixed: int
    moves: Callable[[list[tuple[int, int]], list[tuple[int, int]]], list[Move]]

    def grow(self, n: int) -> _Plan:
        gain, cost, rows, cols = _line_plan(self.cfg, n, self.net(), self.fixed, True)
        return _Plan(gain, cost, tuple(self.moves(rows, cols)))


def candidates_job(n: int, target: Face, source: Face, colours: tuple[int, int]) -> Job | None:
    """The kernel call of :func:`candidates` (None: the pair has no commutator)."""
    if not _configs(n, target, source):
        return None
    return Job(_gathered(n, target, source), n, colours)


def candidates(
    state: Colours,
    n: int,
    target: Face,
    source: Face,
    colours: tuple[int, int],
    floor: float = 0.0,
    out: IntArray | None = None,
) -> list[Candidate]:
    """The lines of the commutators from ``source`` to ``target`` (every configuration and
    setup) of more than ``floor`` pieces per move, best first (see :func:`_best_plan`).
    ``out``: the output of :func:`candidates_job`'s call on ``state`` when it was run ahead."""
    job = candidates_job(n, target, source, colours)
    if job is None:
        return []
    configs, blocks = _configs(n, target, source), job.blocks
    out = job.run(state) if out is None else out
    tried: list[Candidate] = []
    # by the bound of each block (its positive nets over its fewest moves: the setup's outer
    # turns + 4, m and m2 wide) while it beats the floor, each kept line raising it (C)
    for k in _lines.rank_lines(out, blocks.fixed, 4, floor):
        gain, cost = int(out[k, 1]), int(out[k, 2])
        setup, c = divmod(k, len(configs))
        build = partial(_commutator, configs[c], n, setup=setup)
        net = partial(blocks.net, state, colours, k)
        fixed = int(blocks.fixed[setup])
        tried.append(Candidate(gain / cost, k, configs[c], net, fixed, build))
    tried.sort(key=lambda c: (-c.ratio, c.order))
    return tried


#: from this N on (every N the macro table does not cover), the centres are filled by pairs
#: of opposite faces with the twin commutators of :mod:`solver.engines.nxn.twins` (U and D
#: first, then F and B, then R and L). 8x8 is shorter with the macros (6 states: 624 against
#: 666 moves).
TWIN_MIN_N = MAX_MACRO_N + 1

#: how many of the best lines of a face pair are grown into rectangles (:func:`_alternate`)
#: for N <= MAX_MACRO_N (1 above: CPU time)
FINALISTS = 3
BIG_FINALISTS = 1


def _line_plan(
    cfg: _Config, n: int, net: IntArray, fixed: int, rectangle: bool = False
) -> tuple[int, int, list[tuple[int, int]], list[tuple[int, int]]]:
    """The best line for one configuration; ``net`` is what each cell gains (pieces put in
    place minus pieces taken out of place) when it is cycled and ``fixed`` the outer turns of
    the commutator (3, + 1 for a setup turn). A cell of the line may be taken when it loses
    nothing; taking such "neutral" cells joins runs of gaining cells into one range move. Runs
    without a gaining cell are left out (C kernel :mod:`._lines`). With ``rectangle`` the line
    then grows into a block of adjacent lines (``m2`` a range move: no extra moves) as far as
    that gains pieces (:func:`_widen`), then into rows and columns of many runs
    (:func:`_alternate`). Returns (gain, cost, rows, columns); no runs for a candidate."""
    layers = np.empty(n, dtype=np.int64)
    line, gain, cost, taken = _lines.best_line(net, cfg.u, cfg.u2, n, fixed, layers)
    if not rectangle:  # a candidate: its runs are worked out once it has won
        return gain, cost, [], []
    chosen = [int(v) for v in layers[:taken]]
    lo, hi, _ = _widen(cfg, n, net, chosen, line)
    rows, cols, total_gain, total = _alternate(cfg, n, net, runs_of(chosen), [(lo, hi)], fixed)
    return total_gain, total, rows, cols


def _alternate(
    cfg: _Config,
    n: int,
    net_cells: IntArray,
    rows: list[tuple[int, int]],
    cols: list[tuple[int, int]],
    fixed: int,
    forbid: tuple[int, ...] = (),
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int, int]:
    """Rectangle commutator of many runs: ``m`` turns the runs ``rows``, ``m2`` the runs
    ``cols`` and every cell (a, b) with ``a`` in one and ``b`` in the other is cycled (cells
    as if alone: ``m`` and ``m2`` never share a layer). Starting from a rectangle, the rows
    are chosen best for the columns, then the columns for the rows, while pieces per move
    grow. No run takes a layer of ``forbid``. Returns (rows, cols, gain, cost)."""
    net = np.zeros((n + 1, n + 1), dtype=np.int64)
    net[cfg.u, cfg.u2] = net_cells

    def layers(runs: list[tuple[int, int]]) -> list[int]:
        return [k for lo, hi in runs for k in range(lo, hi + 1)]

    gain = int(net[np.ix_(layers(rows), layers(cols))].sum())
    cost = fixed + run_cost(n, rows) + run_cost(n, cols)
    for _ in range(4):
        improved = False
        for side in (0, 1):
            other = cols if side == 0 else rows
            values = net[:, layers(other)].sum(axis=1) if side == 0 else net[layers(other)].sum(0)
            allowed = np.ones(n + 1, dtype=bool)
            allowed[layers(other)] = False
            allowed[list(forbid)] = False
            found = select_runs(values, allowed, fixed + run_cost(n, other), n, gain / cost)
            if found is not None:
                runs, gain, cost = found
                if side == 0:
                    rows = runs
                else:
                    cols = runs
                improved = True
        if not improved:
            break
    return rows, cols, gain, cost


def _widen(
    cfg: _Config, n: int, net_cells: IntArray, layers: list[int], line: int
) -> tuple[int, int, int]:
    """Rectangle commutator: ``m2`` turns the lines ``lo..hi`` around ``line``, so every cell
    (a, b) with ``a`` in ``layers`` and ``b`` in lo..hi is cycled (cells as if alone: ``m`` and
    ``m2`` never share a layer). A line's net gain is the sum of its cells' gains; on each side
    the prefix of lines with the largest positive total is added. Returns (lo, hi, the extra
    gain)."""
    net = np.zeros((n + 1, n + 1), dtype=np.int64)
    net[cfg.u, cfg.u2] = net_cells
    per_line = net[layers].sum(axis=0)
    taken = set(layers)
    bounds, extra = [line, line], 0
    for side, step in ((0, -1), (1, 1)):
        run, best, b = 0, 0, line + step
        while 2 <= b <= n - 1 and b not in taken:
            run += int(per_line[b])
            if run > best:
                best, bounds[side] = run, b
            b += step
        extra += best
    return bounds[0], bounds[1], extra


def _correct(state: Colours, n: int, targets: tuple[int, ...]) -> int:
    return sum(int((state[interior(n, f)] == targets[f]).sum()) for f in Face)


def _apply_checked(
    state: Colours,
    n: int,
    plan: _Plan,
    target: Face,
    colour: int,
    done: Sequence[Face],
    targets: tuple[int, ...] | None = None,
) -> None:
    """Apply ``plan`` and check that it gained what was planned (on the target, or on every
    face when ``targets`` is given) and left the ``done`` faces alone."""
    g = geometry(n)
    if targets is None:
        before = int((state[interior(n, target)] == colour).sum())
    else:
        before = _correct(state, n, targets)
    frozen = {f: state[interior(n, f)].copy() for f in done}
    g.apply(state, plan.moves)
    if targets is None:
        after = int((state[interior(n, target)] == colour).sum())
    else:
        after = _correct(state, n, targets)
    if after - before != plan.gain or any(
        not np.array_equal(state[interior(n, f)], v) for f, v in frozen.items()
    ):  # pragma: no cover - the planner and the geometry disagree
        raise AssertionError(f"centre commutator on {target.name} did not do what was planned")


def solve_centres(
    state: Colours, n: int, targets: tuple[int, ...], faces: Sequence[Face] = ORDER[:-1]
) -> list[Move]:
    """Moves that give ``faces`` (in :data:`ORDER`; the faces before them already finished)
    their target centre colour, one face after the other; ``state`` is turned in place. The
    first face is built with plain slice turns, which may change the wing parities (see the
    engine)."""
    moves: list[Move] = []
    done: list[Face] = list(ORDER[: ORDER.index(faces[0])])
    for target in faces:
        colour = targets[target]
        cells = interior(n, target)
        while (state[cells] != colour).any():
            plan = _step(state, n, target, colour, done)
            _apply_checked(state, n, plan, target, colour, done)
            moves.extend(plan.moves)
        done.append(target)
    return moves


def _step(state: Colours, n: int, target: Face, colour: int, done: list[Face]) -> _Plan:
    free = [f for f in Face if f not in done and f != target]
    plans = [p for s in free if (p := _best_plan(state, n, target, s, (colour, -1)))]
    if n <= MAX_INSERT_N:
        cells = {f: interior(n, f) for f in Face}
        found = best_insertion(state, n, target, colour, done, cells)
        if found:
            plans.append(_Plan(found.gain, found.cost, found.moves))
    half = best_half_insertion(state, n, target, colour, done)
    if half:
        plans.append(_Plan(half.gain, half.cost, half.moves))
    if not done:
        turn = best_block_turn(state, n, target, colour)
        if turn:
            plans.append(_Plan(turn.gain, turn.cost, turn.moves))
    if not plans:  # pragma: no cover - every face pair reaches every cell; counts validated
        raise AssertionError(f"no {colour} centre piece left for {target.name}")
    return max(plans, key=lambda p: p.gain / p.cost)


def finish_centres(
    state: Colours, n: int, targets: tuple[int, ...], done: Sequence[Face] = ORDER[:1]
) -> list[Move]:
    """Moves that give every face its target centre colour (N ≥ :data:`TWIN_MIN_N`: by pairs,
    see :func:`~solver.engines.nxn.twins.finish_pairs`), else all open faces at once; ``state``
    is turned in place and the ``done`` faces must be finished already. Each step is the move
    sequence (commutator or line insertion, between any two open faces) that puts most centre
    pieces of the whole cube in place per move: a commutator's 3-cycle also counts the pieces
    it brings to the source face, so the faces fill up together and the last pieces of a face
    are rarely moved one by one."""
    if n >= TWIN_MIN_N:
        from solver.engines.nxn import twins  # built on this module

        return twins.finish_pairs(state, n, targets)
    moves: list[Move] = []
    frozen = list(done)
    while True:
        open_faces = [
            f for f in Face if f not in frozen and (state[interior(n, f)] != targets[f]).any()
        ]
        if not open_faces:
            return moves
        plan, target = _global_step(state, n, targets, open_faces)
        _apply_checked(state, n, plan, target, targets[target], frozen, targets)
        moves.extend(plan.moves)


def first_centres(state: Colours, n: int, targets: tuple[int, ...]) -> list[Move]:
    """The first stage: the U and D centres, as a pair (N ≥ :data:`TWIN_MIN_N`, see
    :func:`~solver.engines.nxn.twins.first_pair`) or with every centre piece of the cube
    counted (N ≤ :data:`MAX_MACRO_N`): commutators, macros and plain block turns, whichever
    puts most pieces in place per move, until U and D are finished. Block turns may change
    the wing parities (see the engine; its parity fixes keep U and D)."""
    if n >= TWIN_MIN_N:
        from solver.engines.nxn import twins  # built on this module

        return twins.first_pair(state, n, targets)
    moves: list[Move] = []
    faces = list(Face)
    while any((state[interior(n, f)] != targets[f]).any() for f in (Face.U, Face.D)):
        open_faces = [f for f in faces if (state[interior(n, f)] != targets[f]).any()]
        plan, target = _global_step(state, n, targets, open_faces, safe=False)
        _apply_checked(state, n, plan, target, targets[target], [], targets)
        moves.extend(plan.moves)
    return moves


def _global_step(
    state: Colours, n: int, targets: tuple[int, ...], open_faces: list[Face], safe: bool = True
) -> tuple[_Plan, Face]:
    best: tuple[_Plan, Face] | None = None
    if n <= MAX_MACRO_N:
        macro = best_macro(state, n, targets, safe)
        if macro:
            best = (_Plan(macro.gain, macro.cost, macro.moves), open_faces[0])
    done = [f for f in Face if f not in open_faces]
    for target in open_faces:
        plans = []
        half = best_half_insertion(state, n, target, targets[target], done, targets)
        if half:
            plans.append(_Plan(half.gain, half.cost, half.moves))
        for source in open_faces:
            floor = 0.0 if best is None else best[0].gain / best[0].cost
            if source != target:
                colours = (targets[target], targets[source])
                plan = _best_plan(state, n, target, source, colours, floor)
                if plan:
                    plans.append(plan)
            for plan in plans:
                if best is None or plan.gain * best[0].cost > best[0].gain * plan.cost:
                    best = (plan, target)
            plans = []
    if best is None:  # pragma: no cover - an open face always has a piece to gain
        raise AssertionError("no centre piece can be put in place")
    return best
