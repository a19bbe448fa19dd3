"""The simulated robot: the simulated firmware on a real pty, turning the solver's cube.

:class:`SimulatedRobot` is what ``serial.url = "sim"`` starts: the simulated firmware from
:mod:`firmware_protocol` on a real pseudo-terminal, holding a :class:`~robot.simcube.SolverCube`
that its motors turn. The cameras (:mod:`robot.cameras`) render that cube through
:meth:`SimulatedRobot.cube_state`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from firmware_protocol.sim import FirmwareConfig, PtyEndpoint, SimulatedFirmware, parse_fault_spec
from robot.config import RobotConfig
from robot.errors import ConfigError
from robot.simcube import SolverCube
from solver.cube.facelets import Cube

__all__ = ["SimulatedRobot"]

logger = logging.getLogger(__name__)


class SimulatedRobot:
    """The simulated firmware on a real pty, turning a :class:`SolverCube`.

    ``start()`` returns the pty path the daemon's firmware link opens. The motor speed, queue
    depth and fault injection come from the profile's ``[simulation]`` section.
    """

    def __init__(
        self,
        config: RobotConfig,
        start: Cube | None = None,
        *,
        seed: int = 0,
        state_file: Path | None = None,
    ) -> None:
        sim = config.simulation
        if sim is None:
            raise ConfigError(
                "a simulated robot needs a [simulation] section",
                file=config.source,
                section="simulation",
            )
        self.config = config
        initial = start if start is not None else Cube.solved(config.robot.cube_size)
        self.cube = SolverCube(initial, facelets_by="scheme")
        fw_config = FirmwareConfig(queue_depth=sim.queue_depth)
        if sim.speed_factor != 1.0:
            fw_config = fw_config.with_speed(sim.speed_factor)
        faults = parse_fault_spec(sim.faults) if sim.faults else None
        self.firmware = SimulatedFirmware(
            cube=self.cube,
            config=fw_config,
            faults=faults,
            seed=seed,
            baud=config.serial.baud,
            state_file=state_file,
        )
        self.endpoint = PtyEndpoint(self.firmware)
        self.port = ""

    def cube_state(self) -> Cube:
        return self.cube.cube

    async def start(self) -> str:
        await self.firmware.start()
        self.port = await self.endpoint.start()
        logger.info("simulated firmware on %s", self.port)
        return self.port

    async def stop(self) -> None:
        await self.endpoint.close()
        await self.firmware.stop()
