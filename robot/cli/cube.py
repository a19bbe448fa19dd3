"""``cuberobot apply | validate | scramble``: the cube core from the command line.

Forms (a contract; scripts call them):

* ``cuberobot apply MOVES [--size N] [--from FACELETS] [--format net|facelets]``
* ``cuberobot validate FACELETS [--size N]`` — exit 0 and ``valid`` on stdout; exit 1 and
  ``cuberobot: impossible cube:`` then every problem, one indented line each, on stderr (the
  rule of :mod:`robot.cli.exits`: problems on stderr); exit 2 for text that is not a facelet
  string
* ``apply`` colours its net only on a terminal, and never with ``NO_COLOR`` set (to anything
  but "") or ``TERM=dumb``
* ``cuberobot scramble [--size N] [--seed S] [--format moves|facelets]``
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from robot.cli.args import cube_size
from robot.cli.exits import CommandFailed, UsageError
from robot.cli.output import colour_wanted
from solver.cube.facelets import ORIENTATIONS, Cube, net
from solver.cube.notation import format_moves, invert, parse
from solver.cube.validate import validate
from solver.errors import FaceletFormatError
from solver.scramble import random_moves, random_state, scramble

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("apply", help="apply moves to a cube and show the result")
    p.add_argument("moves", metavar="MOVES", help="moves in WCA/SiGN notation, e.g. \"R U R' U'\"")
    p.add_argument("--size", type=_size, default=None, help="cube size N (default 3)")
    p.add_argument("--from", dest="start", metavar="FACELETS", help="start from this state")
    p.add_argument(
        "--format",
        choices=("net", "facelets"),
        default="net",
        help="net (default): the unfolded cube, coloured on a terminal; facelets: one string",
    )
    p.set_defaults(handler=_apply)

    p = sub.add_parser("validate", help="check that a facelet string is a possible cube")
    p.add_argument("facelets", metavar="FACELETS", help="facelet string, URFDLB face order")
    p.add_argument("--size", type=_size, default=None, help="cube size N (inferred)")
    p.set_defaults(handler=_validate)

    p = sub.add_parser("scramble", help="a scramble: random state (3x3) or random moves")
    p.add_argument("--size", type=_size, default=3, help="cube size N (default 3)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    p.add_argument(
        "--format",
        choices=("moves", "facelets"),
        default="moves",
        help="moves (default) or the facelet string of the scrambled state",
    )
    p.add_argument(
        "--random-state",
        action="store_true",
        help="N >= 4: a uniformly random reachable state built piece by piece (facelets; with "
        "--format moves, the inverse of its solution)",
    )
    p.set_defaults(handler=_scramble)


_size = cube_size(64)


def _apply(args: argparse.Namespace) -> int:
    moves = parse(args.moves)
    if args.start is not None:
        cube = Cube.from_facelets(args.start, args.size)
    else:
        cube = Cube.solved(args.size or 3)
    result = cube.apply(moves)
    if args.format == "facelets":
        print(result.to_facelets())
    else:
        print(net(result, ansi=colour_wanted(sys.stdout)))
    return 0


def _validate(args: argparse.Namespace) -> int:
    try:
        cube = Cube.from_facelets(args.facelets, args.size)
    except FaceletFormatError as exc:
        raise UsageError(f"not a facelet string: {exc}") from exc
    problems = validate(cube)
    if problems:
        raise CommandFailed("impossible cube:", details=(p.message for p in problems))
    print("valid")
    return 0


def _scramble(args: argparse.Namespace) -> int:
    n = args.size
    if args.random_state and n != 3:
        return _random_state(n, args.seed, args.format)
    if n == 3 and args.format == "facelets":
        print(random_state(args.seed).to_facelets())
        return 0
    if n == 3:
        result = scramble(3, args.seed)
        moves, cube = result.moves, result.cube
    else:
        seq = random_moves(n, seed=args.seed)
        moves, cube = tuple(seq), Cube.solved(n).apply(seq)
    print(format_moves(moves) if args.format == "moves" else cube.to_facelets())
    return 0


def _random_state(n: int, seed: int | None, fmt: str) -> int:
    """A random-state scramble of a big cube (a 2x2: a random corner state)."""
    from solver.api import solve
    from solver.scramble import random_state_nxn

    if n == 2:
        cube = Cube.solved(2).apply(random_moves(2, length=40, seed=seed))
    else:
        cube = random_state_nxn(n, seed)
    if fmt == "facelets":
        print(cube.to_facelets())
        return 0
    # moves that make exactly this state: the solution ends with the cube held some way, so the
    # scramble starts with the whole-cube rotation that holds a solved cube that way
    solution = solve(cube).moves
    ends = cube.apply(solution)
    hold = next(r for r in ORIENTATIONS if Cube.solved(n).apply(r) == ends)
    print(format_moves([*parse(hold), *invert(solution)]))
    return 0
