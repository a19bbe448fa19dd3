"""The ``moves`` group: move tables of every coordinate, symmetry conjugation tables and the
symmetry classes of flipslice and corners, computed from cubies with vectorised numpy.

Move tables are ``[coord, move]`` (18 face turns, index ``3 * face + k``); conjugation tables
``[coord, sym]`` give the coordinate of ``S * x * S^-1`` for the 16 symmetries that keep the UD
axis; a symmetry class's representative is the smallest member of its orbit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase.tables.cache import Array
from solver.engines.twophase.tables.progress import Progress

__all__ = ["UNDEFINED", "build_moves", "stabilisers", "u16"]

#: uint16 table entry with no value: a move that leaves phase 2 (``ud_edges_move``), a U/D edge
#: pair outside phase 2 (``ud_from_u_d``), a group made of moves outside phase 2
UNDEFINED = 0xFFFF
#: the generators the 16 UD symmetries are composed from, by index
#: ``s = 8 * f2 + 2 * u4 + lr2``: MIRR_LR2 (1), ROT_U4 (2), ROT_F2 (8)
_SYM_LR2, _SYM_U4, _SYM_F2 = 1, 2, 8
#: raw flipslice values turned into cubies at a time (module :func:`_flipslice_conj`)
_CONJ_CHUNK = 1 << 16
#: progress steps of the build (reported as "move tables" k / _STEPS)
_STEPS = 10

Getter = Callable[[Array, Array], Array]


def u16(a: Array) -> Array:
    out = np.asarray(a)
    assert out.min() >= 0 and out.max() <= UNDEFINED
    return out.astype(np.uint16)


def _zeros(n: int, k: int) -> Array:
    return np.zeros((n, k), dtype=np.int64)


def _ident(n: int, k: int) -> Array:
    return np.tile(np.arange(k, dtype=np.int64), (n, 1))


@dataclass(frozen=True)
class _Cubies:
    """The face turns and the symmetries as cubie arrays, and products with them."""

    mcp: Array
    mco: Array
    mep: Array
    meo: Array
    scp: Array
    sco: Array
    sep: Array
    seo: Array
    sinv: Array

    @classmethod
    def make(cls) -> _Cubies:
        return cls(*C.move_arrays(), *C.sym_arrays(), C.sym_inverse())

    def corner_table(self, cp: Array, co: Array, getter: Getter) -> Array:
        out = np.empty((len(cp), C.N_MOVE), dtype=np.int64)
        for m in range(C.N_MOVE):
            ncp, nco = C.corner_multiply(cp, co, self.mcp[m : m + 1], self.mco[m : m + 1])
            out[:, m] = getter(ncp, nco)
        return out

    def edge_table(self, ep: Array, eo: Array, getter: Getter) -> Array:
        out = np.empty((len(ep), C.N_MOVE), dtype=np.int64)
        for m in range(C.N_MOVE):
            nep, neo = C.edge_multiply(ep, eo, self.mep[m : m + 1], self.meo[m : m + 1])
            out[:, m] = getter(nep, neo)
        return out

    def conj_corners(self, cp: Array, co: Array, s: int) -> tuple[Array, Array]:
        """``S cp S^-1`` for symmetry ``s``."""
        a = C.corner_multiply(self.scp[s : s + 1], self.sco[s : s + 1], cp, co)
        t = self.sinv[s]
        return C.corner_multiply(a[0], a[1], self.scp[t : t + 1], self.sco[t : t + 1])

    def conj_edges(self, ep: Array, eo: Array, s: int) -> tuple[Array, Array]:
        a = C.edge_multiply(self.sep[s : s + 1], self.seo[s : s + 1], ep, eo)
        t = self.sinv[s]
        return C.edge_multiply(a[0], a[1], self.sep[t : t + 1], self.seo[t : t + 1])


def _four_edge_tables(cb: _Cubies) -> dict[str, Array]:
    out: dict[str, Array] = {}
    for name, edges in (
        ("slice_sorted", C.SLICE_EDGES),
        ("u_edges", C.U_EDGES),
        ("d_edges", C.D_EDGES),
    ):
        out[name] = cb.edge_table(
            C.set_four_edges(np.arange(C.N_SLICE_SORTED), edges),
            _zeros(C.N_SLICE_SORTED, 12),
            lambda ep, eo, e=edges: C.four_edges_of(ep, e),  # type: ignore[misc]
        )
    return out


def _ud_edges_move(cb: _Cubies) -> Array:
    """Phase 2 only: the other moves' columns are :data:`UNDEFINED`."""
    table = np.full((C.N_UD_EDGES, C.N_MOVE), UNDEFINED, dtype=np.int64)
    ep0 = C.set_ud_edges(np.arange(C.N_UD_EDGES))
    for m in C.PHASE2_MOVES:
        nep, _ = C.edge_multiply(ep0, _zeros(len(ep0), 12), cb.mep[m : m + 1], cb.meo[m : m + 1])
        table[:, m] = C.ud_edges_of(nep)
    return table


def _move_tables(cb: _Cubies, report: Progress) -> dict[str, Array]:
    out = {
        "twist_move": cb.corner_table(
            _ident(C.N_TWIST, 8), C.set_twist(np.arange(C.N_TWIST)), lambda cp, co: C.twist_of(co)
        )
    }
    report("move tables", 1, _STEPS)
    out["flip_move"] = cb.edge_table(
        _ident(C.N_FLIP, 12), C.set_flip(np.arange(C.N_FLIP)), lambda ep, eo: C.flip_of(eo)
    )
    report("move tables", 2, _STEPS)
    out |= {f"{name}_move": table for name, table in _four_edge_tables(cb).items()}
    report("move tables", 3, _STEPS)
    out["corners_move"] = cb.corner_table(
        C.set_corners(np.arange(C.N_CORNERS)),
        _zeros(C.N_CORNERS, 8),
        lambda cp, co: C.corners_of(cp),
    )
    report("move tables", 4, _STEPS)
    out["ud_edges_move"] = _ud_edges_move(cb)
    report("move tables", 5, _STEPS)
    return out


def _conj_tables(cb: _Cubies) -> dict[str, Array]:
    """Conjugation ``S x S^-1`` of twist and ud_edges by the 16 UD symmetries."""
    twist_conj = np.empty((C.N_TWIST, C.N_SYM_D4H), dtype=np.int64)
    tw_co = C.set_twist(np.arange(C.N_TWIST))
    for s in range(C.N_SYM_D4H):
        _, co = cb.conj_corners(_ident(C.N_TWIST, 8), tw_co, s)
        twist_conj[:, s] = C.twist_of(co)
    ud_edges_conj = np.empty((C.N_UD_EDGES, C.N_SYM_D4H), dtype=np.int64)
    ep0 = C.set_ud_edges(np.arange(C.N_UD_EDGES))
    for s in range(C.N_SYM_D4H):
        ep, _ = cb.conj_edges(ep0, _zeros(len(ep0), 12), s)
        ud_edges_conj[:, s] = C.ud_edges_of(ep)
    return {"twist_conj": twist_conj, "ud_edges_conj": ud_edges_conj}


def _compose_conj(raw: Array, gen: dict[int, Array]) -> Array:
    """All 16 conjugation columns from the generators' (module :data:`_SYM_LR2` ...)."""
    out = np.empty((len(raw), C.N_SYM_D4H), dtype=raw.dtype)
    for s in range(C.N_SYM_D4H):
        f2, u4, lr2 = s // 8, (s // 2) % 4, s % 2
        x = raw
        for _ in range(lr2):
            x = gen[_SYM_LR2][x]
        for _ in range(u4):
            x = gen[_SYM_U4][x]
        for _ in range(f2):
            x = gen[_SYM_F2][x]
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


def stabilisers(conj_of_reps: Array) -> Array:
    """Bit mask per class of the symmetries that fix its representative."""
    fixed = conj_of_reps == conj_of_reps[:, :1]
    masks: Array = (fixed * (1 << np.arange(C.N_SYM_D4H))).sum(axis=1)
    return masks


def _flipslice_conj(cb: _Cubies) -> Array:
    """``conj[x, s]`` (int32) of raw flipslice ``x = slice * 2048 + flip``, computed with cubies
    for the three generators and composed for the others, since ``s = 8*f2 + 2*u4 + lr2``
    means ``S = F2^f2 U4^u4 LR2^lr2``. The cubies are made :data:`_CONJ_CHUNK` rows at a time
    (a row of 12 int64 edges per raw value would be 100 MB for the whole range)."""
    gen = {s: np.empty(C.N_FLIPSLICE, dtype=np.int32) for s in (_SYM_LR2, _SYM_U4, _SYM_F2)}
    for lo in range(0, C.N_FLIPSLICE, _CONJ_CHUNK):
        raw = np.arange(lo, min(C.N_FLIPSLICE, lo + _CONJ_CHUNK))
        ep = C.set_four_edges((raw // C.N_FLIP) * C.N_PERM_4, C.SLICE_EDGES)
        eo = C.set_flip(raw % C.N_FLIP)
        for s, out in gen.items():
            nep, neo = cb.conj_edges(ep, eo, s)
            slc = C.four_edges_of(nep, C.SLICE_EDGES) // C.N_PERM_4
            out[lo : lo + len(raw)] = slc * C.N_FLIP + C.flip_of(neo)
    return _compose_conj(np.arange(C.N_FLIPSLICE, dtype=np.int32), gen)


def _corner_conj(cb: _Cubies) -> Array:
    cp_all = C.set_corners(np.arange(C.N_CORNERS))
    conj = np.empty((C.N_CORNERS, C.N_SYM_D4H), dtype=np.int64)
    for s in range(C.N_SYM_D4H):
        ncp, _ = cb.conj_corners(cp_all, _zeros(C.N_CORNERS, 8), s)
        conj[:, s] = C.corners_of(ncp)
    return conj


def _conj_move(cb: _Cubies) -> Array:
    """``[s, m]``: the face turn ``S * m * S^-1`` for all 48 symmetries."""
    conj_move = np.empty((C.N_SYM, C.N_MOVE), dtype=np.int64)
    mcp, mco, mep, meo = cb.mcp, cb.mco, cb.mep, cb.meo
    for s in range(C.N_SYM):
        t = cb.sinv[s]
        a_cp, a_co = C.corner_multiply(cb.scp[s : s + 1], cb.sco[s : s + 1], mcp, mco)
        a_cp, a_co = C.corner_multiply(a_cp, a_co, cb.scp[t : t + 1], cb.sco[t : t + 1])
        a_ep, a_eo = C.edge_multiply(cb.sep[s : s + 1], cb.seo[s : s + 1], mep, meo)
        a_ep, a_eo = C.edge_multiply(a_ep, a_eo, cb.sep[t : t + 1], cb.seo[t : t + 1])
        match = (
            (a_cp[:, None, :] == mcp[None]).all(2)
            & (a_co[:, None, :] == mco[None]).all(2)
            & (a_ep[:, None, :] == mep[None]).all(2)
            & (a_eo[:, None, :] == meo[None]).all(2)
        )
        assert (match.sum(1) == 1).all(), "a symmetry does not map face turns to face turns"
        conj_move[s] = match.argmax(1)
    return conj_move


def _ud_table() -> Array:
    t = C.ud_edges_from_u_d()
    return np.where(t < 0, UNDEFINED, t)


def build_moves(report: Progress) -> dict[str, Array]:
    """The ``moves`` group, its arrays in file order."""
    report("move tables", 0, _STEPS)
    cb = _Cubies.make()
    moves = _move_tables(cb, report)
    conj = _conj_tables(cb)
    report("move tables", 6, _STEPS)
    fs_conj = _flipslice_conj(cb)
    report("move tables", 7, _STEPS)
    fs_classidx, fs_sym, fs_rep = _classes(fs_conj, C.N_FLIPSLICE_CLASS)
    fs_stab = stabilisers(fs_conj[fs_rep])
    del fs_conj
    report("move tables", 8, _STEPS)
    c_conj = _corner_conj(cb)
    c_classidx, c_sym, c_rep = _classes(c_conj, C.N_CORNER_CLASS)
    c_stab = stabilisers(c_conj[c_rep])
    report("move tables", 9, _STEPS)
    conj_move = _conj_move(cb)
    report("move tables", _STEPS, _STEPS)
    out = {name: u16(table) for name, table in moves.items()}
    out["ud_from_u_d"] = u16(_ud_table())
    out |= {name: u16(table) for name, table in conj.items()}
    out |= {
        "flipslice_classidx": u16(fs_classidx),
        "flipslice_sym": fs_sym.astype(np.uint8),
        "flipslice_rep": fs_rep.astype(np.uint32),
        "flipslice_stab": u16(fs_stab),
        "corner_classidx": u16(c_classidx),
        "corner_sym": c_sym.astype(np.uint8),
        "corner_rep": u16(c_rep),
        "corner_stab": u16(c_stab),
        "conj_move": conj_move.astype(np.uint8),
    }
    return out
