"""`cuberobot demo`'s output when piped, its --format json result, its bundled default profile,
and the cleanup of its Home Assistant discovery on an outside broker."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from robot.bundled import bundled_names, bundled_path, load_profile
from robot.errors import ConfigError
from solver.cube.notation import parse
from tests.conftest import Broker
from tests.robot.helpers import CONFIGS, Recorder, run

CLI = [sys.executable, "-m", "robot.cli"]
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("solver_tables")]


async def demo(*args: str, columns: int = 40) -> tuple[int, str, str]:
    """``cuberobot demo --speed 4 ARGS`` with stdout and stderr on pipes (not terminals)."""
    proc = await asyncio.create_subprocess_exec(
        *CLI,
        "demo",
        "--speed",
        "4",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def test_piped_demo_does_not_wrap_lines() -> None:
    code, out, err = run(demo("--seed", "11"), timeout=240)
    assert code == 0, out + err
    (line,) = [x for x in out.splitlines() if x.startswith("solution (")]
    moves = line.split(": ", 1)[1]
    assert len(line) > 40 and parse(moves)  # the whole solution on one line, all moves parse
    assert "\x1b[" not in out


def test_demo_json_prints_one_result_object() -> None:
    code, out, err = run(demo("--seed", "11", "--format", "json"), timeout=240)
    assert code == 0, out + err
    result: dict[str, Any] = json.loads(out)  # stdout is exactly one JSON document
    assert result["solved"] is True and result["seed"] == 11 and result["size"] == 3
    assert result["solution"]["engine"] == "twophase" and result["solution"]["htm"] > 0
    assert result["moves_executed"] == result["solution"]["htm"]
    assert set(result["stage_times_s"]) == {"scan", "validate", "solve", "execute"}
    assert result["events"]["done"] == 1 and result["errors"] == []
    assert result["mqtt_reached"] is True  # the embedded broker
    assert "virtual cube solved: yes" in err  # the human summary went to stderr


def test_demo_json_failure_is_an_error_object(tmp_path: Path) -> None:
    code, out, _ = run(demo("--config", str(tmp_path / "none.toml"), "--format", "json"))
    assert code == 2
    assert "cannot read the profile" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        pytest.param("--seed", "-1", "--seed must be a whole number >= 0", id="negative-seed"),
        pytest.param("--speed", "1e-300", "--speed must be 0.001..1000", id="tiny-speed"),
        pytest.param("--speed", "inf", "--speed must be 0.001..1000", id="infinite-speed"),
        pytest.param("--speed", "nan", "--speed must be 0.001..1000", id="nan-speed"),
    ],
)
def test_demo_options_out_of_range_are_usage_errors(option: str, value: str, words: str) -> None:
    """A negative seed and a speed whose scaled acceleration underflows were tracebacks
    (exit 1); inf was taken."""
    code, out, err = run(demo(option, value))
    assert code == 2, out + err
    assert words in err and "Traceback" not in err


def test_demo_says_when_the_broker_was_never_reached() -> None:
    """With --mqtt at a port where no broker listens the demo solved the cube and printed
    "events published: 12": nothing had been published."""
    code, out, err = run(demo("--seed", "3", "--mqtt", "127.0.0.1:1", "--format", "json"), 240)
    assert code == 0, out + err  # the cube was solved: the daemon works without a broker
    result = json.loads(out)
    assert result["solved"] is True and result["mqtt_reached"] is False
    assert "NOT published" in err and "127.0.0.1:1" in err
    assert "events published" not in err


def test_bundled_profiles_are_the_example_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bundled_names() == tuple(sorted(p.stem for p in CONFIGS.glob("*.toml")))
    for name in bundled_names():
        assert bundled_path(name).read_bytes() == (CONFIGS / f"{name}.toml").read_bytes()
    monkeypatch.chdir(tmp_path)
    config = load_profile("simulated")
    assert config.resolve(config.journal.path) == tmp_path / "sim-journal.sqlite"
    by_path = load_profile(CONFIGS / "simulated.toml")
    assert by_path.resolve(by_path.journal.path) == CONFIGS.resolve() / "sim-journal.sqlite"
    with pytest.raises(ConfigError, match="nor a bundled profile"):
        load_profile("simulatd")


async def _retained(broker: Broker, topic: str) -> dict[str, bytes]:
    """The retained messages under ``topic`` now (those a fresh subscriber is sent)."""
    found: dict[str, bytes] = {}
    async with aiomqtt.Client(broker.host, broker.port, identifier="test-retained") as client:
        await client.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(1.0):
                async for message in client.messages:
                    if message.retain and isinstance(message.payload, bytes):
                        found[str(message.topic)] = message.payload
        except TimeoutError:
            pass
    return found


def test_demo_on_an_outside_broker_removes_its_discovery(mqtt_broker: Broker) -> None:
    async def body() -> tuple[int, str, list[tuple[str, Any, bool]], dict[str, bytes]]:
        async with Recorder(mqtt_broker.host, mqtt_broker.port, "homeassistant/#") as seen:
            address = f"{mqtt_broker.host}:{mqtt_broker.port}"
            code, out, err = await demo("--seed", "2", "--mqtt", address, "--format", "json")
            await asyncio.sleep(0.3)
        return code, out + err, seen.messages, await _retained(mqtt_broker, "homeassistant/#")

    code, output, messages, retained = run(body(), timeout=240)
    assert code == 0, output
    announced = {t for t, v, _ in messages if isinstance(v, dict)}
    removed = {t for t, v, _ in messages if v == ""}
    assert len(announced) > 5 and announced == removed  # every entity came and went
    assert retained == {}
