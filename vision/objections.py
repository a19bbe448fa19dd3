"""Objections to a read from outside the legal readings (:mod:`vision.classify`).

A read's margins are measured among *legal* cubes, so a sticker the piece constraints overrule
keeps a high margin however clearly it shows another colour. These rules find such stickers:

* :func:`contradicted`: a typical member of another colour that costs much more as the colour
  read (under the answer's own model, and again under a robust one that misread stickers cannot
  move, :func:`vision.references.robust_model_costs`);
* :func:`turned_lines`: an edge line of a face objecting together, a face photographed after an
  outer turn (its stickers lit by the face they came from, so no typical members);
* :func:`left_to_constraints`: the glare exception (a sticker that looks like the scan's
  lightest colour), unless its line objects too;
* :func:`repeated_faces`: a face whose samples repeat another face's exactly.

Every constant was measured on the adversarial hunt, the turned-face sweep and the calibration
sets (docs/benchmarks.md; docs/vision.md, "Stickers the scan shows as another colour").
"""

from __future__ import annotations

import logging

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from vision.colour import FloatArray

__all__ = [
    "CONTRADICTION_COST",
    "FULL_LINE_OBJECTION",
    "ROBUST_CONTRADICTION_COST",
    "ROBUST_TYPICAL_SPREAD",
    "TURNED_LINE_COST",
    "TURNED_LINE_OBJECTION",
    "TURNED_LINE_TYPICAL_SPREAD",
    "contradicted",
    "left_to_constraints",
    "repeated_faces",
    "turned_lines",
]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.intp]

#: A sticker that is a typical member of another colour and costs more than this as the colour
#: read (a likelihood ratio of e^7.5) contradicts the answer (:func:`contradicted`): measured on
#: the adversarial hunt, docs/benchmarks.md (branch visionadv).
CONTRADICTION_COST = 15.0
#: The same under the robust model (:func:`vision.references.robust_model_costs`), whose pooled
#: metric knows neither each colour's own spread nor the clip, so its ratios are coarser: on the
#: adversarial hunt's seeds 0-3 right reads objected up to 21.7 there, stickers of a face taken
#: after a turn 28 to 73 (docs/benchmarks.md, branch visionwrong; confirmed on seeds 4-7).
ROBUST_CONTRADICTION_COST = 25.0
#: Typical there: within the median plus this many median absolute deviations of the own-colour
#: costs (1 for the answer's model). Median + 1 MAD is about the 70th percentile of a cost, so 3
#: in 10 clean members were not "typical"; 2 caught 3 more of seeds 0-3's 25 and 4 more of 4-7's
#: 15 with no right read lost there or on the calibration; 3 lost 3 right reads (seeds 0-3).
ROBUST_TYPICAL_SPREAD = 2.0
#: A sticker that looks like the scan's lightest colour is left to the constraints (glare), unless
#: another sticker of the same edge row or column of its face objects to the answer by more than
#: this under the robust model (a face photographed after an outer turn: left_to_constraints).
#: On the turned-face sweep's even scans 5 to 20 caught 38-39 of 106 wrong reads, 30 caught 32,
#: 40 caught 25; but a glare read of the adversarial seeds 4-7 (a 2x2, two glared stickers on one
#: line) objected between 25 and 40, and 5 lost one of seeds 0-3 (docs/benchmarks.md, branch
#: visionturn): 40 keeps every right read measured.
TURNED_LINE_COST = 40.0
#: Two stickers of one edge line of a face objecting to the answer by more than this under the
#: robust model, each fitting some colour within :data:`TURNED_LINE_TYPICAL_SPREAD` median
#: absolute deviations, are a face photographed after a turn (:func:`turned_lines`). Measured
#: on the turned-face sweep, the adversarial hunt's seeds 0-7 and the calibration's seeds 2 and
#: 23 (docs/benchmarks.md, "A turned line of a face", 2026-11-29): a lighting perturbation of
#: the calibration objected along one edge column by up to 19.5 in a read that is right, 20 and
#: 25 lost one right read (a face with its channels swapped), 30 none.
TURNED_LINE_OBJECTION = 30.0
#: How loosely a sticker of such a line must fit some colour (median + this many MADs of the
#: clean stickers' costs): 8 kept every right read measured; with no limit at all a sticker
#: that fits nothing (a finger, glare) joins and two right reads of the hunt were lost.
TURNED_LINE_TYPICAL_SPREAD = 8.0
#: Three stickers (or more) of one edge line objecting by more than this are a turn too, also
#: where they look like the scan's lightest colour (the glare exception of left_to_constraints
#: expects glare to be a blob, not a line of three): 20 lost a right read of the hunt (a face
#: with its channels swapped) and sits just above the 19.5 of the perturbed column above; 25
#: lost none.
FULL_LINE_OBJECTION = 25.0


def contradicted(
    cost: FloatArray,
    labels: IntArray,
    bar: float = CONTRADICTION_COST,
    typical_spread: float = 1.0,
) -> npt.NDArray[np.bool_]:
    """The stickers whose sample is a typical member of another colour and which the answer
    gives a colour costing more than ``bar`` (:data:`CONTRADICTION_COST`) more.

    Typical: its least cost no more than the median plus ``typical_spread`` median absolute
    deviations of the own-colour costs of the stickers the answer gives their cheapest colour.
    A sticker that fits no colour well (glare, a missing sticker, a finger) is overruled by the
    constraints as before; one that looks exactly like another colour's stickers contradicts
    the answer.
    """
    objection, typical = _objections(cost, labels, typical_spread)
    result: npt.NDArray[np.bool_] = (objection > bar) & typical
    return result


def turned_lines(
    cost: FloatArray,
    labels: IntArray,
    n: int,
    bar: float = TURNED_LINE_OBJECTION,
    typical_spread: float = TURNED_LINE_TYPICAL_SPREAD,
    full_bar: float = FULL_LINE_OBJECTION,
) -> npt.NDArray[np.bool_]:
    """The stickers that object to the answer together with others of the same edge row or
    column of their face and fit some colour at least loosely (within ``typical_spread`` median
    absolute deviations, as :func:`contradicted`): two of the line objecting by more than
    ``bar``, or (N >= 3) three by more than ``full_bar``.

    An outer turn between two photos moves a whole edge line of a face: its stickers are
    members of other colours, but lit by another face's light, so under the robust model they
    are seldom *typical* members (:func:`contradicted` misses them). A line objecting together
    is a turn's signature; one sticker alone is left to :func:`contradicted`'s stricter test.
    """
    objection, typical = _objections(cost, labels, typical_spread)
    pairs = (objection > bar).reshape(6, n, n)
    full = (objection > full_bar).reshape(6, n, n)
    result = np.zeros(labels.size, dtype=bool)
    # each sticker must object by the bar of the line it is counted in
    for i in np.flatnonzero(pairs.reshape(-1) & typical):
        result[i] = _line_count(pairs, int(i), n) >= 2
    for i in np.flatnonzero(full.reshape(-1) & typical & ~result):
        result[i] = n >= 3 and _line_count(full, int(i), n) >= 3
    return result


def _a_turned_line(
    pairs: npt.NDArray[np.bool_], full: npt.NDArray[np.bool_], i: int, n: int
) -> bool:
    """Whether an edge line of the face through sticker ``i`` (flat index) has two stickers set
    in ``pairs`` or, for N >= 3, three in ``full``."""
    return _line_count(pairs, i, n) >= 2 or (n >= 3 and _line_count(full, i, n) >= 3)


def _objections(
    cost: FloatArray, labels: IntArray, typical_spread: float
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """How much more each sticker costs as the colour read than as its cheapest colour, and
    whether its least cost is typical (see :func:`contradicted`); nothing is typical when no
    sticker is read as its cheapest colour."""
    rows = np.arange(labels.size)
    own = cost[rows, labels]
    best = cost.min(axis=1)
    objection: FloatArray = own - best
    agree = objection <= 0.0
    if not agree.any():
        return objection, np.zeros(labels.size, dtype=bool)
    median = float(np.median(own[agree]))
    spread = float(np.median(np.abs(own[agree] - median)))
    typical: npt.NDArray[np.bool_] = best <= median + typical_spread * spread
    return objection, typical


def _line_count(objects: npt.NDArray[np.bool_], i: int, n: int) -> int:
    """The most stickers set in ``objects`` (``(6, n, n)``) on one edge row or column of the face
    through sticker ``i`` (flat index); 0 when it lies on no edge line."""
    f, r, c = i // (n * n), i // n % n, i % n
    lines = [objects[f, r, :]] if r in (0, n - 1) else []
    lines += [objects[f, :, c]] if c in (0, n - 1) else []
    return max((int(line.sum()) for line in lines), default=0)


def left_to_constraints(
    robust: FloatArray,
    refs: FloatArray,
    labels: IntArray,
    n: int,
) -> npt.NDArray[np.bool_]:
    """The stickers whose cheapest colour under the robust model is the scan's lightest, left to
    the constraints (glare pulls any colour there), except where the sticker is on an edge row or
    column of its face together with another sticker objecting to the answer by more than
    :data:`TURNED_LINE_COST`, or (N >= 3) with two others objecting by more than
    :data:`FULL_LINE_OBJECTION`: a whole line of a face objecting is a turn's signature (an
    outer turn moves a face's edge line), where glare is a blob."""
    lightest = int(np.argmax(refs[:, 0]))
    result: npt.NDArray[np.bool_] = robust.argmin(axis=1) == lightest
    rows = np.arange(labels.size)
    objection = robust[rows, labels] - robust.min(axis=1)
    pairs = (objection > TURNED_LINE_COST).reshape(6, n, n)
    full = (objection > FULL_LINE_OBJECTION).reshape(6, n, n)
    for i in np.flatnonzero(result):
        if _a_turned_line(pairs, full, int(i), n):
            result[i] = False
    return result


def repeated_faces(samples: FloatArray) -> npt.NDArray[np.bool_]:
    """``(6, N, N)``: the stickers of every face whose samples equal another face's exactly,
    under any of the eight turns and mirrorings of a face.

    A camera's samples carry sensor noise, so two views of two different faces never agree to
    the last bit; exact agreement means one image stands for two faces (the same file given
    twice, a frame that did not change). The test is on the samples, not on the colours read:
    two faces of a legal even cube may show the same colours in the same places.
    """
    n = samples.shape[1]
    forms: list[FloatArray] = []
    for face in samples:
        for flipped in (face, face[:, ::-1]):
            forms.extend(np.rot90(flipped, k) for k in range(4))
    repeated = np.zeros((6, n, n), dtype=bool)
    for f in range(6):
        for g in range(f + 1, 6):
            if any(np.array_equal(samples[f], form) for form in forms[8 * g : 8 * g + 8]):
                log.info("faces %s and %s have identical samples", Face(f).name, Face(g).name)
                repeated[f] = repeated[g] = True
    return repeated
