"""Crash hygiene: a daemon that dies of an error says so on the broker (final retained status
with the error, availability offline) before the process exits; a clean stop says offline too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from firmware_protocol.link import FirmwareInfo
from robot.daemon import Daemon
from robot.journal_async import AsyncJournal
from tests.conftest import Broker
from tests.robot.daemon_fakes import FakeFirmware, FakeLink, fast_config, scrambled
from tests.robot.helpers import run


class ExplodingLink(FakeLink):
    """A link whose connect fails with a bug (not a LinkError): the firmware task dies."""

    async def connect(self) -> FirmwareInfo:
        raise RuntimeError("a bug in the link")


async def _retained(broker: Broker, topics: list[str]) -> dict[str, Any]:
    """The retained payload of each topic, read by a fresh subscriber."""
    found: dict[str, Any] = {}
    async with aiomqtt.Client(broker.host, broker.port, identifier="crash-reader") as client:
        for topic in topics:
            await client.subscribe(topic, qos=1)
        async with asyncio.timeout(5):
            async for message in client.messages:
                payload = message.payload if isinstance(message.payload, bytes) else b""
                text = payload.decode()
                found[str(message.topic)] = json.loads(text) if text.startswith("{") else text
                if len(found) == len(topics):
                    break
    return found


def test_a_daemon_that_dies_says_offline_and_why(mqtt_broker: Broker, fast_tmp: Path) -> None:
    config = fast_config()

    async def scenario() -> BaseException | None:
        journal = AsyncJournal.open(fast_tmp / "j.sqlite")
        daemon = Daemon(
            config,
            link=ExplodingLink(FakeFirmware(scrambled())),
            cameras=None,
            journal=journal,
            mqtt_host=mqtt_broker.host,
            mqtt_port=mqtt_broker.port,
        )
        try:
            await asyncio.wait_for(daemon.run(), 20)
        except BaseException as exc:  # the ExceptionGroup of the task group
            return exc
        finally:
            await journal.close()
        return None

    failure = run(scenario(), 40)
    assert isinstance(failure, ExceptionGroup)
    base = config.topic()
    seen = run(_retained(mqtt_broker, [f"{base}/availability", f"{base}/status"]), 20)
    assert seen[f"{base}/availability"] == "offline"
    status = seen[f"{base}/status"]
    assert status["error"]["code"] == "internal"
    assert "a bug in the link" in status["error"]["message"]
    assert status["firmware"]["connected"] is False


@pytest.mark.usefixtures("solver_tables")
def test_a_clean_stop_says_offline(mqtt_broker: Broker, fast_tmp: Path) -> None:
    config = fast_config()

    async def scenario() -> None:
        journal = AsyncJournal.open(fast_tmp / "j.sqlite")
        fw = FakeFirmware(scrambled())
        daemon = Daemon(
            config,
            link=FakeLink(fw),
            cameras=None,
            journal=journal,
            mqtt_host=mqtt_broker.host,
            mqtt_port=mqtt_broker.port,
        )
        task = asyncio.create_task(daemon.run())
        await daemon.firmware_ready.wait()
        assert daemon.mqtt is not None
        await asyncio.wait_for(daemon.mqtt.connected.wait(), 10)
        daemon.stop()
        await task
        await journal.close()

    run(scenario(), 40)
    base = config.topic()
    seen = run(_retained(mqtt_broker, [f"{base}/availability"]), 20)
    assert seen[f"{base}/availability"] == "offline"
