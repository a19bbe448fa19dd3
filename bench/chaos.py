"""Chaos campaign: whole jobs on the simulated robot under a random schedule of faults.

    python bench/chaos.py [--trials 40] [--seed 2026] [--speed 4] [--json] [--verbose]
                          [--profile simulated]

``--profile`` names the robot (a bundled profile or a profile file; default the bundled
``simulated`` six-motor robot): its kind, mechanism, cameras and cube size, with the campaign's
settings below laid over it. Each trial (one seed) scrambles the virtual cube at random and
draws a schedule of faults from what the simulated robot can do:

* on the serial line (the simulated firmware's fault spec, ``[simulation] faults``): bit
  ``flip``, byte ``drop``, frame ``dup``, line ``delay``; a firmware ``reset`` halfway through a
  move (in :data:`WIPE_SHARE` of them losing its non-volatile memory: ``wipe``), a motor
  ``stall``, the port vanishing (``vanish``, sometimes for longer than the link's
  reconnect budget);
* from outside the line: a ``forge``d frame with a valid CRC (counters past what the host
  sent, counters out of order, a boot id that changed; an EXECUTED two moves ahead of the
  motors, within what the host sent, which only a later STATUS can deny; or a STATUS two moves
  behind, a forged denial of moves that ran), a daemon ``kill`` mid-job and a restart from
  the journal, an ``estop`` or an ``abort`` at a random moment (once the firmware executed a
  drawn number of moves, or while the first job scans and solves).

Then it drives the job to its end as an operator would: ``home`` when the motors are stopped or
faulted, ``resume`` (with or without ``rescan``, at random; with it when the status asks) when
the status has a resumable job, ``start`` again after an abort or a refusal (after
``parts_unknown``, with the parts set to their start pose by hand and ``"start_pose": true``),
until the daemon says ``done`` or refuses twice in a row with a code of docs/daemon.md.

Everything is real but the motors and the process boundary: the daemon with its journal (in a
RAM folder), the firmware link over a pseudo-terminal, the simulated firmware turning a virtual
cube, the simulated cameras rendering it and the real vision reading them. The daemon runs in
this process: a kill cancels its task group, drops every journal write not yet started (as a
SIGKILL would: what SQLite committed stays) and closes its serial ports without a word to the
firmware; the restart is a new daemon on the same journal and port.

Invariants checked on every trial (a violation is printed with the trial's seed):

* ``done_unsolved``: a ``done`` event with ``solved: true`` while the virtual cube is not solved;
* ``journal``: the journal's executed moves (every job, by firmware index) are not exactly the
  moves the simulated firmware executed (its own record), but for the last moves run before a
  reset that lost the firmware's counters (``wipe``) whose reports reached no live daemon (the
  port gone, the daemon killed): those are unknowable, and left out when a scan began after
  the wipe before the motors moved again;
* ``no_guidance``: a job ended without ``done`` and the status has neither a resumable job nor
  an error code of docs/daemon.md;
* ``stuck``: following the status did not end with a solved cube or a clear refusal within
  :data:`MAX_STEPS` operator steps (or a step hung);
* ``traceback``: a log record carries a traceback (``logger.exception``, an unretrieved task
  exception);
* ``estop_slow``: the firmware got the emergency stop later than :data:`ESTOP_BOUND_S` after
  the command (plus the line's injected delay, two repeats when the line loses bytes, and the
  firmware's boot time and a repeat when it was rebooting after a reset: it hears nothing
  then, and its motors are still);
* ``stop_slow``: an ``estop`` or ``abort`` was not answered, or the job it stopped had not
  ended, within :data:`STOP_BOUND_S` (plus the longest vanished port of the trial);
* ``link_leak``: a firmware link a daemon made is still open after the daemon stopped (it
  would hold the port and reconnect for ever);
* ``mechanism``: the simulated mechanism of a one-camera robot refused a motion the machine
  cannot make (a flip against the closed cover, a turntable past its range, a dropped cube):
  the daemon lost track of the parts;
* ``no_restart``: a daemon did not start, or did not reach its firmware, within
  :data:`RESTART_BOUND_S`, or its task ended with an exception.

Table: trials, faults by kind (drawn / fired), outcomes, operator steps, violations by kind, the
e-stop latencies; ``--json``: one object with the same and a row per trial.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

# Run as a script, this file's folder comes first on sys.path and bench/vision.py would shadow
# the `vision` package: drop that entry, put the checkout's root there.
_HERE = Path(__file__).resolve().parent
# (bench/'s own helper module first, while bench/ is still on sys.path)
import _args  # noqa: E402

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
if str(_HERE.parent) not in sys.path:
    sys.path.insert(0, str(_HERE.parent))

from firmware_protocol.link import FirmwareLink  # noqa: E402
from firmware_protocol.messages import Executed, FirmwareState  # noqa: E402
from firmware_protocol.sim import SimulatedFirmware  # noqa: E402
from firmware_protocol.sim.board import MoveRecord as FirmwareMove  # noqa: E402
from robot.bundled import load_profile  # noqa: E402
from robot.cameras import CameraRig  # noqa: E402
from robot.config import RobotConfig  # noqa: E402
from robot.config_sections import SPEED_FACTOR_MAX, SPEED_FACTOR_MIN  # noqa: E402
from robot.daemon import Daemon, JobState, link_config  # noqa: E402
from robot.daemon.events import ErrorCode  # noqa: E402
from robot.errors import ConfigError  # noqa: E402
from robot.journal import Journal  # noqa: E402
from robot.journal_async import AsyncJournal  # noqa: E402
from robot.journal_guard import open_journal  # noqa: E402
from robot.kinds.simulated import MechanismCube  # noqa: E402
from robot.simrobot import SimulatedRobot  # noqa: E402
from solver.cube.facelets import Cube  # noqa: E402
from solver.scramble import random_moves  # noqa: E402

T = TypeVar("T")

#: how many commands the operator sends after the first before the trial counts as stuck
MAX_STEPS = 10
#: a job (or a command) that takes longer than this has hung
STEP_TIMEOUT_S = 90.0
#: a daemon must be running and talking to its firmware this soon after it starts
RESTART_BOUND_S = 20.0
#: from the estop command to the firmware stopping (tests/robot/test_daemon_safety.py's bound)
ESTOP_BOUND_S = 0.050
#: from an estop or abort to its reply and the end of the job it stopped (plus any vanish)
STOP_BOUND_S = 3.0

LINE_KINDS = ("flip", "drop", "dup", "delay")
MOVE_KINDS = ("reset", "stall", "vanish")
OUTSIDE_KINDS = ("forge", "kill", "estop", "abort")
KINDS = LINE_KINDS + MOVE_KINDS + OUTSIDE_KINDS
#: forged frames (valid CRC): what the host must not believe
FORGERIES = ("executed_far", "status_far", "out_of_order", "boot_id", "executed_ahead")
#: a STATUS whose counters lag two moves behind the truth (a forged denial of what ran): drawn
#: apart from the seed's own stream (:data:`BEHIND_SHARE` of the forgeries), so that every
#: earlier seed keeps its schedule
BEHIND_SHARE = 0.15
#: resets that also lose the firmware's non-volatile memory (its counters back at zero): drawn
#: apart from the seed's own stream, as :data:`BEHIND_SHARE` (from a stream that leaves the
#: seeds of tests/robot/test_chaos.py with their recorded resets)
WIPE_SHARE = 0.3
#: codes after which the cube is left as it is and the operator may try again (a refusal); and
#: ``no_calibration``, which names the profile, not the cube (a camera with no sticker map):
#: every start meets it again, so it is a clear refusal too, not a trial that is stuck
REFUSALS = frozenset(
    {
        ErrorCode.SCAN_INVALID,
        ErrorCode.SCAN_FAILED,
        ErrorCode.SCAN_REFUSED,
        ErrorCode.SOLVE_FAILED,
        ErrorCode.NOT_SOLVED,
        ErrorCode.NO_CALIBRATION,
    }
)

logger = logging.getLogger("bench.chaos")


def documented_codes(docs: Path) -> frozenset[str]:
    """The error codes of docs/daemon.md's table (one row per code)."""
    text = docs.read_text(encoding="utf-8")
    table = text.split("### Error codes", 1)[1].split("\n\n**", 1)[0]
    return frozenset(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE))


# === the schedule =================================================================================


@dataclass
class Schedule:
    """A trial's scramble and faults, all drawn from its seed."""

    seed: int
    scramble: str
    spec: str
    kinds: list[str]
    #: when each outside fault strikes: once the firmware executed this many moves (kind ->
    #: moves), then ``jitter`` seconds later (mid-move)
    at: dict[str, int] = field(default_factory=dict)
    jitter: dict[str, float] = field(default_factory=dict)
    forgery: str = ""
    #: the operator's choices: resume with rescan even when not asked
    rescan_bias: float = 0.3


def draw(seed: int, pool: tuple[str, ...] = KINDS) -> Schedule:
    """The schedule of trial ``seed``: one to four fault kinds drawn from ``pool``."""
    rng = random.Random(seed)
    scramble = " ".join(str(m) for m in random_moves(3, 20, seed=seed))
    count = min(len(pool), rng.choice((1, 2, 2, 3, 3, 4)))
    kinds = sorted(rng.sample(pool, count), key=KINDS.index)
    spec: list[str] = []
    if "flip" in kinds:
        spec.append(f"flip={rng.uniform(1e-4, 2e-3):.2g}")
    if "drop" in kinds:
        spec.append(f"drop={rng.uniform(1e-4, 1e-3):.2g}")
    if "dup" in kinds:
        spec.append(f"dup={rng.uniform(0.01, 0.05):.2g}")
    if "delay" in kinds:
        spec.append(f"delay={rng.uniform(0.02, 0.1):.2g}:{rng.randint(5, 60)}")
    if "reset" in kinds:
        at = rng.randint(1, 22)
        wipe = random.Random(f"nv {seed}").random() < WIPE_SHARE
        spec.append(f"{'wipe' if wipe else 'reset'}@{at}")
    if "stall" in kinds:
        spec.append(f"stall={rng.choice('URFDLB')}@{rng.randint(1, 22)}")
    if "vanish" in kinds:
        spec.append(f"vanish@{rng.randint(1, 22)}:{rng.choice((150, 400, 900, 1800))}")
    schedule = Schedule(seed, scramble, ",".join(spec), kinds)
    for kind in OUTSIDE_KINDS:
        if kind in kinds:  # after this many moves executed (0: while scanning or solving)
            schedule.at[kind] = rng.choice((0, rng.randint(1, 18), rng.randint(1, 18)))
            schedule.jitter[kind] = rng.uniform(0.0, 0.4 if schedule.at[kind] == 0 else 0.06)
    if "forge" in kinds:
        schedule.forgery = rng.choice(FORGERIES)
        if random.Random(f"behind {seed}").random() < BEHIND_SHARE:
            schedule.forgery = "status_behind"
    schedule.rescan_bias = rng.choice((0.0, 0.5, 1.0))
    return schedule


# === the pieces around the daemon ==============================================================


class KillableJournal(AsyncJournal):
    """An :class:`AsyncJournal` that a kill freezes: every call not yet started on its
    thread is dropped, as a SIGKILL would drop it."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self.killed = False

    async def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        if self.killed:  # the process is dead: nothing more happens (a cleanup that writes
            raise asyncio.CancelledError  # on its way out is cancelled again)
        loop = asyncio.get_running_loop()

        def run() -> T:
            if self.killed:
                raise _Killed
            return fn(*args, **kwargs)

        return await loop.run_in_executor(self._pool, run)

    async def close_after_kill(self) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            await loop.run_in_executor(self._pool, self.sync.close)
        self._pool.shutdown(wait=True)


class _Killed(Exception):
    """A journal write after the kill (never seen by the daemon: it is cancelled first)."""


class Sink:
    """The daemon's event sink: keeps the events with the virtual cube as it was then."""

    def __init__(self, cube: Callable[[], Cube]) -> None:
        self._cube = cube
        self.events: list[tuple[str, dict[str, Any], bool]] = []
        self.statuses = 0
        #: when (the loop's clock) each status saying ``scanning`` was published
        self.scans: list[float] = []

    def publish_status(self, status: dict[str, Any]) -> None:
        self.statuses += 1
        if status.get("state") == JobState.SCANNING:
            self.scans.append(asyncio.get_running_loop().time())

    def publish_event(
        self, name: str, payload: dict[str, Any], on_delivered: Callable[[], None] | None = None
    ) -> None:
        self.events.append((name, payload, self._cube().is_solved()))
        if on_delivered is not None:
            on_delivered()

    def reply(self, verb: str, payload: dict[str, Any]) -> None:
        pass


class TracebackCatcher(logging.Handler):
    """Keeps every log record that carries a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Traceback (most recent call last)" in record.getMessage():
            self.records.append(f"{record.name}: {record.getMessage()[:200]}")


# === one trial ===================================================================================


@dataclass
class TrialResult:
    seed: int
    scramble: str
    spec: str
    kinds: list[str]
    fired: list[str]
    outcome: str  # solved | refused | stuck
    steps: list[str]
    violations: list[str]
    estop_ms: float | None
    wall_s: float
    job_s: list[float]
    daemons: int
    final_code: str | None = None

    def row(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Trial:
    def __init__(
        self,
        schedule: Schedule,
        folder: Path,
        speed: float,
        codes: frozenset[str],
        profile: str = "simulated",
    ):
        self.s = schedule
        self.folder = folder
        self.codes = codes
        self.rng = random.Random(schedule.seed ^ 0xC4A05)
        self.config = campaign_config(schedule.spec, speed, profile)
        start = Cube.solved(self.config.robot.cube_size).apply(schedule.scramble)
        self.robot = SimulatedRobot(self.config, start, seed=schedule.seed)
        self.fw: SimulatedFirmware = self.robot.firmware
        self.sink = Sink(self.robot.cube_state)
        self.violations: list[str] = []
        self.fired: list[str] = []
        self.steps: list[str] = []
        self.daemons = 0
        self.daemon: Daemon | None = None
        self.task: asyncio.Task[None] | None = None
        self.journal: KillableJournal | None = None
        self.links: list[FirmwareLink] = []
        #: every link any daemon of the trial made: none may be open once it stopped
        self.all_links: list[FirmwareLink] = []
        self.estop_sent: float | None = None
        self.estop_seen: float | None = None
        self.estop_link_up = False
        self.resets_at: list[float] = []
        #: when (the loop's clock, as the firmware's records) each reset that lost the
        #: firmware's counters (``wipe``) struck
        self.wipes_at: list[float] = []
        self.port = ""
        self.restarting = False
        self.generation = 0
        #: how long the operator waited for each job (or attempt) to end
        self.job_s: list[float] = []

    # --- daemon lives ---------------------------------------------------------------------------

    async def start_daemon(self) -> None:
        sync, problem = open_journal(self.folder / "journal.sqlite")
        if problem is not None:
            self.violations.append(f"journal_problem: {problem.message()}")
        self.journal = KillableJournal(sync)
        links: list[FirmwareLink] = []
        self.links = links

        def make_link() -> FirmwareLink:
            link = FirmwareLink(self.port, config=link_config(self.config))
            links.append(link)
            self.all_links.append(link)
            return link

        self.daemon = Daemon(
            self.config,
            link=make_link(),
            link_factory=make_link,
            cameras=CameraRig(self.config, self.robot.cube_state, seed=self.s.seed),
            journal=self.journal,
            sink=self.sink,
            firmware_retry_s=0.05,
        )
        self.daemons += 1
        self.task = asyncio.create_task(self.daemon.run(), name=f"chaos-daemon-{self.daemons}")
        try:
            async with asyncio.timeout(RESTART_BOUND_S):
                await self.daemon.ready.wait()
                await self.daemon.firmware_ready.wait()
        except TimeoutError:
            self.violations.append(f"no_restart: daemon {self.daemons} not ready")
            raise

    async def kill(self) -> None:
        """The daemon dies at once: no journal write, no word to the firmware."""
        assert self.task is not None and self.journal is not None
        self.fired.append("kill")
        self.journal.killed = True
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        for link in self.links:
            await link.close()
        await self.journal.close_after_kill()
        self.task = None

    async def stop_daemon(self) -> None:
        if self.task is None or self.daemon is None or self.journal is None:
            return
        self.daemon.stop()
        try:
            await asyncio.wait_for(self.task, 20)
        except Exception as exc:  # the run ended with an error: a violation
            self.violations.append(f"no_restart: daemon ended with {exc!r}")
        await self.journal.close()
        self.task = None

    def check_daemon_alive(self) -> None:
        if self.task is not None and self.task.done():
            exc = self.task.exception() if not self.task.cancelled() else None
            self.violations.append(f"no_restart: daemon task ended ({exc!r})")
            raise _Stuck("the daemon died")

    # --- outside faults -----------------------------------------------------------------------

    def forge(self) -> None:
        """A frame with a valid CRC that lies (sent on the firmware's own line)."""
        fw, nv = self.fw, self.fw.nv
        self.fired.append("forge")
        kind = self.s.forgery
        if kind == "executed_far":
            message: Any = Executed(nv.last_received + 1000, nv.last_received + 1000, 3)
        elif kind == "executed_ahead":  # within what the host sent, but not run (yet)
            ahead = min(nv.last_executed + 2, nv.last_received)
            message = Executed(ahead, max(ahead, nv.started_upto), 3)
        elif kind == "out_of_order":
            message = Executed(nv.last_executed + 1, max(0, nv.last_executed - 1), 3)
        else:
            real = fw._status()
            if kind == "status_behind":
                lag = min(2, real.last_executed)
                message = dataclasses.replace(
                    real,
                    started_upto=real.started_upto - lag,
                    last_executed=real.last_executed - lag,
                )
            elif kind == "status_far":
                message = dataclasses.replace(
                    real,
                    last_received=real.last_received + 500,
                    started_upto=real.started_upto + 500,
                    last_executed=real.last_executed + 500,
                )
            else:  # boot_id: a STATUS of a firmware that reset, which it did not
                message = dataclasses.replace(real, boot_id=(real.boot_id + 1) & 0xFFFFFFFF)
        fw._send(message)

    async def estop_or_abort(self, verb: str) -> None:
        assert self.daemon is not None
        self.fired.append(verb)
        if verb == "estop":
            self.estop_link_up = self.daemon.link.connected and self.fw.state in (
                FirmwareState.RUNNING,
                FirmwareState.HOLD,
            )
            self.estop_sent = time.perf_counter()
        self.steps.append(verb)
        daemon = self.daemon
        running = not daemon.job_done.is_set()
        stopped = daemon.job
        began = time.monotonic()
        bound = STOP_BOUND_S + max((ms for _, ms in self.fw.faults.vanish), default=0.0) / 1e3
        try:
            await asyncio.wait_for(daemon.submit(verb, {}), bound)
            if running:
                # the job it stopped: the operator may start the next one meanwhile (waiting
                # for that one's end counted its whole scan as the stop's time)
                async with asyncio.timeout(bound):
                    while daemon.job is stopped and not daemon.job_done.is_set():
                        await asyncio.sleep(0.005)
        except TimeoutError:
            pass
        took = time.monotonic() - began
        if took > bound and (running or not daemon.job_done.is_set()):
            self.violations.append(f"stop_slow: {verb} took {took:.1f} s > {bound:.1f} s")

    def watch_estop(self) -> None:
        original = self.fw._estop

        def estop() -> None:
            if self.estop_sent is not None and self.estop_seen is None:
                self.estop_seen = time.perf_counter()
            original()

        self.fw._estop = estop  # type: ignore[method-assign]
        reset = self.fw.reset

        def reset_at(wipe: bool = False) -> None:
            self.resets_at.append(time.perf_counter())
            if wipe:
                self.wipes_at.append(asyncio.get_running_loop().time())
            reset(wipe)

        self.fw.reset = reset_at  # type: ignore[method-assign]

    async def outside_faults(self) -> None:
        """The kill, e-stop, abort and forged frame, each at its moment: once the firmware has
        executed ``at`` moves (whatever job runs them), ``jitter`` seconds later."""
        for kind, at in sorted(self.s.at.items(), key=lambda item: item[1]):
            while self.fw.nv.last_executed < at or self.daemon is None:
                await asyncio.sleep(0.003)
            await asyncio.sleep(self.s.jitter[kind])
            if kind == "forge":
                self.forge()
            elif kind == "kill":
                self.restarting = True
                try:
                    await self.kill()
                    await self.start_daemon()
                finally:
                    self.restarting = False
                    self.generation += 1
            else:
                await self.estop_or_abort(kind)

    # --- the operator -------------------------------------------------------------------------

    async def submit(self, verb: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Send a command; its reply, or None when the daemon was killed meanwhile."""
        self.steps.append(verb + (" rescan" if payload.get("rescan") else ""))
        generation = self.generation
        while self.restarting:
            await asyncio.sleep(0.01)
        assert self.daemon is not None
        sending = asyncio.ensure_future(self.daemon.submit(verb, payload))
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not sending.done():
            if self.restarting or self.generation != generation:
                sending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sending
                self.steps[-1] += " -> killed"
                return None
            if time.monotonic() > deadline:
                raise TimeoutError(f"{verb}: no reply in {STEP_TIMEOUT_S} s")
            await asyncio.sleep(0.01)
        reply = dict(sending.result())
        if not reply.get("ok"):
            code = reply.get("error", {}).get("code")
            self.steps[-1] += f" -> {code}"
            if code not in self.codes:
                self.violations.append(f"no_guidance: {verb} replied with code {code!r}")
        return reply

    async def wait_job(self) -> None:
        """Until no job runs (a kill meanwhile: on the daemon that restarted)."""
        busy = (JobState.SCANNING, JobState.VALIDATING, JobState.SOLVING, JobState.EXECUTING)
        began = time.monotonic()
        try:
            await self._wait_job(busy)
        finally:
            self.job_s.append(round(time.monotonic() - began, 2))

    async def _wait_job(self, busy: tuple[JobState, ...]) -> None:
        async with asyncio.timeout(STEP_TIMEOUT_S):
            while True:
                await asyncio.sleep(0.02)
                if self.restarting:
                    continue
                self.check_daemon_alive()
                daemon = self.daemon
                assert daemon is not None
                if daemon.job_done.is_set() and daemon.state not in busy:
                    return

    async def operate(self) -> tuple[str, str | None]:
        """Start, then follow the status until solved or refused; return (outcome, code)."""
        await self.submit("start", {})
        refusals = 0
        for _ in range(MAX_STEPS):
            await self.wait_job()
            assert self.daemon is not None
            status: dict[str, Any] = dict(self.daemon.status())
            state = status["state"]
            error = status.get("error") or {}
            code = error.get("code")
            resumable = status.get("resumable")
            if state == JobState.DONE and resumable is None:
                done = [e for e in self.sink.events if e[0] == "done"]
                if done and done[-1][1].get("solved"):
                    return "solved", None
            if state == JobState.IDLE and resumable is None:
                # a daemon killed before its job reached the motors restarts IDLE (the job
                # closed as interrupted, `recovered` said not resumable): start again
                await self.submit("start", {})
                continue
            if resumable is None and code not in self.codes:
                self.violations.append(f"no_guidance: state {state}, error {error!r}")
                return "stuck", code
            if self.fw.state in (FirmwareState.STOPPED, FirmwareState.FAULT):
                reply = await self.submit("home", {})
                if reply is None or not reply.get("ok"):
                    continue
            if code == ErrorCode.PARTS_UNKNOWN and isinstance(self.robot.cube, MechanismCube):
                self.robot.cube.set_start_pose()  # by hand, as the refusal says
                await self.submit("start", {"start_pose": True})
                continue
            if resumable is not None:
                rescan = (
                    bool(resumable.get("needs_rescan")) or self.rng.random() < self.s.rescan_bias
                )
                await self.submit("resume", {"rescan": True} if rescan else {})
                continue
            if code in REFUSALS:
                refusals += 1
                if refusals >= 2:
                    return "refused", code
            await self.submit("start", {})
        return "stuck", None

    # --- the invariants -----------------------------------------------------------------------

    async def check_journal(self) -> None:
        """The journal's executed moves are exactly the firmware's executed moves.

        Each side is keyed by (epoch, firmware index) in execution order: a reset that lost the
        firmware's non-volatile memory (``wipe``) starts its move indices at 1 again, so an
        index that does not grow starts a new epoch."""
        journal = Journal(self.folder / "journal.sqlite")
        try:
            reversed_faces = {
                face.name
                for face in self.config.motors.faces
                if (motor := self.config.motors.motor_of(face)) is not None and motor.reversed
            }
            rows: list[tuple[float, int, tuple[int, int, int]]] = []
            for job in reversed(journal.jobs(limit=1000)):  # oldest first
                for move in journal.moves(job.id):
                    if move.executed_at is None or move.fw_index is None:
                        continue
                    turns = -move.turns if move.face in reversed_faces else move.turns
                    rows.append(
                        (move.executed_at, move.fw_index, (move.motor, turns % 4, move.depth))
                    )
        finally:
            journal.close()
        rows.sort(key=lambda row: row[0])  # stable: a job's moves keep their order
        journaled = _by_epoch([(i, v) for _, i, v in rows])
        records = sorted(
            (r for r in self.fw.records if r.outcome == "executed"),
            key=lambda r: r.finished_at or 0.0,
        )
        moves = [(r.index, (r.motor, r.quarter_turns % 4, r.depth)) for r in records]
        executed = _by_epoch(moves)
        if journaled != executed:
            executed = self._lost_with_the_counters(records, moves, journaled) or executed
        if journaled != executed:
            only_j = sorted(set(journaled) - set(executed))
            only_f = sorted(set(executed) - set(journaled))
            differ = sorted(
                i for i in set(journaled) & set(executed) if journaled[i] != executed[i]
            )
            self.violations.append(
                f"journal: journaled not executed {only_j[:8]}, executed not journaled "
                f"{only_f[:8]}, different {differ[:8]}"
            )

    def _lost_with_the_counters(
        self,
        records: list[FirmwareMove],
        moves: list[tuple[int, tuple[int, int, int]]],
        journaled: dict[tuple[int, int], tuple[int, int, int]],
    ) -> dict[tuple[int, int], tuple[int, int, int]] | None:
        """The firmware's executed moves (``records``, ``moves``: in execution order) without
        those no daemon could journal: the last ones it ran before a reset that lost its
        counters (``wipe``) whose reports never reached a live daemon (the port was gone, the
        daemon was killed). After the wipe the firmware cannot say whether they ran, so they
        are left out only when the daemon did not trust its count either: a scan began after
        the wipe and before the motors moved again. The fewest such moves that make both
        sides agree; None when no count does (or no wipe was followed by a scan)."""
        earlier = -math.inf
        for wiped in self.wipes_at:
            before = [
                i
                for i, r in enumerate(records)
                if r.finished_at is not None and earlier < r.finished_at <= wiped
            ]
            next_start = min(
                (
                    r.started_at if r.started_at is not None else r.finished_at
                    for r in records
                    if r.finished_at is not None and r.finished_at > wiped
                ),
                default=math.inf,
            )
            earlier = wiped
            if not any(wiped < scan <= next_start for scan in self.sink.scans):
                continue
            for count in range(1, len(before) + 1):
                lost = set(before[-count:])
                kept = _by_epoch([m for i, m in enumerate(moves) if i not in lost])
                if kept == journaled:
                    return kept
        return None

    def check_events(self) -> None:
        for name, payload, solved in self.sink.events:
            if name == "done" and payload.get("solved") and not solved:
                self.violations.append(f"done_unsolved: job {payload.get('job_id')}")

    def check_mechanism(self) -> None:
        cube = self.robot.cube
        refused = cube.faults if isinstance(cube, MechanismCube) else 0  # one-camera robots
        if refused:
            self.violations.append(
                f"mechanism: the simulated mechanism refused {refused} motion(s) the machine "
                "cannot make (its log says which)"
            )

    def check_estop(self) -> float | None:
        if self.estop_sent is None or self.estop_seen is None:
            return None
        latency = self.estop_seen - self.estop_sent
        bound = ESTOP_BOUND_S
        spec = self.s.spec
        if "delay" in spec:
            bound += float(spec.split("delay=", 1)[1].split(":", 1)[1].split(",", 1)[0]) / 1e3
        if "flip" in spec or "drop" in spec:
            bound += 0.05 + 0.1  # the ESTOP lost once or twice: repeated after 50 ms, then 100
        boot_s = self.fw.config.boot_time_s
        if any(self.estop_sent - boot_s <= at <= self.estop_seen for at in self.resets_at):
            bound += boot_s + 0.05  # a firmware booting hears nothing: the ESTOP's repeat does
        if self.estop_link_up and latency > bound:
            self.violations.append(f"estop_slow: {latency * 1e3:.1f} ms > {bound * 1e3:.0f} ms")
        return latency * 1e3

    # --- the whole trial ----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Daemon]:
        """The robot and a daemon on it, for a test that drives the daemon itself: both stop
        when the block ends, and then, if it ended without an error, the journal's check runs
        (its violations in :attr:`violations`)."""
        self.port = await self.robot.start()
        try:
            await self.start_daemon()
            assert self.daemon is not None
            yield self.daemon
        finally:
            await self.stop_daemon()
            await self.robot.stop()
        await self.check_journal()

    async def run(self) -> TrialResult:
        began = time.monotonic()
        outcome, code = "stuck", None
        self.port = await self.robot.start()
        self.watch_estop()
        outside: asyncio.Task[None] | None = None
        try:
            await self.start_daemon()
            outside = asyncio.create_task(self.outside_faults(), name="chaos-outside")
            outcome, code = await self.operate()
        except (TimeoutError, _Stuck) as exc:
            self.violations.append(f"stuck: {exc!r} after {self.steps}")
        finally:
            if outside is not None and not outside.done():
                outside.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await outside
            await self.stop_daemon()
            leaked = [link for link in self.all_links if not link._closed]
            if leaked:
                self.violations.append(f"link_leak: {len(leaked)} link(s) open after the stop")
                for link in leaked:
                    await link.close()
            await self.robot.stop()
        if outcome == "stuck" and not any(v.startswith("stuck") for v in self.violations):
            self.violations.append(f"stuck: no end after {self.steps}")
        await self.check_journal()
        self.check_events()
        if outcome == "solved" and not self.robot.cube_state().is_solved():
            self.violations.append("done_unsolved: the trial ended solved, the cube is not")
        self.check_mechanism()
        fired = list(self.fired)
        for kind in LINE_KINDS:
            if kind in self.s.kinds:
                fired.append(kind)
        fired += [kind for kind in MOVE_KINDS if kind in self.s.kinds and self._fired(kind)]
        return TrialResult(
            seed=self.s.seed,
            scramble=self.s.scramble,
            spec=self.s.spec or "none",
            kinds=self.s.kinds,
            fired=sorted(set(fired), key=KINDS.index),
            outcome=outcome,
            steps=self.steps,
            violations=self.violations,
            estop_ms=self.check_estop(),
            wall_s=round(time.monotonic() - began, 2),
            job_s=self.job_s,
            daemons=self.daemons,
            final_code=code,
        )

    def _fired(self, kind: str) -> bool:
        names = ("reset", "wipe") if kind == "reset" else (kind,)
        return any(name in names for name, _ in self.fw._fired)


def _by_epoch(
    moves: list[tuple[int, tuple[int, int, int]]],
) -> dict[tuple[int, int], tuple[int, int, int]]:
    """``moves`` (firmware index, move) in execution order, keyed by (epoch, index): an index
    at or below the one before starts an epoch (the counters were lost; a journal that has
    an index twice splits where the firmware does not, and the two differ)."""
    out: dict[tuple[int, int], tuple[int, int, int]] = {}
    epoch, last = 0, 0
    for index, move in moves:
        if index <= last:
            epoch += 1
        last = index
        out[(epoch, index)] = move
    return out


class _Stuck(Exception):
    pass


def campaign_config(spec: str, speed: float, profile: str = "simulated") -> RobotConfig:
    """The robot of ``profile`` (a bundled name or a profile file) with small camera frames,
    the first solution found, shorter link budgets (so that a long vanish loses the link), and
    the trial's fault spec."""
    base = load_profile(profile)
    if base.simulation is None:
        raise ConfigError('the chaos campaign runs a simulated robot: [serial] url = "sim"')
    cameras = [c.model_copy(update={"width": 320, "height": 240}) for c in base.cameras]
    return base.model_copy(
        update={
            "cameras": cameras,
            "solver": base.solver.model_copy(update={"budget_s": 0.0}),
            "serial": base.serial.model_copy(
                update={"reconnect_budget_s": 1.0, "resume_wait_s": 5.0, "resume_drain_s": 10.0}
            ),
            "simulation": base.simulation.model_copy(
                update={"faults": spec, "speed_factor": speed}
            ),
        }
    )


async def run_trial(
    seed: int,
    speed: float,
    codes: frozenset[str],
    log_dir: Path | None = None,
    pool: tuple[str, ...] = KINDS,
    profile: str = "simulated",
) -> TrialResult:
    """One trial; with ``log_dir``, its log (INFO and above) in ``seed-<seed>.log`` there."""
    schedule = draw(seed, pool)
    catcher = TracebackCatcher()
    root = logging.getLogger()
    handlers: list[logging.Handler] = [catcher]
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_dir / f"seed-{seed}.log", mode="w")
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        handlers.append(file_handler)
    for handler in handlers:
        root.addHandler(handler)
    try:
        with tempfile.TemporaryDirectory(prefix="cuberobot-chaos-", dir=_ram()) as folder:
            trial = Trial(schedule, Path(folder), speed, codes, profile)
            result = await trial.run()
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
    result.violations += [f"traceback: {record}" for record in catcher.records]
    return result


def _ram() -> str | None:
    return "/dev/shm" if Path("/dev/shm").is_dir() else None


# === the campaign ================================================================================


def summary(results: list[TrialResult]) -> dict[str, Any]:
    drawn = Counter(k for r in results for k in r.kinds)
    fired = Counter(k for r in results for k in r.fired)
    outcomes = Counter(r.outcome for r in results)
    violations = Counter(v.split(":", 1)[0] for r in results for v in r.violations)
    estops = [r.estop_ms for r in results if r.estop_ms is not None]
    steps = [len(r.steps) for r in results]
    return {
        "trials": len(results),
        "faults_drawn": {k: drawn.get(k, 0) for k in KINDS},
        "faults_fired": {k: fired.get(k, 0) for k in KINDS},
        "outcomes": dict(outcomes),
        "final_codes": dict(Counter(r.final_code for r in results if r.final_code)),
        "violations": dict(violations),
        "violating_seeds": [r.seed for r in results if r.violations],
        "operator_steps_mean": round(statistics.mean(steps), 2) if steps else 0,
        "daemons_started": sum(r.daemons for r in results),
        "estop_ms_median": round(statistics.median(estops), 2) if estops else None,
        "estop_ms_max": round(max(estops), 2) if estops else None,
        "wall_s": round(sum(r.wall_s for r in results), 1),
    }


def print_table(data: dict[str, Any], results: list[TrialResult], out: Any) -> None:
    print(f"trials {data['trials']}  daemons started {data['daemons_started']}  "
          f"wall {data['wall_s']} s", file=out)  # fmt: skip
    print(f"{'fault':<8} {'drawn':>6} {'fired':>6}", file=out)
    for kind in KINDS:
        print(
            f"{kind:<8} {data['faults_drawn'][kind]:>6} {data['faults_fired'][kind]:>6}", file=out
        )
    print(
        "outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(data["outcomes"].items())), file=out
    )
    if data["final_codes"]:
        codes = ", ".join(f"{k} {v}" for k, v in sorted(data["final_codes"].items()))
        print(f"refusal codes: {codes}", file=out)
    print(f"operator steps a trial (mean): {data['operator_steps_mean']}", file=out)
    print(
        f"estop latency ms: median {data['estop_ms_median']}, max {data['estop_ms_max']}", file=out
    )
    total = sum(data["violations"].values())
    print(f"invariant violations: {total}", file=out)
    for kind, count in sorted(data["violations"].items()):
        print(f"  {kind:<14} {count}", file=out)
    for result in results:
        for violation in result.violations:
            print(f"  seed {result.seed} [{result.spec}; {','.join(result.kinds)}]: {violation}",
                  file=out)  # fmt: skip


async def campaign(
    trials: int,
    seed: int,
    speed: float,
    verbose: bool,
    log_dir: Path | None = None,
    pool: tuple[str, ...] = KINDS,
    profile: str = "simulated",
) -> list[TrialResult]:
    codes = documented_codes(Path(__file__).resolve().parents[1] / "docs" / "daemon.md")
    results = []
    for number in range(trials):
        result = await run_trial(seed + number, speed, codes, log_dir, pool, profile)
        results.append(result)
        if verbose:
            print(
                f"seed {result.seed}: {result.outcome} in {result.wall_s} s "
                f"[{result.spec}; {','.join(result.kinds)}] steps {result.steps} "
                f"jobs {result.job_s} s "
                f"violations {result.violations}",
                file=sys.stderr,
                flush=True,
            )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=_args.count(1), default=40)
    parser.add_argument("--seed", type=_args.count(0, what="a seed"), default=2026)
    parser.add_argument(
        "--speed",
        type=_args.number(SPEED_FACTOR_MIN, SPEED_FACTOR_MAX, what="a speed factor"),
        default=4.0,
        help="[simulation] speed_factor",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="a line per trial on stderr")
    parser.add_argument("--logs", type=Path, help="write each trial's log to LOGS/seed-N.log")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="draw only these fault kinds (comma-separated)"
    )
    parser.add_argument(
        "--profile",
        default="simulated",
        help="the robot: a bundled profile name or a profile file (default: simulated)",
    )
    args = parser.parse_args(argv)
    try:
        campaign_config("", args.speed, args.profile)
    except ConfigError as exc:
        parser.error(f"--profile {args.profile}: {exc}")
    pool = tuple(k for k in KINDS if k in args.kinds.split(","))
    unknown = set(args.kinds.split(",")) - set(KINDS)
    if unknown or not pool:
        parser.error(f"--kinds: unknown {sorted(unknown)}; known: {','.join(KINDS)}")
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO)
    logging.getLogger().setLevel(logging.INFO)
    if not args.verbose:
        logging.getLogger().handlers[0].setLevel(logging.CRITICAL)
    with ThreadPoolExecutor(max_workers=4) as threads:
        loop = asyncio.new_event_loop()
        loop.set_default_executor(threads)
        try:
            results = loop.run_until_complete(
                campaign(
                    args.trials, args.seed, args.speed, args.verbose, args.logs, pool, args.profile
                )
            )
        finally:
            loop.close()
    data = summary(results)
    if args.json:
        json.dump({**data, "rows": [r.row() for r in results]}, sys.stdout, indent=1)
        print()
    else:
        print_table(data, results, sys.stdout)
    return 1 if data["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
