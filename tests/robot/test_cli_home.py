"""``cuberobot home``: directly over the firmware link (--port), and through the daemon (--config).

The firmware path runs against ``cuberobot firmware-sim`` on a pty with a motor stall injected:
the stall latches a fault that refuses moves until ``cuberobot home`` clears it, as the link's
operator messages say. The daemon path runs a real daemon (simulated robot) on a private
Mosquitto and the command as a separate process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiomqtt
import pytest

from robot.assemble import Assembly, assemble
from robot.config import RobotConfig
from tests.conftest import CUBEROBOT, Broker, FirmwareProcess
from tests.robot.helpers import CONFIGS, Recorder, run, sim_config
from tests.robot.test_e2e import scrambled

PROFILE = CONFIGS / "simulated.toml"  # robot id "sim", base topic "cuberobot"
TOPIC = "cuberobot/sim"


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CUBEROBOT, *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ)
    )


async def cli_async(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *CUBEROBOT, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# --- directly over the firmware link --------------------------------------------------------------


def test_home_clears_a_motor_fault(firmware_process: Callable[..., FirmwareProcess]) -> None:
    fw = firmware_process(faults="stall=U@1", speed=5.0)
    stalled = cli("send", fw.port, "R U F")
    assert stalled.returncode == 1
    assert "stall" in stalled.stderr and "`cuberobot home`" in stalled.stderr
    refused = cli("send", fw.port, "R")
    assert refused.returncode == 1 and "FAULT" in refused.stderr
    homed = cli("home", "--port", fw.port)
    assert homed.returncode == 0, homed.stderr
    assert homed.stdout == f"{fw.port}: homed, firmware IDLE\n"
    again = cli("send", fw.port, "R")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("1/1 R ")


def test_home_on_a_missing_port(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyGONE")
    done = cli("home", "--port", port, "--connect-timeout", "0.3")
    assert done.returncode == 1 and done.stdout == ""
    assert port in done.stderr and "cannot open" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([], id="no-target"),
        pytest.param(["--port", "/dev/null", "--config", str(PROFILE)], id="both-targets"),
        pytest.param(["--port", "/dev/null", "--mqtt", "127.0.0.1:1883"], id="mqtt-with-port"),
        pytest.param(["--config", str(PROFILE), "--baud", "9600"], id="baud-with-config"),
        pytest.param(["--config", str(PROFILE)], id="embedded-broker-on-any-port"),
        pytest.param(["--port", "/dev/null", "--connect-timeout", "0"], id="zero-timeout"),
    ],
)
def test_home_usage_errors(args: list[str]) -> None:
    done = cli("home", *args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""


# --- through the daemon, over MQTT ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def running_daemon(
    broker: Broker, tmp_path: Path, config: RobotConfig
) -> AsyncIterator[Assembly]:
    async with contextlib.AsyncExitStack() as stack:
        parts = await assemble(
            config,
            stack,
            mqtt=(broker.host, broker.port),
            journal_path=tmp_path / "journal.sqlite",
            sim_start=scrambled(31),
            seed=3,
        )
        task = asyncio.create_task(parts.daemon.run())
        await parts.daemon.firmware_ready.wait()
        assert parts.daemon.mqtt is not None
        await asyncio.wait_for(parts.daemon.mqtt.connected.wait(), 10)
        try:
            yield parts
        finally:
            parts.daemon.stop()
            await task


def _broker_args(broker: Broker) -> list[str]:
    return ["--config", str(PROFILE), "--mqtt", f"{broker.host}:{broker.port}"]


@pytest.mark.e2e
def test_home_through_the_daemon(mqtt_broker: Broker, tmp_path: Path) -> None:
    async def body() -> tuple[int, str, str, list[object]]:
        config = sim_config(speed_factor=4.0)
        async with (
            running_daemon(mqtt_broker, tmp_path, config),
            Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/cmd/#") as rec,
        ):
            code, out, err = await cli_async("home", *_broker_args(mqtt_broker))
            await rec.wait(lambda: bool(rec.on(f"{TOPIC}/cmd/home/reply")), 10)
            return code, out, err, rec.on(f"{TOPIC}/cmd/home")

    code, out, err, commands = run(body(), 90)
    assert code == 0, err
    reply = json.loads(out)
    assert reply["ok"] is True and reply["verb"] == "home"
    assert reply["firmware_state"] == "IDLE"
    # the command on the wire: the documented topic, a fresh id, the CLI as its source
    assert commands == [{"id": reply["id"], "source": "cli"}]


@pytest.mark.e2e
@pytest.mark.usefixtures("solver_tables")
def test_home_refused_while_a_job_runs(mqtt_broker: Broker, tmp_path: Path) -> None:
    async def body() -> tuple[int, str, str]:
        config = sim_config(speed_factor=0.25)  # slow motors: the job is still executing
        async with (
            running_daemon(mqtt_broker, tmp_path, config),
            Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec,
        ):
            await rec.publish(f"{TOPIC}/cmd/start", "{}")
            await rec.wait(lambda: bool(rec.events("move_executed")), 60)
            result = await cli_async("home", *_broker_args(mqtt_broker))
            await rec.publish(f"{TOPIC}/cmd/abort", "{}")
            await rec.wait(lambda: bool(rec.on(f"{TOPIC}/cmd/abort/reply")), 30)
            return result

    code, out, err = run(body(), 120)
    assert code == 1
    reply = json.loads(out)
    assert reply["ok"] is False and reply["error"]["code"] == "busy"
    assert err.startswith("cuberobot: robot sim did not home (busy): home: job ")
    assert "wait for it or send abort" in err


def test_home_refuses_an_offline_robot(mqtt_broker: Broker) -> None:
    async def mark_offline() -> None:
        async with aiomqtt.Client(mqtt_broker.host, mqtt_broker.port) as client:
            await client.publish(f"{TOPIC}/availability", b"offline", qos=1, retain=True)

    run(mark_offline(), 20)
    done = cli("home", *_broker_args(mqtt_broker), "--timeout", "5")
    assert done.returncode == 1 and done.stdout == ""
    assert "robot sim is offline" in done.stderr and "cuberobot run --config" in done.stderr


def test_home_with_no_robot_on_the_broker(mqtt_broker: Broker) -> None:
    done = cli("home", *_broker_args(mqtt_broker))
    assert done.returncode == 1 and done.stdout == ""
    assert f"no robot sim on the broker {mqtt_broker.host}:{mqtt_broker.port}" in done.stderr


def test_home_with_no_broker() -> None:
    done = cli("home", "--config", str(PROFILE), "--mqtt", "127.0.0.1:1")
    assert done.returncode == 1
    assert "cannot reach the MQTT broker 127.0.0.1:1" in done.stderr
