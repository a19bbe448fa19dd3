"""Slow and silent clients of the web page (2026-11-27 evening sweep). A reader needs no token,
so whoever reaches the address could hold the daemon's file descriptors: connections that sent
half a request line, or a command's headers and never its body, stayed open for ever (200 of
them were all open after 130 s). Now connections are bounded and the silent ones closed."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from robot.errors import JournalError
from robot.web.backend import DaemonBackend
from robot.web.server import WebServer
from tests.robot.daemon_fakes import running
from tests.robot.helpers import run
from tests.robot.web.test_server import TOKEN, Backend


async def _server(**guard: float) -> WebServer:
    server = WebServer(Backend(), port=0, token=TOKEN)
    for name, value in guard.items():
        setattr(server.guard, name, value)
    await server.start()
    return server


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    async with asyncio.timeout(seconds):
        return await reader.read()


async def _status(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await writer.drain()
    data = await _closed_within(reader, 5)
    writer.close()
    return data


def test_a_connection_that_never_finishes_its_headers_is_closed() -> None:
    async def scenario() -> None:
        server = await _server(header_timeout_s=0.3)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /api/status HTTP/1.1\r\nHost: x\r\n")  # no blank line: never done
            await writer.drain()
            assert await _closed_within(reader, 5) == b""
            assert server.guard.timed_out == 1 and server.guard.open == 0
            writer.close()
            assert (await _status(server.port)).startswith(b"HTTP/1.1 200")
        finally:
            await server.stop()

    run(scenario(), 30)


def test_a_keep_alive_connection_that_goes_quiet_is_closed_after_its_request() -> None:
    async def scenario() -> None:
        server = await _server(header_timeout_s=0.3)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /api/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/st")
            await writer.drain()
            data = await _closed_within(reader, 5)
            assert data.startswith(b"HTTP/1.1 200")  # the first was answered, then closed
            writer.close()
        finally:
            await server.stop()

    run(scenario(), 30)


def test_connections_past_the_bound_are_closed_and_the_page_still_answers() -> None:
    async def scenario() -> None:
        server = await _server(max_connections=5, header_timeout_s=60)
        try:
            held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(5)]
            for _, writer in held:
                writer.write(b"GET / HTTP/1.1\r\n")
                await writer.drain()
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            assert await _closed_within(reader, 5) == b""  # the sixth: closed at once
            writer.close()
            assert server.guard.refused == 1
            for _, writer in held:
                writer.close()
            while server.guard.open:
                await asyncio.sleep(0.01)
            assert (await _status(server.port)).startswith(b"HTTP/1.1 200")
        finally:
            await server.stop()

    run(scenario(), 30)


def test_a_command_whose_body_never_arrives_gets_408() -> None:
    async def scenario() -> None:
        server = await _server(header_timeout_s=0.5)
        server.body_timeout_s = 0.3
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(
                b"POST /api/cmd/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 1000\r\n\r\n{"
            )
            await writer.drain()
            data = await _closed_within(reader, 5)  # answered, then closed by the guard
            assert data.startswith(b"HTTP/1.1 408") and b"did not arrive" in data
            writer.close()
        finally:
            await server.stop()

    run(scenario(), 30)


def test_an_event_stream_is_not_cut_by_the_header_clock() -> None:
    async def scenario() -> None:
        server = await _server(header_timeout_s=0.2)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            await asyncio.sleep(0.6)
            server.publish("solution", {"moves": "R U"})
            got = b""
            async with asyncio.timeout(5):
                while b"event: solution" not in got:
                    chunk = await reader.read(4096)
                    assert chunk, "the stream was closed"
                    got += chunk
            assert server.guard.timed_out == 0
            writer.close()
        finally:
            await server.stop()

    run(scenario(), 30)


MALFORMED = [
    pytest.param(b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", id="bad-version"),
    pytest.param(
        b"POST /api/cmd/status HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        id="length-and-chunked",
    ),
    pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", id="negative-length"),
    pytest.param(
        b"POST /api/cmd/status HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\n"
        b"Content-Length: 2\r\n\r\n{}",
        id="unknown-encoding",
    ),
    pytest.param(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", id="long-line"),
    pytest.param(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", id="http2-preface"),
]


@pytest.mark.parametrize("request_bytes", MALFORMED)
def test_a_malformed_request_is_a_400_and_one_log_line_not_a_traceback(
    request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """aiohttp logged each request it could not parse as an ERROR with a traceback (from the
    'aiohttp.server' logger): any reader of the page could fill the daemon's log with them."""

    async def scenario() -> None:
        server = await _server()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(request_bytes)
            await writer.drain()
            assert (await _closed_within(reader, 5)).startswith((b"HTTP/1.0 4", b"HTTP/1.1 4"))
            writer.close()
            assert (await _status(server.port)).startswith(b"HTTP/1.1 200")
        finally:
            await server.stop()

    with caplog.at_level(logging.DEBUG):
        run(scenario(), 30)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(said) == 1 and "malformed request from 127.0.0.1" in said[0], said


def test_a_flood_of_malformed_requests_is_counted_not_logged_line_by_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> int:
        server = await _server()
        try:
            for _ in range(30):
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(b"GET / HTTP/9.9\r\n\r\n")
                await writer.drain()
                await _closed_within(reader, 5)
                writer.close()
            return server.malformed
        finally:
            await server.stop()

    with caplog.at_level(logging.WARNING):
        assert run(scenario(), 30) == 30
    assert len(caplog.records) == 1


def test_a_command_from_the_page_is_refused_for_what_it_holds_not_a_size_never_sent(
    fast_tmp: Path,
) -> None:
    """The backend stamps ``source: "web"`` and encodes the command again: with ASCII escapes
    a 6 kB body of "é" became 18 kB and was refused as "payload is 18024 bytes"."""
    body = json.dumps({"é" * 3000: 1}, ensure_ascii=False).encode()
    assert len(body) < 16 * 1024

    async def scenario() -> dict[str, Any]:
        async with running(fast_tmp / "j.sqlite") as rig:
            return await DaemonBackend(rig.daemon).submit("status", body)

    reply = run(scenario(), 30)
    assert "unknown field" in reply["error"]["message"], reply


class _DamagedJournal(Backend):
    async def history(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        raise JournalError("journal /tmp/j.sqlite: database disk image is malformed")


def test_a_history_the_journal_cannot_give_is_a_503_that_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A journal damaged while the daemon runs made /api/history a 500 with a traceback."""

    async def scenario() -> bytes:
        server = WebServer(_DamagedJournal(), port=0, token=TOKEN)
        await server.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /api/history HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await writer.drain()
            data = await _closed_within(reader, 5)
            writer.close()
            return data
        finally:
            await server.stop()

    with caplog.at_level(logging.DEBUG):
        data = run(scenario(), 30)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503"), head
    assert "history cannot be read" in json.loads(body)["error"]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
