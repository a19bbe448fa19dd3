"""``cuberobot resume``, ``abort`` and ``estop``: the commands the daemon's recovery messages
name, each followed as an operator would, against a real daemon (simulated robot) on a private
Mosquitto."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from robot.assemble import Assembly, assemble
from robot.config import RobotConfig
from solver.cube.facelets import Cube
from tests.conftest import Broker, FirmwareProcess
from tests.robot.helpers import Recorder, run, sim_config
from tests.robot.test_cli_home import PROFILE, TOPIC, cli, cli_async
from tests.robot.test_e2e import scrambled

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("solver_tables")]


@contextlib.asynccontextmanager
async def daemon_on(
    broker: Broker, journal: Path, config: RobotConfig, start: Cube
) -> AsyncIterator[Assembly]:
    async with contextlib.AsyncExitStack() as stack:
        parts = await assemble(
            config, stack, mqtt=(broker.host, broker.port), journal_path=journal, sim_start=start
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


def _args(broker: Broker) -> list[str]:
    return ["--config", str(PROFILE), "--mqtt", f"{broker.host}:{broker.port}"]


def test_replaced_firmware_then_resume_rescan_as_advised(
    mqtt_broker: Broker, tmp_path: Path
) -> None:
    """The daemon stops mid-job; the firmware is replaced (its counters start at 0); the new
    daemon says the job needs a rescan and names the command; following it solves the cube."""
    journal = tmp_path / "journal.sqlite"
    slow = sim_config(speed_factor=0.5)

    async def body() -> tuple[str, tuple[int, str, str], tuple[int, str, str], bool]:
        async with daemon_on(mqtt_broker, journal, slow, scrambled(5)) as first:
            async with Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec:
                await rec.publish(f"{TOPIC}/cmd/start", "{}")
                await rec.wait(lambda: len(rec.events("move_executed")) >= 3, 60)
            assert first.sim is not None
            cube_now = first.sim.cube_state()
        # a new firmware (fresh counters), the same cube, the same journal
        async with daemon_on(mqtt_broker, journal, sim_config(), cube_now) as second:
            async with Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec:
                await rec.wait(lambda: bool(rec.events("error")), 20)
                advice = rec.events("error")[-1]["message"]
                plain = await cli_async("resume", *_args(mqtt_broker))
                rescan = await cli_async("resume", "--rescan", *_args(mqtt_broker))
                await rec.wait(lambda: bool(rec.events("done")), 90)
            assert second.sim is not None
            return advice, plain, rescan, second.sim.cube_state().is_solved()

    advice, plain, rescan, solved = run(body(), 240)
    assert '"rescan": true' in advice
    assert plain[0] == 1 and "firmware_counter" in plain[2] and '{"rescan": true}' in plain[2]
    assert rescan[0] == 0, rescan[2]
    assert json.loads(rescan[1])["ok"] is True and solved


def test_abort_and_estop_through_the_daemon(mqtt_broker: Broker, tmp_path: Path) -> None:
    async def body() -> list[tuple[int, str, str]]:
        config = sim_config(speed_factor=0.25)
        async with (
            daemon_on(mqtt_broker, tmp_path / "j.sqlite", config, scrambled(7)),
            Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec,
        ):
            idle_abort = await cli_async("abort", *_args(mqtt_broker))
            await rec.publish(f"{TOPIC}/cmd/start", "{}")
            await rec.wait(lambda: bool(rec.events("move_executed")), 60)
            aborted = await cli_async("abort", *_args(mqtt_broker))
            before = len(rec.events("move_executed"))
            await rec.publish(f"{TOPIC}/cmd/start", "{}")
            await rec.wait(lambda: len(rec.events("move_executed")) >= before + 2, 60)
            stopped = await cli_async("estop", *_args(mqtt_broker))
            await rec.wait(lambda: len(rec.events("aborted")) >= 2, 30)
            homed = await cli_async("home", *_args(mqtt_broker))
            return [idle_abort, aborted, stopped, homed]

    idle_abort, aborted, stopped, homed = run(body(), 240)
    assert idle_abort[0] == 1 and "not_running" in idle_abort[2]
    for code, out, err in (aborted, stopped, homed):
        assert code == 0, err
        assert json.loads(out)["ok"] is True and json.loads(out)["source"] == "cli"


def test_estop_directly_on_the_firmware(
    firmware_process: Callable[..., FirmwareProcess],
) -> None:
    fw = firmware_process(speed=5.0)
    stopped = cli("estop", "--port", fw.port)
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped, firmware STOPPED" in stopped.stdout and "cuberobot home" in stopped.stdout
    refused = cli("send", fw.port, "R")
    assert refused.returncode == 1 and "cuberobot home" in refused.stderr
    assert cli("home", "--port", fw.port).returncode == 0
    assert cli("send", fw.port, "R").returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["resume"], id="resume-without-config"),
        pytest.param(["estop"], id="estop-without-target"),
        pytest.param(
            ["estop", "--port", "/dev/null", "--mqtt", "127.0.0.1:1"], id="mqtt-with-port"
        ),
        pytest.param(["abort", "--config", str(PROFILE)], id="embedded-broker-on-any-port"),
    ],
)
def test_usage_errors(args: list[str]) -> None:
    done = cli(*args)
    assert done.returncode == 2, done.stderr
