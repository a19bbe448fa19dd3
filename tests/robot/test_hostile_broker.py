"""Silent and greedy clients of the embedded MQTT broker (2026-11-27 evening sweep): amqtt
waited for a CONNECT for ever, so 300 connections that sent one byte each were all still open
after 60 s, each holding one of the daemon's file descriptors; a login did not help (it is
checked once the CONNECT has arrived). Now a CONNECT must come whole and soon, and the number of
connections is bounded."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

import robot.broker
from robot.broker import Credentials, EmbeddedBroker
from tests.robot.helpers import run
from tests.robot.test_broker_auth import _connect


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    async with asyncio.timeout(seconds):
        return await reader.read()


def test_a_client_that_never_finishes_its_connect_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(robot.broker, "CONNECT_TIMEOUT_S", 0.3)

    async def scenario() -> None:
        async with EmbeddedBroker("127.0.0.1", 0, credentials=Credentials("r", "pw")) as broker:
            reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
            writer.write(b"\x10\x20\x00")  # CONNECT announcing 32 bytes, sending one
            await writer.drain()
            assert await _closed_within(reader, 5) == b""
            writer.close()
            assert broker.dropped == 1 and broker.clients == 0
            assert await _connect(broker.port, "r", "pw") == "ok"

    run(scenario(), 30)


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(b"\x30\x05\x00\x01tx", id="publish-before-connect"),
        pytest.param(b"\x10\xff\xff\xff\x7f", id="connect-of-256-MB"),
        pytest.param(b"\x10\xff\xff\xff\xff\x01", id="length-of-five-bytes"),
    ],
)
def test_a_first_packet_that_is_no_acceptable_connect_is_closed_at_once(first: bytes) -> None:
    async def scenario() -> None:
        async with EmbeddedBroker("127.0.0.1", 0) as broker:
            reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
            writer.write(first)
            await writer.drain()
            assert await _closed_within(reader, 5) == b""
            writer.close()
            assert broker.dropped == 1

    run(scenario(), 30)


def test_connections_past_the_bound_are_closed_and_clients_connect_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(robot.broker, "MAX_CLIENTS", 4)

    async def scenario() -> None:
        async with EmbeddedBroker("127.0.0.1", 0) as broker:
            held = [await asyncio.open_connection("127.0.0.1", broker.port) for _ in range(4)]
            while broker.clients < 4:
                await asyncio.sleep(0.01)
            reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
            assert await _closed_within(reader, 5) == b""  # the fifth: closed at once
            writer.close()
            assert broker.refused == 1
            for _, held_writer in held:
                held_writer.close()
            while broker.clients:
                await asyncio.sleep(0.01)
            assert await _connect(broker.port, None, None) == "ok"

    run(scenario(), 30)


def test_stopping_the_broker_ends_clients_still_sending_their_connect() -> None:
    async def scenario() -> None:
        broker = EmbeddedBroker("127.0.0.1", 0)
        await broker.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        writer.write(b"\x10")
        await writer.drain()
        while broker.clients < 1:
            await asyncio.sleep(0.01)
        await broker.stop()
        with contextlib.suppress(ConnectionResetError):  # ended either way
            assert await _closed_within(reader, 5) == b""
        writer.close()

    run(scenario(), 30)
