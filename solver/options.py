"""What a caller asks of any engine: :class:`SolveOptions`, handed to every engine entry point.

Engine-specific settings travel in ``extra`` (the ``solve(..., name=value)`` keywords no
engine shares); each engine parses them once, at its entry point, into its own frozen settings
object, which rejects unknown names and values out of range with an
:class:`~solver.errors.OptionError` naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from solver.cost import CostModel
from solver.cube.geometry import Face

__all__ = ["SolveOptions"]


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """What every engine may be asked for. Engines ignore what does not apply to them.

    ``max_length``: longest acceptable solution (HTM); ``budget_s``: search time (0 = return the
    first solution found within ``max_length``); ``cost_model``: when given, prefer the solution
    this robot executes fastest; ``faces``: the faces the solution may turn (all six if None);
    ``extra``: engine-specific settings (documented by each engine).
    """

    max_length: int | None = None
    budget_s: float = 0.0
    cost_model: CostModel | None = None
    faces: frozenset[Face] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
