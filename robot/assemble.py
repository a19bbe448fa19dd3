"""Putting a daemon together from a profile: the simulated robot (when ``serial.url = "sim"``),
the cameras, the journal, the broker (embedded, or the one given) and the firmware link.

Everything started is registered on an ``AsyncExitStack`` so it stops in reverse order; the CLI
(``run``, ``demo``) and the end-to-end tests share this one path.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from firmware_protocol import FirmwareLink
from robot.broker import Credentials, EmbeddedBroker
from robot.cameras import CameraRig
from robot.config import RobotConfig
from robot.daemon import Daemon, link_config
from robot.daemon.prepare import solver_tables
from robot.errors import ConfigError
from robot.journal_async import AsyncJournal
from robot.journal_guard import open_journal
from robot.simrobot import EmulatedRobot, SimulatedRobot
from solver.cube.facelets import Cube

if TYPE_CHECKING:
    from robot.web import WebServer

__all__ = ["Assembly", "assemble", "sw_version"]


def sw_version() -> str:
    try:
        return version("cuberobot")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass(frozen=True, slots=True)
class Assembly:
    daemon: Daemon
    sim: SimulatedRobot | EmulatedRobot | None
    broker: EmbeddedBroker | None
    mqtt_address: str  # "host:port", or "off"
    web: WebServer | None = None


async def assemble(
    config: RobotConfig,
    stack: contextlib.AsyncExitStack,
    *,
    mqtt: tuple[str, int] | None = None,
    journal_path: Path | None = None,
    web_port: int | None = None,
    sim_start: Cube | None = None,
    seed: int = 0,
) -> Assembly:
    """Start the parts of a daemon (not the daemon itself: ``await assembly.daemon.run()``)."""
    sim: SimulatedRobot | EmulatedRobot | None = None
    port = config.serial.url
    if config.simulated:
        assert config.simulation is not None
        if config.simulation.emulator == "avr":
            sim = EmulatedRobot(config, sim_start, seed=seed)
        else:
            sim = SimulatedRobot(config, sim_start, seed=seed)
        port = await sim.start()
        stack.push_async_callback(sim.stop)
    cameras = CameraRig(config, sim.cube_state if sim is not None else None, seed=seed)
    sync_journal, journal_problem = open_journal(
        Path(journal_path or config.resolve(config.journal.path))
    )
    journal = AsyncJournal(sync_journal)
    stack.push_async_callback(journal.close)
    host: str | None = None
    mport = 0
    broker = None
    if mqtt is not None:
        host, mport = mqtt
    elif config.mqtt.enabled and config.mqtt.embedded:
        password = config.mqtt_password()
        broker = EmbeddedBroker(
            config.mqtt.embedded_host,
            config.mqtt.embedded_port,
            credentials=(
                Credentials(config.mqtt.username, password or "") if config.mqtt.username else None
            ),
            viewer=(
                Credentials(config.mqtt.viewer_username, config.mqtt_viewer_password() or "")
                if config.mqtt.viewer_username
                else None
            ),
        )
        await broker.start()
        stack.push_async_callback(broker.stop)
        host, mport = broker.host, broker.port
    elif config.mqtt.enabled:
        host, mport = config.mqtt.host, config.mqtt.port

    def make_link() -> FirmwareLink:
        return FirmwareLink(port, config=link_config(config))

    daemon = Daemon(
        config,
        link=make_link(),
        link_factory=make_link,
        cameras=cameras,
        journal=journal,
        mqtt_host=host,
        mqtt_port=mport,
        sw_version=sw_version(),
        journal_problem=journal_problem,
        prepare=solver_tables(config),
    )
    address = f"{host}:{mport}" if host is not None else "off"
    web = await _start_web(config, daemon, stack, web_port)
    return Assembly(daemon, sim, broker, address, web)


async def _start_web(
    config: RobotConfig, daemon: Daemon, stack: contextlib.AsyncExitStack, port: int | None
) -> WebServer | None:
    """The robot's page, when ``[web] enabled`` (``port`` overrides the profile's)."""
    if not config.web.enabled:
        return None
    from robot.web import WebServer
    from robot.web.backend import DaemonBackend

    server = WebServer(
        DaemonBackend(daemon),
        host=config.web.host,
        port=config.web.port if port is None else port,
        token=config.web_token(),
    )
    try:
        await server.start()
    except OSError as exc:  # a port in use, a host not of this computer: was a traceback
        raise ConfigError(
            str(exc.strerror), file=config.source, section="web", key="host / port"
        ) from exc
    stack.push_async_callback(server.stop)
    daemon.listeners.append(server.publish)
    return server
