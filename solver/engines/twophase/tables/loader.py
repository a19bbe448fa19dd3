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
    TableError,
    read_bundle,
    remove_stale,
    table_path,
    write_bundle,
)
from solver.engines.twophase.tables.progress import Progress
from solver.engines.twophase.tables.worker import build_parallel

__all__ = ["MAX_WORKERS", "available_mb", "default_workers", "load_or_build"]

log = logging.getLogger(__name__)

#: most worker processes a build uses by default (``workers=`` asks for more)
MAX_WORKERS = 2
#: the most a worker process holds while it builds its group, in MB (measured: 335 for
#: axial1, the biggest, with the axes of its nearer moves; see docs/benchmarks.md), with a
#: margin
WORKER_MB = 360
#: memory left to the rest of the machine (and the calling process) when choosing workers
RESERVE_MB = 256


def available_mb() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in MB (None where there is no such file)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def default_workers(memory_mb: int | None = None) -> int:
    """Worker processes for a build: one per core up to :data:`MAX_WORKERS`, and no more than
    the available memory (``memory_mb``, default :func:`available_mb`) holds at
    :data:`WORKER_MB` each after :data:`RESERVE_MB`; at least one (a single worker, or a
    build in the calling process, needs no more than one worker's memory)."""
    mb = available_mb() if memory_mb is None else memory_mb
    by_memory = MAX_WORKERS if mb is None else (mb - RESERVE_MB) // WORKER_MB
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1, by_memory))


def _read_cached(directory: Path, groups: Sequence[str]) -> dict[str, dict[str, Array]]:
    loaded: dict[str, dict[str, Array]] = {}
    for group in groups:
        path = table_path(directory, group)
        try:
            path.stat()
        except (FileNotFoundError, NotADirectoryError):  # built (writing says what is wrong)
            continue
        except OSError as exc:  # a name too long, a loop of links: exists() raised them
            raise TableError(
                f"cannot use two-phase tables at {path}: {exc.strerror}; set "
                "CUBEROBOT_CACHE_DIR (or --cache-dir) to a writable folder with a shorter path"
            ) from exc
        try:
            loaded[group] = read_bundle(path, group)
        except (Corrupt, OSError) as exc:
            log.warning("two-phase table %s is unusable (%s); rebuilding it", path, exc)
    return loaded


def _mapped(directory: Path, group: str, built: dict[str, Array]) -> dict[str, Array]:
    """The group just written, mapped from its file (the built copy is then freed, and other
    processes loading the cache share the mapping's pages); ``built`` if it cannot be read."""
    try:
        return read_bundle(table_path(directory, group), group)
    except (Corrupt, OSError) as exc:
        log.warning("two-phase table group %s cannot be read back (%s)", group, exc)
        return built


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
        log.info("building %s in %d worker processes", ", ".join(side_by_side), n_workers)
        loaded.update(build_parallel(directory, side_by_side, report, build_s, n_workers))
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
            loaded[group] = _mapped(directory, group, loaded[group])
    return loaded
