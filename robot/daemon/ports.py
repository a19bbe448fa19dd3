"""The daemon's seams: what it needs of the firmware link, the cameras, the solver and the event
sink. Production passes :class:`firmware_protocol.link.FirmwareLink`,
:class:`robot.cameras.CameraRig`, :func:`solver.api.solve` and :class:`robot.mqtt.MqttBridge`;
the fast tests pass in-memory fakes (``tests/robot/daemon_fakes.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from firmware_protocol.link import FirmwareInfo, LinkConfig, MoveExecuted
from firmware_protocol.messages import Status
from firmware_protocol.moves import Move as WireMove
from robot.config import RobotConfig
from solver.solution import Solution

if TYPE_CHECKING:
    import numpy.typing as npt

    from vision.calibration import Calibration

__all__ = ["Cameras", "EventSink", "FirmwarePort", "Listener", "Solver", "link_config"]


class FirmwarePort(Protocol):
    """What the daemon uses of :class:`firmware_protocol.link.FirmwareLink`.

    ``execute`` yields one :class:`MoveExecuted` per move, in order, and ends normally when
    every move executed; otherwise it raises an
    :class:`~firmware_protocol.errors.ExecutionError` whose ``report`` is exact. It raises a
    :class:`~firmware_protocol.errors.LinkError` at once when it refuses to start. ``extend``
    appends moves to the running execution
    (:class:`~firmware_protocol.errors.ExecutionEndedError` when it has ended); ``latency_s``
    bounds how long they take to reach the firmware, ``round_trip_s`` is the typical round
    trip of a frame and its answer.
    """

    info: FirmwareInfo | None

    async def connect(self) -> FirmwareInfo: ...
    def execute(self, moves: Sequence[WireMove]) -> AsyncIterator[MoveExecuted]: ...
    def extend(self, moves: Sequence[WireMove]) -> None: ...
    def acknowledge_reset(self) -> None: ...
    async def status(self) -> Status: ...
    async def estop(self) -> Status: ...
    async def hold(self) -> Status: ...
    async def resume(self) -> Status: ...
    async def home(self, motor_mask: int = 0x3F) -> Status: ...
    async def close(self) -> None: ...

    @property
    def connected(self) -> bool: ...

    @property
    def latency_s(self) -> float: ...

    @property
    def round_trip_s(self) -> float: ...


class Cameras(Protocol):
    """What the daemon uses of :class:`robot.cameras.CameraRig`. ``capture`` blocks (the
    daemon calls it in a thread); it raises :class:`vision.errors.VisionError` on failure."""

    calibration: Calibration | None
    missing_calibration: tuple[str, ...]
    #: of the cameras in ``missing_calibration``, those whose calibration file is unusable,
    #: with what is wrong with it
    calibration_problems: dict[str, str]

    def capture(self) -> Mapping[str, npt.ArrayLike]: ...


class EventSink(Protocol):
    """Where status, events and command replies go (:class:`robot.mqtt.MqttBridge`). Never
    blocks; ``on_delivered`` runs once the event is safely out (the broker acknowledged it)."""

    def publish_status(self, status: dict[str, Any]) -> None: ...
    def publish_event(
        self,
        name: str,
        payload: dict[str, Any],
        on_delivered: Callable[[], None] | None = None,
    ) -> None: ...
    def reply(self, verb: str, payload: dict[str, Any]) -> None: ...


#: ``solver(cube, engine, **options)`` as :func:`solver.api.solve`; runs in a worker thread
Solver = Callable[..., Solution]
#: called with ``(event name or "status", payload)`` for everything the daemon publishes
Listener = Callable[[str, dict[str, Any]], None]


def link_config(config: RobotConfig) -> LinkConfig:
    """The firmware link's settings from a robot profile's ``[serial]`` section."""
    return LinkConfig(
        baudrate=config.serial.baud,
        connect_timeout_s=config.serial.connect_timeout_s,
        reconnect_timeout_s=config.serial.reconnect_budget_s,
    )
