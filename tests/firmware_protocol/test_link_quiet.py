"""A vanished port is said once (lost, then gone), not on every reconnect attempt: the log of a
robot whose cable is out stays readable."""

from __future__ import annotations

import asyncio
import logging

import pytest

from firmware_protocol import FirmwareLink, LinkConfig
from firmware_protocol.sim import FirmwareConfig, PtyEndpoint, SimulatedFirmware
from robot.simcube import SolverCube
from solver.cube.facelets import Cube


def test_a_vanished_port_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        fw = SimulatedFirmware(cube=SolverCube(Cube.solved(3)), config=FirmwareConfig())
        await fw.start()
        endpoint = PtyEndpoint(fw)
        port = await endpoint.start()
        link = FirmwareLink(port, config=LinkConfig(reconnect_timeout_s=0.5))
        await link.connect()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            await endpoint.close()  # the cable is pulled and stays out
            await asyncio.sleep(3.0)
        await link.close()
        await fw.stop()

    asyncio.run(scenario())
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert 1 <= len(loud) <= 3, [r.getMessage()[:80] for r in loud]
