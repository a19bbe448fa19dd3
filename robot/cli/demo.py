"""``cuberobot demo``: one job on the simulated robot, end to end, with a progress bar.

Starts the simulated robot (firmware on a real pty, cameras rendering its virtual cube), the
embedded MQTT broker (or uses ``--mqtt HOST:PORT``) and the daemon; scrambles the virtual cube
(random moves from :mod:`solver.scramble`, seeded by ``--seed``), runs one full job with a
progress bar and a per-stage timing table, and exits 0 only if the virtual cube ends solved
(the last line says so). Exit 1 otherwise; 2 for a profile that cannot be used.

``--size N`` (2..7) runs an N×N virtual cube: rendered N×N faces read by the real vision
pipeline; when the profile's ``[solver] engine`` does not solve that size, the engine for the
size runs instead (``auto``: pocket for 2x2, two-phase for 3x3, reduction for N >= 4). The
bundled profile's grippers hold up to 3 layers (``max_depth``), enough for every wide and
inner-slice turn of N <= 7; a profile whose grippers hold too few fails the job with
``plan_failed`` naming the move and the ``max_depth`` it needs.

Output: on a terminal, a live progress bar; otherwise (``cuberobot demo | cat``) plain lines,
none wrapped. ``--format json`` prints one result object on stdout (:func:`_result`: solved,
seed, scramble, solution, stage times, events) and the human output on stderr; a demo that
cannot run prints ``{"error": {...}}`` instead (:func:`robot.cli.exits.error_document`).

Against an outside broker (``--mqtt`` or the profile's ``[mqtt] host``) the demo removes its
robot's retained Home Assistant discovery before it stops, so no "Simulated cube robot"
device stays behind (:meth:`robot.mqtt.MqttBridge.withdraw_discovery`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from robot.assemble import Assembly, assemble
from robot.bundled import load_profile
from robot.cli.args import host_port, new_file
from robot.cli.exits import CommandFailed, UsageError
from robot.config import RobotConfig
from robot.config_sections import SPEED_FACTOR_MAX, SPEED_FACTOR_MIN
from robot.errors import RobotError
from robot.kinds.profile import largest_n
from robot.simrobot import EmulatedRobot
from solver.api import AUTO
from solver.cube.facelets import Cube
from solver.cube.notation import format_moves
from solver.scramble import random_moves

__all__ = ["register"]

#: The bundled profile the demo runs by default (:mod:`robot.bundled`; configs/simulated.toml).
DEFAULT_DEMO_CONFIG = "simulated"
#: Scramble lengths: 25 face turns for a 3x3, 40 moves for the other sizes.
_SCRAMBLE_3X3, _SCRAMBLE_NXN = 25, 40
_STAGES = ("scan", "validate", "solve", "execute")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="solve a scrambled virtual cube on the simulated robot, end to end",
        description="Simulated firmware on a pty, rendered cameras, MQTT, the daemon: one job.",
    )
    p.add_argument(
        "--size", type=int, default=None, help="cube size N, 2..7 (default: the profile's)"
    )
    p.add_argument("--seed", type=int, default=None, help="scramble seed (default: random)")
    p.add_argument(
        "--mqtt",
        type=host_port,
        default=None,
        metavar="HOST:PORT",
        help="use this broker instead of the embedded one",
    )
    p.add_argument(
        "--config",
        "--profile",
        dest="config",
        type=Path,
        default=Path(DEFAULT_DEMO_CONFIG),
        metavar="FILE",
        help="simulated robot profile: a TOML file or a bundled profile's name (default "
        f"{DEFAULT_DEMO_CONFIG}, the file configs/{DEFAULT_DEMO_CONFIG}.toml)",
    )
    p.add_argument("--speed", type=float, default=None, help="motor speed factor (default 1)")
    p.add_argument(
        "--emulator",
        choices=("python", "avr"),
        default=None,
        help="the motor firmware: the Python simulation (default) or the reference C firmware "
        "in simavr (needs gcc-avr, avr-libc, simavr)",
    )
    p.add_argument(
        "--journal",
        type=new_file,
        default=None,
        metavar="FILE",
        help="keep the job journal in this file (default: a temporary one)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default): progress and a summary; json: one result object on stdout "
        "(the progress goes to stderr)",
    )
    p.set_defaults(handler=_demo)


def _demo_config(args: argparse.Namespace) -> RobotConfig:
    """The profile for the demo, with ``--size`` and ``--speed`` applied."""
    config = load_profile(args.config)
    if not config.simulated:
        raise UsageError(f'{args.config}: the demo needs a simulated robot ([serial] url = "sim")')
    updates: dict[str, Any] = {}
    if args.size is not None:
        if not 2 <= args.size <= 7:
            raise UsageError(f"--size must be 2..7, got {args.size}")
        largest = largest_n(config.robot.kind, config.robot.mechanism_table)
        if args.size > largest:  # as [robot] cube_size would be refused in the profile
            raise UsageError(
                f"--size {args.size}: the {config.robot.kind} mechanism of {args.config} solves "
                f"cubes up to N={largest} (its grippers' or cover's depths); see `cuberobot "
                "config check`"
            )
        updates["robot"] = config.robot.model_copy(update={"cube_size": args.size})
        if not config.solver.solves(args.size):  # e.g. the profile's twophase for a 2x2
            updates["solver"] = config.solver.model_copy(update={"engine": AUTO})
    if args.speed is not None:
        if not SPEED_FACTOR_MIN <= args.speed <= SPEED_FACTOR_MAX:
            raise UsageError(
                f"--speed must be {SPEED_FACTOR_MIN:g}..{SPEED_FACTOR_MAX:g} (times real time), "
                f"got {args.speed}"
            )
        assert config.simulation is not None
        updates["simulation"] = config.simulation.model_copy(update={"speed_factor": args.speed})
    if args.emulator is not None:
        n = args.size if args.size is not None else config.robot.cube_size
        if args.emulator == "avr" and n >= 4:
            raise UsageError(
                f"--emulator avr cannot solve a {n}x{n}x{n} cube: its wide and inner-slice "
                "turns need grippers holding several layers, and the reference C firmware has "
                "no depth actuator (it refuses depth moves); use the Python simulation"
            )
        if args.emulator == "avr" and args.speed is not None:
            raise UsageError("--speed goes with the Python simulation, not --emulator avr")
        simulation = updates.get("simulation", config.simulation)
        assert simulation is not None
        updates["simulation"] = simulation.model_copy(update={"emulator": args.emulator})
    return config.model_copy(update=updates) if updates else config


def _demo(args: argparse.Namespace) -> int:
    config = _demo_config(args)
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be a whole number >= 0, got {args.seed}")
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    try:
        return asyncio.run(_demo_async(config, args, seed))
    except RobotError as exc:  # a profile error found while starting is a failure to run
        raise CommandFailed(str(exc)) from exc


def _console(args: argparse.Namespace) -> Console:
    """The human output: stdout (stderr with ``--format json``); lines are not wrapped unless
    they go to a terminal (rich itself honours NO_COLOR and TERM=dumb)."""
    console = Console(highlight=False, stderr=args.format == "json")
    console.soft_wrap = not console.is_terminal
    return console


@dataclass
class _Watcher:
    """Follows the daemon's events: the progress bar, one line per milestone, the record."""

    progress: Progress
    bar: TaskID
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, name: str, payload: dict[str, Any]) -> None:
        if name == "status":
            self._status(payload)
            return
        self.events.append((name, payload))
        line = _milestone(name, payload)
        if line:
            self.progress.console.print(line)

    def _status(self, payload: dict[str, Any]) -> None:
        eta = payload.get("eta_s")
        self.progress.update(
            self.bar,
            description=payload["state"],
            total=payload["moves_total"] or None,
            completed=payload["moves_done"],
            info=f"eta {eta:.1f} s" if eta else "",
        )

    def done(self) -> dict[str, Any] | None:
        return next((p for name, p in self.events if name == "done"), None)


def _milestone(name: str, payload: dict[str, Any]) -> str:
    """The line the demo prints for an event ("" for none)."""
    if name == "solution":
        prog = payload["program"]
        return (
            f"solution ({payload['engine']}, {payload['htm']} HTM): {payload['moves']}\n"
            f"motor program: {prog['count']} moves in {prog['groups']} groups, "
            f"estimated {prog['estimate_s']:.2f} s"
        )
    if name == "scan_complete":
        unsure = len(payload["low_confidence"])
        return (
            f"scan: {'valid' if payload['valid'] else 'INVALID'}, "
            f"{unsure} low-confidence sticker{'' if unsure == 1 else 's'} "
            f"(lowest confidence {payload['min_confidence']:.2f})"
        )
    if name == "error":
        return f"[red]error {payload['code']}: {payload['message']}"
    return ""


def _introduce(console: Console, parts: Assembly, config: RobotConfig, head: str) -> None:
    assert parts.sim is not None
    console.print(head)
    kind = (
        "the reference C firmware in simavr"
        if isinstance(parts.sim, EmulatedRobot)
        else ("simulated")
    )
    console.print(f"firmware: {kind}, on pty {parts.sim.port}")
    address = parts.mqtt_address
    host, _, mport = address.rpartition(":")
    console.print(f"MQTT: {address}, topics {config.topic('#')}")
    if host:
        console.print(f"  watch: mosquitto_sub -h {host} -p {mport} -t '{config.topic('#')}' -v")


def _new_watcher(console: Console) -> _Watcher:
    progress = Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        console=console,
        transient=False,
    )
    return _Watcher(progress, progress.add_task("IDLE", total=None, info=""))


async def _one_job(parts: Assembly, watcher: _Watcher, console: Console) -> float:
    """Run the daemon for one ``start`` job; return the wall time of the job in seconds."""
    daemon = parts.daemon
    daemon.listeners.append(watcher)
    runner = asyncio.create_task(daemon.run(), name="daemon")
    await daemon.ready.wait()
    await daemon.firmware_ready.wait()
    t0 = time.perf_counter()
    with watcher.progress:
        reply = await daemon.submit("start", {"source": "demo"})
        if not reply.get("ok"):
            console.print(f"[red]start refused: {reply['error']['message']}")
        await daemon._job_done.wait()
        await asyncio.sleep(0)
    wall = time.perf_counter() - t0
    if daemon.mqtt is not None:
        if parts.broker is None and daemon.config.mqtt.discovery.enabled:
            daemon.mqtt.withdraw_discovery()  # an outside broker keeps retained messages
        await daemon.mqtt.flush(3.0)
    daemon.stop()
    await runner
    return wall


async def _demo_async(config: RobotConfig, args: argparse.Namespace, seed: int) -> int:
    console = _console(args)
    n = config.robot.cube_size
    scramble = random_moves(n, _SCRAMBLE_3X3 if n == 3 else _SCRAMBLE_NXN, seed)
    head = f"[bold]cuberobot demo[/]  (seed {seed}, N={n})\nscramble: {format_moves(scramble)}"
    watcher = _new_watcher(console)
    with tempfile.TemporaryDirectory(prefix="cuberobot-demo-") as tmp:
        journal_path = args.journal or Path(tmp) / "journal.sqlite"
        async with contextlib.AsyncExitStack() as stack:
            parts = await assemble(
                config,
                stack,
                mqtt=args.mqtt,
                journal_path=journal_path,
                sim_start=Cube.solved(n).apply(scramble),
                seed=seed,
            )
            _introduce(console, parts, config, head)
            wall = await _one_job(parts, watcher, console)
            assert parts.sim is not None
            cube = parts.sim.cube_state()
    solved = _summary(console, parts, watcher, wall, cube)
    if args.format == "json":
        result = _result(parts, watcher, wall, cube, solved)
        print(json.dumps({"seed": seed, "size": n, "scramble": format_moves(scramble), **result}))
    return 0 if solved else 1


def _summary(console: Console, parts: Assembly, watcher: _Watcher, wall: float, cube: Cube) -> bool:
    """The timing table and the verdict line; whether the cube ended solved."""
    job = parts.daemon.job
    done = watcher.done()
    table = Table(title="stage timings")
    table.add_column("stage")
    table.add_column("time", justify="right")
    for stage, seconds in _stage_times(parts, watcher).items():
        table.add_row(stage, _duration(seconds))
    table.add_row("total (wall)", _duration(wall))
    console.print(table)
    names = ", ".join(sorted({name for name, _ in watcher.events}))
    if _mqtt_reached(parts):
        console.print(f"events published: {len(watcher.events)} ({names})")
    else:  # the daemon works on without a broker: say so rather than claim a delivery
        console.print(
            f"[yellow]events: {len(watcher.events)} ({names}); NOT published: the MQTT broker "
            f"at {parts.mqtt_address} was never reached (is it running? check --mqtt or the "
            "profile's [mqtt] host and port)"
        )
    if cube.is_solved() and done is not None:
        moves = job.moves_total if job is not None else 0
        console.print(f"virtual cube solved: yes ({moves} moves)")
        return True
    console.print(f"virtual cube solved: NO (state {cube.to_facelets('scheme')})")
    return False


def _mqtt_reached(parts: Assembly) -> bool:
    """Whether the daemon's MQTT bridge connected to its broker at least once."""
    mqtt = parts.daemon.mqtt
    return mqtt is not None and mqtt.connections > 0


def _stage_times(parts: Assembly, watcher: _Watcher) -> dict[str, float]:
    """Seconds per stage, in the order of the job (from the done event, else the job)."""
    job = parts.daemon.job
    done = watcher.done()
    times = done["stage_times_s"] if done else (job.stage_times if job else {}) or {}
    return {stage: float(times[stage]) for stage in _STAGES if stage in times}


def _result(
    parts: Assembly, watcher: _Watcher, wall: float, cube: Cube, solved: bool
) -> dict[str, Any]:
    """The ``--format json`` result (beside seed, size and scramble)."""
    solution = next((p for name, p in watcher.events if name == "solution"), None)
    job = parts.daemon.job
    counts: dict[str, int] = {}
    for name, _ in watcher.events:
        counts[name] = counts.get(name, 0) + 1
    return {
        "solved": solved,
        "solution": None
        if solution is None
        else {k: solution[k] for k in ("engine", "moves", "htm") if k in solution},
        "moves_executed": job.moves_total if job is not None and solved else None,
        "stage_times_s": _stage_times(parts, watcher),
        "wall_s": round(wall, 3),
        "events": counts,
        "errors": [p for name, p in watcher.events if name == "error"],
        "final_state": cube.to_facelets(),
        "mqtt": parts.mqtt_address,
        "mqtt_reached": _mqtt_reached(parts),
    }


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
