"""The table cache: versioned names, verified on load, rebuilt when missing or corrupt."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from solver.engines.twophase import coord as C
from solver.engines.twophase import tables as T
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.tables.bfs import exact_bfs
from solver.engines.twophase.tables.builders import compose, slice_move
from solver.engines.twophase.tables.cache import MAGIC, Corrupt, read_bundle, write_bundle
from solver.engines.twophase.tables.loader import load_or_build
from solver.engines.twophase.tables.worker import build_parallel, main


@pytest.fixture(scope="module")
def cache_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the real cache (built on first use), so tests can damage it."""
    source = get_solver().tables.cache_dir
    assert source is not None
    target = tmp_path_factory.mktemp("cache")
    shutil.copytree(source / "twophase", target / "twophase")
    return target


def _damage_truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _damage_flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1000] ^= 0x40
    path.write_bytes(bytes(data))


def _damage_old_format(path: Path) -> None:
    data = path.read_bytes()
    hlen = int.from_bytes(data[8:12], "little")
    header = json.loads(data[12 : 12 + hlen])
    header["format"] = T.FORMAT_VERSION - 1
    new = json.dumps(header).encode()
    path.write_bytes(data[:8] + len(new).to_bytes(4, "little") + new + data[12 + hlen :])


def _damage_header_shape(path: Path) -> None:
    """The tester's edit: one array's length in the JSON header, 967680 -> 967679."""
    data = path.read_bytes()
    assert b"967680" in data[:4096]
    path.write_bytes(data.replace(b"967680", b"967679", 1))


def _damage_garbage(path: Path) -> None:
    path.write_bytes(b"not a table at all")


def test_file_names_carry_the_format_version(cache_copy: Path) -> None:
    for group in T.GROUPS:
        path = T.table_path(cache_copy, group)
        assert path.exists()
        assert f"-v{T.FORMAT_VERSION}-" in path.name


def test_load_from_cache_builds_nothing(cache_copy: Path) -> None:
    tables = T.load_tables(cache_copy)
    assert tables.build_s == {}
    assert tables.load_s < 5.0
    reference = get_solver().tables
    for a, b in zip(tables.search_arrays(), reference.search_arrays(), strict=True):
        assert np.array_equal(a, b)


def _payload(data: bytes) -> bytes:
    """The table bytes of a cache file (after its magic, header length and header)."""
    start = len(MAGIC) + 4
    return data[start + int.from_bytes(data[len(MAGIC) : start], "little") :]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_damage_truncate, id="truncated"),
        pytest.param(_damage_flip_byte, id="corrupted-byte"),
        pytest.param(_damage_old_format, id="other-format-version"),
        pytest.param(_damage_garbage, id="garbage"),
        pytest.param(_damage_header_shape, id="header-shape-edited"),
        pytest.param(lambda p: p.unlink(), id="missing"),
    ],
)
def test_damaged_file_is_rebuilt(
    cache_copy: Path, damage: object, caplog: pytest.LogCaptureFixture
) -> None:
    path = T.table_path(cache_copy, "cornslice")
    original = path.read_bytes()
    assert callable(damage)
    damage(path)
    calls: list[tuple[str, int, int]] = []
    tables = T.load_tables(cache_copy, progress=lambda *a: calls.append(a))
    assert set(tables.build_s) == {"cornslice"}
    assert calls and calls[-1][1] == calls[-1][2]  # progress reached its total
    assert _payload(path.read_bytes()) == _payload(original)  # the rebuild is bit-identical
    assert np.array_equal(tables.cornslice_depth, get_solver().tables.cornslice_depth)


def test_stale_versions_are_removed(cache_copy: Path) -> None:
    stale = cache_copy / "twophase" / "twophase-v0-cornslice.bin"
    stale.write_bytes(b"old")
    T.table_path(cache_copy, "cornslice").unlink()
    T.load_tables(cache_copy)
    assert not stale.exists()


def test_the_replaced_phase1_file_is_removed_with_the_stale_ones(tmp_path: Path) -> None:
    """An older cuberobot's 2-bit ``phase1`` file (any version) goes when ``phase1axes`` is
    written; the current ``phase1axes`` file and the other groups' stay."""
    from solver.engines.twophase.tables.cache import remove_stale

    folder = tmp_path / "twophase"
    folder.mkdir()
    old = [folder / "twophase-v2-phase1.bin", folder / "twophase-v1-phase1.bin"]
    kept = [T.table_path(tmp_path, "phase1axes"), T.table_path(tmp_path, "phase2")]
    for path in old + kept:
        path.write_bytes(b"x")
    remove_stale(tmp_path, "phase1axes")
    assert [p.exists() for p in old + kept] == [False, False, True, True]


def test_cache_dir_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUBEROBOT_CACHE_DIR", str(tmp_path / "explicit"))
    assert T.default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("CUBEROBOT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert T.default_cache_dir() == tmp_path / "xdg" / "cuberobot"


def test_pruning_tables_are_complete() -> None:
    tables = get_solver().tables
    # every entry of the exact tables was reached; depth 0 only at the solved state
    for name in ("cornslice_depth", "edgeslice_depth"):
        depth = getattr(tables, name)
        assert depth.max() < 20 and int((depth == 0).sum()) == 1
    assert tables.phase1_axes.nbytes == (64430 * 2187 + 1) // 2
    assert tables.phase2_prun.nbytes == (2768 * 40320 + 3) // 4


def _phase1_entry(
    classsym: np.ndarray, twist_conj: np.ndarray, table: np.ndarray, t: int, f: int, ss: int
) -> tuple[int, int]:
    """A phase-1 table's 4-bit entry of a state as the search reads it, and the symmetry."""
    e = int(classsym[(ss // 24) * C.N_FLIP + f])
    cls, sym = e >> 4, e & 15
    i = cls * C.N_TWIST + int(twist_conj[t, sym])
    return (int(table[i >> 1]) >> (4 * (i & 1))) & 15, sym


@pytest.mark.parametrize("metric", ["face turns", "robot groups"])
def test_phase1_entries_name_the_axis_of_the_nearer_moves(metric: str) -> None:
    """Each entry's depth mod 3 and axis code, mapped to the state's own frame by its symmetry,
    against its children's depths, on random states and on states walked down to the depths a
    search visits. The depths are decoded from the residues (each step down to the residue one
    less, as the kernel's walk); a wrong residue shows as a walk that finds no step down."""
    solver = get_solver()
    base = solver.tables
    if metric == "face turns":
        table = base.phase1_axes
        tm, fm, sm = base.twist_move, base.flip_move, base.slice_sorted_move
        axis_of = [m // 3 % 3 for m in range(C.N_MOVE)]
    else:
        axial = solver.axial_tables()
        table = axial.phase1_axes
        tm, fm, sm = axial.twist_group_move, axial.flip_group_move, axial.slice_sorted_group_move
        axis_of = [k // 15 for k in range(C.N_AXIAL)]
    n_moves = len(axis_of)

    def entry(t: int, f: int, s: int) -> tuple[int, int]:
        return _phase1_entry(base.flipslice_classsym, base.twist_conj, table, t, f, s)

    def children(t: int, f: int, s: int) -> list[tuple[int, int, int]]:
        return [(int(tm[t, m]), int(fm[f, m]), int(sm[s, m])) for m in range(n_moves)]

    def depth(t: int, f: int, s: int) -> int:
        d = 0
        while t or f or s >= 24:
            r = entry(t, f, s)[0] & 3
            t, f, s = next(k for k in children(t, f, s) if entry(*k)[0] & 3 == (r + 2) % 3)
            d += 1
        return d

    rng = np.random.default_rng(7)
    codes = {0: 0, 1: 0, 2: 0, 3: 0}
    for k in range(300):
        t, f, s = int(rng.integers(2187)), int(rng.integers(2048)), int(rng.integers(11880))
        d = depth(t, f, s)
        goal = int(rng.integers(1, 9)) if k % 2 else 99
        while d > goal:  # down a random nearer move (the residue one less)
            down = [c for c in children(t, f, s) if entry(*c)[0] & 3 == (d - 1) % 3]
            t, f, s = down[int(rng.integers(len(down)))]
            d -= 1
        v, sym = entry(t, f, s)
        assert v & 3 == d % 3
        kids = children(t, f, s)
        nearer = {axis_of[m] for m in range(n_moves) if depth(*kids[m]) == d - 1}
        code = v >> 2
        if code in (1, 2) and sym & 2:  # an odd quarter turn about U swaps R/L and F/B
            code ^= 3
        codes[code] += 1
        assert (nearer == {code}) if code < 3 else len(nearer) != 1, (t, f, s, d, v, sym)
    assert min(codes.values()) > 0


def test_symmetries_with_an_odd_quarter_turn_swap_the_side_axes() -> None:
    """The kernel's rule for mapping an entry's axis to the state's frame (bit 1 of the
    symmetry's index), against the symmetries' own move conjugation."""
    conj = get_solver().tables.conj_move
    for s in range(C.N_SYM_D4H):
        axes = [int(conj[s, 3 * face]) // 3 % 3 for face in range(3)]
        assert axes == ([0, 2, 1] if s & 2 else [0, 1, 2]), s


def test_worker_process_builds_a_group(cache_copy: Path) -> None:
    path = T.table_path(cache_copy, "cornslice")
    original = path.read_bytes()
    path.unlink()
    calls: list[tuple[str, int, int]] = []
    build_s: dict[str, float] = {}
    out = build_parallel(cache_copy, ["cornslice"], lambda *a: calls.append(a), build_s)
    assert set(out) == {"cornslice"} and "cornslice" in build_s
    assert path.read_bytes() == original
    assert calls and calls[-1][1] == calls[-1][2]


def test_worker_usage_error() -> None:
    assert main(["build", "nothing", "/tmp"]) == 2


def _nibble(packed: np.ndarray, i: np.ndarray) -> np.ndarray:
    nibbles: np.ndarray = (packed[i >> 1] >> ((i & 1) << 2)) & 15
    return nibbles


def test_robot_phase2_depths_are_exact() -> None:
    """Breadth-first consistency of the robot metric's phase-2 table, checked independently of
    its builder on sampled entries: 0 only at the solved state; an entry at depth d (< 15) has a
    phase-2 group to depth d - 1 and none to less."""
    solver = get_solver()
    base, axial = solver.tables, solver.axial_tables()
    assert axial.phase2_depth.nbytes == (2768 * 40320 + 1) // 2
    rng = np.random.default_rng(5)
    cls = rng.integers(0, 2768, 4000)
    ud = rng.integers(0, 40320, 4000)
    corners = base.corner_rep.astype(np.int64)[cls]

    def depth(c: np.ndarray, u: np.ndarray) -> np.ndarray:
        sym = base.corner_sym[c].astype(np.int64)
        conj = base.ud_edges_conj.astype(np.int64)[u, sym]
        idx = base.corner_classidx.astype(np.int64)[c] * 40320 + conj
        return _nibble(axial.phase2_depth, idx)

    d = depth(corners, ud)
    assert (d == 0).sum() == ((corners == 0) & (ud == 0)).sum()
    cm = compose(base.corners_move, C.PHASE2_AXIAL)
    um = compose(base.ud_edges_move, C.PHASE2_AXIAL)
    neighbours = np.stack([depth(cm[corners, k], um[ud, k]) for k in C.PHASE2_AXIAL])
    inner = (d > 0) & (d < 15)
    assert inner.sum() > 3000
    assert (neighbours.min(axis=0)[inner] == d[inner] - 1).all()
    assert (neighbours.min(axis=0) >= d - 1).all()


@pytest.mark.parametrize(
    ("mask_name", "depth_name", "inner_name", "n_inner"),
    [
        ("slice_twist_mask", "slice_twist_depth", "twist_move", C.N_TWIST),
        ("slice_flip_mask", "slice_flip_depth", "flip_move", C.N_FLIP),
    ],
)
def test_move_masks_name_the_turns_that_change_the_depth(
    mask_name: str, depth_name: str, inner_name: str, n_inner: int
) -> None:
    tables = get_solver().tables
    mask = getattr(tables, mask_name).astype(np.int64)
    depth = getattr(tables, depth_name).astype(np.int64)
    assert ((mask >> 24) == depth).all()
    rng = np.random.default_rng(5)
    entries = rng.choice(len(depth), 20000, replace=False)
    outer, inner = entries // n_inner, entries % n_inner
    slice_move = tables.slice_sorted_move.astype(np.int64)[np.arange(C.N_SLICE) * 24] // 24
    inner_move = getattr(tables, inner_name).astype(np.int64)
    for m in range(C.N_MOVE):
        face, k = divmod(m, 3)
        child = depth[slice_move[outer, m] * n_inner + inner_move[inner, m]]
        nibble = (mask[entries] >> (4 * face)) & 15
        up, bit = (nibble & 8) != 0, ((nibble >> k) & 1) == 1
        delta = np.where(up, np.where(bit, 1, 0), np.where(bit, -1, 0))
        assert (child == depth[entries] + delta).all(), m


@pytest.mark.parametrize(
    ("mask_name", "depth_name", "inner_name", "n_inner"),
    [
        ("slice_twist_mask", "slice_twist_depth", "twist_group_move", C.N_TWIST),
        ("slice_flip_mask", "slice_flip_depth", "flip_group_move", C.N_FLIP),
    ],
)
def test_group_masks_name_the_groups_that_change_the_depth(
    mask_name: str, depth_name: str, inner_name: str, n_inner: int
) -> None:
    # The robot metric's masks: per axis, bit 15 says whether its groups raise the depth
    # (then bit j: group 15a + j raises it) or not (bit j: it lowers it); checked against
    # each child's depth in the exact table, for every group.
    axial = get_solver().axial_tables()
    mask = getattr(axial, mask_name).astype(np.uint64)
    depth = getattr(axial, depth_name).astype(np.int64)
    assert ((mask >> np.uint64(56)).astype(np.int64) == depth).all()
    rng = np.random.default_rng(6)
    entries = rng.choice(len(depth), 20000, replace=False)
    outer, inner = entries // n_inner, entries % n_inner
    slice_move = axial.slice_group_move.astype(np.int64)
    inner_move = getattr(axial, inner_name).astype(np.int64)
    for k in range(C.N_AXIAL):
        axis, j = divmod(k, 15)
        child = depth[slice_move[outer, k] * n_inner + inner_move[inner, k]]
        field = (mask[entries] >> np.uint64(16 * axis)).astype(np.int64) & 0xFFFF
        up, bit = (field & 0x8000) != 0, ((field >> j) & 1) == 1
        delta = np.where(up, np.where(bit, 1, 0), np.where(bit, -1, 0))
        assert (child == depth[entries] + delta).all(), k


def test_group_move_tables_compose_the_face_turns() -> None:
    # The corners and the slice order carried along the robot search's phase-1 path: one
    # look-up per group is the group's one or two face turns applied in turn.
    tables = get_solver().tables
    axial = get_solver().axial_tables()
    for name, table in (
        ("corners_group_move", tables.corners_move),
        ("slice_sorted_group_move", tables.slice_sorted_move),
    ):
        grouped = getattr(axial, name).astype(np.int64)
        face = table.astype(np.int64)
        assert grouped.shape == (face.shape[0], C.N_AXIAL)
        for k, (m1, m2) in enumerate(C.AXIAL_MOVES):
            x = np.arange(face.shape[0]) if m1 < 0 else face[:, m1]
            expected = x if m2 < 0 else face[x, m2]
            assert (grouped[:, k] == expected).all(), name


@pytest.mark.parametrize("metric", ["face turns", "robot groups"])
def test_a_childs_flipslice_class_comes_from_its_parents_row(metric: str) -> None:
    """Both searches find a child's class and symmetry from the row of its parent's class (the
    class rows at the turn or group conjugated by the parent's symmetry, then the symmetries'
    product) instead of from ``flipslice_classsym``: on random nodes and moves, the class is
    the one ``flipslice_classsym`` gives and the phase-1 entry read with the symmetry found
    (twist conjugated by it) has the same depth and, mapped to the state's frame, the same
    axis code; the symmetry itself may be another one fixing the class's representative."""
    solver = get_solver()
    base = solver.tables
    classsym = base.flipslice_classsym.astype(np.int64)
    twist_conj = base.twist_conj.astype(np.int64)
    mult = base.sym_mult.astype(np.int64)
    turns = base.conj_move.astype(np.int64)
    for a in range(C.N_SYM_D4H):  # S_a S_b acts on the turns as S_a after S_b
        for b in range(C.N_SYM_D4H):
            assert (turns[mult[a, b]] == turns[a][turns[b]]).all()
    if metric == "face turns":
        n_moves, table = C.N_MOVE, base.phase1_axes
        rows = base.flipslice_class_move.astype(np.int64)
        conj = base.move_conj.astype(np.int64)
        sg = slice_move(base.slice_sorted_move)
        fg, tg = base.flip_move.astype(np.int64), base.twist_move.astype(np.int64)
        pairs: list[tuple[int, int]] = [(m, -1) for m in range(C.N_MOVE)]
    else:
        axial = solver.axial_tables()
        n_moves, table = C.N_AXIAL, axial.phase1_axes
        rows = axial.class_group_move.astype(np.int64)
        conj = axial.group_conj.astype(np.int64)
        sg = axial.slice_group_move.astype(np.int64)
        fg = axial.flip_group_move.astype(np.int64)
        tg = axial.twist_group_move.astype(np.int64)
        pairs = list(C.AXIAL_MOVES)
    assert rows.shape == (C.N_FLIPSLICE_CLASS, n_moves)
    for j, pair in enumerate(pairs):  # the conjugated move: its turns conjugated
        for s in range(C.N_SYM_D4H):
            turned = pairs[conj[j, s]]
            assert {int(turns[s, m]) for m in pair if m >= 0} == {m for m in turned if m >= 0}
    rng = np.random.default_rng(11)
    n = 200_000
    slc, flp = rng.integers(C.N_SLICE, size=n), rng.integers(C.N_FLIP, size=n)
    twist, k = rng.integers(C.N_TWIST, size=n), rng.integers(n_moves, size=n)
    node = classsym[slc * C.N_FLIP + flp]
    cls, sym = node >> 4, node & 15
    direct = classsym[sg[slc, k] * C.N_FLIP + fg[flp, k]]
    routed = rows[cls, conj[k, sym]]
    child_sym = mult[routed & 15, sym]
    assert (routed >> 4 == direct >> 4).all()
    t1 = tg[twist, k]

    def entries(c: np.ndarray, s: np.ndarray) -> np.ndarray:
        i = (c >> 4) * C.N_TWIST + twist_conj[t1, s]
        return (table[i >> 1].astype(np.int64) >> (4 * (i & 1))) & 15

    v_direct, v_routed = entries(direct, direct & 15), entries(routed, child_sym)
    assert (v_direct & 3 == v_routed & 3).all()

    def axis(v: np.ndarray, s: np.ndarray) -> np.ndarray:  # the code in the state's frame
        code = v >> 2
        return np.where((code >= 1) & (code <= 2) & (s & 2 != 0), code ^ 3, code)

    assert (axis(v_direct, direct & 15) == axis(v_routed, child_sym)).all()
    assert (child_sym != direct & 15).any()  # stabilisers: the symmetries do differ


def test_table_of_an_older_layout_is_refused(tmp_path: Path) -> None:
    path = T.table_path(tmp_path, "axial2")
    path.parent.mkdir(parents=True)
    small = np.zeros(8, dtype=np.uint8)
    write_bundle(
        path, "axial2", {"axial2_prun": small, "axial_cornslice": small, "axial_edgeslice": small}
    )
    with pytest.raises(Corrupt, match=r"older cuberobot \(no axial2_depth\)"):
        read_bundle(path, "axial2")


def test_exact_bfs_gives_distances_on_a_product() -> None:
    """Two cycles (6 and 4 long), each move one step of one of them: the distance of
    ``a * 4 + b`` is the sum of the two cycle distances."""
    a_move = np.array([[(x + 1) % 6, (x - 1) % 6, x, x] for x in range(6)])
    b_move = np.array([[y, y, (y + 1) % 4, (y - 1) % 4] for y in range(4)])
    depth = exact_bfs(a_move, b_move, 4)
    expected = [min(a, 6 - a) + min(b, 4 - b) for a in range(6) for b in range(4)]
    assert depth.tolist() == expected
    forward = exact_bfs(a_move, b_move, 4, moves=[0, 2])  # forward steps only
    assert forward.tolist() == [a + b for a in range(6) for b in range(4)]


def test_exact_bfs_refuses_unreachable_entries() -> None:
    stuck = np.zeros((3, 1), dtype=np.int64)  # every move goes to 0: 1 and 2 are unreachable
    with pytest.raises(AssertionError):
        exact_bfs(stuck, np.zeros((1, 1), dtype=np.int64), 1)


def test_load_or_build_asks_for_inputs_only_to_build(cache_copy: Path) -> None:
    def no_inputs() -> dict[str, np.ndarray]:
        raise AssertionError("nothing should be built")

    build_s: dict[str, float] = {}
    loaded = load_or_build(cache_copy, ("cornslice",), no_inputs, lambda *a: None, build_s)
    assert set(loaded) == {"cornslice"} and build_s == {}


def test_files_with_the_slice_depths_beside_their_masks_load_alike(cache_copy: Path) -> None:
    """Files written before 2026-11-28's seventh session stored the exact slice x twist /
    slice x flip depths beside their masks: they load as they are (no rebuild), the depths
    taken from the masks' top byte like those of a file without them."""
    from solver.engines.twophase.tables.sets import load_axial_tables, load_tables

    base = get_solver().tables
    axial = get_solver().axial_tables()
    path = T.table_path(cache_copy, "slicepair")
    old = dict(read_bundle(path, "slicepair"))
    old["slice_twist_depth"] = np.zeros(C.N_SLICE * C.N_TWIST, dtype=np.uint8)  # never read
    old["slice_flip_depth"] = np.zeros(C.N_SLICE * C.N_FLIP, dtype=np.uint8)
    write_bundle(path, "slicepair", old)
    path1 = T.table_path(cache_copy, "axial1")
    old1 = dict(read_bundle(path1, "axial1"))
    old1["axial_slice_twist"] = np.zeros(C.N_SLICE * C.N_TWIST, dtype=np.uint8)
    old1["axial_slice_flip"] = np.zeros(C.N_SLICE * C.N_FLIP, dtype=np.uint8)
    write_bundle(path1, "axial1", old1)
    loaded = load_tables(cache_copy, workers=1)
    assert loaded.build_s == {}
    assert np.array_equal(loaded.slice_twist_depth, base.slice_twist_depth)
    assert np.array_equal(loaded.slice_flip_depth, base.slice_flip_depth)
    assert np.array_equal(loaded.slice_twist_depth, base.slice_twist_mask >> 24)
    loaded_axial = load_axial_tables(loaded, workers=1)
    assert loaded_axial.build_s == {}
    assert np.array_equal(loaded_axial.slice_flip_depth, axial.slice_flip_depth)
    assert np.array_equal(loaded_axial.slice_twist_depth, axial.slice_twist_mask >> 56)
    assert loaded_axial.slice_twist_depth.max() > 0 and not loaded.slice_flip_depth.flags.writeable


def test_load_or_build_without_cache_writes_nothing(tmp_path: Path) -> None:
    moves = read_bundle(T.table_path(get_solver().tables.cache_dir or tmp_path, "moves"), "moves")
    build_s: dict[str, float] = {}
    loaded = load_or_build(
        tmp_path, ("slicepair",), lambda: moves, lambda *a: None, build_s, use_cache=False
    )
    assert set(build_s) == {"slicepair"}
    assert np.array_equal(
        loaded["slicepair"]["slice_flip_mask"], get_solver().tables.slice_flip_mask
    )
    assert not (tmp_path / "twophase").exists()


def test_worker_entry_point_usage() -> None:
    """``python -m solver.engines.twophase.tables`` is the worker; a bad call exits 2."""
    done = subprocess.run(
        [sys.executable, "-m", "solver.engines.twophase.tables", "build", "moves", "/nowhere"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "usage:" in done.stderr


def test_huge_page_copies_hold_the_same_tables() -> None:
    tables = get_solver().tables
    plain, huge = tables.search_arrays(), tables.search_arrays(huge_pages=True)
    copied = 0
    for a, b in zip(plain, huge, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        assert not b.flags.writeable
        copied += a is not b
    assert copied == 8  # the tables the phase-1 search reads at random


def test_only_a_budgeted_search_makes_the_huge_page_copies() -> None:
    from solver.cube.cubie import CubieCube
    from solver.engines.twophase.engine import TwoPhaseSolver

    tables = get_solver().tables
    solver = TwoPhaseSolver(tables)  # a solver of its own: no copies yet
    cube = CubieCube().apply("R U2 F' L D B2 R' F")
    prun = [id(a) for a in tables.search_arrays()].index(id(tables.phase1_axes))
    solver.solve(cube)
    assert solver._arrays[prun] is tables.phase1_axes
    solver.solve(cube, budget_s=0.01)
    deadline = time.monotonic() + 20.0
    while solver._arrays[prun] is tables.phase1_axes and time.monotonic() < deadline:
        time.sleep(0.05)
    assert solver._arrays[prun] is not tables.phase1_axes
    assert np.array_equal(solver._arrays[prun], tables.phase1_axes)


def test_huge_page_copies_wait_for_memory_to_spare(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A machine whose available memory would keep less than the reserve beside the copies
    (a small Pi) keeps searching the mapped tables, and says so; with room it copies."""
    from solver.engines.twophase import engine as E

    tables = get_solver().tables
    assert 80 <= tables.hot_mb <= 120
    prun = [id(a) for a in tables.search_arrays()].index(id(tables.phase1_axes))
    solver = E.TwoPhaseSolver(tables)
    monkeypatch.setattr(E, "available_mb", lambda: tables.hot_mb + E.RESERVE_MB - 1)
    with caplog.at_level("WARNING", logger=E.__name__):
        solver._copy_hot_tables()
    assert solver._arrays[prun] is tables.phase1_axes
    assert f"the huge-page copies take {tables.hot_mb} MB" in caplog.text
    monkeypatch.setattr(E, "available_mb", lambda: tables.hot_mb + E.RESERVE_MB)
    solver._copy_hot_tables()
    assert solver._arrays[prun] is not tables.phase1_axes
    monkeypatch.setattr(E, "available_mb", lambda: None)  # no /proc/meminfo: copies as before
    solver = E.TwoPhaseSolver(tables)
    solver._copy_hot_tables()
    assert solver._arrays[prun] is not tables.phase1_axes


def test_flipslice_classsym_holds_the_class_and_the_symmetry() -> None:
    tables = get_solver().tables
    classsym = tables.flipslice_classsym
    assert classsym.dtype == np.uint32 and not classsym.flags.writeable
    assert np.array_equal(classsym >> 4, tables.flipslice_classidx)
    assert np.array_equal(classsym & 15, tables.flipslice_sym)
    assert tables.flipslice_classsym is classsym  # derived once


def test_a_folder_where_a_table_goes_is_a_table_error(tmp_path: Path) -> None:
    """A folder at a group's file path (or a full disk) is a TableError naming the path and
    the way out, not an IsADirectoryError traceback; no temporary file is left behind."""
    path = tmp_path / "twophase" / "twophase-v2-moves.bin"
    path.mkdir(parents=True)
    with pytest.raises(T.TableError, match=r"cannot write two-phase tables to .*moves\.bin.*"):
        write_bundle(path, "moves", {"a": np.arange(4, dtype=np.int8)})
    assert [p.name for p in path.parent.iterdir()] == [path.name]
