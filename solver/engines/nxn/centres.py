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
* **Blocks**: all target cells of one line (same ``m2``) go in one commutator, ``m`` being
  every layer holding one of them (one range move per run of adjacent layers), so the cost per
  piece falls as N grows. A run that starts at layer 2 (or ends at N-1) is turned together
  with the outer layer (a wide move, 1 in OBTM instead of 2): during the centre stage edges and
  corners do not matter, and the outer face's centres come back when ``m'`` undoes ``m``.
* **Open end**: the closing ``T'`` is left out (7 moves, not 8): it only turns the target
  face, whose centre pieces stay on it, and no other face's centre; the piece count per face
  is what the stage works on.
* **Setup**: the source face may be turned first (any outer turn keeps every face's centre
  colours); it is not undone — edges are paired after the centres.
* **Even cubes**: no fixed centre; the colour each face gets is the cube orientation (of 24)
  that already has most centre pieces in place. For odd N the middle pieces decide.

Faces are finished in the order U, D, F, R, B (L is then done), each from every unfinished
face with the best ratio of pieces to moves; for N ≤ 8 plain slice turns and insertions
(:mod:`solver.engines.nxn.insert`) compete with the commutators on that ratio, and for every N
the line insertions ``m T2 m'`` (:func:`~solver.engines.nxn.insert.best_half_insertion`).

* **Rectangles**: the best commutator of each source face then grows ``m2`` over adjacent
  lines (one range move, so no extra moves) as long as the added cells gain pieces
  (:func:`_widen`): every cell in the rectangle of the ``m`` layers × the ``m2`` lines is
  cycled, each as if alone, because ``m`` and ``m2`` never share a layer.
Each commutator is planned for every cell at once by tracing 3D positions
(:meth:`Geometry.trace`), and checked after it is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import Cube
from solver.cube.geometry import FACE_FRAMES, Face, face_from_normal, rotation_matrix
from solver.cube.notation import Move
from solver.engines.nxn.insert import MAX_N as MAX_INSERT_N
from solver.engines.nxn.insert import best_block_turn, best_half_insertion, best_insertion
from solver.engines.nxn.sim import IntArray, geometry

__all__ = ["ORDER", "centre_targets", "orientation_colours", "solve_centres"]

ORDER = (Face.U, Face.D, Face.F, Face.R, Face.B, Face.L)
_ROTATIONS = [
    pre + post for pre in ("", "x ", "x2 ", "x' ", "z ", "z' ") for post in ("", "y", "y2", "y'")
]

Colours = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]


def _opposite(face: Face) -> Face:
    return Face((face + 3) % 6)


def interior(n: int, face: Face) -> IntArray:
    """Flat indices of a face's centre stickers (rows and columns 1..N-2)."""
    idx = np.arange(1, n - 1)
    return (int(face) * n * n + idx[:, None] * n + idx[None, :]).reshape(-1).astype(np.int64)


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
        valid = u != u2
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


def _runs(layers: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for layer in sorted(layers):
        if runs and runs[-1][1] == layer - 1:
            runs[-1] = (runs[-1][0], layer)
        else:
            runs.append((layer, layer))
    return runs


def _block(n: int, axis: Face, lo: int, hi: int, turns: int) -> Move:
    """Layers lo..hi of ``axis``, taking the outer layer along when that is free (lo = 2 or
    hi = N-1, see the module docstring)."""
    if lo == 2:
        return Move.block(axis, 1, hi, turns)
    if hi == n - 1:
        return Move.block(_opposite(axis), 1, n + 1 - lo, 2 if turns == 2 else -turns)
    return Move.block(axis, lo, hi, turns)


def _commutator(
    cfg: _Config, n: int, layers: list[int], lines: tuple[int, int], setup: int
) -> list[Move]:
    a = [_block(n, cfg.axis, lo, hi, cfg.d) for lo, hi in _runs(layers)]
    m2 = _block(n, cfg.axis, lines[0], lines[1], cfg.e)
    t = Move.outer(cfg.target, cfg.t)
    moves = [Move.outer(cfg.source, {1: 1, 2: 2, 3: -1}[setup])] if setup else []
    # the closing T' is left out: it only turns the target face (its pieces stay on it)
    moves += [*a, t, m2, t.inverse(), *[m.inverse() for m in a], t, m2.inverse()]
    return moves


def _best_plan(
    state: Colours, n: int, target: Face, source: Face, colour: int, need: Mask
) -> _Plan | None:
    """The commutator from ``source`` with the most target cells per move."""
    g = geometry(n)
    best: _Plan | None = None
    best_ctx: tuple[_Config, npt.NDArray[np.bool_], npt.NDArray[np.bool_], int] | None = None
    for setup in range(4):
        turned = state.copy()
        if setup:
            g.apply_move(turned, Move.outer(source, setup))
        for cfg in _configs(n, target, source):
            wanted = need[cfg.cells]
            brings = turned[cfg.src] == colour
            if not (wanted & brings).any():
                continue
            plan = _line_plan(cfg, n, wanted, brings, setup)
            if best is None or plan.gain * best.cost > best.gain * plan.cost:
                best, best_ctx = plan, (cfg, wanted, brings, setup)
    if best is not None and best_ctx is not None:
        cfg, wanted, brings, setup = best_ctx
        best = _line_plan(cfg, n, wanted, brings, setup, rectangle=True)
    return best


def _line_plan(
    cfg: _Config,
    n: int,
    wanted: npt.NDArray[np.bool_],
    brings: npt.NDArray[np.bool_],
    setup: int,
    rectangle: bool = False,
) -> _Plan:
    """The best line for one configuration. A cell of the line may be taken when it does not
    lose a target piece (it is wanted, or its source has the colour too); taking such "neutral"
    cells joins runs of gaining cells into one range move. Runs without a gaining cell are
    left out. With ``rectangle`` the line then grows into a block of adjacent lines (``m2`` a
    range move: no extra moves) as far as that gains pieces, see :func:`_widen`."""
    usable = wanted | brings
    lines, layers, good = cfg.u2[usable], cfg.u[usable], (wanted & brings)[usable]
    order = np.lexsort((layers, lines))
    sl, su, sg = lines[order], layers[order], good[order]
    start = np.ones(sl.size, dtype=bool)
    start[1:] = (sl[1:] != sl[:-1]) | (su[1:] != su[:-1] + 1)
    run = np.cumsum(start) - 1
    run_good = np.bincount(run, weights=sg) > 0
    keep = run_good[run]
    sl, su, sg, start = sl[keep], su[keep], sg[keep], start[keep]
    gain = np.bincount(sl, weights=sg, minlength=n + 1).astype(np.int64)
    # cost of each line: 3 target turns, m2 twice, each run of m twice, the setup
    runs = np.bincount(sl[start], minlength=n + 1)
    cheap = np.bincount(sl[su == 2], minlength=n + 1) + np.bincount(
        sl[su == n - 1], minlength=n + 1
    )
    m2 = np.where((np.arange(n + 1) == 2) | (np.arange(n + 1) == n - 1), 1, 2)
    cost = 3 + 2 * (2 * runs - cheap) + 2 * m2 + (1 if setup else 0)
    ratio = np.where(gain > 0, gain / cost, -1.0)
    line = int(np.argmax(ratio))
    chosen = [int(v) for v in su[sl == line]]
    if not rectangle:  # a candidate: its moves are written once it has won (as a rectangle)
        return _Plan(int(gain[line]), int(cost[line]), ())
    lo, hi, extra = _widen(cfg, n, wanted, brings, chosen, line)
    m2_cost = 1 if lo == 2 or hi == n - 1 else 2
    total = int(cost[line]) - 2 * int(m2[line]) + 2 * m2_cost
    moves = _commutator(cfg, n, chosen, (lo, hi), setup)
    return _Plan(int(gain[line]) + extra, total, tuple(moves))


def _widen(
    cfg: _Config,
    n: int,
    wanted: npt.NDArray[np.bool_],
    brings: npt.NDArray[np.bool_],
    layers: list[int],
    line: int,
) -> tuple[int, int, int]:
    """Rectangle commutator: ``m2`` turns the lines ``lo..hi`` around ``line``, so every cell
    (a, b) with ``a`` in ``layers`` and ``b`` in lo..hi is cycled (cells as if alone: ``m`` and
    ``m2`` never share a layer). A line's net gain is its gaining cells minus the cells that
    would lose a target piece; on each side the prefix of lines with the largest positive
    total is added. Returns (lo, hi, the extra gain)."""
    net = np.zeros((n + 1, n + 1), dtype=np.int64)
    net[cfg.u, cfg.u2] = (wanted & brings).astype(np.int64) - (~wanted & ~brings)
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


def _apply_checked(
    state: Colours, n: int, plan: _Plan, target: Face, colour: int, done: list[Face]
) -> None:
    g = geometry(n)
    before_t = int((state[interior(n, target)] == colour).sum())
    frozen = {f: state[interior(n, f)].copy() for f in done}
    g.apply(state, plan.moves)
    after_t = int((state[interior(n, target)] == colour).sum())
    if after_t - before_t != plan.gain or any(
        not np.array_equal(state[interior(n, f)], v) for f, v in frozen.items()
    ):  # pragma: no cover - the planner and the geometry disagree
        raise AssertionError(f"centre commutator on {target.name} did not do what was planned")


def solve_centres(
    state: Colours, n: int, targets: tuple[int, ...], faces: Sequence[Face] = ORDER[:-1]
) -> list[Move]:
    """Moves that give ``faces`` (in :data:`ORDER`; the faces before them already finished)
    their target centre colour; ``state`` is turned in place. The first face is built with
    plain slice turns, which may change the wing parities (see the engine)."""
    moves: list[Move] = []
    done: list[Face] = list(ORDER[: ORDER.index(faces[0])])
    for target in faces:
        colour = targets[target]
        cells = interior(n, target)
        while True:
            need = np.zeros(state.size, dtype=bool)
            need[cells] = state[cells] != colour
            if not need.any():
                break
            plan = _step(state, n, target, colour, need, done)
            _apply_checked(state, n, plan, target, colour, done)
            moves.extend(plan.moves)
        done.append(target)
    return moves


def _step(state: Colours, n: int, target: Face, colour: int, need: Mask, done: list[Face]) -> _Plan:
    free = [f for f in Face if f not in done and f != target]
    plans = [p for s in free if (p := _best_plan(state, n, target, s, colour, need))]
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
