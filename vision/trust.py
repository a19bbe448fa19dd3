"""Measuring the confidence: does the cube-level score separate right reads from wrong ones?

The acceptance bar of :mod:`vision.classify` is chosen here, on labelled real scans, and
checked on scans held apart from the choice (``tests/vision/test_trust.py``,
``bench/vision.py``, docs/vision-calibration.md):

1. every labelled scan is read as given and under seeded lighting perturbations
   (:func:`vision.perturb.perturb_rgb`), giving many reads whose right answer is known;
2. the cases (not the reads: the perturbations of one scan stay together) are split into
   folds; on each fold's complement the bar is the lowest cube margin above every wrong
   read's, times a safety factor, and never under :data:`MIN_BAR`; it is then scored on the
   fold it did not see;
3. the trade-off curve (right-and-accepted against wrong-and-accepted over the bar) is what the
   docs report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.classify import DEFAULT_LOW_CONFIDENCE
from vision.confidence import TEMPERATURE
from vision.errors import VisionError
from vision.perturb import perturb_rgb
from vision.scan import read_rgb

__all__ = [
    "MIN_BAR",
    "FoldResult",
    "Outcome",
    "choose_margin",
    "cross_validate",
    "measure",
    "tradeoff",
]

#: The chosen bar is this many times the highest margin of a wrong read seen.
SAFETY_FACTOR = 1.25
#: The lowest bar the procedure may choose: the margin at which a read's own stickers stop
#: being reported as low-confidence (confidence :data:`~vision.classify.DEFAULT_LOW_CONFIDENCE`
#: = 0.9, a margin of 2·T·ln 9 = 4.39). Wrong reads seen only at margin 0 (a legal rival as
#: cheap as the answer, or a sticker the classifier already set to no margin) say nothing about
#: where a bar must be, and a read accepted under this floor would name stickers in doubt.
MIN_BAR = 2.0 * TEMPERATURE * math.log(DEFAULT_LOW_CONFIDENCE / (1.0 - DEFAULT_LOW_CONFIDENCE))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One read of a labelled scan."""

    case: str
    variant: int  # 0: the scan as recorded; k > 0: its k-th perturbation
    right: bool  # the facelets equal the recorded answer
    valid: bool
    margin: float  # the cube margin (cost gap to the nearest legal rival reading)
    distinct: bool = True  # the six colours are far enough apart (Classification.distinct)
    backed: bool = True  # no repair the samples object to (Classification.repair_backed)
    repeats: bool = False  # a face's samples repeat another's (Classification.repeats_a_face)


@dataclass(frozen=True, slots=True)
class FoldResult:
    """A bar chosen without one fold, scored on it."""

    held_out: tuple[str, ...]
    margin: float
    right: int
    right_accepted: int
    wrong: int
    wrong_accepted: int


def measure(
    cases: Iterable[tuple[str, npt.ArrayLike, str]],
    perturbations: int,
    severity: float,
    seed: int = 0,
) -> list[Outcome]:
    """Read every ``(name, rgb (6, N, N, 3), expected facelets)`` as given and under
    ``perturbations`` seeded perturbations. A read that raises counts as refused and wrong."""
    outcomes = []
    for index, (name, rgb, expected) in enumerate(cases):
        base = np.asarray(rgb, dtype=np.float64)
        for variant in range(perturbations + 1):
            rng = np.random.default_rng([seed, index, variant])
            sample = perturb_rgb(base, rng, severity) if variant else base
            try:
                result = read_rgb(sample)
            except VisionError:
                outcomes.append(Outcome(name, variant, False, False, 0.0, False, False))
                continue
            margin = result.classification.cube_margin
            right = result.valid and result.to_facelets() == expected
            c = result.classification
            outcomes.append(
                Outcome(
                    name,
                    variant,
                    right,
                    result.valid,
                    margin,
                    c.distinct,
                    c.repair_backed,
                    c.repeats_a_face,
                )
            )
    return outcomes


def accepted(outcome: Outcome, margin: float) -> bool:
    return (
        outcome.valid
        and outcome.distinct
        and outcome.backed
        and not outcome.repeats
        and outcome.margin >= margin
    )


def choose_margin(outcomes: Sequence[Outcome]) -> float:
    """The bar: above every wrong read's margin, with the safety factor, and never under
    :data:`MIN_BAR` (with no wrong read above margin 0 the rule alone would give 0: on the
    seed-23 half of docs/benchmarks.md, branch visionadv, it did, and the other half's 27 wrong
    reads at margin 0 passed it)."""
    wrong = [o.margin for o in outcomes if not o.right and accepted(o, 0.0)]
    return max(SAFETY_FACTOR * max(wrong, default=0.0), MIN_BAR)


def cross_validate(outcomes: Sequence[Outcome], folds: int = 2) -> list[FoldResult]:
    """Cases dealt round-robin (sorted by name) into ``folds``; per fold, the bar chosen on the
    others and scored on it."""
    names = sorted({o.case for o in outcomes})
    results = []
    for k in range(folds):
        held = set(names[k::folds])
        train = [o for o in outcomes if o.case not in held]
        test = [o for o in outcomes if o.case in held]
        bar = choose_margin(train)
        right = [o for o in test if o.right]
        wrong = [o for o in test if not o.right]
        results.append(
            FoldResult(
                tuple(sorted(held)),
                bar,
                len(right),
                sum(accepted(o, bar) for o in right),
                len(wrong),
                sum(accepted(o, bar) for o in wrong),
            )
        )
    return results


def tradeoff(outcomes: Sequence[Outcome], margins: Sequence[float]) -> list[dict[str, float]]:
    """Right-and-accepted and wrong-and-accepted (counts and shares) at each bar."""
    right = [o for o in outcomes if o.right]
    wrong = [o for o in outcomes if not o.right]
    rows = []
    for bar in margins:
        ra = sum(accepted(o, bar) for o in right)
        wa = sum(accepted(o, bar) for o in wrong)
        rows.append(
            {
                "margin": bar,
                "right_accepted": ra,
                "right_accepted_share": ra / len(right) if right else math.nan,
                "wrong_accepted": wa,
                "wrong_accepted_share": wa / len(wrong) if wrong else math.nan,
            }
        )
    return rows
