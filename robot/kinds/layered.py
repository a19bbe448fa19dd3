"""The planner's first version, kept as a cross-check of :meth:`KindPlanner.plan` (the tests
compare them): a layered shortest path over sparse frontiers (state -> least time) that keeps
every segment's actions (the free path, then the turn) as it goes, one frontier per run of
commuting moves, each run tried in every order and each half turn whole or as two quarters.
Slower than the dense vector of :meth:`KindPlanner.plan` (8 against 1.8 ms per 3x3 solution on
the turntable), the same optimum."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from robot.kinds.frames import key
from robot.kinds.mechanism import PartsState, Step
from robot.kinds.moveruns import MAX_RUN_ORDERS, commuting_runs, merge_repeats, ways
from robot.kinds.planner import ActionPlan, KindPlanner, PlannedAction, _TurnSet
from solver.cube.facelets import move_permutation
from solver.cube.notation import Move, MoveKind

__all__ = ["plan_layered"]

_INF = np.inf

#: a free path from one state to another, then a turn step making a move
_Segment = tuple[int, int, Step, Move]
#: per solution move: state after it -> (state before the move, the segments between)
_Back = dict[int, tuple[int, tuple[_Segment, ...]]]


def plan_layered(
    planner: KindPlanner, moves: Iterable[Move], start: PartsState | None = None
) -> ActionPlan:
    """:meth:`KindPlanner.plan` of ``moves`` by the layered shortest path."""
    mechanism = planner.mechanism
    parts0 = planner.parts.index(mechanism.start if start is None else start)
    frontier: dict[int, float] = {planner._state(0, parts0): 0.0}
    layers: list[_Back] = []
    for run in commuting_runs(merge_repeats(moves)):
        frontier, back = _step(planner, frontier, run)
        layers.append(back)
    end = min(frontier, key=frontier.__getitem__)
    return _reconstruct(planner, end, frontier[end], layers)


def _step(
    planner: KindPlanner, frontier: dict[int, float], run: list[Move]
) -> tuple[dict[int, float], _Back]:
    """Make the moves of ``run`` (turns about one axis, which commute; or one rotation) in
    the order and the way (a half turn whole or as two quarters) that is fastest."""
    if run[0].kind is MoveKind.ROTATION:
        return _rotate(planner, frontier, run[0])
    orders = itertools.permutations(run) if len(run) <= MAX_RUN_ORDERS else [tuple(run)]
    best: dict[int, float] = {}
    best_back: _Back = {}
    for order in orders:
        for parts in itertools.product(*(ways(m) for m in order)):
            found = _chain(planner, frontier, [m for part in parts for m in part])
            if found is None:
                continue
            costs, back = found
            for state, cost in costs.items():
                if cost < best.get(state, _INF):
                    best[state], best_back[state] = cost, back[state]
    if not best:
        raise planner.cannot_make(run)
    return best, best_back


def _chain(
    planner: KindPlanner, frontier: dict[int, float], way: list[Move]
) -> tuple[dict[int, float], _Back] | None:
    """Frontier and back-pointers after the turns of ``way`` in a row (None: impossible)."""
    costs = frontier
    back: _Back = {s: (s, ()) for s in frontier}
    for move in way:
        turns = planner._turns.get(key(move_permutation(move, planner.mechanism.n)))
        if not turns:
            return None
        step_costs, step_back = _advance(planner, costs, move, turns)
        if not step_costs:
            return None
        back = {
            s: (back[origin][0], back[origin][1] + actions)
            for s, (origin, actions) in step_back.items()
        }
        costs = step_costs
    return costs, back


def _rotate(
    planner: KindPlanner, frontier: dict[int, float], move: Move
) -> tuple[dict[int, float], _Back]:
    """A whole-cube rotation in the solution: no action, the orientation is relabelled."""
    inverse = np.argsort(move_permutation(move, planner.mechanism.n))
    moved: dict[int, float] = {}
    back: _Back = {}
    for state, cost in frontier.items():
        o, p = planner._split(state)
        after = planner._state(planner.frames.of(inverse[planner.frames.perms[o]]), p)
        moved[after], back[after] = cost, (state, ())
    return moved, back


def _advance(
    planner: KindPlanner, frontier: dict[int, float], move: Move, turns: _TurnSet
) -> tuple[dict[int, float], _Back]:
    """The cheapest way into every state after one turn making ``move``."""
    sources = np.fromiter(frontier, dtype=np.intp, count=len(frontier))
    base = np.fromiter(frontier.values(), dtype=np.float64, count=len(frontier))
    reach = base[:, None] + planner._free_cost(sources, turns.starts)
    best_from = np.argmin(reach, axis=0)
    start_cost = reach[best_from, np.arange(len(turns.starts))]
    total = start_cost[turns.start_of] + turns.seconds
    # per state after: the cheapest turn into it
    order = np.lexsort((total, turns.after))
    first = np.ones(len(order), dtype=bool)
    first[1:] = turns.after[order][1:] != turns.after[order][:-1]
    chosen = order[first]
    chosen = chosen[np.isfinite(total[chosen])]
    out: dict[int, float] = {}
    back: _Back = {}
    for i in chosen.tolist():
        turn = turns.turns[i]
        origin = int(sources[best_from[turns.start_of[i]]])
        out[turn.after] = float(total[i])
        back[turn.after] = (origin, ((origin, turn.before, turn.step, move),))
    return out, back


def _reconstruct(planner: KindPlanner, end: int, seconds: float, layers: list[_Back]) -> ActionPlan:
    segments: list[_Segment] = []
    state = end
    for back in reversed(layers):
        state, found = back[state]
        segments.extend(reversed(found))
    actions: list[PlannedAction] = []
    for origin, before, step, move in reversed(segments):
        actions.extend(
            PlannedAction(s.action, s.seconds) for s in planner._free_path(origin, before)
        )
        actions.append(PlannedAction(step.action, step.seconds, move))
    o, p = planner._split(end)
    return ActionPlan(tuple(actions), seconds, o, planner.parts[p])
