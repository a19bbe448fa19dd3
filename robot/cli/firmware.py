"""``cuberobot firmware-sim | send``: the simulated firmware and the link from the command line.

Forms (a contract; scripts and tests call them):

* ``cuberobot firmware-sim [--pty | --tcp PORT] [--size N] [--faults SPEC] [--seed S]
  [--state-file FILE]`` — the FIRST line on stdout is the port to open (a path to the pty slave,
  or ``socket://127.0.0.1:PORT``), flushed at once; runs until SIGINT/SIGTERM (exit 0).
  ``--state-file`` holds the virtual cube's facelet string (URFDLB), rewritten after every
  executed move.
* ``cuberobot send PORT MOVES`` — connects, executes ``MOVES`` (face turns ``U R' F2``, opposite
  pairs ``U+D'``), prints one line per executed move (``3/20 R' index=17``), exits 0 when all
  executed, 1 with the reason on stderr otherwise (once: the link's own log line of the same
  error shows only with ``-v``), 2 for malformed moves.

The virtual cube is the solver's :class:`solver.cube.facelets.Cube` behind
:class:`robot.simcube.SolverCube`; the firmware package itself knows no cube model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from firmware_protocol import (
    FirmwareConfig,
    FirmwareLink,
    LinkConfig,
    LinkError,
    PtyEndpoint,
    SimulatedFirmware,
    TcpEndpoint,
    parse_fault_spec,
    parse_moves,
)
from robot.cli.args import baud_rate, cube_size, new_file, seconds
from robot.cli.exits import CommandFailed, UsageError
from robot.cli.output import link_errors_reported_once
from robot.simcube import SolverCube
from solver.cube.facelets import Cube
from solver.cube.validate import validate
from solver.errors import CubeError

__all__ = ["register"]

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "firmware-sim",
        help="run the simulated stepper firmware on a pty or TCP port",
        description="Run the simulated firmware. The first line on stdout is the port to open.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--pty", action="store_true", help="listen on a pseudo-terminal (the default)"
    )
    where.add_argument("--tcp", type=_port, metavar="PORT", help="listen on 127.0.0.1:PORT")
    p.add_argument("--size", type=_size, default=3, help="virtual cube size N (default 3)")
    p.add_argument(
        "--max-depth",
        type=int,
        default=1,
        metavar="K",
        help="layers a gripper holds: moves of depth 1..K run, deeper ones get NAK BAD_MOVE "
        "(default 1; at most N-1)",
    )
    p.add_argument(
        "--faults",
        type=_faults,
        default=None,
        metavar="SPEC",
        help="e.g. 'flip=1e-3,drop=1e-4,dup=0.01,delay=0.01:30,reset@40,stall=U@7,vanish@20:500'",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the fault injection (default 0)")
    p.add_argument(
        "--state-file",
        type=_state_file,
        default=None,
        metavar="FILE",
        help="keep the virtual cube's facelet string here, rewritten after every move",
    )
    p.add_argument(
        "--from", dest="start", metavar="FACELETS", help="start from this cube (default solved)"
    )
    p.add_argument("--baud", type=baud_rate, default=115200, help="line speed modelled (115200)")
    p.add_argument(
        "--speed", type=_speed, default=1.0, help="motor speed factor (2 = twice as fast)"
    )
    p.add_argument(
        "--emulator",
        choices=("python", "avr"),
        default="python",
        help="python: the Python simulation (default); avr: the reference C firmware in simavr",
    )
    p.add_argument(
        "--board",
        choices=("mega2560_ramps", "uno_cnc"),
        default="mega2560_ramps",
        help="with --emulator avr: the board (firmware/boards/)",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --emulator avr: write every STEP/DIR edge here (firmware_protocol.pulses)",
    )
    p.set_defaults(handler=_firmware_sim)

    p = sub.add_parser(
        "send",
        help="execute face turns through the firmware link",
        description="Connect to PORT, execute MOVES, print one line per executed move.",
    )
    p.add_argument("port", metavar="PORT", help="/dev/ttyACM0, a pty path or socket://host:port")
    p.add_argument("moves", metavar="MOVES", help="face turns, e.g. \"R U R' U'\"; U+D' together")
    p.add_argument("--baud", type=baud_rate, default=115200, help="baud rate (115200)")
    p.add_argument(
        "--connect-timeout",
        type=seconds,
        default=5.0,
        metavar="S",
        help="seconds to wait for the firmware (default 5)",
    )
    p.set_defaults(handler=_send)


# --- argument types ---------------------------------------------------------------------------


def _state_file(text: str) -> Path:
    """Where the simulated firmware keeps the cube's facelets: a file in an existing folder."""
    path = new_file(text)  # never a device: it is replaced by a rename at every move
    if not path.expanduser().absolute().parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: the folder {path.expanduser().absolute().parent} does not exist; create it "
            "or choose a path in an existing folder"
        )
    return path


_size = cube_size(64)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"TCP port must be a number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"TCP port must be 0..65535, got {value}")
    return value


def _speed(text: str) -> float:
    """A motor speed factor within the bounds of ``[simulation] speed_factor`` (and ``demo
    --speed``): 1e-300 made the motors' acceleration 0 (a traceback), inf was taken."""
    from robot.config_sections import SPEED_FACTOR_MAX, SPEED_FACTOR_MIN

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"speed must be a number, got {text!r}") from None
    if not SPEED_FACTOR_MIN <= value <= SPEED_FACTOR_MAX:
        raise argparse.ArgumentTypeError(
            f"speed must be {SPEED_FACTOR_MIN:g}..{SPEED_FACTOR_MAX:g} (times real time), "
            f"got {text}"
        )
    return value


def _faults(text: str) -> Any:
    try:
        return parse_fault_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


# --- firmware-sim -----------------------------------------------------------------------------


def _firmware_sim(args: argparse.Namespace) -> int:
    if args.emulator == "avr":
        if args.max_depth != 1:
            raise UsageError(
                "--max-depth goes with the Python simulation: the reference C firmware has no "
                "depth actuator (it refuses depth moves with NAK BAD_MOVE)"
            )
        return _emulated(args)
    if args.record is not None or args.board != "mega2560_ramps":
        raise UsageError("--board and --record go with --emulator avr")
    try:
        cube = (
            Cube.from_facelets(args.start, args.size)
            if args.start is not None
            else Cube.solved(args.size)
        )
    except CubeError as err:
        raise UsageError(f"--from: {err}") from err
    problems = validate(cube) if args.start is not None else []
    if problems:  # a test of the daemon's refusal may want one: allowed, but said
        logger.warning(
            "--from is no cube a robot can be handed (%s%s); the daemon will refuse its scan "
            "and `cuberobot validate FACELETS` lists every fault",
            problems[0].message,
            f" and {len(problems) - 1} more" if len(problems) > 1 else "",
        )
    if not 1 <= args.max_depth < max(args.size, 2):
        raise UsageError(
            f"--max-depth must be 1..{max(args.size - 1, 1)} for an N={args.size} cube "
            f"(a gripper never holds the whole cube), got {args.max_depth}"
        )
    return asyncio.run(_run_sim(args, SolverCube(cube)))


async def _run_sim(args: argparse.Namespace, cube: SolverCube) -> int:
    config = FirmwareConfig(max_depth=args.max_depth)
    if args.speed != 1.0:
        config = config.with_speed(args.speed)
    firmware = SimulatedFirmware(
        cube=cube,
        config=config,
        faults=args.faults,
        seed=args.seed,
        baud=args.baud,
        state_file=args.state_file,
    )
    await firmware.start()
    endpoint: PtyEndpoint | TcpEndpoint
    endpoint = PtyEndpoint(firmware) if args.tcp is None else TcpEndpoint(firmware, args.tcp)
    try:
        path = await endpoint.start()
    except OSError as err:
        await firmware.stop()
        where = f"TCP port {args.tcp}" if args.tcp is not None else "a pty"
        raise CommandFailed(
            f"cannot listen on {where}: {err}; pick another port or use --pty"
        ) from err
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before the port is printed: a script may
        loop.add_signal_handler(sig, stop.set)  # stop it as soon as it has read the port
    print(path, flush=True)
    logger.info("simulated firmware on %s (faults: %s, seed %d)", path, args.faults, args.seed)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await endpoint.close()
        await firmware.stop()
    executed = sum(1 for r in firmware.records if r.outcome == "executed")
    print(
        f"cuberobot: firmware-sim stopped: {executed} moves executed, "
        f"{len(firmware.resets)} resets; cube {cube.facelets()}",
        file=sys.stderr,
    )
    return 0


def _emulated(args: argparse.Namespace) -> int:
    """The reference C firmware in simavr on a pty (its first line on stdout is the port)."""
    python_only = {
        "--tcp": args.tcp is not None,
        "--faults": args.faults is not None,
        "--state-file": args.state_file is not None,
        "--from": args.start is not None,
        "--speed": args.speed != 1.0,
        "--size": args.size != 3,
    }
    given = [name for name, used in python_only.items() if used]
    if given:
        raise UsageError(f"{', '.join(given)} go with the Python simulation, not --emulator avr")
    from firmware_protocol.emulator import EmulatorUnavailableError, start_emulator

    try:
        board = start_emulator(args.board, record=args.record, seed=args.seed)
    except EmulatorUnavailableError as err:
        raise CommandFailed(str(err)) from err
    print(board.port, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while board.running and not stop.wait(0.2):
            pass
    finally:
        board.stop()
    print(f"cuberobot: emulated {args.board} stopped", file=sys.stderr)
    return 0


# --- send ---------------------------------------------------------------------------------------


def _send(args: argparse.Namespace) -> int:
    moves = parse_moves(args.moves)
    if not moves:
        raise UsageError("no moves given")
    config = LinkConfig(baudrate=args.baud, connect_timeout_s=args.connect_timeout)
    with link_errors_reported_once():
        return asyncio.run(_run_send(args.port, moves, config))


async def _run_send(port: str, moves: list[Any], config: LinkConfig) -> int:
    link = FirmwareLink(port, config=config)
    try:
        await link.connect()
        total = len(moves)
        async for event in link.execute(moves):
            print(f"{event.position + 1}/{total} {event.move.notation} index={event.index}")
            sys.stdout.flush()
    finally:
        with contextlib.suppress(LinkError):
            await link.close()
    return 0
