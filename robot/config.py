"""Robot profiles: TOML files loaded once into frozen, validated objects.

A profile describes one robot (every key is in the README's "The robot daemon" section;
``configs/`` has examples)::

    [robot]    id, name, cube_size
    [serial]   url (a device path, a pty path, socket://host:port, or "sim" for the simulated
               firmware started by the daemon itself), baud, timeouts
    [motors]   simultaneous; one table per face that has a motor: [motors.U] motor = 0, ...,
               max_depth (layers its gripper can hold, for big cubes)
    [[cameras]] name, source, width/height, view ("face" | "corner"), faces, calibration;
               a turntable or two-gripper robot may have one camera with view = "face" (the
               one-camera scan: :attr:`RobotConfig.scan_camera`)
    [colours]  scheme, calibration_file
    [solver]   engine ("auto": the engine for the cube size), budget_s, max_length, anytime,
               head_start_s; [solver.cost] the robot-time cost model
    [mqtt]     host ("" = embedded broker), port, base_topic, credentials;
               [mqtt.tls], [mqtt.discovery]
    [journal]  path
    [simulation] what the simulated robot does (speed, lighting, faults); simulated robots only

Errors name the file, the section and the key (:class:`~robot.errors.ConfigError`); unknown keys
are rejected; relative paths are resolved against the profile's folder.
"""

from __future__ import annotations

import ipaddress
import logging
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from robot.config_errors import format_errors
from robot.errors import ConfigError
from robot.kinds.profile import (
    Kind,
    TurntableConfig,
    TwoGripperConfig,
    largest_n,
    table_defaults,
)
from solver.api import AUTO, SIZED_ENGINES, engine_for_size, engine_names
from solver.cost import CostModel
from solver.cube.facelets import SCHEMES
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE

__all__ = [
    "CONFIG_VERSION",
    "CameraConfig",
    "ColoursConfig",
    "CostConfig",
    "DiscoveryConfig",
    "JournalConfig",
    "MotorConfig",
    "MotorsConfig",
    "MqttConfig",
    "RobotConfig",
    "RobotSection",
    "ScanConfig",
    "SerialConfig",
    "SimulationConfig",
    "SolverConfig",
    "TlsConfig",
    "WebConfig",
    "engine_solves",
    "load_config",
    "parse_config",
]

logger = logging.getLogger(__name__)

#: Version of the profile format (logged at start).
CONFIG_VERSION = 1

_FACE_NAMES = ("U", "R", "F", "D", "L", "B")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RobotSection(_Section):
    """``[robot]``: identity, the cube it solves and its mechanism kind (``kind``; a
    turntable's or two-gripper's own parameters in ``[robot.turntable]`` /
    ``[robot.two_gripper]``: :mod:`robot.kinds.profile`)."""

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")] = "cuberobot"
    name: str = "Cube robot"
    cube_size: Annotated[int, Field(ge=2, le=7)] = 3
    kind: Kind = "six-face"
    turntable: TurntableConfig | None = None
    two_gripper: TwoGripperConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _kind_table(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return table_defaults(str(data.get("kind", "six-face")), data)
        return data

    @model_validator(mode="after")
    def _kind(self) -> RobotSection:
        for key, kind in (("turntable", "turntable"), ("two_gripper", "two-gripper")):
            if getattr(self, key) is not None and self.kind != kind:
                raise ValueError(
                    f'@robot.{key}: this table is for kind = "{kind}", but kind is '
                    f'"{self.kind}"; set kind or remove the table'
                )
        largest = largest_n(self.kind, self.mechanism_table)
        if self.cube_size > largest:
            raise ValueError(
                f"@robot.cube_size: a {self.kind} robot with these depths solves cubes up to "
                f"N={largest}, not N={self.cube_size}; add cover or gripper depths or lower "
                "cube_size"
            )
        return self

    @property
    def mechanism_table(self) -> TurntableConfig | TwoGripperConfig | None:
        """The kind's own table (None for six-face)."""
        if self.kind == "turntable":
            return self.turntable
        if self.kind == "two-gripper":
            return self.two_gripper
        return None


class SerialConfig(_Section):
    """``[serial]``: where the firmware is."""

    url: str = "/dev/ttyACM0"
    baud: Annotated[int, Field(gt=0)] = 115200
    connect_timeout_s: Annotated[float, Field(gt=0)] = 5.0
    reconnect_budget_s: Annotated[float, Field(ge=0)] = 10.0
    #: how long ``resume`` waits for a lost link to come back before refusing
    resume_wait_s: Annotated[float, Field(ge=0, le=600)] = 30.0
    #: how long ``resume`` waits for the firmware to finish the moves still in its queue
    #: (journaled as they execute) before it sends anything; then the job stays resumable
    resume_drain_s: Annotated[float, Field(gt=0, le=600)] = 30.0


class MotorConfig(_Section):
    """``[motors.<FACE>]``: the motor that turns one face."""

    motor: Annotated[int, Field(ge=0, le=5)]
    steps_per_quarter_turn: Annotated[int, Field(gt=0)] = 200
    max_speed_dps: Annotated[float, Field(gt=0)] = 1500.0
    accel_dps2: Annotated[float, Field(gt=0)] = 40000.0
    settle_s: Annotated[float, Field(ge=0)] = 0.005
    #: a fixed gripper that always turns this many layers (legacy; see ``max_depth``)
    depth_layers: Annotated[int, Field(ge=1)] = 1
    #: layers the gripper can hold: it turns 1..max_depth outer layers, chosen move by move
    #: (big cubes; at most N-1 are used on an N cube)
    max_depth: Annotated[int, Field(ge=1, le=16)] = 1
    reversed: bool = False

    @model_validator(mode="after")
    def _depths(self) -> MotorConfig:
        if self.depth_layers != 1 and self.max_depth != 1:
            raise ValueError(
                f"depth_layers = {self.depth_layers} (a gripper fixed at that depth) and "
                f"max_depth = {self.max_depth} (a gripper that holds 1..max_depth layers) "
                "exclude each other; keep one of them"
            )
        return self

    def depths(self, n: int) -> tuple[int, ...]:
        """The layer counts this motor can turn on an ``n`` cube (never the whole cube)."""
        if self.max_depth > 1:
            return tuple(range(1, min(self.max_depth, n - 1) + 1))
        return (self.depth_layers,)


class MotorsConfig(_Section):
    """``[motors]``: which faces have motors; a face with no table has none."""

    simultaneous: bool = True
    U: MotorConfig | None = None
    R: MotorConfig | None = None
    F: MotorConfig | None = None
    D: MotorConfig | None = None
    L: MotorConfig | None = None
    B: MotorConfig | None = None

    def motor_of(self, face: Face) -> MotorConfig | None:
        value: MotorConfig | None = getattr(self, face.name)
        return value

    @property
    def faces(self) -> frozenset[Face]:
        """Faces that have a motor."""
        return frozenset(f for f in Face if self.motor_of(f) is not None)

    @property
    def missing(self) -> frozenset[Face]:
        return frozenset(Face) - self.faces

    @model_validator(mode="after")
    def _check(self) -> MotorsConfig:
        present = [f for f in Face if self.motor_of(f) is not None]
        if len(present) < 5:
            raise ValueError(
                f"only {len(present)} faces have motors ({''.join(f.name for f in present)}); "
                "the planner needs at least five (a face-turning robot with one face missing)"
            )
        seen: dict[int, Face] = {}
        for face in present:
            cfg = self.motor_of(face)
            assert cfg is not None
            if cfg.motor in seen:
                raise ValueError(
                    f"motor {cfg.motor} is given to both {seen[cfg.motor].name} and {face.name}"
                )
            seen[cfg.motor] = face
            other = self.motor_of(OPPOSITE[face])
            if self.simultaneous and other is not None and (cfg.motor + 3) % 6 != other.motor:
                raise ValueError(
                    f"faces {face.name} and {OPPOSITE[face].name} turn together (simultaneous = "
                    f"true) but motors {cfg.motor} and {other.motor} are not a firmware pair "
                    "(pairs are m and m+3); renumber them or set simultaneous = false"
                )
        return self


def _default_motors() -> MotorsConfig:
    return MotorsConfig.model_validate(
        {name: MotorConfig(motor=i) for i, name in enumerate(_FACE_NAMES)}
    )


class CameraConfig(_Section):
    """``[[cameras]]``: one camera and the faces it sees."""

    name: Annotated[str, Field(min_length=1)]
    source: str = "simulated"
    width: Annotated[int, Field(gt=0)] = 1280
    height: Annotated[int, Field(gt=0)] = 720
    view: Literal["face", "corner"] = "corner"
    faces: tuple[str, ...]
    calibration: str = ""
    lock_exposure: bool = True
    lock_white_balance: bool = True

    @field_validator("faces")
    @classmethod
    def _faces(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in _FACE_NAMES:
                raise ValueError(f"{name!r} is not a face; use U R F D L B")
        if len(set(value)) != len(value):
            raise ValueError(f"a face is listed twice in {list(value)}")
        return value

    @model_validator(mode="after")
    def _view(self) -> CameraConfig:
        want = 1 if self.view == "face" else 3
        if len(self.faces) != want:
            raise ValueError(f"a {self.view} view sees {want} face(s), {len(self.faces)} listed")
        if self.view == "corner":
            fs = [Face[n] for n in self.faces]
            if any(OPPOSITE[a] is b for a in fs for b in fs):
                raise ValueError(
                    f"a corner view sees three mutually adjacent faces, not {''.join(self.faces)}"
                )
        return self


class ColoursConfig(_Section):
    """``[colours]``: the cube's colour scheme and an optional calibration."""

    scheme: str = "white-green"
    calibration_file: str = ""

    @field_validator("scheme")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if value not in SCHEMES:
            raise ValueError(f"unknown colour scheme {value!r}; choose one of {list(SCHEMES)}")
        return value


class CostConfig(_Section):
    """``[solver.cost]``: seconds this robot takes (the solver's robot-time objective)."""

    quarter_turn_s: Annotated[float, Field(ge=0)] = 0.10
    half_turn_s: Annotated[float, Field(ge=0)] = 0.17
    pair_extra_s: Annotated[float, Field(ge=0)] = 0.01
    settle_s: Annotated[float, Field(ge=0)] = 0.02

    def model(self, simultaneous: bool = True) -> CostModel:
        return CostModel(
            self.quarter_turn_s, self.half_turn_s, self.pair_extra_s, self.settle_s, simultaneous
        )


class SolverConfig(_Section):
    """``[solver]``: which engine, how long it may search."""

    engine: str = "twophase"
    budget_s: Annotated[float, Field(ge=0)] = 1.0
    max_length: Annotated[int, Field(gt=0)] | None = None
    cost: CostConfig = CostConfig()
    #: anytime solving: the motors start on the first solution and the search goes on while
    #: they turn, replacing the moves not yet sent by faster ones (``budget_s`` is then unused)
    anytime: bool = False
    #: anytime: how long the search runs before the first move (0: the first solution found)
    head_start_s: Annotated[float, Field(ge=0, le=1)] = 0.003

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: str) -> str:
        if value != AUTO and value not in engine_names():
            raise ValueError(
                f"unknown engine {value!r}; choose one of {[AUTO, *engine_names()]} "
                f"({AUTO!r}: the engine for the cube size)"
            )
        return value

    def solves(self, n: int) -> bool:
        """Whether :attr:`engine` solves an ``n`` cube (``auto``: any N >= 2; the engines
        without a size rule in :data:`solver.api.SIZED_ENGINES` solve 3x3 cubes only)."""
        return engine_solves(self.engine, n)


def engine_solves(engine: str, n: int) -> bool:
    """Whether ``engine`` (a name of :func:`solver.api.engine_names`, or ``auto``) solves an
    ``n`` cube."""
    if engine == AUTO:
        return n >= 2
    accepts = SIZED_ENGINES.get(engine)
    return accepts(n) if accepts is not None else n == 3


class TlsConfig(_Section):
    """``[mqtt.tls]``."""

    enabled: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    insecure: bool = False


class DiscoveryConfig(_Section):
    """``[mqtt.discovery]``: Home Assistant MQTT discovery."""

    enabled: bool = True
    prefix: str = "homeassistant"


class MqttConfig(_Section):
    """``[mqtt]``: the broker. ``host = ""`` starts an embedded broker on
    ``embedded_host:embedded_port`` (localhost only)."""

    enabled: bool = True
    host: str = ""
    port: Annotated[int, Field(ge=1, le=65535)] = 1883
    embedded_host: str = "127.0.0.1"
    embedded_port: Annotated[int, Field(ge=0, le=65535)] = 1883
    base_topic: Annotated[str, Field(pattern=r"^[^#+/][^#+]*[^#+/]$|^[^#+/]$")] = "cuberobot"
    client_id: str = ""
    username: str = ""
    password: str = ""
    password_file: str = ""
    #: embedded broker only: a second login that may subscribe but never publish (dashboards)
    viewer_username: str = ""
    viewer_password: str = ""
    viewer_password_file: str = ""
    keepalive_s: Annotated[int, Field(ge=5, le=3600)] = 30
    reconnect_min_s: Annotated[float, Field(gt=0)] = 0.5
    reconnect_max_s: Annotated[float, Field(gt=0)] = 30.0
    queue_limit: Annotated[int, Field(ge=10)] = 10000
    tls: TlsConfig = TlsConfig()
    discovery: DiscoveryConfig = DiscoveryConfig()

    @model_validator(mode="after")
    def _check(self) -> MqttConfig:
        if self.password and self.password_file:
            raise ValueError("give password or password_file, not both")
        if (self.password or self.password_file) and not self.username:
            raise ValueError("a password needs a username")
        if self.reconnect_max_s < self.reconnect_min_s:
            raise ValueError("reconnect_max_s must be >= reconnect_min_s")
        if self.embedded and not _is_loopback(self.embedded_host) and not self.username:
            raise ValueError(
                f"@mqtt.embedded_host: {self.embedded_host!r} would open the robot's own broker "
                "(and its motors) to the network with no login; set [mqtt] username and "
                'password (or password_file), or keep embedded_host = "127.0.0.1"'
            )
        if self.viewer_password and self.viewer_password_file:
            raise ValueError("give viewer_password or viewer_password_file, not both")
        if self.viewer_username and not self.embedded:
            raise ValueError(
                "@mqtt.viewer_username: a viewer login is for the embedded broker; with an "
                "external broker give the read-only user in its ACL (see docs/security.md)"
            )
        if self.viewer_username and not self.username:
            raise ValueError("@mqtt.viewer_username: a viewer login needs the main username too")
        if self.viewer_username and not (self.viewer_password or self.viewer_password_file):
            raise ValueError("@mqtt.viewer_password: the viewer login needs a password")
        if self.viewer_username and self.viewer_username == self.username:
            raise ValueError("@mqtt.viewer_username: must differ from username")
        if self.embedded and self.username and not (self.password or self.password_file):
            raise ValueError(
                "@mqtt.password: the embedded broker requires a password with its username; "
                "set password or password_file"
            )
        return self

    @property
    def embedded(self) -> bool:
        return self.enabled and not self.host


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost: may resolve anywhere


class WebConfig(_Section):
    """``[web]``: the robot's own web page (off unless enabled). Reading needs nothing; every
    command needs the token (``token`` or ``token_file``); without one the page is read-only."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8080
    token: str = ""
    token_file: str = ""

    @model_validator(mode="after")
    def _check(self) -> WebConfig:
        if self.token and self.token_file:
            raise ValueError("give token or token_file, not both")
        if self.token and len(self.token) < 12:
            raise ValueError("@web.token: use at least 12 characters (it guards the motors)")
        return self

    @property
    def loopback(self) -> bool:
        return _is_loopback(self.host)


class JournalConfig(_Section):
    """``[journal]``: the SQLite job journal."""

    path: str = "cuberobot-journal.sqlite"


class SimulationConfig(_Section):
    """``[simulation]``: the simulated robot (firmware on a pty, rendered cameras)."""

    speed_factor: Annotated[float, Field(gt=0)] = 1.0
    lighting: Literal["studio", "varied", "harsh"] = "varied"
    noise: Annotated[float, Field(ge=0, le=1)] = 0.3
    faults: str = ""
    queue_depth: Annotated[int, Field(ge=2, le=255)] = 16
    #: the firmware: the Python simulation, or the reference C firmware in simavr
    emulator: Literal["python", "avr"] = "python"
    board: Literal["mega2560_ramps", "uno_cnc"] = "mega2560_ramps"

    @field_validator("faults")
    @classmethod
    def _faults(cls, value: str) -> str:
        from firmware_protocol.sim.faults import parse_fault_spec

        parse_fault_spec(value)  # ValueError names the item and the known faults
        return value


class ScanConfig(_Section):
    """``[scan]``: what the robot does when a read is in doubt, and the check after a solve."""

    #: reads of the same view when a read is not a valid cube as is
    attempts: Annotated[int, Field(ge=1, le=5)] = 2
    #: face turns (each read, then undone) to see doubtful stickers from another view
    rescan_turns: Annotated[int, Field(ge=0, le=12)] = 4
    #: read the cube after execution; it must read as solved
    verify: bool = True
    #: solves started again from the state seen when the check finds a misread
    corrections: Annotated[int, Field(ge=0, le=5)] = 2


class RobotConfig(_Section):
    """A whole robot profile. ``source`` is the file it came from (for messages); ``folder``,
    when set, is the folder its relative paths are resolved against instead of the file's own
    (a bundled profile's: :mod:`robot.bundled`)."""

    robot: RobotSection = RobotSection()
    serial: SerialConfig = SerialConfig()
    motors: MotorsConfig = Field(default_factory=_default_motors)
    cameras: tuple[CameraConfig, ...] = ()
    colours: ColoursConfig = ColoursConfig()
    solver: SolverConfig = SolverConfig()
    scan: ScanConfig = ScanConfig()
    mqtt: MqttConfig = MqttConfig()
    journal: JournalConfig = JournalConfig()
    web: WebConfig = WebConfig()
    simulation: SimulationConfig | None = None
    source: str = ""
    folder: str = ""

    @model_validator(mode="after")
    def _check(self) -> RobotConfig:
        names = [c.name for c in self.cameras]
        if len(set(names)) != len(names):
            raise ValueError(f"@cameras: camera names must be unique, got {names}")
        if self.cameras and self.scan_camera is None:
            seen = {f for c in self.cameras for f in c.faces}
            missing = [f for f in _FACE_NAMES if f not in seen]
            if missing:
                one = (
                    " (one camera that looks at one face needs a robot that turns the cube over: "
                    '[robot] kind = "turntable" or "two-gripper")'
                    if self.robot.kind == "six-face" and len(self.cameras) == 1
                    else ""
                )
                raise ValueError(
                    f"@cameras: no camera sees face(s) {' '.join(missing)}; the robot cannot move "
                    f"its centres, so the cameras together must see all six faces{one}"
                )
        if self.solver.anytime and (
            self.solver.engine not in ("twophase", AUTO) or self.robot.cube_size != 3
        ):
            raise ValueError(
                f'@solver.anytime: anytime solving needs engine = "twophase" on a 3x3 cube (this '
                f"profile: engine {self.solver.engine!r}, cube_size {self.robot.cube_size}); set "
                "anytime = false or use the two-phase engine"
            )
        if self.solver.anytime and self.robot.kind != "six-face":
            raise ValueError(
                f"@solver.anytime: anytime solving streams face turns to face motors; a "
                f"{self.robot.kind} robot plans its actions from the whole solution (set "
                "anytime = false)"
            )
        simulated = self.serial.url == "sim"
        if simulated and self.simulation is None:
            raise ValueError(
                '@serial.url: "sim" (the simulated firmware) needs a [simulation] section'
            )
        self._check_kind()
        self._check_scan_camera()
        return self

    def _check_kind(self) -> None:
        """A turntable or two-gripper robot has no face motors and cannot turn one face to
        look again: its motors are in its own table, and ``[scan] rescan_turns`` is 0."""
        kind = self.robot.kind
        if kind == "six-face":
            return
        if self.simulation is not None and self.simulation.emulator == "avr":
            raise ValueError(
                f"@simulation.emulator: the AVR emulator drives face motors only; a {kind} "
                'robot runs on the Python simulation (emulator = "python")'
            )
        if "motors" in self.model_fields_set:
            table = "turntable" if kind == "turntable" else "two_gripper"
            raise ValueError(
                f"@motors: a {kind} robot has no face motors; its motor numbers are in "
                f"[robot.{table}]; remove the [motors] section"
            )
        if self.scan.rescan_turns:
            if "rescan_turns" in self.scan.model_fields_set:
                raise ValueError(
                    f"@scan.rescan_turns: a {kind} robot cannot turn single faces to look at "
                    "doubtful stickers again; set rescan_turns = 0"
                )
            object.__setattr__(self, "scan", self.scan.model_copy(update={"rescan_turns": 0}))

    @model_validator(mode="after")
    def _engine_fits_size(self) -> RobotConfig:
        n = self.robot.cube_size
        if not self.solver.solves(n):
            raise ValueError(
                f"@solver.engine: engine {self.solver.engine!r} does not solve the profile's "
                f'{n}x{n}x{n} cube ([robot] cube_size = {n}); set engine = "{AUTO}" (the engine '
                f"for the cube size: {engine_for_size(n, AUTO)!r} for N={n}) or change cube_size"
            )
        return self

    @property
    def scan_camera(self) -> CameraConfig | None:
        """The one camera of a one-camera scan (None: the cameras see every face at once).

        A turntable or two-gripper robot whose ``[[cameras]]`` is a single camera with
        ``view = "face"`` scans with the kind's choreography (:mod:`robot.daemon.onecamera`):
        the camera looks at that face (``faces``, in the machine's frame) of the cube as it
        sits in the machine, and the mechanism turns the cube over to show it the others."""
        if self.robot.kind == "six-face" or len(self.cameras) != 1:
            return None
        camera = self.cameras[0]
        return camera if camera.view == "face" else None

    def _check_scan_camera(self) -> None:
        """The one camera must look at a face the mechanism leaves free."""
        camera = self.scan_camera
        if camera is None:
            return
        face = camera.faces[0]
        table = self.robot.mechanism_table
        if isinstance(table, TurntableConfig) and face == "D":
            raise ValueError(
                f"@cameras.faces: camera {camera.name} looks at D, but the turntable's cradle "
                'holds that face; put the camera above the cube (faces = ["U"], as on CUBOTino)'
            )
        if isinstance(table, TwoGripperConfig) and face in table.faces:
            raise ValueError(
                f"@cameras.faces: camera {camera.name} looks at {face}, but a gripper holds that "
                f"face ([robot.two_gripper] faces = {list(table.faces)}); point it at a free "
                "face (e.g. F or U)"
            )

    @property
    def simulated(self) -> bool:
        """Whether the daemon starts the simulated firmware itself."""
        return self.serial.url == "sim"

    @property
    def cost_model(self) -> CostModel:
        return self.solver.cost.model(self.motors.simultaneous)

    def topic(self, *parts: str) -> str:
        """A topic under ``<base_topic>/<robot id>/``."""
        return "/".join((self.mqtt.base_topic, self.robot.id, *parts))

    def resolve(self, path: str) -> Path:
        """A path from the profile, relative to :attr:`folder` or else the profile's folder."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        if self.folder:
            return Path(self.folder) / p
        if self.source:
            return Path(self.source).resolve().parent / p
        return p

    def mqtt_password(self) -> str | None:
        """The broker password, read from ``password_file`` when given."""
        if self.mqtt.password_file:
            path = self.resolve(self.mqtt.password_file)
            try:
                return path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(
                    f"cannot read the password file {path}: {exc.strerror}",
                    file=self.source,
                    section="mqtt",
                    key="password_file",
                ) from exc
        return self.mqtt.password or None

    def mqtt_viewer_password(self) -> str | None:
        """The embedded broker's read-only login password (None: no viewer login)."""
        mq = self.mqtt
        if not mq.viewer_username:
            return None
        if not mq.viewer_password_file:
            return mq.viewer_password
        path = self.resolve(mq.viewer_password_file)
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the password file {path}: {exc.strerror}",
                file=self.source,
                section="mqtt",
                key="viewer_password_file",
            ) from exc

    def web_token(self) -> str:
        """The web page's command token ("" = read-only), read from ``token_file`` if given."""
        if not self.web.token_file:
            return self.web.token
        path = self.resolve(self.web.token_file)
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the token file {path}: {exc.strerror}",
                file=self.source,
                section="web",
                key="token_file",
            ) from exc
        if len(token) < 12:
            raise ConfigError(
                f"the token in {path} is shorter than 12 characters",
                file=self.source,
                section="web",
                key="token_file",
            )
        return token

    def check_files(self) -> None:
        """Every file the profile names must be readable now, so that ``config check`` and
        ``run`` fail at once with the file and key instead of a job failing later."""
        if self.mqtt.enabled:
            self.mqtt_password()
            self.mqtt_viewer_password()
        if self.web.enabled:
            self.web_token()
        named: list[tuple[str, str, str]] = [
            ("colours", "calibration_file", self.colours.calibration_file),
        ]
        if self.mqtt.enabled and self.mqtt.tls.enabled:
            tls = self.mqtt.tls
            named += [
                ("mqtt.tls", key, value)
                for key, value in (
                    ("ca_file", tls.ca_file),
                    ("cert_file", tls.cert_file),
                    ("key_file", tls.key_file),
                )
            ]
        named += [(f"cameras[{c.name}]", "calibration", c.calibration) for c in self.cameras]
        for section, key, value in named:
            if value and not self.resolve(value).is_file():
                raise ConfigError(
                    f"the file {self.resolve(value)} does not exist (or is not a file); fix the "
                    "path or remove the key",
                    file=self.source,
                    section=section,
                    key=key,
                )


def parse_config(data: dict[str, Any], source: str = "", folder: str = "") -> RobotConfig:
    """Validate a profile already read from TOML (``folder``: see :class:`RobotConfig`)."""
    for key in ("source", "folder"):
        if key in data:
            raise ConfigError("unknown key (not part of the profile format)", file=source, key=key)
    try:
        return RobotConfig.model_validate({**data, "source": source, "folder": folder})
    except ValidationError as exc:
        raise format_errors(exc, source, RobotConfig) from None


def load_config(path: str | Path, *, base_dir: Path | None = None) -> RobotConfig:
    """Read and validate a profile; :class:`ConfigError` names the file, section and key.
    Relative paths in it are resolved against ``base_dir`` if given, else the file's folder."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the profile: {exc.strerror}", file=str(p)) from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", file=str(p)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=str(p)) from exc
    config = parse_config(data, str(p), str(base_dir) if base_dir is not None else "")
    config.check_files()
    logger.info(
        "profile %s (format %d): robot %s, %s, N=%d, engine %s",
        p,
        CONFIG_VERSION,
        config.robot.id,
        f"{len(config.motors.faces)}-motor"
        if config.robot.kind == "six-face"
        else config.robot.kind,
        config.robot.cube_size,
        config.solver.engine,
    )
    return config
