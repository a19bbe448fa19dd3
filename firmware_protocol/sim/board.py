"""The simulated board's data: its configuration, its non-volatile memory, the record of every
move, and what it needs of the cube it turns and of the port it sits behind."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from firmware_protocol.messages import PROTOCOL_VERSION
from firmware_protocol.sim.motors import MotorProfile

__all__ = ["NO_MOTOR", "FirmwareConfig", "MoveRecord", "NonVolatile", "PortControl", "TurnableCube"]

#: The motor field of a report that concerns no motor.
NO_MOTOR = 0xFF


class TurnableCube(Protocol):
    """What the simulated firmware needs of a cube: turn a face, show the facelets."""

    def apply(self, face: str, quarter_turns: int, depth: int = 1) -> None:
        """Turn the ``depth`` outer layers of ``face`` (one of ``URFDLB``) by ``quarter_turns``
        (±1, ±2; + is clockwise)."""

    def facelets(self) -> str:
        """The facelet string, faces U R F D L B (Kociemba order)."""


class PortControl(Protocol):
    """What an endpoint lets the firmware do to the port (for the ``vanish`` fault)."""

    def vanish(self, seconds: float) -> None:
        """Make the port disappear for ``seconds``, then come back."""


@dataclass
class NonVolatile:
    """Memory that survives a reset (EEPROM / backup RAM on a real board)."""

    boot_count: int = 0
    boot_id: int = 0
    last_received: int = 0
    started_upto: int = 0
    last_executed: int = 0


@dataclass(frozen=True, slots=True)
class FirmwareConfig:
    """The simulated board. Times in seconds unless the name says otherwise."""

    motors: tuple[MotorProfile, ...] = (MotorProfile(),) * 6
    queue_depth: int = 16
    max_batch: int = 16
    watchdog_ms: int = 1000
    status_period_s: float = 0.25
    boot_time_s: float = 0.05
    home_time_s: float = 0.3
    nak_holdoff_s: float = 0.02
    firmware_version: tuple[int, int, int] = (1, 0, 0)
    #: the protocol its IDENT speaks (1: no boot_flags byte, as a firmware before v2)
    protocol_version: int = PROTOCOL_VERSION
    #: the most layers a gripper holds (a move's depth field); deeper moves get NAK BAD_MOVE
    max_depth: int = 1

    def __post_init__(self) -> None:
        if len(self.motors) != 6:
            raise ValueError(f"the simulated firmware has 6 motors, got {len(self.motors)}")
        if not 2 <= self.queue_depth <= 255:
            raise ValueError(f"queue_depth must be 2..255, got {self.queue_depth}")
        if not 1 <= self.max_batch <= 36:
            raise ValueError(f"max_batch must be 1..36, got {self.max_batch}")
        if not 10 <= self.watchdog_ms <= 65535:
            raise ValueError(f"watchdog_ms must be 10..65535, got {self.watchdog_ms}")
        if not 1 <= self.max_depth <= 16:
            raise ValueError(f"max_depth must be 1..16 layers, got {self.max_depth}")

    def with_speed(self, factor: float) -> FirmwareConfig:
        """Every motor ``factor`` times faster (for quick tests)."""
        return replace(self, motors=tuple(m.scaled(factor) for m in self.motors))


@dataclass
class MoveRecord:
    """One move as the firmware saw it. ``outcome``: queued, executed, interrupted, discarded."""

    index: int
    motor: int
    quarter_turns: int
    boot_id: int
    received_at: float
    depth: int = 1
    started_at: float | None = None
    finished_at: float | None = None
    group_time_s: float = 0.0
    outcome: str = "queued"
