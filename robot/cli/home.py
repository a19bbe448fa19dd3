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
import ssl
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robot.cli.args import baud_rate, host_port, seconds
from robot.cli.exits import CommandFailed, UsageError
from robot.cli.output import link_errors_reported_once

if TYPE_CHECKING:
    import aiomqtt

    from robot.config import RobotConfig

__all__ = ["AVAILABILITY_WAIT_S", "register"]

logger = logging.getLogger(__name__)

#: How long to wait for the robot's retained ``availability`` before calling it absent.
AVAILABILITY_WAIT_S = 2.0


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

    config = load_profile(args.config)
    broker = args.mqtt or _broker_of(config)
    reply = asyncio.run(_home_daemon(config, broker, args.timeout or 60.0))
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


# --- through the daemon, over MQTT --------------------------------------------------------------


def _broker_of(config: RobotConfig) -> tuple[str, int]:
    """The broker the daemon of ``config`` uses (its ``[mqtt]`` section)."""
    mq = config.mqtt
    where = config.source or "the profile"
    if not mq.enabled:
        raise UsageError(
            f"{where}: [mqtt] enabled = false, so the daemon takes no commands; stop it and run "
            f"`cuberobot home --port {config.serial.url}`"
        )
    if not mq.embedded:
        return mq.host, mq.port
    if mq.embedded_port == 0:
        raise UsageError(
            f"{where}: the daemon's embedded broker listens on a port chosen at start "
            "([mqtt] embedded_port = 0); give --mqtt HOST:PORT as `cuberobot run` printed it"
        )
    return mq.embedded_host, mq.embedded_port


def _tls(config: RobotConfig) -> aiomqtt.TLSParameters | None:
    import aiomqtt

    tls = config.mqtt.tls
    if not tls.enabled:
        return None
    resolve = config.resolve
    return aiomqtt.TLSParameters(
        ca_certs=str(resolve(tls.ca_file)) if tls.ca_file else None,
        certfile=str(resolve(tls.cert_file)) if tls.cert_file else None,
        keyfile=str(resolve(tls.key_file)) if tls.key_file else None,
        cert_reqs=ssl.CERT_NONE if tls.insecure else ssl.CERT_REQUIRED,
    )


def _client(config: RobotConfig, host: str, port: int) -> aiomqtt.Client:
    """A short-lived client with the profile's credentials (and no last will: this client
    speaks for the operator, not for the robot)."""
    import aiomqtt

    tls = _tls(config)
    return aiomqtt.Client(
        host,
        port,
        identifier=f"cuberobot-cli-{uuid.uuid4().hex[:12]}",
        username=config.mqtt.username or None,
        password=config.mqtt_password(),
        tls_params=tls,
        tls_insecure=config.mqtt.tls.insecure if tls is not None else None,
        timeout=10.0,
    )


async def _home_daemon(
    config: RobotConfig, broker: tuple[str, int], timeout_s: float
) -> dict[str, Any]:
    """Send ``home`` to the robot's daemon; return its reply."""
    import aiomqtt

    host, port = broker
    try:
        async with _client(config, host, port) as client:
            await _require_online(client, config, f"{host}:{port}")
            return await _request(client, config, timeout_s)
    except aiomqtt.MqttError as exc:
        raise CommandFailed(
            f"cannot reach the MQTT broker {host}:{port}: {exc}; check [mqtt] in "
            f"{config.source or 'the profile'} or give --mqtt HOST:PORT"
        ) from exc


async def _require_online(client: aiomqtt.Client, config: RobotConfig, address: str) -> None:
    """Wait for the robot's retained availability; fail unless it says ``online``."""
    topic = config.topic("availability")
    await client.subscribe(topic, qos=1)
    state = None
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(AVAILABILITY_WAIT_S):
            async for message in client.messages:
                if str(message.topic) == topic:
                    state = _text(message.payload)
                    break
    await client.unsubscribe(topic)
    if state == "online":
        return
    run = f"`cuberobot run --config {config.source or 'FILE'}`"
    if state is None:
        raise CommandFailed(
            f"no robot {config.robot.id} on the broker {address} (nothing retained on {topic} "
            f"within {AVAILABILITY_WAIT_S:g} s); start its daemon with {run}, or check the robot "
            "id and base_topic in the profile"
        )
    raise CommandFailed(
        f"robot {config.robot.id} is {state} ({topic} on {address}); start its daemon with {run}"
    )


async def _request(client: aiomqtt.Client, config: RobotConfig, timeout_s: float) -> dict[str, Any]:
    """Publish the command and return the reply that carries its id."""
    command_id = f"cli-{uuid.uuid4().hex[:16]}"
    reply_topic = config.topic("cmd", "home", "reply")
    await client.subscribe(reply_topic, qos=1)
    payload = json.dumps({"id": command_id, "source": "cli"})
    await client.publish(config.topic("cmd", "home"), payload, qos=1)
    logger.info("sent home (id %s); waiting up to %g s for %s", command_id, timeout_s, reply_topic)
    try:
        async with asyncio.timeout(timeout_s):
            async for message in client.messages:
                reply = _json_object(message.payload)
                if str(message.topic) == reply_topic and reply.get("id") == command_id:
                    return reply
    except TimeoutError:
        pass
    raise CommandFailed(
        f"robot {config.robot.id} sent no reply to home (id {command_id}) on {reply_topic} "
        f"within {timeout_s:g} s; check its log, or give more time with --timeout"
    )


def _text(payload: Any) -> str:
    raw = payload if isinstance(payload, bytes | bytearray) else str(payload).encode()
    return bytes(raw).decode("utf-8", errors="replace").strip()


def _json_object(payload: Any) -> dict[str, Any]:
    try:
        value = json.loads(_text(payload))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
