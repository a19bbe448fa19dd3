"""The embedded broker's login: with credentials configured, anonymous clients and wrong
passwords are refused at CONNECT; a non-loopback bind without a login is refused by the
profile; files the profile names must exist when it is loaded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiomqtt
import pytest

from robot.broker import Credentials, EmbeddedBroker
from robot.config import load_config, parse_config
from robot.errors import ConfigError
from tests.robot.helpers import CONFIGS, run

GOOD = Credentials("robot", "s3cret-pass")


async def _connect(port: int, username: str | None, password: str | None) -> str:
    """'ok' when the client could connect and get its own message back, else the error."""
    try:
        async with aiomqtt.Client(
            "127.0.0.1", port, username=username, password=password, timeout=5
        ) as client:
            await client.subscribe("t/#")
            await client.publish("t/x", b"hello")
            async with asyncio.timeout(5):
                async for message in client.messages:
                    return "ok" if message.payload == b"hello" else "wrong payload"
    except aiomqtt.MqttError as exc:
        return f"refused: {exc}"
    return "no message"


@pytest.mark.parametrize(
    ("username", "password", "accepted"),
    [
        pytest.param("robot", "s3cret-pass", True, id="right"),
        pytest.param(None, None, False, id="anonymous"),
        pytest.param("robot", "wrong", False, id="wrong-password"),
        pytest.param("robot", "", False, id="empty-password"),
        pytest.param("other", "s3cret-pass", False, id="wrong-user"),
        pytest.param("robot", "s3cret-pass-longer", False, id="password-prefix"),
    ],
)
def test_embedded_broker_enforces_credentials(
    username: str | None, password: str | None, accepted: bool
) -> None:
    async def scenario() -> str:
        async with EmbeddedBroker("127.0.0.1", 0, credentials=GOOD) as broker:
            return await _connect(broker.port, username, password)

    outcome = run(scenario())
    assert (outcome == "ok") is accepted, outcome


def test_embedded_broker_without_credentials_is_anonymous() -> None:
    async def scenario() -> str:
        async with EmbeddedBroker("127.0.0.1", 0) as broker:
            return await _connect(broker.port, None, None)

    assert run(scenario()) == "ok"


VIEWER = Credentials("dashboard", "look-only-pass")


async def _any_message(sub: aiomqtt.Client) -> bool:
    """Whether a message reaches ``sub`` within a second."""
    try:
        async with asyncio.timeout(1.0):
            async for _ in sub.messages:
                return True
    except TimeoutError:
        return False
    return False


async def _publish_reaches(port: int, login: Credentials, reader: Credentials) -> bool:
    """Whether a message ``login`` publishes reaches a subscriber logged in as ``reader``."""
    async with aiomqtt.Client(
        "127.0.0.1", port, username=reader.username, password=reader.password, timeout=5
    ) as sub:
        await sub.subscribe("cuberobot/sim/cmd/#", qos=1)
        async with aiomqtt.Client(
            "127.0.0.1", port, username=login.username, password=login.password, timeout=5
        ) as pub:
            await pub.publish("cuberobot/sim/cmd/start", b"{}", qos=1)
        return await _any_message(sub)


def test_viewer_login_reads_but_cannot_command() -> None:
    async def scenario() -> tuple[bool, bool, str]:
        async with EmbeddedBroker("127.0.0.1", 0, credentials=GOOD, viewer=VIEWER) as broker:
            viewer_sends = await _publish_reaches(broker.port, VIEWER, GOOD)
            owner_sends = await _publish_reaches(broker.port, GOOD, VIEWER)  # viewer reads it
            wrong = await _connect(broker.port, VIEWER.username, "nope")
        return viewer_sends, owner_sends, wrong

    viewer_sends, owner_sends, wrong = run(scenario())
    assert not viewer_sends and owner_sends and wrong.startswith("refused")


def _connect_with_will(login: Credentials, topic: str, payload: bytes) -> bytes:
    """An MQTT 3.1.1 CONNECT from ``login`` whose last will publishes ``payload`` on ``topic``."""

    def field(data: bytes) -> bytes:
        return len(data).to_bytes(2, "big") + data

    flags = 0x80 | 0x40 | 0x08 | 0x04 | 0x02  # username, password, will QoS 1, will, clean
    body = field(b"MQTT") + bytes([4, flags]) + (60).to_bytes(2, "big")
    body += field(b"wall-display") + field(topic.encode()) + field(payload)
    body += field(login.username.encode()) + field(login.password.encode())
    assert len(body) < 128
    return bytes([0x10, len(body)]) + body


async def _will_reaches(port: int, login: Credentials) -> bool:
    """Whether the will of a client logged in as ``login`` that drops its connection (no
    DISCONNECT) reaches a subscriber to the robot's command topics."""
    async with aiomqtt.Client(
        "127.0.0.1", port, username=GOOD.username, password=GOOD.password, timeout=5
    ) as sub:
        await sub.subscribe("cuberobot/sim/cmd/#", qos=1)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(_connect_with_will(login, "cuberobot/sim/cmd/home", b"{}"))
        connack = await asyncio.wait_for(reader.readexactly(4), 5)
        assert connack == b"\x20\x02\x00\x00"  # accepted
        writer.transport.abort()  # gone without a DISCONNECT: the broker sends the will
        return await _any_message(sub)


def test_a_viewer_cannot_command_through_its_last_will() -> None:
    """The broker published a read-only login's last will without the check its publishes
    get: a viewer could home or start the robot by connecting with a will on a command topic
    and dropping the connection. Its will is now dropped at CONNECT (the login still works)."""

    async def scenario() -> tuple[bool, bool]:
        async with EmbeddedBroker("127.0.0.1", 0, credentials=GOOD, viewer=VIEWER) as broker:
            return await _will_reaches(broker.port, VIEWER), await _will_reaches(broker.port, GOOD)

    viewer_will, owner_will = run(scenario())
    assert not viewer_will
    assert owner_will  # a login that may command may leave a will like any publish


def test_viewer_needs_the_main_login() -> None:
    with pytest.raises(ValueError, match="main credentials"):
        EmbeddedBroker("127.0.0.1", 0, viewer=VIEWER)


@pytest.mark.parametrize(
    ("mqtt", "key", "words"),
    [
        pytest.param({"viewer_username": "v", "viewer_password": "p"}, "viewer_username",
                     "main username", id="no-main-login"),
        pytest.param({"username": "u", "password": "p", "viewer_username": "v"},
                     "viewer_password", "needs a password", id="no-viewer-password"),
        pytest.param({"username": "u", "password": "p", "viewer_username": "u",
                      "viewer_password": "q"}, "viewer_username", "differ", id="same-name"),
        pytest.param({"host": "broker.lan", "username": "u", "password": "p",
                      "viewer_username": "v", "viewer_password": "q"}, "viewer_username",
                     "docs/security.md", id="external-broker"),
    ],
)  # fmt: skip
def test_viewer_login_settings_are_checked(mqtt: dict[str, object], key: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        parse_config(_profile(**mqtt), "p.toml")
    assert info.value.key == key


def test_credentials_never_show_the_password() -> None:
    assert "s3cret" not in repr(GOOD)


def _profile(**mqtt: object) -> dict[str, object]:
    return {"mqtt": dict(mqtt)}


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "robot.local"])
def test_non_loopback_embedded_broker_needs_a_login(host: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(_profile(embedded_host=host), "p.toml")
    assert info.value.section == "mqtt" and info.value.key == "embedded_host"
    assert "username" in str(info.value)
    parse_config(_profile(embedded_host=host, username="u", password="p"), "p.toml")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_embedded_broker_may_be_anonymous(host: str) -> None:
    parse_config(_profile(embedded_host=host), "p.toml")


def test_external_broker_host_is_not_checked_for_loopback() -> None:
    parse_config(_profile(host="broker.example", embedded_host="0.0.0.0"), "p.toml")


def test_embedded_broker_username_needs_a_password() -> None:
    with pytest.raises(ConfigError, match="requires a password") as info:
        parse_config(_profile(username="u"), "p.toml")
    assert info.value.key == "password"


def test_missing_password_file_fails_at_load(tmp_path: Path) -> None:
    text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
    assert "[mqtt]" in text
    path = tmp_path / "robot.toml"
    path.write_text(
        text.replace("[mqtt]", '[mqtt]\nusername = "u"\npassword_file = "nope.txt"', 1),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == "password_file" and "nope.txt" in str(info.value)
    (tmp_path / "nope.txt").write_text("pw\n", encoding="utf-8")
    assert load_config(path).mqtt_password() == "pw"


def test_missing_calibration_file_fails_at_load(tmp_path: Path) -> None:
    text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
    path = tmp_path / "robot.toml"
    if "[colours]" in text:
        text = text.replace("[colours]", '[colours]\ncalibration_file = "calib.toml"', 1)
    else:
        text += '\n[colours]\ncalibration_file = "calib.toml"\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.section, info.value.key) == ("colours", "calibration_file")
