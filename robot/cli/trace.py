"""``cuberobot trace FACELETS``: the blindfold memo of a state (seed 002's cycle tracing).

Forms (a contract; scripts call them)::

    cuberobot trace FACELETS [--edge-buffer b] [--corner-buffer A] [--format text|json]

Text output, one line per kind and one for parity::

    edges   (buffer b): tu co rg dj wd aq    cycles: t u c o r g / d j w d / a q    flipped: a q
    corners (buffer A): ...                  cycles: ...                            twisted: ...
    parity: no

Exit codes: 0 traced; 1 an impossible cube (every problem on stderr); 2 text that is not a
facelet string, or a buffer letter that does not exist.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from robot.cli.exits import CommandFailed, UsageError
from solver.cube.facelets import Cube
from solver.engines.trace import PieceTrace, trace
from solver.errors import FaceletFormatError, InvalidCubeError

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "trace",
        help="letters of the edge and corner cycles (blindfold memo) of a 3x3 state",
        description="Trace edge and corner cycles in Speffz letters (edges a-x, corners A-X).",
    )
    p.add_argument("facelets", metavar="FACELETS", help="54 letters URFDLB, Kociemba order")
    p.add_argument("--edge-buffer", default="b", help="edge buffer letter a-x (default b = UR)")
    p.add_argument(
        "--corner-buffer", default="A", help="corner buffer letter A-X (default A = ULB)"
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default): one line per piece kind and parity; json: one object",
    )
    p.set_defaults(handler=_trace)


def _trace(args: argparse.Namespace) -> int:
    try:
        cube = Cube.from_facelets(args.facelets, 3)
    except FaceletFormatError as exc:
        raise UsageError(f"not a facelet string: {exc}") from exc
    try:
        result = trace(cube, args.edge_buffer.lower(), args.corner_buffer.upper())
    except InvalidCubeError as exc:
        details = (problem.message for problem in exc.problems)
        raise CommandFailed("impossible cube:", details=details) from exc
    if args.format == "json":
        print(json.dumps(result.to_dict()))
        return 0
    print(_line(result.edges, "flipped"))
    print(_line(result.corners, "twisted"))
    print(f"parity: {'yes' if result.parity else 'no'}")
    return 0


def _line(piece_trace: PieceTrace, misoriented: str) -> str:
    head = f"{piece_trace.kind:<7} (buffer {piece_trace.buffer}): {piece_trace.letters() or '-'}"
    cycles = " / ".join(" ".join(c) for c in piece_trace.cycles if c) or "-"
    turned = " ".join(piece_trace.misoriented) or "-"
    return f"{head}    cycles: {cycles}    {misoriented}: {turned}"
