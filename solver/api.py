"""The solver's front door: ``solve(state, engine=...)`` and the engine registry.

Every engine is a function ``(cube: Cube, options: SolveOptions) -> Solution`` living in its
own module, imported on first use (so tables and imports cost nothing until needed);
:class:`~solver.options.SolveOptions` is re-exported here. The state is validated here, before
any engine runs: an impossible cube is refused with every problem.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from typing import Any

from solver.cost import CostModel
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.validate import check
from solver.errors import UnsupportedError
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


def engine_for_size(n: int, requested: str) -> str:
    """The engine that runs for an ``n`` cube: ``"auto"`` picks by size (2x2 "pocket", 3x3
    "twophase", N >= 4 "nxn"); a named engine runs as asked (and refuses a size it does not
    solve)."""
    if requested != AUTO:
        accepts = SIZED_ENGINES.get(requested)
        if accepts is not None and not accepts(n):
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
    """Accept a facelet cube, a cubie cube or a facelet string."""
    if isinstance(state, Cube):
        return state
    if isinstance(state, CubieCube):
        return state.to_cube()
    return Cube.from_facelets(state)


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
    :class:`~solver.errors.InvalidCubeError` for an impossible cube before any search."""
    cube = check(to_cube(state))
    face_set = (
        None if faces is None else frozenset(f if isinstance(f, Face) else Face[f] for f in faces)
    )
    options = SolveOptions(max_length, budget_s, cost_model, face_set, extra)
    return get_engine(engine_for_size(cube.n, engine))(cube, options)
