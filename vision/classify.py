"""Colour classification: sticker colour samples of one scan → a cube, with confidences.

The method follows what works on real scans (see the README's vision section); each stage can
be switched off to measure what it adds (:class:`Stage`):

1. **References from the scan itself**, never a fixed palette. For odd N the six fixed centres
   are the references and the labels are "the colour of face f's centre" (the *frame*). For even
   N the stickers are split into six groups of exactly N² by balanced k-means, and the frame is
   the labelling of those groups under which the corners and edge wings are most nearly real
   pieces (tried over all 720 labellings; the 24 rotations of the right one tie).
2. **Balanced assignment**: every colour appears exactly N² times (a min-cost assignment).
3. **Piece constraints**: every corner, midge and edge wing is a real piece, each exactly once,
   and every orbit of centre stickers holds each colour equally often; solved as one min-cost
   assignment per orbit (:mod:`vision.pieces`), which implies the colour counts.
4. **Cheapest repair**: if the corners' twist, the midges' flip or the corner/midge permutation
   parity is impossible, the cheapest change (by colour-distance cost) that fixes it is made
   and reported: an exact dynamic programme over orientations, and for parity the cheapest
   exchange of two pieces.

The cost of giving a sticker a colour is its squared CIE76 distance to that colour's reference;
after each assignment the references become the mean of the stickers given that colour and the
assignment is redone until it is stable (an EM-style refinement on the scan's own colours).

Finally the frame labels are named with colours of the scheme: of the 24 legal arrangements of
centre colours, the one whose named colours best match the nominal palette (after taking the
"white" stickers as the white point), or a palette learned from a solved cube, is chosen. For odd
N this only names colours — the facelet string by centres does not depend on it.

Costs are squared Mahalanobis distances under the within-colour covariance pooled over this
scan (as in linear discriminant analysis; the first round, before any colour is known, uses
plain CIE76 distance). Every sticker gets a confidence: the posterior probability of its colour
under that Gaussian model, with its own colour's reference computed without it (leave-one-out).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

from solver.cube.cubie import Corner, Edge, permutation_parity
from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.validate import validate
from solver.errors import Problem
from vision.colour import FloatArray, nominal_lab, pairwise_sq_dist
from vision.errors import ScanInputError
from vision.pieces import Orbit, OrbitKind, orbits

__all__ = [
    "Classification",
    "ColourPalette",
    "Repair",
    "Stage",
    "StickerRef",
    "classify",
    "legal_centre_arrangements",
]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.intp]

#: Median of a chi-square variable with 3 degrees of freedom (robust variance estimate).
_CHI2_3_MEDIAN = 2.3660
#: Refinement rounds of references and assignment (it usually settles in 2-3).
MAX_REFINE_ROUNDS = 6
#: Restarts of the balanced k-means used for even N (seeded, so results are deterministic).
KMEANS_RESTARTS = 6
#: Added to the pooled covariance (L*a*b* units²): the sensor's noise floor, roughly 1 unit.
COVARIANCE_RIDGE = 1.0
#: Below this posterior a sticker is reported as low-confidence.
DEFAULT_LOW_CONFIDENCE = 0.9


class Stage(IntEnum):
    """How much of the method to use (the benchmark measures each; scans use ``REPAIR``)."""

    NEAREST = 0  # nearest reference only
    BALANCED = 1  # + exactly N² stickers per colour
    PIECES = 2  # + every piece real and distinct
    REPAIR = 3  # + cheapest repair of twist, flip and parity


@dataclass(frozen=True, slots=True)
class StickerRef:
    """A sticker in the project's LTR layout (see :mod:`solver.cube.facelets`)."""

    face: Face
    row: int
    col: int

    def flat(self, n: int) -> int:
        return int(self.face) * n * n + self.row * n + self.col

    @classmethod
    def from_flat(cls, index: int, n: int) -> StickerRef:
        face, rest = divmod(index, n * n)
        return cls(Face(face), rest // n, rest % n)

    def __str__(self) -> str:
        return f"{self.face.name}[{self.row},{self.col}]"


@dataclass(frozen=True, slots=True)
class Repair:
    """A change the classifier made to reach a valid cube, with its cost."""

    kind: str  # "twist" | "flip" | "parity"
    where: str  # e.g. "corner URF", "corners URF/UBR exchanged"
    stickers: tuple[StickerRef, ...]
    before: tuple[int, ...]  # colour indices (scheme) before the repair
    after: tuple[int, ...]
    cost: float  # added colour-distance cost (squared L*a*b* units)

    def describe(self, scheme: ColourScheme = DEFAULT_SCHEME) -> str:
        changes = ", ".join(
            f"{s} {scheme.colours[b]}→{scheme.colours[a]}"
            for s, b, a in zip(self.stickers, self.before, self.after, strict=True)
            if a != b
        )
        return f"{self.kind} repair at {self.where} (cost {self.cost:.1f}): {changes}"


@dataclass(frozen=True, slots=True)
class ColourPalette:
    """Reference L*a*b* of each scheme colour (U R F D L B order), e.g. learned from a solved
    cube by ``cuberobot vision learn-colors``. Only used to *name* colours, never to classify."""

    lab: tuple[tuple[float, float, float], ...]
    scheme: ColourScheme = DEFAULT_SCHEME

    def __post_init__(self) -> None:
        if len(self.lab) != 6 or any(len(v) != 3 for v in self.lab):
            raise ValueError("a colour palette has six L*a*b* triples (U R F D L B)")


@dataclass(frozen=True, slots=True)
class Classification:
    """The cube read from one scan and how sure the reading is."""

    cube: Cube
    confidence: FloatArray  # (6, N, N) posterior of each sticker's colour, LTR layout
    low_confidence: tuple[StickerRef, ...]
    repairs: tuple[Repair, ...]
    problems: tuple[Problem, ...]  # what solver.cube.validate still finds (empty: valid)
    references: FloatArray  # (6, 3) L*a*b* of each scheme colour as seen in this scan
    scheme: ColourScheme = field(default=DEFAULT_SCHEME)
    stage: Stage = Stage.REPAIR

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def n(self) -> int:
        return self.cube.n


# ---------------------------------------------------------------------------------------------
# Orbit assignment


@dataclass(frozen=True, slots=True)
class _OrbitTables:
    orbit: Orbit
    by_slot: IntArray  # (S, O): tuple index of each slot and orientation
    modulus: int  # orientation constraint modulus (3 corners, 2 midges, 0 none)


@lru_cache(maxsize=16)
def _tables(n: int) -> tuple[_OrbitTables, ...]:
    result = []
    for orb in orbits(n):
        order = np.lexsort((orb.orientation, orb.slot_of))
        by_slot = order.reshape(orb.size, -1).astype(np.intp)
        modulus = {OrbitKind.CORNER: 3, OrbitKind.MIDGE: 2}.get(orb.kind, 0)
        result.append(_OrbitTables(orb, by_slot, modulus))
    return tuple(result)


@dataclass(slots=True)
class _OrbitSolution:
    tables: _OrbitTables
    tuple_cost: FloatArray  # (T, P)
    perm: IntArray  # slot -> piece
    orient: IntArray  # slot -> orientation index (column of by_slot)

    def cost(self) -> float:
        t = self.tables.by_slot[np.arange(self.perm.size), self.orient]
        return float(self.tuple_cost[t, self.perm].sum())

    def write(self, labels: IntArray) -> None:
        orb = self.tables.orbit
        t = self.tables.by_slot[np.arange(self.perm.size), self.orient]
        labels[orb.tuples[t]] = orb.pieces[self.perm]


def _tuple_cost(orb: Orbit, cost: FloatArray) -> FloatArray:
    total = np.zeros((orb.tuples.shape[0], orb.size))
    for k in range(orb.width):
        total += cost[np.ix_(orb.tuples[:, k], orb.pieces[:, k])]
    return total


def _solve_orbit(tables: _OrbitTables, cost: FloatArray, fixed_frame: bool) -> _OrbitSolution:
    orb = tables.orbit
    tc = _tuple_cost(orb, cost)
    slot_cost = tc[tables.by_slot]  # (S, O, P)
    if orb.kind is OrbitKind.FIXED and fixed_frame:
        perm = np.arange(orb.size, dtype=np.intp)
    else:
        rows, cols = linear_sum_assignment(slot_cost.min(axis=1))
        perm = np.empty(orb.size, dtype=np.intp)
        perm[rows] = cols
    orient = slot_cost[np.arange(orb.size), :, perm].argmin(axis=1).astype(np.intp)
    return _OrbitSolution(tables, tc, perm, orient)


def _best_orientations(sol: _OrbitSolution, perm: IntArray) -> tuple[IntArray, float]:
    """Cheapest orientation of every slot (given the pieces) whose sum obeys the orbit's law."""
    tables = sol.tables
    m = tables.modulus
    slots = np.arange(perm.size)
    oc = sol.tuple_cost[tables.by_slot, perm[:, None]]  # (S, O)
    if m == 0:
        orient = oc.argmin(axis=1).astype(np.intp)
        return orient, float(oc[slots, orient].sum())
    inf = float("inf")
    best = [0.0] + [inf] * (m - 1)
    choice: list[list[tuple[int, int]]] = []
    for s in slots:
        nxt = [inf] * m
        back = [(0, 0)] * m
        for r in range(m):
            if best[r] == inf:
                continue
            for o in range(m):
                value = best[r] + float(oc[s, o])
                if value < nxt[(r + o) % m]:
                    nxt[(r + o) % m] = value
                    back[(r + o) % m] = (r, o)
        choice.append(back)
        best = nxt
    orient = np.zeros(perm.size, dtype=np.intp)
    r = 0
    for s in reversed(slots):
        prev, o = choice[s][r]
        orient[s] = o
        r = prev
    return orient, best[0]


def _slot_name(kind: OrbitKind, slot: int, n: int) -> str:
    if kind is OrbitKind.CORNER:
        return Corner(slot).name
    if kind is OrbitKind.MIDGE:
        return Edge(slot).name
    return str(slot)


def _make_repair(
    kind: str,
    where: str,
    before: IntArray,
    after: IntArray,
    cost: float,
    n: int,
) -> Repair:
    changed = np.flatnonzero(before != after)
    return Repair(
        kind,
        where,
        tuple(StickerRef.from_flat(int(i), n) for i in changed),
        tuple(int(before[i]) for i in changed),
        tuple(int(after[i]) for i in changed),
        cost,
    )


@dataclass(slots=True)
class _Assignment:
    labels: IntArray  # frame label of every flat sticker
    repairs: list[tuple[str, str, IntArray, IntArray, float]]  # kind, where, before, after, cost


def _assign(cost: FloatArray, n: int, stage: Stage, fixed_frame: bool) -> _Assignment:
    """Frame labels of all stickers under the constraints of ``stage``."""
    m = 6 * n * n
    if stage is Stage.NEAREST or n == 1:
        labels = cost.argmin(axis=1).astype(np.intp)
        if fixed_frame:
            _force_fixed(labels, n)
        return _Assignment(labels, [])
    if stage is Stage.BALANCED:
        expanded = np.repeat(cost, n * n, axis=1)
        if fixed_frame:
            # The fixed centres keep their own label: make every other column forbidden.
            for face, index in enumerate(_fixed_indices(n)):
                row = np.full(m, 1e12)
                row[face * n * n : (face + 1) * n * n] = 0.0
                expanded[index] = row
        rows, cols = linear_sum_assignment(expanded)
        labels = np.empty(m, dtype=np.intp)
        labels[rows] = cols // (n * n)
        return _Assignment(labels, [])
    solutions = [_solve_orbit(t, cost, fixed_frame) for t in _tables(n)]
    labels = np.full(m, -1, dtype=np.intp)
    for sol in solutions:
        sol.write(labels)
    assignment = _Assignment(labels, [])
    if stage is Stage.REPAIR:
        _repair(solutions, assignment, n)
    return assignment


def _repair(solutions: list[_OrbitSolution], assignment: _Assignment, n: int) -> None:
    """Fix twist, flip and (odd N) corner/midge parity at the least added cost."""
    corner = next(s for s in solutions if s.tables.orbit.kind is OrbitKind.CORNER)
    midge = next((s for s in solutions if s.tables.orbit.kind is OrbitKind.MIDGE), None)

    def record(kind: str, where: str, sols: Sequence[_OrbitSolution], before_cost: float) -> None:
        before = assignment.labels.copy()
        for s in sols:
            s.write(assignment.labels)
        after_cost = sum(s.cost() for s in sols)
        assignment.repairs.append(
            (kind, where, before, assignment.labels.copy(), after_cost - before_cost)
        )

    for sol, kind in ((corner, "twist"), (midge, "flip")):
        if sol is None:
            continue
        m = sol.tables.modulus
        if int(sol.orient.sum()) % m:
            before_cost = sol.cost()
            orient, _ = _best_orientations(sol, sol.perm)
            changed = np.flatnonzero(orient != sol.orient)
            sol.orient = orient
            names = ", ".join(_slot_name(sol.tables.orbit.kind, int(s), n) for s in changed)
            record(kind, f"{sol.tables.orbit.kind.value} {names}", [sol], before_cost)
    if midge is None or permutation_parity(corner.perm.tolist()) == permutation_parity(
        midge.perm.tolist()
    ):
        return
    before_cost = corner.cost() + midge.cost()
    best: tuple[float, _OrbitSolution, IntArray, IntArray, tuple[int, int]] | None = None
    for sol in (corner, midge):
        other = midge if sol is corner else corner
        for a, b in itertools.combinations(range(sol.perm.size), 2):
            perm = sol.perm.copy()
            perm[a], perm[b] = perm[b], perm[a]
            orient, value = _best_orientations(sol, perm)
            total = value + other.cost()
            if best is None or total < best[0]:
                best = (total, sol, perm, orient, (a, b))
    assert best is not None
    _, sol, perm, orient, (a, b) = best
    sol.perm, sol.orient = perm, orient
    kind_name = sol.tables.orbit.kind
    where = (
        f"{kind_name.value}s {_slot_name(kind_name, a, n)}/{_slot_name(kind_name, b, n)} exchanged"
    )
    record("parity", where, [corner, midge], before_cost)


@lru_cache(maxsize=16)
def _fixed_indices(n: int) -> tuple[int, ...]:
    mid = n // 2
    return tuple(f * n * n + mid * n + mid for f in range(6))


def _force_fixed(labels: IntArray, n: int) -> None:
    for face, index in enumerate(_fixed_indices(n)):
        labels[index] = face


# ---------------------------------------------------------------------------------------------
# References


def _balanced_kmeans(x: FloatArray, n: int, rng: np.random.Generator) -> FloatArray:
    """Six centres of x split into groups of exactly N² (best of a few seeded restarts)."""
    m = x.shape[0]
    best_cost = float("inf")
    best_centres = x[:6].copy()
    for _ in range(KMEANS_RESTARTS):
        # k-means++ seeding
        centres = [x[int(rng.integers(m))]]
        for _k in range(5):
            d = pairwise_sq_dist(x, np.array(centres)).min(axis=1)
            total = float(d.sum())
            pick = int(rng.choice(m, p=d / total)) if total > 0 else int(rng.integers(m))
            centres.append(x[pick])
        c = np.array(centres)
        labels = np.full(m, -1, dtype=np.intp)
        value = float("inf")
        for _it in range(20):
            cost = np.repeat(pairwise_sq_dist(x, c), n * n, axis=1)
            rows, cols = linear_sum_assignment(cost)
            new = np.empty(m, dtype=np.intp)
            new[rows] = cols // (n * n)
            value = float(cost[rows, cols].sum())
            if np.array_equal(new, labels):
                break
            labels = new
            c = np.array([x[labels == k].mean(axis=0) for k in range(6)])
        if value < best_cost:
            best_cost, best_centres = value, c
    return best_centres


@lru_cache(maxsize=1)
def _all_perms() -> IntArray:
    return np.array(list(itertools.permutations(range(6))), dtype=np.intp)


def _frame_from_clusters(cluster_cost: FloatArray, n: int) -> IntArray:
    """The labelling of six clusters (cluster j → frame label) under which corners and wings are
    most nearly real pieces. Returns ``label_of_cluster`` (6,)."""
    perms = _all_perms()  # perms[q, j] = label of cluster j
    inverse = np.argsort(perms, axis=1)  # inverse[q, label] = cluster
    totals = np.zeros(perms.shape[0])
    for tables in _tables(n):
        orb = tables.orbit
        if orb.kind not in (OrbitKind.CORNER, OrbitKind.WING, OrbitKind.MIDGE):
            continue
        tc = np.zeros((perms.shape[0], orb.tuples.shape[0], orb.size))
        for k in range(orb.width):
            clusters = inverse[:, orb.pieces[:, k]]  # (Q, P)
            per_sticker = cluster_cost[orb.tuples[:, k]]  # (T, 6)
            tc += np.transpose(per_sticker[:, clusters], (1, 0, 2))
        slot_cost = tc[:, tables.by_slot].min(axis=2)  # (Q, S, P)
        for q in range(perms.shape[0]):
            rows, cols = linear_sum_assignment(slot_cost[q])
            totals[q] += slot_cost[q][rows, cols].sum()
    best: IntArray = perms[int(totals.argmin())]
    return best


@lru_cache(maxsize=1)
def legal_centre_arrangements() -> tuple[tuple[int, ...], ...]:
    """The 24 ways the six centre colours can sit (``arr[face] = colour``)."""
    solved = Cube.solved(3)
    found: list[tuple[int, ...]] = []
    for pre in ("", "x", "x2", "x'", "z", "z'"):
        for post in ("", "y", "y2", "y'"):
            centres = solved.apply(f"{pre} {post}").centre_colours()
            assert centres is not None
            found.append(tuple(centres))
    return tuple(found)


def _name_frame(
    refs: FloatArray, scheme: ColourScheme, palette: ColourPalette | None
) -> tuple[int, ...]:
    """Which scheme colour each frame label is: one of the 24 legal arrangements."""
    best: tuple[float, tuple[int, ...]] | None = None
    target = np.array(palette.lab, dtype=np.float64) if palette is not None else nominal_lab(scheme)
    if palette is None:
        # Each L*a*b* channel standardised over the six colours, for the scan and the nominal
        # palette alike: invariant to a white-balance shift and to exposure or saturation
        # scaling of each channel, so only the *order and spacing* of the colours along each
        # channel decides (cameras render orange pinkish and yellow nearly white, but orange
        # stays lighter than red and yellow yellower than white).
        measured = _standardise(refs)
        target = _standardise(target)
    else:
        measured = refs
    for arr in legal_centre_arrangements():
        colour_of = np.array(arr)
        score = float(((measured - target[colour_of]) ** 2).sum())
        if best is None or score < best[0]:
            best = (score, arr)
    assert best is not None
    return best[1]


def _pooled_precision(x: FloatArray, labels: IntArray, refs: FloatArray) -> FloatArray:
    """Inverse of the within-colour covariance pooled over the six colours (as in linear
    discriminant analysis): it learns from this scan how much lightness varies with shading
    compared with hue, so no weights between L*, a* and b* are fixed by hand. A ridge of
    :data:`COVARIANCE_RIDGE` keeps it well-conditioned on tiny or perfectly clean scans."""
    residual = x - refs[labels]
    dof = max(x.shape[0] - 6, 1)
    cov = residual.T @ residual / dof + COVARIANCE_RIDGE * np.eye(3)
    result: FloatArray = np.linalg.inv(cov)
    return result


def _mahalanobis(x: FloatArray, refs: FloatArray, precision: FloatArray) -> FloatArray:
    diff = x[:, None, :] - refs[None, :, :]
    result: FloatArray = np.einsum("mki,ij,mkj->mk", diff, precision, diff)
    return result


def _standardise(values: FloatArray) -> FloatArray:
    centred = values - values.mean(axis=0)
    spread = centred.std(axis=0)
    result: FloatArray = centred / np.where(spread > 1e-9, spread, 1.0)
    return result


def _means(x: FloatArray, labels: IntArray, previous: FloatArray) -> FloatArray:
    refs = previous.copy()
    for k in range(6):
        members = x[labels == k]
        if members.shape[0]:
            refs[k] = members.mean(axis=0)
    return refs


# ---------------------------------------------------------------------------------------------
# Entry point


def classify(
    lab: npt.ArrayLike,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
    palette: ColourPalette | None = None,
    stage: Stage = Stage.REPAIR,
    low_confidence: float = DEFAULT_LOW_CONFIDENCE,
    seed: int = 0,
) -> Classification:
    """Classify the L*a*b* samples of one scan, shape ``(6, N, N, 3)`` in LTR layout.

    Raises :class:`~vision.errors.ScanInputError` if the array has the wrong shape or holds
    non-finite values. An impossible result is not an error: ``problems`` says what is wrong.
    """
    x = np.asarray(lab, dtype=np.float64)
    if x.ndim != 4 or x.shape[0] != 6 or x.shape[1] != x.shape[2] or x.shape[3] != 3:
        raise ScanInputError(f"expected samples of shape (6, N, N, 3), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ScanInputError("colour samples contain NaN or infinite values")
    n = x.shape[1]
    flat = x.reshape(-1, 3)
    fixed_frame = n % 2 == 1
    if fixed_frame:
        refs = flat[list(_fixed_indices(n))].copy()
    else:
        rng = np.random.default_rng(seed)
        centres = _balanced_kmeans(flat, n, rng)
        label_of_cluster = _frame_from_clusters(pairwise_sq_dist(flat, centres), n)
        refs = np.empty_like(centres)
        refs[label_of_cluster] = centres

    labels = np.full(flat.shape[0], -1, dtype=np.intp)
    assignment = _Assignment(labels, [])
    metric = np.eye(3)
    for _round in range(MAX_REFINE_ROUNDS):
        cost = _mahalanobis(flat, refs, metric)
        new = _assign(cost, n, stage, fixed_frame)
        refs = _means(flat, new.labels, refs)
        metric = _pooled_precision(flat, new.labels, refs)
        converged = np.array_equal(new.labels, assignment.labels)
        assignment = new
        if converged:
            break

    colour_of = np.array(_name_frame(refs, scheme, palette), dtype=np.intp)
    colours = colour_of[assignment.labels]
    cube = Cube(colours.astype(np.uint8), n)

    # Confidence: posterior of the chosen label under the Gaussian model of this scan (the
    # costs are squared Mahalanobis distances, so unit variance).
    # Leave-one-out: a sticker's own colour reference is taken without the sticker itself
    # (x - μ₋ᵢ = k/(k-1)·(x - μ) for a colour of k stickers), so an odd sticker does not vouch
    # for itself by pulling the reference towards it.
    cost = _mahalanobis(flat, refs, metric)
    rows = np.arange(flat.shape[0])
    members = np.bincount(assignment.labels, minlength=6)[assignment.labels]
    loo = (members / np.maximum(members - 1, 1)) ** 2
    cost[rows, assignment.labels] *= loo
    logits = -(cost - cost.min(axis=1, keepdims=True)) / 2.0
    post = np.exp(logits)
    post /= post.sum(axis=1, keepdims=True)
    confidence = post[np.arange(flat.shape[0]), assignment.labels].reshape(6, n, n)
    repairs = tuple(
        _make_repair(kind, where, colour_of[before], colour_of[after], value, n)
        for kind, where, before, after, value in assignment.repairs
    )
    repaired = {s.flat(n) for r in repairs for s in r.stickers}
    unsure = sorted(
        set(np.flatnonzero(confidence.reshape(-1) < low_confidence).tolist()) | repaired
    )
    named_refs = np.empty_like(refs)
    named_refs[colour_of] = refs
    problems = tuple(validate(cube, scheme))
    if problems:
        log.info("scan gives an impossible cube: %s", "; ".join(p.message for p in problems))
    return Classification(
        cube=cube,
        confidence=confidence,
        low_confidence=tuple(StickerRef.from_flat(int(i), n) for i in unsure),
        repairs=repairs,
        problems=problems,
        references=named_refs,
        scheme=scheme,
        stage=stage,
    )
