"""``cuberobot tables build [--robot] [--cache-dir DIR] [--workers N]``: build the solver's
tables ahead of time (a new robot's first job would otherwise spend minutes building them).

It builds what is missing, corrupt or stale in the cache (``$CUBEROBOT_CACHE_DIR``, XDG, or
``~/.cache/cuberobot``): the two-phase face-turn tables, with ``--robot`` the robot-metric ones
too, and the 2x2 table; the worker processes are sized by cores and free memory unless
``--workers`` says otherwise. One progress display per table on a terminal, a line per stage
otherwise; a last line says what was built and how long it took (``all tables were already
built`` when nothing was). Exit codes: 0 ready; 1 a table could not be built or written (the
message names the folder); 2 usage.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "tables",
        help="build the solver's tables ahead of time",
        description="Build the solver's tables ahead of time.",
    )
    actions = p.add_subparsers(dest="tables_command", metavar="ACTION", required=True)
    b = actions.add_parser("build", help="build every table that is missing, corrupt or stale")
    b.add_argument("--robot", action="store_true", help="also the robot-time objective's tables")
    b.add_argument("--cache-dir", type=Path, default=None, help="table cache folder")
    b.add_argument(
        "--workers", type=_workers, default=None, metavar="N", help="worker processes (auto)"
    )
    b.set_defaults(handler=_build)


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"workers must be a whole number, got {text!r}") from None
    if not 1 <= value <= 16:
        raise argparse.ArgumentTypeError(f"workers must be 1..16, got {value}")
    return value


def _build(args: argparse.Namespace) -> int:
    from solver.engines.pocket import load_pocket_table
    from solver.engines.twophase.tables import build_all, stderr_progress

    started = time.perf_counter()
    built = build_all(
        args.cache_dir, robot=args.robot, progress=stderr_progress(), workers=args.workers
    )
    load_pocket_table(cache_dir=args.cache_dir)
    seconds = time.perf_counter() - started
    if built:
        names = ", ".join(f"{g} {s:.1f} s" for g, s in built.items())
        print(f"built {names}; all tables ready in {seconds:.1f} s")
    else:
        print(f"all tables were already built (checked in {seconds:.1f} s)")
    return 0
