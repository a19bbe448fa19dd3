"""Runs of layers for the rectangle commutators of :mod:`solver.engines.nxn.centres`.

A commutator's ``m`` (and ``m2``) turns a set of runs of adjacent inner layers (2..N-1); each
run costs 2 OBTM to turn and turn back when it touches an end of the inner layers (it takes the
outer layer along: a wide move) and 4 otherwise. Given what each layer would gain, the runs
that give most gain per move are found exactly: Dinkelbach's iteration on the ratio, each step
a dynamic programme over the layers (:func:`select_runs`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from solver.engines.nxn import _lines
from solver.engines.nxn.sim import IntArray

__all__ = ["max_runs", "run_cost", "runs_of", "select_runs"]


def runs_of(layers: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for layer in sorted(layers):
        if runs and runs[-1][1] == layer - 1:
            runs[-1] = (runs[-1][0], layer)
        else:
            runs.append((layer, layer))
    return runs


def run_cost(n: int, runs: list[tuple[int, int]]) -> int:
    """OBTM of turning the runs and turning them back (a run at an end of the inner layers
    takes the outer layer along: 1 move, else 2)."""
    return sum(2 if lo == 2 or hi == n - 1 else 4 for lo, hi in runs)


def select_runs(
    values: IntArray, allowed: npt.NDArray[np.bool_], fixed: int, n: int, ratio: float
) -> tuple[list[tuple[int, int]], int, int] | None:
    """The runs of layers (2..N-1, ``allowed`` ones) that give most ``values`` per move, with
    ``fixed`` moves paid anyway: Dinkelbach's iteration on the ratio from ``ratio``, each
    step an exact dynamic programme over the layers (max of gain - ratio x cost). Returns
    (runs, gain, cost) or None if nothing beats ``ratio``."""
    best: tuple[list[tuple[int, int]], int, int] | None = None
    lam = ratio
    for _ in range(8):
        runs = max_runs(values, allowed, lam, n)
        gain = int(sum(int(values[lo : hi + 1].sum()) for lo, hi in runs))
        cost = fixed + run_cost(n, runs)
        if not runs or gain <= 0 or gain <= lam * cost + 1e-9:
            break
        best, lam = (runs, gain, cost), gain / cost
    return best


def max_runs(
    values: IntArray, allowed: npt.NDArray[np.bool_], lam: float, n: int
) -> list[tuple[int, int]]:
    """The runs maximising sum(values) - lam x :func:`run_cost`: a dynamic programme over the
    layers 2..N-1, the best score at each layer not taken, in a run that started at layer 2,
    or in another run (C: ``_lines.max_runs``; its Python reference is in the tests)."""
    taken = np.empty(n, dtype=np.int64)
    count = _lines.max_runs(
        np.ascontiguousarray(values, dtype=np.int64),
        np.ascontiguousarray(allowed, dtype=np.bool_),
        float(lam),
        n,
        taken,
    )
    return runs_of(taken[:count].tolist())
