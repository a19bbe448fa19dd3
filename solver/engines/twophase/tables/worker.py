"""Building table groups side by side in worker processes.

Each worker is a fresh ``python -m solver.engines.twophase.tables build GROUP CACHE_DIR``
process (no fork, no re-import of the caller's main module) that reads the saved ``moves``
group, builds its group, writes it to the cache and prints its progress as
``progress<TAB>task<TAB>done<TAB>total`` lines on standard output.
"""

from __future__ import annotations

import logging
import selectors
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from solver.engines.twophase.tables.builders import BUILDERS
from solver.engines.twophase.tables.cache import (
    AXIAL_GROUPS,
    GROUPS,
    Array,
    Corrupt,
    read_bundle,
    table_path,
    write_bundle,
)
from solver.engines.twophase.tables.progress import Progress

__all__ = ["WORKER_GROUPS", "build_parallel", "main"]

log = logging.getLogger(__name__)

#: the groups a worker builds (every one but ``moves``, which they all read)
WORKER_GROUPS = GROUPS[1:] + AXIAL_GROUPS
_MODULE = "solver.engines.twophase.tables"
_USAGE = f"usage: python -m {_MODULE} build GROUP CACHE_DIR\n"
#: how much of a failed worker's standard error the warning quotes, in characters
_STDERR_TAIL = 500


def _start(directory: Path, group: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", _MODULE, "build", group, str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _collect(directory: Path, group: str, proc: subprocess.Popen[str]) -> dict[str, Array] | None:
    """The group a finished worker wrote, or None (logged) when it failed."""
    _, err = proc.communicate()
    if proc.returncode != 0:
        log.warning(
            "building %s in a worker process failed (%s); building it here",
            group,
            err[-_STDERR_TAIL:],
        )
        return None
    try:
        return read_bundle(table_path(directory, group), group)
    except (Corrupt, OSError) as exc:
        log.warning("worker-built %s is unusable (%s); building it here", group, exc)
        return None


def build_parallel(
    directory: Path,
    groups: Sequence[str],
    report: Progress,
    build_s: dict[str, float],
    workers: int = 2,
) -> dict[str, dict[str, Array]]:
    """Build ``groups`` in worker processes, at most ``workers`` at a time (the next one starts
    when one finishes, in the order given), into the cache at ``directory`` (its ``moves``
    group must be there); their progress is forwarded to ``report``. A group whose process
    fails is left out (the caller builds it in-process)."""
    started: dict[str, float] = {}
    pending = list(groups)
    running: dict[str, subprocess.Popen[str]] = {}
    sel = selectors.DefaultSelector()
    out: dict[str, dict[str, Array]] = {}
    while pending or running:
        while pending and len(running) < max(1, workers):
            group = pending.pop(0)
            started[group] = time.perf_counter()
            proc = running[group] = _start(directory, group)
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ, group)
        for key, _ in sel.select(timeout=1.0):
            group = key.data
            line = key.fileobj.readline()  # type: ignore[union-attr]
            if line:
                _forward_line(line, report)
                continue
            sel.unregister(key.fileobj)
            arrays = _collect(directory, group, running.pop(group))
            if arrays is not None:
                out[group] = arrays
                build_s[group] = time.perf_counter() - started[group]
                log.info("built two-phase table group %s in %.1f s (worker)", group, build_s[group])
    sel.close()
    return out


def _forward_line(line: str, report: Progress) -> None:
    parts = line.rstrip("\n").split("\t")
    if len(parts) == 4 and parts[0] == "progress":
        report(parts[1], int(parts[2]), int(parts[3]))


def main(argv: Sequence[str]) -> int:
    """``python -m solver.engines.twophase.tables build GROUP CACHE_DIR``: the worker of
    :func:`build_parallel`; exit status 2 on a usage error."""
    if len(argv) != 3 or argv[0] != "build" or argv[1] not in WORKER_GROUPS:
        sys.stderr.write(_USAGE)
        return 2
    group, directory = argv[1], Path(argv[2])

    def report(task: str, done: int, total: int) -> None:
        sys.stdout.write(f"progress\t{task}\t{done}\t{total}\n")
        sys.stdout.flush()

    moves = read_bundle(table_path(directory, "moves"), "moves")
    write_bundle(table_path(directory, group), group, BUILDERS[group](moves, report))
    return 0
