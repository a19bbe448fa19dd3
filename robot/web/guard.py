"""Connections to the web page, bounded in number and in how long they may say nothing useful.

aiohttp closes a connection that sends no byte at all, but one byte resets that: a reader who
needs no token could open connections that send half a request line and then wait (slowloris),
each holding a file descriptor of the daemon for ever (measured: 200 such connections were all
still open after 130 s; with systemd's default of 1,024 descriptors a few hundred leave the
daemon unable to open its journal, its port or a camera). Here every connection:

* counts against :data:`MAX_CONNECTIONS` open at once; past it a new one is closed at once
  (the event streams have their own, lower bound);
* must have sent a whole request (its headers) within :data:`HEADER_TIMEOUT_S` of opening, or
  of the end of its previous request, else it is closed. A request being served (an event
  stream, a command waiting for the daemon) is not timed here.

:class:`ConnectionGuard` wraps aiohttp's protocol objects (the asyncio ``Protocol`` interface
only) and provides the middleware that marks a request's arrival.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

__all__ = ["HEADER_TIMEOUT_S", "MAX_CONNECTIONS", "ConnectionGuard"]

logger = logging.getLogger(__name__)

#: Connections open at once (pages, their event streams, API clients).
MAX_CONNECTIONS = 128
#: Seconds a connection may take to send a request's headers.
HEADER_TIMEOUT_S = 10.0

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ConnectionGuard:
    """Counts connections and closes the silent ones (see the module docstring)."""

    def __init__(
        self, *, max_connections: int = MAX_CONNECTIONS, header_timeout_s: float = HEADER_TIMEOUT_S
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self.open = 0
        self.refused = 0
        self.timed_out = 0
        self._deadlines: dict[asyncio.BaseTransport, asyncio.TimerHandle] = {}

    def protocol(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server``: ``make``'s protocols, guarded."""
        return lambda: _Guarded(self, make())

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A request arrived whole: stop its connection's clock until it has been served."""
        transport = request.transport
        if transport is not None:
            self._disarm(transport)
        try:
            return await handler(request)
        finally:
            if transport is not None and not transport.is_closing():
                self._arm(transport)

    # --- the clock ----------------------------------------------------------------------------
    def _arm(self, transport: asyncio.BaseTransport) -> None:
        self._disarm(transport)
        loop = asyncio.get_running_loop()
        self._deadlines[transport] = loop.call_later(self.header_timeout_s, self._expire, transport)

    def _disarm(self, transport: asyncio.BaseTransport) -> None:
        handle = self._deadlines.pop(transport, None)
        if handle is not None:
            handle.cancel()

    def _expire(self, transport: asyncio.BaseTransport) -> None:
        self._deadlines.pop(transport, None)
        self.timed_out += 1
        logger.debug(
            "web: a connection sent no whole request in %g s: closed", self.header_timeout_s
        )
        transport.close()

    # --- connections --------------------------------------------------------------------------
    def _admit(self, transport: asyncio.BaseTransport) -> bool:
        if self.open >= self.max_connections:
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                logger.warning(
                    "web: %d connections are open, the most allowed; closing new ones (%d so far)",
                    self.open,
                    self.refused,
                )
            transport.close()  # nothing was read from it: closed at once
            return False
        self.open += 1
        self._arm(transport)
        return True

    def _gone(self, transport: asyncio.BaseTransport) -> None:
        self.open -= 1
        self._disarm(transport)


class _Guarded(asyncio.Protocol):
    """One connection's protocol, forwarded to aiohttp's once the guard admitted it."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._guard._admit(transport):
            self._transport = transport
            self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._guard._gone(self._transport)
            self._transport = None
            self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._transport is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._transport is not None else None

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def __getattr__(self, name: str) -> Any:  # anything else aiohttp may ask of its protocol
        return getattr(self._inner, name)
