"""The embedded MQTT broker: with no broker configured, the daemon brings its own.

A dashboard can then connect to the robot with nothing else installed. The broker is amqtt (an
asyncio MQTT 3.1.1 broker on PyPI), bound to localhost by default and run in the daemon's own
event loop.

Why amqtt and not a broker of our own: measured here (Python 3.11, aiomqtt 2.5 clients, one
core), amqtt 0.12 starts in 11 ms, delivers 1000 QoS-1 publishes to a subscriber in 0.39 s,
delivers retained messages and last wills (an abruptly closed client's will arrives within
5 ms), and raises no warnings under ``-W error``. That is ample for a robot that publishes a
few messages a second, and it is a maintained implementation of the whole protocol (sessions,
QoS 2, keep-alive) where ours would be a partial one. The cost is its dependency set (typer,
transitions, websockets, ...), acceptable on a Raspberry Pi class board. A production
installation can point ``[mqtt] host`` at Mosquitto instead.

Access: with no credentials configured the broker accepts anonymous clients, and the profile
may only bind it to a loopback address (``config check`` refuses anything else). With
``[mqtt] username`` and a password configured, every client must present exactly those
credentials (compared in constant time); anonymous clients and wrong passwords are refused at
CONNECT. A second, read-only login (``[mqtt] viewer_username`` and its password) may subscribe
but never publish: a dashboard that should watch but not command the robot uses it. With an
external broker (Mosquitto), the same split is its ACL file: see docs/security.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from robot.errors import BrokerError

__all__ = ["Credentials", "EmbeddedBroker", "free_port"]

logger = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Credentials:
    """The one username and password the embedded broker accepts."""

    username: str
    password: str

    def __repr__(self) -> str:  # never print the password
        return f"Credentials(username={self.username!r}, password=***)"


class _DemoteErrors(logging.Filter):
    """Turns ERROR records into DEBUG ones, kept only where DEBUG is logged (``-vv``)."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return self.logger.isEnabledFor(record.levelno)


@contextlib.contextmanager
def _failure_logged_as_debug() -> Iterator[None]:
    """amqtt logs a failed start (a port in use) with its traceback at ERROR, then raises; the
    raise becomes one :class:`BrokerError` with the operator's message, so amqtt's own record
    is kept at DEBUG instead of printing a traceback before that message."""
    amqtt_logger = logging.getLogger("amqtt.broker")
    demote = _DemoteErrors(amqtt_logger)
    amqtt_logger.addFilter(demote)
    try:
        yield
    finally:
        amqtt_logger.removeFilter(demote)


def _auth_plugins(credentials: Credentials | None, viewer: Credentials | None) -> dict[str, Any]:
    if credentials is None:
        return {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}}
    users = {credentials.username: credentials.password}
    if viewer is not None:
        users[viewer.username] = viewer.password
    # amqtt imports the plugins by name (robot/broker_auth.py), so amqtt stays unimported until
    # a broker starts
    return {
        "robot.broker_auth.CredentialsAuthPlugin": {"users": users},
        "robot.broker_auth.ReadOnlyUsersPlugin": {
            "read_only": [viewer.username] if viewer is not None else []
        },
    }


class EmbeddedBroker:
    """An MQTT broker in this event loop. ``port=0`` picks a free port (see :attr:`port`).
    With ``credentials`` every client must log in with them (or with ``viewer``'s, read-only)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        *,
        credentials: Credentials | None = None,
        viewer: Credentials | None = None,
    ) -> None:
        if viewer is not None and credentials is None:
            raise ValueError("a read-only viewer login needs the main credentials too")
        self.host = host
        self.requested_port = port
        self.port = port
        self.credentials = credentials
        self.viewer = viewer
        self._broker: Any = None

    async def start(self) -> None:
        from amqtt.broker import Broker

        attempts = 3 if self.requested_port == 0 else 1
        last: Exception | None = None
        for _ in range(attempts):
            port = free_port(self.host) if self.requested_port == 0 else self.requested_port
            config = {
                "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{port}"}},
                "plugins": _auth_plugins(self.credentials, self.viewer),
            }
            broker = Broker(config)
            try:
                with _failure_logged_as_debug():
                    await broker.start()
            except Exception as exc:  # amqtt wraps OSError in its own BrokerError
                last = exc
                with contextlib.suppress(Exception):
                    await broker.shutdown()
                continue
            self._broker = broker
            self.port = port
            logger.info(
                "embedded MQTT broker listening on %s:%d (%s)",
                self.host,
                port,
                "login required" if self.credentials else "anonymous clients allowed",
            )
            return
        raise BrokerError(
            f"cannot start the embedded MQTT broker on {self.host}:{self.requested_port}: "
            f"{last}; another broker may be using the port: set [mqtt] embedded_port to a free "
            "port (0 picks one), or point [mqtt] host at that broker"
        ) from last

    async def stop(self) -> None:
        broker, self._broker = self._broker, None
        if broker is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await broker.shutdown()
            logger.info("embedded MQTT broker stopped")

    @property
    def running(self) -> bool:
        return self._broker is not None

    async def __aenter__(self) -> EmbeddedBroker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
