"""Scoring the two-phase search's candidates: the caller's ``score`` chooses the solution.

With a scorer (``solve(..., score=f)``) the C search pushes every solution it meets within
``min(max_length, shortest + score_slack)`` moves into a :class:`Collector` shared by the
worker threads of the solve (a bounded queue behind a mutex: the workers never take the GIL).
The calling thread drains it meanwhile and scores the candidates while the workers keep
searching, shortest first, each distinct solution once; the lowest score among those within
the final cap (shortest found + slack) wins, the shorter solution on a tie. When the budget
is over only candidates shorter than every one scored so far are still scored (they arrive
last, when the workers stop, and are usually the best), and at least one candidate always
is, so a budget too short for the scorer still returns one.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

from solver.cube.notation import Move
from solver.engines.twophase._twophase import Collector
from solver.engines.twophase.settings import Scorer

__all__ = ["Best", "CandidatePool"]

#: turn a worker's candidate into the cube's own frame: (chunk, direction, raw) -> moves
Decode = Callable[[int, int, tuple[int, ...]], tuple[Move, ...]]
#: how long the scoring thread waits for a candidate before looking at the workers again
_WAIT_S = 0.001
#: a queued candidate: length, arrival, chunk, direction, raw moves
_Item = tuple[int, int, int, int, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Best:
    """The winning candidate: its moves, score, and where it was found."""

    moves: tuple[Move, ...]
    score: float
    chunk: int
    direction: int


class CandidatePool:
    """The candidates of one solve: filled by the workers' sinks, scored by the caller."""

    def __init__(
        self, score: Scorer, decode: Decode, max_length: int, slack: int, descent_s: float = 0.0
    ) -> None:
        self.collector = Collector(max_length, slack, descent_s)
        self._score = score
        self._decode = decode
        self._pending: list[_Item] = []
        self._order = itertools.count()
        self._seen: set[tuple[Move, ...]] = set()
        self._shortest_scored = max_length + 1
        self._max_length = max_length
        self._slack = slack
        #: the best scored candidate of each length
        self._by_length: dict[int, tuple[float, Best]] = {}
        self.scored = 0
        self.score_s = 0.0

    def score_while(self, running: Callable[[], bool], deadline: float) -> None:
        """Score candidates while the search runs (``running()``), then what it left."""
        try:
            while True:
                alive = running()
                self._fill(_WAIT_S if alive and not self._pending else 0.0)
                if not self._pending:
                    if alive:
                        continue
                    return
                item = heapq.heappop(self._pending)
                if item[0] > self._cap():
                    continue
                late = self.scored > 0 and time.perf_counter() >= deadline
                if late and item[0] >= self._shortest_scored:
                    continue
                self._take(item)
        except BaseException:
            self.collector.stop()
            raise

    @property
    def best(self) -> Best | None:
        """The lowest-scored candidate within the cap (the shorter one on a tie)."""
        cap = self._cap()
        kept = [(value, length, best) for length, (value, best) in self._by_length.items()]
        within = [k for k in kept if k[1] <= cap] or kept
        return min(within, key=lambda k: k[:2])[2] if within else None

    def _cap(self) -> int:
        shortest = int(self.collector.stats()["shortest"])
        if shortest < 0:
            return self._max_length
        return min(self._max_length, shortest + self._slack)

    def stats(self) -> dict[str, int]:
        """received, dropped (the queue was full), shortest (-1: none)."""
        stats: dict[str, int] = self.collector.stats()
        return stats

    def _fill(self, timeout_s: float) -> None:
        for chunk, direction, raw in self.collector.drain(timeout_s):
            item = (len(raw), next(self._order), chunk, direction, tuple(raw))
            heapq.heappush(self._pending, item)

    def _take(self, item: _Item) -> None:
        length, _, chunk, direction, raw = item
        moves = self._decode(chunk, direction, raw)
        if moves in self._seen:
            return
        self._seen.add(moves)
        started = time.perf_counter()
        value = float(self._score(moves))
        self.score_s += time.perf_counter() - started
        self.scored += 1
        self._shortest_scored = min(self._shortest_scored, length)
        kept = self._by_length.get(length)
        if kept is None or value < kept[0]:
            self._by_length[length] = (value, Best(moves, value, chunk, direction))
