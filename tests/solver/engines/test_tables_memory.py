"""Tables that fit a small computer: breadth-first passes in spans, tables mapped rather than
copied, workers sized by memory, the whole cache built ahead of time, one progress line per
table."""

from __future__ import annotations

import io
import mmap
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from solver.engines.twophase import tables as T
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.tables import bfs, loader
from solver.engines.twophase.tables.bfs import (
    exact_bfs,
    pack_axes,
    pack_mod3,
    pack_nibbles,
    sym_bfs,
)
from solver.engines.twophase.tables.cache import read_bundle
from solver.engines.twophase.tables.progress import TaskLines, stderr_progress
from solver.engines.twophase.tables.worker import build_parallel

SMALL = ("cornslice", "slicepair")


def _tables(path: Path, group: str) -> dict[str, np.ndarray]:
    """The arrays of a cache file, copied out of its mapping (the shared cache may predate
    the header's own CRC, so headers are not compared, and a file of an earlier cuberobot may
    hold arrays that are no longer written: a rebuild must give the ones it writes alike)."""
    return {name: np.array(a) for name, a in read_bundle(path, group).items()}


def _rebuilt_alike(path: Path, group: str, before: dict[str, np.ndarray]) -> bool:
    after = _tables(path, group)
    return all(
        name in before and before[name].dtype == a.dtype and np.array_equal(before[name], a)
        for name, a in after.items()
    )


@pytest.fixture()
def face_cache(tmp_path: Path) -> Path:
    """The face-turn groups of the real cache, copied (tests delete some to rebuild them)."""
    source = get_solver().tables.cache_dir
    assert source is not None
    (tmp_path / "twophase").mkdir()
    for group in T.GROUPS:
        shutil.copy(T.table_path(source, group), T.table_path(tmp_path, group))
    return tmp_path


def _cycles(n_a: int, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Move tables of two cycles, each move one step of one of them."""
    a_move = np.array([[(x + 1) % n_a, (x - 1) % n_a, x, x] for x in range(n_a)])
    b_move = np.array([[y, y, (y + 1) % n_b, (y - 1) % n_b] for y in range(n_b)])
    return a_move, b_move


@pytest.mark.parametrize("ratio", [0, 3, 1000], ids=["forwards", "default", "backwards"])
def test_sym_bfs_matches_a_plain_search(monkeypatch: pytest.MonkeyPatch, ratio: int) -> None:
    """Classes with no symmetry but the identity reduce ``sym_bfs`` to a plain breadth-first
    search, whether the levels expand forwards, backwards or as chosen; class 0's stabiliser
    (identity and a reflection of the second cycle, which keeps distances) runs the closure."""
    monkeypatch.setattr(bfs, "_BACKWARD_RATIO", ratio)
    a_move, b_move = _cycles(7, 6)
    conj = np.tile(np.arange(6)[:, None], (1, 16))
    conj[:, 1] = (-np.arange(6)) % 6
    stab = np.ones(7, dtype=np.int64)
    stab[0] = 0b11
    depth = sym_bfs(
        "toy", 7, 6, a_move, np.zeros_like(a_move), b_move, conj, stab, range(4), lambda *a: None
    )
    assert depth.tolist() == exact_bfs(a_move, b_move, 6).tolist()


def test_sym_bfs_closes_a_level_under_a_stabiliser() -> None:
    """A move that reaches only one member of an orbit of class 0's stabiliser: the closure
    gives the other member the same depth (a plain search would find it a level later)."""
    a_move = np.zeros((1, 1), dtype=np.int64)  # one class, which every move keeps
    b_move = np.array([[1], [2], [0]])  # raw 0 -> 1 -> 2 -> 0
    conj = np.tile(np.arange(3)[:, None], (1, 16))
    conj[:, 1] = [0, 2, 1]  # symmetry 1 swaps raw 1 and 2
    stab = np.array([0b11])
    depth = sym_bfs("toy", 1, 3, a_move, a_move, b_move, conj, stab, [0], lambda *a: None)
    assert depth.tolist() == [0, 1, 1]


def test_bfs_level_refuses_arrays_of_the_wrong_size() -> None:
    from solver.engines.twophase._twophase import bfs_level

    depth = np.zeros(6, dtype=np.uint8)
    cm = np.zeros((1, 2), dtype=np.int32)
    cs = np.zeros((1, 2), dtype=np.uint8)
    rm = np.zeros((3, 2), dtype=np.int32)
    conj = np.zeros((3, 16), dtype=np.int32)
    stab = np.ones(1, dtype=np.uint16)
    with pytest.raises(ValueError, match="sizes do not match"):
        bfs_level(depth, 0, False, cm, cs, rm, conj, stab, 3)  # depth of 6, not 1 * 3


def test_down_axes_refuses_arrays_of_the_wrong_size_and_axes_beyond_two() -> None:
    from solver.engines.twophase._twophase import down_axes

    depth = np.zeros(6, dtype=np.uint8)
    cm = np.zeros((2, 2), dtype=np.int32)
    cs = np.zeros((2, 2), dtype=np.uint8)
    rm = np.zeros((3, 2), dtype=np.int32)
    conj = np.zeros((3, 16), dtype=np.int32)
    axes = np.zeros(2, dtype=np.uint8)
    down_axes(depth, cm, cs, rm, conj, 3, axes)  # the right sizes
    with pytest.raises(ValueError, match="sizes do not match"):
        down_axes(depth, cm, cs, rm, conj, 2, axes)  # 3 classes of 2, the tables hold 2 of 3
    with pytest.raises(ValueError, match="sizes do not match"):
        down_axes(depth, cm, cs, rm, conj, 3, np.array([0, 3], dtype=np.uint8))
    depth[4] = 255  # an entry the breadth-first search never reached
    with pytest.raises(ValueError, match="1 entries hold no depth"):
        down_axes(depth, cm, cs, rm, conj, 3, axes)


def test_axes_of_the_nearer_moves_on_a_torus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 7-cycle of classes (moves 0 and 1, axis 0) times a 6-cycle (moves 2 and 3, axis 2):
    an entry off both zeros has nearer moves on both axes (code 3), one on a single cycle's
    zero only on the other's axis; packed in spans (nibbles: residue, code)."""
    monkeypatch.setattr(bfs, "_CHUNK", 8)
    a_move, b_move = _cycles(7, 6)
    conj = np.tile(np.arange(6)[:, None], (1, 16))
    stab = np.ones(7, dtype=np.int64)
    cs = np.zeros_like(a_move)
    depth = sym_bfs("toy", 7, 6, a_move, cs, b_move, conj, stab, range(4), lambda *a: None)
    exact = depth.copy()
    packed = pack_axes(depth, a_move, cs, b_move, conj, 6, [0, 0, 2, 2])
    for a in range(7):
        for b in range(6):
            i = a * 6 + b
            v = (int(packed[i >> 1]) >> (4 * (i & 1))) & 15
            code = 3 if (a == 0) == (b == 0) else (2 if a == 0 else 0)
            assert (v & 3, v >> 2) == (int(exact[i]) % 3, code), (a, b)


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("length", [1, 37, 64, 101])
def test_packing_in_spans_matches_the_formula(
    monkeypatch: pytest.MonkeyPatch, length: int, in_place: bool
) -> None:
    monkeypatch.setattr(bfs, "_CHUNK", 8)
    depth = np.random.default_rng(length).integers(0, 20, length).astype(np.uint8)
    mod3 = np.zeros(4 * ((length + 3) // 4), dtype=np.uint8)
    mod3[:length] = depth % 3
    q = mod3.reshape(-1, 4)
    packed = pack_mod3(depth.copy(), in_place=in_place)
    assert packed.tolist() == (q[:, 0] | q[:, 1] << 2 | q[:, 2] << 4 | q[:, 3] << 6).tolist()
    nib = np.zeros(2 * ((length + 1) // 2), dtype=np.uint8)
    nib[:length] = np.minimum(depth, 15)
    packed = pack_nibbles(depth.copy(), in_place=in_place)
    assert packed.tolist() == (nib[0::2] | nib[1::2] << 4).tolist()


def test_tables_are_read_only_views_of_a_mapped_file(face_cache: Path) -> None:
    arrays = read_bundle(T.table_path(face_cache, "slicepair"), "slicepair")
    for arr in arrays.values():
        assert not arr.flags.writeable
        base: object = arr
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


@pytest.mark.parametrize(
    ("memory_mb", "most"),
    [(100, 1), (loader.RESERVE_MB + loader.WORKER_MB, 1), (16_000, loader.MAX_WORKERS)],
)
def test_workers_follow_available_memory(memory_mb: int, most: int) -> None:
    assert 1 <= loader.default_workers(memory_mb) <= most
    if memory_mb < loader.RESERVE_MB + 2 * loader.WORKER_MB:
        assert loader.default_workers(memory_mb) == 1


def test_available_memory_is_read() -> None:
    mb = loader.available_mb()
    assert mb is None or mb > 0


def test_one_worker_builds_groups_in_turn(face_cache: Path) -> None:
    originals = {g: _tables(T.table_path(face_cache, g), g) for g in SMALL}
    for g in SMALL:
        T.table_path(face_cache, g).unlink()
    calls: list[tuple[str, int, int]] = []
    build_s: dict[str, float] = {}
    out = build_parallel(face_cache, list(SMALL), lambda *a: calls.append(a), build_s, workers=1)
    assert set(out) == set(build_s) == set(SMALL)
    for g in SMALL:
        assert _rebuilt_alike(T.table_path(face_cache, g), g, originals[g])
    assert {c[0] for c in calls} == {"phase 2 slice tables", "phase 1 slice tables"}


def test_build_all_builds_what_is_missing(face_cache: Path) -> None:
    originals = {g: _tables(T.table_path(face_cache, g), g) for g in SMALL}
    for g in SMALL:
        T.table_path(face_cache, g).unlink()
    assert set(T.build_all(face_cache, workers=2)) == set(SMALL)
    for g in SMALL:
        assert _rebuilt_alike(T.table_path(face_cache, g), g, originals[g])
    assert T.build_all(face_cache) == {}


def _lines(text: str) -> list[str]:
    return text.split("\n")


def test_terminal_display_gives_each_table_its_own_line() -> None:
    out = io.StringIO()
    report = TaskLines(out, live=True)
    report("phase 1 pruning", 0, 100)
    report("phase 2 pruning", 0, 100)
    report("phase 1 pruning", 100, 100)
    report("phase 2 pruning", 100, 100)
    text = out.getvalue()
    first = _lines(text)[:3]
    assert first[0] == "building two-phase tables:"
    assert first[1].startswith("phase 1 pruning") and first[2].startswith("phase 2 pruning")
    # each redraw moves up to its own task's line: 2 lines for the first, 1 for the second
    redraws = re.findall(r"\x1b\[(\d)A\r(phase \d)", text)
    assert redraws == [("2", "phase 1"), ("1", "phase 2")]


def test_plain_display_writes_a_line_per_stage() -> None:
    out = io.StringIO()
    report = TaskLines(out, live=False)
    for done in (0, 50, 100, 100):
        report("phase 1 pruning", done, 100)
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert len(lines) == 2
    assert lines[0] == "building two-phase tables: phase 1 pruning ..."
    assert re.fullmatch(r"building two-phase tables: phase 1 pruning done in \d+\.\d s", lines[1])


def test_stderr_progress_without_a_terminal_is_plain(capsys: pytest.CaptureFixture[str]) -> None:
    report = stderr_progress()
    report("move tables", 0, 10)
    report("move tables", 10, 10)
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "\x1b" not in err
