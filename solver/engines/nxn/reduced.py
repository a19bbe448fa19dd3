"""The nxn engine's last stage: the 3x3 that a reduced N cube's outer layers form
(:func:`reduced_3x3`), solved by the two-phase engine through :func:`solver.api.solve`; on a 6x6
and 7x7 with the engine's own effort (:data:`THREE_EFFORT`) over the best few reductions
(:func:`pick_3x3`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import CORNER_FACES, cubie_layout
from solver.cube.facelets import Cube
from solver.cube.notation import Metric, count
from solver.optimize import optimize
from solver.solution import Solution, Stage

__all__ = ["THREE_EFFORT", "corner_parity", "pick_3x3", "reduced_3x3", "solve_3x3"]

Colours = npt.NDArray[np.uint8]
#: a reduction: (OBTM, rotation, state after it relabelled, stages in the rotated frame)
Reduced = tuple[int, str, Colours, list[Stage]]


def corner_parity(state: Colours, n: int) -> int:
    """The corners' permutation parity (1: odd) of an N cube's state."""
    perm = []
    for stickers in cubie_layout(n).corners:
        colours = frozenset(int(state[i]) for i in stickers)
        perm.append(next(p for p, faces in enumerate(CORNER_FACES) if frozenset(faces) == colours))
    odd = 0
    for i in range(8):
        for k in range(i + 1, 8):
            odd ^= perm[i] > perm[k]
    return odd


def reduced_3x3(state: Colours, n: int) -> Cube:
    """The 3x3 that the outer layers of a reduced N cube form (centres as face f = colour f)."""
    big, small = cubie_layout(n), cubie_layout(3)
    flat = np.repeat(np.arange(6, dtype=np.uint8), 9)
    for src, dst in zip(big.corners, small.corners, strict=True):
        flat[list(dst)] = state[list(src)]
    mid = (n - 2) // 2  # the middle edge (odd N), a wing of the innermost orbit (even N)
    for wings, dst_wings in zip(big.edges, small.edges, strict=True):
        flat[list(dst_wings[0])] = state[list(wings[mid])]
    return Cube(flat, 3)


def solve_3x3(cube: Cube, options: Any) -> Solution:
    from solver import api  # the registry is the one way to reach another engine

    return api.solve(
        cube,
        "twophase",
        budget_s=options.budget_s,
        cost_model=options.cost_model,
        faces=options.faces,
    )


#: 6x6, 7x7: the engine's own effort on the 3x3 stage, its default as the edge tries are:
#: (tries, seconds): once every reduction has its quick 3x3 (a first solution, budget 0), the
#: ``tries`` whose wholes are shortest each get a two-phase search of ``seconds`` and the
#: shortest whole is kept (a first solution is ~19.2 moves, these searches take the chosen
#: 3x3 to ~18.1). Reductions of seeds 100-119 (6x6) / 100-115 (7x7), mean OBTM of the whole:
#: 6x6 quick only 158.25, 3 x 0.2 s 156.95, 3 x 0.5 s 156.85, 3 x 1 s 156.80, 24 x 0.1 s
#: 157.00, 1 x 0.3 s 157.55; 7x7 quick 221.00, 1 x 0.1 s 219.81, 2 x 0.1 s 219.56 (over the
#: 7x7's time margin under load), 3 x 0.2 s 219.31. Scoring the candidates by the whole
#: after the optimiser (the two-phase ``score``) gained nothing (docs/benchmarks.md, "the
#: reduced 3x3 searched", 2026-11-27, afternoon, branch nxn6). 3 x 1 s on the 6x6's bench
#: states, two runs: 156.0 and 156.01 against 156.3, for 7.7-7.9 s of wall at the median
#: against 5.6 s: not kept (not the target either way; ~0.05 s of motor time saved for 2 s of
#: compute; "Re-measured on main after the 2026-11-27 afternoon merges"). After the
#: optimiser's two-face spelling and the cheaper 6x6 edge passes (2026-11-27 evening, the
#: same 100 states one after the other, load 1-2): 3 x 0.2 s 156.06, **3 x 0.5 s 155.86**
#: (wall median 6.9 -> 7.8 s, about what the edge passes saved): kept. A robot never pays
#: it: the daemon solves with its cost model, which replaces this effort.
THREE_EFFORT = {6: (3, 0.5), 7: (1, 0.1)}


def _whole(stages: list[Stage], small: Solution, n: int) -> int:
    """OBTM of the stages then the 3x3, after the optimiser."""
    raw = [m for stage in stages for m in stage.moves] + list(small.moves)
    return count(optimize(raw, n), Metric.HTM, n)


def pick_3x3(
    reductions: list[Reduced], n: int, options: Any
) -> tuple[str, Colours, list[Stage], Solution]:
    """Of ``reductions`` (shortest first), the one whose whole solution, with its 3x3 and after
    the optimiser, is shortest (the first of equals), and its 3x3 solution. Every reduction
    gets a quick 3x3 (a first solution, budget 0); then the engine's effort
    (:data:`THREE_EFFORT`): the best few by their quick wholes are searched for its seconds.
    A caller's cost model, or a budget longer than the effort's seconds, wins: the chosen 3x3
    is then solved again with the caller's options instead."""
    quick = dataclasses.replace(options, budget_s=0.0, cost_model=None)
    ranked: list[tuple[int, int, Solution]] = []
    for k, (_, _, state, stages) in enumerate(reductions):
        small = solve_3x3(reduced_3x3(state, n), quick)
        ranked.append((_whole(stages, small, n), k, small))
    ranked.sort(key=lambda item: item[:2])
    best = ranked[0]
    tries, seconds = THREE_EFFORT.get(n, (0, 0.0))
    callers = options.cost_model is not None or options.budget_s > seconds
    if not callers:
        searched = dataclasses.replace(options, budget_s=seconds)
        for _, k, _ in ranked[:tries]:
            _, _, state, stages = reductions[k]
            small = solve_3x3(reduced_3x3(state, n), searched)
            total = _whole(stages, small, n)
            if (total, k) < best[:2]:
                best = (total, k, small)
    _, rotation, state, stages = reductions[best[1]]
    small = best[2]
    if callers:
        small = solve_3x3(reduced_3x3(state, n), options)
    return rotation, state, stages, small
