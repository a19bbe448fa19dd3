"""The two-phase engine's tables: built with vectorised numpy, cached on disk, verified on load.

One helper, :func:`load_tables`, gives a :class:`TwoPhaseTables`; it is called on first use,
never at import. Each group of tables is one file in the cache directory, named
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
    phase1    depth mod 3 of flipslice class x twist, 2 bits each (140,908,410)     35 MB
    phase2    depth mod 3 of corner class x ud_edges, 2 bits each (111,605,760)     28 MB
    cornslice exact depths of corners x slice order and of ud_edges x slice order,
              phase 2 moves (967,680 each)                                          2 MB
    slicepair exact phase-1 depths of slice x twist (1,082,565) and slice x flip
              (1,013,760), tried before the phase-1 table                          2 MB
    axial1    robot metric (a group of one axis counts 1; built on the first robot-time
              solve, :func:`load_axial_tables`): phase 1 as above, plus exact slice x
              twist and slice x flip depths                                         37 MB
    axial2    robot metric phase 2: exact depth of corner class x ud_edges, 4 bits
              each (a phase-2 start needs no walk), plus exact corners/ud_edges x
              slice depths                                                          58 MB

The pruning tables hold each state's distance mod 3 (Kociemba's trick): a search knows the
exact distance of its parent, and the child's distance is one of parent-1, parent, parent+1,
so the residue tells which.

The cache directory is, in order: the ``cache_dir`` argument, ``$CUBEROBOT_CACHE_DIR``,
``$XDG_CACHE_HOME/cuberobot``, ``~/.cache/cuberobot``; tables live in its ``twophase/`` folder.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.engines.twophase import coord as C
from solver.errors import CubeError

__all__ = [
    "AXIAL_GROUPS",
    "FORMAT_VERSION",
    "GROUPS",
    "AxialTables",
    "Progress",
    "TableError",
    "TwoPhaseTables",
    "default_cache_dir",
    "load_axial_tables",
    "load_tables",
    "stderr_progress",
    "table_path",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
MAGIC = b"CRTABLE\0"
GROUPS = ("moves", "phase1", "phase2", "cornslice", "slicepair")
#: built on first use of the robot-time objective (see :func:`load_axial_tables`)
AXIAL_GROUPS = ("axial1", "axial2")

#: arrays a group's file must hold (a file of an older layout is rebuilt)
_ARRAYS = {
    "axial1": ("axial1_prun", "axial_slice_twist", "axial_slice_flip"),
    "axial2": ("axial2_depth", "axial_cornslice", "axial_edgeslice"),
}
#: progress callback: (task, done, total); total 0 means "unknown"
Progress = Callable[[str, int, int], None]

Array = npt.NDArray[Any]
_UNSET = 255
_CHUNK = 1 << 21


class TableError(CubeError):
    """The table cache cannot be used (unwritable directory, ...); the message says where."""


# --- where ---------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    env = os.environ.get("CUBEROBOT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cuberobot"


def table_path(cache_dir: Path, group: str) -> Path:
    return cache_dir / "twophase" / f"twophase-v{FORMAT_VERSION}-{group}.bin"


# --- progress ------------------------------------------------------------------------------------


def stderr_progress() -> Progress:
    """A one-line text bar on standard error when it is a terminal; log lines otherwise."""
    last: dict[str, float] = {}

    def report(task: str, done: int, total: int) -> None:
        now = time.monotonic()
        finished = total > 0 and done >= total
        if not finished and now - last.get(task, 0.0) < 0.2:
            return
        last[task] = now
        if sys.stderr.isatty():
            width = 30
            frac = done / total if total else 0.0
            bar = "#" * int(width * frac) + "-" * (width - int(width * frac))
            sys.stderr.write(f"\rbuilding two-phase tables: {task:<22} [{bar}] {100 * frac:5.1f}%")
            if finished:
                sys.stderr.write("\n")
            sys.stderr.flush()
        elif finished or done == 0:
            log.info("building two-phase tables: %s %d/%d", task, done, total)

    return report


def _no_progress(task: str, done: int, total: int) -> None:
    return None


# --- file format ----------------------------------------------------------------------------------


def _write_bundle(path: Path, group: str, arrays: dict[str, Array]) -> None:
    entries = []
    offset = 0
    crc = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        entries.append(
            {"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset}
        )
        offset += arr.nbytes
        crc = zlib.crc32(arr.data.cast("B"), crc)
    header = json.dumps(
        {
            "format": FORMAT_VERSION,
            "group": group,
            "payload": offset,
            "crc32": crc,
            "arrays": entries,
        }
    ).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise TableError(
            f"cannot write two-phase tables to {path.parent}: {exc}; set CUBEROBOT_CACHE_DIR "
            "to a writable folder"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC)
            fh.write(len(header).to_bytes(4, "little"))
            fh.write(header)
            for arr in arrays.values():
                fh.write(np.ascontiguousarray(arr).data.cast("B"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_stale(directory: Path, group: str) -> None:
    """Delete this group's files of other format versions."""
    for old in (directory / "twophase").glob(f"twophase-v*-{group}.bin"):
        if old != table_path(directory, group):
            log.info("removing stale two-phase table %s", old)
            old.unlink(missing_ok=True)


class _Corrupt(Exception):
    pass


def _read_bundle(path: Path, group: str) -> dict[str, Array]:
    data = path.read_bytes()
    if data[:8] != MAGIC:
        raise _Corrupt("not a table file (bad magic)")
    hlen = int.from_bytes(data[8:12], "little")
    try:
        header = json.loads(data[12 : 12 + hlen])
    except ValueError as exc:
        raise _Corrupt(f"unreadable header ({exc})") from None
    if header.get("format") != FORMAT_VERSION or header.get("group") != group:
        raise _Corrupt(
            f"format {header.get('format')}/{header.get('group')} is not {FORMAT_VERSION}/{group}"
        )
    payload = memoryview(data)[12 + hlen :]
    if len(payload) != header["payload"]:
        raise _Corrupt(f"size {len(payload)} bytes, expected {header['payload']}")
    if zlib.crc32(payload) != header["crc32"]:
        raise _Corrupt("checksum mismatch")
    out: dict[str, Array] = {}
    missing = set(_ARRAYS.get(group, ())) - {e["name"] for e in header["arrays"]}
    if missing:
        raise _Corrupt(f"made by an older cuberobot (no {', '.join(sorted(missing))})")
    for e in header["arrays"]:
        dtype = np.dtype(e["dtype"])
        count = int(np.prod(e["shape"], dtype=np.int64))
        arr = np.frombuffer(payload, dtype=dtype, count=count, offset=e["offset"])
        out[e["name"]] = arr.reshape(e["shape"])
    return out


# --- the tables -----------------------------------------------------------------------------------


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
    ud_edges_move: Array  # uint16 (40320, 18); 65535 for moves that leave phase 2
    ud_from_u_d: Array  # uint16 (11880 * 24,); 65535 where undefined
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
    phase1_prun: Array  # uint8 packed 2-bit depth mod 3 of flipslice class * 2187 + twist
    phase2_prun: Array  # uint8 packed 2-bit depth mod 3 of corner class * 40320 + ud_edges
    cornslice_depth: Array  # uint8 (40320 * 24,) exact depth of corners * 24 + slice order
    edgeslice_depth: Array  # uint8 (40320 * 24,) exact depth of ud_edges * 24 + slice order
    slice_twist_depth: Array  # uint8 (495 * 2187,) exact phase-1 depth of slice * 2187 + twist
    slice_flip_depth: Array  # uint8 (495 * 2048,) exact phase-1 depth of slice * 2048 + flip
    build_s: dict[str, float] = field(default_factory=dict)
    load_s: float = 0.0
    cache_dir: Path | None = None

    @property
    def nbytes(self) -> int:
        return sum(
            getattr(self, name).nbytes
            for name in self.__dataclass_fields__
            if isinstance(getattr(self, name), np.ndarray)
        )

    def search_arrays(self) -> tuple[Array, ...]:
        """The arrays in the order the C search takes them (see ``_twophase.c``)."""
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
            self.flipslice_classidx,
            self.flipslice_sym,
            self.corner_classidx,
            self.corner_sym,
            self.phase1_prun,
            self.phase2_prun,
            self.cornslice_depth,
            self.edgeslice_depth,
            self.slice_twist_depth,
            self.slice_flip_depth,
        )


def load_tables(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> TwoPhaseTables:
    """Load every table group from the cache, building (and saving) those that are missing,
    corrupt or of another format version.

    When both big pruning tables must be built, they are built at the same time in two worker
    processes (``workers``: default 2 when the machine has 2 or more cores; 1 builds everything
    in this process), which nearly halves the first build on a 2-core machine.
    """
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    report = progress or _no_progress
    start = time.perf_counter()
    build_s: dict[str, float] = {}
    arrays: dict[str, Array] = {}
    loaded: dict[str, dict[str, Array]] = {}
    for group in GROUPS:
        path = table_path(directory, group)
        if use_cache and path.exists():
            try:
                loaded[group] = _read_bundle(path, group)
            except (_Corrupt, OSError) as exc:
                log.warning("two-phase table %s is unusable (%s); rebuilding it", path, exc)
    if "moves" not in loaded:
        loaded["moves"] = _build_timed("moves", {}, report, build_s)
        _save(directory, "moves", loaded["moves"], use_cache)
    arrays.update(loaded["moves"])
    missing = [g for g in GROUPS if g not in loaded]
    big = [g for g in missing if g in ("phase1", "phase2")]
    n_workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    if len(big) == 2 and n_workers >= 2 and use_cache:
        loaded.update(_build_parallel(directory, big, report, build_s))
        for group in big:
            if group in loaded:
                _remove_stale(directory, group)
    for group in missing:
        if group not in loaded:
            loaded[group] = _build_timed(group, arrays, report, build_s)
            _save(directory, group, loaded[group], use_cache)
    for group in GROUPS:
        arrays.update(loaded[group])
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

    phase1_prun: Array  # uint8 packed 2-bit depth mod 3, flipslice class * 2187 + twist
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
    build_s: dict[str, float] = field(default_factory=dict)

    def search_arrays(self) -> tuple[Array, ...]:
        """The arrays in the order the C search takes them."""
        return (
            self.phase1_prun,
            self.phase2_depth,
            self.cornslice_depth,
            self.edgeslice_depth,
            self.slice_twist_depth,
            self.slice_flip_depth,
            self.twist_group_move,
            self.flip_group_move,
            self.slice_group_move,
        )


def load_axial_tables(
    base: TwoPhaseTables, *, progress: Progress | None = None, workers: int | None = None
) -> AxialTables:
    """The robot-metric tables next to ``base``'s in its cache (built there on first use, the
    two groups at once in worker processes: about a minute on 2 cores)."""
    directory = base.cache_dir or default_cache_dir()
    report = progress or _no_progress
    build_s: dict[str, float] = {}
    loaded: dict[str, dict[str, Array]] = {}
    for group in AXIAL_GROUPS:
        path = table_path(directory, group)
        if path.exists():
            try:
                loaded[group] = _read_bundle(path, group)
            except (_Corrupt, OSError) as exc:
                log.warning("two-phase table %s is unusable (%s); rebuilding it", path, exc)
    missing = [g for g in AXIAL_GROUPS if g not in loaded]
    n_workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    if len(missing) == 2 and n_workers >= 2 and table_path(directory, "moves").exists():
        loaded.update(_build_parallel(directory, missing, report, build_s))
        for group in missing:
            if group in loaded:
                _remove_stale(directory, group)
    if any(g not in loaded for g in AXIAL_GROUPS):
        arrays = {
            name: getattr(base, name)
            for name in base.__dataclass_fields__
            if isinstance(getattr(base, name), np.ndarray)
        }
        for group in AXIAL_GROUPS:
            if group not in loaded:
                loaded[group] = _build_timed(group, arrays, report, build_s)
                _save(directory, group, loaded[group], True)
    a1, a2 = loaded["axial1"], loaded["axial2"]
    return AxialTables(
        a1["axial1_prun"],
        a2["axial2_depth"],
        a2["axial_cornslice"],
        a2["axial_edgeslice"],
        a1["axial_slice_twist"],
        a1["axial_slice_flip"],
        _u16(_compose(base.twist_move)),
        _u16(_compose(base.flip_move)),
        _u16(_compose(_slice_move(base.slice_sorted_move))),
        build_s,
    )


def _builder(group: str) -> Callable[[dict[str, Array], Progress], dict[str, Array]]:
    return {
        "moves": lambda _a, p: _build_moves(p),
        "phase1": _build_phase1,
        "phase2": _build_phase2,
        "cornslice": _build_cornslice,
        "slicepair": _build_slicepair,
        "axial1": _build_axial1,
        "axial2": _build_axial2,
    }[group]


def _build_timed(
    group: str, arrays: dict[str, Array], report: Progress, build_s: dict[str, float]
) -> dict[str, Array]:
    t0 = time.perf_counter()
    out = _builder(group)(arrays, report)
    build_s[group] = time.perf_counter() - t0
    log.info("built two-phase table group %s in %.1f s", group, build_s[group])
    return out


def _save(directory: Path, group: str, arrays: dict[str, Array], use_cache: bool) -> None:
    if use_cache:
        _write_bundle(table_path(directory, group), group, arrays)
        _remove_stale(directory, group)


def _build_parallel(
    directory: Path, groups: list[str], report: Progress, build_s: dict[str, float]
) -> dict[str, dict[str, Array]]:
    """Build ``groups`` at the same time, each in a fresh
    ``python -m solver.engines.twophase.tables`` process that reads the saved move tables and
    writes its group to the cache (no fork, no re-import of the caller's main module); their
    progress lines are forwarded to ``report``.
    A group whose process fails is left out (the caller builds it in-process)."""
    import selectors
    import subprocess

    t0 = time.perf_counter()
    procs = {
        g: subprocess.Popen(
            [sys.executable, "-m", "solver.engines.twophase.tables", "build", g, str(directory)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for g in groups
    }
    sel = selectors.DefaultSelector()
    for g, proc in procs.items():
        assert proc.stdout is not None
        sel.register(proc.stdout, selectors.EVENT_READ, g)
    open_streams = len(procs)
    while open_streams:
        for key, _ in sel.select(timeout=1.0):
            line = key.fileobj.readline()  # type: ignore[union-attr]
            if not line:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4 and parts[0] == "progress":
                report(parts[1], int(parts[2]), int(parts[3]))
    out: dict[str, dict[str, Array]] = {}
    for g, proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode != 0:
            log.warning(
                "building %s in a worker process failed (%s); building it here", g, err[-500:]
            )
            continue
        try:
            out[g] = _read_bundle(table_path(directory, g), g)
        except (_Corrupt, OSError) as exc:
            log.warning("worker-built %s is unusable (%s); building it here", g, exc)
            continue
        build_s[g] = time.perf_counter() - t0
        log.info("built two-phase table group %s in %.1f s (worker process)", g, build_s[g])
    return out


def _main(argv: Sequence[str]) -> int:
    """``python -m solver.engines.twophase.tables build GROUP CACHE_DIR``: the worker of
    :func:`_build_parallel`."""
    if len(argv) != 3 or argv[0] != "build" or argv[1] not in GROUPS[1:] + AXIAL_GROUPS:
        sys.stderr.write("usage: python -m solver.engines.twophase.tables build GROUP CACHE_DIR\n")
        return 2
    group, directory = argv[1], Path(argv[2])

    def report(task: str, done: int, total: int) -> None:
        sys.stdout.write(f"progress\t{task}\t{done}\t{total}\n")
        sys.stdout.flush()

    moves = _read_bundle(table_path(directory, "moves"), "moves")
    _write_bundle(table_path(directory, group), group, _builder(group)(moves, report))
    return 0


# --- builders: move and symmetry tables -----------------------------------------------------


def _u16(a: Array) -> Array:
    out = np.asarray(a)
    assert out.min() >= 0 and out.max() < 65536
    return out.astype(np.uint16)


def _build_moves(report: Progress) -> dict[str, Array]:
    steps = 10
    report("move tables", 0, steps)
    mcp, mco, mep, meo = C.move_arrays()
    scp, sco, sep, seo = C.sym_arrays()
    sinv = C.sym_inverse()

    def corner_table(cp: Array, co: Array, getter: Callable[[Array, Array], Array]) -> Array:
        out = np.empty((len(cp), C.N_MOVE), dtype=np.int64)
        for m in range(C.N_MOVE):
            ncp, nco = C.corner_multiply(cp, co, mcp[m : m + 1], mco[m : m + 1])
            out[:, m] = getter(ncp, nco)
        return out

    def edge_table(ep: Array, eo: Array, getter: Callable[[Array, Array], Array]) -> Array:
        out = np.empty((len(ep), C.N_MOVE), dtype=np.int64)
        for m in range(C.N_MOVE):
            nep, neo = C.edge_multiply(ep, eo, mep[m : m + 1], meo[m : m + 1])
            out[:, m] = getter(nep, neo)
        return out

    def zeros(n: int, k: int) -> Array:
        return np.zeros((n, k), dtype=np.int64)

    def ident(n: int, k: int) -> Array:
        return np.tile(np.arange(k, dtype=np.int64), (n, 1))

    twist_move = corner_table(
        ident(C.N_TWIST, 8), C.set_twist(np.arange(C.N_TWIST)), lambda cp, co: C.twist_of(co)
    )
    report("move tables", 1, steps)
    flip_move = edge_table(
        ident(C.N_FLIP, 12), C.set_flip(np.arange(C.N_FLIP)), lambda ep, eo: C.flip_of(eo)
    )
    report("move tables", 2, steps)
    four: dict[str, Array] = {}
    for name, edges in (
        ("slice_sorted", C.SLICE_EDGES),
        ("u_edges", C.U_EDGES),
        ("d_edges", C.D_EDGES),
    ):
        four[name] = edge_table(
            C.set_four_edges(np.arange(C.N_SLICE_SORTED), edges),
            zeros(C.N_SLICE_SORTED, 12),
            lambda ep, eo, e=edges: C.four_edges_of(ep, e),  # type: ignore[misc]
        )
    report("move tables", 3, steps)
    corners_move = corner_table(
        C.set_corners(np.arange(C.N_CORNERS)),
        zeros(C.N_CORNERS, 8),
        lambda cp, co: C.corners_of(cp),
    )
    report("move tables", 4, steps)
    ud_edges_move = np.full((C.N_UD_EDGES, C.N_MOVE), 65535, dtype=np.int64)
    ep0 = C.set_ud_edges(np.arange(C.N_UD_EDGES))
    for m in C.PHASE2_MOVES:
        nep, _ = C.edge_multiply(ep0, zeros(len(ep0), 12), mep[m : m + 1], meo[m : m + 1])
        ud_edges_move[:, m] = C.ud_edges_of(nep)
    report("move tables", 5, steps)

    # conjugation S x S^-1 for the 16 UD symmetries
    def conj_corners(cp: Array, co: Array, s: int) -> tuple[Array, Array]:
        a = C.corner_multiply(scp[s : s + 1], sco[s : s + 1], cp, co)
        t = sinv[s]
        return C.corner_multiply(a[0], a[1], scp[t : t + 1], sco[t : t + 1])

    def conj_edges(ep: Array, eo: Array, s: int) -> tuple[Array, Array]:
        a = C.edge_multiply(sep[s : s + 1], seo[s : s + 1], ep, eo)
        t = sinv[s]
        return C.edge_multiply(a[0], a[1], sep[t : t + 1], seo[t : t + 1])

    twist_conj = np.empty((C.N_TWIST, C.N_SYM_D4H), dtype=np.int64)
    tw_co = C.set_twist(np.arange(C.N_TWIST))
    for s in range(C.N_SYM_D4H):
        _, co = conj_corners(ident(C.N_TWIST, 8), tw_co, s)
        twist_conj[:, s] = C.twist_of(co)
    ud_edges_conj = np.empty((C.N_UD_EDGES, C.N_SYM_D4H), dtype=np.int64)
    for s in range(C.N_SYM_D4H):
        ep, _ = conj_edges(ep0, zeros(len(ep0), 12), s)
        ud_edges_conj[:, s] = C.ud_edges_of(ep)
    report("move tables", 6, steps)

    # flipslice classes: raw x = slice * 2048 + flip; conj[x, s] = S x S^-1, computed with cubies
    # for the three generators (s = 1 mirror, 2 U4, 8 F2) and composed for the others, since
    # s = 8*f2 + 2*u4 + lr2 means S = F2^f2 U4^u4 LR2^lr2.
    raw = np.arange(C.N_FLIPSLICE)
    ep = C.set_four_edges((raw // C.N_FLIP) * 24, C.SLICE_EDGES)
    eo = C.set_flip(raw % C.N_FLIP)
    gen = {}
    for s in (1, 2, 8):
        nep, neo = conj_edges(ep, eo, s)
        gen[s] = (C.four_edges_of(nep, C.SLICE_EDGES) // 24) * C.N_FLIP + C.flip_of(neo)
    del ep, eo
    fs_conj = _compose_conj(raw, gen)
    report("move tables", 7, steps)
    fs_classidx, fs_sym, fs_rep = _classes(fs_conj, C.N_FLIPSLICE_CLASS)
    fs_stab = _stabilisers(fs_conj[fs_rep])
    del fs_conj
    report("move tables", 8, steps)
    cp_all = C.set_corners(np.arange(C.N_CORNERS))
    c_conj = np.empty((C.N_CORNERS, C.N_SYM_D4H), dtype=np.int64)
    for s in range(C.N_SYM_D4H):
        ncp, _ = conj_corners(cp_all, zeros(C.N_CORNERS, 8), s)
        c_conj[:, s] = C.corners_of(ncp)
    c_classidx, c_sym, c_rep = _classes(c_conj, C.N_CORNER_CLASS)
    c_stab = _stabilisers(c_conj[c_rep])
    report("move tables", 9, steps)

    conj_move = np.empty((C.N_SYM, C.N_MOVE), dtype=np.int64)
    for s in range(C.N_SYM):
        t = sinv[s]
        a_cp, a_co = C.corner_multiply(scp[s : s + 1], sco[s : s + 1], mcp, mco)
        a_cp, a_co = C.corner_multiply(a_cp, a_co, scp[t : t + 1], sco[t : t + 1])
        a_ep, a_eo = C.edge_multiply(sep[s : s + 1], seo[s : s + 1], mep, meo)
        a_ep, a_eo = C.edge_multiply(a_ep, a_eo, sep[t : t + 1], seo[t : t + 1])
        match = (
            (a_cp[:, None, :] == mcp[None]).all(2)
            & (a_co[:, None, :] == mco[None]).all(2)
            & (a_ep[:, None, :] == mep[None]).all(2)
            & (a_eo[:, None, :] == meo[None]).all(2)
        )
        assert (match.sum(1) == 1).all(), "a symmetry does not map face turns to face turns"
        conj_move[s] = match.argmax(1)
    report("move tables", steps, steps)
    return {
        "twist_move": _u16(twist_move),
        "flip_move": _u16(flip_move),
        "slice_sorted_move": _u16(four["slice_sorted"]),
        "u_edges_move": _u16(four["u_edges"]),
        "d_edges_move": _u16(four["d_edges"]),
        "corners_move": _u16(corners_move),
        "ud_edges_move": _u16(ud_edges_move),
        "ud_from_u_d": _u16(_ud_table()),
        "twist_conj": _u16(twist_conj),
        "ud_edges_conj": _u16(ud_edges_conj),
        "flipslice_classidx": _u16(fs_classidx),
        "flipslice_sym": fs_sym.astype(np.uint8),
        "flipslice_rep": fs_rep.astype(np.uint32),
        "flipslice_stab": _u16(fs_stab),
        "corner_classidx": _u16(c_classidx),
        "corner_sym": c_sym.astype(np.uint8),
        "corner_rep": _u16(c_rep),
        "corner_stab": _u16(c_stab),
        "conj_move": conj_move.astype(np.uint8),
    }


def _ud_table() -> Array:
    t = C.ud_edges_from_u_d()
    return np.where(t < 0, 65535, t)


def _compose_conj(raw: Array, gen: dict[int, Array]) -> Array:
    """All 16 conjugation columns from the generators' (1 = LR2, 2 = U4, 8 = F2)."""
    out = np.empty((len(raw), C.N_SYM_D4H), dtype=np.int64)
    for s in range(C.N_SYM_D4H):
        f2, u4, lr2 = s // 8, (s // 2) % 4, s % 2
        x = raw
        for _ in range(lr2):
            x = gen[1][x]
        for _ in range(u4):
            x = gen[2][x]
        for _ in range(f2):
            x = gen[8][x]
        out[:, s] = x
    return out


def _classes(conj: Array, expected: int) -> tuple[Array, Array, Array]:
    """Symmetry classes from a conjugation table ``conj[x, s]``: the representative of ``x`` is
    the smallest member of its orbit; ``sym[x]`` is a symmetry with ``S x S^-1 = rep``."""
    rep_of = conj.min(axis=1)
    sym = conj.argmin(axis=1)
    reps = np.unique(rep_of)
    if len(reps) != expected:
        raise AssertionError(f"{len(reps)} symmetry classes, expected {expected}")
    classidx = np.searchsorted(reps, rep_of)
    return classidx, sym, reps


# --- builders: pruning tables ---------------------------------------------------------------


def _stabilisers(conj_of_reps: Array) -> Array:
    """Bit mask per class of the symmetries that fix its representative."""
    fixed = conj_of_reps == conj_of_reps[:, :1]
    masks: Array = (fixed * (1 << np.arange(C.N_SYM_D4H))).sum(axis=1)
    return masks


def _chunks(a: Array, size: int = _CHUNK) -> Iterator[Array]:
    for i in range(0, len(a), size):
        yield a[i : i + size]


def _sym_bfs(
    task: str,
    n_class: int,
    n_raw: int,
    class_move: Array,
    class_sym: Array,
    raw_move: Array,
    raw_conj: Array,
    stab: Array,
    moves: Sequence[int],
    report: Progress,
) -> Array:
    """Breadth-first distances over (symmetry class, raw coordinate) pairs.

    Entry ``c * n_raw + r`` is the state whose first coordinate is class ``c``'s representative
    and whose second is ``r``. Moving it by ``m`` gives class ``class_move[c, m]`` reached with
    symmetry ``s = class_sym[c, m]`` and second coordinate ``raw_conj[raw_move[r, m], s]``.
    Levels expand forwards while the frontier is small and backwards (each unvisited entry
    looks for a neighbour in the frontier) once the unvisited entries are fewer.
    """
    total = n_class * n_raw
    depth = np.full(total, _UNSET, dtype=np.uint8)
    # neighbour of entry (c, r) by move k:  cm[k][c] + rs[k][cs[k][c] + r]  (all int32; the
    # largest index, 140,908,410, fits)
    cm = [(class_move[:, m].astype(np.int64) * n_raw).astype(np.int32) for m in moves]
    cs = [(class_sym[:, m].astype(np.int64) * n_raw).astype(np.int32) for m in moves]
    conj = np.asarray(raw_conj, dtype=np.int64)
    rs = [
        np.ascontiguousarray(conj[np.asarray(raw_move[:, m], dtype=np.int64)].T)
        .reshape(-1)
        .astype(np.int32)
        for m in moves
    ]
    rconj = conj.reshape(-1).astype(np.int32)
    nontrivial = np.flatnonzero(stab != 1)
    stab_nt = stab[nontrivial]
    depth[0] = 0  # class 0 holds the solved first coordinate (its orbit's smallest value is 0)
    done = 1
    d = 0
    report(task, 0, total)
    while done < total:
        unvisited = total - done
        frontier = np.flatnonzero(depth == d)
        if len(frontier) == 0:
            raise AssertionError(f"{task}: {unvisited} states unreachable")
        if unvisited < 3 * len(frontier):
            for chunk in _chunks(np.flatnonzero(depth == _UNSET)):
                c = (chunk // n_raw).astype(np.int32)
                r = (chunk - c * n_raw).astype(np.int32)
                found = np.zeros(len(chunk), dtype=bool)
                live = np.arange(len(chunk))
                for k in range(len(moves)):
                    cc, rr = c[live], r[live]
                    idx = cm[k][cc] + rs[k][cs[k][cc] + rr]
                    hit = depth[idx] == d
                    found[live[hit]] = True
                    live = live[~hit]
                    if len(live) == 0:
                        break
                depth[chunk[found]] = d + 1
        else:
            for chunk in _chunks(frontier):
                c = (chunk // n_raw).astype(np.int32)
                r = (chunk - c * n_raw).astype(np.int32)
                for k in range(len(moves)):
                    idx = cm[k][c] + rs[k][cs[k][c] + r]
                    depth[idx[depth[idx] == _UNSET]] = d + 1
        # states equivalent to a new one under a symmetry fixing its class representative
        new = np.flatnonzero(depth == d + 1)
        cls = new // n_raw
        pick = np.isin(cls, nontrivial)
        if pick.any():
            cn, rn = cls[pick], new[pick] - cls[pick] * n_raw
            masks = stab_nt[np.searchsorted(nontrivial, cn)]
            for s in range(1, C.N_SYM_D4H):
                sel = (masks >> s) & 1 == 1
                idx = cn[sel] * n_raw + rconj[rn[sel] * C.N_SYM_D4H + s].astype(np.int64)
                depth[idx[depth[idx] == _UNSET]] = d + 1
            new = np.flatnonzero(depth == d + 1)
        done += len(new)
        d += 1
        log.debug("%s: depth %d has %d entries", task, d, len(new))
        report(task, done, total)
    return depth


def _pack_mod3(depth: Array) -> Array:
    n = len(depth)
    pad = (-n) % 4
    d3 = np.concatenate([depth % 3, np.zeros(pad, dtype=np.uint8)]).reshape(-1, 4)
    packed: Array = (d3[:, 0] | (d3[:, 1] << 2) | (d3[:, 2] << 4) | (d3[:, 3] << 6)).astype(
        np.uint8
    )
    return packed


def _pack_nibbles(depth: Array) -> Array:
    """Exact depths, 4 bits each (entry i in the low half of byte i // 2 when i is even), 15
    standing for 15 or more."""
    d = np.minimum(depth, 15).astype(np.uint8)
    if len(d) % 2:
        d = np.concatenate([d, np.zeros(1, dtype=np.uint8)])
    pairs = d.reshape(-1, 2)
    packed: Array = (pairs[:, 0] | (pairs[:, 1] << 4)).astype(np.uint8)
    return packed


def _build_phase1(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    rep = a["flipslice_rep"].astype(np.int64)
    slc, flp = rep // C.N_FLIP, rep % C.N_FLIP
    ssm = a["slice_sorted_move"].astype(np.int64)
    fm = a["flip_move"].astype(np.int64)
    raw_new = (ssm[slc * 24] // 24) * C.N_FLIP + fm[flp]  # (64430, 18)
    class_move = a["flipslice_classidx"][raw_new]
    class_sym = a["flipslice_sym"][raw_new]
    stab = a["flipslice_stab"].astype(np.int64)
    depth = _sym_bfs(
        "phase 1 pruning",
        C.N_FLIPSLICE_CLASS,
        C.N_TWIST,
        class_move,
        class_sym,
        a["twist_move"],
        a["twist_conj"],
        stab,
        range(C.N_MOVE),
        report,
    )
    return {"phase1_prun": _pack_mod3(depth)}


def _build_phase2(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    rep = a["corner_rep"].astype(np.int64)
    cmv = a["corners_move"].astype(np.int64)
    raw_new = cmv[rep]  # (2768, 18)
    class_move = a["corner_classidx"][raw_new]
    class_sym = a["corner_sym"][raw_new]
    depth = _sym_bfs(
        "phase 2 pruning",
        C.N_CORNER_CLASS,
        C.N_UD_EDGES,
        class_move,
        class_sym,
        a["ud_edges_move"],
        a["ud_edges_conj"],
        a["corner_stab"].astype(np.int64),
        C.PHASE2_MOVES,
        report,
    )
    return {"phase2_prun": _pack_mod3(depth)}


def _build_cornslice(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    """Exact phase-2 depths of corners x slice order and of ud_edges x slice order (small
    tables that reject most phase-2 starts before the big table is walked)."""
    total = C.N_CORNERS * 24
    report("phase 2 slice tables", 0, 2 * total)
    smv = a["slice_sorted_move"].astype(np.int64)
    out = {}
    for k, (name, mv) in enumerate(
        (("cornslice_depth", a["corners_move"]), ("edgeslice_depth", a["ud_edges_move"]))
    ):
        table = mv.astype(np.int64)
        depth = np.full(total, _UNSET, dtype=np.uint8)
        depth[0] = 0
        d = 0
        frontier = np.array([0], dtype=np.int64)
        while len(frontier):
            c, s = frontier // 24, frontier % 24
            for m in C.PHASE2_MOVES:
                idx = table[c, m] * 24 + smv[s, m]
                depth[idx[depth[idx] == _UNSET]] = d + 1
            d += 1
            frontier = np.flatnonzero(depth == d)
        assert (depth != _UNSET).all()
        out[name] = depth
        report("phase 2 slice tables", (k + 1) * total, 2 * total)
    return out


def _build_slicepair(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    """Exact phase-1 depths of slice x twist and slice x flip (1 MB each): they reject most
    children before the big phase-1 table is read."""
    report("phase 1 slice tables", 0, 2)
    sm = _slice_move(a["slice_sorted_move"])
    out = {"slice_twist_depth": _exact_pair_bfs(sm, C.N_SLICE, a["twist_move"], C.N_TWIST)}
    report("phase 1 slice tables", 1, 2)
    out["slice_flip_depth"] = _exact_pair_bfs(sm, C.N_SLICE, a["flip_move"], C.N_FLIP)
    report("phase 1 slice tables", 2, 2)
    return out


def _compose(table: Array, moves: Sequence[int] | None = None) -> Array:
    """A move table ``(n, 18)`` extended to the 45 robot groups (columns ``moves`` only; the
    others are 65535)."""
    t = np.asarray(table, dtype=np.int64)
    n = t.shape[0]
    out = np.full((n, C.N_AXIAL), 65535, dtype=np.int64)
    base = np.arange(n)
    for k in range(C.N_AXIAL) if moves is None else moves:
        m1, m2 = C.AXIAL_MOVES[k]
        x = base if m1 < 0 else t[base, m1]
        if m2 >= 0:
            x = t[x, m2]
        out[:, k] = x
    return out


def _slice_move(slice_sorted_move: Array) -> Array:
    """The move table ``(495, 18)`` of the slice position alone."""
    table: Array = slice_sorted_move.astype(np.int64)[np.arange(C.N_SLICE) * 24] // 24
    return table


def _build_axial1(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    rep = a["flipslice_rep"].astype(np.int64)
    sm = _compose(_slice_move(a["slice_sorted_move"]))
    fm = _compose(a["flip_move"])
    raw_new = sm[rep // C.N_FLIP] * C.N_FLIP + fm[rep % C.N_FLIP]
    depth = _sym_bfs(
        "robot phase 1 pruning",
        C.N_FLIPSLICE_CLASS,
        C.N_TWIST,
        a["flipslice_classidx"][raw_new],
        a["flipslice_sym"][raw_new],
        _compose(a["twist_move"]),
        a["twist_conj"],
        a["flipslice_stab"].astype(np.int64),
        range(C.N_AXIAL),
        report,
    )
    tm = _compose(a["twist_move"])
    return {
        "axial1_prun": _pack_mod3(depth),
        "axial_slice_twist": _exact_pair_bfs(sm, C.N_SLICE, tm, C.N_TWIST),
        "axial_slice_flip": _exact_pair_bfs(sm, C.N_SLICE, fm, C.N_FLIP),
    }


def _exact_pair_bfs(a_move: Array, n_a: int, b_move: Array, n_b: int) -> Array:
    """Exact depths of (a * n_b + b) for two phase-1 coordinates under the moves (columns) of
    their move tables: face turns or groups (small, cache-friendly lower bounds tried before
    the big table)."""
    a_move = np.asarray(a_move, dtype=np.int64)
    b_move = np.asarray(b_move, dtype=np.int64)
    depth = np.full(n_a * n_b, _UNSET, dtype=np.uint8)
    depth[0] = 0
    d = 0
    frontier = np.array([0], dtype=np.int64)
    while len(frontier):
        x, y = frontier // n_b, frontier % n_b
        for m in range(a_move.shape[1]):
            idx = a_move[x, m] * n_b + b_move[y, m]
            depth[idx[depth[idx] == _UNSET]] = d + 1
        d += 1
        frontier = np.flatnonzero(depth == d)
    assert (depth != _UNSET).all()
    return depth


def _build_axial2(a: dict[str, Array], report: Progress) -> dict[str, Array]:
    moves = C.PHASE2_AXIAL
    cm = _compose(a["corners_move"], moves)
    um = _compose(a["ud_edges_move"], moves)
    sm = _compose(a["slice_sorted_move"][:24], moves)
    raw_new = cm[a["corner_rep"].astype(np.int64)]
    depth = _sym_bfs(
        "robot phase 2 pruning",
        C.N_CORNER_CLASS,
        C.N_UD_EDGES,
        a["corner_classidx"][np.where(raw_new == 65535, 0, raw_new)],
        a["corner_sym"][np.where(raw_new == 65535, 0, raw_new)],
        um,
        a["ud_edges_conj"],
        a["corner_stab"].astype(np.int64),
        moves,
        report,
    )
    out = {"axial2_depth": _pack_nibbles(depth)}
    for name, table in (("axial_cornslice", cm), ("axial_edgeslice", um)):
        out[name] = _exact_slice_bfs(table, sm, moves)
    return out


def _exact_slice_bfs(table: Array, slice_move: Array, moves: Sequence[int]) -> Array:
    """Exact depths of (coordinate * 24 + slice order) under ``moves`` (phase 2)."""
    total = table.shape[0] * 24
    depth = np.full(total, _UNSET, dtype=np.uint8)
    depth[0] = 0
    d = 0
    frontier = np.array([0], dtype=np.int64)
    while len(frontier):
        c, s = frontier // 24, frontier % 24
        for m in moves:
            idx = table[c, m] * 24 + slice_move[s, m]
            depth[idx[depth[idx] == _UNSET]] = d + 1
        d += 1
        frontier = np.flatnonzero(depth == d)
    assert (depth != _UNSET).all()
    return depth


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
