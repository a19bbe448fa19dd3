"""The check after a solve: once every move executed, the robot reads the cube again and it must
read as solved; a job never reports ``done`` on the tracked state alone.

The read after execution is evidence about the same physical stickers as the job's first read:
the moves executed since (rescan turns and their undos included) map every sticker of the final
view back to the first (:class:`vision.evidence.Evidence`). Only reads of the cube *as it is
now* (with active re-scans, :mod:`robot.daemon.rescan`, when they are in doubt) can pass the
check: a history that says "solved" while the cube now reads otherwise, or unsure, is not
trusted. When the cube now is not solved (read surely, or, when the reads of now stay unsure, as
all reads combined and moved on by the executed moves say), the first reading had a misread:
the stickers it got wrong are named in a ``verify`` event and the job solves again from the
state it sees (at most ``[scan] corrections`` times).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from robot.daemon.context import Context, Job
from robot.daemon.events import ErrorCode, EventName, VerifyPayload
from robot.daemon.rescan import Reader, Rescanner, sure
from robot.errors import JobError
from solver.cube.facelets import ColourScheme, Cube
from solver.cube.notation import Move

if TYPE_CHECKING:  # vision (and OpenCV) load when the daemon first reads the cameras
    from vision.classify import Classification
    from vision.evidence import Evidence

__all__ = ["Verifier"]

logger = logging.getLogger(__name__)

#: solve again from ``cube`` (the state seen), job moves ``offset`` on
Resolve = Callable[[Job, Cube, int], Awaitable[None]]


class Verifier:
    def __init__(
        self,
        ctx: Context,
        rescanner: Rescanner,
        read: Reader,
        resolve: Resolve,
        scheme: ColourScheme,
    ) -> None:
        self.ctx = ctx
        self.rescanner = rescanner
        self.read = read
        self.resolve = resolve
        self.scheme = scheme

    async def check(self, job: Job, evidence: Evidence | None, reference: int) -> None:
        """Read the cube after execution until it reads as solved (correcting misreads);
        ``evidence`` holds the reads of the state after job move ``reference`` (None: no
        reads yet: the check starts from the state now).

        Only reads of the cube as it is now can say it is solved: the history (``evidence``)
        finds the misread and, when the reads of now are not sure, estimates the state now
        for a new solve, but never passes the check."""
        from vision.evidence import Evidence

        if evidence is None:
            evidence = Evidence(self.ctx.n, scheme=self.scheme)
            reference = job.moves_done
        believed = evidence.combined().cube if len(evidence) else None
        limit = self.ctx.config.scan.corrections
        for attempt in range(1, limit + 2):
            current, views, since = await self._read_now(job, evidence, reference)
            now = self._state_now(job, current, views, evidence, since)
            if now.is_solved():
                job.verified = True
                job.physical = now
                logger.info("job %s: the cube reads as solved", job.id)
                return
            seen = now.apply(_undo(since))  # the first state, as all reads now see it
            if attempt > limit:
                job.verified = False
                raise JobError(
                    ErrorCode.NOT_SOLVED,
                    f"after {limit} correction(s) the cube still reads as not solved "
                    f"({now.to_facelets('scheme')}); check the cube and the light, then start "
                    "a new job",
                )
            misread = _differences(believed, seen)
            believed = seen
            job.corrections += 1
            payload: VerifyPayload = {
                "job_id": job.id,
                "attempt": attempt,
                "solved": False,
                "confidence": round(current.cube_confidence, 4),
                "misread": misread,
                "facelets": now.to_facelets("scheme"),
            }
            logger.warning(
                "job %s: the cube is not solved after execution; misread %s; solving again",
                job.id,
                ", ".join(misread) or "nothing named",
            )
            self.ctx.out.event(EventName.VERIFY, payload)
            job.physical = now
            await self.resolve(job, now, job.moves_done)

    async def _read_now(
        self, job: Job, history: Evidence, reference: int
    ) -> tuple[Classification, int, list[Move]]:
        """The reads of the cube as it is now, combined (with active re-scans), how many they
        are, and the moves since job move ``reference``; every read is added to ``history``
        too (mapped back through those moves). The moves are taken once the read is made: a
        one-camera robot's read turns the cube over itself (:mod:`robot.daemon.onecamera`)."""
        from vision.evidence import Evidence

        result = await self.read()
        since = job.moved(reference, job.moves_done)
        read: Classification = result.classification
        now = Evidence(self.ctx.n, scheme=self.scheme)
        if read.distinct:
            now.add(read)
            history.add(read, since)
        # a solved cube can show too little colour contrast to read (no evidence): a turn
        # mixes the faces, so the re-scans still look
        start = now.combined() if len(now) else read
        combined = await self.rescanner.settle(
            job, now, start, [], "verify", history=(history, since)
        )
        return (combined, now.viewpoints, since) if len(now) else (read, 1, since)

    def _state_now(
        self,
        job: Job,
        current: Classification,
        views: int,
        history: Evidence,
        since: Sequence[Move],
    ) -> Cube:
        """The cube now: what the reads of now say when they are sure; else what all reads
        together say, moved on by the executed moves, if that is not solved (a misread to
        correct); else the check cannot be passed: ``scan_refused``."""
        if sure(current, views):
            return current.cube
        combined = history.combined()
        if sure(combined, history.viewpoints):
            now = combined.cube.apply(since)
            if not now.is_solved():
                logger.info("job %s: the reads of now are unsure; all reads say unsolved", job.id)
                return now
        job.verified = False
        raise _unsure(current)


def _undo(moves: Sequence[Move]) -> list[Move]:
    return [m.inverse() for m in reversed(moves)]


def _differences(before: Cube | None, after: Cube) -> list[str]:
    """The stickers ``before`` (the reading solved from) has wrong, as ``after`` sees them."""
    from vision.classify import StickerRef

    if before is None:
        return []
    wrong = np.flatnonzero(before.stickers.reshape(-1) != after.stickers.reshape(-1))
    return [str(StickerRef.from_flat(int(i), after.n)) for i in wrong]


def _unsure(combined: Classification) -> JobError:
    doubt = [str(s) for s in combined.in_doubt]
    named = ", ".join(doubt[:12]) + (f" and {len(doubt) - 12} more" if len(doubt) > 12 else "")
    return JobError(
        ErrorCode.SCAN_REFUSED,
        "every move executed but the cube cannot be read with confidence to check it is solved "
        f"(confidence {combined.cube_confidence:.3f}); stickers in doubt: {named or 'none named'}"
        "; improve the light on those faces, then start a new job",
        {
            "in_doubt": [
                {
                    "sticker": str(s),
                    "confidence": round(float(combined.confidence[s.face, s.row, s.col]), 4),
                }
                for s in combined.in_doubt
            ],
            "confidence": round(combined.cube_confidence, 4),
        },
    )
