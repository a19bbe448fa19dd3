"""The simulated stepper firmware, the serial line it sits behind, and fault injection.

Modules:

- :mod:`~firmware_protocol.sim.firmware` — :class:`SimulatedFirmware`, the firmware side of
  ``PROTOCOL.md`` in asyncio (frames, sessions, commands, replies), turning an injected
  :class:`TurnableCube`;
- :mod:`~firmware_protocol.sim.motion` — its motor side: queue, move groups and their timing,
  stops, scheduled faults;
- :mod:`~firmware_protocol.sim.board` — the board's configuration, non-volatile memory and move
  records.
- :mod:`~firmware_protocol.sim.faults` — :class:`FaultSpec` (``--faults`` specs) and
  :class:`~firmware_protocol.sim.faults.SerialLine`, one direction of the wire.
- :mod:`~firmware_protocol.sim.motors` — motor timing (:class:`MotorProfile`).
- :mod:`~firmware_protocol.sim.endpoints` — the firmware on a pty (:class:`PtyEndpoint`) or a TCP
  port (:class:`TcpEndpoint`).
- :mod:`~firmware_protocol.sim.harness` — a firmware, a pty and a connected link in one call, and
  the soak and overhead runs used by the tests and ``bench/link.py``.
"""

from __future__ import annotations

from firmware_protocol.sim.board import (
    FirmwareConfig,
    MoveRecord,
    NonVolatile,
    PortControl,
    TurnableCube,
)
from firmware_protocol.sim.endpoints import PtyEndpoint, TcpEndpoint
from firmware_protocol.sim.faults import FaultSpec, parse_fault_spec
from firmware_protocol.sim.firmware import SimulatedFirmware
from firmware_protocol.sim.motors import MotorProfile

__all__ = [
    "FaultSpec",
    "FirmwareConfig",
    "MotorProfile",
    "MoveRecord",
    "NonVolatile",
    "PortControl",
    "PtyEndpoint",
    "SimulatedFirmware",
    "TcpEndpoint",
    "TurnableCube",
    "parse_fault_spec",
]
