"""The layer-by-layer (beginner) engine: seed 004's seven stages, annotated.

Stages, solved on the first-layer face turned to the bottom (option ``first_layer``: a face
letter, a colour of the scheme, or "neutral"; default the white face of the scheme, which is
U for both of the project's schemes):

1. ``cross``: the four first-layer edges, optimal, from their exact distance table.
2. ``first-layer corners``: one corner at a time, each inserted by IDA* that keeps the cross
   and the corners already placed (the corner needing the fewest moves goes next).
3. ``middle-layer edges``: likewise, keeping the whole first layer and the edges placed.
4. ``last-layer cross``: edge orientation by a recognised case (dot, L, line).
5. ``orient last-layer corners``: the seven corner cases (Sune, Anti-Sune, H, Pi, ...).
6. ``permute corners``: adjacent or diagonal swap, up to a turn of the last layer.
7. ``permute edges``: U, H or Z perm with the final AUF.

For the last four stages every combination of the recognised options (AUFs and alternative
algorithms) is weighed and the shortest total taken. Search stages report the pieces placed and
the moves of each; case stages report the case. A state within two moves of solved is answered
by an exhaustive search first (stage ``direct``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, format_moves
from solver.engines.common.cases import AUF_MOVES, Family, Option, recogniser
from solver.engines.common.f2l import CROSS_EDGES, SLOTS, Slot, cross_solutions
from solver.engines.common.settings import parse_settings
from solver.engines.common.stage_search import (
    CORNER,
    EDGE,
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

__all__ = ["LAST_LAYER_STAGES", "LblPlan", "LblSettings", "plan_lbl", "prepare", "solve_lbl"]

logger = logging.getLogger(__name__)

#: the case families of the last four stages, in order
LAST_LAYER_STAGES: tuple[Family, ...] = (Family.EO, Family.OCLL, Family.CP, Family.EP)
MAX_PIECE_DEPTH = 14


_ALL_CORNERS: tuple[Piece, ...] = tuple(s.corner for s in SLOTS)
_FIRST_LAYER: tuple[Piece, ...] = CROSS_EDGES + _ALL_CORNERS


def _corner_tables(slot: Slot, placed: Sequence[Slot]) -> list[tuple[Piece, ...]]:
    """Exact tables for a first-layer corner with three of the cross edges."""
    return [(slot.corner, *slot.near, slot.far[0]), (slot.corner, *slot.far, slot.near[0])]


def _edge_tables(slot: Slot, placed: Sequence[Slot]) -> list[tuple[Piece, ...]]:
    """Exact tables for a middle-layer edge: with its corner and two cross edges (both ways),
    with three of the first-layer corners, and with each edge already placed and both corners;
    and the four first-layer corners."""
    tabs = [*slot.tables, _ALL_CORNERS]
    tabs += [(slot.edge, *c) for c in combinations(_ALL_CORNERS, 3)]
    tabs += [(slot.edge, p.edge, slot.corner, p.corner) for p in placed]
    return tabs


def _corner_of(slot: Slot) -> Piece:
    return slot.corner


def _edge_of(slot: Slot) -> Piece:
    return slot.edge


@dataclass
class LblPlan:
    """An LBL solution in its frame: the placed pieces and the last-layer options."""

    frame: Frame
    cross: list[int]
    corners: list[tuple[Slot, list[int]]]
    edges: list[tuple[Slot, list[int]]]
    last_layer: list[Option]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return (
            len(self.cross)
            + sum(len(m) for _, m in self.corners)
            + sum(len(m) for _, m in self.edges)
            + sum(o.htm for o in self.last_layer)
        )

    @property
    def merged_length(self) -> int:
        """HTM of the solution once turns are merged across stage borders."""
        parts = [self.cross, *(m for _, m in self.corners), *(m for _, m in self.edges)]
        return merged_length([*parts, *(o.moves for o in self.last_layer)])


PieceOf = Callable[[Slot], Piece]
TablesOf = Callable[[Slot, Sequence[Slot]], list[tuple[Piece, ...]]]


def _place_one_by_one(
    state: PieceState,
    kept: tuple[Piece, ...],
    piece_of: PieceOf,
    tables_of: TablesOf,
    tables: TableCache,
) -> tuple[PieceState, list[tuple[Slot, list[int]]], int]:
    """Place ``piece_of(slot)`` for every slot, the cheapest next, keeping ``kept`` and the
    pieces placed before. Returns the state, the placements and the search nodes."""
    slots = SLOTS
    placed: list[Slot] = []
    result: list[tuple[Slot, list[int]]] = []
    nodes = 0
    while len(placed) < len(slots):
        keep = kept + tuple(piece_of(s) for s in placed)
        base_tables: list[tuple[Piece, ...]] = []
        for s in placed:
            base_tables += tables_of(s, [])
        searches = []
        for slot in slots:
            if slot in placed:
                continue
            pieces = (*keep, piece_of(slot))
            tabs = tuple(dict.fromkeys([CROSS_EDGES, *tables_of(slot, placed), *base_tables]))
            searches.append((slot, StageSearch(pieces, tabs, tables)))
        ((_, slot, moves),) = race(state, searches, 1, MAX_PIECE_DEPTH)
        nodes += sum(s.nodes for _, s in searches)
        state = state.apply(moves)
        placed.append(slot)
        result.append((slot, moves))
    return state, result, nodes


def _last_layer(state: PieceState) -> list[Option]:
    """The shortest combination of options for the four last-layer stages."""
    best: tuple[int, list[Option]] | None = None

    def walk(st: PieceState, stage: int, chosen: list[Option], used: int) -> None:
        nonlocal best
        if best is not None and used >= best[0]:
            return
        if stage == len(LAST_LAYER_STAGES):
            best = (used, list(chosen))
            return
        options = recogniser(LAST_LAYER_STAGES[stage]).options(st.to_cubie())
        if not options:  # pragma: no cover - each stage leaves a case the next one knows
            raise AssertionError(f"{LAST_LAYER_STAGES[stage]}: last layer not recognised")
        for option in options:
            chosen.append(option)
            walk(st.apply(option.moves), stage + 1, chosen, used + option.htm)
            chosen.pop()

    walk(state, 0, [], 0)
    assert best is not None
    return best[1]


def prepare(tables: TableCache | None = None) -> None:
    """Build every pruning table the engine uses (about 45 tables of 24**4 entries, a few
    seconds); the first solve does it, so that later solves take no table-building time."""
    tables = tables or default_tables()
    needed = [CROSS_EDGES]
    for slot in SLOTS:
        needed += _corner_tables(slot, [])
        needed += _edge_tables(slot, [s for s in SLOTS if s is not slot])
    for pieces in needed:
        tables.get(pieces)


def plan_lbl(
    cube: Cube, bottoms: Sequence[Face] = (Face.U,), *, tables: TableCache | None = None
) -> LblPlan:
    """The shortest LBL plan over the given first-layer faces (the engine's core;
    ``bench/solve3x3.py`` may call it directly)."""
    tables = tables or default_tables()
    prepare(tables)
    best: LblPlan | None = None
    for bottom in bottoms:
        frame = Frame.with_bottom(bottom)
        state = frame.state(cube)
        (cross,) = cross_solutions(state, tables, 1)
        state = state.apply(cross)

        state, corners, corner_nodes = _place_one_by_one(
            state, CROSS_EDGES, _corner_of, _corner_tables, tables
        )
        state, edges, edge_nodes = _place_one_by_one(
            state, _FIRST_LAYER, _edge_of, _edge_tables, tables
        )
        last_layer = _last_layer(state)
        plan = LblPlan(frame, cross, corners, edges, last_layer)
        plan.stats.update({"nodes": corner_nodes + edge_nodes})
        if best is None or plan.merged_length < best.merged_length:
            best = plan
    assert best is not None
    return best


@dataclass(frozen=True, slots=True)
class LblSettings:
    """The LBL engine's options (``solve(..., name=value)``), checked on construction:
    ``first_layer`` (face letter, colour of the scheme or "neutral"; default "white"),
    ``scheme`` (colour scheme object or name)."""

    first_layer: str | Face = "white"
    scheme: ColourScheme = DEFAULT_SCHEME

    def __post_init__(self) -> None:
        face_setting(self.first_layer, self.scheme, "first_layer")

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> LblSettings:
        """The settings in ``SolveOptions.extra``; unknown names are refused."""
        return parse_settings(cls, "lbl", {**extra, "scheme": scheme_setting(extra)})

    def bottoms(self, cube: Cube) -> list[Face]:
        """The faces to try the first layer on, on this cube."""
        return face_setting(self.first_layer, self.scheme, "first_layer", cube)


def solve_lbl(cube: Cube, options: SolveOptions) -> Solution:
    """Engine entry point (``solver.api.ENGINES["lbl"]``); ``options.extra`` holds the
    :class:`LblSettings`."""
    started = time.perf_counter()
    settings = LblSettings.from_extra(options.extra)
    assembler = Assembler()
    stats: dict[str, Any] = {}
    if not add_direct(assembler, cube):
        plan = plan_lbl(cube, settings.bottoms(cube))
        _assemble(plan, cube, settings.scheme, assembler)
        stats.update(plan.stats)
        stats["first_layer"] = plan.frame.face_name(Face.D)
    stats["time_s"] = round(time.perf_counter() - started, 6)
    return finish("lbl", assembler, stats, options.max_length, options.faces, options.cost_model)


def _assemble(plan: LblPlan, cube: Cube, scheme: ColourScheme, assembler: Assembler) -> None:
    frame = plan.frame
    bottom = frame.physical[Face.D]
    centres = cube.centre_colours()
    assert centres is not None

    def names(pieces: Sequence[Piece]) -> dict[str, Any]:
        slots = [frame.piece_name(p) for p in pieces]
        return {"pieces": slots, "colours": [piece_colours(n, cube, scheme) for n in slots]}

    colour = scheme.colours[centres[bottom]]
    assembler.add(
        "cross",
        frame.to_physical(plan.cross),
        {"face": bottom.name, "colour": colour, **names(CROSS_EDGES)},
    )
    stages: tuple[tuple[str, list[tuple[Slot, list[int]]], PieceOf], ...] = (
        ("first-layer corners", plan.corners, _corner_of),
        ("middle-layer edges", plan.edges, _edge_of),
    )
    for stage, placements, pick in stages:
        moves: list[Move] = []
        steps = []
        for slot, path in placements:
            physical = frame.to_physical(path)
            moves.extend(physical)
            steps.append({"piece": frame.piece_name(pick(slot)), "moves": format_moves(physical)})
        assembler.add(stage, moves, {**names([pick(s) for s, _ in placements]), "steps": steps})
    last_edges = [Piece(EDGE, i) for i in range(4)]
    last_corners = [Piece(CORNER, i) for i in range(4)]
    for family, option in zip(LAST_LAYER_STAGES, plan.last_layer, strict=True):
        # the last-layer pieces the step orients or places
        step_pieces = last_edges if family in (Family.EO, Family.EP) else last_corners
        detail: dict[str, Any] = {"case": "skip", "group": ""}
        if option.case is not None:
            detail = {
                "case": option.case.name,
                "group": option.case.group,
                "algorithm": option.algorithm,
            }
        auf = list(AUF_MOVES[option.pre]) + list(AUF_MOVES[option.post])
        detail["auf"] = format_moves(frame.to_physical(auf))
        detail |= names(step_pieces)
        assembler.add(str(family), frame.to_physical(option.moves), detail)
