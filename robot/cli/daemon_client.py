"""Talking to a running daemon over MQTT, for the CLI commands that ask it to act
(``home --config``, ``resume``, ``abort``, ``estop --config``).

The broker is the profile's ``[mqtt]`` (its embedded broker's address for ``host = ""``) unless
``--mqtt`` names one. Before sending, the robot's retained ``availability`` must say ``online``,
so that a robot that is not running never acts later on a stale command. The command goes out as
``{"id": <fresh>, "source": "cli", ...}`` on ``<base>/<robot id>/cmd/<verb>`` (robot.commands);
the reply with that id on ``cmd/<verb>/reply`` is returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import uuid
from typing import TYPE_CHECKING, Any

from robot.cli.exits import CommandFailed, UsageError

if TYPE_CHECKING:
    import aiomqtt

    from robot.config import RobotConfig

__all__ = ["AVAILABILITY_WAIT_S", "broker_of", "send_command"]

logger = logging.getLogger(__name__)

#: How long to wait for the robot's retained ``availability`` before calling it absent.
AVAILABILITY_WAIT_S = 2.0


def broker_of(config: RobotConfig, verb: str) -> tuple[str, int]:
    """The broker the daemon of ``config`` uses (its ``[mqtt]`` section)."""
    mq = config.mqtt
    where = config.source or "the profile"
    if not mq.enabled:
        direct = (
            f"stop it and run `cuberobot {verb} --port {config.serial.url}`"
            if verb in ("home", "estop")
            else "enable [mqtt] to send it commands"
        )
        raise UsageError(
            f"{where}: [mqtt] enabled = false, so the daemon takes no commands; {direct}"
        )
    if not mq.embedded:
        return mq.host, mq.port
    if mq.embedded_port == 0:
        raise UsageError(
            f"{where}: the daemon's embedded broker listens on a port chosen at start "
            "([mqtt] embedded_port = 0); give --mqtt HOST:PORT as `cuberobot run` printed it"
        )
    return mq.embedded_host, mq.embedded_port


async def send_command(
    config: RobotConfig,
    broker: tuple[str, int],
    verb: str,
    payload: dict[str, Any],
    timeout_s: float,
) -> dict[str, Any]:
    """Send ``verb`` with ``payload`` to the robot's daemon; return its reply."""
    import aiomqtt

    host, port = broker
    try:
        async with _client(config, host, port) as client:
            await _require_online(client, config, f"{host}:{port}")
            return await _request(client, config, verb, payload, timeout_s)
    except aiomqtt.MqttError as exc:
        raise CommandFailed(
            f"cannot reach the MQTT broker {host}:{port}: {exc}; check [mqtt] in "
            f"{config.source or 'the profile'} or give --mqtt HOST:PORT"
        ) from exc


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


async def _request(
    client: aiomqtt.Client,
    config: RobotConfig,
    verb: str,
    payload: dict[str, Any],
    timeout_s: float,
) -> dict[str, Any]:
    """Publish the command and return the reply that carries its id."""
    command_id = f"cli-{uuid.uuid4().hex[:16]}"
    reply_topic = config.topic("cmd", verb, "reply")
    await client.subscribe(reply_topic, qos=1)
    body = json.dumps({**payload, "id": command_id, "source": "cli"})
    await client.publish(config.topic("cmd", verb), body, qos=1)
    logger.info(
        "sent %s (id %s); waiting up to %g s for %s", verb, command_id, timeout_s, reply_topic
    )
    try:
        async with asyncio.timeout(timeout_s):
            async for message in client.messages:
                reply = _json_object(message.payload)
                if str(message.topic) == reply_topic and reply.get("id") == command_id:
                    return reply
    except TimeoutError:
        pass
    raise CommandFailed(
        f"robot {config.robot.id} sent no reply to {verb} (id {command_id}) on {reply_topic} "
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
