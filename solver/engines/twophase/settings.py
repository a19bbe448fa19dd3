"""The two-phase engine's own options (``solve(..., name=value)``), checked once.

``cache_dir``    table cache folder (default: see :mod:`solver.engines.twophase.tables`)
``timeout_s``    give up when no solution at all is found after this long (default 30 s)
``phase2_max``   longest phase-2 part tried (default 10 moves; 12 with a cost model and the
                 ``"moves"`` robot search; 10 groups in the robot search)
``directions``   1, 2, 3 or 6 searches (default 6; 1 = the cube only, 2 = cube and inverse)
``robot_search`` with a cost model: ``"groups"`` (default) or ``"moves"``
``threads``      worker threads sharing the directions when there is a budget (default: one
                 per core, at most six)
``progress``     a callback ``(task, done, total)`` shown while tables are built
``score``        a candidate scorer ``score(moves) -> float`` (without a cost model): the search
                 keeps every distinct solution it meets within the budget and returns the one
                 scored lowest (see :mod:`solver.engines.twophase.candidates`)
``score_slack``  with ``score``: candidates may be this many moves longer than the shortest
                 solution found (default 2; ``max_length`` still bounds them)
``score_descent`` with ``score``: the share of the budget (0 <= x < 1, default 0) the search
                 first spends as the plain shortest-solution search before it collects
                 candidates at the length reached (when length dominates the score)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solver.cube.notation import Move
from solver.engines.common.settings import (
    check_int,
    check_one_of,
    check_positive,
    parse_settings,
)
from solver.engines.twophase.tables import Progress
from solver.errors import OptionError

__all__ = [
    "DEFAULT_DIRECTIONS",
    "DEFAULT_SCORE_SLACK",
    "DEFAULT_THREADS",
    "DEFAULT_TIMEOUT_S",
    "DIRECTIONS",
    "MAX_LENGTH_LIMIT",
    "MAX_THREADS",
    "ROBOT_SEARCHES",
    "Scorer",
    "TwoPhaseSettings",
]

DEFAULT_TIMEOUT_S = 30.0
#: the search directions a solve may run: the cube; and its inverse; along the three axes;
#: the three axes and their inverses
DIRECTIONS = (1, 2, 3, 6)
DEFAULT_DIRECTIONS = 6
ROBOT_SEARCHES = ("groups", "moves")
#: worker threads for a search with a budget: one per core, at most one per direction
MAX_THREADS = 6
DEFAULT_THREADS = min(MAX_THREADS, os.cpu_count() or 1)
#: the longest solution (and phase-2 part) the C kernel searches (its MAX_DEPTH - 1)
MAX_LENGTH_LIMIT = 30
DEFAULT_SCORE_SLACK = 2
#: a candidate scorer: the solution's moves -> its score (lower is better)
Scorer = Callable[[Sequence[Move]], float]


@dataclass(frozen=True, slots=True)
class TwoPhaseSettings:
    """The options of the module docstring, every one checked on construction."""

    cache_dir: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    phase2_max: int | None = None
    directions: int = DEFAULT_DIRECTIONS
    robot_search: str = "groups"
    threads: int = DEFAULT_THREADS
    progress: Progress | None = None
    score: Scorer | None = None
    score_slack: int = DEFAULT_SCORE_SLACK
    score_descent: float = 0.0

    def __post_init__(self) -> None:
        if self.cache_dir is not None:
            if not isinstance(self.cache_dir, str | os.PathLike):
                raise OptionError(
                    "cache_dir", f"cache_dir must be a folder path, got {self.cache_dir!r}"
                )
            object.__setattr__(self, "cache_dir", Path(self.cache_dir).expanduser())
        object.__setattr__(self, "timeout_s", check_positive("timeout_s", self.timeout_s))
        if self.phase2_max is not None:
            check_int("phase2_max", self.phase2_max, 0, MAX_LENGTH_LIMIT)
        check_one_of("directions", check_int("directions", self.directions, 1), DIRECTIONS)
        check_one_of("robot_search", self.robot_search, ROBOT_SEARCHES)
        check_int("threads", self.threads, 1)
        if self.progress is not None and not callable(self.progress):
            raise OptionError(
                "progress",
                f"progress must be a callable (task, done, total), got {self.progress!r}",
            )
        if self.score is not None and not callable(self.score):
            raise OptionError(
                "score", f"score must be a callable (moves) -> float, got {self.score!r}"
            )
        check_int("score_slack", self.score_slack, 0, MAX_LENGTH_LIMIT)
        descent = self.score_descent
        if (
            isinstance(descent, bool)
            or not isinstance(descent, int | float)
            or not 0 <= descent < 1
        ):
            raise OptionError(
                "score_descent", f"score_descent must be a share from 0 to below 1, got {descent!r}"
            )

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> TwoPhaseSettings:
        """The settings in ``SolveOptions.extra``; unknown names are refused."""
        return parse_settings(cls, "two-phase", extra)
