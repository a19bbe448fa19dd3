"""The simulated robot turns each motor with its profile's timing (``[motors.<FACE>]``)."""

from __future__ import annotations

from firmware_protocol.sim import MotorProfile
from firmware_protocol.sim.motors import group_time_s
from robot.simrobot import SimulatedRobot, face_motor_profiles
from tests.robot.helpers import sim_config


def test_the_simulated_motors_have_the_profiles_speed_acceleration_and_settle() -> None:
    base = sim_config()
    assert base.motors.R is not None
    fast_r = base.motors.R.model_copy(
        update={"max_speed_dps": 3000.0, "accel_dps2": 90000.0, "settle_s": 0.0}
    )
    config = base.model_copy(update={"motors": base.motors.model_copy(update={"R": fast_r})})
    profiles = face_motor_profiles(config)
    assert profiles[fast_r.motor] == MotorProfile(3000.0, 90000.0, 0.0)
    assert profiles[0] == MotorProfile(1500.0, 40000.0, 0.005)  # U: the profile's defaults
    assert group_time_s(profiles, [(fast_r.motor, 1)]) < group_time_s(profiles, [(0, 1)])
    assert SimulatedRobot(config).firmware.config.motors == profiles
    # [simulation] speed_factor scales the profile's motors
    doubled = config.model_copy(
        update={"simulation": config.simulation.model_copy(update={"speed_factor": 2.0})}  # type: ignore[union-attr]
    )
    scaled = SimulatedRobot(doubled).firmware.config.motors
    assert scaled == tuple(p.scaled(2.0) for p in profiles)
