"""Crash recovery: reconcile the journal's unfinished job with the firmware, and announce again
the events the broker never acknowledged.

After a crash the journal knows every move it recorded as executed; the firmware's
non-volatile executed counter knows the moves that completed while the daemon was down. Those
are recorded as executed and announced with ``recovered: true``. Moves journaled whose
``move_executed`` events the broker never acknowledged are announced again with
``replayed: true`` (a dashboard keys moves by ``(job_id, index)``). The job then waits for
``resume``.

Before ``resume`` sends anything, :meth:`Recovery.settle` waits for the firmware to be idle: a
firmware whose watchdog stayed fed (the dead daemon's port still open, a link that came back
at once) keeps running the job's moves it had queued. Sending the "remaining" moves then would
queue them behind the same moves and turn those faces twice. Each move the firmware completes
meanwhile is journaled and announced (``recovered: true``); the wait is bounded by ``[serial]
resume_drain_s`` (then the job stays resumable, code ``firmware_busy``). A held firmware
(``HOLD``, queue kept: e.g. an abort whose stop never arrived) holds the job's next moves in
order: it is released (RESUME) and drained the same way.
``abort`` and ``estop`` keep working during the wait (the job is ``EXECUTING``: the motors are
running).

A job interrupted during a one-camera scan (:mod:`robot.daemon.onecamera`) has executed moves
but no cube yet (``physical`` empty): its scan actions only turned the whole cube, and each
row records the orientation since the scan began and the parts' state. It is reconciled the
same way and stays resumable; ``resume`` scans on from the state the last executed row
records. A job none of whose moves executed is closed as ``interrupted``, unless the firmware
received its first action (the daemon died with it on the motors): it stays resumable, so that
``resume`` (or a new job, which waits for an idle firmware first) journals the action when it
completes and the next scan starts from the parts' state it left.
"""

from __future__ import annotations

import asyncio
import logging

from firmware_protocol.errors import LinkError
from firmware_protocol.messages import ErrorCode as FirmwareError
from firmware_protocol.messages import FirmwareState, Status
from robot.daemon.context import (
    Context,
    Job,
    apply_journaled,
    counter_denies,
    journaled,
    unapply_journaled,
)
from robot.daemon.events import ErrorCode, EventName, JobState, RecoveredPayload
from robot.errors import JobError
from robot.journal import JobRecord
from solver.cube.facelets import Cube

__all__ = ["Recovery"]

logger = logging.getLogger(__name__)

#: How long the STATUS after an abort's stop may take (the link's own deadline is
#: ``status_timeout_s``, 1 s by default; this bounds a link that never answers).
_STOPPED_STATUS_S = 1.0

#: how often the wait for an idle firmware asks for its STATUS
DRAIN_POLL_S = 0.05
_STOPPED = (FirmwareState.STOPPED, FirmwareState.FAULT)


class Recovery:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: why the last reconcile withdrew journaled moves the firmware's own counter denies
        #: (:meth:`_denied`; None: it withdrew none)
        self.denial: str | None = None

    async def recover(self) -> None:
        """At start (the firmware connected): close or reconcile the unfinished job."""
        journal = self.ctx.journal
        record = await journal.call(journal.sync.unfinished_job)
        if record is None:
            return
        if record.total_moves == 0:  # it never reached the motors: the cube is as it was
            await self._close(record, "no move had been sent")
            return
        await self.replay_unreported(record)
        self.denial = None
        try:
            record = await self.reconcile(record)
        except JobError as exc:
            if exc.code is not ErrorCode.FIRMWARE_COUNTER:
                raise
            self._needs_rescan(record, str(exc))
            self.ctx.moves_unknown = True
            return
        if self.denial is not None:
            self._needs_rescan(record, self.denial)
            return
        if record.physical is None:
            # a one-camera scan was reading the cube: its actions only turned the whole cube,
            # and each executed row says the orientation and the parts' state they left
            if not record.executed and not await self._received(record):
                await self._close(record, "no move had executed")
                return
            if not record.executed:
                # closed now, the action would complete unjournaled and the next scan would
                # start from parts the table has left: resume (or a new job) waits for it
                logger.warning(
                    "job %s: interrupted before its one-camera scan's first action had "
                    "executed, but the firmware has it (the motors may still be turning it); "
                    "the job stays resumable until the firmware is idle",
                    record.id,
                )
            else:
                logger.info(
                    "job %s: interrupted after %d action(s) of its one-camera scan; resume "
                    "scans on from the orientation and parts' state the journal's last row "
                    "records",
                    record.id,
                    record.executed,
                )
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

    async def _received(self, record: JobRecord) -> bool:
        """Whether the firmware has received a move of ``record`` (sent before the crash): its
        motors may be running it still, or it may have stopped them mid-move."""
        if record.first_index is None:
            return False
        status = await self.ctx.link.status()
        return status.boot_id == record.boot_id and status.last_received >= record.first_index

    async def _close(self, record: JobRecord, why: str) -> None:
        """End the unfinished job ``record`` as interrupted (nothing of it to resume)."""
        journal = self.ctx.journal
        await journal.call(
            journal.sync.finish,
            record.id,
            JobState.ABORTED,
            ErrorCode.INTERRUPTED,
            f"daemon stopped during {record.state}; {why}",
        )
        closed: RecoveredPayload = {
            "job_id": record.id,
            "state": record.state,
            "moves_done": 0,
            "resumable": False,
        }
        self.ctx.out.event(EventName.RECOVERED, closed)

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

    async def settle(self, job: Job, record: JobRecord) -> JobRecord:
        """Before a resume sends anything: wait until the firmware has no move of the job left
        in its queue, journaling each one it executes meanwhile; the job's record then.

        Raises :class:`JobError`: ``firmware_busy`` (still running after ``[serial]
        resume_drain_s``; resumable), ``aborted``/``estop``/``motor_fault`` (the firmware
        stopped during the wait), ``firmware_counter`` (see :meth:`reconcile`).
        """
        if record.first_index is None or record.dispatch_offset is None:
            return record  # no move of the job was ever sent: none can be running
        job.moves_total = record.total_moves
        seen: list[FirmwareState] = []
        self.denial = None
        try:
            record = await self._drain(job, record, seen)
        except asyncio.CancelledError:
            # an abort before the job showed EXECUTING cancels it: if the motors may be
            # running the job's moves (no STATUS yet, or a running one), stop them anyway
            if job.abort_requested and (
                not seen or seen[-1] not in (FirmwareState.IDLE, *_STOPPED)
            ):
                try:
                    await self.ctx.link.estop()
                except LinkError as exc:
                    logger.error("abort: cannot stop the firmware: %s", exc)
                else:
                    await self._journal_after_stop(job, record)
            raise
        if self.denial is not None:  # withdrawn moves: the journal now agrees with the counter
            raise JobError(ErrorCode.FIRMWARE_COUNTER, self.denial)
        return record

    async def _journal_after_stop(self, job: Job, record: JobRecord) -> None:
        """After an abort stopped the motors during :meth:`settle`: journal the moves of the
        job's queue they ran since the last STATUS the wait read (the counters are final now),
        as the wait would have. Best effort: the job is ending either way."""
        journal = self.ctx.journal
        try:
            async with asyncio.timeout(_STOPPED_STATUS_S):
                status = await self.ctx.link.status()
            current = await journal.call(journal.sync.job, record.id)
            await self._reconcile(current or record, status)
        except (LinkError, JobError, TimeoutError) as exc:
            logger.warning(
                "job %s: the moves the firmware ran before the abort stopped it are not "
                "journaled: %s; the next job's scan reads the cube as it is",
                job.id,
                str(exc) or f"no STATUS within {_STOPPED_STATUS_S:g} s",
            )

    async def _drain(self, job: Job, record: JobRecord, seen: list[FirmwareState]) -> JobRecord:
        link = self.ctx.link
        loop = asyncio.get_running_loop()
        drain_s = self.ctx.config.serial.resume_drain_s
        deadline = loop.time() + drain_s
        waited = False
        while True:
            status = await link.status()
            seen[:] = [status.state]
            record = await self._reconcile(record, status)
            job.moves_done = record.executed
            if status.state is FirmwareState.IDLE:
                break
            if status.state in _STOPPED:
                stop = self._stopped_during_wait(job, status) if waited else None
                if stop is not None:
                    raise stop
                # its queue is flushed and the counters are exact: what follows meets the
                # stop as any execution does (a watchdog stop is cleared by the link)
                break
            if not waited:
                waited = True
                # the motors are running the job's moves: the job is executing (and abort
                # stops it the way it stops an execution: hold, then a latched stop)
                self.ctx.set_state(JobState.EXECUTING)
                logger.info(
                    "job %s: the firmware is still running moves %d..%d of its queue "
                    "(%s); waiting up to %g s before resuming",
                    job.id,
                    status.last_executed + 1,
                    status.last_received,
                    status.state.name,
                    drain_s,
                )
            if status.state is FirmwareState.HOLD and not job.abort_requested:
                # a held queue never drains; it holds the job's next moves, in order, which
                # is what resume is asked to run: let the firmware go on with them
                logger.warning(
                    "job %s: the firmware holds moves %d..%d; releasing the hold",
                    job.id,
                    status.last_executed + 1,
                    status.last_received,
                )
                await link.resume()
            if loop.time() >= deadline:
                raise JobError(
                    ErrorCode.FIRMWARE_BUSY,
                    f"resume: the firmware is still running the job's earlier moves (move "
                    f"{status.last_executed} of {status.last_received} done, state "
                    f"{status.state.name}) after [serial] resume_drain_s = {drain_s:g} s; the "
                    "moves it ran are journaled and the job stays resumable: send resume "
                    "again once the robot is still, or estop",
                )
            await asyncio.sleep(DRAIN_POLL_S)
        if waited:
            logger.info("job %s: the firmware is idle after move %d", job.id, record.executed)
        return record

    @staticmethod
    def _stopped_during_wait(job: Job, status: Status) -> JobError | None:
        """How a stop met while the resume waited ends the job: an abort, an emergency stop,
        a motor fault (``None``: another stop, e.g. the watchdog's)."""
        where = f"the firmware stopped while the resume waited for its queue ({status.error.name})"
        if job.abort_requested:
            return JobError(ErrorCode.ABORTED, "aborted on request")
        if status.error is FirmwareError.ESTOP:
            return JobError(ErrorCode.ESTOP, f"emergency stop: {where}")
        if status.state is FirmwareState.FAULT:
            return JobError(ErrorCode.MOTOR_FAULT, f"{where}; run `cuberobot home`")
        return None

    async def reconcile(self, record: JobRecord) -> JobRecord:
        """Record the moves the firmware executed after the journal last heard (from its
        non-volatile counter), so the journal's physical state is exact (a snapshot: the
        firmware may still be running; :meth:`settle` waits for it)."""
        if record.first_index is None or record.dispatch_offset is None:
            return record
        return await self._reconcile(record, await self.ctx.link.status())

    async def _reconcile(self, record: JobRecord, status: Status) -> JobRecord:
        assert record.first_index is not None and record.dispatch_offset is not None
        fw_done = status.last_executed - record.first_index + 1
        dispatched = record.total_moves - record.dispatch_offset
        in_dispatch = record.executed - record.dispatch_offset
        if fw_done < in_dispatch and status.boot_id == record.boot_id:
            # the same boot behind the journal: a denial, if a second STATUS agrees
            below = record.first_index + in_dispatch - 1
            denial, status = await counter_denies(self.ctx.link, below, record.boot_id, status)
            if denial is not None:
                done = denial.last_executed - record.first_index + 1
                return await self._denied(record, denial, max(done, 0))
            fw_done = status.last_executed - record.first_index + 1
        if fw_done < in_dispatch:
            raise JobError(
                ErrorCode.FIRMWARE_COUNTER,
                f"the firmware's executed counter ({status.last_executed}) is behind the "
                f"journal (move index {record.first_index + in_dispatch - 1} executed): this is "
                "not the firmware that ran the job, or it lost its counters (a power cut)",
            )
        if in_dispatch < dispatched and self._lost_counters(record, status):
            first = record.dispatch_offset + in_dispatch + 1
            raise JobError(
                ErrorCode.FIRMWARE_COUNTER,
                f"the firmware reset and lost its move counters (boot {record.boot_id or 0:08x} "
                f"→ {status.boot_id:08x}) while job moves {first}-{record.total_moves} were sent "
                "and not reported executed: whether they ran is unknown",
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

    def _lost_counters(self, record: JobRecord, status: Status) -> bool:
        """Whether the firmware is a boot after the one the job's moves were sent to, whose
        counters came back at zero because its memory was lost (IDENT's boot flags): then a
        counter of zero says nothing of the moves sent before. Without this, a job none of
        whose moves had been reported (its first dispatch from index 1) read as "none ran",
        and a plain resume sent them all again on a cube that had turned (the chaos campaign,
        six-motor robot, seed 14204: the port gone and the memory lost meanwhile)."""
        info = self.ctx.link.info
        return (
            status.boot_id != record.boot_id
            and status.last_executed == 0
            and status.started_upto == 0
            and info is not None
            and info.boot_id == status.boot_id
            and info.counters_lost
        )

    async def _denied(self, record: JobRecord, status: Status, fw_done: int) -> JobRecord:
        """The firmware that ran the job (the same boot) says, twice in a row, it completed
        fewer of the moves sent than the journal has executed: the reports that journaled the
        others are denied by the firmware's own counter (a forged or garbled EXECUTED, found
        after the daemon died before the STATUS that contradicted it). Those moves go back to
        not executed, so that the parts' state and the cube the journal gives are the ones
        the firmware's counter says; the job needs a fresh scan (:attr:`denial` says why)."""
        assert record.first_index is not None and record.dispatch_offset is not None
        keep = record.dispatch_offset + fw_done
        journal = self.ctx.journal
        moves = await journal.call(journal.sync.moves, record.id)
        physical = None
        if record.physical is not None:
            cube = Cube.from_facelets(record.physical, record.size)
            undone = [journaled(m) for m in moves[keep : record.executed]]
            physical = unapply_journaled(cube, undone).to_facelets("scheme")
        retracted = await journal.call(journal.sync.retract_executed, record.id, keep, physical)
        self.ctx.out.set_reported(record.id, min(self.ctx.out.reported(record.id), keep))
        self.denial = (
            f"the firmware's executed counter ({status.last_executed}, boot "
            f"{status.boot_id:08x}) denies the reports that move(s) "
            f"{', '.join(str(i + 1) for i in retracted)} of the job executed; they are "
            "journaled as not executed and the cube's state is uncertain"
        )
        self.ctx.rescan_required = True
        logger.error("job %s: %s", record.id, self.denial)
        updated = await journal.call(journal.sync.job, record.id)
        assert updated is not None
        return updated

    async def _record_recovered(self, record: JobRecord, upto: int) -> None:
        """Journal and announce job moves ``record.executed`` to ``upto - 1`` as executed."""
        assert record.first_index is not None and record.dispatch_offset is not None
        journal = self.ctx.journal
        moves = await journal.call(journal.sync.moves, record.id)
        # None: a one-camera scan's actions before the cube was read (their rows still say
        # the orientation and the parts' state)
        cube = None if record.physical is None else Cube.from_facelets(record.physical, record.size)
        for idx in range(record.executed, upto):
            m = moves[idx]
            move = journaled(m)
            cube = None if cube is None else apply_journaled(cube, move)
            await journal.call(
                journal.sync.record_executed,
                record.id,
                idx,
                None if cube is None else cube.to_facelets("scheme"),
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
