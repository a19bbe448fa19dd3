"""The robot daemon (see :mod:`robot.daemon.core`)."""

from robot.daemon.core import Cameras, Daemon, FirmwarePort, Solver, State, link_config

__all__ = ["Cameras", "Daemon", "FirmwarePort", "Solver", "State", "link_config"]
