"""Building the whole cache ahead of time: :func:`build_all`, for a ``tables build`` command
or a daemon that prepares its tables before it accepts jobs."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from solver.engines.twophase.tables.cache import AXIAL_GROUPS, GROUPS, default_cache_dir
from solver.engines.twophase.tables.loader import load_or_build
from solver.engines.twophase.tables.progress import Progress, no_progress

__all__ = ["BUILD_ORDER", "build_all"]

log = logging.getLogger(__name__)

#: the groups after ``moves``, longest build first, so that a pool of workers ends together
#: (C breadth-first levels, then for the phase-1 tables the axes of the nearer moves: axial1
#: about 13 s of CPU, phase1axes 9, axial2 7, phase2 6, cornergoal 4, axialgoal 3, the small
#: groups 1-2 each, cornertwist 1)
BUILD_ORDER = (
    "axial1",
    "phase1axes",
    "axial2",
    "phase2",
    "cornergoal",
    "axialgoal",
    "cornslice",
    "slicepair",
    "cornertwist",
)


def build_all(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    robot: bool = False,
    progress: Progress | None = None,
    workers: int | None = None,
) -> dict[str, float]:
    """Make sure every table group is in the cache, checked: the face-turn groups, and with
    ``robot`` the robot-metric ones too. Missing, corrupt or stale groups are built, ``moves``
    first in this process, the others in up to ``workers`` worker processes (default
    :func:`~.loader.default_workers`, which counts cores and available memory). Returns the
    build time of each group built, in seconds (empty when all were there).

    Raises :class:`~.cache.TableError` when the cache folder cannot be written.
    """
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    report = progress or no_progress
    start = time.perf_counter()
    build_s: dict[str, float] = {}
    wanted = set(GROUPS[1:]) | (set(AXIAL_GROUPS) if robot else set())
    groups = [g for g in BUILD_ORDER if g in wanted]
    moves = load_or_build(directory, GROUPS[:1], dict, report, build_s, workers=workers)["moves"]
    load_or_build(
        directory, groups, lambda: moves, report, build_s, workers=workers, parallel=groups
    )
    log.info(
        "two-phase tables%s ready in %s after %.1f s (built: %s)",
        " with the robot metric's" if robot else "",
        directory,
        time.perf_counter() - start,
        ", ".join(build_s) or "none",
    )
    return build_s
