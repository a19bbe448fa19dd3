"""The two table sets the search reads, and their loaders: :class:`TwoPhaseTables` (face-turn
metric, every search) and :class:`AxialTables` (robot metric, the robot-time objective)."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase.tables.builders import compose, slice_move
from solver.engines.twophase.tables.cache import (
    AXIAL_GROUPS,
    FORMAT_VERSION,
    GROUPS,
    Array,
    default_cache_dir,
)
from solver.engines.twophase.tables.hugepages import huge_page_copy
from solver.engines.twophase.tables.loader import load_or_build
from solver.engines.twophase.tables.moves import u16
from solver.engines.twophase.tables.progress import Progress, no_progress

__all__ = ["AxialTables", "TwoPhaseTables", "load_axial_tables", "load_tables"]

log = logging.getLogger(__name__)

#: the groups built side by side in worker processes when two or more are missing
_WORKER_GROUPS = GROUPS[1:]


@dataclass(frozen=True)
class TwoPhaseTables:
    """Everything the search reads. Arrays are read-only views of the cache files.

    Move tables are ``[coord, move]`` (18 face turns, index ``3 * face + k``); conjugation tables
    ``[coord, sym]`` give the coordinate of ``S * x * S^-1`` for the 16 UD symmetries.
    """

    twist_move: Array  # uint16 (2187, 18)
    flip_move: Array  # uint16 (2048, 18)
    slice_sorted_move: Array  # uint16 (11880, 18)
    u_edges_move: Array  # uint16 (11880, 18)
    d_edges_move: Array  # uint16 (11880, 18)
    corners_move: Array  # uint16 (40320, 18)
    ud_edges_move: Array  # uint16 (40320, 18); 0xFFFF for moves that leave phase 2
    ud_from_u_d: Array  # uint16 (11880 * 24,); 0xFFFF where undefined
    twist_conj: Array  # uint16 (2187, 16)
    ud_edges_conj: Array  # uint16 (40320, 16)
    flipslice_classidx: Array  # uint16 (1013760,), index slice * 2048 + flip
    flipslice_sym: Array  # uint8 (1013760,)
    flipslice_rep: Array  # uint32 (64430,)
    flipslice_stab: Array  # uint16 (64430,) mask of the symmetries fixing the representative
    corner_classidx: Array  # uint16 (40320,)
    corner_sym: Array  # uint8 (40320,)
    corner_rep: Array  # uint16 (2768,)
    corner_stab: Array  # uint16 (2768,)
    conj_move: Array  # uint8 (48, 18): move index of S * m * S^-1
    # uint8 packed 4-bit of flipslice class * 2187 + twist: depth mod 3 and the axis of the
    # turns one move nearer (tables.bfs.pack_axes)
    phase1_axes: Array
    phase2_prun: Array  # uint8 packed 2-bit depth mod 3 of corner class * 40320 + ud_edges
    cornslice_depth: Array  # uint8 (40320 * 24,) exact depth of corners * 24 + slice order
    edgeslice_depth: Array  # uint8 (40320 * 24,) exact depth of ud_edges * 24 + slice order
    slice_twist_depth: Array  # uint8 (495 * 2187,) exact phase-1 depth of slice * 2187 + twist
    slice_flip_depth: Array  # uint8 (495 * 2048,) exact phase-1 depth of slice * 2048 + flip
    slice_twist_mask: Array  # uint32 (495 * 2187,) that depth and the turns changing it
    slice_flip_mask: Array  # uint32 (495 * 2048,) (see tables.bfs.move_masks)
    corner_twist_depth: Array  # uint8 packed 4-bit exact depth (18 turns), class * 2187 + twist
    # (8, 3026808) the same to the corners phase 2 solves within 1..8 turns (builders.py
    # _build_cornergoal), and each row's largest entry (9,) (row 0: corner_twist_depth)
    corner_goal_depth: Array
    corner_goal_max: Array
    build_s: dict[str, float] = field(default_factory=dict)
    load_s: float = 0.0
    cache_dir: Path | None = None

    def arrays(self) -> dict[str, Array]:
        """Every table by name (the arrays the groups' builders read)."""
        return {
            name: getattr(self, name)
            for name in self.__dataclass_fields__
            if isinstance(getattr(self, name), np.ndarray)
        }

    @property
    def nbytes(self) -> int:
        return sum(arr.nbytes for arr in self.arrays().values())

    @cached_property
    def flipslice_class_move(self) -> Array:
        """uint32 (64430, 18): each flipslice class representative's class and symmetry after
        each face turn (:func:`class_rows`: the face-turn search reads its children's classes
        from their parent's row; 4.6 MB, derived on first use in a few ms)."""
        return class_rows(self, slice_move(self.slice_sorted_move), self.flip_move)

    @cached_property
    def move_conj(self) -> Array:
        """uint8 (18, 16): ``S * m * S^-1`` for each face turn m and UD symmetry S."""
        out = np.ascontiguousarray(self.conj_move[: C.N_SYM_D4H].T, dtype=np.uint8)
        out.flags.writeable = False
        return out

    @cached_property
    def sym_mult(self) -> Array:
        """uint8 (16, 16): the index of ``S_a * S_b`` for UD symmetries a and b (found by
        their action on the 18 face turns, which is faithful)."""
        conj = self.conj_move.astype(np.int64)[: C.N_SYM_D4H]
        out = np.empty((C.N_SYM_D4H, C.N_SYM_D4H), dtype=np.uint8)
        for a in range(C.N_SYM_D4H):
            for b in range(C.N_SYM_D4H):
                same = np.nonzero((conj == conj[a][conj[b]]).all(axis=1))[0]
                if len(same) != 1:
                    raise ValueError(f"no unique product of UD symmetries {a} and {b}: {same}")
                out[a, b] = same[0]
        out.flags.writeable = False
        return out

    @cached_property
    def flipslice_classsym(self) -> Array:
        """uint32 (1013760,), index slice * 2048 + flip: ``flipslice_classidx << 4 |
        flipslice_sym``, derived on first use (4 MB, not cached on disk): the phase-1 search
        reads a child's class and symmetry with one memory access instead of two."""
        classsym = (self.flipslice_classidx.astype(np.uint32) << 4) | self.flipslice_sym
        classsym.flags.writeable = False
        return classsym

    @property
    def hot_mb(self) -> int:
        """What the huge-page copies of :meth:`search_arrays` take, in MB (rounded up)."""
        total = sum(int(getattr(self, name).nbytes) for name in _HOT)
        return -(-total // (1 << 20))

    def search_arrays(self, *, huge_pages: bool = False) -> tuple[Array, ...]:
        """The arrays in the order the C search takes them (see ``_twophase.c``); with
        ``huge_pages`` the ones the phase-1 search reads at random are private copies in huge
        pages (:mod:`.hugepages`: about 90 MB)."""
        arrays = self._search_arrays()
        if not huge_pages:
            return arrays
        hot = {id(getattr(self, name)) for name in _HOT}
        return tuple(huge_page_copy(a) if id(a) in hot else a for a in arrays)

    def _search_arrays(self) -> tuple[Array, ...]:
        return (
            self.twist_move,
            self.flip_move,
            self.slice_sorted_move,
            self.u_edges_move,
            self.d_edges_move,
            self.corners_move,
            self.ud_edges_move,
            self.ud_from_u_d,
            self.twist_conj,
            self.ud_edges_conj,
            self.flipslice_classsym,
            self.corner_classidx,
            self.corner_sym,
            self.phase1_axes,
            self.phase2_prun,
            self.cornslice_depth,
            self.edgeslice_depth,
            self.slice_twist_depth,
            self.slice_flip_depth,
            self.slice_twist_mask,
            self.slice_flip_mask,
            self.corner_twist_depth,
            self.corner_goal_depth,
            self.corner_goal_max,
            self.flipslice_class_move,
            self.move_conj,
            self.sym_mult,
        )


#: the tables the phase-1 search reads at random, by name: the big pruning table, the move
#: masks, the flipslice classes and the corner moves and corners x slice depths of its ends
#: (not ``corner_goal_depth``: a search reads one or two of its 3 MB rows at a time, and
#: copies of it measured no faster while they cost 24 MB of private memory a process)
_HOT = (
    "phase1_axes",
    "slice_twist_mask",
    "slice_flip_mask",
    "flipslice_classsym",
    "flipslice_class_move",
    "corners_move",
    "cornslice_depth",
    "corner_twist_depth",
)


def mask_depth(masks: Array) -> Array:
    """The exact depths a move or group mask table holds in its top byte (see
    :func:`~.bfs.move_masks`, :func:`~.bfs.group_masks`): the files keep only the masks (the
    depths were 4 MB more on disk, and files of earlier versions that have them are read
    alike); read-only, as the mapped tables are."""
    depth = (masks >> (8 * (masks.dtype.itemsize - 1))).astype(np.uint8)
    depth.flags.writeable = False
    return depth


def load_tables(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> TwoPhaseTables:
    """Load every table group from the cache, building (and saving) those that are missing,
    corrupt or of another format version.

    When two or more groups must be built, they are built side by side in worker processes
    (``workers``: default :func:`~.loader.default_workers`, from the cores and the available
    memory; 1 builds everything in this process), which nearly halves the first build on a
    2-core machine.
    """
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    report = progress or no_progress
    start = time.perf_counter()
    build_s: dict[str, float] = {}
    moves = load_or_build(
        directory, GROUPS[:1], dict, report, build_s, use_cache=use_cache, workers=workers
    )["moves"]
    loaded = load_or_build(
        directory,
        GROUPS[1:],
        lambda: moves,
        report,
        build_s,
        use_cache=use_cache,
        workers=workers,
        parallel=_WORKER_GROUPS,
    )
    arrays = dict(moves)
    for group in GROUPS[1:]:
        arrays.update(loaded[group])
    arrays["slice_twist_depth"] = mask_depth(arrays["slice_twist_mask"])
    arrays["slice_flip_depth"] = mask_depth(arrays["slice_flip_mask"])
    total = time.perf_counter() - start
    tables = TwoPhaseTables(
        **{k: v for k, v in arrays.items() if k in TwoPhaseTables.__dataclass_fields__},
        build_s=build_s,
        load_s=total,
        cache_dir=directory,
    )
    log.info(
        "two-phase tables ready from %s in %.2f s (%.1f MB, format v%d)",
        directory,
        total,
        tables.nbytes / 1e6,
        FORMAT_VERSION,
    )
    return tables


@dataclass(frozen=True)
class AxialTables:
    """Pruning tables in the robot's metric, where a group (one face, or the two faces of an
    axis turned together) counts as one move: the robot-time objective searches over groups.
    Same indexing as the face-turn tables they mirror."""

    phase1_axes: Array  # uint8 packed 4-bit depth mod 3 and axis code, as TwoPhaseTables's
    phase2_depth: Array  # uint8 packed 4-bit exact depth, corner class * 40320 + ud_edges
    cornslice_depth: Array  # uint8 (40320 * 24,) exact group depth
    edgeslice_depth: Array  # uint8 (40320 * 24,) exact group depth
    slice_twist_depth: Array  # uint8 (495 * 2187,) exact group depth of slice * 2187 + twist
    slice_flip_depth: Array  # uint8 (495 * 2048,) exact group depth of slice * 2048 + flip
    # phase-1 move tables over the 45 groups (one lookup per group instead of two), derived
    # from the face-turn tables when loaded
    twist_group_move: Array  # uint16 (2187, 45)
    flip_group_move: Array  # uint16 (2048, 45)
    slice_group_move: Array  # uint16 (495, 45), the slice position (not its order)
    # the corners and the slice order over the 45 groups, carried along the phase-1 path
    corners_group_move: Array  # uint16 (40320, 45)
    slice_sorted_group_move: Array  # uint16 (11880, 45)
    # the slice x twist and slice x flip depths with the groups changing them
    # (tables.bfs.group_masks): a phase-1 node takes only the groups both allow
    slice_twist_mask: Array  # uint64 (495 * 2187,)
    slice_flip_mask: Array  # uint64 (495 * 2048,)
    # the corner goal in groups (builders._build_axialgoal): a byte per corner class x twist
    # holding the rows p = 3..8, and each row's largest entry (9,)
    corner_goal: Array  # uint8 (2768 * 2187,)
    corner_goal_max: Array  # uint8 (9,)
    # a phase-1 node's children's flipslice class and symmetry from one row of its own class
    # (with TwoPhaseTables.sym_mult), derived when loaded: uint32 (64430, 45) class << 4 | sym
    # of the representative moved by each group (class_rows()), uint8 (45, 16) the group
    # S * k * S^-1 (group_conjugates())
    class_group_move: Array
    group_conj: Array
    build_s: dict[str, float] = field(default_factory=dict)

    def search_arrays(self) -> tuple[Array, ...]:
        """The arrays in the order the C search takes them."""
        return (
            self.phase1_axes,
            self.phase2_depth,
            self.cornslice_depth,
            self.edgeslice_depth,
            self.slice_twist_depth,
            self.slice_flip_depth,
            self.twist_group_move,
            self.flip_group_move,
            self.slice_group_move,
            self.corners_group_move,
            self.slice_sorted_group_move,
            self.slice_twist_mask,
            self.slice_flip_mask,
            self.corner_goal,
            self.corner_goal_max,
            self.class_group_move,
            self.group_conj,
        )


def class_rows(base: TwoPhaseTables, slice_table: Array, flip_table: Array) -> Array:
    """A search's children's flipslice class and symmetry from their parent's class instead of
    from the 4 MB ``flipslice_classsym`` (a miss a child): for each class representative and
    each column of the move tables (the slice position's and the flip's: face turns or robot
    groups), the class and symmetry (``class << 4 | sym``, as ``flipslice_classsym``) of the
    representative so moved, uint32 (64430, columns): a node's children read one row. A node
    whose raw coordinate c has ``S c S^-1`` = its class's representative r has, for a move m,
    ``S (c m) S^-1 = r (S m S^-1)``: the row of r at the conjugated move gives the child's
    class and a symmetry S2 of ``r (S m S^-1)``, so the child's symmetry is ``S2 * S``
    (:meth:`TwoPhaseTables.sym_mult`). Derived a column at a time (no temporaries of the
    table's size): about 15 ms for the 45 robot groups."""
    rep = base.flipslice_rep.astype(np.int64)
    rep_slice, rep_flip = rep // C.N_FLIP, rep % C.N_FLIP
    classes = np.empty((len(rep), slice_table.shape[1]), dtype=np.uint32)
    for k in range(slice_table.shape[1]):
        child = slice_table[rep_slice, k].astype(np.int64) * C.N_FLIP
        classes[:, k] = base.flipslice_classsym[child + flip_table[rep_flip, k]]
    classes.flags.writeable = False
    return classes


def group_conjugates(conj_move: Array) -> Array:
    """Each robot group conjugated by each of the 16 UD symmetries, ``S * k * S^-1``, uint8
    (45, 16) (the groups' turns conjugated one by one)."""
    conj = conj_move.astype(np.int64)
    index = {frozenset(m for m in pair if m >= 0): k for k, pair in enumerate(C.AXIAL_MOVES)}
    out = np.empty((C.N_AXIAL, C.N_SYM_D4H), dtype=np.uint8)
    for k, pair in enumerate(C.AXIAL_MOVES):
        for s in range(C.N_SYM_D4H):
            out[k, s] = index[frozenset(int(conj[s][m]) for m in pair if m >= 0)]
    out.flags.writeable = False
    return out


def load_axial_tables(
    base: TwoPhaseTables, *, progress: Progress | None = None, workers: int | None = None
) -> AxialTables:
    """The robot-metric tables next to ``base``'s in its cache (built there on first use, the
    three groups side by side in worker processes: about half a minute on 2 cores)."""
    build_s: dict[str, float] = {}
    loaded = load_or_build(
        base.cache_dir or default_cache_dir(),
        AXIAL_GROUPS,
        base.arrays,
        progress or no_progress,
        build_s,
        workers=workers,
        parallel=AXIAL_GROUPS,
    )
    a1, a2, goal = loaded["axial1"], loaded["axial2"], loaded["axialgoal"]
    slice_g = u16(compose(slice_move(base.slice_sorted_move)))
    flip_g = u16(compose(base.flip_move))
    return AxialTables(
        a1["axial1_axes"],
        a2["axial2_depth"],
        a2["axial_cornslice"],
        a2["axial_edgeslice"],
        mask_depth(a1["axial_slice_twist_mask"]),
        mask_depth(a1["axial_slice_flip_mask"]),
        u16(compose(base.twist_move)),
        flip_g,
        slice_g,
        u16(compose(base.corners_move)),
        u16(compose(base.slice_sorted_move)),
        a1["axial_slice_twist_mask"],
        a1["axial_slice_flip_mask"],
        goal["axial_corner_goal"],
        goal["axial_corner_goal_max"],
        class_rows(base, slice_g, flip_g),
        group_conjugates(base.conj_move),
        build_s,
    )
