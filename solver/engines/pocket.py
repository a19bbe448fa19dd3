"""The 2x2 engine: optimal solutions from a full distance table.

A 2x2 has only corners. Holding the DBL corner still (the whole cube is first turned so that
the DBL piece sits in its slot, correctly twisted), every position is reached by U, R and F
alone: 7! permutations of the other corners × 3^6 twists = 3,674,160 positions. A breadth-first
search over all of them (vectorised numpy, a few seconds) gives the exact distance of each; a
solution walks down the table one move at a time, so it is optimal: at most 11 moves in HTM
(God's number for the 2x2), or at most 14 quarter turns with ``metric="qtm"``.

Tables are cached like the two-phase tables: ``pocket/pocket-v{FORMAT_VERSION}-{metric}.bin``
in the cache folder (``cache_dir`` option, ``$CUBEROBOT_CACHE_DIR``, ``$XDG_CACHE_HOME/cuberobot``,
``~/.cache/cuberobot``), written atomically with a CRC32 of the payload, rebuilt when damaged.

Engine options (``solve(..., name=value)``): ``metric`` ("htm", default, or "qtm"),
``cache_dir`` (table folder).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import CORNER_FACES, Corner, cubie_layout
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, MoveKind, count, parse
from solver.engines.common.tablefile import default_cache_dir, read_table, write_table
from solver.errors import CubeError, NoSolutionError, OptionError, UnsupportedError
from solver.optimize import optimize
from solver.solution import Solution, Stage

__all__ = ["FORMAT_VERSION", "PocketTables", "load_pocket_table", "solve_pocket"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"CRPOCKT1"
N_PERM = 5040  # 7!
N_TWIST = 729  # 3^6
N_STATES = N_PERM * N_TWIST
#: the seven corner slots that move (DBL, slot 6, stays put)
_SLOTS = (0, 1, 2, 3, 4, 5, 7)
_FACES = (Face.U, Face.R, Face.F)
_ORIENTATIONS = [
    pre + post for pre in ("", "x ", "x2 ", "x' ", "z ", "z' ") for post in ("", "y", "y2", "y'")
]

Array = npt.NDArray[Any]


class TableError(CubeError):
    """The 2x2 table cache cannot be written."""


def table_path(cache_dir: Path, metric: str) -> Path:
    return cache_dir / "pocket" / f"pocket-v{FORMAT_VERSION}-{metric}.bin"


# --- the corner model -------------------------------------------------------------------------


def corner_state(cube: Cube) -> tuple[list[int], list[int]]:
    """(cp, co) of a 2x2 held with DBL in place: ``cp[slot]`` is the piece in the slot,
    ``co[slot]`` which of its stickers (0..2, in :data:`CORNER_FACES` order) shows U/D colour."""
    flat = cube.flat
    cp: list[int] = []
    co: list[int] = []
    for stickers in cubie_layout(cube.n).corners:
        cols = [int(flat[i]) for i in stickers]
        k = next(i for i, c in enumerate(cols) if c in (Face.U, Face.D))
        rotated = (cols[k], cols[(k + 1) % 3], cols[(k + 2) % 3])
        cp.append(next(p for p, faces in enumerate(CORNER_FACES) if tuple(faces) == rotated))
        co.append(k)
    return cp, co


def _held(cube: Cube) -> tuple[str, Cube]:
    """The rotation that puts the DBL piece in its slot untwisted, and the rotated cube."""
    for rot in _ORIENTATIONS:
        turned = cube.apply(rot)
        cp, co = corner_state(turned)
        if cp[Corner.DBL] == Corner.DBL and co[Corner.DBL] == 0:
            return rot, turned
    raise AssertionError("no orientation holds DBL in place")  # pragma: no cover


@cache
def _move_effects() -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """(slot map, twist) of U, R, F quarter turns (replaced-by convention)."""
    solved = Cube.solved(2)
    out = []
    for face in _FACES:
        cp, co = corner_state(solved.apply([Move.outer(face)]))
        out.append((tuple(cp), tuple(co)))
    return tuple(out)


def _perm_rank(perms: Array) -> Array:
    """Lehmer rank of rows of a permutation array (values 0..k-1)."""
    k = perms.shape[1]
    rank = np.zeros(perms.shape[0], dtype=np.int64)
    for i in range(k):
        smaller = (perms[:, i + 1 :] < perms[:, i : i + 1]).sum(axis=1)
        rank = rank * (k - i) + smaller
    return rank


def _twist_rank(twists: Array) -> Array:
    rank = np.zeros(twists.shape[0], dtype=np.int64)
    for i in range(6):
        rank = rank * 3 + twists[:, i]
    return rank


@cache
def _all_perms() -> Array:
    return np.array(list(itertools.permutations(range(7))), dtype=np.int64)


@cache
def _all_twists() -> Array:
    six = np.array(list(itertools.product(range(3), repeat=6)), dtype=np.int64)
    seventh = (-six.sum(axis=1)) % 3
    return np.concatenate([six, seventh[:, None]], axis=1)


def _quarter_tables() -> tuple[Array, Array]:
    """perm_move (5040, 3) and twist_move (729, 3) for the quarter turns U, R, F."""
    perms = _all_perms()
    twists = _all_twists()
    index = {s: i for i, s in enumerate(_SLOTS)}
    perm_move = np.zeros((N_PERM, 3), dtype=np.int64)
    twist_move = np.zeros((N_TWIST, 3), dtype=np.int64)
    for m, (mp, mo) in enumerate(_move_effects()):
        src = [index[mp[s]] for s in _SLOTS]
        add = np.array([mo[s] for s in _SLOTS], dtype=np.int64)
        perm_move[:, m] = _perm_rank(perms[:, src])
        twist_move[:, m] = _twist_rank((twists[:, src] + add)[:, :6] % 3)
    return perm_move, twist_move


@cache
def move_tables() -> tuple[Array, Array, tuple[Move, ...]]:
    """Move tables for the 9 HTM moves (U, U2, U', R, ...) and the moves themselves."""
    pq, tq = _quarter_tables()
    perm_move = np.zeros((N_PERM, 9), dtype=np.int64)
    twist_move = np.zeros((N_TWIST, 9), dtype=np.int64)
    moves: list[Move] = []
    for f, face in enumerate(_FACES):
        p, t = np.arange(N_PERM), np.arange(N_TWIST)
        for k, turns in enumerate((1, 2, -1)):
            p, t = pq[p, f], tq[t, f]
            perm_move[:, 3 * f + k], twist_move[:, 3 * f + k] = p, t
            moves.append(Move.outer(face, turns))
    return perm_move, twist_move, tuple(moves)


def _metric_moves(metric: str) -> list[int]:
    """Indices (into :func:`move_tables`) of the generators of a metric."""
    if metric == "htm":
        return list(range(9))
    if metric == "qtm":
        return [0, 2, 3, 5, 6, 8]
    raise UnsupportedError(f"2x2 metric must be 'htm' or 'qtm', not {metric!r}")


def build_distances(metric: str = "htm") -> npt.NDArray[np.int8]:
    """Breadth-first distances of all 3,674,160 positions (index perm * 729 + twist)."""
    perm_move, twist_move, _ = move_tables()
    gens = _metric_moves(metric)
    dist = np.full(N_STATES, -1, dtype=np.int8)
    dist[0] = 0
    frontier = np.array([0], dtype=np.int64)
    depth = 0
    while frontier.size:
        p, t = frontier // N_TWIST, frontier % N_TWIST
        depth += 1
        for m in gens:
            nxt = perm_move[p, m] * N_TWIST + twist_move[t, m]
            dist[nxt[dist[nxt] < 0]] = depth
        frontier = np.flatnonzero(dist == depth)
    return dist


# --- cache ------------------------------------------------------------------------------------


def _write(path: Path, dist: npt.NDArray[np.int8], metric: str) -> None:
    fields = {"format": FORMAT_VERSION, "metric": metric}
    write_table(path, dist, MAGIC, fields, TableError, "the 2x2 table")


def _read(path: Path, metric: str) -> npt.NDArray[np.int8] | None:
    """The cached table, or None when missing or damaged (it is then rebuilt)."""
    fields = {"format": FORMAT_VERSION, "metric": metric}
    return read_table(path, MAGIC, fields, N_STATES, f"the 2x2 {metric} table")


class PocketTables:
    """A loaded distance table and its metric."""

    def __init__(self, dist: npt.NDArray[np.int8], metric: str) -> None:
        self.dist = dist
        self.metric = metric


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], PocketTables] = {}


def load_pocket_table(
    metric: str = "htm", cache_dir: str | os.PathLike[str] | None = None
) -> PocketTables:
    """The distance table of ``metric``, from the cache or built (and cached) now."""
    _metric_moves(metric)
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    key = (str(directory), metric)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        path = table_path(directory, metric)
        dist = _read(path, metric)
        if dist is None:
            start = time.perf_counter()
            dist = build_distances(metric)
            log.info("built the 2x2 %s table in %.1f s", metric, time.perf_counter() - start)
            _write(path, dist, metric)
        _LOADED[key] = PocketTables(dist, metric)
        return _LOADED[key]


# --- solving ----------------------------------------------------------------------------------


def state_index(cube: Cube) -> int:
    """Table index of a 2x2 already held with DBL in place."""
    cp, co = corner_state(cube)
    index = {s: i for i, s in enumerate(_SLOTS)}
    perm = np.array([[index[cp[s]] for s in _SLOTS]], dtype=np.int64)
    twist = np.array([[co[s] for s in _SLOTS[:6]]], dtype=np.int64)
    return int(_perm_rank(perm)[0]) * N_TWIST + int(_twist_rank(twist)[0])


def descend(index: int, tables: PocketTables) -> list[Move]:
    """An optimal move sequence from a table index to the solved state."""
    perm_move, twist_move, moves = move_tables()
    gens = _metric_moves(tables.metric)
    dist = tables.dist
    path: list[Move] = []
    while dist[index] > 0:
        p, t = divmod(index, N_TWIST)
        for m in gens:
            nxt = int(perm_move[p, m]) * N_TWIST + int(twist_move[t, m])
            if dist[nxt] == dist[index] - 1:
                path.append(moves[m])
                index = nxt
                break
    return optimize(path, 3)


def _body(cube: Cube, tables: PocketTables) -> list[Move]:
    """An optimal solution of ``cube`` holding the piece coloured DBL still (U, R, F in its
    frame), re-expressed for the cube as it was given: the rotation pushed to the end."""
    rotation, held = _held(cube)
    path = descend(state_index(held), tables)
    return [m for m in optimize(parse(rotation) + path, 2) if m.kind is not MoveKind.ROTATION]


@cache
def _recolourings() -> tuple[npt.NDArray[np.uint8], ...]:
    """The 24 colour maps of the whole-cube rotations (identity first): ``map[c]`` is the new
    colour of colour ``c``. A 2x2 recoloured by one is still a possible cube, solved by the
    same moves, and its piece coloured DBL is another piece: the one held still."""
    maps = []
    for rot in _ORIENTATIONS:
        centres = Cube.solved(3).apply(rot).stickers.reshape(6, 9)[:, 4]
        colour_map = np.zeros(6, dtype=np.uint8)
        colour_map[centres] = np.arange(6, dtype=np.uint8)
        maps.append(colour_map)
    return tuple(maps)


def _solve_with_faces(
    cube: Cube, tables: PocketTables, faces: frozenset[Face] | None
) -> tuple[Move, ...]:
    """An optimal solution turning only ``faces`` (all when None). Holding one piece still
    turns the three faces away from its slot, so the solution exists when ``faces`` holds a
    face of each axis (U/D, R/L, F/B); otherwise :class:`NoSolutionError` says so."""
    for colour_map in _recolourings():
        body = _body(Cube(colour_map[cube.flat], 2), tables)
        if faces is None or all(m.face in faces for m in body):
            if not cube.apply(body).is_solved():  # pragma: no cover - a broken table
                raise AssertionError("2x2 solution does not solve the cube")
            return tuple(body)
    assert faces is not None  # with every face allowed the first map fits
    allowed = "".join(f.name for f in Face if f in faces)
    raise NoSolutionError(
        f"the 2x2 engine turns three faces of a corner (one of each axis U/D, R/L, F/B); "
        f"faces {allowed} lack an axis: allow more faces"
    )


def solve_pocket(cube: Cube, options: Any) -> Solution:
    """Engine entry point for :func:`solver.api.solve` (``options`` is a ``SolveOptions``)."""
    if cube.n != 2:
        raise UnsupportedError(f"the pocket engine solves 2x2 cubes, not {cube.n}x{cube.n}")
    extra = dict(options.extra)
    unknown = set(extra) - {"metric", "cache_dir"}
    if unknown:
        raise UnsupportedError(f"unknown 2x2 option(s): {', '.join(sorted(unknown))}")
    metric = str(extra.get("metric", "htm"))
    cache_dir = extra.get("cache_dir")
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise OptionError("cache_dir", f"cache_dir must be a folder path, got {cache_dir!r}")
    start = time.perf_counter()
    tables = load_pocket_table(metric, cache_dir)
    moves = _solve_with_faces(cube, tables, options.faces)
    if options.max_length is not None and count(moves, Metric.HTM, 2) > options.max_length:
        raise NoSolutionError(
            f"the optimal 2x2 solution has {count(moves, Metric.HTM, 2)} moves, more than "
            f"max_length {options.max_length}"
        )
    return Solution(
        moves=moves,
        engine="pocket",
        n=2,
        stages=(Stage("corners", moves, {"optimal": metric}),),
        stats={
            "optimal_metric": metric,
            "length": count(moves, Metric(metric), 2),
            "ms": round((time.perf_counter() - start) * 1000, 2),
        },
    )
