"""The first two layers' pieces shared by the CFOP and layer-by-layer engines: the cross edges,
the four F2L slots, and optimal cross solutions from the exact cross table.

A shared module of :mod:`solver.engines` (engines never import one another; what two of them
need lives under :mod:`solver.engines.common`).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.engines.common.stage_search import CORNER, EDGE, MOVES, Piece, PieceState, TableCache

__all__ = [
    "CROSS_EDGES",
    "SLOTS",
    "Slot",
    "cross_solutions",
    "cross_table_index",
    "pair_of_pairs",
]

#: the cross edges (frame pieces): DR DF DL DB
CROSS_EDGES: tuple[Piece, ...] = tuple(Piece(EDGE, i) for i in (4, 5, 6, 7))
_DR, _DF, _DL, _DB = CROSS_EDGES


@dataclass(frozen=True, slots=True)
class Slot:
    """An F2L slot: its corner and edge, and the cross edges next to it and away from it."""

    name: str
    corner: Piece
    edge: Piece
    near: tuple[Piece, Piece]
    far: tuple[Piece, Piece]

    @property
    def pieces(self) -> tuple[Piece, Piece]:
        return (self.corner, self.edge)

    @property
    def tables(self) -> tuple[tuple[Piece, ...], ...]:
        return ((self.corner, self.edge, *self.near), (self.corner, self.edge, *self.far))


SLOTS: tuple[Slot, ...] = (
    Slot("FR", Piece(CORNER, 4), Piece(EDGE, 8), (_DF, _DR), (_DL, _DB)),
    Slot("FL", Piece(CORNER, 5), Piece(EDGE, 9), (_DF, _DL), (_DR, _DB)),
    Slot("BL", Piece(CORNER, 6), Piece(EDGE, 10), (_DB, _DL), (_DF, _DR)),
    Slot("BR", Piece(CORNER, 7), Piece(EDGE, 11), (_DB, _DR), (_DF, _DL)),
)


def pair_of_pairs(a: Slot, b: Slot) -> tuple[Piece, ...]:
    first, second = sorted((a, b), key=lambda s: s.name)
    return (*first.pieces, *second.pieces)


def cross_table_index(state: PieceState) -> int:
    e = state.edges
    return e[4] + 24 * e[5] + 576 * e[6] + 13824 * e[7]


def cross_solutions(state: PieceState, tables: TableCache, limit: int) -> list[list[int]]:
    """Up to ``limit`` distinct optimal cross solutions (move indices), by descending the exact
    cross table."""
    table = tables.get(CROSS_EDGES)
    found: list[list[int]] = []
    path: list[int] = []

    def descend(st: PieceState, dist: int, last: int) -> None:
        if len(found) >= limit:
            return
        if dist == 0:
            found.append(list(path))
            return
        for m in range(len(MOVES)):
            face = m // 3
            if last >= 0 and (face == last or (face + 3 == last)):
                continue  # same face, or D after U etc. (kept in one order)
            child = st.apply([m])
            if table[cross_table_index(child)] == dist - 1:
                path.append(m)
                descend(child, dist - 1, face)
                path.pop()

    descend(state, table[cross_table_index(state)], -1)
    return found
