"""``cuberobot demo``, ``cuberobot run`` and ``cuberobot config check``.

* ``demo`` starts the simulated robot (firmware on a real pty, cameras rendering its virtual
  cube), the embedded MQTT broker (or uses ``--mqtt HOST:PORT``) and the daemon; scrambles the
  virtual cube, runs one full job with a progress bar and a per-stage timing table, and exits 0
  only if the virtual cube ends solved (the last line says so).
* ``run --config FILE`` runs the daemon for a robot until SIGINT/SIGTERM.
* ``config check FILE`` validates a profile and prints what the robot can do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from robot.assemble import assemble
from robot.config import RobotConfig, load_config
from robot.errors import ConfigError, RobotError

__all__ = ["register"]

DEFAULT_DEMO_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "simulated.toml"


def _hostport(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:1883)")
    return host, int(port)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="solve a scrambled virtual cube on the simulated robot, end to end",
        description="Simulated firmware on a pty, rendered cameras, MQTT, the daemon: one job.",
    )
    p.add_argument("--size", type=int, default=None, help="cube size N (default: the profile's)")
    p.add_argument("--seed", type=int, default=None, help="scramble seed (default: random)")
    p.add_argument(
        "--mqtt",
        type=_hostport,
        default=None,
        metavar="HOST:PORT",
        help="use this broker instead of the embedded one",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_DEMO_CONFIG,
        help="simulated robot profile (default configs/simulated.toml)",
    )
    p.add_argument("--speed", type=float, default=None, help="motor speed factor (default 1)")
    p.add_argument("--journal", type=Path, default=None, help="keep the journal in this file")
    p.set_defaults(handler=_demo)

    p = sub.add_parser(
        "run",
        help="run the robot daemon",
        description="Run the daemon for the robot in the profile until SIGINT or SIGTERM.",
    )
    p.add_argument("--config", type=Path, required=True, help="robot profile (TOML)")
    p.add_argument(
        "--mqtt", type=_hostport, default=None, metavar="HOST:PORT", help="override [mqtt] host"
    )
    p.set_defaults(handler=_run)

    p = sub.add_parser("config", help="robot profile tools")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = csub.add_parser("check", help="validate a robot profile and summarise it")
    c.add_argument("file", type=Path, metavar="FILE")
    c.set_defaults(handler=_config_check)


# --- config check --------------------------------------------------------------------------------


def _config_check(args: argparse.Namespace) -> int:
    from robot.planner import Planner

    try:
        config = load_config(args.file)
        planner = Planner(config.motors, config.cost_model, config.robot.cube_size)
    except RobotError as exc:
        print(f"cuberobot: {exc}", file=sys.stderr)
        return 2
    faces = "".join(f.name for f in sorted(config.motors.faces))
    print(f"{args.file}: OK")
    print(f"  robot      {config.robot.id} ({config.robot.name}), N={config.robot.cube_size}")
    print(f"  serial     {config.serial.url} at {config.serial.baud} baud")
    print(
        f"  motors     {len(config.motors.faces)} ({faces}), simultaneous pairs "
        f"{'on' if config.motors.simultaneous else 'off'}"
    )
    for face in sorted(config.motors.missing):
        for q, name in ((1, face.name), (2, face.name + "2")):
            moves, groups, seconds = planner.cost_of_face_turn(face, q)
            print(
                f"  no motor   {name}: replaced by {moves} turns in {groups} motion groups, "
                f"{seconds:.2f} s (the solver is asked to avoid {face.name} first)"
            )
    for cam in config.cameras:
        calib = cam.calibration or ("(renderer geometry)" if "simulated" in cam.source else "NONE")
        print(
            f"  camera     {cam.name}: {cam.source} {cam.width}x{cam.height}, {cam.view} view of "
            f"{''.join(cam.faces)}, calibration {calib}"
        )
    cm = config.cost_model
    print(
        f"  solver     {config.solver.engine}, budget {config.solver.budget_s} s; cost: quarter "
        f"{cm.quarter_turn_s} s, half {cm.half_turn_s} s, pair +{cm.pair_extra_s} s, settle "
        f"{cm.settle_s} s"
    )
    mq = config.mqtt
    where = (
        f"embedded broker on {mq.embedded_host}:{mq.embedded_port}"
        if mq.embedded
        else f"{mq.host}:{mq.port}"
    )
    if not mq.enabled:
        where = "off"
    print(
        f"  mqtt       {where}, topics {config.topic('')}..., TLS "
        f"{'on' if mq.tls.enabled else 'off'}, discovery "
        f"{mq.discovery.prefix if mq.discovery.enabled else 'off'}"
    )
    print(f"  journal    {config.resolve(config.journal.path)}")
    return 0


# --- building a daemon ---------------------------------------------------------------------------


# --- run ---------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"cuberobot: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run_async(config, args.mqtt))
    except RobotError as exc:
        print(f"cuberobot: {exc}", file=sys.stderr)
        return 1


async def _run_async(config: RobotConfig, mqtt: tuple[str, int] | None) -> int:
    async with contextlib.AsyncExitStack() as stack:
        parts = await assemble(
            config, stack, mqtt=mqtt, journal_path=config.resolve(config.journal.path)
        )
        daemon, address = parts.daemon, parts.mqtt_address
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, daemon.stop)
        task = asyncio.create_task(daemon.run(), name="daemon")
        await daemon.ready.wait()
        print(
            f"cuberobot: daemon {config.robot.id} running; MQTT {address}, topics "
            f"{config.topic('#')}",
            flush=True,
        )
        await task
    return 0


# --- demo --------------------------------------------------------------------------------------


def _demo(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"cuberobot: {exc}", file=sys.stderr)
        return 2
    if not config.simulated:
        print(
            f'cuberobot: {args.config}: the demo needs a simulated robot ([serial] url = "sim")',
            file=sys.stderr,
        )
        return 2
    updates: dict[str, Any] = {}
    if args.size is not None:
        if not 2 <= args.size <= 7:
            print(f"cuberobot: --size must be 2..7, got {args.size}", file=sys.stderr)
            return 2
        updates["robot"] = config.robot.model_copy(update={"cube_size": args.size})
    if args.speed is not None:
        if not args.speed > 0:
            print(f"cuberobot: --speed must be > 0, got {args.speed}", file=sys.stderr)
            return 2
        assert config.simulation is not None
        updates["simulation"] = config.simulation.model_copy(update={"speed_factor": args.speed})
    if updates:
        config = config.model_copy(update=updates)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    try:
        return asyncio.run(_demo_async(config, args, seed))
    except RobotError as exc:
        print(f"cuberobot: {exc}", file=sys.stderr)
        return 1


async def _demo_async(config: RobotConfig, args: argparse.Namespace, seed: int) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from solver.cube.facelets import Cube
    from solver.cube.notation import format_moves, parse

    console = Console(highlight=False)
    n = config.robot.cube_size
    rng = random.Random(seed)
    turns: list[str] = []
    while len(turns) < (25 if n == 3 else 40):
        face = rng.choice("URFDLB")
        if turns and turns[-1][0] == face:
            continue
        turns.append(face + rng.choice(["", "'", "2"]))
    scramble = parse(" ".join(turns))
    start = Cube.solved(n).apply(scramble)
    with tempfile.TemporaryDirectory(prefix="cuberobot-demo-") as tmp:
        journal_path = args.journal or Path(tmp) / "journal.sqlite"
        async with contextlib.AsyncExitStack() as stack:
            parts = await assemble(
                config, stack, mqtt=args.mqtt, journal_path=journal_path, sim_start=start, seed=seed
            )
            daemon, sim, address = parts.daemon, parts.sim, parts.mqtt_address
            assert sim is not None
            console.print(f"[bold]cuberobot demo[/]  (seed {seed}, N={n})")
            console.print(f"scramble: {format_moves(scramble)}")
            console.print(f"firmware: simulated, on pty {sim.port}")
            host, _, mport = address.rpartition(":")
            console.print(f"MQTT: {address}, topics {config.topic('#')}")
            if host:
                console.print(
                    f"  watch: mosquitto_sub -h {host} -p {mport} -t '{config.topic('#')}' -v"
                )
            progress = Progress(
                TextColumn("{task.description:<12}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                console=console,
                transient=False,
            )
            bar = progress.add_task("IDLE", total=None, info="")
            events: list[tuple[str, dict[str, Any]]] = []

            def listen(name: str, payload: dict[str, Any]) -> None:
                if name == "status":
                    total = payload["moves_total"] or None
                    eta = payload.get("eta_s")
                    info = f"eta {eta:.1f} s" if eta else ""
                    progress.update(
                        bar,
                        description=payload["state"],
                        total=total,
                        completed=payload["moves_done"],
                        info=info,
                    )
                    return
                events.append((name, payload))
                if name == "solution":
                    progress.console.print(
                        f"solution ({payload['engine']}, {payload['htm']} HTM): {payload['moves']}"
                    )
                    prog = payload["program"]
                    progress.console.print(
                        f"motor program: {prog['count']} moves in {prog['groups']} groups, "
                        f"estimated {prog['estimate_s']:.2f} s"
                    )
                elif name == "scan_complete":
                    unsure = len(payload["low_confidence"])
                    progress.console.print(
                        f"scan: {'valid' if payload['valid'] else 'INVALID'}, "
                        f"{unsure} low-confidence sticker{'' if unsure == 1 else 's'} "
                        f"(lowest confidence {payload['min_confidence']:.2f})"
                    )
                elif name == "error":
                    progress.console.print(f"[red]error {payload['code']}: {payload['message']}")

            daemon.listeners.append(listen)
            runner = asyncio.create_task(daemon.run(), name="daemon")
            await daemon.ready.wait()
            await daemon.firmware_ready.wait()
            t0 = time.perf_counter()
            with progress:
                reply = await daemon.submit("start", {"source": "demo"})
                if not reply.get("ok"):
                    console.print(f"[red]start refused: {reply['error']['message']}")
                await daemon._job_done.wait()
                await asyncio.sleep(0)
            wall = time.perf_counter() - t0
            if daemon.mqtt is not None:
                await daemon.mqtt.flush(3.0)
            daemon.stop()
            await runner
            cube = sim.cube_state()
    done = next((p for name, p in events if name == "done"), None)
    table = Table(title="stage timings")
    table.add_column("stage")
    table.add_column("time", justify="right")
    times = done["stage_times_s"] if done else (daemon.job.stage_times if daemon.job else {}) or {}
    for stage in ("scan", "validate", "solve", "execute"):
        if stage in times:
            table.add_row(stage, _duration(times[stage]))
    table.add_row("total (wall)", _duration(wall))
    console.print(table)
    published = sum(1 for _ in events)
    console.print(f"events published: {published} ({', '.join(sorted({n for n, _ in events}))})")
    moves = daemon.job.moves_total if daemon.job is not None else 0
    if cube.is_solved() and done is not None:
        console.print(f"virtual cube solved: yes ({moves} moves)")
        return 0
    console.print(f"virtual cube solved: NO (state {cube.to_facelets('scheme')})")
    return 1


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
