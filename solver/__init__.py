"""The cube core: facelet model (any N), cubies, notation, validation, engines.

Pure computation: numpy only, no I/O beyond the engines' table cache.
"""

from solver.api import ENGINES, SolveOptions, solve
from solver.cost import DEFAULT_COST_MODEL, CostModel
from solver.cube.cubie import Corner, CubieCube, Edge
from solver.cube.facelets import DEFAULT_SCHEME, SCHEMES, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, MoveKind, count, format_moves, invert, parse
from solver.cube.validate import check, validate
from solver.errors import (
    CubeError,
    FaceletFormatError,
    InvalidCubeError,
    NoSolutionError,
    NotationError,
    OptionError,
    Problem,
    UnsupportedError,
)
from solver.solution import Solution, Stage

__all__ = [
    "DEFAULT_COST_MODEL",
    "DEFAULT_SCHEME",
    "ENGINES",
    "SCHEMES",
    "ColourScheme",
    "Corner",
    "CostModel",
    "Cube",
    "CubeError",
    "CubieCube",
    "Edge",
    "Face",
    "FaceletFormatError",
    "InvalidCubeError",
    "Metric",
    "Move",
    "MoveKind",
    "NoSolutionError",
    "NotationError",
    "OptionError",
    "Problem",
    "Solution",
    "SolveOptions",
    "Stage",
    "UnsupportedError",
    "check",
    "count",
    "format_moves",
    "invert",
    "parse",
    "solve",
    "validate",
]
