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
but never publish (nor leave a last will: it is dropped at CONNECT): a dashboard that should
watch but not command the robot uses it. With an
external broker (Mosquitto), the same split is its ACL file: see docs/security.md.

The listening socket is ours, not amqtt's (an amqtt "external" listener): a client must send its
whole CONNECT within :data:`CONNECT_TIMEOUT_S` (at most :data:`MAX_CONNECT_BYTES`) and at most
:data:`MAX_CLIENTS` connections are open at once; past either the connection is closed. amqtt
itself waited for a CONNECT for ever: 300 connections that sent one byte each were all still
open after 60 s, each holding one of the daemon's file descriptors (a login is checked only
once the CONNECT has arrived, so a login did not protect against this).
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

__all__ = [
    "CONNECT_TIMEOUT_S",
    "MAX_CLIENTS",
    "MAX_CONNECT_BYTES",
    "Credentials",
    "EmbeddedBroker",
    "free_port",
]

logger = logging.getLogger(__name__)

#: Seconds a new connection has to send its whole CONNECT packet.
CONNECT_TIMEOUT_S = 10.0
#: The largest CONNECT read (bytes): an id, a login and a last will fit in far less.
MAX_CONNECT_BYTES = 64 * 1024
#: Connections open at once (dashboards, the CLI's commands, the daemon's own bridge).
MAX_CLIENTS = 64
_LISTENER = "default"


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
    read_only = [viewer.username] if viewer is not None else []
    # amqtt imports the plugins by name (robot/broker_auth.py), so amqtt stays unimported until
    # a broker starts
    return {
        "robot.broker_auth.CredentialsAuthPlugin": {"users": users, "read_only": read_only},
        "robot.broker_auth.ReadOnlyUsersPlugin": {"read_only": read_only},
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
        self._server: asyncio.Server | None = None
        self._waiting: set[asyncio.StreamWriter] = set()
        self.clients = 0  # connections open now
        self.refused = 0  # closed at once: MAX_CLIENTS were open
        self.dropped = 0  # closed without a whole CONNECT in time

    async def start(self) -> None:
        from amqtt.broker import Broker

        try:
            server = await asyncio.start_server(self._accept, self.host, self.requested_port)
        except OSError as exc:
            raise BrokerError(
                f"cannot start the embedded MQTT broker on {self.host}:{self.requested_port}: "
                f"{exc.strerror}; another broker may be using the port: set [mqtt] embedded_port "
                "to a free port (0 picks one), or point [mqtt] host at that broker"
            ) from exc
        port = int(server.sockets[0].getsockname()[1])
        config = {  # an external listener: connections come from our socket (_accept)
            "listeners": {_LISTENER: {"type": "external", "bind": f"{self.host}:{port}"}},
            "plugins": _auth_plugins(self.credentials, self.viewer),
        }
        broker = Broker(config)
        try:
            with _failure_logged_as_debug():
                await broker.start()
        except Exception as exc:
            server.close()
            with contextlib.suppress(Exception):
                await broker.shutdown()
            raise BrokerError(f"cannot start the embedded MQTT broker: {exc}") from exc
        self._broker, self._server, self.port = broker, server, port
        logger.info(
            "embedded MQTT broker listening on %s:%d (%s)",
            self.host,
            port,
            "login required" if self.credentials else "anonymous clients allowed",
        )

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._waiting):  # still sending their CONNECT: end them
            writer.close()
        broker, self._broker = self._broker, None
        if broker is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await broker.shutdown()
            logger.info("embedded MQTT broker stopped")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client: its CONNECT read within limits, then the session handed to amqtt."""
        from amqtt.adapters import StreamWriterAdapter

        if self.clients >= MAX_CLIENTS or self._broker is None:
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                logger.warning(
                    "embedded MQTT broker: %d clients connected, the most allowed; closing new "
                    "connections (%d so far)",
                    self.clients,
                    self.refused,
                )
            writer.close()
            return
        self.clients += 1
        self._waiting.add(writer)
        try:
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT_S):
                    head = await _read_connect(reader)
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
                self.dropped += 1
                logger.debug("embedded MQTT broker: no CONNECT from a client (%r): closed", exc)
                writer.close()
                return
            finally:
                self._waiting.discard(writer)
            broker = self._broker
            if broker is None:
                writer.close()
                return
            await broker.external_connected(
                _Replay(reader, head), StreamWriterAdapter(writer), _LISTENER
            )
        except Exception:
            logger.warning("embedded MQTT broker: a client session failed", exc_info=True)
            writer.close()
        finally:
            self.clients -= 1

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


async def _read_connect(reader: asyncio.StreamReader) -> bytes:
    """The first packet, whole (fixed header, remaining length, body); ``ValueError`` if it is
    not a CONNECT or is longer than :data:`MAX_CONNECT_BYTES`."""
    first = await reader.readexactly(1)
    if first[0] >> 4 != 1:  # MQTT packet type 1: CONNECT
        raise ValueError(f"first packet of type {first[0] >> 4}, not CONNECT")
    length, shift, encoded = 0, 0, b""
    while True:  # the remaining length: at most four bytes of seven bits
        byte = await reader.readexactly(1)
        encoded += byte
        length |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            break
        shift += 7
        if len(encoded) == 4:
            raise ValueError("remaining length longer than four bytes")
    if length > MAX_CONNECT_BYTES:
        raise ValueError(f"CONNECT of {length} bytes")
    return first + encoded + await reader.readexactly(length)


class _Replay:
    """amqtt's stream reader adapter, serving the CONNECT already read before the rest."""

    def __init__(self, reader: asyncio.StreamReader, head: bytes) -> None:
        self._reader = reader
        self._head = head

    async def read(self, n: int = -1) -> bytes:
        if not self._head:
            return await (self._reader.read(n) if n == -1 else self._reader.readexactly(n))
        if n == -1:
            data, self._head = self._head, b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        if len(data) < n:
            data += await self._reader.readexactly(n - len(data))
        return data

    def feed_eof(self) -> None:
        self._reader.feed_eof()
