"""Command intake: validate, de-duplicate, run each command as a named task (``cmd-<verb>``) of
the daemon's task group, start jobs (the ``job`` task, at most one at a time), and reply.

Safety first: ``estop`` and ``abort`` overtake everything. They are handled the moment they
arrive, before any other command waiting and without touching the disk (both are idempotent, so
their ids are not journaled: a repeated one runs again). An ``estop`` stops the motors even when
its payload is malformed (the reply then says so). Every other command goes through a bounded
queue served in order by the ``intake`` task; a full queue answers ``busy`` and a verb sent
faster than its rate answers ``rate_limited`` at once, so no flood can delay a stop or grow
memory.

A queued command's ``id`` is remembered in the journal: a command seen before (even before a
restart) is not run again; its first reply is repeated with ``"duplicate": true``. Replies go
back the way the command came (MQTT ``cmd/<verb>/reply``, or to :meth:`Intake.submit`'s
caller).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from firmware_protocol.errors import LinkClosedError, LinkError
from firmware_protocol.messages import FirmwareState, Status
from robot.commands import (
    AbortCommand,
    Command,
    EStopCommand,
    HomeCommand,
    NewJobCommand,
    ResumeCommand,
    SolveCommand,
    StatusCommand,
    command_id_of,
    error_reply,
    ok_reply,
    parse_command,
    shown,
)
from robot.daemon.context import Context, Job, still_running
from robot.daemon.events import ErrorCode, JobState
from robot.daemon.pipeline import Pipeline
from robot.daemon.ports import FirmwarePort
from robot.daemon.recovery import DRAIN_POLL_S
from robot.errors import CommandError, JobError
from solver.cube.facelets import Cube
from solver.errors import CubeError

__all__ = ["QUEUE_LIMIT", "RATES", "Intake", "Reply"]

logger = logging.getLogger(__name__)

Reply = dict[str, Any]
Payload = bytes | str | dict[str, Any]
Deliver = Callable[[Reply], None] | None

#: the commands that overtake everything
SAFETY_VERBS = frozenset({"estop", "abort"})
#: commands whose ids are not journaled: the safety verbs (idempotent, never wait for the disk)
#: and ``status`` (read-only: a repeat only answers again; journaling its ids let a client
#: polling at the rate limit grow the journal by a row every 50 ms)
UNJOURNALED_VERBS = SAFETY_VERBS | {"status"}
#: commands waiting to be served at most (past it: ``busy``)
QUEUE_LIMIT = 64
#: an estop that meets a fresh session replacing the link waits this long for the new one
ESTOP_SWAP_WAIT_S = 2.0
#: a fresh session's link that could not connect tries again after these back-offs (s)
RECONNECT_MIN_S, RECONNECT_MAX_S = 0.05, 5.0
#: per verb: (commands per second sustained, burst); past it: ``rate_limited``
RATES: dict[str, tuple[float, float]] = {"status": (20.0, 40.0)}
DEFAULT_RATE = (5.0, 10.0)
#: replies to refused MQTT commands (and their log lines): (per second, burst); past it a
#: refusal is only counted (``refused["unanswered"]``)
REFUSAL_RATE = (20.0, 40.0)
#: the refusals :data:`REFUSAL_RATE` applies to
QUIET_CODES = frozenset(
    {ErrorCode.MALFORMED, ErrorCode.UNKNOWN_COMMAND, ErrorCode.RATE_LIMITED, ErrorCode.BUSY}
)
UNANSWERED = "unanswered"
#: command ids remembered in memory at most (a flood of new ids must not grow it)
SEEN_IDS_LIMIT = 4096


class _Bucket:
    """A token bucket: ``rate`` tokens per second up to ``burst``."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class Intake:
    def __init__(
        self,
        ctx: Context,
        pipeline: Pipeline,
        link_factory: Callable[[], FirmwarePort] | None,
    ) -> None:
        self.ctx = ctx
        self.pipeline = pipeline
        self.link_factory = link_factory
        #: the daemon's task group while it runs (commands and the job run in it)
        self.group: asyncio.TaskGroup | None = None
        self.job_task: asyncio.Task[None] | None = None
        self.job_done = asyncio.Event()
        self.job_done.set()
        #: ids seen in this run, newest last (a cache of the journal's, bounded: an id
        #: forgotten here is still found there)
        self._seen_ids: dict[str, None] = {}
        self._queue: asyncio.Queue[tuple[Command, Deliver, int]] = asyncio.Queue(QUEUE_LIMIT)
        self._buckets: dict[str, _Bucket] = {}
        self._refusal_replies = _Bucket(*REFUSAL_RATE)
        self._refusal_logs = _Bucket(*REFUSAL_RATE)
        #: refusals by reason since start (busy, rate_limited, malformed): for status and tests
        self.refused: dict[str, int] = {}
        #: held while a command may replace the link or start a job (see :meth:`_command`)
        self._link_lock = asyncio.Lock()
        #: a fresh session is replacing the link (:meth:`_fresh_session`)
        self._swapping = False
        #: estop commands since start (a home prepared before one must not clear it)
        self.estops = 0

    @property
    def busy(self) -> bool:
        return self.job_task is not None and not self.job_task.done()

    # === the ways in ==============================================================================

    async def on_mqtt_command(self, verb: str, payload: bytes) -> None:
        reply = await self.accept(verb, payload)
        if reply is None:
            return
        code = reply["error"]["code"] if reply.get("ok") is False else None
        if code in QUIET_CODES and not self._refusal_replies.take():
            # a flood of refused commands: counted, not answered, so that its replies cannot
            # crowd a job's events out of the MQTT queue (the sender of a flood is not reading)
            self._count(UNANSWERED)
            return
        self.ctx.out.reply(verb, reply)

    async def submit(self, verb: str, payload: Payload = b"") -> Reply:
        """Run a command as if it came over MQTT; return its reply (after it completes)."""
        replies: asyncio.Queue[Reply] = asyncio.Queue()
        first = await self.accept(verb, payload, replies.put_nowait)
        if first is not None:
            return first
        return await replies.get()

    async def accept(self, verb: str, payload: Payload, deliver: Deliver = None) -> Reply | None:
        """Take a command in. Returns an immediate reply (refused, or a duplicate), or None when
        the reply comes later (through ``deliver``, or the sink). Never waits on the disk or on
        other commands: a stop is on its way to the firmware when this returns."""
        if verb == "estop":  # counted as it arrives: a command that came before must not clear it
            self.estops += 1
        try:
            command = parse_command(verb, payload)
        except CommandError as exc:
            raw = payload if isinstance(payload, bytes | str) else b""
            if self._refusal_logs.take():  # a flood is not logged line by line
                logger.warning("command %s refused: %s", shown(verb), exc)
            self._count(exc.code)
            if verb == "estop" and self.group is not None:
                self._spawn(self._estop_anyway(), "cmd-estop")  # safety over form
                return error_reply(
                    verb, command_id_of(raw), exc.code, f"{exc}; the motors were stopped anyway"
                )
            return error_reply(verb, command_id_of(raw), exc.code, str(exc))
        if self.group is None:
            return error_reply(verb, command.id, ErrorCode.NOT_RUNNING, "the daemon is not running")
        respond = self._responder(command, deliver)
        if command.verb in SAFETY_VERBS:
            self._spawn(self._run_command(command, respond, self.estops), f"cmd-{command.verb}")
            return None
        if not self._bucket(command.verb).take():
            self._count(ErrorCode.RATE_LIMITED)
            rate, burst = RATES.get(command.verb, DEFAULT_RATE)
            return error_reply(
                verb,
                command.id,
                ErrorCode.RATE_LIMITED,
                f"{verb}: more than {rate:g} per second (bursts of {burst:g}); dropped, "
                "retry later",
            )
        try:
            self._queue.put_nowait((command, deliver, self.estops))
        except asyncio.QueueFull:
            self._count(ErrorCode.BUSY)
            return error_reply(
                verb,
                command.id,
                ErrorCode.BUSY,
                f"{verb}: {QUEUE_LIMIT} commands are already waiting; dropped, retry later",
            )
        return None

    async def serve(self) -> None:
        """The ``intake`` task: take queued commands in order, drop repeated ids, start each."""
        while True:
            command, deliver, stops = await self._queue.get()
            try:
                if command.id is not None and command.verb not in UNJOURNALED_VERBS:
                    duplicate = await self._duplicate(command.id, command.verb)
                    if duplicate is not None:
                        self._deliver(command.verb, duplicate, deliver)
                        continue
                respond = self._responder(command, deliver)
                self._spawn(self._run_command(command, respond, stops), f"cmd-{command.verb}")
            except Exception:
                logger.exception("intake: command %s could not be started", command.verb)
                reply = error_reply(
                    command.verb, command.id, ErrorCode.INTERNAL, "internal error in intake"
                )
                self._deliver(command.verb, reply, deliver)

    def _responder(self, command: Command, deliver: Deliver) -> Callable[[Reply], Awaitable[None]]:
        async def respond(reply: Reply) -> None:
            if command.id is not None and command.verb not in UNJOURNALED_VERBS:
                journal = self.ctx.journal
                await journal.call(journal.sync.record_reply, command.id, reply)
            self._deliver(command.verb, reply, deliver)

        return respond

    def _deliver(self, verb: str, reply: Reply, deliver: Deliver) -> None:
        if deliver is not None:
            deliver(reply)
        else:
            self.ctx.out.reply(verb, reply)

    def _spawn(self, body: Coroutine[Any, Any, None], name: str) -> None:
        assert self.group is not None
        self.group.create_task(body, name=name)

    def _bucket(self, verb: str) -> _Bucket:
        bucket = self._buckets.get(verb)
        if bucket is None:
            bucket = self._buckets[verb] = _Bucket(*RATES.get(verb, DEFAULT_RATE))
        return bucket

    def _count(self, code: str) -> None:
        self.refused[str(code)] = self.refused.get(str(code), 0) + 1

    async def _estop_anyway(self) -> None:
        try:
            await self._estop()
        except LinkError as exc:
            logger.error("estop (malformed command): %s", exc)

    async def _duplicate(self, command_id: str, verb: str) -> Reply | None:
        """The repeated reply if ``command_id`` was seen (in this run or in the journal)."""
        journal = self.ctx.journal
        if command_id not in self._seen_ids:
            self._seen_ids[command_id] = None
            if len(self._seen_ids) > SEEN_IDS_LIMIT:
                del self._seen_ids[next(iter(self._seen_ids))]
            if await journal.call(journal.sync.record_command, command_id, verb):
                return None
            logger.info("command %s %s is a duplicate: ignored", verb, shown(command_id, 64))
        previous = await journal.call(journal.sync.seen_command, command_id)
        return {**(previous or {}), "duplicate": True, "id": command_id, "verb": verb}

    async def _run_command(
        self, command: Command, respond: Callable[[Reply], Awaitable[None]], stops: int
    ) -> None:
        """``stops``: :attr:`estops` when the command arrived."""
        try:
            reply = await self._command(command, stops)
        except CommandError as exc:
            reply = error_reply(command.verb, command.id, exc.code, str(exc), command.source)
        except LinkError as exc:
            reply = error_reply(
                command.verb, command.id, ErrorCode.FIRMWARE, str(exc), command.source
            )
        except Exception as exc:
            logger.exception("command %s: unexpected failure", command.verb)
            reply = error_reply(
                command.verb, command.id, ErrorCode.INTERNAL, f"internal error: {exc!r}"
            )
        await respond(reply)

    # === the commands =============================================================================

    async def _command(self, command: Command, stops: int) -> Reply:
        verb = command.verb
        if isinstance(command, StatusCommand):
            return ok_reply(command, status=self.ctx.status())
        if isinstance(command, EStopCommand):
            status = await self._estop()
            return ok_reply(command, firmware_state=status.state.name)
        if isinstance(command, AbortCommand):
            return await self._abort(command, stops)
        if not isinstance(command, HomeCommand) and not self.ctx.prepared.is_set():
            # a job right after start waits for the solver's tables (status PREPARING)
            logger.info("%s waits for the solver tables", verb)
            await self.ctx.prepared.wait()
        # One at a time: commands run as tasks side by side, and two of these at once made two
        # jobs (each saw no job running), or two fresh sessions (two links left open on the
        # one port: bench/chaos.py); an abort's homing takes the lock too.
        async with self._link_lock:
            return await self._serialized(command, stops)

    async def _serialized(self, command: Command, stops: int) -> Reply:
        """``home``, ``resume`` and the new jobs, under :attr:`_link_lock`."""
        verb = command.verb
        if self.busy:
            job_id = self.ctx.job.id if self.ctx.job else "?"
            raise CommandError(
                ErrorCode.BUSY,
                f"{verb}: job {job_id} is {self.ctx.state}; wait for it or send abort",
            )
        if isinstance(command, HomeCommand):
            status = await self._rehome("home", stops)
            return ok_reply(command, firmware_state=status.state.name)
        if isinstance(command, ResumeCommand):
            await self._wait_for_link(command)
        if not self.ctx.firmware_ready.is_set():
            raise CommandError(
                ErrorCode.FIRMWARE_UNAVAILABLE,
                f"{verb}: the firmware on {self.ctx.config.serial.url} is not connected yet; "
                "check the cable and the [serial] url, then retry",
            )
        if isinstance(command, ResumeCommand):
            return await self._resume(command, stops)
        return await self._new_job(command, stops)

    async def _wait_for_link(self, command: Command) -> None:
        """Resume right after a lost link: wait (``[serial] resume_wait_s``) for it to come
        back instead of failing a job that only needs the cable back."""
        wait_s = self.ctx.config.serial.resume_wait_s
        deadline = time.monotonic() + wait_s
        while not (self.ctx.firmware_ready.is_set() and self.ctx.link.connected):
            if time.monotonic() >= deadline:
                raise CommandError(
                    ErrorCode.FIRMWARE_UNAVAILABLE,
                    f"{command.verb}: the firmware on {self.ctx.config.serial.url} did not come "
                    f"back within {wait_s:g} s; check the cable, then send resume again (the "
                    "job stays resumable)",
                )
            await asyncio.sleep(0.05)

    async def _abort(self, command: AbortCommand, stops: int) -> Reply:
        if not self.busy:
            raise CommandError(ErrorCode.NOT_RUNNING, "abort: no job is running")
        job = self.ctx.job
        assert job is not None
        job.abort_requested = True
        motors_ran = self._motors_running()
        await self._abort_execution()
        await self.job_done.wait()
        if motors_ran:
            async with self._link_lock:  # a home or a new job sent meanwhile waits for it
                try:  # clear the latched stop: ready for the next job
                    await self._rehome("abort", stops)
                except CommandError as exc:  # an estop came: the motors stay stopped
                    logger.warning("%s", exc)
        return ok_reply(command, job_id=job.id, state=str(self.ctx.state))

    async def _resume(self, command: ResumeCommand, stops: int) -> Reply:
        record = self.ctx.resumable
        if record is None:
            raise CommandError(ErrorCode.NOT_RESUMABLE, "resume: no interrupted job in the journal")
        if self.ctx.rescan_required and not command.rescan:
            raise CommandError(
                ErrorCode.FIRMWARE_COUNTER,
                f"resume: the moves of job {record.id} cannot be counted (its firmware's "
                "counters do not match the journal, or contradicted what was sent): send "
                'resume with {"rescan": true}',
            )
        if self.ctx.rescan_required and not await still_running(self.ctx.link):
            # the motors were stopped when the firmware could not be trusted: clear the stop
            await self._rehome("resume", stops)
        elif self.ctx.last_error is not None and (
            self.ctx.last_error["code"] == ErrorCode.FIRMWARE_RESET
        ):
            # the job ended on one reset too many: as after a recovered reset, allow executions
            # again and home (resume reconciles the moves with the firmware's counters)
            self.ctx.link.acknowledge_reset()
            await self.ctx.link.home()
        job = Job(record.id, record.kind, command.id, time.monotonic())
        job.stage_times = dict(record.stage_times)
        self.ctx.out.sources[job.id] = command.source or None
        self._start_job(job, self.pipeline.resume_job(job, record, command.rescan))
        return ok_reply(command, job_id=job.id, resumed=True)

    async def _new_job(self, command: Command, stops: int) -> Reply:
        """start, solve or scan: a new job (an interrupted one is closed, superseded)."""
        given: Cube | None = None
        if isinstance(command, SolveCommand):
            given = self._given(command)
        journal = self.ctx.journal
        await self._quiet_firmware(command, stops)
        if self.ctx.resumable is not None:
            # a new job on purpose: the interrupted one is closed, its cube state carried over
            record = self.ctx.resumable
            code, why = ErrorCode.SUPERSEDED, f"superseded by a new {command.verb} job"
            if self.ctx.moves_unknown and self.pipeline.mechanism is not None:
                lost = self.pipeline.mechanism.parts_lost(command.verb, record)
                code, why = lost.code, f"{why}; {lost}"
            await journal.call(journal.sync.finish, record.id, JobState.ABORTED, code, why)
            self.ctx.resumable = None
            self.ctx.rescan_required = self.ctx.moves_unknown = False
        anytime = self.pipeline.anytime if given is not None else None
        if anytime is not None:  # the firmware's STATUS while the job and its state are journaled
            anytime.prefetch_status()
        job_id = await journal.call(journal.sync.create_job, command.verb, self.ctx.n, command.id)
        job = Job(job_id, command.verb, command.id, time.monotonic())
        job.start_pose = isinstance(command, NewJobCommand) and command.start_pose
        if anytime is not None:
            anytime.claim_status(job)
        self.ctx.out.sources[job.id] = command.source or None
        self._start_job(job, self.pipeline.run_job(job, given))
        return ok_reply(command, job_id=job_id)

    async def _quiet_firmware(self, command: Command, stops: int) -> None:
        """Before a new job supersedes an interrupted one: the firmware must not still be
        running that job's queue (its watchdog stayed fed across a daemon restart or a short
        link loss). A scan would read a moving cube and the new moves would queue behind the
        old ones. Wait up to ``[serial] resume_drain_s``, journaling each old move the firmware
        completes (the cube state the new job starts from stays exact); a held queue is
        discarded the way abort discards it (stop, then home); still running: ``firmware_busy``.
        """
        record = self.ctx.resumable
        if record is None or record.first_index is None:
            return  # no move of the interrupted job was ever sent: none can be running
        link = self.ctx.link
        drain_s = self.ctx.config.serial.resume_drain_s
        deadline = time.monotonic() + drain_s
        while True:
            status = await link.status()
            try:
                record = await self.pipeline.recovery.reconcile(record)
            except JobError as exc:  # not the firmware that ran it: nothing to count
                logger.warning("%s: job %s: %s", command.verb, record.id, exc)
            self.ctx.resumable = record
            if status.state is FirmwareState.HOLD:
                logger.warning(
                    "%s: the firmware holds moves %d..%d of job %s; discarding them",
                    command.verb,
                    status.last_executed + 1,
                    status.last_received,
                    record.id,
                )
                await link.estop()
                await self._rehome(command.verb, stops)
                return
            if status.state not in (FirmwareState.RUNNING, FirmwareState.HOMING):
                return
            if time.monotonic() >= deadline:
                raise CommandError(
                    ErrorCode.FIRMWARE_BUSY,
                    f"{command.verb}: the firmware is still running the moves of interrupted "
                    f"job {record.id} (move {status.last_executed} of {status.last_received} "
                    f"done) after [serial] resume_drain_s = {drain_s:g} s; the moves it ran are "
                    f"journaled: send {command.verb} again once the robot is still, or estop",
                )
            await asyncio.sleep(DRAIN_POLL_S)

    def _given(self, command: SolveCommand) -> Cube:
        try:
            given = Cube.from_facelets(command.facelets)
        except CubeError as exc:
            raise CommandError(ErrorCode.MALFORMED, f"solve: facelets: {exc}") from None
        if given.n != self.ctx.n:
            raise CommandError(
                ErrorCode.MALFORMED,
                f"solve: this robot holds an N={self.ctx.n} cube, not N={given.n}",
            )
        return given

    # === the job task and the firmware ============================================================

    def _start_job(self, job: Job, body: Awaitable[None]) -> None:
        assert self.group is not None
        self.ctx.job = job
        self.ctx.last_error = None
        self.job_done.clear()

        async def wrapped() -> None:
            try:
                await body
            finally:
                self.job_done.set()

        self.job_task = self.group.create_task(wrapped(), name="job")

    async def _rehome(self, verb: str, stops: int) -> Status:
        """A fresh session, then HOME, unless an emergency stop arrived after the command
        (``stops``: :attr:`estops` when it arrived): a stop sent after a command must not be
        cleared by it (the motors stay stopped until a home sent after the stop)."""
        await self._fresh_session()
        if self.estops != stops:
            raise CommandError(
                ErrorCode.FIRMWARE,
                f"{verb}: an emergency stop came while the link was re-opened; the motors stay "
                "stopped: send home again when the robot is safe",
            )
        return await self.ctx.link.home()

    async def _estop(self) -> Status:
        """Stop the motors. While a fresh session replaces the link (the old one closed, the
        new one connecting), the stop goes through the new link as soon as it is connected
        (at most :data:`ESTOP_SWAP_WAIT_S`): refused by the closed link, it never reached the
        firmware (found by bench/chaos.py)."""
        deadline = time.monotonic() + ESTOP_SWAP_WAIT_S
        while True:
            link = self.ctx.link
            try:
                return await link.estop()
            except LinkError:
                replaced = self._swapping or link is not self.ctx.link
                if not replaced or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(0.001)

    async def _fresh_session(self) -> None:
        """After a stop the firmware discarded its queue: open a new link so that the next
        execution starts from the counters the firmware announces (IDENT), not from what this
        link last sent."""
        if self.link_factory is None:
            return
        self._swapping = True
        try:
            await self.ctx.link.close()
            link = self.ctx.link = self.link_factory()
            try:
                await link.connect()
            except asyncio.CancelledError:  # the daemon stops: the new link must not outlive it
                await asyncio.shield(link.close())
                raise
            except LinkError:
                # the command fails, but the link must not stay dead (it gave up): keep
                # connecting, as at start, until it is back or replaced (bench/chaos.py)
                self._spawn(self._keep_connecting(link), "link-reconnect")
                raise
        finally:
            self._swapping = False

    async def _keep_connecting(self, link: FirmwarePort) -> None:
        delay = RECONNECT_MIN_S
        while self.ctx.link is link and not link.connected:
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)
            if self.ctx.link is not link:
                return
            try:
                await link.connect()
            except LinkClosedError:
                return
            except LinkError as exc:
                logger.warning("firmware: %s; retrying in %.1f s", exc, delay)
        if self.ctx.link is link:
            logger.info("firmware link back after a failed fresh session")
            self.ctx.publish_status()

    def _motors_running(self) -> bool:
        """Whether the job has the motors turning: executing, or a one-camera scan's (a
        rescan's, a check's) actions under way in another state."""
        return self.ctx.state is JobState.EXECUTING or self.pipeline.executor.running

    async def _abort_execution(self) -> None:
        """Stop gracefully: hold after the group in progress, then latch a stop (no face is left
        mid-turn), whatever the job's state while its motors run (cancelling a one-camera scan
        left its action running unjournaled, and the next job's execution refused). A job whose
        motors are not running is cancelled."""
        if not self._motors_running():
            if self.job_task is not None:
                self.job_task.cancel()
            return
        link = self.ctx.link
        try:
            await link.hold()
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                status = await link.status()
                if status.state is not FirmwareState.RUNNING:
                    break
                await asyncio.sleep(0.02)
            await link.estop()
        except LinkError as exc:
            logger.warning("abort: %s", exc)
            if not link.connected:  # the port is down: the stop is owed, sent first when back
                with contextlib.suppress(LinkError):
                    await link.estop()
