"""The simulated robot: the simulated firmware on a real pty, turning the solver's cube.

:class:`SimulatedRobot` is what ``serial.url = "sim"`` starts: the simulated firmware from
:mod:`firmware_protocol` on a real pseudo-terminal, holding a :class:`~robot.simcube.SolverCube`
that its motors turn (or, for a turntable or two-gripper profile, a
:class:`~robot.kinds.simulated.MechanismCube` that its motors carry). The cameras
(:mod:`robot.cameras`) render that cube through :meth:`SimulatedRobot.cube_state`.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from firmware_protocol.sim import (
    FirmwareConfig,
    MotorProfile,
    PtyEndpoint,
    SimulatedFirmware,
    parse_fault_spec,
)
from robot.config import RobotConfig
from robot.errors import ConfigError
from robot.kinds.simulated import MechanismCube, motor_profiles
from robot.simcube import SolverCube
from solver.cube.facelets import Cube

__all__ = ["EmulatedRobot", "SimulatedRobot", "face_motor_profiles", "grip_depth"]

logger = logging.getLogger(__name__)


def grip_depth(config: RobotConfig) -> int:
    """The most layers a gripper of the profile's robot holds on its cube (the simulated
    firmware's depth limit): the deepest motor's ``max_depth`` or ``depth_layers``, at most
    N - 1."""
    n = config.robot.cube_size
    motors = (config.motors.motor_of(f) for f in sorted(config.motors.faces))
    depths = [max(m.depths(n)) for m in motors if m is not None]
    return max(1, min(max(depths, default=1), n - 1))


def face_motor_profiles(config: RobotConfig) -> tuple[MotorProfile, ...]:
    """The six simulated motors' timing by wire motor number, from the profile's
    ``[motors.<FACE>]`` tables (a motor no face uses keeps the defaults)."""
    profiles = [MotorProfile()] * 6
    for face in config.motors.faces:
        motor = config.motors.motor_of(face)
        assert motor is not None
        profiles[motor.motor] = MotorProfile(motor.max_speed_dps, motor.accel_dps2, motor.settle_s)
    return tuple(profiles)


class SimulatedRobot:
    """The simulated firmware on a real pty, turning a :class:`SolverCube`.

    ``start()`` returns the pty path the daemon's firmware link opens. Each motor turns with its
    ``[motors.<FACE>]`` speed, acceleration and settle time (:func:`face_motor_profiles`; a
    mechanism kind's parts at the pace of its actions), so the wall time of a job is the
    profile's; ``[simulation]`` scales it (``speed_factor``) and sets the queue depth and fault
    injection; the layers its grippers may hold come from the profile's motors
    (:func:`grip_depth`).
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
        table = config.robot.mechanism_table
        #: the virtual cube the motors move: turned face by face, or carried by a mechanism
        self.cube: SolverCube | MechanismCube = (
            SolverCube(initial, facelets_by="scheme")
            if table is None
            else MechanismCube(initial, table, facelets_by="scheme")
        )
        fw_config = FirmwareConfig(
            motors=face_motor_profiles(config),
            queue_depth=sim.queue_depth,
            max_depth=grip_depth(config),
        )
        if table is not None:  # the parts move at the pace of the profile's actions
            fw_config = replace(fw_config, motors=motor_profiles(table))
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


class EmulatedRobot:
    """The reference C firmware in simavr (:mod:`firmware_protocol.emulator`) as the robot's
    motor board, the virtual cube following what its motors did.

    The harness records every STEP/DIR edge; :meth:`cube_state` (the cameras' source, called when
    the motors are idle) turns the starting cube by every whole turn recorded so far
    (:mod:`firmware_protocol.pulses`), so the cameras see exactly what the firmware moved.
    """

    def __init__(self, config: RobotConfig, start: Cube | None = None, *, seed: int = 0) -> None:
        sim = config.simulation
        if sim is None:
            raise ConfigError(
                "an emulated robot needs a [simulation] section",
                file=config.source,
                section="simulation",
            )
        self.config = config
        self.start_cube = start if start is not None else Cube.solved(config.robot.cube_size)
        self.seed = seed
        self.port = ""
        self._board: Any = None
        self._folder = tempfile.TemporaryDirectory(prefix="cuberobot-avr-")
        self.record = Path(self._folder.name) / "pulses.txt"

    async def start(self) -> str:
        from firmware_protocol.emulator import start_emulator

        sim = self.config.simulation
        assert sim is not None
        self._board = await asyncio.to_thread(
            start_emulator, sim.board, record=self.record, seed=self.seed
        )
        self.port = str(self._board.port)
        logger.info("emulated %s on %s", sim.board, self.port)
        return self.port

    def cube_state(self) -> Cube:
        from firmware_protocol.moves import Face
        from firmware_protocol.pulses import extract_turns, read_record

        if not self.record.exists() or self.record.stat().st_size == 0:
            return self.start_cube
        time.sleep(0.05)  # the harness flushes its record every 20 ms: the last turn is in it
        try:
            record = read_record(self.record, growing=True)
        except (ValueError, OSError) as exc:  # the header not written yet
            logger.debug("pulse record not readable yet: %s", exc)
            return self.start_cube
        suffix = {1: "", -1: "'", 2: "2", -2: "2"}
        moves = [
            Face(turn.motor).name + suffix[turn.quarter_turns]
            for turn in extract_turns(record)
            if turn.complete and turn.quarter_turns in suffix
        ]
        return self.start_cube.apply(" ".join(moves)) if moves else self.start_cube

    async def stop(self) -> None:
        if self._board is not None:
            await asyncio.to_thread(self._board.stop)
            self._board = None
        self._folder.cleanup()
