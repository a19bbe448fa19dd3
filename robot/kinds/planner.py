"""The fastest action sequence of a mechanism for a solution, by dynamic programming.

State: how the cube sits in the machine (one of 24 orientations, :mod:`robot.kinds.frames`)
and the parts' state (:class:`~robot.kinds.mechanism.Mechanism`). Between two solution moves
the machine may take any number of *free* steps; a solution move is executed by one *turn*
step whose notation-frame effect is exactly that move (derived from the permutations, so any
way the machine can make the move is found: the face brought down, or the rest of the cube
turned the other way round).

1. **Free closure** (once per mechanism): the cheapest free path between any two states.
   Free steps act the same in every orientation, so Dijkstra runs once per parts' state over
   (parts' state, relative rotation) and the table is spread over the 24 orientations.
2. **Turn table** (once per mechanism): for every orientation, turn step and orientation
   after it, the notation move it makes, keyed by permutation.
3. **Plan** (per solution, :meth:`KindPlanner.plan`): a shortest path over the moves, as a
   dense vector of the least time into every state, one min-plus step per move with the
   move's *way matrix* (free closure, then the turn, or a half turn as two quarters, whichever
   is faster), each step keeping where each state's best came from; a run of commuting turns
   (one axis) is tried in every order. Only the states the vector reaches and those the move
   can end in take part (12 x 12 for a CUBOTino-like turntable after the first move; the
   blocks are cached), and the actions are spelled out afterwards along the chosen path only.
   Exact: the optimum over every interleaving of free steps and turns (tested against an
   exhaustive search and the first version, :func:`robot.kinds.layered.plan_layered`).
4. **Time only** (:meth:`KindPlanner.seconds`, for scoring many candidate solutions): the same
   vector steps with nothing kept.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from robot.errors import PlanError
from robot.kinds.frames import N_ORIENTATIONS, frames, key, notation_effect
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from robot.kinds.moveruns import MAX_RUN_ORDERS, commuting_runs, merge_repeats, min_plus, ways
from solver.cube.facelets import move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind

__all__ = ["ActionPlan", "KindPlanner", "PlannedAction", "merge_repeats"]

logger = logging.getLogger(__name__)

_INF = np.inf
#: times that agree this closely are the same path's
_EPS = 1e-9
#: way-matrix blocks kept (a 3x3 plan meets a few hundred; cleared when full)
_MAX_BLOCKS = 20_000

#: per closure source: node (parts, relative rotation) -> (previous node's parts, rotation, step)
_Pred = dict[tuple[int, int], tuple[int, int, Step]]
#: per state after a move: the state before it on the best path
_Hop = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class PlannedAction:
    """One action of a plan; ``move`` is the solution move it completes (turn steps only)."""

    action: Action
    seconds: float
    move: Move | None = None


@dataclass(frozen=True, slots=True)
class ActionPlan:
    """A mechanism's program for a solution: its actions, total time and final orientation."""

    actions: tuple[PlannedAction, ...]
    seconds: float
    orientation: int
    parts: PartsState
    #: per solution move, in the order made (turns of opposite faces may swap): the move, how
    #: many of ``actions`` end with it, the state after it (:meth:`KindPlanner.way_matrix`)
    move_ends: tuple[tuple[Move, int, int], ...] = ()

    def __len__(self) -> int:
        return len(self.actions)

    def __str__(self) -> str:
        return " ".join(str(a.action) for a in self.actions)


@dataclass(frozen=True, slots=True)
class _Turn:
    before: int  # full state index
    after: int
    step: Step


class _TurnSet:
    """Every turn that makes one move, as arrays: the states before (``before``, and the
    distinct ones in ``starts`` with ``start_of[i]`` the index of turn i's), after, seconds."""

    def __init__(self, turns: list[_Turn]) -> None:
        self.turns = turns
        self.before = np.array([t.before for t in turns], dtype=np.intp)
        self.after = np.array([t.after for t in turns], dtype=np.intp)
        self.seconds = np.array([t.step.seconds for t in turns])
        self.starts, self.start_of = np.unique(self.before, return_inverse=True)


@dataclass(eq=False)
class KindPlanner:
    """Plans solutions for one mechanism (tables built on first use, then reused)."""

    mechanism: Mechanism
    parts: list[PartsState] = field(init=False)
    _index: dict[PartsState, int] = field(init=False)
    _matrices: dict[bytes, npt.NDArray[np.float64]] = field(init=False, default_factory=dict)
    #: free paths by (source parts, (target parts, relative rotation)), as they are asked for
    _paths: dict[tuple[int, tuple[int, int]], tuple[Step, ...]] = field(
        init=False, default_factory=dict
    )
    _by_move: dict[Move, tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]] | None] = field(
        init=False, default_factory=dict
    )
    _turns_by_move: dict[Move, _TurnSet | None] = field(init=False, default_factory=dict)
    #: blocks of the way matrices: (move, the states a vector reaches) -> [those, move's ends]
    _blocks: dict[tuple[Move, bytes], npt.NDArray[np.float64]] = field(
        init=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self.parts = self.mechanism.states()
        self._index = {p: i for i, p in enumerate(self.parts)}
        self.frames = frames(self.mechanism.n)

    # state indices: orientation * P + parts
    def _state(self, orientation: int, parts: int) -> int:
        return orientation * len(self.parts) + parts

    def _split(self, state: int) -> tuple[int, int]:
        return divmod(state, len(self.parts))

    @cached_property
    def _relative(self) -> npt.NDArray[np.intp]:
        """``_relative[o][o2]`` = the rotation r with ``after[o][r] == o2``."""
        rel = np.empty((N_ORIENTATIONS, N_ORIENTATIONS), dtype=np.intp)
        for o in range(N_ORIENTATIONS):
            for r in range(N_ORIENTATIONS):
                rel[o, self.frames.after[o, r]] = r
        return rel

    @cached_property
    def _closure(self) -> tuple[npt.NDArray[np.float64], list[_Pred]]:
        """Cheapest free paths: cost[p, p2, r] from (p, identity) to (p2, r), and per source the
        predecessor of each reached node (for the path)."""
        count = len(self.parts)
        cost = np.full((count, count, N_ORIENTATIONS), _INF)
        preds: list[_Pred] = []
        free = [self.mechanism.free_steps(p) for p in self.parts]
        for source in range(count):
            dist = {(source, 0): 0.0}
            pred: _Pred = {}
            heap = [(0.0, source, 0)]
            while heap:
                d, p, r = heapq.heappop(heap)
                if d > dist[(p, r)]:
                    continue
                cost[source, p, r] = d
                for step in free[p]:
                    p2 = self._index[step.after]
                    r2 = (
                        r
                        if step.effect is None
                        else self.frames.after[r, self.frames.of(step.effect)]
                    )
                    nd = d + step.seconds
                    if nd < dist.get((p2, int(r2)), _INF):
                        dist[(p2, int(r2))] = nd
                        pred[(p2, int(r2))] = (p, r, step)
                        heapq.heappush(heap, (nd, p2, int(r2)))
            preds.append(pred)
        return cost, preds

    @cached_property
    def _block_moves(self) -> dict[bytes, Move]:
        """Every block turn a turn step could make (outer layers 1..k of a face), by key."""
        n = self.mechanism.n
        return {
            key(move_permutation(m, n)): m
            for face in Face
            for depth in range(1, n)
            for turns in (1, 2, -1)
            for m in (Move.block(face, 1, depth, turns),)
        }

    @cached_property
    def _turns(self) -> dict[bytes, _TurnSet]:
        """Notation move (by permutation key) -> every turn step that makes it from a state the
        machine can reach from its start."""
        candidates: list[tuple[bytes, _Turn]] = []
        for p, parts in enumerate(self.parts):
            for step in self.mechanism.turn_steps(parts):
                assert step.effect is not None
                p2 = self._index[step.after]
                for o in range(N_ORIENTATIONS):
                    for o2 in range(N_ORIENTATIONS):
                        k = key(notation_effect(self.frames, o, step.effect, o2))
                        if k in self._block_moves:
                            turn = _Turn(self._state(o, p), self._state(o2, p2), step)
                            candidates.append((k, turn))
        reachable = self._reachable(candidates)
        table: dict[bytes, list[_Turn]] = {}
        for k, turn in candidates:
            if turn.before in reachable:
                table.setdefault(k, []).append(turn)
        return {k: _TurnSet(turns) for k, turns in table.items()}

    def _reachable(self, candidates: list[tuple[bytes, _Turn]]) -> set[int]:
        """States reachable from the start by free steps and turns (breadth first)."""
        cost, _ = self._closure
        turns_from: dict[int, list[int]] = {}
        for _, turn in candidates:
            turns_from.setdefault(turn.before, []).append(turn.after)
        start = self._state(0, self._index[self.mechanism.start])
        seen, todo = {start}, [start]
        while todo:
            o, p = self._split(todo.pop())
            reached = np.argwhere(np.isfinite(cost[p]))  # (parts, relative rotation)
            for p2, r in reached:
                state = self._state(int(self.frames.after[o, r]), int(p2))
                for nxt in (state, *turns_from.get(state, ())):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return seen

    def _free_cost(
        self, sources: npt.NDArray[np.intp], targets: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        """Cheapest free-path cost from each source state to each target state."""
        cost, _ = self._closure
        so, sp = np.divmod(sources, len(self.parts))
        to, tp = np.divmod(targets, len(self.parts))
        rel = self._relative[so[:, None], to[None, :]]
        return cost[sp[:, None], tp[None, :], rel]

    def _free_path(self, source: int, target: int) -> list[Step]:
        so, sp = self._split(source)
        to, tp = self._split(target)
        node = (tp, int(self._relative[so, to]))
        found = self._paths.get((sp, node))
        if found is None:
            _, preds = self._closure
            steps: list[Step] = []
            walk = node
            while walk != (sp, 0):
                p, r, step = preds[sp][walk]
                steps.append(step)
                walk = (p, r)
            found = self._paths[(sp, node)] = tuple(steps[::-1])
        return list(found)

    def prepare(self) -> None:
        """Build the closure and turn tables now (they are otherwise built on first use)."""
        _ = self._turns

    def can_make(self, move: Move) -> bool:
        """Whether some turn step of this mechanism makes ``move``."""
        return key(move_permutation(move, self.mechanism.n)) in self._turns

    def plan(
        self, moves: Iterable[Move], start: PartsState | None = None, *, state: int | None = None
    ) -> ActionPlan:
        """The fastest actions for ``moves`` (outer, wide or block turns and rotations in the
        notation frame), starting in the identity orientation with the parts at ``start``
        (the mechanism's start by default), or in ``state`` (:meth:`way_matrix`'s numbering,
        e.g. from :attr:`ActionPlan.move_ends`). A half turn may be made as two quarter turns
        the same way when that is faster or the only way. :class:`PlanError` names a move
        that cannot be made.

        :meth:`seconds`'s shortest path, keeping where each state's best came from."""
        moves = list(moves)
        runs = commuting_runs(merge_repeats(moves))
        costs = np.full(N_ORIENTATIONS * len(self.parts), _INF)
        if state is None:
            state = self._state(0, self._index[self.mechanism.start if start is None else start])
        elif not 0 <= state < len(costs):
            raise PlanError(f"no planner state {state} (0..{len(costs) - 1})")
        costs[state] = 0.0
        # per run: the chosen order per state after it, and per order the hops' back arrays
        history: list[tuple[list[tuple[Move, ...]], npt.NDArray[np.intp], list[list[_Hop]]]] = []
        for run in runs:
            if run[0].kind is MoveKind.ROTATION:
                origin = self._rotation_origin(run[0])
                history.append(([tuple(run)], np.zeros(len(costs), dtype=np.intp), [[origin]]))
                costs = costs[origin]
                continue
            orders = (
                list(itertools.permutations(run)) if len(run) <= MAX_RUN_ORDERS else [tuple(run)]
            )
            best = np.full(len(costs), _INF)
            choice = np.zeros(len(costs), dtype=np.intp)
            backs: list[list[_Hop]] = []
            for i, order in enumerate(orders):
                found = self._chain_back(costs, order)
                backs.append([] if found is None else found[1])
                if found is None:
                    continue
                better = found[0] < best
                best[better] = found[0][better]
                choice[better] = i
            if not np.isfinite(best).any():
                raise self.cannot_make(run)
            history.append((orders, choice, backs))
            costs = best
        end = int(np.argmin(costs))
        return self._spell(end, float(costs[end]), history)

    def _rotation_origin(self, move: Move) -> npt.NDArray[np.intp]:
        """For a whole-cube rotation of the solution: per state after it, the state before
        (the orientation is relabelled, no action)."""
        inverse = np.argsort(move_permutation(move, self.mechanism.n))
        count = len(self.parts)
        origin = np.empty(N_ORIENTATIONS * count, dtype=np.intp)
        for o in range(N_ORIENTATIONS):
            after = self.frames.of(inverse[self.frames.perms[o]])
            for p in range(count):
                origin[self._state(after, p)] = self._state(o, p)
        return origin

    def _chain_back(
        self, costs: npt.NDArray[np.float64], order: Iterable[Move]
    ) -> tuple[npt.NDArray[np.float64], list[_Hop]] | None:
        """:meth:`_chain_seconds` keeping, per move, where each state's best came from."""
        hops: list[_Hop] = []
        for move in order:
            step = self._min_plus_step(costs, move)
            if step is None:
                return None
            costs, hop = step
            hops.append(hop)
        return costs, hops

    def _min_plus_step(
        self, costs: npt.NDArray[np.float64], move: Move
    ) -> tuple[npt.NDArray[np.float64], _Hop] | None:
        """One move of the dense shortest path: the least time into every state, and the
        state each came from (-1: not reached). Only the states the vector reaches and
        those the move can end in take part (few: the block of the way matrix is cached)."""
        ways = self._way_columns(move)
        if ways is None:
            return None
        matrix, cols = ways
        live = np.flatnonzero(costs < _INF)
        if not len(live):
            return None
        k = (move, live.tobytes())
        sub = self._blocks.get(k)
        if sub is None:
            if len(self._blocks) >= _MAX_BLOCKS:
                self._blocks.clear()
            sub = self._blocks[k] = matrix[np.ix_(live, cols)]
        total = costs[live, None] + sub
        arg = np.argmin(total, axis=0)
        out = np.full(len(costs), _INF)
        out[cols] = total[arg, np.arange(len(cols))]
        hop = np.full(len(costs), -1, dtype=np.intp)
        hop[cols] = live[arg]
        return out, hop

    def _way_columns(
        self, move: Move
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]] | None:
        """:meth:`_way_matrix` of ``move`` and the states it can end in, by move."""
        if move not in self._by_move:
            matrix = self._way_matrix(move)
            self._by_move[move] = (
                None
                if matrix is None
                else (matrix, np.flatnonzero(np.isfinite(matrix).any(axis=0)))
            )
        return self._by_move[move]

    def _spell(
        self,
        end: int,
        seconds: float,
        history: list[tuple[list[tuple[Move, ...]], npt.NDArray[np.intp], list[list[_Hop]]]],
    ) -> ActionPlan:
        """The actions of the path that ends in ``end``: back through the runs, then each
        move's free steps and turn(s) forwards."""
        hops: list[tuple[int, Move | None, int]] = []  # (state before, move or rotation, after)
        state = end
        for orders, choice, backs in reversed(history):
            order = orders[int(choice[state])]
            back = backs[int(choice[state])]
            if order[0].kind is MoveKind.ROTATION:
                before = int(back[0][state])
                hops.append((before, None, state))
                state = before
                continue
            for move, arrays in zip(reversed(order), reversed(back), strict=True):
                before = int(arrays[state])
                hops.append((before, move, state))
                state = before
        actions: list[PlannedAction] = []
        move_ends: list[tuple[Move, int, int]] = []
        for before, made, after in reversed(hops):
            if made is not None:
                actions.extend(self._way_actions(before, made, after))
                move_ends.append((made, len(actions), after))
        o, p = self._split(end)
        return ActionPlan(tuple(actions), seconds, o, self.parts[p], tuple(move_ends))

    def _way_actions(self, before: int, move: Move, after: int) -> list[PlannedAction]:
        """The fastest free steps and turn(s) from ``before`` making ``move`` into ``after``
        (a half turn whole or as two quarter turns, as :meth:`_way_matrix` chose)."""
        target = self._way_columns(move)
        assert target is not None
        want = float(target[0][before, after])
        for way in ways(move):
            if len(way) == 1:
                turns = self._turn_set(way[0])
                hop = None if turns is None else self._hop(turns, before, after)
                if hop is not None and abs(hop[0] - want) <= _EPS:
                    return self._hop_actions(hop[1], before, way[0])
                continue
            first, second = (self._way_columns(m) for m in way)
            first_turns, second_turns = self._turn_set(way[0]), self._turn_set(way[1])
            if first is None or second is None or first_turns is None or second_turns is None:
                continue
            through = first[0][before] + second[0][:, after]
            mid = int(np.argmin(through))
            if abs(float(through[mid]) - want) <= _EPS:
                a = self._hop(first_turns, before, mid)
                b = self._hop(second_turns, mid, after)
                assert a is not None and b is not None
                return self._hop_actions(a[1], before, way[0]) + self._hop_actions(
                    b[1], mid, way[1]
                )
        raise AssertionError(f"no way of {move} from state {before} to {after}")  # pragma: no cover

    def _turn_set(self, move: Move) -> _TurnSet | None:
        """Every turn that makes ``move`` (None: none), by move."""
        if move not in self._turns_by_move:
            self._turns_by_move[move] = self._turns.get(
                key(move_permutation(move, self.mechanism.n))
            )
        return self._turns_by_move[move]

    def _hop(self, turns: _TurnSet, before: int, after: int) -> tuple[float, _Turn] | None:
        """The least time from ``before`` by free steps then one of ``turns`` into ``after``,
        and that turn (None: none ends there)."""
        into = np.flatnonzero(turns.after == after)
        if not len(into):
            return None
        total = self._free_all[before, turns.before[into]] + turns.seconds[into]
        i = int(np.argmin(total))
        return float(total[i]), turns.turns[int(into[i])]

    def _hop_actions(self, turn: _Turn, before: int, move: Move) -> list[PlannedAction]:
        """The free steps from ``before`` to ``turn``'s start, then ``turn``."""
        actions = [PlannedAction(s.action, s.seconds) for s in self._free_path(before, turn.before)]
        actions.append(PlannedAction(turn.step.action, turn.step.seconds, move))
        return actions

    def cannot_make(self, run: Iterable[Move]) -> PlanError:
        """The error naming the moves of ``run`` no turn of this mechanism makes."""
        run = list(run)
        names = " ".join(str(m) for m in [m for m in run if not self.can_make(m)] or run)
        return PlanError(
            f"this {type(self.mechanism).__name__} cannot make {names}: no turn it can do "
            "gives that move (check the profile's gripper or cover depths)"
        )

    def home(self, plan: ActionPlan) -> ActionPlan:
        """``plan`` followed by the fastest free steps that bring the parts back to the
        mechanism's start (any orientation: the cube is not turned, only carried), so that the
        next job starts where every job starts."""
        start = self._index[self.mechanism.start]
        end = self._index[plan.parts]
        if end == start:
            return plan
        cost, _ = self._closure
        relative = int(np.argmin(cost[end, start]))
        if not np.isfinite(cost[end, start, relative]):
            raise PlanError(
                f"this {type(self.mechanism).__name__} cannot bring its parts back to the start "
                f"from {plan.parts}"
            )
        source = self._state(plan.orientation, end)
        orientation = int(self.frames.after[plan.orientation, relative])
        steps = self._free_path(source, self._state(orientation, start))
        extra = tuple(PlannedAction(s.action, s.seconds) for s in steps)
        seconds = plan.seconds + sum(s.seconds for s in steps)
        return ActionPlan(
            plan.actions + extra, seconds, orientation, self.mechanism.start, plan.move_ends
        )

    def prepare_seconds(self) -> None:
        """Build the time-only tables of the outer face turns now (:meth:`seconds` otherwise
        builds each on first use, which a search budget should not pay for)."""
        for face in Face:
            for turns in (1, 2, -1):
                move = Move.block(face, 1, 1, turns)
                if self.can_make(move):
                    self._way_matrix(move)

    def seconds(self, moves: Iterable[Move]) -> float:
        """The robot time of :meth:`plan` for ``moves`` from the mechanism's start, computed
        without the actions (a fraction of the cost; rotations fall back to :meth:`plan`)."""
        moves = list(moves)
        runs = commuting_runs(merge_repeats(moves))
        if any(run[0].kind is MoveKind.ROTATION for run in runs):
            return self.plan(moves).seconds
        costs = np.full(len(self._free_all), _INF)
        costs[self._state(0, self._index[self.mechanism.start])] = 0.0
        for run in runs:
            best = np.full(len(costs), _INF)
            orders = itertools.permutations(run) if len(run) <= MAX_RUN_ORDERS else [tuple(run)]
            for order in orders:
                reached = self._chain_seconds(costs, order)
                if reached is not None:
                    np.minimum(best, reached, out=best)
            if not np.isfinite(best).any():
                raise self.cannot_make(run)
            costs = best
        return float(costs.min())

    def _chain_seconds(
        self, costs: npt.NDArray[np.float64], order: Iterable[Move]
    ) -> npt.NDArray[np.float64] | None:
        for move in order:
            step = self._min_plus_step(costs, move)
            if step is None:
                return None
            costs = step[0]
        return costs

    def start_state(self) -> int:
        """The state index (of :meth:`way_matrix`) of the identity orientation with the parts
        at the mechanism's start."""
        return self._state(0, self._index[self.mechanism.start])

    def way_matrix(self, move: Move) -> npt.NDArray[np.float64] | None:
        """``[s, a]``: the least time from state s, by free steps then the fastest way to make
        ``move`` (a half turn whole or as two quarter turns), into state a (``inf``: not
        that way; None: the mechanism cannot make the move). State = orientation * parts
        count + parts index."""
        return self._way_matrix(move)

    @cached_property
    def _free_all(self) -> npt.NDArray[np.float64]:
        """Cheapest free path between every two states."""
        states = np.arange(N_ORIENTATIONS * len(self.parts), dtype=np.intp)
        return self._free_cost(states, states)

    def _way_matrix(self, move: Move) -> npt.NDArray[np.float64] | None:
        """:meth:`_move_matrix` of the fastest way to make ``move`` (a half turn whole or
        as two quarter turns either way): min-plus products, so the same optimum as trying
        the ways one by one."""
        if move.quarter_turns != 2:
            return self._move_matrix(move)
        k = b"way" + key(move_permutation(move, self.mechanism.n))
        if k not in self._matrices:
            best: npt.NDArray[np.float64] | None = None
            for way in ways(move):
                product = self._way_product(way)
                if product is not None:
                    best = product if best is None else np.minimum(best, product)
            if best is None:
                return None
            self._matrices[k] = best
        return self._matrices[k]

    def _way_product(self, way: list[Move]) -> npt.NDArray[np.float64] | None:
        product: npt.NDArray[np.float64] | None = None
        for move in way:
            matrix = self._move_matrix(move)
            if matrix is None:
                return None
            product = matrix if product is None else min_plus(product, matrix)
        return product

    def _move_matrix(self, move: Move) -> npt.NDArray[np.float64] | None:
        """``[s, a]``: the least time from state s, by free steps then one turn making
        ``move``, into state a (None: no turn makes it)."""
        k = key(move_permutation(move, self.mechanism.n))
        if k not in self._matrices:
            turns = self._turns.get(k)
            if turns is None:
                return None
            free = self._free_all
            through = free[:, turns.before] + turns.seconds[None, :]
            matrix = np.full(free.shape, _INF)
            for after in np.unique(turns.after).tolist():
                matrix[:, after] = through[:, turns.after == after].min(axis=1)
            self._matrices[k] = matrix
        return self._matrices[k]
