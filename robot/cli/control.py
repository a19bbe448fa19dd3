"""``cuberobot resume``, ``cuberobot abort``, ``cuberobot estop``: ask the running daemon.

The daemon's recovery messages name these (a contract; scripts call them):

* ``cuberobot resume --config FILE [--rescan] [--mqtt HOST:PORT] [--timeout S]`` — finish the
  interrupted job (``--rescan``: from a fresh scan of the cube, as the daemon asks after a
  firmware that does not match the journal);
* ``cuberobot abort --config FILE [...]`` — stop after the move group in progress, then home;
* ``cuberobot estop (--config FILE [...] | --port PORT [--baud N])`` — emergency stop, through
  the daemon or directly on the firmware link (when no daemon holds the port).

Each prints the daemon's reply as one line of JSON (``estop --port``: ``PORT: stopped,
firmware STOPPED``). Exit codes: 0 done; 1 the daemon refused (its reply's code and message on
stderr), or it is offline, absent or silent, or the broker is unreachable; 2 usage or a profile
that cannot be used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from robot.cli.args import baud_rate, host_port, seconds
from robot.cli.exits import CommandFailed, UsageError
from robot.cli.output import link_errors_reported_once

__all__ = ["register"]

_HELP = {
    "resume": "finish the interrupted job through the running daemon",
    "abort": "stop the job after the move group in progress, then home",
    "estop": "emergency stop: through the daemon, or directly on the firmware link",
}


def register(sub: Any) -> None:
    for verb, text in _HELP.items():
        p = sub.add_parser(verb, help=text, description=text[0].upper() + text[1:] + ".")
        if verb == "estop":
            target = p.add_mutually_exclusive_group(required=True)
            target.add_argument(
                "--port",
                metavar="PORT",
                help="firmware port: /dev/ttyACM0, a pty path, socket://h:p",
            )
            p.add_argument(
                "--baud", type=baud_rate, default=None, help="with --port: baud (115200)"
            )
            config_parent: Any = target
        else:
            config_parent = p
        config_parent.add_argument(
            "--config",
            type=Path,
            metavar="FILE",
            required=verb != "estop",
            help="the daemon's robot profile (file or bundled name)",
        )
        if verb == "resume":
            p.add_argument(
                "--rescan",
                action="store_true",
                help="scan the cube first and solve from what it shows (when the daemon asks)",
            )
        p.add_argument(
            "--mqtt",
            type=host_port,
            default=None,
            metavar="HOST:PORT",
            help="the broker (default: the profile's [mqtt])",
        )
        p.add_argument(
            "--timeout", type=seconds, default=None, metavar="S", help="wait for the reply (60 s)"
        )
        p.set_defaults(handler=_control, verb=verb)


def _control(args: argparse.Namespace) -> int:
    if args.verb == "estop" and args.port is not None:
        if args.mqtt is not None or args.timeout is not None:
            raise UsageError("--mqtt and --timeout go with --config, not --port")
        return asyncio.run(_estop_firmware(args.port, args.baud or 115200))
    if getattr(args, "baud", None) is not None:
        raise UsageError("--baud goes with --port, not --config")
    from robot.bundled import load_profile
    from robot.cli.daemon_client import broker_of, send_command

    config = load_profile(args.config)
    broker = args.mqtt or broker_of(config, args.verb)
    payload: dict[str, Any] = {"rescan": True} if getattr(args, "rescan", False) else {}
    reply = asyncio.run(send_command(config, broker, args.verb, payload, args.timeout or 60.0))
    print(json.dumps(reply))
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise CommandFailed(
            f"robot {config.robot.id} refused {args.verb} ({error.get('code', '?')}): "
            f"{error.get('message', 'no message')}"
        )
    return 0


async def _estop_firmware(port: str, baud: int) -> int:
    from firmware_protocol import FirmwareLink, LinkConfig, LinkError

    link = FirmwareLink(port, config=LinkConfig(baudrate=baud))
    try:
        with link_errors_reported_once():
            await link.connect()
            status = await link.estop()
    finally:
        with contextlib.suppress(LinkError):
            await link.close()
    print(
        f"{port}: stopped, firmware {status.state.name}; `cuberobot home --port {port}` clears it"
    )
    return 0
