"""The web page's server against an in-memory backend: pages and assets, read-only API,
commands only with the token and through the backend's validation, live events."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from robot.commands import error_reply, ok_reply, parse_command
from robot.errors import CommandError
from robot.web import WebServer

TOKEN = "t0ken-for-tests"
PNG = b"\x89PNG\r\n\x1a\n fake"


class Backend:
    def __init__(self) -> None:
        self.commands: list[tuple[str, bytes]] = []
        self.lives = 0
        self.saved = 0
        self.state = {"state": "IDLE", "robot_id": "sim", "progress": 0}

    def status(self) -> dict[str, Any]:
        return dict(self.state)

    async def submit(self, verb: str, payload: bytes) -> dict[str, Any]:
        self.commands.append((verb, payload))
        try:
            command = parse_command(verb, payload)
        except CommandError as exc:
            return error_reply(verb, None, exc.code, str(exc))
        return ok_reply(command)

    async def history(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        jobs = [{"id": f"job-{i}", "outcome": "DONE"} for i in range(25)]
        return jobs[offset : offset + limit], len(jobs)

    def frames(self) -> dict[str, bytes]:
        return {"cam-a": PNG}

    async def live_frames(self) -> dict[str, bytes]:
        self.lives += 1
        return {"upper": PNG + b"live"}

    async def save_calibration(self) -> dict[str, Any]:
        self.saved += 1
        return {"ok": True, "cameras": {"upper": {"saved": True, "file": "c.toml"}}}


Scenario = Callable[[WebServer, aiohttp.ClientSession, str], Awaitable[None]]


def _run(scenario: Scenario, token: str = TOKEN) -> Backend:
    backend = Backend()

    async def main() -> None:
        server = WebServer(backend, port=0, token=token)
        await server.start()
        try:
            async with aiohttp.ClientSession() as session:
                await scenario(server, session, f"http://127.0.0.1:{server.port}")
        finally:
            await server.stop()

    asyncio.run(main())
    return backend


def test_page_and_assets_are_served() -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.get(url + "/") as r:
            assert r.status == 200 and "text/html" in r.headers["Content-Type"]
            html = await r.text()
            assert "/static/app.js" in html and TOKEN not in html
        for name in ("app.js", "style.css"):
            async with s.get(f"{url}/static/{name}") as r:
                assert r.status == 200 and len(await r.text()) > 100
        async with s.get(url + "/static/../server.py") as r:
            assert r.status == 404

    _run(scenario)


def test_read_only_api_needs_no_token() -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.get(url + "/api/status") as r:
            assert (await r.json())["state"] == "IDLE"
        async with s.get(url + "/api/history?page=3&size=10") as r:
            body = await r.json()
            assert body["total"] == 25 and [j["id"] for j in body["jobs"]] == [
                f"job-{i}" for i in range(20, 25)
            ]
        for bad in ("page=0", "size=1000", "page=x"):
            async with s.get(f"{url}/api/history?{bad}") as r:
                assert r.status == 400
        async with s.get(url + "/api/frames") as r:
            assert (await r.json())["frames"] == ["cam-a"]
        async with s.get(url + "/api/frames/cam-a.png") as r:
            assert await r.read() == PNG and r.headers["Content-Type"] == "image/png"
        async with s.get(url + "/api/frames/nope.png") as r:
            assert r.status == 404

    _run(scenario)


@pytest.mark.parametrize(
    "header",
    [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer "],
    ids=["none", "wrong", "not-bearer", "longer", "empty"],
)
def test_commands_need_the_token(header: str | None) -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        headers = {"Authorization": header} if header else {}
        async with s.post(url + "/api/cmd/start", data=b"{}", headers=headers) as r:
            assert r.status == 401
            assert (await r.json())["error"]["code"] == "unauthorised"

    assert _run(scenario).commands == []


def test_without_a_configured_token_the_page_is_read_only() -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.post(url + "/api/cmd/estop", headers={"Authorization": "Bearer "}) as r:
            assert r.status == 401 and "read-only" in (await r.json())["error"]["message"]

    assert _run(scenario, token="").commands == []


def test_commands_go_through_the_daemon_validation() -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.post(url + "/api/cmd/start", data=b'{"source": "web"}', headers=auth) as r:
            assert r.status == 200 and (await r.json())["ok"] is True
        async with s.post(url + "/api/cmd/start", data=b'{"bogus": 1}', headers=auth) as r:
            assert r.status == 400 and (await r.json())["error"]["code"] == "malformed"
        async with s.post(url + "/api/cmd/launch", data=b"{}", headers=auth) as r:
            assert (await r.json())["error"]["code"] == "unknown_command"
        async with s.post(url + "/api/cmd/start", data=b"x" * 20000, headers=auth) as r:
            assert r.status == 413

    backend = _run(scenario)
    assert [v for v, _ in backend.commands] == ["start", "start", "launch"]


async def _events(s: aiohttp.ClientSession, url: str) -> AsyncIterator[tuple[str, Any]]:
    async with s.get(url + "/api/events") as r:
        name = ""
        async for raw in r.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                yield name, json.loads(line[6:])


def test_events_stream_status_then_what_the_daemon_publishes() -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        seen: list[tuple[str, Any]] = []

        async def read() -> None:
            async for item in _events(s, url):
                seen.append(item)
                if item[0] == "done":
                    return

        reader = asyncio.create_task(read())
        while not seen:
            await asyncio.sleep(0.01)
        server.publish("solution", {"moves": "R U"})
        server.publish("status", {"state": "EXECUTING"})
        server.publish("done", {"job_id": "j1"})
        await asyncio.wait_for(reader, 5)
        assert [name for name, _ in seen] == ["status", "solution", "status", "done"]
        assert seen[0][1]["state"] == "IDLE" and seen[1][1]["moves"] == "R U"

    _run(scenario)


def test_a_page_that_falls_behind_is_disconnected_not_buffered() -> None:
    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.get(url + "/api/events") as r:
            await r.content.readline()
            assert len(server._queues) == 1
            for k in range(5000):
                server.publish("move_executed", {"index": k})
            assert len(server._queues) == 0  # dropped, memory bounded

    _run(scenario)


def test_port_in_use_is_a_clear_error() -> None:
    async def main() -> None:
        first = WebServer(Backend(), port=0)
        await first.start()
        try:
            second = WebServer(Backend(), port=first.port)
            with pytest.raises(OSError, match=r"\[web\] port"):
                await second.start()
        finally:
            await first.stop()

    asyncio.run(main())


def test_calibration_view_reads_freely_and_saves_with_the_token() -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with s.get(url + "/api/calibration/upper.png") as r:
            assert r.status == 404  # nothing captured yet
        async with s.get(url + "/api/calibration") as r:
            assert (await r.json())["frames"] == ["upper"]
        async with s.get(url + "/api/calibration/upper.png") as r:
            assert await r.read() == PNG + b"live"
        async with s.post(url + "/api/calibration/save") as r:
            assert r.status == 401
        async with s.post(url + "/api/calibration/save", headers=auth) as r:
            assert r.status == 200 and (await r.json())["cameras"]["upper"]["saved"]

    backend = _run(scenario)
    assert backend.lives == 1 and backend.saved == 1


async def _raw(url: str, request: bytes) -> bytes:
    """The status line the server answers a hand-made request with."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    try:
        head = await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
    return head.strip()


def test_a_token_of_non_utf8_bytes_is_refused_not_a_server_error() -> None:
    """Bytes 0xff 0xfe in the header became surrogates that ``str.encode`` refused: HTTP 500."""

    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        request = (
            b"POST /api/cmd/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\n"
            b"Content-Length: 0\r\n\r\n"
        )
        assert await _raw(url, request) == b"HTTP/1.1 401 Unauthorized"

    assert _run(scenario).commands == []


def test_a_body_announced_too_large_is_refused_before_it_is_sent() -> None:
    """A Content-Length of 100 GB kept the request waiting for the body to arrive."""

    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        request = (
            b"POST /api/cmd/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Length: 99999999999\r\n\r\n{}"
        )
        assert await _raw(url, request) == b"HTTP/1.1 413 Request Entity Too Large"

    assert _run(scenario).commands == []


def test_event_streams_are_bounded() -> None:
    """Every open /api/events held a queue of up to 256 events: a reader opening thousands of
    streams grew the daemon's memory without bound."""
    from robot.web.server import MAX_STREAMS

    async def scenario(server: WebServer, s: aiohttp.ClientSession, url: str) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(MAX_STREAMS):
                r = await stack.enter_async_context(s.get(url + "/api/events"))
                await r.content.readline()
            assert len(server._queues) == MAX_STREAMS
            async with s.get(url + "/api/events") as r:
                assert r.status == 503 and "pages are already watching" in await r.text()
            assert len(server._queues) == MAX_STREAMS

    _run(scenario)
