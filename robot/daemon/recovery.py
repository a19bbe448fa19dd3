"""Crash recovery: reconcile the journal's unfinished job with the firmware, and announce again
the events the broker never acknowledged.

After a crash the journal knows every move it recorded as executed; the firmware's
non-volatile executed counter knows the moves that completed while the daemon was down. Those
are recorded as executed and announced with ``recovered: true``. Moves journaled whose
``move_executed`` events the broker never acknowledged are announced again with
``replayed: true`` (a dashboard keys moves by ``(job_id, index)``). The job then waits for
``resume``.
"""

from __future__ import annotations

import logging

from robot.daemon.context import Context, apply_journaled, journaled
from robot.daemon.events import ErrorCode, EventName, JobState, RecoveredPayload
from robot.errors import JobError
from robot.journal import JobRecord
from solver.cube.facelets import Cube

__all__ = ["Recovery"]

logger = logging.getLogger(__name__)


class Recovery:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def recover(self) -> None:
        """At start (the firmware connected): close or reconcile the unfinished job."""
        journal = self.ctx.journal
        record = await journal.call(journal.sync.unfinished_job)
        if record is None:
            return
        if record.total_moves == 0 or record.physical is None:
            # it never reached the motors (the cube is as it was), or only a one-camera
            # scan's actions did (the cube is not read yet): nothing to resume
            await journal.call(
                journal.sync.finish,
                record.id,
                JobState.ABORTED,
                ErrorCode.INTERRUPTED,
                f"daemon stopped during {record.state}; "
                + (
                    f"{record.executed} scan action(s) had turned the cube over, none had "
                    "turned a layer; start a new job (it scans again)"
                    if record.executed
                    else "no move had been sent"
                ),
            )
            closed: RecoveredPayload = {
                "job_id": record.id,
                "state": record.state,
                "moves_done": 0,
                "resumable": False,
            }
            self.ctx.out.event(EventName.RECOVERED, closed)
            return
        await self.replay_unreported(record)
        try:
            record = await self.reconcile(record)
        except JobError as exc:
            if exc.code is not ErrorCode.FIRMWARE_COUNTER:
                raise
            self._needs_rescan(record, str(exc))
            return
        self.ctx.resumable = record
        recovered: RecoveredPayload = {
            "job_id": record.id,
            "state": record.state,
            "moves_done": record.executed,
            "moves_total": record.total_moves,
            "physical": record.physical,
            "resumable": True,
        }
        self.ctx.out.event(EventName.RECOVERED, recovered)

    def _needs_rescan(self, record: JobRecord, reason: str) -> None:
        """The firmware is not the one that ran the job: its moves cannot be counted, so the
        job can only finish from a fresh scan of the cube."""
        self.ctx.resumable = record
        self.ctx.rescan_required = True
        message = f'{reason}: send resume with rescan (payload {{"rescan": true}})'
        logger.error("job %s: %s", record.id, message)
        self.ctx.set_error(ErrorCode.FIRMWARE_COUNTER, message)
        self.ctx.out.event(
            EventName.ERROR,
            {"job_id": record.id, "code": ErrorCode.FIRMWARE_COUNTER, "message": message},
        )
        recovered: RecoveredPayload = {
            "job_id": record.id,
            "state": record.state,
            "moves_done": record.executed,
            "moves_total": record.total_moves,
            "physical": record.physical,
            "resumable": True,
        }
        self.ctx.out.event(EventName.RECOVERED, recovered)

    async def reconcile(self, record: JobRecord) -> JobRecord:
        """Record the moves the firmware executed after the journal last heard (from its
        non-volatile counter), so the journal's physical state is exact."""
        if record.first_index is None or record.dispatch_offset is None:
            return record
        status = await self.ctx.link.status()
        fw_done = status.last_executed - record.first_index + 1
        dispatched = record.total_moves - record.dispatch_offset
        in_dispatch = record.executed - record.dispatch_offset
        if fw_done < in_dispatch:
            raise JobError(
                ErrorCode.FIRMWARE_COUNTER,
                f"the firmware's executed counter ({status.last_executed}) is behind the "
                f"journal (move index {record.first_index + in_dispatch - 1} executed): this is "
                "not the firmware that ran the job",
            )
        fw_done = min(fw_done, dispatched)
        if fw_done == in_dispatch:
            return record
        await self._record_recovered(record, record.dispatch_offset + fw_done)
        logger.info(
            "job %s: %d moves executed while the daemon was away",
            record.id,
            fw_done - in_dispatch,
        )
        journal = self.ctx.journal
        updated = await journal.call(journal.sync.job, record.id)
        assert updated is not None
        return updated

    async def _record_recovered(self, record: JobRecord, upto: int) -> None:
        """Journal and announce job moves ``record.executed`` to ``upto - 1`` as executed."""
        assert record.first_index is not None and record.dispatch_offset is not None
        journal = self.ctx.journal
        moves = await journal.call(journal.sync.moves, record.id)
        cube = Cube.from_facelets(record.physical or "", record.size)
        for idx in range(record.executed, upto):
            m = moves[idx]
            move = journaled(m)
            cube = apply_journaled(cube, move)
            await journal.call(
                journal.sync.record_executed,
                record.id,
                idx,
                cube.to_facelets("scheme"),
                record.first_index + idx - record.dispatch_offset,
                self.ctx.out.reported(record.id),
            )
            self.ctx.out.move_executed(
                {
                    "job_id": record.id,
                    "index": idx + 1,
                    "total": record.total_moves,
                    "move": str(move),
                    "motor": m.motor,
                    "recovered": True,
                }
            )

    async def replay_unreported(self, record: JobRecord) -> None:
        """Announce again the executed moves whose events the broker may never have had (the
        daemon died between journaling a move and the broker's acknowledgement)."""
        self.ctx.out.set_reported(record.id, record.reported)
        if record.reported >= record.executed:
            return
        journal = self.ctx.journal
        moves = await journal.call(journal.sync.moves, record.id)
        for m in moves[record.reported : record.executed]:
            self.ctx.out.move_executed(
                {
                    "job_id": record.id,
                    "index": m.idx + 1,
                    "total": record.total_moves,
                    "move": str(journaled(m)),
                    "motor": m.motor,
                    "fw_index": m.fw_index,
                    "replayed": True,
                }
            )
        logger.info(
            "job %s: announced moves %d..%d again (the broker had not acknowledged them)",
            record.id,
            record.reported + 1,
            record.executed,
        )
