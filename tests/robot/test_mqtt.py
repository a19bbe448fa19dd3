"""The MQTT bridge against real brokers: retained state, discovery, reconnection, TLS and
passwords; the embedded broker."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from robot.broker import EmbeddedBroker, free_port
from robot.config import RobotConfig, load_config
from robot.errors import BrokerError
from robot.mqtt import MqttBridge, discovery_messages
from tests.conftest import Broker, MosquittoBroker
from tests.robot.helpers import CONFIGS, Recorder, run

TOPIC = "cuberobot/sim"


def config_with(**mqtt: Any) -> RobotConfig:
    config = load_config(CONFIGS / "simulated.toml")
    return config.model_copy(update={"mqtt": config.mqtt.model_copy(update=mqtt)})


async def _noop(verb: str, payload: bytes) -> None:
    return None


def test_discovery_payloads() -> None:
    config = load_config(CONFIGS / "six_motor.toml")
    messages = {m.topic: m for m in discovery_messages(config, "1.2.3")}
    state = messages["homeassistant/sensor/six_motor/state/config"]
    assert state.retain
    import json

    body = json.loads(state.payload)
    assert body["state_topic"] == "cuberobot/six-motor/status"
    assert body["availability_topic"] == "cuberobot/six-motor/availability"
    assert body["device"]["sw_version"] == "1.2.3"
    start = json.loads(messages["homeassistant/button/six_motor/start/config"].payload)
    assert start["command_topic"] == "cuberobot/six-motor/cmd/start"


def test_bridge_publishes_and_reannounces(mqtt_broker: Broker) -> None:
    commands: list[tuple[str, bytes]] = []

    async def on_command(verb: str, payload: bytes) -> None:
        commands.append((verb, payload))

    async def scenario() -> Recorder:
        bridge = MqttBridge(config_with(), on_command, host=mqtt_broker.host, port=mqtt_broker.port)
        bridge.publish_status({"state": "IDLE"})
        task = asyncio.create_task(bridge.run())
        await asyncio.wait_for(bridge.connected.wait(), 10)
        async with Recorder(
            mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#", "homeassistant/#", client_id="r1"
        ) as rec:
            await rec.wait(lambda: bool(rec.on(f"{TOPIC}/status")))
            first = len([t for t, _, _ in rec.messages if t.endswith("/config")])
            bridge.publish_event("solution", {"moves": "R U"})
            bridge.reply("start", {"ok": True})
            await rec.publish(f"{TOPIC}/cmd/start", b'{"id": "1"}')
            await rec.publish("homeassistant/status", b"online")
            await rec.wait(
                lambda: len([t for t, _, _ in rec.messages if t.endswith("/config")]) > first
            )
            await rec.wait(lambda: bool(commands))
            await rec.wait(lambda: bool(rec.on(f"{TOPIC}/cmd/start/reply")))
            await bridge.close()
            await rec.wait(lambda: rec.on(f"{TOPIC}/availability")[-1] == "offline")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return rec

    rec = run(scenario())
    assert commands == [("start", b'{"id": "1"}')]
    status = [(v, r) for t, v, r in rec.messages if t == f"{TOPIC}/status"]
    assert status[0][0]["state"] == "IDLE" and status[0][1] is True  # retained
    event = rec.events("solution")[0]
    assert event["moves"] == "R U" and "timestamp" in event
    assert rec.on(f"{TOPIC}/availability")[0] == "online"


def test_bridge_queues_while_the_broker_is_down(tmp_path: Path) -> None:
    """Events published while no broker runs are delivered once it is up: nothing lost."""
    port = free_port()
    acknowledged: list[int] = []

    async def scenario() -> Recorder:
        bridge = MqttBridge(config_with(reconnect_min_s=0.1), _noop, host="127.0.0.1", port=port)
        task = asyncio.create_task(bridge.run())
        for k in range(5):
            bridge.publish_event("move_executed", {"index": k + 1}, partial(acknowledged.append, k))
        bridge.publish_status({"state": "EXECUTING"})
        await asyncio.sleep(0.5)
        assert not bridge.connected.is_set() and bridge.pending == 6
        assert acknowledged == []  # nothing is acknowledged while no broker runs
        async with EmbeddedBroker("127.0.0.1", port):
            async with Recorder("127.0.0.1", port, f"{TOPIC}/#", client_id="r2") as rec:
                await asyncio.wait_for(bridge.connected.wait(), 10)
                await rec.wait(lambda: len(rec.events("move_executed")) == 5, 10)
                await rec.wait(lambda: bool(rec.on(f"{TOPIC}/status")), 10)
                await bridge.close()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        return rec

    rec = run(scenario())
    assert [e["index"] for e in rec.events("move_executed")] == [1, 2, 3, 4, 5]
    assert rec.on(f"{TOPIC}/status")[-1]["state"] == "EXECUTING"
    assert acknowledged == [0, 1, 2, 3, 4]  # each once, in order, after the broker had it


def test_embedded_broker_port_taken() -> None:
    async def scenario() -> None:
        async with EmbeddedBroker("127.0.0.1", 0) as first:
            with pytest.raises(BrokerError, match="embedded_port"):
                await EmbeddedBroker("127.0.0.1", first.port).start()

    run(scenario())


@pytest.fixture
def tls_files(tmp_path: Path) -> dict[str, Path]:
    if shutil.which("openssl") is None or shutil.which("mosquitto_passwd") is None:
        pytest.skip("openssl and mosquitto_passwd are needed to make TLS and password files")
    d = tmp_path / "tls"
    d.mkdir()

    def sh(*args: str) -> None:
        subprocess.run(args, cwd=d, check=True, capture_output=True)

    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
       "-out", "ca.crt", "-days", "2", "-subj", "/CN=cuberobot test CA")  # fmt: skip
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
       "-out", "server.csr", "-subj", "/CN=127.0.0.1")  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    sh("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
       "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext")  # fmt: skip
    sh("mosquitto_passwd", "-b", "-c", "passwd", "robot", "s3cret")
    for f in d.iterdir():
        f.chmod(0o644)
    return {p.name: p for p in d.iterdir()}


def test_tls_and_password(
    mosquitto_factory: Callable[..., MosquittoBroker], tls_files: dict[str, Path], tmp_path: Path
) -> None:
    port = free_port()
    f = tls_files
    broker = mosquitto_factory(
        f"listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {f['passwd']}\n"
        f"cafile {f['ca.crt']}\ncertfile {f['server.crt']}\nkeyfile {f['server.key']}\n",
        port=port,
    )
    (tmp_path / "pw").write_text("s3cret\n")

    def cfg(password_file: str) -> RobotConfig:
        tls = {"enabled": True, "ca_file": str(f["ca.crt"])}
        config = config_with(username="robot", password_file=password_file, reconnect_min_s=0.1)
        return config.model_copy(
            update={
                "mqtt": config.mqtt.model_copy(
                    update={"tls": config.mqtt.tls.model_copy(update=tls)}
                )
            }
        )

    async def connects(config: RobotConfig) -> bool:
        bridge = MqttBridge(config, _noop, host="127.0.0.1", port=broker.port)
        task = asyncio.create_task(bridge.run())
        try:
            await asyncio.wait_for(bridge.connected.wait(), 3)
            ok = True
        except TimeoutError:
            ok = False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return ok

    assert run(connects(cfg(str(tmp_path / "pw"))))
    (tmp_path / "wrong").write_text("nope\n")
    assert not run(connects(cfg(str(tmp_path / "wrong"))))

    async def plain_fails() -> None:
        with pytest.raises(aiomqtt.MqttError):
            async with aiomqtt.Client("127.0.0.1", broker.port, timeout=2):
                pass

    run(plain_fails())


class _LosingBridge(MqttBridge):
    """A bridge whose client loses a cancellation that arrives during a publish, as aiomqtt's
    ``asyncio.wait_for`` does on Python 3.11 when the acknowledgement comes in the same turn."""

    in_publish: asyncio.Event

    def _client(self) -> aiomqtt.Client:
        client = super()._client()
        real = client.publish

        async def publish(*args: Any, **kwargs: Any) -> None:
            await real(*args, **kwargs)
            if str(args[0]).endswith("/event/move_executed"):
                self.in_publish.set()
                with contextlib.suppress(asyncio.CancelledError):  # lost, as by wait_for
                    await asyncio.sleep(0.5)

        client.publish = publish  # type: ignore[method-assign]
        return client


def test_a_cancelled_bridge_stops_even_if_its_client_loses_the_cancellation(
    mqtt_broker: Broker,
) -> None:
    """The daemon's task group waits for the bridge at a stop: a bridge that went on after a
    lost cancellation hung the daemon (seen in CI: "the daemon did not stop within 30 s")."""

    async def scenario() -> tuple[bool, bool]:
        bridge = _LosingBridge(config_with(), _noop, host=mqtt_broker.host, port=mqtt_broker.port)
        bridge.in_publish = asyncio.Event()
        task = asyncio.create_task(bridge.run())
        await asyncio.wait_for(bridge.connected.wait(), 10)
        bridge.publish_event("move_executed", {"index": 1})
        await asyncio.wait_for(bridge.in_publish.wait(), 10)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=15)
        if not done:
            task.cancel()
        return bool(done), task.cancelled()

    stopped, cancelled = run(scenario(), 40)
    assert stopped and cancelled


def test_a_command_whose_reply_topic_is_too_long_does_not_end_the_bridge(
    mqtt_broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """A verb topic of 65,535 bytes (the MQTT maximum) gets a reply topic 6 bytes too long;
    paho's ValueError used to end the bridge task, and with it the daemon's task group. A
    flood of them: each reply is dropped and counted, but the log gets the first and every
    100th, not a line each."""
    verbs: list[str] = []
    bridge: MqttBridge

    async def on_command(verb: str, payload: bytes) -> None:
        verbs.append(verb)
        bridge.reply(verb, {"ok": False})

    async def scenario() -> Recorder:
        nonlocal bridge
        bridge = MqttBridge(config_with(), on_command, host=mqtt_broker.host, port=mqtt_broker.port)
        task = asyncio.create_task(bridge.run())
        await asyncio.wait_for(bridge.connected.wait(), 10)
        prefix = f"{TOPIC}/cmd/"
        async with Recorder(
            mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/reply", client_id="r1"
        ) as rec:
            for k in range(101):
                level = f"{k:03d}" + "v" * (65535 - len(prefix) - 3)
                await rec.publish(prefix + level, b"{}")
            await rec.wait(lambda: len(rec.on(f"{TOPIC}/reply")) == 101, 60)
            await rec.publish(prefix + "status", b"{}")
            await rec.wait(lambda: len(rec.on(f"{TOPIC}/reply")) == 102)
            assert not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return rec

    with caplog.at_level("ERROR", logger="robot.mqtt"):
        run(scenario(), 90)
    assert len(verbs) == 102 and verbs[-1] == "status"
    assert bridge.dropped == bridge.unsendable == 101 and bridge.pending == 0
    lines = [r.getMessage() for r in caplog.records if "cannot publish" in r.getMessage()]
    assert len(lines) == 2, lines
    assert lines[1].endswith("(101 such so far)")


def test_a_retained_command_is_never_run(mqtt_broker: Broker) -> None:
    """A command published with retain was replayed by the broker at every (re)connect: a
    retained ``home`` or ``start`` moved the robot after each network hiccup or restart."""
    verbs: list[str] = []

    async def on_command(verb: str, payload: bytes) -> None:
        verbs.append(verb)

    async def scenario() -> MqttBridge:
        async with aiomqtt.Client(mqtt_broker.host, mqtt_broker.port, identifier="old") as old:
            await old.publish(f"{TOPIC}/cmd/home", b"{}", qos=1, retain=True)
        bridge = MqttBridge(config_with(), on_command, host=mqtt_broker.host, port=mqtt_broker.port)
        task = asyncio.create_task(bridge.run())
        await asyncio.wait_for(bridge.connected.wait(), 10)
        async with Recorder(
            mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#", client_id="r1"
        ) as rec:
            await rec.publish(f"{TOPIC}/cmd/status", b"{}")  # live: run
            await rec.wait(lambda: bool(verbs))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return bridge

    bridge = run(scenario())
    assert verbs == ["status"]
    assert bridge.ignored_retained == 1


def test_a_full_queue_is_logged_once_per_thousand_drops(caplog: pytest.LogCaptureFixture) -> None:
    """Every dropped message logged its own warning: a flood logged tens of thousands."""
    bridge = MqttBridge(config_with(queue_limit=10), _noop, host="127.0.0.1", port=1)
    with caplog.at_level("WARNING", logger="robot.mqtt"):
        for k in range(2010):
            bridge.publish_event("move_executed", {"index": k})
    assert bridge.dropped == 2000 and bridge.pending == 10
    lines = [r.getMessage() for r in caplog.records if "queue full" in r.getMessage()]
    assert len(lines) == 2 and lines[-1].endswith("(1001 dropped so far)")


def test_a_flood_of_home_assistant_online_reannounces_once_an_interval(
    mqtt_broker: Broker, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that floods ``homeassistant/status`` with ``online`` gets one burst of
    discovery at once and one at the interval's end, not one a message (each burst is some
    twenty retained messages and a log line)."""
    import robot.mqtt

    monkeypatch.setattr(robot.mqtt, "HA_REANNOUNCE_S", 0.5)

    def bursts(rec: Recorder) -> int:
        return len([t for t, _, _ in rec.messages if t.endswith("/state/config")])

    async def scenario() -> tuple[int, int, int]:
        bridge = MqttBridge(config_with(), _noop, host=mqtt_broker.host, port=mqtt_broker.port)
        task = asyncio.create_task(bridge.run())
        await asyncio.wait_for(bridge.connected.wait(), 10)
        async with Recorder(
            mqtt_broker.host, mqtt_broker.port, "homeassistant/#", client_id="flood"
        ) as rec:
            await rec.wait(lambda: bursts(rec) >= 1)  # the retained one of the connection
            at_connect = bursts(rec)
            for _ in range(100):
                await rec.publish("homeassistant/status", b"online")
            await rec.wait(lambda: bursts(rec) > at_connect)
            await asyncio.sleep(1.2)  # past the interval: the folded ones' burst, no more
            after_flood = bursts(rec)
            folded = bridge.ha_online_folded
            await bridge.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return at_connect, after_flood, folded

    with caplog.at_level("INFO", logger="robot.mqtt"):
        at_connect, after_flood, folded = run(scenario())
    reannounced = after_flood - at_connect
    assert 1 <= reannounced <= 2, reannounced
    lines = [r.getMessage() for r in caplog.records if "re-announcing" in r.getMessage()]
    assert len(lines) == reannounced
    assert folded == 0  # every folded one was announced (and counted in a line)
    counted = [re.search(r"\((\d+) more 'online'", line) for line in lines]
    # each of the 100 asked for a re-announcement or was folded into one, and a line says so
    assert reannounced + sum(int(m.group(1)) for m in counted if m) == 100
