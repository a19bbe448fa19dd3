"""The scan's own colour references (stage 1 of :mod:`vision.classify`) and the colour metric.

For odd N the six fixed centres are the first references; for even N the stickers are split into
six groups of exactly N² by balanced k-means and the frame is the labelling of the groups under
which corners and edge wings are most nearly real pieces. The metric is the squared Mahalanobis
distance under the within-colour covariance pooled over the scan; the frame labels are named with
the scheme's colours by the best of the 24 legal centre arrangements.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

from solver.cube.facelets import ColourScheme, legal_centre_arrangements
from vision.assign import orbit_tables
from vision.colour import (
    FloatArray,
    lab_to_invariant,
    nominal_lab,
    pairwise_sq_dist,
    rgb_jacobian,
    sensor_noise_floor,
)
from vision.pieces import OrbitKind

__all__ = [
    "KMEANS_RESTARTS",
    "balanced_kmeans",
    "colour_costs",
    "face_offsets",
    "frame_from_clusters",
    "light_projectors",
    "mahalanobis",
    "means",
    "name_frame",
    "own",
    "per_hypothesis",
    "pooled_precision",
    "robust_cost",
    "robust_model_costs",
    "separation",
]

IntArray = npt.NDArray[np.intp]

#: Restarts of the balanced k-means used for even N (seeded, so results are deterministic).
KMEANS_RESTARTS = 6
#: Added to the pooled covariance of the assignment metric (invariant units²): keeps it
#: well-conditioned on tiny or perfectly clean scans (the confidences use the sensor noise
#: floor of :func:`vision.colour.sensor_noise_floor` instead).
COVARIANCE_RIDGE = 1.0
#: Pseudo-stickers of the pooled covariance in each colour's own (see :func:`colour_costs`):
#: 4 (2 before the sensor floor replaced the flat ridge: with it, 2 let a spotlit sticker's
#: evidence dominate the robot's combined reads; 4 accepts as many right reads on the real
#: scans and gives wrong reads lower margins, docs/vision-calibration.md).
COVARIANCE_SHRINK = 4.0


def balanced_kmeans(x: FloatArray, n: int, rng: np.random.Generator) -> FloatArray:
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


def frame_from_clusters(cluster_cost: FloatArray, n: int) -> IntArray:
    """The labelling of six clusters (cluster j → frame label) under which corners and wings are
    most nearly real pieces. Returns ``label_of_cluster`` (6,)."""
    perms = _all_perms()  # perms[q, j] = label of cluster j
    inverse = np.argsort(perms, axis=1)  # inverse[q, label] = cluster
    totals = np.zeros(perms.shape[0])
    for tables in orbit_tables(n):
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


def name_frame(
    refs: FloatArray, scheme: ColourScheme, palette: FloatArray | None, invariant: bool = False
) -> tuple[int, ...]:
    """Which scheme colour each frame label is: one of the 24 legal arrangements.

    ``invariant``: compare in the exposure-invariant coordinates of
    :func:`vision.colour.lab_to_invariant` instead of L*a*b* (the classifier's second opinion
    on the names: where the two disagree, the scan does not say which colour is which)."""
    target = palette if palette is not None else nominal_lab(scheme)
    if invariant:
        refs, target = lab_to_invariant(refs), lab_to_invariant(target)
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
    best = min(
        legal_centre_arrangements(),
        key=lambda arr: float(((measured - target[np.array(arr)]) ** 2).sum()),
    )
    return tuple(best)


def pooled_precision(x: FloatArray, labels: IntArray, refs: FloatArray) -> FloatArray:
    """Inverse of the within-colour covariance pooled over the six colours (as in linear
    discriminant analysis): it learns from this scan how much lightness varies with shading
    compared with hue, so no weights between L*, a* and b* are fixed by hand. A ridge of
    :data:`COVARIANCE_RIDGE` keeps it well-conditioned on tiny or perfectly clean scans."""
    residual = own(x, labels) - refs[labels]
    dof = max(x.shape[0] - 6, 1)
    cov = residual.T @ residual / dof + COVARIANCE_RIDGE * np.eye(3)
    result: FloatArray = np.linalg.inv(cov)
    return result


def colour_costs(
    x: FloatArray,
    labels: IntArray,
    refs: FloatArray,
    shrink: float | None = None,
    clipped: npt.NDArray[np.bool_] | None = None,
    below: npt.NDArray[np.bool_] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Per-colour Gaussian costs ``(maha (m, 6), log_det (6,))``: each colour's own covariance,
    shrunk towards the pooled one by ``shrink`` pseudo-stickers (regularised quadratic
    discriminant analysis). A colour that this scan shows tight (a clipped white) then rejects
    a sticker a few units off that a looser one (a yellow) accepts; the cost of a sticker for a
    colour is ``maha + log_det`` (twice the negative log-likelihood, up to a constant).

    The pooled covariance is pooled in camera RGB levels and carried to each colour through
    the Jacobian of RGB → these coordinates at that colour, and no colour is tighter than the
    sensor's noise there (:func:`vision.colour.sensor_noise_floor`). ``clipped`` ``(6, 3)``
    says which RGB channels of each colour sit at the sensor's clip point
    (:data:`vision.colour.CLIP_LEVEL`): those pass none of the pooled variation, except for
    a sticker whose sample is under its colour's saturated level there (``below`` ``(m, 6, 3)``,
    :mod:`vision.clipping`): it follows the light, and the pooled variation of that channel
    reaches it in full. ``log_det`` is then per sticker, ``(m, 6)``."""
    shrink = COVARIANCE_SHRINK if shrink is None else shrink
    hyp = _hypotheses(x)
    residual = own(x, labels) - refs[labels]
    maha = np.empty((x.shape[0], 6))
    log_det = np.empty((x.shape[0], 6))
    # The colours share one covariance in camera RGB, not in these coordinates: a level of
    # sensor noise or of JPEG error moves a dark colour's chromaticity far more than a bright
    # one's (a ratio to a small lightness). Each residual is taken back to RGB levels through
    # the Jacobian at its colour, pooled there, and brought to each colour through its own.
    jacs = rgb_jacobian(refs)  # (6, 3, 3)
    to_rgb = np.linalg.pinv(jacs)
    levels = np.einsum("mij,mj->mi", to_rgb[labels], residual)
    # A channel at the clip point passes none of the scene's variation (a clipped white reads
    # the same in any light): the shared covariance is pooled over the colours that follow
    # the light, and reaches a colour only through its channels below the clip point.
    passes = np.ones((6, 3)) if clipped is None else 1.0 - np.asarray(clipped, dtype=np.float64)
    following = passes.min(axis=1) > 0  # colours with no channel at the clip point
    follows = levels[following[labels]]
    dof = max(follows.shape[0] - int(following.sum()), 1)
    pooled_rgb = follows.T @ follows / dof
    for k in range(6):
        scene = jacs[k] * passes[k][None, :]
        target = scene @ pooled_rgb @ scene.T
        floor = sensor_noise_floor(jacs[k])
        centre, cov = _trimmed_gaussian(hyp[labels == k, k], refs[k], target, floor, shrink)
        diff = hyp[:, k] - centre
        maha[:, k] = np.einsum("mi,ij,mj->m", diff, np.linalg.inv(cov), diff)
        log_det[:, k] = float(np.linalg.slogdet(cov)[1])
        if below is None or not below[:, k].any():
            continue
        codes = below[:, k].astype(np.intp) @ np.array([1, 2, 4])  # which channels, as bits
        for code in np.unique(codes[codes > 0]):
            pattern = (int(code) >> np.arange(3)) & 1
            extra = jacs[k] * pattern.astype(np.float64)[None, :]
            wide = cov + extra @ pooled_rgb @ extra.T
            rows = np.flatnonzero(codes == code)
            d = diff[rows]
            maha[rows, k] = np.einsum("mi,ij,mj->m", d, np.linalg.inv(wide), d)
            log_det[rows, k] = float(np.linalg.slogdet(wide)[1])
    return maha, log_det


#: Share of a colour's stickers its mean and covariance are estimated from (the rest, the most
#: distant, are left out so that a sticker spoiled by glare cannot widen its colour to fit).
TRIM_KEEP = 0.75
#: Variance of the kept share of a 3-D Gaussian, relative to the whole: E[χ²₃ | χ²₃ < q(0.75)]/3.
_TRIM_CONSISTENCY = 1.61


def _trimmed_gaussian(
    members: FloatArray, ref: FloatArray, pooled: FloatArray, floor: FloatArray, shrink: float
) -> tuple[FloatArray, FloatArray]:
    """Mean and covariance of one colour from its closest ``TRIM_KEEP`` share of stickers,
    shrunk towards ``pooled`` and never tighter than the sensor's noise ``floor``."""

    def estimate(points: FloatArray, centre: FloatArray, factor: float) -> FloatArray:
        d = points - centre
        cov = (factor * (d.T @ d) + shrink * pooled) / max(points.shape[0] - 1 + shrink, 1.0)
        result: FloatArray = cov + floor
        return result

    count = members.shape[0]
    cov = estimate(members, ref, 1.0)
    keep = max(3, int(np.ceil(TRIM_KEEP * count)))
    if count <= keep:
        return ref, cov
    d = members - ref
    distance = np.einsum("mi,ij,mj->m", d, np.linalg.inv(cov), d)
    kept = members[np.argsort(distance)[:keep]]
    centre: FloatArray = kept.mean(axis=0)
    return centre, estimate(kept, centre, _TRIM_CONSISTENCY)


#: Degrees of freedom of the Student-t colour model used for confidences (heavy tails).
STUDENT_DOF = 4.0


def robust_cost(maha: FloatArray, dof: float = STUDENT_DOF) -> FloatArray:
    """A squared distance under a multivariate Student-t instead of a Gaussian (twice the
    negative log-likelihood, 3 channels): close to ``maha`` near the reference, logarithmic far
    from it. One sticker spoiled by glare or a reflection can then cost a rival reading only so
    much, and cannot make a wrong reading look certain."""
    result: FloatArray = (dof + 3.0) * np.log1p(maha / dof)
    return result


def separation(x: FloatArray, labels: IntArray, refs: FloatArray, rank: int = 3) -> float:
    """How distinct the scan's six colours are: the ``rank``-th smallest (0-based) squared
    Mahalanobis distance between two colours' references under the pooled covariance. A real
    cube has at most a few close pairs (white/yellow, red/orange, in bad light); random
    colours or a blank have none that are far apart."""
    precision = pooled_precision(x, labels, refs)
    diffs = refs[:, None, :] - refs[None, :, :]
    dist = np.einsum("abi,ij,abj->ab", diffs, precision, diffs)
    pairs = np.sort(dist[np.triu_indices(6, 1)])
    return float(pairs[rank])


def mahalanobis(x: FloatArray, refs: FloatArray, precision: FloatArray) -> FloatArray:
    """``(m, 6)`` squared distances of every sample (``(m, 3)`` or per-hypothesis
    ``(m, 6, 3)``) to every reference under ``precision``."""
    diff = _hypotheses(x) - refs[None, :, :]
    result: FloatArray = np.einsum("mki,ij,mkj->mk", diff, precision, diff)
    return result


def _standardise(values: FloatArray) -> FloatArray:
    centred = values - values.mean(axis=0)
    spread = centred.std(axis=0)
    result: FloatArray = centred / np.where(spread > 1e-9, spread, 1.0)
    return result


def face_offsets(x: FloatArray, labels: IntArray, refs: FloatArray, n: int) -> FloatArray:
    """Each face's light: the median shift (invariant coordinates) of its stickers from their
    colours' references, centred over the six faces, ``(6, 3)``. A face lit brighter or warmer
    than the others shifts all its stickers alike; the median ignores a few misread ones.
    (Measuring it only on the colours that follow the light, leaving out a saturated white,
    was tried: 5x5x5-random-03's margin 7.5 instead of 8.9.)"""
    residual = (own(x, labels) - refs[labels]).reshape(6, n * n, 3)
    offsets = np.median(residual, axis=1)
    result: FloatArray = offsets - offsets.mean(axis=0)
    return result


def light_projectors(passes: FloatArray) -> FloatArray:
    """``(6, 3, 3)``: how a face's light (a shift of the invariant coordinates,
    :func:`face_offsets`) moves a sticker of each colour: the identity, or zero for
    a colour the camera saturated in all three channels (``passes[k]`` all 0: a white at the
    clip), which reads the same on a bright face and a dim one. The real 5x5x5-random-03:
    its whites read 245-246/251-252/250-252 on every face while the faces' lights differ by
    up to 1.2 units of a*, about 10 levels of red; taking each face's light off them
    scattered a colour the camera shows constant, and its rivals came within 3.8.

    A colour saturated in one or two channels keeps the whole shift: projecting the shift on
    the channels that follow it (``J·diag(passes)·J⁺`` through the Jacobian of RGB →
    invariant coordinates) was tried and dropped: the face lights measured on dark colours
    carry chroma shifts that, put through one channel of a yellow, read the real 3x3 photo's
    samples wrong, and a white saturated in red and green but shadowed below it on one
    sticker (the real 4x4x4-random-03) was refused."""
    frozen = np.asarray(passes, dtype=np.float64).max(axis=1) == 0.0
    result: FloatArray = np.tile(np.eye(3), (6, 1, 1))
    result[frozen] = 0.0
    return result


def per_hypothesis(flat: FloatArray, offsets: FloatArray, projectors: FloatArray) -> FloatArray:
    """``(m, 6, 3)``: every sticker's sample as it would read in the average light if it were
    each colour: its face's offset taken off through that colour's projector
    (:func:`light_projectors`)."""
    m = flat.shape[0]
    faces = np.arange(m) // (m // 6)
    shift = np.einsum("kij,mj->mki", projectors, offsets[faces])
    result: FloatArray = flat[:, None, :] - shift
    return result


#: Rounds of the robust model's face lights and centres (:func:`robust_model_costs`).
ROBUST_ROUNDS = 2


def robust_model_costs(
    flat: FloatArray, labels: IntArray, n: int, projectors: FloatArray
) -> FloatArray:
    """``(m, 6)`` costs (Student-t, :func:`robust_cost`) of every sticker for every label under
    a model of the scan that a few stickers given the wrong label cannot move.

    The classifier's own model is fitted to its answer: each colour's reference is the *mean*
    of the stickers given it, each face's light the median shift from those means, the metric
    pooled over every sticker. Three stickers of a green row given white (a face taken after
    a turn of the cube) pull white's mean a third of the way towards green; the white face's
    light, measured against that mean, comes out a third of the difference brighter and is
    taken off the green row too, so as green those stickers cost more than as white, and the
    pooled spread widens to cover them: the answer's model cannot object to its own mistake.
    Here each colour's centre is the *median* of its stickers, each face's light the median
    shift from those centres (``ROBUST_ROUNDS`` rounds), and the metric is pooled over the
    :data:`TRIM_KEEP` share of stickers that fit their centres best.

    ``flat``: the samples in the invariant coordinates ``(m, 3)``; ``labels`` the answer's;
    ``projectors``: how a face's light moves each colour (:func:`light_projectors`).
    """
    rows = np.arange(labels.size)
    centres = _medians(flat, labels, flat[:6])
    adjusted = _hypotheses(flat)
    for _ in range(ROBUST_ROUNDS):
        offsets = face_offsets(adjusted, labels, centres, n)
        adjusted = per_hypothesis(flat, offsets, projectors)
        centres = _medians(adjusted[rows, labels], labels, centres)
    members = adjusted[rows, labels]
    fit = mahalanobis(members, centres, pooled_precision(members, labels, centres))[rows, labels]
    best = fit <= np.quantile(fit, TRIM_KEEP)
    metric = pooled_precision(members[best], labels[best], centres)
    return robust_cost(mahalanobis(adjusted, centres, metric))


def _medians(x: FloatArray, labels: IntArray, previous: FloatArray) -> FloatArray:
    """Median of each label's samples ``(m, 3)``; ``previous`` for a label with none."""
    result = previous.copy()
    for k in range(previous.shape[0]):
        if (labels == k).any():
            result[k] = np.median(x[labels == k], axis=0)
    return result


def own(x: FloatArray, labels: IntArray) -> FloatArray:
    """The samples as read under their own labels: ``x`` itself if ``(m, 3)``, the label's
    row of per-hypothesis samples ``(m, 6, 3)`` (:func:`per_hypothesis`) otherwise."""
    if x.ndim == 2:
        return x
    result: FloatArray = x[np.arange(x.shape[0]), labels]
    return result


def _hypotheses(x: FloatArray) -> FloatArray:
    """``(m, 6, 3)`` from samples shared by every hypothesis ``(m, 3)`` or per-hypothesis."""
    if x.ndim == 3:
        return x
    result: FloatArray = np.broadcast_to(x[:, None, :], (x.shape[0], 6, 3))
    return result


def means(x: FloatArray, labels: IntArray, previous: FloatArray) -> FloatArray:
    """Mean of each label's stickers (``x`` ``(m, 3)`` or per-hypothesis ``(m, 6, 3)``);
    ``previous`` for a label with none."""
    refs = previous.copy()
    mine = own(x, labels)
    for k in range(6):
        members = mine[labels == k]
        if members.shape[0]:
            refs[k] = members.mean(axis=0)
    return refs
