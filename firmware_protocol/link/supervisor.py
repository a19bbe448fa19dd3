"""The port under the link: opening it with pyserial-asyncio-fast, feeding its bytes to the
core, and the reconnect policy (back-off, the connect and reconnect deadlines)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

import serial
import serial_asyncio_fast

from firmware_protocol.codec import Frame, FrameDecoder
from firmware_protocol.errors import CorruptFrame, LinkError, LinkTimeoutError, PortOpenError
from firmware_protocol.link.data import LinkConfig
from firmware_protocol.tasks import raise_if_cancelling

__all__ = ["GiveUp", "HandshakeError", "PortDown", "ReconnectPolicy", "Retry", "SerialPort"]

logger = logging.getLogger(__name__)

#: Longest wait for the port to open, or to confirm that it closed (seconds).
_PORT_OPEN_TIMEOUT_S = 2.0
_PORT_CLOSE_TIMEOUT_S = 2.0
_JITTER = (0.8, 1.2)

OnItem = Callable[[Frame | CorruptFrame], None]


class HandshakeError(Exception):
    """Internal: the port opened but the firmware never answered HELLO."""


class _PortProtocol(asyncio.Protocol):
    def __init__(self, on_item: OnItem, on_lost: Callable[[Exception | None], None]) -> None:
        self._on_item = on_item
        self._on_lost = on_lost
        self.decoder = FrameDecoder()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            self._on_item(item)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        self._on_lost(exc)


def _quiet_port_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Install (once per loop, chained to the handler before it) an exception handler that
    logs a port's I/O error in one line: the transport reports a failed write to the loop's
    handler with a traceback *and* to the protocol, and the link already reports the loss
    ("port lost (...); reconnecting"). Every other context goes to the previous handler."""
    previous = loop.get_exception_handler()
    if getattr(previous, "_cuberobot_port_errors", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        exc = context.get("exception")
        if isinstance(context.get("protocol"), _PortProtocol) and isinstance(
            exc, (OSError, serial.SerialException)
        ):
            logger.debug("%s: %s", context.get("message"), exc)
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler._cuberobot_port_errors = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


class SerialPort:
    """One open port at a time; bytes and loss of the current one go to the callbacks (those of
    a port already replaced are dropped)."""

    def __init__(self, url: str, baudrate: int) -> None:
        self.url = url
        self.baudrate = baudrate
        self._generation = 0
        self._transport: asyncio.WriteTransport | None = None
        self._protocol: _PortProtocol | None = None

    @property
    def is_open(self) -> bool:
        return self._transport is not None and not self._transport.is_closing()

    async def open(self, on_item: OnItem, on_lost: Callable[[Exception | None], None]) -> None:
        """Open the port (raises ``OSError``, ``SerialException``, ``TimeoutError``)."""
        self._generation += 1
        generation = self._generation

        def item(frame: Frame | CorruptFrame) -> None:
            if generation == self._generation:
                on_item(frame)

        def lost(exc: Exception | None) -> None:
            if generation == self._generation:
                self._transport = None
                on_lost(exc)

        loop = asyncio.get_running_loop()
        _quiet_port_errors(loop)
        protocol = _PortProtocol(item, lost)
        async with asyncio.timeout(_PORT_OPEN_TIMEOUT_S):
            transport, _ = await serial_asyncio_fast.create_serial_connection(
                loop, lambda: protocol, self.url, baudrate=self.baudrate
            )
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport, self._protocol = transport, protocol
        if urllib.parse.urlparse(self.url).scheme != "socket":
            ser = getattr(transport, "serial", None)
            if ser is not None:
                with contextlib.suppress(OSError, serial.SerialException):
                    ser.reset_input_buffer()  # stale bytes from before we opened
        logger.debug("%s: port open", self.url)

    def write(self, data: bytes) -> None:
        if self.is_open:
            assert self._transport is not None
            self._transport.write(data)

    async def close(self) -> None:
        """Close the current port (if any) and wait until it is closed."""
        transport, protocol = self._transport, self._protocol
        self._generation += 1  # what the old port still says is dropped
        self._transport = self._protocol = None
        if transport is None or protocol is None:
            return
        transport.close()
        try:
            async with asyncio.timeout(_PORT_CLOSE_TIMEOUT_S):
                await asyncio.shield(protocol.lost)
        except TimeoutError:
            pass
        except asyncio.CancelledError:  # (``lost`` cancelled: the port is gone all the same)
            raise_if_cancelling()


@dataclass(frozen=True, slots=True)
class Retry:
    delay_s: float


@dataclass(frozen=True, slots=True)
class GiveUp:
    """The first connection failed for good (``connect()`` raises ``error``)."""

    error: LinkError


@dataclass(frozen=True, slots=True)
class PortDown:
    """The port has been away too long: fail what waits, keep reconnecting."""

    seconds: float


class ReconnectPolicy:
    """When to try the port again, and when to give up on what is waiting. Pure: time is an
    argument; jitter comes from ``rng``."""

    def __init__(self, port: str, config: LinkConfig, rng: random.Random, now: float) -> None:
        self.port = port
        self.config = config
        self._rng = rng
        self._began = now
        self.lost_at: float | None = None
        self._attempt = 0
        self.down = False

    def ended(self, now: float, session_opened_at: float) -> None:
        """A connection ended; the loss counts from now unless no session opened since the
        last loss."""
        if self.lost_at is None or session_opened_at > self.lost_at:
            self.lost_at = now

    def back_up(self) -> None:
        """A session opened (the firmware answered): the link is usable again and the back-off
        starts again. A port that opens but fails before any answer (a flapping cable, a
        device that is not our firmware) keeps doubling its back-off."""
        self.down = False
        self._attempt = 0

    def next_step(
        self, now: float, connecting: bool, problem: Exception | None
    ) -> list[Retry | GiveUp | PortDown]:
        """After a failed or ended connection: what to do (the last step is a :class:`Retry`
        unless the first connection is given up)."""
        cfg = self.config
        steps: list[Retry | GiveUp | PortDown] = []
        if connecting:
            if now - self._began > cfg.connect_timeout_s:
                return [GiveUp(self._connect_error(problem))]
        elif (
            self.lost_at is not None
            and not self.down
            and now - self.lost_at > cfg.reconnect_timeout_s
        ):
            self.down = True
            steps.append(PortDown(now - self.lost_at))
        if self.lost_at is None:
            self.lost_at = now
        delay = min(cfg.reconnect_backoff_min_s * (2**self._attempt), cfg.reconnect_backoff_max_s)
        self._attempt += 1
        steps.append(Retry(delay * self._rng.uniform(*_JITTER)))
        return steps

    def _connect_error(self, problem: Exception | None) -> LinkError:
        err: LinkError
        if isinstance(problem, HandshakeError):
            err = LinkTimeoutError(
                f"no answer from the firmware on {self.port} within "
                f"{self.config.connect_timeout_s:g} s; check that the robot is powered, runs "
                f"cuberobot firmware and uses {self.config.baudrate} baud",
                self.port,
            )
        else:
            err = PortOpenError(
                f"cannot open {self.port}: {problem}; check the device path and that the robot "
                "is plugged in (or start `cuberobot firmware-sim`)",
                self.port,
            )
        err.__cause__ = problem
        return err
