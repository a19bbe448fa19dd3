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

__all__ = ["ENGINES", "Engine", "SolveOptions", "engine_names", "get_engine", "solve", "to_cube"]


Engine = Callable[[Cube, SolveOptions], Solution]

#: engine name -> "module:function", imported lazily.
ENGINES: dict[str, str] = {
    "twophase": "solver.engines.twophase.engine:solve_twophase",
    "lbl": "solver.engines.lbl:solve_lbl",
    "cfop": "solver.engines.cfop:solve_cfop",
    "trace": "solver.engines.trace:solve_trace",
}


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
    engine: str = "twophase",
    *,
    max_length: int | None = None,
    budget_s: float = 0.0,
    cost_model: CostModel | None = None,
    faces: Collection[Face | str] | None = None,
    **extra: Any,
) -> Solution:
    """Solve ``state`` with ``engine``; raises :class:`~solver.errors.InvalidCubeError` for an
    impossible cube before any search."""
    cube = check(to_cube(state))
    face_set = (
        None if faces is None else frozenset(f if isinstance(f, Face) else Face[f] for f in faces)
    )
    options = SolveOptions(max_length, budget_s, cost_model, face_set, extra)
    return get_engine(engine)(cube, options)
