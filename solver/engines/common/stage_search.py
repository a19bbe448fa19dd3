"""Piece-level search for the method engines (LBL, CFOP, cycle tracing).

A *piece state* says where one piece's reference sticker is: for an edge, ``2*slot + k``
(its reference colour on side ``k`` of edge slot ``slot``, sides in
:data:`~solver.cube.cubie.EDGE_FACES` order); for a corner, ``3*slot + k`` (sticker ``k`` of corner
slot ``slot`` in :data:`~solver.cube.cubie.CORNER_FACES` order). Every piece is home when its state
is ``2*piece`` or
``3*piece``. Both kinds have 24 states, so any ``k`` pieces index a table of ``24**k`` entries.

Each outer move maps piece states through a 24-entry table derived once from the facelet move
permutations (:func:`solver.cube.facelets.move_permutation`), so the search never touches stickers.

Pruning tables give the exact number of moves that bring a small set of pieces (at most 4) home,
ignoring the others; they are built by breadth-first search with numpy on first use, cached in
a :class:`TableCache` and never at import. A stage search is IDA* over the pieces the stage must
solve or keep solved, pruned by the largest table distance among the tables given.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import getitem
from typing import TypeVar

import numpy as np

from solver.cube.cubie import CubieCube, cubie_layout
from solver.cube.facelets import Cube, move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Move, MoveKind

__all__ = [
    "CORNER",
    "EDGE",
    "MOVES",
    "N_MOVES",
    "N_STATES",
    "Piece",
    "PieceState",
    "SearchLimitError",
    "SearchMemo",
    "StageSearch",
    "TableCache",
    "default_tables",
    "move_index",
    "piece_name",
    "race",
    "to_outer",
]

logger = logging.getLogger(__name__)

EDGE = 0
CORNER = 1
#: states of one piece (24 for both kinds: 12 slots × 2 flips, 8 slots × 3 twists)
N_STATES = 24
#: the 18 outer moves, index ``3*face + t`` for turns (1, 2, -1)
MOVES: tuple[Move, ...] = tuple(Move.outer(f, t) for f in Face for t in (1, 2, -1))
N_MOVES = len(MOVES)

_EDGE_NAMES = ("UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR")
_CORNER_NAMES = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")


@dataclass(frozen=True, slots=True, order=True)
class Piece:
    """An edge (``kind == EDGE``, ``index`` 0..11) or a corner (``CORNER``, 0..7), numbered as
    in :mod:`solver.cube.cubie`."""

    kind: int
    index: int

    @property
    def home(self) -> int:
        """The solved piece state."""
        return self.index * (2 if self.kind == EDGE else 3)

    def __str__(self) -> str:
        return piece_name(self)


def piece_name(piece: Piece) -> str:
    return (_EDGE_NAMES if piece.kind == EDGE else _CORNER_NAMES)[piece.index]


def move_index(move: Move) -> int:
    """Index of an outer move in :data:`MOVES`."""
    if move.kind is not MoveKind.OUTER:
        raise ValueError(f"{move} is not an outer face turn")
    return 3 * int(move.face) + {1: 0, 2: 1, -2: 1, -1: 2}[move.turns]


@cache
def _move_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """``(edge, corner)`` where ``edge[m][s]`` is the state after move ``m`` of an edge in ``s``."""
    layout = cubie_layout(3)
    edge_flat = [layout.edges[i][0][k] for i in range(12) for k in range(2)]
    corner_flat = [layout.corners[i][k] for i in range(8) for k in range(3)]
    edge_code = {flat: code for code, flat in enumerate(edge_flat)}
    corner_code = {flat: code for code, flat in enumerate(corner_flat)}
    edge_tables = []
    corner_tables = []
    for move in MOVES:
        perm = move_permutation(move, 3)  # new = old[perm]
        dest = np.empty_like(perm)
        dest[perm] = np.arange(perm.size)
        edge_tables.append(tuple(edge_code[int(dest[f])] for f in edge_flat))
        corner_tables.append(tuple(corner_code[int(dest[f])] for f in corner_flat))
    return tuple(edge_tables), tuple(corner_tables)


def piece_move_table(kind: int) -> tuple[tuple[int, ...], ...]:
    """``table[m][s]``: the state after move ``m`` of a piece of ``kind`` in state ``s``."""
    return _move_tables()[0 if kind == EDGE else 1]


@dataclass(frozen=True, slots=True)
class PieceState:
    """Where every piece of a 3x3 is: ``edges[p]`` and ``corners[p]`` are piece states."""

    edges: tuple[int, ...]
    corners: tuple[int, ...]

    @classmethod
    def solved(cls) -> PieceState:
        return cls(tuple(2 * p for p in range(12)), tuple(3 * p for p in range(8)))

    @classmethod
    def from_cubie(cls, cc: CubieCube) -> PieceState:
        edges = [0] * 12
        corners = [0] * 8
        for slot in range(12):
            edges[cc.ep[slot]] = 2 * slot + cc.eo[slot]
        for slot in range(8):
            corners[cc.cp[slot]] = 3 * slot + cc.co[slot]
        return cls(tuple(edges), tuple(corners))

    @classmethod
    def from_cube(cls, cube: Cube) -> PieceState:
        return cls.from_cubie(CubieCube.from_cube(cube))

    def to_cubie(self) -> CubieCube:
        cp = [0] * 8
        co = [0] * 8
        ep = [0] * 12
        eo = [0] * 12
        for piece, state in enumerate(self.edges):
            ep[state // 2] = piece
            eo[state // 2] = state % 2
        for piece, state in enumerate(self.corners):
            cp[state // 3] = piece
            co[state // 3] = state % 3
        return CubieCube(tuple(cp), tuple(co), tuple(ep), tuple(eo))

    def apply(self, moves: Iterable[Move | int]) -> PieceState:
        edge_t, corner_t = _move_tables()
        edges = list(self.edges)
        corners = list(self.corners)
        for move in moves:
            m = move if isinstance(move, int) else move_index(move)
            et = edge_t[m]
            ct = corner_t[m]
            edges = [et[s] for s in edges]
            corners = [ct[s] for s in corners]
        return PieceState(tuple(edges), tuple(corners))

    def get(self, piece: Piece) -> int:
        return (self.edges if piece.kind == EDGE else self.corners)[piece.index]

    def is_home(self, piece: Piece) -> bool:
        return self.get(piece) == piece.home

    def all_home(self, pieces: Iterable[Piece]) -> bool:
        return all(self.get(p) == p.home for p in pieces)

    def is_solved(self) -> bool:
        return self == PieceState.solved()


# --- pruning tables -------------------------------------------------------------------------


class TableCache:
    """Exact distance tables for small sets of pieces, built on first request.

    ``get(pieces)`` returns ``bytes`` of length ``24**len(pieces)``: entry
    ``sum(state_j * 24**j)`` is the fewest outer moves (HTM) that bring all ``pieces`` home from
    those states (255 for combinations that cannot occur, e.g. two pieces on one slot).
    Thread-safe; a table is built once per cache.
    """

    MAX_PIECES = 4

    def __init__(self) -> None:
        self._tables: dict[tuple[Piece, ...], bytes] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def get(self, pieces: Sequence[Piece]) -> bytes:
        key = tuple(pieces)
        table = self._tables.get(key)
        if table is None:
            with self._lock:
                table = self._tables.get(key)
                if table is None:
                    table = _build_table(key)
                    self._tables[key] = table
        return table


def _build_table(pieces: tuple[Piece, ...]) -> bytes:
    k = len(pieces)
    if not 1 <= k <= TableCache.MAX_PIECES:
        raise ValueError(f"a pruning table covers 1..{TableCache.MAX_PIECES} pieces, not {k}")
    started = time.perf_counter()
    weights = [N_STATES**j for j in range(k)]
    # contrib[j][m, s]: what piece j in state s adds to the index after move m
    contrib = [
        np.array(piece_move_table(p.kind), dtype=np.int32) * w
        for p, w in zip(pieces, weights, strict=True)
    ]
    dist = np.full(N_STATES**k, 255, dtype=np.uint8)
    goal = sum(p.home * w for p, w in zip(pieces, weights, strict=True))
    dist[goal] = 0
    frontier = np.array([goal], dtype=np.int32)
    depth = 0
    while frontier.size:
        digits = [(frontier // w) % N_STATES for w in weights]
        depth += 1
        for m in range(N_MOVES):
            index = contrib[0][m][digits[0]]
            for j in range(1, k):
                index = index + contrib[j][m][digits[j]]
            index = index[dist[index] == 255]
            dist[index] = depth
        frontier = np.flatnonzero(dist == depth).astype(np.int32)
    logger.debug(
        "pruning table %s: %d states, depth %d, %.2f s",
        "+".join(map(str, pieces)),
        int((dist != 255).sum()),
        depth - 1,
        time.perf_counter() - started,
    )
    return dist.tobytes()


_DEFAULT_TABLES: TableCache | None = None
_DEFAULT_LOCK = threading.Lock()


def default_tables() -> TableCache:
    """The process-wide table cache (created empty on first call)."""
    global _DEFAULT_TABLES
    with _DEFAULT_LOCK:
        if _DEFAULT_TABLES is None:
            _DEFAULT_TABLES = TableCache()
        return _DEFAULT_TABLES


# --- IDA* -----------------------------------------------------------------------------------


class SearchLimitError(RuntimeError):
    """A stage search exceeded its depth or node limit (a bug or an impossible goal)."""


def _successors() -> tuple[tuple[int, ...], ...]:
    """Moves allowed after a move on face ``f`` (index 6 = no previous move): never the same
    face twice, and of two opposite faces only in the order U before D, R before L, F before B."""
    result = []
    for last in range(7):
        allowed = []
        for m in range(N_MOVES):
            face = m // 3
            if last < 6 and (face == last or (face == OPPOSITE[Face(last)] and face < last)):
                continue
            allowed.append(m)
        result.append(tuple(allowed))
    return tuple(result)


_SUCCESSORS = _successors()


@dataclass
class StageSearch:
    """IDA* that brings ``pieces`` home (all of them), pruned by ``tables``.

    ``tables`` lists subsets of ``pieces`` (at most 4 each) whose exact distance tables are
    lower bounds. ``node_limit`` bounds the work of one :meth:`solve` call.
    """

    pieces: tuple[Piece, ...]
    tables: tuple[tuple[Piece, ...], ...]
    cache: TableCache = field(default_factory=default_tables)
    node_limit: int = 5_000_000
    nodes: int = 0

    def __post_init__(self) -> None:
        index = {p: i for i, p in enumerate(self.pieces)}
        edge_t, corner_t = _move_tables()
        self._goal = tuple(p.home for p in self.pieces)
        # Internally a state carries one more entry, always 0, that tables of fewer than four
        # pieces point to for their missing pieces (it adds nothing to the index).
        sentinel = len(self.pieces)
        self._inner_goal = (*self._goal, 0)
        zero = (0,) * N_STATES
        self._trans = tuple(
            (*(edge_t[m] if p.kind == EDGE else corner_t[m] for p in self.pieces), zero)
            for m in range(N_MOVES)
        )
        heur: list[tuple[bytes, int, int, int, int]] = []
        for subset in self.tables:
            data = self.cache.get(subset)
            a, b, c, d = [index[p] for p in subset] + [sentinel] * (4 - len(subset))
            heur.append((data, a, b, c, d))
        self._heur = tuple(heur)

    @property
    def goal(self) -> tuple[int, ...]:
        return self._goal

    def start(self, state: PieceState) -> tuple[int, ...]:
        return tuple(state.get(p) for p in self.pieces)

    def estimate(self, codes: Sequence[int]) -> int:
        """The largest table distance: a lower bound of the moves left."""
        inner = (*codes, 0)
        return max(
            (
                data[inner[a] + 24 * inner[b] + 576 * inner[c] + 13824 * inner[d]]
                for data, a, b, c, d in self._heur
            ),
            default=0,
        )

    def solve(
        self, state: PieceState, max_depth: int = 20, min_depth: int = 0, last_face: int = 6
    ) -> list[int] | None:
        """An optimal move list (indices into :data:`MOVES`) of length in
        ``[min_depth, max_depth]``, or None if there is none that short."""
        codes = self.start(state)
        bound = max(self.estimate(codes), min_depth)
        while bound <= max_depth:
            path = self.solve_at(codes, bound, last_face)
            if path is not None:
                return path
            bound += 1
        return None

    def solve_codes(self, codes: tuple[int, ...], max_depth: int = 20) -> list[int] | None:
        """Like :meth:`solve`, from the pieces' states given directly (in ``pieces`` order)."""
        bound = self.estimate(codes)
        while bound <= max_depth:
            path = self.solve_at(codes, bound)
            if path is not None:
                return path
            bound += 1
        return None

    def solve_at(self, codes: tuple[int, ...], depth: int, last_face: int = 6) -> list[int] | None:
        """A solution of exactly ``depth`` moves (None if there is none)."""
        if self.estimate(codes) > depth:
            return None
        path: list[int] = []
        if self._dfs((*codes, 0), depth, last_face, path):
            path.reverse()
            return path
        return None

    def _dfs(self, codes: tuple[int, ...], depth: int, last: int, path: list[int]) -> bool:
        if depth == 0:
            return codes == self._inner_goal
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise SearchLimitError(f"stage search over {self.node_limit} nodes")
        trans = self._trans
        heur = self._heur
        limit = depth - 1
        for m in _SUCCESSORS[last]:
            child = tuple(map(getitem, trans[m], codes))
            for data, a, b, c, d in heur:
                if data[child[a] + 24 * child[b] + 576 * child[c] + 13824 * child[d]] > limit:
                    break
            else:
                if self._dfs(child, limit, m // 3, path):
                    path.append(m)
                    return True
        return False


T = TypeVar("T")


class SearchMemo:
    """What stage searches have learnt, kept across solves: for a search (its pieces and
    tables) and a start, the optimal solution once found, or the depth below which there is
    none. A stage that keeps pieces already home depends only on the pieces it moves, so the
    same starts come back often; a memo entry is exactly what the search would find again.
    Bounded: cleared when it holds ``limit`` entries."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._paths: dict[tuple[object, ...], tuple[int, ...]] = {}
        self._bounds: dict[tuple[object, ...], int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._paths) + len(self._bounds)

    def path(self, key: tuple[object, ...]) -> tuple[int, ...] | None:
        return self._paths.get(key)

    def bound(self, key: tuple[object, ...]) -> int:
        return self._bounds.get(key, 0)

    def store_path(self, key: tuple[object, ...], path: Sequence[int]) -> None:
        with self._lock:
            self._check_size()
            self._paths[key] = tuple(path)
            self._bounds.pop(key, None)

    def store_bound(self, key: tuple[object, ...], depth: int) -> None:
        with self._lock:
            self._check_size()
            self._bounds[key] = max(depth, self._bounds.get(key, 0))

    def _check_size(self) -> None:
        if len(self) >= self.limit:
            self._paths.clear()
            self._bounds.clear()


_MEMO = SearchMemo()


def race(
    state: PieceState,
    searches: Sequence[tuple[T, StageSearch]],
    count: int,
    max_depth: int = 20,
    memo: SearchMemo | None = _MEMO,
) -> list[tuple[int, T, list[int]]]:
    """The ``count`` goals (of ``searches``) reachable in the fewest moves, each with an optimal
    solution ``(length, label, moves)``, shortest first. All searches deepen together, one
    depth at a time, so a goal that needs many moves costs nothing once ``count`` shorter ones
    are found. A goal already met is returned alone, with no moves. ``memo`` (by default one
    per process) remembers solutions and failed depths."""
    pending: list[
        tuple[int, T, StageSearch, tuple[int, ...], tuple[object, ...], tuple[int, ...] | None]
    ] = []
    for label, search in searches:
        codes = search.start(state)
        if codes == search.goal:
            return [(0, label, [])]
        key: tuple[object, ...] = (search.pieces, search.tables, codes)
        known = memo.path(key) if memo is not None else None
        if known is not None:
            bound = len(known)
        else:
            bound = max(search.estimate(codes), memo.bound(key) if memo is not None else 0)
        pending.append((bound, label, search, codes, key, known))
    found: list[tuple[int, T, list[int]]] = []
    depth = min((p[0] for p in pending), default=0)
    while pending and len(found) < count:
        if depth > max_depth:
            raise SearchLimitError(f"no stage solution within {max_depth} moves")
        still = []
        for item in pending:
            bound, label, search, codes, key, known = item
            if bound > depth:
                still.append(item)
                continue
            path = list(known) if known is not None else search.solve_at(codes, depth)
            if path is None:
                still.append(item)
                if memo is not None:
                    memo.store_bound(key, depth + 1)
            else:
                if memo is not None and known is None:
                    memo.store_path(key, path)
                found.append((depth, label, path))
        pending = still
        depth += 1
    return found[:count]


# --- notation helpers -----------------------------------------------------------------------


def to_outer(moves: Iterable[Move]) -> list[Move]:
    """Re-express any 3x3 sequence (wide, slice, rotation) as outer turns with fixed centres.

    The result leaves every piece where the original leaves it relative to the centres. A block
    that turns inner layers is the whole cube turning (which only relabels the faces of the
    moves after it) with the outer layers that should stay put turned back.
    """
    out: list[Move] = []
    frame = Cube.solved(3)  # its centres: which original face sits in each position now
    for move in moves:
        centres = frame.centre_colours()
        assert centres is not None
        face = move.face
        if move.kind is not MoveKind.ROTATION:
            lo, hi = move.layers(3)
            back = _half_or(-move.turns)
            if lo == 1:
                # layers 1..hi turn like ``face``; outer layer 3 stays unless hi == 3
                if hi == 1:
                    out.append(Move.outer(Face(centres[face]), _half_or(move.turns)))
                elif hi == 2:
                    out.append(Move.outer(Face(centres[OPPOSITE[face]]), _half_or(move.turns)))
            else:
                # inner layers lo..hi turn; the outer layers outside the block turn back
                out.append(Move.outer(Face(centres[face]), back))
                if hi == 2:
                    out.append(Move.outer(Face(centres[OPPOSITE[face]]), _half_or(move.turns)))
        frame = frame.apply([move])
    return out


def _half_or(turns: int) -> int:
    return {1: 1, 2: 2, -2: 2, -1: -1}[turns]
