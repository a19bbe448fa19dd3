"""The constrained assignment of colours to stickers (stages 2-4 of :mod:`vision.classify`).

Given the cost of giving every sticker every frame label, :func:`assign` returns the labels under
the constraints of a :class:`ConstraintLevel`: nearest reference only, exactly N² stickers per
colour, every piece real and distinct (one min-cost assignment per orbit of
:mod:`vision.pieces`), and finally the cheapest repair of the corners' twist, the midges' flip and
the corner/midge permutation parity.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

from solver.cube.cubie import Corner, Edge, permutation_parity
from vision.colour import FloatArray
from vision.pieces import Orbit, OrbitKind, orbits

__all__ = [
    "Assignment",
    "ConstraintLevel",
    "OrbitSolution",
    "OrbitTables",
    "RawRepair",
    "assign",
    "fixed_indices",
    "orbit_tables",
    "tuple_cost",
]

IntArray = npt.NDArray[np.intp]

#: A repair before its colours are named: kind, where, labels before, labels after, cost.
RawRepair = tuple[str, str, IntArray, IntArray, float]


class ConstraintLevel(IntEnum):
    """How much of the method to use (the benchmark measures each; scans use ``REPAIR``)."""

    NEAREST = 0  # nearest reference only
    BALANCED = 1  # + exactly N² stickers per colour
    PIECES = 2  # + every piece real and distinct
    REPAIR = 3  # + cheapest repair of twist, flip and parity


@dataclass(frozen=True, slots=True)
class OrbitTables:
    orbit: Orbit
    by_slot: IntArray  # (S, O): tuple index of each slot and orientation
    modulus: int  # orientation constraint modulus (3 corners, 2 midges, 0 none)


@lru_cache(maxsize=16)
def orbit_tables(n: int) -> tuple[OrbitTables, ...]:
    result = []
    for orb in orbits(n):
        order = np.lexsort((orb.orientation, orb.slot_of))
        by_slot = order.reshape(orb.size, -1).astype(np.intp)
        modulus = {OrbitKind.CORNER: 3, OrbitKind.MIDGE: 2}.get(orb.kind, 0)
        result.append(OrbitTables(orb, by_slot, modulus))
    return tuple(result)


@dataclass(slots=True)
class OrbitSolution:
    tables: OrbitTables
    tuple_cost: FloatArray  # (T, P)
    perm: IntArray  # slot -> piece
    orient: IntArray  # slot -> orientation index (column of by_slot)

    def cost(self) -> float:
        t = self.tables.by_slot[np.arange(self.perm.size), self.orient]
        return float(self.tuple_cost[t, self.perm].sum())

    def write(self, labels: IntArray) -> None:
        orb = self.tables.orbit
        t = self.tables.by_slot[np.arange(self.perm.size), self.orient]
        labels[orb.tuples[t]] = orb.pieces[self.perm]


@dataclass(slots=True)
class Assignment:
    labels: IntArray  # frame label of every flat sticker
    repairs: list[RawRepair] = field(default_factory=list)
    solutions: list[OrbitSolution] = field(default_factory=list)  # empty below PIECES


def tuple_cost(orb: Orbit, cost: FloatArray) -> FloatArray:
    """Cost of every (sticker tuple, piece) pair of an orbit: (T, P)."""
    total = np.zeros((orb.tuples.shape[0], orb.size))
    for k in range(orb.width):
        total += cost[np.ix_(orb.tuples[:, k], orb.pieces[:, k])]
    return total


def _solve_orbit(tables: OrbitTables, cost: FloatArray, fixed_frame: bool) -> OrbitSolution:
    orb = tables.orbit
    tc = tuple_cost(orb, cost)
    slot_cost = tc[tables.by_slot]  # (S, O, P)
    if orb.kind is OrbitKind.FIXED and fixed_frame:
        perm = np.arange(orb.size, dtype=np.intp)
    else:
        rows, cols = linear_sum_assignment(slot_cost.min(axis=1))
        perm = np.empty(orb.size, dtype=np.intp)
        perm[rows] = cols
    orient = slot_cost[np.arange(orb.size), :, perm].argmin(axis=1).astype(np.intp)
    return OrbitSolution(tables, tc, perm, orient)


def _best_orientations(sol: OrbitSolution, perm: IntArray) -> tuple[IntArray, float]:
    """Cheapest orientation of every slot (given the pieces) whose sum obeys the orbit's law."""
    tables = sol.tables
    m = tables.modulus
    slots = np.arange(perm.size)
    oc = sol.tuple_cost[tables.by_slot, perm[:, None]]  # (S, O)
    if m == 0:
        orient = oc.argmin(axis=1).astype(np.intp)
        return orient, float(oc[slots, orient].sum())
    inf = float("inf")
    best = [0.0] + [inf] * (m - 1)
    choice: list[list[tuple[int, int]]] = []
    for s in slots:
        nxt = [inf] * m
        back = [(0, 0)] * m
        for r in range(m):
            if best[r] == inf:
                continue
            for o in range(m):
                value = best[r] + float(oc[s, o])
                if value < nxt[(r + o) % m]:
                    nxt[(r + o) % m] = value
                    back[(r + o) % m] = (r, o)
        choice.append(back)
        best = nxt
    orient = np.zeros(perm.size, dtype=np.intp)
    r = 0
    for s in reversed(slots):
        prev, o = choice[s][r]
        orient[s] = o
        r = prev
    return orient, best[0]


def _slot_name(kind: OrbitKind, slot: int) -> str:
    if kind is OrbitKind.CORNER:
        return Corner(slot).name
    if kind is OrbitKind.MIDGE:
        return Edge(slot).name
    return str(slot)


def assign(cost: FloatArray, n: int, level: ConstraintLevel, fixed_frame: bool) -> Assignment:
    """Frame labels of all stickers under the constraints of ``level``."""
    m = 6 * n * n
    if level is ConstraintLevel.NEAREST or n == 1:
        labels = cost.argmin(axis=1).astype(np.intp)
        if fixed_frame:
            for face, index in enumerate(fixed_indices(n)):
                labels[index] = face
        return Assignment(labels)
    if level is ConstraintLevel.BALANCED:
        expanded = np.repeat(cost, n * n, axis=1)
        if fixed_frame:
            # The fixed centres keep their own label: make every other column forbidden.
            for face, index in enumerate(fixed_indices(n)):
                row = np.full(m, 1e12)
                row[face * n * n : (face + 1) * n * n] = 0.0
                expanded[index] = row
        rows, cols = linear_sum_assignment(expanded)
        labels = np.empty(m, dtype=np.intp)
        labels[rows] = cols // (n * n)
        return Assignment(labels)
    solutions = [_solve_orbit(t, cost, fixed_frame) for t in orbit_tables(n)]
    labels = np.full(m, -1, dtype=np.intp)
    for sol in solutions:
        sol.write(labels)
    assignment = Assignment(labels, [], solutions)
    if level is ConstraintLevel.REPAIR:
        _repair(solutions, assignment)
    return assignment


def _repair(solutions: list[OrbitSolution], assignment: Assignment) -> None:
    """Fix twist, flip and (odd N) corner/midge parity at the least added cost.

    Every repair's cost is what it adds to the unconstrained optimum, so never negative: when
    a parity exchange undoes part of an earlier twist or flip repair (the exchange made the
    twist unnecessary), the repairs are reported as one combined change from that optimum.
    """
    corner = next(s for s in solutions if s.tables.orbit.kind is OrbitKind.CORNER)
    midge = next((s for s in solutions if s.tables.orbit.kind is OrbitKind.MIDGE), None)
    start_labels = assignment.labels.copy()
    start_cost = corner.cost() + (midge.cost() if midge is not None else 0.0)

    def record(kind: str, where: str, sols: Sequence[OrbitSolution], before_cost: float) -> None:
        before = assignment.labels.copy()
        for s in sols:
            s.write(assignment.labels)
        after_cost = sum(s.cost() for s in sols)
        assignment.repairs.append(
            (kind, where, before, assignment.labels.copy(), after_cost - before_cost)
        )

    for sol, kind in ((corner, "twist"), (midge, "flip")):
        if sol is None or not int(sol.orient.sum()) % sol.tables.modulus:
            continue
        before_cost = sol.cost()
        orient, _ = _best_orientations(sol, sol.perm)
        changed = np.flatnonzero(orient != sol.orient)
        sol.orient = orient
        names = ", ".join(_slot_name(sol.tables.orbit.kind, int(s)) for s in changed)
        record(kind, f"{sol.tables.orbit.kind.value} {names}", [sol], before_cost)
    if midge is None or permutation_parity(corner.perm.tolist()) == permutation_parity(
        midge.perm.tolist()
    ):
        return
    before_cost = corner.cost() + midge.cost()
    sol, perm, orient, (a, b) = _cheapest_exchange(corner, midge)
    sol.perm, sol.orient = perm, orient
    kind_name = sol.tables.orbit.kind
    where = f"{kind_name.value}s {_slot_name(kind_name, a)}/{_slot_name(kind_name, b)} exchanged"
    record("parity", where, [corner, midge], before_cost)
    if any(r[4] < 0 for r in assignment.repairs):
        kinds = "+".join(r[0] for r in assignment.repairs)
        wheres = "; ".join(r[1] for r in assignment.repairs)
        total = corner.cost() + midge.cost() - start_cost
        assignment.repairs[:] = [
            (kinds, wheres, start_labels, assignment.labels.copy(), max(total, 0.0))
        ]


def _cheapest_exchange(
    corner: OrbitSolution, midge: OrbitSolution
) -> tuple[OrbitSolution, IntArray, IntArray, tuple[int, int]]:
    """The exchange of two corners or two midges that fixes parity at the least cost."""
    best: tuple[float, OrbitSolution, IntArray, IntArray, tuple[int, int]] | None = None
    for sol in (corner, midge):
        other = midge if sol is corner else corner
        for a, b in itertools.combinations(range(sol.perm.size), 2):
            perm = sol.perm.copy()
            perm[a], perm[b] = perm[b], perm[a]
            orient, value = _best_orientations(sol, perm)
            total = value + other.cost()
            if best is None or total < best[0]:
                best = (total, sol, perm, orient, (a, b))
    assert best is not None
    return best[1], best[2], best[3], best[4]


@lru_cache(maxsize=16)
def fixed_indices(n: int) -> tuple[int, ...]:
    """Flat indices of the six fixed centres (odd N)."""
    mid = n // 2
    return tuple(f * n * n + mid * n + mid for f in range(6))
