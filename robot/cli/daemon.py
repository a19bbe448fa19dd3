"""``cuberobot run`` and ``cuberobot config check``: the robot daemon and its profile.

* ``run --config FILE`` runs the daemon for a robot until SIGINT/SIGTERM.
* ``config check FILE`` validates a profile and prints what the robot can do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path
from typing import Any

from robot import sdnotify
from robot.assemble import assemble
from robot.bundled import load_profile
from robot.cli.args import file_path_problem, host_port
from robot.cli.exits import CommandFailed, UsageError
from robot.config import RobotConfig
from robot.errors import ConfigError, RobotError

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run the robot daemon",
        description="Run the daemon for the robot in the profile until SIGINT or SIGTERM.",
    )
    p.add_argument(
        "--config",
        type=Path,
        required=True,
        metavar="FILE",
        help="robot profile: a TOML file, or a bundled profile's name (simulated, six_motor, ...)",
    )
    p.add_argument(
        "--mqtt", type=host_port, default=None, metavar="HOST:PORT", help="override [mqtt] host"
    )
    p.set_defaults(handler=_run)

    p = sub.add_parser("config", help="robot profile tools")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = csub.add_parser("check", help="validate a robot profile and summarise it")
    c.add_argument(
        "file", type=Path, metavar="FILE", help="a TOML profile, or a bundled profile's name"
    )
    c.set_defaults(handler=_config_check)


# --- config check --------------------------------------------------------------------------------


def _check_calibration(config: RobotConfig, camera: str, calibration: str, profile: str) -> None:
    """A camera's calibration file must load and hold its view: `run` would start without it
    (the camera uncalibrated, scans refused), so the check says so first."""
    from robot.cameras import calibrated_view
    from vision.errors import CalibrationError

    try:
        calibrated_view(config.resolve(calibration), camera, config.robot.cube_size)
    except CalibrationError as exc:
        raise UsageError(
            f"{profile}: [[cameras]] {camera} calibration is unusable: {exc}; run `cuberobot "
            "vision calibrate` to write it again"
        ) from exc


def _one_camera_scan(config: RobotConfig, face: str, file: Path) -> str:
    """The one-camera scan's choreography on this profile's mechanism, in one line."""
    from robot.kinds.choreography import choreograph
    from robot.kinds.profile import build_mechanism
    from solver.cube.geometry import Face

    robot = config.robot
    try:
        mechanism = build_mechanism(robot.kind, robot.mechanism_table, robot.cube_size)
        chore = choreograph(mechanism, Face[face])
    except RobotError as exc:
        raise UsageError(f"{file}: one-camera scan: {exc}") from exc
    return (
        f"one camera at {face}: {len(chore.actions)} actions, {len(chore.looks)} frames, "
        f"{chore.seconds:.2f} s of machine time ({chore})"
    )


def _config_check(args: argparse.Namespace) -> int:
    from robot.kinds.profile import describe
    from robot.planner import Planner

    try:
        config = load_profile(args.file)
        planner = Planner(config.motors, config.cost_model, config.robot.cube_size)
    except RobotError as exc:
        raise UsageError(str(exc)) from exc
    faces = "".join(f.name for f in sorted(config.motors.faces))
    print(f"{args.file}: OK")
    print(f"  robot      {config.robot.id} ({config.robot.name}), N={config.robot.cube_size}")
    print(f"  serial     {config.serial.url} at {config.serial.baud} baud")
    robot = config.robot
    try:
        mechanism = describe(robot.kind, robot.mechanism_table, robot.cube_size)
    except RobotError as exc:
        raise UsageError(f"{args.file}: {exc}") from exc
    print(f"  kind       {mechanism[0]}")
    for line in mechanism[1:]:
        print(f"             {line}")
    if robot.kind == "six-face":
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
        if cam.calibration:
            _check_calibration(config, cam.name, cam.calibration, args.file)
        print(
            f"  camera     {cam.name}: {cam.source} {cam.width}x{cam.height}, {cam.view} view of "
            f"{''.join(cam.faces)}, calibration {calib}"
        )
    scan_camera = config.scan_camera
    if scan_camera is not None:
        print(f"  scan       {_one_camera_scan(config, scan_camera.faces[0], args.file)}")
    cm = config.cost_model
    table = robot.mechanism_table
    search = (
        f"anytime (head start {config.solver.head_start_s} s, then searching while the motors turn)"
        if config.solver.anytime
        else f"budget {config.solver.budget_s} s"
    )
    if table is not None:
        how = "co-optimised with" if table.cooptimise else "then planned by"
        print(f"  solver     {config.solver.engine}, {search}; {how} the {robot.kind}'s planner")
    else:
        print(
            f"  solver     {config.solver.engine}, {search}; cost: quarter "
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


# --- run ---------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    config = load_profile(args.config)
    journal = config.resolve(config.journal.path)
    problem = file_path_problem(journal)
    if problem is not None:
        raise ConfigError(
            f"cannot keep the journal at {journal}: {problem}; fix the path",
            file=config.source,
            section="journal",
            key="path",
        )
    try:
        return asyncio.run(_run_async(config, args.mqtt))
    except RobotError as exc:  # a profile error found while starting is a failure to run
        raise CommandFailed(str(exc)) from exc


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
        watchdog = asyncio.create_task(sdnotify.watchdog(), name="watchdog")
        notify_ready = asyncio.create_task(_notify_ready(daemon, config, address))
        try:
            await task
        finally:
            sdnotify.notify("STOPPING=1")
            for helper in (watchdog, notify_ready):
                helper.cancel()
    return 0


async def _notify_ready(daemon: Any, config: RobotConfig, address: str) -> None:
    """Tell systemd (``Type=notify``) the daemon is ready once its solver tables are."""
    await daemon.ctx.prepared.wait()
    sdnotify.notify("READY=1", f"STATUS=robot {config.robot.id} ready; MQTT {address}")
