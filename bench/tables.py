"""Benchmark of the first two-phase table build: time and peak memory with 1, 2 and 4 workers.

    python bench/tables.py                      # every group, with 1, 2 and 4 workers
    python bench/tables.py --workers 2 --json   # one build, a JSON list on standard output
    python bench/tables.py --face-turn-only     # without the robot metric's two groups

Each build runs in a fresh process into an empty temporary cache folder (the real cache is not
touched) through :func:`solver.engines.twophase.tables.build_all`. While it runs, the resident
memory (``VmRSS``) of the process and of every worker process it starts is sampled every
:data:`SAMPLE_S` seconds from ``/proc``: ``peak_rss_mb_total`` is the largest sum over the
process tree at one instant, ``peak_rss_mb_process`` the largest single process (the kernel's
own maximum, from ``wait4``, so no peak of one process is missed between samples). A full build
keeps the machine's cores busy for a minute or more: run it a few times, not in a loop.
Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from solver.engines.twophase.tables import AXIAL_GROUPS, GROUPS

#: seconds between two samples of the process tree's memory
SAMPLE_S = 0.02
#: the most worker processes worth measuring: one per table group (a worker builds one group)
MAX_WORKERS = len(GROUPS) + len(AXIAL_GROUPS)
_BUILD = (
    "import sys; from solver.engines.twophase.tables import build_all; "
    "build_all(sys.argv[1], robot=sys.argv[2] == 'robot', workers=int(sys.argv[3]))"
)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(x) for x in task.read_text().split()]
        except OSError:
            continue
    return found


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def tree_rss_kb(root: int) -> int:
    """The resident memory of ``root`` and all its descendants now, in kB."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kb(pid)
        todo += _children(pid)
    return total


def measure(workers: int, robot: bool) -> dict[str, Any]:
    """One first build into an empty cache: its time and memory."""
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="cuberobot-tables-") as cache:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", _BUILD, cache, "robot" if robot else "face", str(workers)],
            cwd=repo,
        )
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, tree_rss_kb(proc.pid))
            time.sleep(SAMPLE_S)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        groups = [p.name.split("-")[-1][:-4] for p in sorted(Path(cache).glob("twophase/*.bin"))]
    if proc.returncode != 0:
        raise SystemExit(f"the build with {workers} workers failed (exit {proc.returncode})")
    return {
        "workers": workers,
        "groups": groups,
        "seconds": round(seconds, 1),
        "peak_rss_mb_total": round(peak / 1024),
        "peak_rss_mb_process": round(usage.ru_maxrss / 1024),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workers",
        type=_args.int_list(1, MAX_WORKERS, what="a count of workers"),
        default="1,2,4",
        help=f"worker counts to measure (1..{MAX_WORKERS}), comma-separated",
    )
    parser.add_argument(
        "--face-turn-only",
        action="store_true",
        help="build only the face-turn groups (not the robot metric's axial1, axial2, axialgoal)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list of the rows")
    args = parser.parse_args(argv)
    rows = [measure(w, not args.face_turn_only) for w in args.workers]
    if args.json:
        print(json.dumps(rows))
        return 0
    wanted = GROUPS if args.face_turn_only else GROUPS + AXIAL_GROUPS
    print(f"first table build, groups: {', '.join(wanted)}")
    print("| workers | seconds | peak RSS, all processes (MB) | peak RSS, one process (MB) |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['workers']} | {row['seconds']} | {row['peak_rss_mb_total']} "
            f"| {row['peak_rss_mb_process']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
