"""Edge wings of an N ≥ 4 cube, put in place by 3-cycles that keep the centres.

Wing orbit ``j`` (1 ≤ j ≤ (N-2)/2) holds the 24 wings at positions ``j`` and ``N-1-j`` along
the twelve edges. A wing cannot be flipped in place (the model's handedness rule,
:func:`solver.cube.validate_nxn.orbit_wings`), so the colours of a wing's primary and
secondary sticker name the piece: piece ``p`` is the wing that sits in slot ``p`` (``2 * edge
+ side``) on the solved cube.

Tools, all derived from the geometry of a 6-cube and used on orbit ``j`` of any N (layer 2
becomes layer ``j+1``; slots are named by edge and side, the same on every N):

* **base commutators** ``[s, M1 M2 M1']``: ``s`` one inner slice turn of the orbit,
  ``M1 M2 M1'`` outer turns meeting that slice in one wing. Only the ones that cycle exactly
  three wings and leave every other sticker where it was are kept (checked on the 6-cube, which
  has a second wing orbit and every kind of centre);
* **setups**: outer turns ``Y`` (they keep each face's centre colours), so ``Y C Y'`` cycles any
  three slots; a breadth-first search over ordered triples finds the shortest ``Y`` for the
  10,560 triples it reaches. Outer turns keep the two wings of an edge on one edge, so a cycle
  through both wings of one edge is done as two (:func:`_cycle_plan`).

Permutation parity: every tool is even on each orbit (outer quarter turns move wings in two
4-cycles, commutators are even), so an orbit whose wings are in an odd permutation is made
even once, by one quarter turn of an inner slice of that orbit (:func:`parity_fixes`), right
after the first centre (with a slice of that centre's axis, which keeps it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import cubie_layout
from solver.cube.geometry import Face
from solver.cube.notation import Move, invert
from solver.cube.validate_nxn import orbit_wings
from solver.engines.nxn.sim import Geometry, IntArray, geometry

__all__ = [
    "dedge_targets",
    "midge_targets",
    "orbit_slots",
    "parity_fixes",
    "solve_wings",
    "wing_parity",
]

_BASE_N = 6
_OUTER = tuple(Move.outer(f, t) for f in Face for t in (1, 2, -1))
Colours = npt.NDArray[np.uint8]
Triple = tuple[int, int, int]


def orbit_slots(n: int, j: int) -> tuple[IntArray, IntArray]:
    """(primary, secondary) sticker of each wing slot of orbit ``j`` (the model's
    :func:`solver.cube.validate_nxn.orbit_wings`: slot ``2 * edge + side``)."""
    return orbit_wings(n, j)


def _slot_of(n: int, j: int) -> dict[int, int]:
    prim, sec = orbit_slots(n, j)
    out = {int(s): k for k, s in enumerate(prim)}
    out.update({int(s): k for k, s in enumerate(sec)})
    return out


@cache
def _outer_maps(n: int, j: int) -> tuple[tuple[int, ...], ...]:
    """For each outer move (``_OUTER`` order), the slot each slot's wing goes to."""
    g = geometry(n)
    prim, _ = orbit_slots(n, j)
    slot_of = _slot_of(n, j)
    out = []
    for m in _OUTER:
        dest = g.trace(prim, [(m.face, 1, m.quarter_turns)])
        out.append(tuple(slot_of[int(d)] for d in dest))
    return tuple(out)


@dataclass(frozen=True)
class _Base:
    slice_face: Face
    turns: int
    conj: tuple[Move, Move]  # M1, M2

    def moves(self, j: int) -> list[Move]:
        s = Move.block(self.slice_face, j + 1, j + 1, self.turns)
        m1, m2 = self.conj
        y = [m1, m2, m1.inverse()]
        return [s, *y, s.inverse(), *invert(y)]


@cache
def _bases() -> tuple[tuple[_Base, Triple], ...]:
    """Pure wing 3-cycles on the 6-cube (orbit 1) and the slots they cycle (a → b → c)."""
    n, j = _BASE_N, 1
    g = geometry(n)
    prim, _ = orbit_slots(n, j)
    slot_of = _slot_of(n, j)
    found: dict[Triple, _Base] = {}
    for face in Face:
        for turns in (1, -1, 2):
            for m1 in _OUTER:
                for m2 in _OUTER:
                    if m2.face in (m1.face, Face((m1.face + 3) % 6)):
                        continue
                    base = _Base(face, turns, (m1, m2))
                    cycle = _pure_cycle(g, base.moves(j), prim, slot_of)
                    if cycle is not None and cycle not in found:
                        found[cycle] = base
    return tuple((b, c) for c, b in found.items())


def _pure_cycle(
    g: Geometry, moves: list[Move], prim: IntArray, slot_of: dict[int, int]
) -> Triple | None:
    """The 3-cycle of slots ``moves`` makes, if that is all they do."""
    labels = np.arange(6 * g.n * g.n, dtype=np.int64)
    g.apply(labels, moves)
    moved = np.flatnonzero(labels != np.arange(labels.size))
    if moved.size != 6:
        return None
    # the wing now at slot k came from slot src[k]
    src = {slot_of[int(i)]: slot_of[int(labels[i])] for i in moved if int(i) in slot_of}
    if len(src) != 3 or any(int(i) not in slot_of for i in moved):
        return None
    for k, v in src.items():
        if labels[prim[k]] != prim[v]:  # a primary sticker must land on a primary one
            return None
    a = next(iter(src))
    c = src[a]
    b = src[c]
    return (c, a, b) if src[b] == a else None  # piece at c -> a, a -> b, b -> c


@cache
def _cycle_table() -> dict[Triple, tuple[tuple[Move, ...], _Base]]:
    """Shortest setup for every ordered 3-cycle x → y → z of slots (orbit-independent)."""
    maps = _outer_maps(_BASE_N, 1)
    table: dict[Triple, tuple[tuple[Move, ...], _Base]] = {}
    queue: deque[Triple] = deque()
    for base, (a, b, c) in _bases():
        for key in ((a, b, c), (b, c, a), (c, a, b)):
            if key not in table:
                table[key] = ((), base)
                queue.append(key)
    while queue:
        key = queue.popleft()
        setup, base = table[key]
        for k, m in enumerate(_OUTER):
            mp = maps[k]
            nxt = (mp[key[0]], mp[key[1]], mp[key[2]])
            if nxt not in table:
                table[nxt] = ((m.inverse(), *setup), base)
                queue.append(nxt)
    return table


@cache
def _cycle_plan(x: int, y: int, z: int) -> tuple[tuple[tuple[Move, ...], _Base], ...]:
    """Setups and bases for the 3-cycle x → y → z. No single commutator cycles both wings of
    one edge with a third (outer setups keep two wings of an edge together), so such a cycle
    is done as two: (a → b → c) = (c → a → d) then (c → d → b), d on a fourth edge."""
    table = _cycle_table()
    if (x, y, z) in table:
        return (table[(x, y, z)],)
    a, b, c = next(t for t in ((x, y, z), (y, z, x), (z, x, y)) if t[0] // 2 == t[1] // 2)
    best: tuple[tuple[tuple[Move, ...], _Base], ...] = ()
    best_cost = 1 << 30
    for d in range(24):
        if d // 2 in (a // 2, c // 2):
            continue
        first, second = table[(c, a, d)], table[(c, d, b)]
        cost = len(first[0]) + len(second[0])
        if cost < best_cost:
            best, best_cost = (first, second), cost
    return best


def cycle_cost(x: int, y: int, z: int) -> int:
    """OBTM of :func:`cycle_moves` before cancellations (each base commutator is 10)."""
    return sum(2 * len(setup) + 10 for setup, _ in _cycle_plan(x, y, z))


def cycle_moves(j: int, x: int, y: int, z: int) -> list[Move]:
    """Moves taking the wing at slot x to y, y's to z and z's to x (orbit j)."""
    out: list[Move] = []
    for setup, base in _cycle_plan(x, y, z):
        out += [*setup, *base.moves(j), *invert(list(setup))]
    return out


@cache
def _home_lookup(n: int, j: int) -> tuple[IntArray, IntArray, IntArray]:
    """Orbit ``j``'s (primary, secondary) stickers and, by the colour code ``6 a + b`` of a
    wing's (primary, secondary) colours, the slot it belongs in (-1: no wing of the orbit)."""
    prim, sec = orbit_slots(n, j)
    lookup = np.full(36, -1, dtype=np.int64)
    lookup[6 * (prim // (n * n)) + sec // (n * n)] = np.arange(len(prim))
    return np.asarray(prim, dtype=np.int64), np.asarray(sec, dtype=np.int64), lookup


def _homes(state: Colours, n: int, j: int) -> list[int]:
    """For each slot, the slot its wing belongs in (on a cube whose face f has colour f)."""
    prim, sec, lookup = _home_lookup(n, j)
    homes = lookup[6 * state[prim].astype(np.int64) + state[sec]]
    if (homes < 0).any():  # pragma: no cover - validated before
        k = int(np.argmax(homes < 0))
        key = (int(state[prim[k]]), int(state[sec[k]]))
        raise AssertionError(f"wing colours {key} are not a wing of orbit {j}")
    out: list[int] = homes.tolist()
    return out


def _parity(perm: Sequence[int]) -> int:
    seen = [False] * len(perm)
    odd = 0
    for i in range(len(perm)):
        length = 0
        while not seen[i]:
            seen[i] = True
            i = perm[i]
            length += 1
        odd ^= (length % 2 == 0) and length > 0
    return int(odd)


def wing_parity(state: Colours, n: int, j: int) -> int:
    """Parity (0 even, 1 odd) of orbit j's wing permutation."""
    return _parity(_homes(state, n, j))


def parity_fixes(state: Colours, n: int, axis: Face = Face.R) -> list[Move]:
    """One inner slice quarter turn (of ``axis``) for each orbit in an odd permutation
    (turns ``state``). With ``axis`` the first finished centre face, its centres and those
    of the opposite face stay as they are."""
    moves = []
    for j in range(1, (n - 2) // 2 + 1):
        if wing_parity(state, n, j):
            move = Move.block(axis, j + 1, j + 1, 1)
            geometry(n).apply_move(state, move)
            moves.append(move)
    return moves


def _next_cycle(homes: list[int]) -> Triple | None:
    wrong = [s for s in range(24) if homes[s] != s]
    if not wrong:
        return None
    best: Triple | None = None
    best_cost = 1 << 30
    for x in wrong:
        y = homes[x]
        z = homes[y]
        options = [z] if z != x else [w for w in wrong if w not in (x, y)]
        for w in options:
            cost = 2 * cycle_cost(x, y, w) + (0 if z != x else 11)  # two wings placed is better
            if cost < best_cost:
                best, best_cost = (x, y, w), cost
    if best is None:  # pragma: no cover - parity was fixed first
        raise AssertionError("an odd wing permutation is left")
    return best


def solve_wings(
    state: Colours,
    n: int,
    targets: Sequence[int] | None = None,
    orbits: Sequence[int] | None = None,
) -> list[Move]:
    """Moves putting the wing ``targets[s]`` (default: its own piece, the solved cube) in every
    slot ``s`` of every orbit (``orbits``: of these only; centres solved as face f = colour f,
    each orbit in an even permutation, ``targets`` even too); ``state`` is turned in place."""
    g = geometry(n)
    moves: list[Move] = []
    slot_of_piece = list(range(24))
    if targets is not None:
        for slot, piece in enumerate(targets):
            slot_of_piece[piece] = slot
    for j in range(1, (n - 2) // 2 + 1) if orbits is None else orbits:
        while True:
            homes = [slot_of_piece[p] for p in _homes(state, n, j)]
            cycle = _next_cycle(homes)
            if cycle is None:
                break
            alg = cycle_moves(j, *cycle)
            g.apply(state, alg)
            moves.extend(alg)
    return moves


def dedge_targets(
    state: Colours, n: int, edge_parity: int | None, orbits: Sequence[int] | None = None
) -> list[int]:
    """Even N: where each orbit's wings should go so that every edge holds a paired dedge
    (partner wings, pieces 2k and 2k+1, the same in every orbit), moving as few wings (of all
    orbits) as possible.

    Pairing, not placing: the dedges may end in any edges, flipped or not, so long as the
    total flip is even (the wings' permutation stays even) and the dedge permutation has
    parity ``edge_parity`` (the corners' parity: no PLL parity on the reduced 3x3; None: either).
    Greedy by wings already in place, then the cheapest re-flip and swap for the two
    parities. ``orbits``: the wings of these orbits only are counted."""
    chosen = range(1, (n - 2) // 2 + 1) if orbits is None else orbits
    weight = _dedge_weights(np.array([_homes(state, n, j) for j in chosen], dtype=np.int64))
    # greedy by weight, ties to the larger (edge, dedge, flip): flat index e * 24 + k * 2 + f
    flat = weight.reshape(-1)
    index = np.arange(flat.size)
    dedge: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    for i in np.lexsort((-index, -flat)).tolist():
        e, k, f = i // 24, (i // 2) % 12, i % 2
        if e not in dedge and k not in used:
            dedge[e] = (k, f)
            used.add(k)
            if len(dedge) == 12:
                break
    ks = np.array([dedge[e][0] for e in range(12)], dtype=np.int64)
    fs = np.array([dedge[e][1] for e in range(12)], dtype=np.int64)
    edges = np.arange(12)
    if int(fs.sum()) % 2:
        e = int(np.argmax(weight[edges, ks, 1 - fs] - weight[edges, ks, fs]))
        fs[e] = 1 - fs[e]
    if edge_parity is not None and _parity(ks.tolist()) != edge_parity:
        # swap the dedges of the two edges that lose least (first pair in (x, y) order)
        own = weight[edges, ks, fs]
        swap = weight[edges[:, None], ks[None, :], fs[:, None]]  # [x, y]: x gets y's dedge
        gain = swap + swap.T - own[:, None] - own[None, :]
        xs, ys = np.triu_indices(12, 1)
        pick = int(np.argmax(gain[xs, ys]))
        e1, e2 = int(xs[pick]), int(ys[pick])
        ks[e1], ks[e2] = ks[e2], ks[e1]
    dedge = {e: (int(ks[e]), int(fs[e])) for e in range(12)}
    targets = [0] * 24
    for e, (k, f) in dedge.items():
        targets[2 * e], targets[2 * e + 1] = 2 * k + f, 2 * k + 1 - f
    return targets


def _dedge_weights(homes: IntArray) -> IntArray:
    """``[e, k, f]``: how many wings (of the orbits whose :func:`_homes` are the rows of
    ``homes``) already sit where dedge ``k`` in edge ``e`` with flip ``f`` puts them."""
    first, second = homes[:, 0::2], homes[:, 1::2]  # (orbits, edge)
    even = 2 * np.arange(12)[None, None, :]
    out = np.empty((12, 12, 2), dtype=np.int64)
    for f in (0, 1):  # flip f: the edge's first slot holds piece 2k + f, its second 2k + 1 - f
        out[:, :, f] = (first[:, :, None] == even + f).sum(axis=0)
        out[:, :, f] += (second[:, :, None] == even + 1 - f).sum(axis=0)
    return out


def midge_targets(state: Colours, n: int) -> list[int]:
    """Odd N: the wing that pairs with the middle edge now in each slot's edge (the same for
    every orbit), so that the wings can be paired before the 3x3 is solved."""
    nn = n * n
    prim, sec = orbit_slots(n, 1)
    home = {(int(p) // nn, int(s) // nn): k for k, (p, s) in enumerate(zip(prim, sec, strict=True))}
    mid = (n - 2) // 2
    colour_on: dict[frozenset[int], dict[int, int]] = {}
    for wings in cubie_layout(n).edges:
        a, b = (int(x) for x in wings[mid])
        colour_on[frozenset((a // nn, b // nn))] = {a // nn: int(state[a]), b // nn: int(state[b])}
    targets = []
    for p, s in zip(prim, sec, strict=True):
        fp, fs = int(p) // nn, int(s) // nn
        midge = colour_on[frozenset((fp, fs))]
        targets.append(home[(midge[fp], midge[fs])])
    return targets
