"""Load or build: the one helper that gives table groups from the cache, building (and saving)
those that are missing, corrupt or of another format version."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from solver.engines.twophase.tables.builders import build_timed
from solver.engines.twophase.tables.cache import (
    Array,
    Corrupt,
    read_bundle,
    remove_stale,
    table_path,
    write_bundle,
)
from solver.engines.twophase.tables.progress import Progress
from solver.engines.twophase.tables.worker import build_parallel

__all__ = ["default_workers", "load_or_build"]

log = logging.getLogger(__name__)

#: most worker processes a build uses (the two big groups of a table set)
MAX_WORKERS = 2


def default_workers() -> int:
    """Worker processes for a build: two when the machine has two cores or more."""
    return min(MAX_WORKERS, os.cpu_count() or 1)


def _read_cached(directory: Path, groups: Sequence[str]) -> dict[str, dict[str, Array]]:
    loaded: dict[str, dict[str, Array]] = {}
    for group in groups:
        path = table_path(directory, group)
        if not path.exists():
            continue
        try:
            loaded[group] = read_bundle(path, group)
        except (Corrupt, OSError) as exc:
            log.warning("two-phase table %s is unusable (%s); rebuilding it", path, exc)
    return loaded


def load_or_build(
    directory: Path,
    groups: Sequence[str],
    inputs: Callable[[], dict[str, Array]],
    report: Progress,
    build_s: dict[str, float],
    *,
    use_cache: bool = True,
    workers: int | None = None,
    parallel: Collection[str] = (),
) -> dict[str, dict[str, Array]]:
    """Every group of ``groups``, by name: read from the cache at ``directory``, or built from
    ``inputs()`` (the ``moves`` arrays, asked for only when something must be built) and saved.

    When two or more of the ``parallel`` groups must be built and ``workers`` (default
    :func:`default_workers`) allows it, they are built at the same time in worker processes,
    which read the ``moves`` group from the same cache. ``use_cache=False`` reads and writes
    nothing. Build times go to ``build_s``.
    """
    loaded = _read_cached(directory, groups) if use_cache else {}
    missing = [g for g in groups if g not in loaded]
    side_by_side = [g for g in missing if g in parallel]
    n_workers = default_workers() if workers is None else workers
    if (
        len(side_by_side) >= 2
        and n_workers >= 2
        and use_cache
        and table_path(directory, "moves").exists()
    ):
        loaded.update(build_parallel(directory, side_by_side, report, build_s))
        for group in side_by_side:
            if group in loaded:
                remove_stale(directory, group)
    rest = [g for g in missing if g not in loaded]
    arrays = inputs() if rest else {}
    for group in rest:
        loaded[group] = build_timed(group, arrays, report, build_s)
        if use_cache:
            write_bundle(table_path(directory, group), group, loaded[group])
            remove_stale(directory, group)
    return loaded
