"""The CFOP engine: cross, four F2L pairs, OLL, PLL (seed 004), annotated by stage.

* **Cross**: optimal (at most 8 moves) from the exact distance table of the four cross edges,
  on the bottom colour by default (option ``cross``: a face letter, a colour of the scheme, or
  ``"neutral"`` for the best of the six crosses). With ``cross_candidates`` = k > 1
  (default 1), k different optimal crosses are tried and the shortest whole solution kept.
* **F2L**: each pair is inserted by IDA* over the pair and every piece already solved (cross
  and earlier pairs, which must come back), pruned by exact tables of the pair with two cross
  edges, the cross alone, and the solved pairs with their cross edges. Unsolved slots are free
  to use. Pair orders are explored as a beam: at each step the ``f2l_beam`` pairs
  (default 2) that go in with the fewest moves are each followed, and the shortest total, last
  layer included, is kept (1: always the shortest next pair; 4: every order). Slots are searched
  depth by depth together, so a pair needing a long insertion is never searched to the end
  when shorter ones exist.
* **OLL** and **PLL**: the last layer is recognised (any AUF) among the 57 + 21 cases of
  :mod:`solver.engines.common.cases`, each solved by a standard algorithm; of the ways to do OLL
  (AUF, alternative algorithms) the one giving the shortest OLL + PLL is taken.

Stages: ``cross``, ``F2L 1`` .. ``F2L 4`` (detail: slot and pieces), ``OLL`` (case number and
name), ``PLL`` (case name); their moves concatenate to the solution (see
:class:`solver.engines.common.stages.Assembler`). A state within two moves of solved is answered by
an exhaustive search first (stage ``direct``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, format_moves
from solver.engines.common.cases import AUF_MOVES, Family, Option, recogniser
from solver.engines.common.f2l import CROSS_EDGES, SLOTS, Slot, cross_solutions, pair_of_pairs
from solver.engines.common.settings import check_int, parse_settings
from solver.engines.common.stage_search import (
    Piece,
    PieceState,
    StageSearch,
    TableCache,
    default_tables,
    race,
)
from solver.engines.common.stages import (
    Assembler,
    Frame,
    add_direct,
    face_setting,
    finish,
    merged_length,
    piece_colours,
    scheme_setting,
)
from solver.options import SolveOptions
from solver.solution import Solution

__all__ = [
    "CfopPlan",
    "CfopSettings",
    "plan_cfop",
    "prepare",
    "solve_cfop",
]

logger = logging.getLogger(__name__)

#: most optimal crosses tried (``cross_candidates``)
MAX_CROSS_CANDIDATES = 64
#: most pairs followed at each F2L step (``f2l_beam``): 4 tries every order
MAX_F2L_BEAM = 4


@dataclass
class CfopPlan:
    """A CFOP solution in its frame, before naming: cross, pairs, OLL, PLL (frame moves)."""

    frame: Frame
    cross: list[int]
    pairs: list[tuple[Slot, list[int]]]
    oll: Option
    pll: Option
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return (
            len(self.cross)
            + sum(len(moves) for _, moves in self.pairs)
            + self.oll.htm
            + self.pll.htm
        )

    @property
    def merged_length(self) -> int:
        """HTM of the solution once turns are merged across stage borders."""
        parts: list[Sequence[Move | int]] = [self.cross, *(moves for _, moves in self.pairs)]
        return merged_length([*parts, self.oll.moves, self.pll.moves])


class _F2L:
    """Pair searches of one solve (search objects cached per solved set and slot)."""

    def __init__(self, tables: TableCache) -> None:
        self.tables = tables
        self._searches: dict[tuple[frozenset[str], str], StageSearch] = {}
        self.searches = 0

    def search(self, solved: Sequence[Slot], slot: Slot) -> StageSearch:
        key = (frozenset(s.name for s in solved), slot.name)
        search = self._searches.get(key)
        if search is None:
            pieces = CROSS_EDGES + tuple(p for s in solved for p in s.pieces) + slot.pieces
            tabs = [*slot.tables, CROSS_EDGES]
            for s in solved:
                tabs += [*s.tables, pair_of_pairs(slot, s)]
            if len(solved) == 3:
                tabs += [tuple(s.corner for s in SLOTS), tuple(s.edge for s in SLOTS)]
            search = StageSearch(pieces, tuple(tabs), self.tables)
            self._searches[key] = search
        return search

    def next_pairs(
        self, state: PieceState, solved: Sequence[Slot], remaining: Sequence[Slot], count: int
    ) -> list[tuple[int, Slot, list[int]]]:
        """The ``count`` slots whose pairs go in with the fewest moves (see :func:`race`)."""
        found = race(
            state, [(slot, self.search(solved, slot)) for slot in remaining], count, MAX_PAIR_DEPTH
        )
        self.searches += len(found)
        return found

    @property
    def nodes(self) -> int:
        return sum(s.nodes for s in self._searches.values())


MAX_PAIR_DEPTH = 14


def _last_layer(state: PieceState) -> tuple[Option, Option, int]:
    """The OLL and PLL options giving the shortest last layer from ``state`` (F2L done)."""
    oll_rec = recogniser(Family.OLL)
    pll_rec = recogniser(Family.PLL)
    best: tuple[Option, Option, int] | None = None
    for oll in oll_rec.options(state.to_cubie()):
        if best is not None and oll.htm >= best[2]:
            break
        after = state.apply(oll.moves)
        plls = pll_rec.options(after.to_cubie())
        if not plls:  # pragma: no cover - OLL always leaves a PLL case
            continue
        total = oll.htm + plls[0].htm
        if best is None or total < best[2]:
            best = (oll, plls[0], total)
    if best is None:
        raise AssertionError("last layer not recognised: F2L is not solved")
    return best


def _f2l_orders(
    state: PieceState,
    f2l: _F2L,
    solved: list[Slot],
    used: int,
    best: list[Any],
    beam: int,
    prefix: list[tuple[Slot, list[int]]],
) -> None:
    """Depth-first over pair orders; ``best[0]`` holds (total, pairs, oll, pll)."""
    remaining = [s for s in SLOTS if s not in solved]
    if not remaining:
        oll, pll, ll = _last_layer(state)
        total = used + ll
        if best[0] is None or total < best[0][0]:
            best[0] = (total, list(prefix), oll, pll)
        return
    options = f2l.next_pairs(state, solved, remaining, beam)
    for length, slot, moves in options:
        if best[0] is not None and used + length >= best[0][0]:
            continue
        prefix.append((slot, moves))
        solved.append(slot)
        _f2l_orders(state.apply(moves), f2l, solved, used + length, best, beam, prefix)
        solved.pop()
        prefix.pop()


def prepare(tables: TableCache | None = None) -> None:
    """Build every pruning table the engine uses (17 tables of 24**4 entries, about a second);
    the first solve does it, so that later solves take no table-building time."""
    tables = tables or default_tables()
    needed = [CROSS_EDGES, tuple(s.corner for s in SLOTS), tuple(s.edge for s in SLOTS)]
    for a in SLOTS:
        needed += a.tables
        needed += [pair_of_pairs(a, b) for b in SLOTS if a.name < b.name]
    for pieces in needed:
        tables.get(pieces)


def plan_cfop(
    cube: Cube,
    bottoms: Sequence[Face] = (Face.D,),
    *,
    cross_candidates: int = 1,
    beam: int = 2,
    tables: TableCache | None = None,
) -> CfopPlan:
    """The shortest CFOP plan over the given bottom faces and cross candidates (the engine's
    core; ``bench/solve3x3.py`` may call it directly)."""
    tables = tables or default_tables()
    prepare(tables)
    best_plan: CfopPlan | None = None
    f2l_searches = 0
    nodes = 0
    for bottom in bottoms:
        frame = Frame.with_bottom(bottom)
        start = frame.state(cube)
        f2l = _F2L(tables)
        for cross in cross_solutions(start, tables, max(1, cross_candidates)):
            after_cross = start.apply(cross)
            best: list[Any] = [None]
            _f2l_orders(after_cross, f2l, [], len(cross), best, beam, [])
            _, pairs, oll, pll = best[0]
            plan = CfopPlan(frame, cross, pairs, oll, pll)
            if best_plan is None or plan.merged_length < best_plan.merged_length:
                best_plan = plan
        f2l_searches += f2l.searches
        nodes += f2l.nodes
    assert best_plan is not None
    best_plan.stats.update({"f2l_searches": f2l_searches, "nodes": nodes})
    return best_plan


@dataclass(frozen=True, slots=True)
class CfopSettings:
    """The CFOP engine's options (``solve(..., name=value)``), checked on construction:
    ``cross`` (face letter, colour of the scheme or "neutral"; default "D"),
    ``cross_candidates`` (1..64, default 1), ``f2l_beam`` (1..4, default 2), ``scheme`` (colour
    scheme object or name, for the colours named in the stage details)."""

    cross: str | Face = "D"
    cross_candidates: int = 1
    f2l_beam: int = 2
    scheme: ColourScheme = DEFAULT_SCHEME

    def __post_init__(self) -> None:
        face_setting(self.cross, self.scheme, "cross")
        check_int("cross_candidates", self.cross_candidates, 1, MAX_CROSS_CANDIDATES)
        check_int("f2l_beam", self.f2l_beam, 1, MAX_F2L_BEAM)

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> CfopSettings:
        """The settings in ``SolveOptions.extra``; unknown names are refused."""
        return parse_settings(cls, "cfop", {**extra, "scheme": scheme_setting(extra)})

    def bottoms(self, cube: Cube) -> list[Face]:
        """The faces to try the cross on, on this cube."""
        return face_setting(self.cross, self.scheme, "cross", cube)


def solve_cfop(cube: Cube, options: SolveOptions) -> Solution:
    """Engine entry point (``solver.api.ENGINES["cfop"]``); ``options.extra`` holds the
    :class:`CfopSettings`."""
    started = time.perf_counter()
    settings = CfopSettings.from_extra(options.extra)
    assembler = Assembler()
    stats: dict[str, Any] = {}
    if not add_direct(assembler, cube):
        plan = plan_cfop(
            cube,
            settings.bottoms(cube),
            cross_candidates=settings.cross_candidates,
            beam=settings.f2l_beam,
        )
        _assemble(plan, cube, settings.scheme, assembler)
        stats.update(plan.stats)
        stats["bottom"] = plan.frame.face_name(Face.D)
    stats["time_s"] = round(time.perf_counter() - started, 6)
    return finish("cfop", assembler, stats, options.max_length, options.faces, options.cost_model)


def _names(
    frame: Frame, cube: Cube, scheme: ColourScheme, pieces: Sequence[Piece]
) -> dict[str, Any]:
    names = [frame.piece_name(p) for p in pieces]
    return {"pieces": names, "colours": [piece_colours(n, cube, scheme) for n in names]}


def _assemble(plan: CfopPlan, cube: Cube, scheme: ColourScheme, assembler: Assembler) -> None:
    frame = plan.frame
    bottom = frame.physical[Face.D]
    centres = cube.centre_colours()
    assert centres is not None
    assembler.add(
        "cross",
        frame.to_physical(plan.cross),
        {
            "face": bottom.name,
            "colour": scheme.colours[centres[bottom]],
            **_names(frame, cube, scheme, CROSS_EDGES),
        },
    )
    for k, (slot, moves) in enumerate(plan.pairs, start=1):
        pair = {"slot": frame.piece_name(slot.edge), **_names(frame, cube, scheme, slot.pieces)}
        assembler.add(f"F2L {k}", frame.to_physical(moves), pair)
    for name, option in (("OLL", plan.oll), ("PLL", plan.pll)):
        detail: dict[str, Any] = {"case": "skip", "name": "skip"}
        if option.case is not None:
            case = option.case
            detail |= {
                "case": case.number if case.number is not None else case.name,
                "name": case.name,
                "group": case.group,
                "algorithm": option.algorithm,
            }
        detail["auf"] = format_moves(frame.to_physical(_auf(option)))
        assembler.add(name, frame.to_physical(option.moves), detail)


def _auf(option: Option) -> list[Move]:
    return list(AUF_MOVES[option.pre]) + list(AUF_MOVES[option.post])
