"""Active re-scan: when a read is refused or in doubt, turn a face so that the doubtful stickers
are seen from another view (another camera, another part of an image, other light), read
again, turn the face back, and combine the evidence of all reads per physical sticker
(:class:`vision.evidence.Evidence`) until the combined reading is accepted or
``[scan] rescan_turns`` turns were made.

The turns go through the normal execution path: each turn and its undo are journaled as planned
moves *before* the turn (``record_plan`` keeps the job's solution text), then executed and
journaled one by one as the firmware reports them. If the daemon dies between the two, the
journal's unfinished job has the undo as its remaining move, and ``resume`` executes it: the
cube is back where it was read.

Which turn: among the quarter turns of the faces that have a motor, the one that carries the
most doubtful stickers to positions they have not been read at, counting positions where every
read so far was sure in full and positions where some read was in doubt (bad light, likely) at
a quarter.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robot.daemon.context import Context, Job, face_move
from robot.daemon.events import ErrorCode, EventName, RescanPayload
from robot.daemon.execution import Executor
from robot.errors import JobError, PlanError
from robot.planner import MotorProgram, Planner
from solver.cube.facelets import move_permutation, sequence_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, format_moves

if TYPE_CHECKING:  # vision (and OpenCV) load when the daemon first reads the cameras
    from vision.classify import Classification
    from vision.evidence import Evidence

__all__ = ["Rescanner", "choose_turn", "doubtful", "sure"]

logger = logging.getLogger(__name__)

#: a position some read was in doubt at counts this much as a fresh place to look from
DOUBTFUL_PLACE = 0.25

#: reads the cube as it is now (a ScanResult of vision.scan)
Reader = Callable[[], Awaitable[Any]]


def choose_turn(
    doubt: Iterable[int],
    seen: Sequence[set[int]],
    bad: set[int],
    faces: Iterable[Face],
    since: Sequence[Move],
    n: int,
    tried: set[Move],
) -> Move | None:
    """The quarter turn (of ``faces``, not in ``tried``) that best moves the ``doubt`` stickers
    (reference indices) to places they were not read at (``seen[sticker]``: positions), with
    ``since`` the moves made from the reference state to now; None if no turn moves any."""
    here = np.argsort(sequence_permutation(since, n))  # reference sticker -> position now
    stickers = list(doubt)
    best: tuple[float, Move] | None = None
    for face in faces:
        for turns in (1, -1):
            move = Move.outer(face, turns)
            if move in tried:
                continue
            after = np.argsort(move_permutation(move, n))  # position -> position after the turn
            score = 0.0
            for sticker in stickers:
                now = int(here[sticker])
                place = int(after[now])
                if place != now and place not in seen[sticker]:
                    score += DOUBTFUL_PLACE if place in bad else 1.0
            if score > 0 and (best is None or score > best[0]):
                best = (score, move)
    return best[1] if best is not None else None


def sure(read: Classification, views: int = 1) -> bool:
    """A reading the robot acts on: accepted by vision; from a single viewpoint (``views``:
    :attr:`vision.evidence.Evidence.viewpoints`) also without repairs. (Reads from several
    viewpoints combined may support a repaired reading: a close call between an
    impossible cube and a legal one that every other legal reading is far behind; the check
    after execution catches a cube assembled wrong.)"""
    if views > 1:
        return read.accepted
    return read.accepted and read.valid and not read.repairs


def doubtful(read: Classification) -> list[int]:
    """The stickers (flat indices) to look at again: those in doubt and those repaired."""
    n = read.n
    flat = {s.flat(n) for s in read.in_doubt}
    flat |= {s.flat(n) for r in read.repairs for s in r.stickers}
    return sorted(flat)


class Rescanner:
    """Turns, reads and combines for one pipeline (see the module docstring)."""

    def __init__(self, ctx: Context, executor: Executor, planner: Planner, read: Reader) -> None:
        self.ctx = ctx
        self.executor = executor
        self.planner = planner
        self.read = read
        self.faces = tuple(sorted(ctx.config.motors.faces))

    @property
    def limit(self) -> int:
        return self.ctx.config.scan.rescan_turns

    async def settle(
        self,
        job: Job,
        evidence: Evidence,
        combined: Classification,
        since: Sequence[Move],
        stage: str,
        history: tuple[Evidence, Sequence[Move]] | None = None,
    ) -> Classification:
        """Turn, read, turn back and combine until ``combined`` is accepted or the turns run
        out; returns the last combined reading. ``since``: the moves from the evidence's
        reference state to the cube as it is now (the cube is left as it is now).
        ``history``: other evidence the reads are added to too, with its own ``since``."""
        n = evidence.n
        tried: set[Move] = set()
        bad: set[int] = set()
        _note_doubt(bad, combined, since, n)
        for attempt in range(1, self.limit + 1):
            if sure(combined, evidence.viewpoints):
                break
            doubt = doubtful(combined)
            turn = choose_turn(doubt, evidence.positions_seen(), bad, self.faces, since, n, tried)
            if turn is None:
                logger.info("job %s: no turn shows the doubtful stickers anew", job.id)
                break
            tried.add(turn)
            result = await self._look(job, turn)
            view = [*since, turn]
            if result.classification.distinct:  # else not a cube's colours: no evidence
                evidence.add(result.classification, view)
                if history is not None:
                    history[0].add(result.classification, [*history[1], turn])
            bad.update(doubtful(result.classification))  # positions now
            combined = evidence.combined()
            job.rescans += 1
            payload: RescanPayload = {
                "job_id": job.id,
                "stage": "verify" if stage == "verify" else "scan",
                "attempt": attempt,
                "turn": str(turn),
                "reads": len(evidence),
                "verdict": combined.verdict,
                "confidence": round(combined.cube_confidence, 4),
                "in_doubt": [str(s) for s in combined.in_doubt],
            }
            logger.info(
                "job %s: rescan %d (%s): %s, confidence %.4f",
                job.id,
                attempt,
                turn,
                combined.verdict,
                combined.cube_confidence,
            )
            self.ctx.out.event(EventName.RESCAN, payload)
            self.ctx.publish_status()
        return combined

    async def _look(self, job: Job, turn: Move) -> Any:
        """Turn, read, turn back (both turns journaled before the first moves)."""
        there = self._plan([turn])
        back = self._plan([turn.inverse()])
        offset = job.moves_done
        await self._journal(job, offset, there.face_moves + back.face_moves, there, back)
        await self.executor.execute(job, there.wire_moves(), offset)
        failure: JobError | None = None
        result: Any = None
        try:
            result = await self.read()
        except JobError as exc:  # the read failed: turn back first, then fail
            failure = exc
        await self.executor.execute(job, back.wire_moves(), offset + len(there.moves))
        if failure is not None:
            raise failure
        return result

    def _plan(self, moves: list[Move]) -> MotorProgram:
        try:
            return self.planner.plan(moves)
        except PlanError as exc:
            raise JobError(ErrorCode.PLAN_FAILED, f"rescan turn: {exc}") from exc

    async def _journal(
        self, job: Job, offset: int, face_moves: tuple[Move, ...], *programs: MotorProgram
    ) -> None:
        """Plan the turn and its undo in the journal; the job's own solution text stays.

        The job's executed moves come first in :attr:`Job.face_moves` (an executed move's index
        says which turned the cube); a resumed job's, read from the journal: a resume with
        rescan keeps none in memory, and its first turn landed past the end (found by the
        chaos campaign on the five-motor robot, seed 14451: an internal error, the turn ran
        and was never journaled)."""
        journal = self.ctx.journal
        record = await journal.call(journal.sync.job, job.id)
        done = job.face_moves[:offset]
        if len(done) < offset:
            executed = await journal.call(journal.sync.moves, job.id)
            done = tuple(face_move(m.face, m.turns, m.depth) for m in executed[:offset])
        solution = record.solution if record is not None and record.solution else ""
        detail = dict(record.solution_detail) if record is not None else {}
        moves = [
            (m.face.name, m.turns, m.motor, m.simultaneous_with_next, m.depth)
            for program in programs
            for m in program.moves
        ]
        detail["rescan"] = format_moves(list(face_moves))
        await journal.call(
            journal.sync.record_plan,
            job.id,
            solution,
            detail,
            " ".join(str(p) for p in programs),
            moves,
        )
        job.face_moves = done + face_moves
        job.moves_total = offset + len(moves)


def _note_doubt(bad: set[int], read: Classification, since: Sequence[Move], n: int) -> None:
    """Add the positions (now) of the stickers ``read`` (of the reference state) doubts."""
    here = np.argsort(sequence_permutation(since, n))
    bad.update(int(here[s]) for s in doubtful(read))
