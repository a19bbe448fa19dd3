"""The robot's web page: one page, its assets, a JSON API and live events, served by aiohttp.

Why aiohttp: an asyncio-native server that runs in the daemon's own event loop (no second
server process or ASGI layer as starlette + uvicorn would add), with streaming responses for
server-sent events, static files and a test client; it is maintained and has wheels for the
Raspberry Pi.

One source of truth: the page shows what the daemon publishes. :meth:`WebServer.publish` is a
listener of the daemon's events and status (the same calls that feed the MQTT bridge); each
connected page gets them as server-sent events. Commands go through the daemon's own command
path (:meth:`WebBackend.submit`: the validation of an MQTT command), never around it.

Security: everything that reads is open to whoever can reach the address (loopback by
default); every command needs the token (``Authorization: Bearer <token>``), compared in
constant time. With no token configured the page is read-only. The page holds no secret: the
token is typed by the user and kept in the browser's session storage.

Routes::

    GET  /                       the page
    GET  /static/<file>          its script and style (package data)
    GET  /api/status             the daemon's status (JSON)
    GET  /api/events             server-sent events: status, scan_complete, solution, ...
    GET  /api/history?page=&size=  jobs from the journal, newest first (503 and {"error": ...}
                                 when the journal cannot be read)
    GET  /api/frames             names of the last camera frames; /api/frames/<name>.png each
    POST /api/cmd/<verb>         a command (JSON body as on MQTT), token required
    GET  /api/calibration        live frames captured now (names); /api/calibration/<name>.png
                                 each, with the calibrated sticker grid drawn
    POST /api/calibration/save   re-locate the grid of face-view cameras and save it (token)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any, Protocol

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from robot.errors import JournalError
from robot.web.guard import ConnectionGuard

__all__ = ["WebBackend", "WebServer"]

logger = logging.getLogger(__name__)

#: events a slow page may fall behind by before it is disconnected (it reconnects and starts
#: from the current status)
QUEUE_LIMIT = 256
#: seconds between keep-alive comments on the event stream
HEARTBEAT_S = 15.0
#: largest command body accepted (bytes)
MAX_BODY_BYTES = 16 * 1024
#: event streams open at once at most (past it: 503; a page reconnects by itself)
MAX_STREAMS = 32
#: most jobs on one history page
MAX_PAGE_SIZE = 100
#: seconds a command's body may take to arrive once its headers did (past it: 408)
BODY_TIMEOUT_S = 10.0


class WebBackend(Protocol):
    """What the page needs from the daemon."""

    def status(self) -> dict[str, Any]: ...

    async def submit(self, verb: str, payload: bytes) -> dict[str, Any]: ...

    async def history(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]: ...

    def frames(self) -> dict[str, bytes]: ...

    async def live_frames(self) -> dict[str, bytes]: ...

    async def save_calibration(self) -> dict[str, Any]: ...


class WebServer:
    """The page's server. ``token`` empty: read-only. ``port=0`` picks a free port."""

    def __init__(
        self, backend: WebBackend, *, host: str = "127.0.0.1", port: int = 8080, token: str = ""
    ) -> None:
        self.backend = backend
        self.host = host
        self.port = port
        self._token = token
        self._queues: set[asyncio.Queue[tuple[str, str] | None]] = set()
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._live: dict[str, bytes] = {}
        self.guard = ConnectionGuard()  # bounded connections; silent ones closed
        self._server_log = _ServerLog()
        self.body_timeout_s = BODY_TIMEOUT_S
        self.app = self._build()

    # --- life cycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        self._runner = web.AppRunner(
            self.app, handle_signals=False, access_log=None, logger=self._server_log
        )
        await self._runner.setup()
        assert self._runner.server is not None
        loop = asyncio.get_running_loop()
        try:  # the listening socket is ours, so every connection passes the guard
            self._server = await loop.create_server(
                self.guard.protocol(self._runner.server), self.host, self.port
            )
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise OSError(
                exc.errno,
                f"cannot serve the web page on {self.host}:{self.port}: {exc.strerror}; set "
                "[web] host to an address of this computer and [web] port to a free port (0 "
                "picks one)",
            ) from exc
        self.port = int(self._server.sockets[0].getsockname()[1])  # the port bound (0 asked)
        logger.info(
            "web page on http://%s:%d/ (%s; %s)",
            self.host,
            self.port,
            "this computer only" if self.host in ("127.0.0.1", "::1", "localhost") else "network",
            "commands need the token" if self._token else "read-only: no token configured",
        )

    @property
    def malformed(self) -> int:
        """Requests refused since start because they were no HTTP aiohttp could parse."""
        return self._server_log.malformed

    async def stop(self) -> None:
        for queue in list(self._queues):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- events from the daemon ---------------------------------------------------------------
    def publish(self, name: str, payload: dict[str, Any]) -> None:
        """A daemon listener: pass an event (or ``status``) to every connected page."""
        data = json.dumps(payload, separators=(",", ":"), default=str)
        for queue in list(self._queues):
            try:
                queue.put_nowait((name, data))
            except asyncio.QueueFull:
                self._queues.discard(queue)  # too slow: end its stream, it reconnects
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
                queue.put_nowait(None)

    # --- the application ----------------------------------------------------------------------
    def _build(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[self.guard.middleware])
        app.add_routes(
            [
                web.get("/", self._index),
                web.get("/static/{name}", self._static),
                web.get("/api/status", self._status),
                web.get("/api/events", self._events),
                web.get("/api/history", self._history),
                web.get("/api/frames", self._frame_list),
                web.get("/api/frames/{name}.png", self._frame),
                web.post("/api/cmd/{verb}", self._command),
                web.get("/api/calibration", self._calibration),
                web.get("/api/calibration/{name}.png", self._calibration_frame),
                web.post("/api/calibration/save", self._save_calibration),
            ]
        )
        return app

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(text=_asset("index.html"), content_type="text/html")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        types = {"app.js": "text/javascript", "style.css": "text/css"}
        if name not in types:
            raise web.HTTPNotFound(text=f"no static file {name!r}")
        return web.Response(text=_asset(name), content_type=types[name])

    async def _status(self, request: web.Request) -> web.Response:
        return _json(self.backend.status())

    async def _history(self, request: web.Request) -> web.Response:
        page = _int_query(request, "page", 1, 1, 1_000_000)
        size = _int_query(request, "size", 20, 1, MAX_PAGE_SIZE)
        try:
            jobs, total = await self.backend.history((page - 1) * size, size)
        except JournalError as exc:  # damaged while the daemon runs: say so, no traceback
            logger.warning("web: history: %s", exc)
            return _json({"error": f"the job history cannot be read: {exc}"}, status=503)
        return _json({"page": page, "size": size, "total": total, "jobs": jobs})

    async def _frame_list(self, request: web.Request) -> web.Response:
        return _json({"frames": sorted(self.backend.frames())})

    async def _frame(self, request: web.Request) -> web.Response:
        png = self.backend.frames().get(request.match_info["name"])
        if png is None:
            raise web.HTTPNotFound(text="no such frame (yet): start a scan")
        return web.Response(body=png, content_type="image/png")

    async def _command(self, request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        if not self._authorised(request):
            return _json(_unauthorised(verb, bool(self._token)), status=401)
        try:
            if (request.content_length or 0) > MAX_BODY_BYTES:  # refused before it is sent
                raise web.HTTPRequestEntityTooLarge(MAX_BODY_BYTES, request.content_length or 0)
            async with asyncio.timeout(self.body_timeout_s):  # a body announced, never sent
                body = await request.read()
        except TimeoutError:
            late = _json(
                {
                    "ok": False,
                    "verb": verb,
                    "error": {
                        "code": "malformed",
                        "message": f"the body did not arrive within {self.body_timeout_s:g} s",
                    },
                },
                status=408,
            )
            late.force_close()  # the rest of the body is never read: the connection ends
            return late
        except web.HTTPRequestEntityTooLarge:
            return _json(
                {
                    "ok": False,
                    "verb": verb,
                    "error": {
                        "code": "malformed",
                        "message": f"the body is larger than {MAX_BODY_BYTES} bytes",
                    },
                },
                status=413,
            )
        reply = await self.backend.submit(verb, body)
        return _json(reply, status=200 if reply.get("ok") else 400)

    async def _calibration(self, request: web.Request) -> web.Response:
        """Capture live frames now (kept for the PNG requests that follow); their names."""
        self._live = await self.backend.live_frames()
        return _json({"frames": sorted(self._live)})

    async def _calibration_frame(self, request: web.Request) -> web.Response:
        png = self._live.get(request.match_info["name"])
        if png is None:
            raise web.HTTPNotFound(text="no live frame of that camera: GET /api/calibration first")
        return web.Response(body=png, content_type="image/png")

    async def _save_calibration(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _json(_unauthorised("calibrate", bool(self._token)), status=401)
        reply = await self.backend.save_calibration()
        return _json(reply, status=200 if reply.get("ok") else 400)

    def _authorised(self, request: web.Request) -> bool:
        if not self._token:
            return False
        given = request.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        # a header's non-ASCII bytes arrive as surrogate escapes: compared as the bytes sent
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode("utf-8", "surrogateescape"), self._token.encode()
        )

    async def _events(self, request: web.Request) -> web.StreamResponse:
        if len(self._queues) >= MAX_STREAMS:  # each open stream holds a queue: bounded
            raise web.HTTPServiceUnavailable(
                text=f"{MAX_STREAMS} pages are already watching; close one and reload",
                headers={"Retry-After": "5"},
            )
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue(QUEUE_LIMIT)
        self._queues.add(queue)
        try:
            await _send(response, "status", json.dumps(self.backend.status(), default=str))
            async for item in _drain(queue):
                if item is None:
                    await response.write(b": keep-alive\n\n")
                    continue
                await _send(response, *item)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._queues.discard(queue)
        return response


class _ServerLog:
    """The logger aiohttp's request handler is given. A request it cannot parse (a bad
    request line, both Content-Length and chunked, an unknown Content-Encoding, a line past
    8 kB) is the client's fault and already answered 400 with the reason: one warning line
    without a traceback, the first and then every 1000th (aiohttp logged each as an ERROR
    with a traceback, so any reader of the page could fill the daemon's log). Anything else
    (a fault of a handler) is logged as aiohttp logs it."""

    def __init__(self) -> None:
        self._aiohttp = logging.getLogger("aiohttp.server")
        self.malformed = 0

    def exception(self, msg: str, *args: object, exc_info: object = True, **kw: Any) -> None:
        if not isinstance(exc_info, HttpProcessingError):
            self._aiohttp.exception(msg, *args, exc_info=exc_info, **kw)  # type: ignore[arg-type]
            return
        self.malformed += 1
        level = logging.WARNING if self.malformed % 1000 == 1 else logging.DEBUG
        peer = args[0] if args else "?"
        reason = exc_info.message.strip().splitlines()[0] if exc_info.message.strip() else ""
        logger.log(
            level,
            "web: malformed request from %s, refused (HTTP %d: %s); %d so far",
            peer,
            exc_info.code,
            reason[:200],
            self.malformed,
        )

    def __getattr__(self, name: str) -> Any:  # debug() and anything else aiohttp asks for
        return getattr(self._aiohttp, name)


async def _drain(
    queue: asyncio.Queue[tuple[str, str] | None],
) -> AsyncIterator[tuple[str, str] | None]:
    """Items of ``queue``; None every :data:`HEARTBEAT_S` without one; ends on a None put."""
    while True:
        try:
            async with asyncio.timeout(HEARTBEAT_S):
                item = await queue.get()
        except TimeoutError:
            yield None
            continue
        if item is None:
            return
        yield item


async def _send(response: web.StreamResponse, name: str, data: str) -> None:
    await response.write(f"event: {name}\ndata: {data}\n\n".encode())


def _unauthorised(verb: str, token_configured: bool) -> dict[str, Any]:
    reason = (
        "a command needs the token (Authorization: Bearer <token>)"
        if token_configured
        else "no token is configured: the page is read-only"
    )
    return {"ok": False, "verb": verb, "error": {"code": "unauthorised", "message": reason}}


def _json(payload: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(payload, status=status, dumps=lambda v: json.dumps(v, default=str))


def _int_query(request: web.Request, name: str, default: int, lo: int, hi: int) -> int:
    text = request.query.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a whole number, not {text[:20]!r}") from None
    if not lo <= value <= hi:
        raise web.HTTPBadRequest(text=f"{name} must be between {lo} and {hi}, not {value}")
    return value


def _asset(name: str) -> str:
    return resources.files("robot.web").joinpath("static", name).read_text(encoding="utf-8")
