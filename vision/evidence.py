"""Combining the reads of several views of one cube, per physical sticker.

The robot reads the cube, turns a face, reads again, turns it back: every read is a
:class:`~vision.classify.Classification` of the cube *as it was then*. A sticker keeps its
identity as it moves, so the moves made since the *reference* state (the state of the first
read) map every read back to the reference positions: with the facelet permutation ``perm`` of
those moves (:func:`solver.cube.facelets.sequence_permutation`, convention ``new = old[perm]``),
position ``i`` of the later read shows reference sticker ``perm[i]``.

The evidence of a read is its per-sticker colour cost (``Classification.colour_costs``: twice the
negative log-likelihood of each scheme colour). For one physical sticker:

* reads from *different* positions (another camera, another part of an image, other light) are
  independent evidence: their costs add (the log-likelihoods sum);
* where a read supports two readings of a sticker (its second opinion disagrees,
  ``Classification.disputed``) it is no evidence for that sticker at all;
* reads from the *same* position share that position's light, so their errors are not
  independent: they are averaged first (a second look under the same light removes noise, not
  the bias of the light; summing them would make a misleading light count twice).

The pooled costs go through the same constrained assignment and margins as a single read
(:mod:`vision.assign`, :mod:`vision.confidence`), so the combined result is a
:class:`~vision.classify.Classification` with the same verdict, bar and stickers in doubt.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube, sequence_permutation
from solver.cube.notation import Move, parse
from solver.cube.validate import validate
from vision.assign import ConstraintLevel, assign, fixed_indices
from vision.classify import (
    ACCEPT_CONFIDENCE,
    DEFAULT_LOW_CONFIDENCE,
    Classification,
    StickerRef,
    make_repair,
)
from vision.colour import FloatArray
from vision.confidence import confidence_from_margin, sticker_margins
from vision.errors import ScanInputError

__all__ = ["Evidence", "Observation"]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class Observation:
    """One read mapped back to the reference positions."""

    costs: FloatArray  # (M, 6) cost of each scheme colour for every reference sticker
    seen_at: IntArray  # (M,) the position each reference sticker was read at
    separation: float
    references: FloatArray


class Evidence:
    """The reads of one physical cube, from any number of views and states.

    ``add(read, moves)``: ``moves`` are the moves made between the reference state and the
    read (nothing for the first read). ``combined()`` is the reading of the reference state that
    all reads together support.
    """

    def __init__(
        self,
        n: int,
        *,
        scheme: ColourScheme = DEFAULT_SCHEME,
        level: ConstraintLevel = ConstraintLevel.REPAIR,
        accept_confidence: float = ACCEPT_CONFIDENCE,
        low_confidence: float = DEFAULT_LOW_CONFIDENCE,
    ) -> None:
        self.n = n
        self.scheme = scheme
        self.level = level
        self.accept_confidence = accept_confidence
        self.low_confidence = low_confidence
        self.observations: list[Observation] = []
        self._centres: IntArray | None = None  # scheme colour of each fixed centre (odd N)

    def __len__(self) -> int:
        return len(self.observations)

    def add(self, read: Classification, moves: str | Iterable[Move] = ()) -> None:
        """Add a read of the cube taken after ``moves`` (from the reference state)."""
        if read.n != self.n:
            raise ScanInputError(f"a read of an N={read.n} cube added to N={self.n} evidence")
        # the strictest bar of the reads (a caller's stricter bar holds for their sum too)
        self.accept_confidence = max(self.accept_confidence, read.accept_confidence)
        if read.colour_costs is None:
            raise ScanInputError("the read carries no colour costs (not from vision.classify)")
        m = 6 * self.n * self.n
        seq = parse(moves) if isinstance(moves, str) else list(moves)
        perm = sequence_permutation(seq, self.n)  # read position i shows reference perm[i]
        costs = np.empty((m, 6))
        view_costs = read.colour_costs.reshape(m, 6).copy()
        if read.disputed is not None:
            view_costs[read.disputed.reshape(-1)] = 0.0  # two readings: no evidence either way
        if read.repeated is not None:
            view_costs[read.repeated.reshape(-1)] = 0.0  # one image for two faces: no evidence
        costs[perm] = view_costs
        seen_at = np.empty(m, dtype=np.intp)
        seen_at[perm] = np.arange(m, dtype=np.intp)
        if self._centres is None and self.n % 2 == 1:
            mapped = read.cube.stickers.reshape(-1)[np.argsort(perm)]
            self._centres = mapped[list(fixed_indices(self.n))].astype(np.intp)
        self.observations.append(
            Observation(costs, seen_at, float(read.separation), read.references)
        )

    @property
    def viewpoints(self) -> int:
        """How many different placings of the stickers the reads saw (reads after the same
        moves, or after moves that leave every sticker where it was, count once)."""
        return len({obs.seen_at.tobytes() for obs in self.observations})

    def positions_seen(self) -> list[set[int]]:
        """For every reference sticker, the positions it has been read at."""
        m = 6 * self.n * self.n
        seen: list[set[int]] = [set() for _ in range(m)]
        for obs in self.observations:
            for sticker, position in enumerate(obs.seen_at.tolist()):
                seen[sticker].add(position)
        return seen

    def pooled_costs(self) -> FloatArray:
        """(M, 6): per reference sticker, the mean cost over the reads from each position,
        summed over the positions."""
        if not self.observations:
            raise ScanInputError("no reads to combine")
        m = 6 * self.n * self.n
        total = np.zeros((m, m, 6))
        count = np.zeros((m, m))
        rows = np.arange(m)
        for obs in self.observations:
            total[rows, obs.seen_at] += obs.costs
            count[rows, obs.seen_at] += 1
        looked = count > 0
        means = np.where(looked[..., None], total / np.maximum(count, 1)[..., None], 0.0)
        pooled: FloatArray = means.sum(axis=1)
        return pooled

    def combined(self) -> Classification:
        """The reading of the reference state all reads support, with its confidence."""
        n = self.n
        costs = self.pooled_costs()
        odd = n % 2 == 1
        frame = self._centres if odd and self._centres is not None else np.arange(6)
        frame_costs = costs[:, frame]  # frame label k ↔ scheme colour frame[k]
        assignment = assign(frame_costs, n, self.level, odd)
        margins = sticker_margins(frame_costs, assignment, self.level)
        colours = frame[assignment.labels]
        cube = Cube(colours.astype(np.uint8), n)
        confidence = confidence_from_margin(margins).reshape(6, n, n)
        repairs = tuple(
            make_repair(kind, where, frame[before], frame[after], value, n)
            for kind, where, before, after, value in assignment.repairs
        )
        repaired = {s.flat(n) for r in repairs for s in r.stickers}
        unsure = sorted(
            set(np.flatnonzero(confidence.reshape(-1) < self.low_confidence).tolist()) | repaired
        )
        log.debug("%d reads combined: confidence %.4f", len(self.observations), confidence.min())
        return Classification(
            cube=cube,
            confidence=confidence,
            low_confidence=tuple(StickerRef.from_flat(int(i), n) for i in unsure),
            repairs=repairs,
            problems=tuple(validate(cube, self.scheme)),
            references=self.observations[0].references,
            scheme=self.scheme,
            level=self.level,
            margins=margins.reshape(6, n, n),
            accept_confidence=self.accept_confidence,
            separation=min(o.separation for o in self.observations),
            colour_costs=costs.reshape(6, n, n, 6),
        )
