"""``cuberobot solve``: solve a cube state of any size from the command line.

Forms (a contract; scripts call them):

* ``cuberobot solve FACELETS [options]`` — a Kociemba facelet string (URFDLB, 6·N² letters; N is
  read from the length, or given with ``--size N``)
* ``cuberobot solve --scramble "R U ..." [--size N] [options]`` — the state these moves make
  from solved (N = 3 unless given)
* ``cuberobot solve --batch FILE [options]`` — one facelet string per line in (blank lines and
  ``#`` comments skipped; ``-`` reads standard input; a byte-order mark and CRLF line ends are
  fine), one line per state out: ``MOVES<TAB>MILLISECONDS``; a state that fails gives
  ``ERROR: message (line K)<TAB>MILLISECONDS`` and the exit code 1 at the end. Each line's size
  picks its engine (``auto``: a file may mix sizes; a named engine refuses a line of a size it
  does not solve, and only that line). With ``--format json`` every line is a JSON object, a
  failed state's ``{"error": {...}, "line": K, "solve_ms": ...}`` (never a plain ``ERROR:``
  line). The tables are loaded once. A file that is not UTF-8 text, or a line longer than
  :data:`MAX_BATCH_LINE` characters (``/dev/zero``), is a usage error (exit 2).

Options: ``--engine NAME`` (default ``auto``: the optimal 2x2 engine ``pocket`` for N = 2,
``twophase`` for 3x3, the reduction engine ``nxn`` for N >= 4), ``--size N``, ``--budget
SECONDS`` (0: the first solution within the maximum length; more: keep improving until the time
is up; finite), ``--max-length N``
(default 20; 26 with ``--robot-time``), ``--faces URFLB`` (the faces with a motor),
``--robot-time`` (optimise the estimated robot execution time with the default cost model, or
``--cost Q,H,P,S`` seconds for a quarter turn, a half turn, the extra of two opposite faces
together, the settle; ``--robot-search groups|moves``), ``--format moves|json``,
``--cache-dir DIR`` (table cache).

Exit codes: 0 solved; 1 an impossible cube (every validation problem is printed) or no solution
within the limits; 2 malformed input (the solver's errors, mapped by :mod:`robot.cli.exits`).
Errors go to stderr; with ``--format json`` a failure also prints ``{"error": {...}}`` on
stdout (:func:`robot.cli.main` with :func:`robot.cli.exits.error_document`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from robot.cli.args import cube_size
from robot.cli.exits import UsageError, error_document
from solver.api import AUTO, engine_for_size, engine_names, solve
from solver.cost import DEFAULT_COST_MODEL, CostModel
from solver.cube.facelets import MAX_N, Cube
from solver.cube.geometry import Face
from solver.cube.notation import parse
from solver.errors import CubeError, FaceletFormatError, NotationError
from solver.solution import Solution

__all__ = ["MAX_BATCH_LINE", "register"]

#: The longest batch line read (characters): a facelet string of the largest cube (6·N² for
#: N = MAX_N is 98,304 letters) with room for a comment. A longer line ends the batch (exit 2)
#: instead of being read until memory runs out.
MAX_BATCH_LINE = 128 * 1024


def register(sub: Any) -> None:
    p = sub.add_parser(
        "solve",
        help="solve a cube state of any size (facelets, a scramble, or a batch file)",
        description="Solve a cube state and print the moves (any N; 3x3 unless said).",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("facelets", nargs="?", metavar="FACELETS", help="6·N² letters of URFDLB")
    src.add_argument("--scramble", metavar="MOVES", help="solve the state these moves make")
    src.add_argument("--batch", metavar="FILE", help="one facelet string per line ('-': stdin)")
    p.add_argument(
        "--engine",
        default=AUTO,
        help=f"auto (by size: pocket, twophase, nxn) or one of {', '.join(engine_names())}",
    )
    p.add_argument(
        "--size", type=cube_size(MAX_N), default=None, metavar="N", help="cube size (inferred)"
    )
    p.add_argument(
        "--budget",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="0 (default): the first solution; more: keep improving for this long",
    )
    p.add_argument("--max-length", type=_length, default=None, metavar="N", help="default 20")
    p.add_argument("--faces", type=_faces, default=None, metavar="FACES", help="e.g. URFLB")
    p.add_argument(
        "--robot-time",
        action="store_true",
        help="minimise the robot's time (give a --budget: 0 returns the first solution found)",
    )
    p.add_argument(
        "--cost",
        type=_cost,
        default=None,
        metavar="Q,H,P,S",
        help="robot-time cost model: seconds for a quarter turn, a half turn, the extra of "
        "two opposite faces together, the settle",
    )
    p.add_argument(
        "--robot-search",
        choices=("groups", "moves"),
        default="groups",
        help="with --robot-time: search over robot groups (default) or face turns",
    )
    p.add_argument(
        "--format",
        choices=("moves", "json"),
        default="moves",
        help="moves (default): the solution; json: one object with moves and metrics",
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="two-phase table cache folder")
    p.set_defaults(handler=_solve)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"budget must be seconds, got {text!r}") from None
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"budget must be a finite number >= 0 seconds, got {text}")
    return value


def _length(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"max length must be a whole number, got {text!r}"
        ) from None
    if not 0 <= value <= 30:
        raise argparse.ArgumentTypeError(f"max length must be 0..30, got {value}")
    return value


def _faces(text: str) -> frozenset[Face]:
    faces = set()
    for ch in text.replace(",", "").upper():
        if ch not in "URFDLB":
            raise argparse.ArgumentTypeError(f"faces are letters of URFDLB, got {text!r}")
        faces.add(Face[ch])
    if not faces:
        raise argparse.ArgumentTypeError("name at least one face")
    return frozenset(faces)


def _cost(text: str) -> CostModel:
    try:
        q, h, p, s = (float(x) for x in text.split(","))
        return CostModel(q, h, p, s)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--cost takes four seconds Q,H,P,S (quarter, half, pair extra, settle): {exc}"
        ) from None


def _options(args: argparse.Namespace, engine: str) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "max_length": args.max_length,
        "budget_s": args.budget,
        "cost_model": args.cost or (DEFAULT_COST_MODEL if args.robot_time else None),
        "faces": args.faces,
    }
    if engine == "twophase":
        if args.cache_dir is not None:
            opts["cache_dir"] = args.cache_dir
        if opts["cost_model"] is not None:
            opts["robot_search"] = args.robot_search
        from solver.engines.twophase.tables import stderr_progress

        opts["progress"] = stderr_progress()
    if engine == "nxn":
        from solver.engines.twophase.tables import stderr_progress

        opts["progress"] = stderr_progress("building big-cube tables:")
    return opts


def _render(solution: Solution, ms: float, fmt: str) -> str:
    if fmt == "json":
        data = solution.to_dict()
        data["solve_ms"] = round(ms, 3)
        return json.dumps(data)
    return str(solution)


def _solve(args: argparse.Namespace) -> int:
    if args.engine != AUTO and args.engine not in engine_names():
        raise UsageError(
            f"unknown engine {args.engine!r}; choose auto or one of {', '.join(engine_names())}"
        )
    if args.batch is not None:
        if args.size is not None:
            engine_for_size(args.size, args.engine)  # an engine that cannot solve --size: now
        return _solve_batch(args)
    if args.scramble is not None:
        cube = Cube.solved(args.size or 3).apply(args.scramble)
    else:
        try:
            cube = Cube.from_facelets(args.facelets.strip(), args.size)
        except FaceletFormatError as exc:
            hint = _facelets_hint(args.facelets)
            if hint is None:
                raise
            raise UsageError(f"not a facelet string: {exc}; {hint}") from exc
    engine = engine_for_size(cube.n, args.engine)
    t0 = time.perf_counter()
    solution = solve(cube, engine, **_options(args, engine))
    ms = 1000 * (time.perf_counter() - t0)
    print(_render(solution, ms, args.format))
    return 0


def _facelets_hint(text: str) -> str | None:
    """What a FACELETS argument that is not a facelet string was likely meant as: a file of
    states (a path: it names a file or directory, or has a path separator) or a scramble
    (moves that parse, with a space or a turn's suffix: letters of URFDLB alone are a facelet
    string of the wrong length); ``None``: neither."""
    try:
        is_dir, exists = Path(text).is_dir(), Path(text).exists()
    except (OSError, ValueError):  # no name the system could look up (too long, ...)
        is_dir = exists = False
    if is_dir:
        return f"{text} is a directory; --batch FILE solves each line of a file"
    if "/" in text or "\\" in text or exists:
        return f"to solve each line of a file, give it as --batch {_shortened(text, 4096)}"
    if set(text.strip()) <= set("URFDLB"):
        return None  # a facelet string of the wrong length, not moves
    try:
        moves = parse(text)
    except NotationError:
        return None
    if not moves:
        return None
    return f"to solve the state these moves make, give them as --scramble {_shortened(text)!r}"


def _shortened(text: str, most: int = 60) -> str:
    """``text`` as a message quotes it: at most ``most`` characters, an ellipsis for the rest."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _solve_batch(args: argparse.Namespace) -> int:
    try:
        stream: TextIO = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot read {args.batch}: {exc.strerror}") from exc
    if args.engine in (AUTO, "twophase") and args.size in (None, 3):
        from solver.engines.twophase.engine import get_solver

        opts = _options(args, "twophase")
        get_solver(opts.get("cache_dir"), progress=opts.get("progress"))  # load tables once
    failed = 0
    options: dict[str, dict[str, Any]] = {}  # per engine: the lines' sizes pick it (auto)
    name = "standard input" if args.batch == "-" else args.batch
    with stream:
        try:
            for number in itertools.count(1):
                line = stream.readline(MAX_BATCH_LINE + 1)  # bounded: /dev/zero has no line end
                if not line:
                    break
                if len(line) > MAX_BATCH_LINE:
                    raise UsageError(
                        f"{name}: line {number} is longer than {MAX_BATCH_LINE:,} characters: "
                        f"not a facelet string (6·N² letters, N at most {MAX_N}); the batch "
                        "takes one facelet string per line"
                    )
                failed += _solve_line(line, number, args, options)
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"{name}: not UTF-8 text ({exc.reason}); the batch takes one facelet string "
                "per line"
            ) from exc
    return 1 if failed else 0


def _solve_line(
    line: str, number: int, args: argparse.Namespace, options: dict[str, dict[str, Any]]
) -> int:
    """Solve one batch line (``number``, from 1) with the engine for its size and print its
    result line; 1 if the state failed, else 0. A failure names the line."""
    text = line.split("#", 1)[0].strip().lstrip("\ufeff").strip()  # a byte-order mark too
    if not text:
        return 0
    t0 = time.perf_counter()
    try:
        cube = Cube.from_facelets(text, args.size)
        engine = engine_for_size(cube.n, args.engine)
        if engine not in options:
            options[engine] = _options(args, engine)
        solution = solve(cube, engine, **options[engine])
    except CubeError as exc:
        ms = 1000 * (time.perf_counter() - t0)
        if args.format == "json":
            document = {**(error_document(exc) or {}), "line": number, "solve_ms": round(ms, 3)}
            print(json.dumps(document), flush=True)
        else:
            print(f"ERROR: {exc} (line {number})\t{ms:.3f}", flush=True)
        return 1
    ms = 1000 * (time.perf_counter() - t0)
    out = _render(solution, ms, args.format)
    print(out if args.format == "json" else f"{out}\t{ms:.3f}", flush=True)
    return 0
