"""The solver's front door: ``solve(state, engine=...)`` and the engine registry.

Every engine is a function ``(cube: Cube, options: SolveOptions) -> Solution`` living in its
own module, imported on first use (so tables and imports cost nothing until needed);
:class:`~solver.options.SolveOptions` is re-exported here. The state is validated here, before
any engine runs: an impossible cube is refused with every problem.
"""

from __future__ import annotations

import importlib
import math
import numbers
from collections.abc import Callable, Collection, Iterable
from typing import Any

from solver.cost import CostModel
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.validate import check
from solver.errors import FaceletFormatError, OptionError, UnsupportedError
from solver.options import SolveOptions
from solver.solution import Solution

__all__ = [
    "AUTO",
    "ENGINES",
    "SIZED_ENGINES",
    "Engine",
    "SolveOptions",
    "engine_for_size",
    "engine_names",
    "get_engine",
    "solve",
    "to_cube",
]


Engine = Callable[[Cube, SolveOptions], Solution]

#: engine name -> "module:function", imported lazily.
ENGINES: dict[str, str] = {
    "twophase": "solver.engines.twophase.engine:solve_twophase",
    "lbl": "solver.engines.lbl:solve_lbl",
    "cfop": "solver.engines.cfop:solve_cfop",
    "trace": "solver.engines.trace:solve_trace",
    "pocket": "solver.engines.pocket:solve_pocket",
    "nxn": "solver.engines.nxn.engine:solve_nxn",
}

#: engines that solve other sizes than 3x3, and the sizes they take
SIZED_ENGINES: dict[str, Callable[[int], bool]] = {
    "pocket": lambda n: n == 2,
    "nxn": lambda n: n >= 4,
}


AUTO = "auto"


def _three(n: int) -> bool:
    """The size rule of the engines not in :data:`SIZED_ENGINES`: 3x3 only."""
    return n == 3


def engine_for_size(n: int, requested: str) -> str:
    """The engine that runs for an ``n`` cube: ``"auto"`` picks by size (2x2 "pocket", 3x3
    "twophase", N >= 4 "nxn"); a named engine runs as asked (and refuses a size it does not
    solve)."""
    if requested != AUTO:
        if requested in ENGINES and not SIZED_ENGINES.get(requested, _three)(n):
            raise UnsupportedError(f"engine {requested!r} does not solve {n}x{n}x{n} cubes")
        return requested
    if n == 2:
        return "pocket"
    if n == 3:
        return "twophase"
    if n >= 4:
        return "nxn"
    raise UnsupportedError(f"a {n}x{n}x{n} cube has nothing to solve")


def engine_names() -> list[str]:
    return list(ENGINES)


def get_engine(name: str) -> Engine:
    try:
        target = ENGINES[name]
    except KeyError:
        raise UnsupportedError(
            f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}"
        ) from None
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    engine: Engine = getattr(module, attr)
    return engine


def to_cube(state: Cube | CubieCube | str) -> Cube:
    """Accept a facelet cube, a cubie cube or a facelet string (anything else is a
    :class:`~solver.errors.FaceletFormatError` naming its type)."""
    if isinstance(state, Cube):
        return state
    if isinstance(state, CubieCube):
        return state.to_cube()
    if not isinstance(state, str):
        raise FaceletFormatError(
            f"a cube state is a Cube, a CubieCube or a facelet string, not {type(state).__name__}"
        )
    return Cube.from_facelets(state)


def _max_length(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise OptionError(
            "max_length", f"max_length must be a whole number of moves >= 0, got {value!r}"
        )
    return int(value)


def _budget(value: object) -> float:
    seconds = (
        float(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool)
        else math.nan
    )
    if not 0 <= seconds < math.inf:
        raise OptionError(
            "budget_s", f"budget_s must be a finite number of seconds >= 0, got {value!r}"
        )
    return seconds


def _faces(faces: object) -> frozenset[Face] | None:
    """``faces`` as a set of :class:`Face`: Faces or their letters (any case), a string of
    letters such as ``"URFLB"`` included."""
    if faces is None:
        return None
    if isinstance(faces, (str, Face)):
        faces = list(faces) if isinstance(faces, str) else [faces]
    if not isinstance(faces, Iterable):
        raise OptionError("faces", f"faces must be a collection of faces, got {faces!r}")
    chosen = set()
    for face in faces:
        if isinstance(face, Face):
            chosen.add(face)
        elif isinstance(face, str) and face.upper() in Face.__members__:
            chosen.add(Face[face.upper()])
        else:
            raise OptionError("faces", f"faces are letters of U R F D L B, got {face!r}")
    if not chosen:
        raise OptionError("faces", "faces is empty: at least one face must be allowed to turn")
    return frozenset(chosen)


def _cost_model(value: object) -> CostModel | None:
    if value is not None and not isinstance(value, CostModel):
        raise OptionError(
            "cost_model", f"cost_model must be a solver.cost.CostModel, got {value!r}"
        )
    return value


def solve(
    state: Cube | CubieCube | str,
    engine: str = AUTO,
    *,
    max_length: int | None = None,
    budget_s: float = 0.0,
    cost_model: CostModel | None = None,
    faces: Collection[Face | str] | None = None,
    **extra: Any,
) -> Solution:
    """Solve ``state`` (any size N >= 2) with ``engine`` (default ``"auto"``: the engine for
    the cube's size, two-phase for a 3x3, see :func:`engine_for_size`); raises
    :class:`~solver.errors.InvalidCubeError` for an impossible cube before any search, and
    :class:`~solver.errors.OptionError` naming the option for a ``max_length``, ``budget_s``,
    ``cost_model`` or ``faces`` of the wrong type or out of range."""
    cube = check(to_cube(state))
    options = SolveOptions(
        _max_length(max_length), _budget(budget_s), _cost_model(cost_model), _faces(faces), extra
    )
    return get_engine(engine_for_size(cube.n, engine))(cube, options)
