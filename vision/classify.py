"""Colour classification: sticker colour samples of one scan → a cube, with confidences.

The method follows what works on real scans (docs/vision.md); each level of constraint can be
switched off to measure what it adds (:class:`~vision.assign.ConstraintLevel`):

1. **References from the scan itself**, never a fixed palette (:mod:`vision.references`). For
   odd N the six fixed centres are the references; for even N the stickers are split into six
   groups of exactly N² by balanced k-means, and the frame is the labelling of those groups
   under which the corners and edge wings are most nearly real pieces.
2. **Balanced assignment**: every colour appears exactly N² times (a min-cost assignment).
3. **Piece constraints**: every corner, midge and edge wing is a real piece, each exactly once,
   and every orbit of centre stickers holds each colour equally often (:mod:`vision.assign`).
4. **Cheapest repair**: an impossible twist, flip or corner/midge parity is fixed by the cheapest
   change (by colour-distance cost), which is reported.

Light that varies across a face is measured after a first reading and undone in camera RGB
(:mod:`vision.shading`); the scan is then read again from the corrected samples.

Costs are squared Mahalanobis distances under the within-colour covariance pooled over this scan
(the first round, before any colour is known, uses plain CIE76 distance); after each assignment
the references become the mean of the stickers given that colour and the assignment is redone
until it is stable. Finally the frame labels are named with colours of the scheme.

**Confidence and verdict** (:mod:`vision.confidence`): every sticker's confidence is the
posterior of its colour against the nearest other *legal* reading that changes it; the cube's
confidence is the lowest of them. A read is ``accepted`` when it is a valid cube and its
confidence reaches :data:`ACCEPT_CONFIDENCE` (chosen on held-apart real data, see
docs/vision-calibration.md); otherwise it is ``refused`` and the stickers in doubt are named.
A repaired cube is accepted only when the repair itself clears the bar: the rival readings then
include the other repairs, so a repair that is a close call is refused. Two rules look outside the
legal readings: a sticker the scan shows as a typical member of another colour than the one read
has no margin (:func:`contradicted`: a face photographed after the cube turned), judged under the
answer's model and again under a robust one that the misread stickers cannot move
(:func:`vision.references.robust_model_costs`; there a sticker that looks like the scan's
lightest colour is left to the constraints, since glare pulls any colour towards it, unless
another sticker of its edge line of the face objects too: a turn moves a whole line); and a face
whose samples repeat another face's exactly refuses the read (:func:`repeated_faces`). These rules
live in :mod:`vision.objections`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.validate import validate
from solver.errors import Problem
from vision.assign import Assignment, ConstraintLevel, assign, fixed_indices
from vision.clipping import (
    at_level,
    deficit_cost,
    per_sticker_hypothesis,
    saturated_levels,
    sticker_projectors,
)
from vision.colour import (
    FloatArray,
    lab_to_invariant,
    lab_to_rgb,
    pairwise_sq_dist,
    rgb_to_lab,
)
from vision.confidence import (
    ACCEPT_MARGIN,
    confidence_from_margin,
    leave_one_out,
    sticker_margins,
)
from vision.errors import NoCubeError, ScanInputError
from vision.objections import (
    ROBUST_CONTRADICTION_COST,
    ROBUST_TYPICAL_SPREAD,
    contradicted,
    left_to_constraints,
    repeated_faces,
    turned_lines,
)
from vision.references import (
    balanced_kmeans,
    colour_costs,
    face_offsets,
    frame_from_clusters,
    light_projectors,
    mahalanobis,
    means,
    name_frame,
    per_hypothesis,
    pooled_precision,
    robust_cost,
    robust_model_costs,
    separation,
)
from vision.shading import correct_shading, frozen_channels, local_gains

__all__ = [
    "ACCEPT_CONFIDENCE",
    "DEFAULT_LOW_CONFIDENCE",
    "Classification",
    "ColourPalette",
    "ConstraintLevel",
    "Repair",
    "StickerRef",
    "classify",
    "make_repair",
]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.intp]

#: Refinement rounds of references and assignment (it usually settles in 2-3).
MAX_REFINE_ROUNDS = 6
#: The fourth-closest pair of the six colours must be at least this far apart (squared
#: Mahalanobis units, :func:`vision.references.separation`): real scans, even darkened or
#: colour-cast, give 20 or more; random colours 2 to 8 (docs/vision-calibration.md).
MIN_SEPARATION = 12.0
#: Repairs adding more than this to the colour cost (the samples prefer the impossible cube by a
#: likelihood ratio of more than e^4.5, the same as ACCEPT_MARGIN) are not backed: refused.
MAX_REPAIR_COST = ACCEPT_MARGIN
#: Below this confidence a sticker is reported as low-confidence.
DEFAULT_LOW_CONFIDENCE = 0.9
#: A valid read is accepted when its cube confidence is at least this: the confidence of
#: :data:`~vision.confidence.ACCEPT_MARGIN` (docs/vision-calibration.md).
ACCEPT_CONFIDENCE = float(confidence_from_margin(np.array(ACCEPT_MARGIN)))


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
    """A change the classifier made to reach a valid cube, with its cost (never negative)."""

    kind: str  # "twist" | "flip" | "parity" (or a combination joined by "+")
    where: str  # e.g. "corner URF", "corners URF/UBR exchanged"
    stickers: tuple[StickerRef, ...]
    before: tuple[int, ...]  # colour indices (scheme) before the repair
    after: tuple[int, ...]
    cost: float  # added colour-distance cost (squared Mahalanobis units)

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
    """The cube read from one scan, how sure the reading is, and the verdict."""

    cube: Cube
    confidence: FloatArray  # (6, N, N) confidence of each sticker's colour, LTR layout
    low_confidence: tuple[StickerRef, ...]
    repairs: tuple[Repair, ...]
    problems: tuple[Problem, ...]  # what solver.cube.validate still finds (empty: valid)
    references: FloatArray  # (6, 3) L*a*b* of each scheme colour as seen in this scan
    scheme: ColourScheme = field(default=DEFAULT_SCHEME)
    level: ConstraintLevel = ConstraintLevel.REPAIR
    margins: FloatArray | None = None  # (6, N, N) cost gap to the nearest rival reading
    accept_confidence: float = ACCEPT_CONFIDENCE
    separation: float = float("inf")  # see vision.references.separation
    #: (6, N, N, 6) cost of each scheme colour for every sticker (twice a negative
    #: log-likelihood, leave-one-out, up to a constant): the evidence :mod:`vision.evidence`
    #: combines over views
    colour_costs: FloatArray | None = None
    #: (6, N, N) the stickers the second opinion (no per-face light) reads as another colour:
    #: this read supports two cubes there, so it is no evidence for either
    disputed: npt.NDArray[np.bool_] | None = None
    #: (6, N, N) the stickers of faces whose samples repeat another face's exactly (turned or
    #: mirrored): no camera sees two faces so; the same image given twice, or a stuck frame.
    #: Such a face is no evidence of what it should show, so the read is refused with it in doubt
    repeated: npt.NDArray[np.bool_] | None = None

    @property
    def distinct(self) -> bool:
        """The six colours are far enough apart to be a cube's (not random or blank colours)."""
        return self.separation >= MIN_SEPARATION

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def n(self) -> int:
        return self.cube.n

    @property
    def cube_confidence(self) -> float:
        """Posterior of the whole read against its nearest legal rival (0..1)."""
        return float(self.confidence.min())

    @property
    def cube_margin(self) -> float:
        """Cost gap (twice a log-likelihood ratio) to the nearest legal rival reading."""
        return float(self.margins.min()) if self.margins is not None else 0.0

    @property
    def repair_cost(self) -> float:
        """What the repairs added to the colour cost: how strongly the samples themselves
        prefer an impossible cube to the one returned (0 without repairs)."""
        return float(sum(r.cost for r in self.repairs))

    @property
    def repair_backed(self) -> bool:
        """No repair, or repairs the samples hardly object to (cost within the bar): a repair
        of a close call between two colours, not a cube assembled wrong or badly misread."""
        return self.repair_cost <= MAX_REPAIR_COST

    @property
    def accepted(self) -> bool:
        """A valid cube of distinct colours whose confidence clears the calibrated bar, with
        no repair the samples object to."""
        return (
            self.valid
            and self.distinct
            and self.repair_backed
            and not self.repeats_a_face
            and self.cube_confidence >= self.accept_confidence
        )

    @property
    def repeats_a_face(self) -> bool:
        """A face's samples repeat another's exactly (see ``repeated``)."""
        return self.repeated is not None and bool(self.repeated.any())

    @property
    def verdict(self) -> str:
        return "accepted" if self.accepted else "refused"

    @property
    def in_doubt(self) -> tuple[StickerRef, ...]:
        """The stickers below the acceptance bar (those a re-scan should look at again); all
        of them when the colours are not distinct."""
        bar = self.accept_confidence if self.distinct else 2.0
        doubt = set(np.flatnonzero(self.confidence.reshape(-1) < bar).tolist())
        if not self.repair_backed:
            doubt |= {s.flat(self.n) for r in self.repairs for s in r.stickers}
        if self.repeated is not None:
            doubt |= set(np.flatnonzero(self.repeated.reshape(-1)).tolist())
        return tuple(StickerRef.from_flat(int(i), self.n) for i in sorted(doubt))


def _check_samples(lab: npt.ArrayLike) -> FloatArray:
    x = np.asarray(lab, dtype=np.float64)
    if x.ndim != 4 or x.shape[0] != 6 or x.shape[1] != x.shape[2] or x.shape[3] != 3:
        raise ScanInputError(f"expected samples of shape (6, N, N, 3), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ScanInputError("colour samples contain NaN or infinite values")
    return x


def _initial_references(flat: FloatArray, n: int, seed: int) -> FloatArray:
    if n % 2 == 1:
        return flat[list(fixed_indices(n))].copy()
    centres = balanced_kmeans(flat, n, np.random.default_rng(seed))
    label_of_cluster = frame_from_clusters(pairwise_sq_dist(flat, centres), n)
    refs = np.empty_like(centres)
    refs[label_of_cluster] = centres
    return refs


def _refine(
    flat: FloatArray,
    refs: FloatArray,
    n: int,
    level: ConstraintLevel,
    face_light: bool = True,
    rgb: FloatArray | None = None,
) -> tuple[Assignment, FloatArray, FloatArray, FloatArray]:
    """Assign, re-estimate references, each face's light and the metric; repeat until stable.
    Returns the assignment, the references and the samples corrected for each face's light,
    per hypothesis ``(m, 6, 3)`` (:func:`vision.references.per_hypothesis`).

    ``rgb``: the samples in camera RGB, to find the colours saturated in all three channels
    (:func:`_clipped_channels`): a face's light does not move those (a white clipped in every
    channel reads the same on every face), so it is not taken off them
    (:func:`vision.references.light_projectors`)."""
    assignment = Assignment(np.full(flat.shape[0], -1, dtype=np.intp))
    metric = np.eye(3)
    adjusted = np.repeat(flat[:, None, :], 6, axis=1)
    offsets = np.zeros((6, 3))
    for _round in range(MAX_REFINE_ROUNDS):
        cost = mahalanobis(adjusted, refs, metric)
        if _round:
            # Once the metric is learned, assign under the heavy-tailed (Student-t) model the
            # confidences use: one sticker washed out by glare then costs its true colour
            # only logarithmically more, instead of pushing a cycle of good stickers of an
            # orbit one colour along (a 7x7 centre orbit: 4 stickers wrong for 1 glare).
            cost = robust_cost(cost)
        new = assign(cost, n, level, n % 2 == 1)
        refs = means(adjusted, new.labels, refs)
        if face_light:
            passes = np.ones((6, 3))
            if rgb is not None:
                passes = 1.0 - _clipped_channels(rgb, new.labels).astype(np.float64)
            offsets = face_offsets(flat, new.labels, refs, n)
            adjusted = per_hypothesis(flat, offsets, light_projectors(passes))
            refs = means(adjusted, new.labels, refs)
        metric = pooled_precision(adjusted, new.labels, refs)
        converged = np.array_equal(new.labels, assignment.labels)
        assignment = new
        if converged:
            break
    return assignment, refs, adjusted, offsets


def classify(
    lab: npt.ArrayLike,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
    palette: ColourPalette | None = None,
    level: ConstraintLevel = ConstraintLevel.REPAIR,
    low_confidence: float = DEFAULT_LOW_CONFIDENCE,
    accept_confidence: float = ACCEPT_CONFIDENCE,
    seed: int = 0,
    shading: bool = True,
) -> Classification:
    """Classify the L*a*b* samples of one scan, shape ``(6, N, N, 3)`` in LTR layout.

    ``shading``: correct light that varies across a face before the final reading
    (:mod:`vision.shading`; off only to measure what it adds).

    Raises :class:`~vision.errors.ScanInputError` if the array has the wrong shape, holds
    non-finite values; :class:`~vision.errors.NoCubeError` if it shows no colours to tell
    apart (every sticker alike). An impossible
    or doubtful result is not an error: ``problems`` and ``verdict`` say what is wrong.
    """
    x = _check_samples(lab)
    n = x.shape[1]
    _check_spread(x.reshape(-1, 3))
    repeated = repeated_faces(x)
    flat = lab_to_invariant(x).reshape(-1, 3)
    start = _initial_references(flat, n, seed)
    assignment, refs, adjusted, light = _refine(
        flat, start, n, level, rgb=lab_to_rgb(x.reshape(-1, 3))
    )
    # How distinct the colours are is a property of the samples as taken (the check refuses
    # random colours and blanks, and was calibrated so): measured before any correction.
    distinctness = separation(adjusted, assignment.labels, refs)
    if shading:
        # Light varying across a face (vision.shading): measured with this first reading's
        # colours, undone in camera RGB, and the scan read again from the corrected samples.
        rgb = lab_to_rgb(x.reshape(-1, 3))
        labels = assignment.labels
        frozen = frozen_channels(rgb, labels, _clipped_channels(rgb, labels))
        gains = local_gains(rgb, labels, n, frozen)
        x = rgb_to_lab(correct_shading(rgb, gains, frozen)).reshape(x.shape)
        flat = lab_to_invariant(x).reshape(-1, 3)
        start = _initial_references(flat, n, seed)
        assignment, refs, adjusted, light = _refine(
            flat, start, n, level, rgb=lab_to_rgb(x.reshape(-1, 3))
        )

    target = np.array(palette.lab, dtype=np.float64) if palette is not None else None
    lab_flat = x.reshape(-1, 3)
    lab_refs = means(lab_flat, assignment.labels, lab_flat[:6])
    colour_of = np.array(name_frame(lab_refs, scheme, target), dtype=np.intp)
    cube = Cube(colour_of[assignment.labels].astype(np.uint8), n)
    # The confidences: whether a channel is at its colour's clip is decided per sticker
    # (vision.clipping): at the level it stays off the face's light and tight; under it, it
    # follows the light, the scene's spread reaches it, and its deficit against the light its
    # other channels show is a cost of its own.
    labels = assignment.labels
    rgb_final = lab_to_rgb(lab_flat)
    saturated, level_of = saturated_levels(rgb_final, labels)
    at = at_level(rgb_final, saturated, level_of)
    adjusted = per_sticker_hypothesis(flat, light, sticker_projectors(refs, at))
    refs = means(adjusted, labels, refs)
    below = saturated[None, :, :] & ~at
    maha, log_det = colour_costs(adjusted, labels, refs, clipped=saturated, below=below)
    deficit = deficit_cost(rgb_final, labels, saturated, level_of)
    loo = robust_cost(leave_one_out(maha, labels)) + log_det + deficit
    margins = sticker_margins(loo, assignment, level)
    # A second opinion: the same method without the per-face light. Where the two readings
    # disagree the scan supports two different cubes, so those stickers have no margin at all
    # (a reading can be self-consistent under one model and still wrong: the local rivals
    # above are measured inside the model that chose it).
    rival, _, _, _ = _refine(flat, start, n, level, face_light=False)
    rival_lab = means(lab_flat, rival.labels, lab_flat[:6])
    rival_colour = np.array(name_frame(rival_lab, scheme, target), dtype=np.intp)
    disputed = colour_of[assignment.labels] != rival_colour[rival.labels]
    if n % 2 == 0 and target is None:
        # Even N has no fixed centres: which group is which colour is decided by comparing
        # the six colours with the scheme's. A second opinion on the names, compared in the
        # exposure-invariant coordinates: where it names a sticker otherwise, the scan does
        # not say which colour it is (a white darkened by its face's light below a yellow).
        other_names = np.array(name_frame(lab_refs, scheme, None, invariant=True), dtype=np.intp)
        disputed |= colour_of[assignment.labels] != other_names[assignment.labels]
    margins[disputed] = 0.0
    # A sticker the scan shows as a clean member of another colour, overruled by the
    # constraints (a face from another state of the cube): no margin either.
    margins[contradicted(loo, labels)] = 0.0
    # The same under a model of the scan a few misread stickers cannot move (medians, not means:
    # vision.references.robust_model_costs); a sticker that looks like the scan's lightest
    # colour is left to the constraints there, since glare pulls any colour towards it.
    passes = 1.0 - _clipped_channels(rgb_final, labels).astype(np.float64)
    robust = leave_one_out(robust_model_costs(flat, labels, n, light_projectors(passes)), labels)
    found = contradicted(robust, labels, ROBUST_CONTRADICTION_COST, ROBUST_TYPICAL_SPREAD)
    # A line of a face objecting together is a turn (turned_lines), even when its stickers,
    # lit by the light of the face they came from, are no typical members of their colour.
    found |= turned_lines(robust, labels, n)
    margins[found & ~left_to_constraints(robust, refs, labels, n)] = 0.0
    confidence = confidence_from_margin(margins).reshape(6, n, n)
    repairs = tuple(
        make_repair(kind, where, colour_of[before], colour_of[after], value, n)
        for kind, where, before, after, value in assignment.repairs
    )
    repaired = {s.flat(n) for r in repairs for s in r.stickers}
    unsure = sorted(
        set(np.flatnonzero(confidence.reshape(-1) < low_confidence).tolist()) | repaired
    )
    named_refs = np.empty_like(lab_refs)
    named_refs[colour_of] = lab_refs
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
        level=level,
        margins=margins.reshape(6, n, n),
        accept_confidence=accept_confidence,
        separation=distinctness,
        colour_costs=_by_colour(loo, colour_of).reshape(6, n, n, 6),
        disputed=disputed.reshape(6, n, n),
        repeated=repeated,
    )


def _clipped_channels(rgb: FloatArray, labels: IntArray) -> npt.NDArray[np.bool_]:
    """``(6, 3)``: which RGB channel of which colour (frame label) the camera saturated
    (:func:`vision.clipping.saturated_levels`)."""
    return saturated_levels(rgb, labels)[0]


def _by_colour(label_costs: FloatArray, colour_of: IntArray) -> FloatArray:
    """Costs per frame label → costs per scheme colour (column ``colour_of[label]``)."""
    costs = np.empty_like(label_costs)
    costs[:, colour_of] = label_costs
    return costs


#: Colours closer than this (CIE76 units) across the whole scan cannot be told apart.
MIN_COLOUR_SPREAD = 3.0


def _check_spread(flat: FloatArray) -> None:
    """Refuse a scan whose stickers all look alike (a blank image, a black file)."""
    spread = float(np.sqrt(((flat - np.median(flat, axis=0)) ** 2).sum(axis=1)).max())
    if spread < MIN_COLOUR_SPREAD:
        raise NoCubeError(
            f"every sticker has nearly the same colour (spread {spread:.1f} L*a*b* units): "
            "this is not a scan of a cube; check the camera or the file"
        )


def make_repair(
    kind: str, where: str, before: IntArray, after: IntArray, cost: float, n: int
) -> Repair:
    """A :class:`Repair` from the assignment's raw repair, colours already named."""
    changed = np.flatnonzero(before != after)
    return Repair(
        kind,
        where,
        tuple(StickerRef.from_flat(int(i), n) for i in changed),
        tuple(int(before[i]) for i in changed),
        tuple(int(after[i]) for i in changed),
        max(float(cost), 0.0),
    )
