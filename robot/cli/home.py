"""``cuberobot home``: home the motors, which also clears a latched stop or fault.

The firmware link's operator messages end with "run `cuberobot home`" after an emergency stop,
a motor fault or a firmware reset. Two forms (a contract; scripts call them):

* ``cuberobot home --port PORT [--baud N] [--connect-timeout S]`` — opens the firmware link
  itself (``/dev/ttyACM0``, a pty path or ``socket://host:port``, as ``cuberobot send``) and
  homes the firmware directly; prints ``PORT: homed, firmware IDLE``. Use it when no daemon
  holds the port.
* ``cuberobot home --config FILE [--mqtt HOST:PORT] [--timeout S]`` — asks the robot's running
  daemon to home, over MQTT: publishes ``{"id": ..., "source": "cli"}`` on
  ``<base>/<robot id>/cmd/home`` (:mod:`robot.commands`) and prints the reply from
  ``cmd/home/reply`` with that id, as one line of JSON. The broker is the profile's ``[mqtt]``
  (its embedded broker's address for ``host = ""``) unless ``--mqtt`` names one. Before
  sending, the robot's retained ``availability`` must say ``online``, so that a robot that is
  not running never homes later from a stale command.

Exit codes: 0 homed; 1 the firmware or the daemon could not home (the reply's message, or the
link error, on stderr), the broker is unreachable or the robot offline or silent; 2 usage or
a profile that cannot be used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robot.cli.args import baud_rate, host_port, seconds
from robot.cli.exits import CommandFailed, UsageError
from robot.cli.output import link_errors_reported_once

if TYPE_CHECKING:
    pass

__all__ = ["register"]

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "home",
        help="home the motors (clears a stop), directly or through the running daemon",
        description="Home the motors: over the firmware link (--port) or through the robot's "
        "daemon over MQTT (--config).",
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--port", metavar="PORT", help="firmware port: /dev/ttyACM0, a pty path, socket://h:p"
    )
    target.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the daemon's robot profile (file or bundled name)",
    )
    p.add_argument("--baud", type=baud_rate, default=None, help="with --port: baud (115200)")
    p.add_argument(
        "--connect-timeout", type=seconds, default=None, metavar="S", help="with --port: wait (5 s)"
    )
    p.add_argument(
        "--mqtt",
        type=host_port,
        default=None,
        metavar="HOST:PORT",
        help="with --config: the broker (default: the profile's [mqtt])",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="S",
        help="with --config: wait (60 s)",
    )
    p.set_defaults(handler=_home)


def _home(args: argparse.Namespace) -> int:
    if args.port is not None:
        if args.mqtt is not None or args.timeout is not None:
            raise UsageError("--mqtt and --timeout go with --config, not --port")
        return asyncio.run(_home_firmware(args.port, args.baud or 115200, args.connect_timeout))
    if args.baud is not None or args.connect_timeout is not None:
        raise UsageError("--baud and --connect-timeout go with --port, not --config")
    from robot.bundled import load_profile
    from robot.cli.daemon_client import broker_of, send_command

    config = load_profile(args.config)
    broker = args.mqtt or broker_of(config, "home")
    reply = asyncio.run(send_command(config, broker, "home", {}, args.timeout or 60.0))
    print(json.dumps(reply))
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise CommandFailed(
            f"robot {config.robot.id} did not home ({error.get('code', '?')}): "
            f"{error.get('message', 'no message')}"
        )
    return 0


# --- directly over the firmware link ------------------------------------------------------------


async def _home_firmware(port: str, baud: int, connect_timeout_s: float | None) -> int:
    from firmware_protocol import FirmwareLink, LinkConfig, LinkError

    config = LinkConfig(baudrate=baud, connect_timeout_s=connect_timeout_s or 5.0)
    link = FirmwareLink(port, config=config)
    try:
        with link_errors_reported_once():
            await link.connect()
            status = await link.home()
    finally:
        with contextlib.suppress(LinkError):
            await link.close()
    print(f"{port}: homed, firmware {status.state.name}")
    return 0
