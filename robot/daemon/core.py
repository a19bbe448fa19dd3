"""The daemon: one asyncio ``TaskGroup`` around the rooms of :mod:`robot.daemon`.

Tasks of the group (named): ``mqtt`` (the bridge, when MQTT is on), ``firmware`` (connects the
link, with back-off, then recovers an unfinished job), ``job`` (at most one at a time),
``cmd-<verb>`` (one per command that takes time). CPU work — reading the cameras and the
colours, the solver's search — runs in threads (``asyncio.to_thread``); the journal has its own
writer thread. The loop never blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from firmware_protocol.errors import LinkError
from firmware_protocol.tasks import cancel_and_wait
from robot.config import RobotConfig
from robot.daemon.context import Context, Job, Outbox
from robot.daemon.events import ErrorCode, ErrorPayload, EventName, JobState, StatusPayload
from robot.daemon.intake import Intake, Payload, Reply
from robot.daemon.pipeline import Pipeline
from robot.daemon.ports import Cameras, EventSink, FirmwarePort, Listener, Solver
from robot.daemon.prepare import Prepare
from robot.daemon.recovery import Recovery
from robot.journal import JobRecord
from robot.journal_async import AsyncJournal
from robot.journal_guard import JournalProblem
from solver.api import solve as solver_solve

if TYPE_CHECKING:
    from robot.mqtt import MqttBridge

__all__ = ["Daemon"]

logger = logging.getLogger(__name__)


class Daemon:
    """One robot's daemon. Build it with the pieces (link, cameras, journal, and either an MQTT
    broker address or an event sink), then ``await run()``; ``submit(verb, payload)`` is the
    CLI's way in (MQTT commands go the same way)."""

    def __init__(
        self,
        config: RobotConfig,
        *,
        link: FirmwarePort,
        link_factory: Callable[[], FirmwarePort] | None = None,
        cameras: Cameras | None,
        journal: AsyncJournal,
        mqtt_host: str | None = None,
        mqtt_port: int = 1883,
        sink: EventSink | None = None,
        solver: Solver = solver_solve,
        sw_version: str = "",
        firmware_retry_s: float = 1.0,
        journal_problem: JournalProblem | None = None,
        prepare: Prepare | None = None,
    ) -> None:
        if mqtt_host is not None and sink is not None:
            raise ValueError("give the daemon an MQTT broker (mqtt_host) or a sink, not both")
        self.config = config
        self.sw_version = sw_version
        self.firmware_retry_s = firmware_retry_s
        self.mqtt: MqttBridge | None = None
        if mqtt_host is not None:
            from robot.mqtt import MqttBridge

            self.mqtt = MqttBridge(
                config, self._on_mqtt_command, host=mqtt_host, port=mqtt_port, sw_version=sw_version
            )
            sink = self.mqtt
        self.ctx = Context(config, link, journal, Outbox(sink))
        self.recovery = Recovery(self.ctx)
        self.pipeline = Pipeline(self.ctx, cameras, solver, self.recovery)
        self.intake = Intake(self.ctx, self.pipeline, link_factory)
        self.ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._journal_problem = journal_problem
        self._prepare = prepare
        self._progress_pending = False
        self._progress_at = 0.0

    # === what the CLI and the tests look at =======================================================

    @property
    def state(self) -> JobState:
        return self.ctx.state

    @property
    def job(self) -> Job | None:
        return self.ctx.job

    @property
    def link(self) -> FirmwarePort:
        return self.ctx.link

    @property
    def journal(self) -> AsyncJournal:
        return self.ctx.journal

    @property
    def resumable(self) -> JobRecord | None:
        return self.ctx.resumable

    @property
    def last_error(self) -> dict[str, Any] | None:
        error = self.ctx.last_error
        return None if error is None else dict(error)

    @property
    def listeners(self) -> list[Listener]:
        """Called with ``(name, payload)`` for the status (name ``"status"``) and each event."""
        return self.ctx.out.listeners

    @property
    def firmware_ready(self) -> asyncio.Event:
        return self.ctx.firmware_ready

    @property
    def job_done(self) -> asyncio.Event:
        """Set while no job runs."""
        return self.intake.job_done

    _job_done = job_done  # the name the CLI's demo waits on

    def status(self) -> StatusPayload:
        return self.ctx.status()

    async def submit(self, verb: str, payload: Payload = b"") -> Reply:
        """Run a command as if it came over MQTT; return its reply (after it completes)."""
        return await self.intake.submit(verb, payload)

    # === lifecycle ================================================================================

    async def run(self) -> None:
        """Run until :meth:`stop` (or cancellation)."""
        logger.info(
            "daemon %s starting: N=%d, %d motors, engine %s, cuberobot %s",
            self.config.robot.id,
            self.ctx.n,
            len(self.config.motors.faces),
            self.config.solver.engine,
            self.sw_version,
        )
        try:
            async with asyncio.TaskGroup() as group:
                self.intake.group = group
                if self.mqtt is not None:
                    group.create_task(self.mqtt.run(), name="mqtt")
                group.create_task(self.intake.serve(), name="intake")
                group.create_task(self._firmware(), name="firmware")
                group.create_task(self._watch_link(), name="link-watch")
                if self._prepare is not None:
                    self._begin_preparing(group)
                self._report_journal_problem()
                self.ctx.publish_status()
                self.ready.set()
                await self._stop.wait()
                await self._shutdown()
                raise _Stopped
        except* _Stopped:
            pass
        except* Exception as group:
            await self._last_words(group)
            raise
        finally:
            self.intake.group = None
            # a command's fresh session may have replaced the link after the shutdown closed
            # the one it knew (an abort still homing): none may outlive the daemon
            await asyncio.shield(self.ctx.link.close())

    def stop(self) -> None:
        self._stop.set()

    def _begin_preparing(self, group: asyncio.TaskGroup) -> None:
        """State PREPARING until the solver's tables are ready (``prepare`` in a thread, its
        progress in ``status.preparing``, at most a few updates a second); a job command sent
        meanwhile waits for it (its reply comes when the job starts)."""
        assert self._prepare is not None
        prepare = self._prepare
        loop = asyncio.get_running_loop()
        self.ctx.preparing = {"task": "", "done": 0, "total": 0}
        self.ctx.prepared.clear()
        self.ctx.state = JobState.PREPARING

        def progress(task: str, done: int, total: int) -> None:
            loop.call_soon_threadsafe(self._progress, task, done, total)

        async def run() -> None:
            started = time.monotonic()
            try:
                await asyncio.to_thread(prepare, progress)
                if self.pipeline.anytime is not None:  # its sessions' threads started too
                    await asyncio.to_thread(self.pipeline.anytime.warm)
                _freeze_heap()
            except Exception as exc:  # the first job would build them (and say why it fails)
                logger.error("preparing the solver tables failed: %s", exc)
                self.ctx.set_error(ErrorCode.INTERNAL, f"preparing the solver tables: {exc}")
            else:
                logger.info("solver tables ready in %.1f s", time.monotonic() - started)
            self.ctx.preparing = None
            self.ctx.set_state(JobState.IDLE)
            self.ctx.prepared.set()

        group.create_task(run(), name="prepare")

    def _progress(self, task: str, done: int, total: int) -> None:
        """Keep the latest progress; publish it at most every 0.25 s (never losing the last)."""
        if self.ctx.preparing is None:
            return
        self.ctx.preparing = {"task": task, "done": done, "total": total}
        if self._progress_pending:
            return
        self._progress_pending = True
        wait = max(0.0, self._progress_at + 0.25 - time.monotonic())
        asyncio.get_running_loop().call_later(wait, self._publish_progress)

    def _publish_progress(self) -> None:
        self._progress_pending = False
        self._progress_at = time.monotonic()
        if self.ctx.preparing is not None:
            self.ctx.publish_status()

    async def _watch_link(self, every_s: float = 0.1) -> None:
        """Republish the status the moment the firmware link goes or comes back (the link
        reconnects by itself; dashboards must not show a stale ``connected``)."""
        connected = self.ctx.link.connected
        while True:
            await asyncio.sleep(every_s)
            now = self.ctx.link.connected
            if now != connected:
                connected = now
                logger.info("firmware link %s", "back" if now else "lost")
                self.ctx.publish_status()

    async def _last_words(self, failure: ExceptionGroup[Exception]) -> None:
        """The daemon dies of an error: say so in the retained status and availability before
        the process exits (under systemd it is then restarted)."""
        causes = "; ".join(f"{type(e).__name__}: {e}" for e in failure.exceptions)
        if any(
            isinstance(e, (KeyboardInterrupt, asyncio.CancelledError)) for e in failure.exceptions
        ):
            causes = f"stopped ({causes})"
        logger.error("daemon %s stops on an error: %s", self.config.robot.id, causes)
        self.ctx.set_error(ErrorCode.INTERNAL, f"the daemon stopped: {causes}")
        status: dict[str, Any] = dict(self.ctx.status())
        status["firmware"] = {**self.ctx.status()["firmware"], "connected": False}
        if self.mqtt is not None:
            with contextlib.suppress(Exception):
                await self.mqtt.last_words(status)

    def _report_journal_problem(self) -> None:
        """Say, once as an event and in the status until a scan, that the journal was moved
        aside at start (robot.journal_guard)."""
        problem = self._journal_problem
        if problem is None:
            return
        self.ctx.journal_problem = {
            "problem": problem.message(),
            "quarantined": None if problem.quarantined is None else str(problem.quarantined),
        }
        self.ctx.set_error(ErrorCode.JOURNAL_CORRUPT, problem.message())
        self.ctx.out.event(
            EventName.ERROR, {"code": ErrorCode.JOURNAL_CORRUPT, "message": problem.message()}
        )

    async def _on_mqtt_command(self, verb: str, payload: bytes) -> None:
        await self.intake.on_mqtt_command(verb, payload)

    async def _shutdown(self) -> None:
        task = self.intake.job_task
        if task is not None and not task.done():
            with contextlib.suppress(Exception):
                await cancel_and_wait(task)
        if self.mqtt is not None:
            await self.mqtt.close()
        await self.ctx.link.close()

    async def _firmware(self) -> None:
        """Connect the link (retrying with back-off), then reconcile an unfinished job."""
        delay = self.firmware_retry_s
        while True:
            try:
                info = await self.ctx.link.connect()
                break
            except LinkError as exc:
                logger.warning("firmware: %s; retrying in %.1f s", exc, delay)
                unavailable: ErrorPayload = {
                    "code": ErrorCode.FIRMWARE_UNAVAILABLE,
                    "message": str(exc),
                }
                self.ctx.out.event(EventName.ERROR, unavailable)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
        logger.info(
            "firmware %s on %s: boot %08x, %d motors, executed counter %d",
            info.firmware_version,
            info.port,
            info.boot_id,
            info.motor_count,
            info.last_executed,
        )
        await self.recovery.recover()
        self.ctx.firmware_ready.set()
        self.ctx.publish_status()


class _Stopped(Exception):
    """Raised inside the task group to end :meth:`Daemon.run`."""


def _freeze_heap() -> None:
    """Keep what exists once the tables and search sessions are ready (modules, tables,
    configuration: it lives as long as the daemon) out of the garbage collector's full
    passes. A full pass holds the GIL, so the event loop, for as long as it walks every
    object: 45-180 ms (48 000 objects, load 3-8) in the middle of a job (once in 15-40 jobs
    of ``bench/time_to_solved.py``), longer than the lead of an anytime commit. Frozen, a full
    pass walks only what was made since."""
    gc.collect()
    gc.freeze()
    logger.debug("%d objects kept out of the collector's full passes", gc.get_freeze_count())
