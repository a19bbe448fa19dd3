"""The two-phase engine's tables: built with vectorised numpy, cached on disk, verified on load.

One helper, :func:`load_tables`, gives a :class:`TwoPhaseTables` (and :func:`load_axial_tables`
the robot metric's :class:`AxialTables`); they are called on first use, never at import. Each
group of tables is one file in the cache directory, named
``twophase-v{FORMAT_VERSION}-{group}.bin``::

    bytes 0..7     magic b"CRTABLE\\0"
    bytes 8..11    header length H (uint32, little endian)
    bytes 12..     H bytes of JSON: format version, group, payload size, CRC-32 of the payload,
                   and for each array its name, dtype, shape and offset
    then           the payload: the arrays' bytes, one after the other

A file whose magic, version, size or checksum does not match is reported (log warning) and
rebuilt; files are written to a temporary name and renamed, so a crash never leaves half a file
under the real name.

Groups and sizes::

    moves     move tables of every coordinate, symmetry conjugation tables, the
              flipslice (64430) and corner (2768) symmetry classes                  ~ 9 MB
    phase1axes depth mod 3 of flipslice class x twist and the axis of the turns
              one move nearer (one axis, or several), 4 bits each (140,908,410):
              a node with no move to spare takes only that axis's turns (replaces
              the 2-bit ``phase1`` group of earlier versions, whose file is
              removed)                                                              70 MB
    phase2    depth mod 3 of corner class x ud_edges, 2 bits each (111,605,760)     28 MB
    cornslice exact depths of corners x slice order and of ud_edges x slice order,
              phase 2 moves (967,680 each)                                          2 MB
    slicepair exact phase-1 depths of slice x twist (1,082,565) and slice x flip
              (1,013,760), tried before the phase-1 table, with the turns that
              change them, 4 bytes each (a file without them is rebuilt; the
              depths alone, which files before 2026-11-28 also held, are derived
              from them when loaded)                                                8 MB
    cornertwist exact depth of the corners alone (all 18 turns), corner class x
              twist, 4 bits each (6,053,616): a lower bound on the rest of a
              solution, tested in phase 1 against the length to beat              3 MB
    cornergoal the same distance to the corner states phase 2 solves within p turns,
              one row per p = 1..8 (a phase-1 node needs at least its entry of
              phase-1 turns when its phase 2 may take p), and each row's largest
              entry                                                               24 MB
    axial1    robot metric (a group of one axis counts 1; built on the first robot-time
              solve, :func:`load_axial_tables`): phase 1 as ``phase1axes`` (the axis
              of the nearer groups), plus exact slice x twist and slice x flip depths
              with the groups that change them, 8 bytes each (a file without them
              is rebuilt)                                                          87 MB
    axial2    robot metric phase 2: exact depth of corner class x ud_edges, 4 bits
              each (a phase-2 start needs no walk), plus exact corners/ud_edges x
              slice depths                                                          58 MB
    axialgoal robot metric corner goal: the group distance of corner class x twist to
              the corner states phase 2 solves within p groups, p = 3..8, all six
              rows in one byte an entry (each row is the next one's entry or one
              more)                                                                  6 MB

The pruning tables hold each state's distance mod 3 (Kociemba's trick): a search knows the
exact distance of its parent, and the child's distance is one of parent-1, parent, parent+1,
so the residue tells which.

Memory: a build walks its table in spans (temporaries of a few tens of MB), so a worker holds
about its depth array, one byte per entry (0.34 GB at most, for ``axial1``); loaded
files are read-only memory maps shared by every process that loads them. Workers are sized by
cores and available memory (:func:`.loader.default_workers`).

Modules: :mod:`.cache` (where, file format), :mod:`.bfs` (the breadth-first builders),
:mod:`.moves` (move and symmetry tables), :mod:`.builders` (one builder per group),
:mod:`.loader` (load or build), :mod:`.worker` (building groups in worker processes,
``python -m solver.engines.twophase.tables build GROUP CACHE_DIR``), :mod:`.sets` (the two
table sets and their loaders), :mod:`.build` (:func:`build_all`: the whole cache ahead of
time), :mod:`.progress` (the progress display).

The cache directory is, in order: the ``cache_dir`` argument, ``$CUBEROBOT_CACHE_DIR``,
``$XDG_CACHE_HOME/cuberobot``, ``~/.cache/cuberobot``; tables live in its ``twophase/`` folder.
"""

from solver.engines.twophase.tables.build import build_all
from solver.engines.twophase.tables.cache import (
    AXIAL_GROUPS,
    FORMAT_VERSION,
    GROUPS,
    TableError,
    default_cache_dir,
    table_path,
)
from solver.engines.twophase.tables.progress import Progress, stderr_progress
from solver.engines.twophase.tables.sets import (
    AxialTables,
    TwoPhaseTables,
    load_axial_tables,
    load_tables,
)

__all__ = [
    "AXIAL_GROUPS",
    "FORMAT_VERSION",
    "GROUPS",
    "AxialTables",
    "Progress",
    "TableError",
    "TwoPhaseTables",
    "build_all",
    "default_cache_dir",
    "load_axial_tables",
    "load_tables",
    "stderr_progress",
    "table_path",
]
