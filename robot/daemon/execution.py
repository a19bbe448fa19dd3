"""Executing a job's motor moves on the firmware: every move journaled as the firmware reports
it executed, firmware resets recovered (reconcile from the link's exact report, home, continue
with the moves that did not execute; at most :attr:`Executor.max_resets` per job), and every
other failure mapped to its error code.

The moves come in a :class:`MoveFeed`: all of them at once (a fixed plan), or a few at a time
while the motors turn (anytime solving, :mod:`robot.daemon.anytime`), each commit appended to
the running execution (:meth:`FirmwareLink.extend`) so that the firmware's queue never runs dry
between them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

from firmware_protocol.errors import (
    EmergencyStopError,
    ExecutionEndedError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareContradictionError,
    FirmwareResetError,
    FirmwareStoppedError,
    LinkError,
    MotorFaultError,
)
from firmware_protocol.link import MoveExecuted
from firmware_protocol.messages import ErrorCode as FirmwareError
from firmware_protocol.messages import Status
from firmware_protocol.moves import Move as WireMove
from robot.daemon.context import Context, Job, counter_denies
from robot.daemon.events import RESUMABLE_CODES, ErrorCode, EventName, FirmwareResetPayload
from robot.daemon.ports import FirmwarePort
from robot.errors import JobError

__all__ = ["Executor", "MoveFeed"]

logger = logging.getLogger(__name__)


class MoveFeed:
    """The motor moves of a job, as the executor sends them: all at once (``closed``), or
    committed a few at a time while the motors turn (:meth:`commit`; the last commit closes
    the feed). Committed moves are final: they go to the firmware as they are."""

    def __init__(self, moves: Sequence[WireMove] = (), *, closed: bool = True) -> None:
        self.moves: list[WireMove] = list(moves)
        self.closed = closed
        #: times the firmware ran out of committed moves before the feed closed (the motors
        #: stopped for the host)
        self.gaps = 0
        #: the link time of the last executed group's report, and how many moves of the feed
        #: had executed then (``None`` before the first)
        self.last_group: tuple[float, int] | None = None
        self._more = asyncio.Event()
        self._extend: Callable[[Sequence[WireMove]], None] | None = None

    def commit(self, moves: Sequence[WireMove], *, last: bool = False) -> None:
        """Append ``moves`` (whole groups) to what the firmware executes; ``last``: no more
        will come. They join the running execution at once when there is one."""
        self.moves.extend(moves)
        self.closed = self.closed or last
        if moves and self._extend is not None:
            try:
                self._extend(moves)
            except ExecutionEndedError:  # it just ended: the executor sends them anew
                self._extend = None
            except LinkError as exc:  # the link failed: the executor hears it from the execution
                logger.debug("extending the execution: %s", exc)
                self._extend = None
        self._more.set()

    async def wait(self) -> None:
        """Until the next commit."""
        await self._more.wait()
        self._more.clear()


class Executor:
    max_resets = 3

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._dispatched: Status | None = None
        self._running = 0

    @property
    def running(self) -> bool:
        """Whether an :meth:`execute` is under way: the motors may be turning, in whatever
        state the job shows (a one-camera scan's actions, a rescan's turns, a check's read
        run in ``SCANNING`` or ``VERIFYING``; an abort must stop them, not cancel the job)."""
        return self._running > 0

    async def execute(
        self,
        job: Job,
        moves: Sequence[WireMove] | MoveFeed,
        offset: int,
        dispatched: Status | None = None,
    ) -> None:
        """Execute ``moves`` (job moves ``offset`` on; a :class:`MoveFeed` until it closes),
        journaling each as it executes; recover from firmware resets. ``dispatched``: the
        firmware's STATUS with which the caller journaled the first dispatch already. Raises
        :class:`JobError` when the job cannot go on."""
        feed = moves if isinstance(moves, MoveFeed) else MoveFeed(moves)
        self._dispatched = dispatched
        started = time.perf_counter()
        resets = 0
        position = 0  # moves of the feed executed so far
        self._running += 1
        try:
            while True:
                if position >= len(feed.moves):
                    if feed.closed:
                        break
                    await feed.wait()
                    continue
                executed, reset, retracted = await self._dispatch(
                    job, feed, position, offset + position
                )
                position += executed
                if reset is not None:
                    resets += 1
                    await self._after_reset(job, reset, resets, retracted)
                elif not feed.closed or position < len(feed.moves):
                    feed.gaps += 1
                    logger.warning(
                        "job %s: the firmware ran out of moves after %d (the next ones were "
                        "committed late)",
                        job.id,
                        offset + position,
                    )
        except LinkError as exc:  # refused before anything moved (stopped, busy, closed)
            if job.abort_requested:  # the abort's latched stop, met by the next execution
                raise JobError(ErrorCode.ABORTED, "aborted on request") from exc
            raise JobError(ErrorCode.FIRMWARE, str(exc)) from exc
        finally:
            self._running -= 1
            await self.ctx.record_stage_time(job, "execute", started)

    async def _dispatch(
        self, job: Job, feed: MoveFeed, start: int, base_offset: int
    ) -> tuple[int, FirmwareResetError | None, list[int]]:
        """Send the feed's moves from ``start`` on (job moves ``base_offset`` on), and those
        committed while they execute, and journal what executes; return how many did, the
        firmware reset that ended the batch early (if one did) and the job moves (1-based)
        whose reports the counter after that reset denied (withdrawn: they are sent again)."""
        link, journal = self.ctx.link, self.ctx.journal
        status, self._dispatched = self._dispatched, None
        if status is None:
            status = await link.status()
            await journal.call(
                journal.sync.record_dispatch,
                job.id,
                status.boot_id,
                status.last_received + 1,
                base_offset,
            )
        try:
            execution = link.execute(feed.moves[start:])
        except FirmwareStoppedError as exc:
            stopped = job.abort_requested or status.error is FirmwareError.ESTOP
            if start == 0 or not stopped:
                raise
            # the motors stopped between two executions of a growing feed: a stop as any other
            raise self._job_error(job, EmergencyStopError(str(exc), exc.port, exc.report)) from exc
        if not feed.closed:
            feed._extend = link.extend
        recorded = 0
        try:
            async for event in execution:
                await self._executed(job, event, base_offset, recorded)
                recorded += 1
                if not event.move.simultaneous_with_next:
                    feed.last_group = (event.at, start + recorded)
        except ExecutionError as exc:
            for event in exc.report.executed[recorded:]:
                await self._executed(job, event, base_offset, recorded)
                recorded += 1
            if isinstance(exc, FirmwareResetError):
                if exc.report.unknown:
                    raise self._counters_lost(job, exc) from exc
                keep = await self._confirm_after_reset(job, exc.report.executed[:recorded])
                if keep == recorded:
                    return recorded, exc, []
                retracted = await self._retract(job, base_offset + keep)
                return keep, exc, [i + 1 for i in retracted]
            error = self._job_error(job, exc)
            if isinstance(exc, FirmwareContradictionError):
                await self._stop_untrusted(link)
                trusted = len(exc.report.executed)
                if recorded > trusted:
                    retracted = await self._retract(job, base_offset + trusted)
                    error.detail["retracted"] = [i + 1 for i in retracted]
            elif recorded and not isinstance(exc, ExecutionLinkError):
                error = await self._confirm_counter(
                    job, error, status.boot_id, base_offset, exc.report.executed[:recorded]
                )
            raise error from exc
        finally:
            feed._extend = None
        return recorded, None, []

    async def _stop_untrusted(self, link: FirmwarePort) -> None:
        """The firmware's reports contradict what was sent: stop the motors now rather than let
        its queue run on a cube whose state is no longer known (resume with rescan homes)."""
        try:
            await link.estop()
        except LinkError as exc:
            logger.error("could not stop the motors after a contradiction: %s", exc)

    async def _confirm_counter(
        self,
        job: Job,
        error: JobError,
        boot_id: int,
        base_offset: int,
        events: Sequence[MoveExecuted],
    ) -> JobError:
        """The execution ended early on a stop or a fault (the motors are still, the counter
        final): its EXECUTED reports are believed only if the firmware's own counter, read
        now, agrees (after a lost link the resume's reconciliation does the same). Two STATUS
        in a row of the same boot behind the last report deny it (a forged EXECUTED ahead of
        the motors, met by an emergency stop before any STATUS could contradict it: found by
        the chaos campaign on the turntable, seed 8006): the moves past the counter are
        withdrawn, as after a contradiction, and ``error`` says so."""
        counter = await self._denying_counter(job, events, boot_id)
        if counter is None:
            return error
        keep = sum(1 for event in events if event.index <= counter)
        retracted = await self._retract(job, base_offset + keep)
        if error.code in RESUMABLE_CODES:  # its moves' reports were denied: only a rescan
            self.ctx.rescan_required = True
        moves = ", ".join(str(i + 1) for i in retracted)
        return JobError(
            error.code,
            f"{error}; the firmware's executed counter ({counter}) denies its "
            f"reports of move(s) {moves}, which are journaled as not executed",
            {**error.detail, "retracted": [i + 1 for i in retracted]},
        )

    async def _confirm_after_reset(self, job: Job, events: Sequence[MoveExecuted]) -> int:
        """How many of ``events`` (reported executed before a firmware reset) the counters
        the firmware kept across the reset confirm. They are in non-volatile memory, and the
        executed counter is written before the EXECUTED that reports it (PROTOCOL.md, section
        5): a counter behind the reports denies them (a forged EXECUTED ahead of the motors,
        met by a reset: the chaos campaign, seed 8334), unless the counters came back at zero
        (the memory was lost: the reports are all there is)."""
        if not events:
            return 0
        counter = await self._denying_counter(job, events, None)
        if counter is None:
            return len(events)
        return sum(1 for event in events if event.index <= counter)

    async def _denying_counter(
        self, job: Job, events: Sequence[MoveExecuted], boot_id: int | None
    ) -> int | None:
        """The firmware's executed counter if it denies the last of ``events``
        (:func:`counter_denies`; ``boot_id`` None: of one boot, whichever it is). ``None``:
        the reports stand (confirmed, or no STATUS to say)."""
        try:
            denial, _ = await counter_denies(self.ctx.link, events[-1].index, boot_id)
        except LinkError as exc:
            logger.info("job %s: no STATUS to confirm the executed moves (%s)", job.id, exc)
            return None
        return None if denial is None else denial.last_executed

    async def _retract(self, job: Job, keep: int) -> list[int]:
        """A report the link had believed was denied afterwards (a forged EXECUTED ahead of
        the motors, contradicted by the next STATUS or by the counter read after a stop): the
        job moves it journaled from index ``keep`` on go back to not executed, so the journal,
        the tracked cube and the parts' state of a one-camera scan follow only what every
        report agrees on (a resume with rescan reconciles them with the firmware's counter,
        which may add them again)."""
        journal = self.ctx.journal
        job.unwind(keep)
        physical = None if job.physical is None else job.physical.to_facelets("scheme")
        retracted = await journal.call(journal.sync.retract_executed, job.id, keep, physical)
        out = self.ctx.out
        out.set_reported(job.id, min(out.reported(job.id), keep))
        logger.error(
            "job %s: move(s) %s were journaled as executed on a report the firmware then "
            "denied; they are journaled as not executed again",
            job.id,
            ", ".join(str(i + 1) for i in retracted),
        )
        self.ctx.publish_status()
        return retracted

    def _counters_lost(self, job: Job, exc: FirmwareResetError) -> JobError:
        """A reset lost the firmware's non-volatile memory (its counters came back at zero)
        while moves it had been sent were not reported executed: whether they ran is
        unknown, and a move that ran and is sent again turns its face twice. The job stops
        for a fresh scan rather than guess."""
        done = job.moves_done
        unknown = [done + i + 1 for i in range(len(exc.report.unknown))]
        which = f"move {unknown[0]}" if len(unknown) == 1 else f"moves {unknown[0]}-{unknown[-1]}"
        payload: FirmwareResetPayload = {
            "job_id": job.id,
            "moves_done": done,
            "moves_total": job.moves_total,
            "interrupted": [],
            "message": str(exc),
            "recovering": False,
            "unknown": unknown,
        }
        self.ctx.out.event(EventName.FIRMWARE_RESET, payload)
        self.ctx.rescan_required = self.ctx.moves_unknown = True
        logger.error(
            "job %s: the firmware reset and lost its move counters; whether job %s ran is unknown",
            job.id,
            which,
        )
        return JobError(
            ErrorCode.FIRMWARE_RESET,
            f"the firmware reset and lost its move counters (non-volatile memory): whether "
            f"job {which} ran is unknown; {done} of {job.moves_total} moves executed; check "
            'the board, then send resume with {"rescan": true}',
            {"unknown": unknown},
        )

    async def _after_reset(
        self, job: Job, exc: FirmwareResetError, resets: int, retracted: list[int]
    ) -> None:
        payload: FirmwareResetPayload = {
            "job_id": job.id,
            "moves_done": job.moves_done,
            "moves_total": job.moves_total,
            "interrupted": [str(p.move) for p in exc.report.interrupted],
            "message": str(exc),
            "recovering": resets <= self.max_resets,
        }
        if retracted:
            payload["retracted"] = retracted
        self.ctx.out.event(EventName.FIRMWARE_RESET, payload)
        if resets > self.max_resets:
            raise JobError(
                ErrorCode.FIRMWARE_RESET,
                f"the firmware reset {resets} times during the job; {job.moves_done} of "
                f"{job.moves_total} moves executed; check the power supply, then resume",
            ) from exc
        self.ctx.link.acknowledge_reset()
        try:
            await self.ctx.link.home()
        except ExecutionError as stop:  # an abort or estop (or a fault) while it homed
            raise self._job_error(job, stop) from stop

    def _job_error(self, job: Job, exc: ExecutionError) -> JobError:
        """The job error of an execution that ended before every move executed."""
        if isinstance(exc, FirmwareContradictionError):
            # the firmware's reports cannot be trusted: only a fresh scan says where the cube is
            self.ctx.rescan_required = True
            return JobError(
                ErrorCode.FIRMWARE_CONTRADICTION,
                f'{exc}; send resume with {{"rescan": true}} to finish from a fresh scan',
            )
        if isinstance(exc, EmergencyStopError):
            code = ErrorCode.ABORTED if job.abort_requested else ErrorCode.ESTOP
            what = "aborted" if job.abort_requested else "emergency stop"
            return JobError(code, f"{what} after {job.moves_done} of {job.moves_total} moves")
        if isinstance(exc, MotorFaultError):
            return JobError(ErrorCode.MOTOR_FAULT, str(exc))
        if isinstance(exc, ExecutionLinkError):
            return JobError(ErrorCode.LINK_LOST, str(exc))
        return JobError(ErrorCode.EXECUTION_FAILED, str(exc))

    async def _executed(
        self, job: Job, event: MoveExecuted, base_offset: int, expected: int
    ) -> None:
        if event.position != expected:
            raise JobError(
                ErrorCode.EXECUTION_ORDER,
                f"the firmware reported move {event.position + 1} after {expected}; stopping",
            )
        idx = base_offset + event.position
        move = job.advance(idx)
        journal = self.ctx.journal
        await journal.call(
            journal.sync.record_executed,
            job.id,
            idx,
            # None: a one-camera scan's action, before the cube is read (the row's token
            # still says the parts' state and the orientation)
            None if job.physical is None else job.physical.to_facelets("scheme"),
            event.index,
            self.ctx.out.reported(job.id),
        )
        job.moves_done = idx + 1
        self.ctx.out.move_executed(
            {
                "job_id": job.id,
                "index": idx + 1,
                "total": job.moves_total,
                "move": move,
                "motor": event.move.motor,
                "fw_index": event.index,
                "progress": round(100 * job.moves_done / job.moves_total),
            }
        )
        self.ctx.publish_status()
