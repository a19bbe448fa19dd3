"""The sections of a robot profile (:mod:`robot.config` puts them together and checks them
across sections): ``[robot]``, ``[serial]``, ``[motors]``, ``[[cameras]]``, ``[colours]``,
``[solver]``, ``[mqtt]``, ``[web]``, ``[journal]``, ``[simulation]``, ``[scan]``. Each is a
frozen pydantic model that refuses unknown keys; a message starting ``@key:`` places the error
on that key (:mod:`robot.config_errors`)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from robot.kinds.profile import (
    Kind,
    TurntableConfig,
    TwoGripperConfig,
    largest_n,
    table_defaults,
)
from solver.api import AUTO, SIZED_ENGINES, engine_names
from solver.cost import MAX_MOTION_S, CostModel
from solver.cube.facelets import SCHEMES
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE

__all__ = [
    "FACE_NAMES",
    "CameraConfig",
    "ColoursConfig",
    "CostConfig",
    "DiscoveryConfig",
    "JournalConfig",
    "MotorConfig",
    "MotorsConfig",
    "MqttConfig",
    "RobotSection",
    "ScanConfig",
    "Section",
    "SerialConfig",
    "SimulationConfig",
    "SolverConfig",
    "TlsConfig",
    "WebConfig",
    "default_motors",
    "engine_solves",
]

FACE_NAMES = ("U", "R", "F", "D", "L", "B")


class Section(BaseModel):
    """A profile section: frozen, unknown keys refused, numbers finite (``inf`` is no duration
    or speed), no text with a NUL character (no path, topic or name can hold one)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("contains a NUL character (\\u0000); remove it")
        return value


class RobotSection(Section):
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


class SerialConfig(Section):
    """``[serial]``: where the firmware is."""

    url: Annotated[str, Field(min_length=1)] = "/dev/ttyACM0"
    baud: Annotated[int, Field(gt=0)] = 115200
    connect_timeout_s: Annotated[float, Field(gt=0)] = 5.0
    reconnect_budget_s: Annotated[float, Field(ge=0)] = 10.0
    #: how long ``resume`` waits for a lost link to come back before refusing
    resume_wait_s: Annotated[float, Field(ge=0, le=600)] = 30.0
    #: how long ``resume`` waits for the firmware to finish the moves still in its queue
    #: (journaled as they execute) before it sends anything; then the job stays resumable
    resume_drain_s: Annotated[float, Field(gt=0, le=600)] = 30.0


class MotorConfig(Section):
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


class MotorsConfig(Section):
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


def default_motors() -> MotorsConfig:
    return MotorsConfig.model_validate(
        {name: MotorConfig(motor=i) for i, name in enumerate(FACE_NAMES)}
    )


#: The longest side of a camera's frame (pixels): 8000 x 8000 is vision's 64 MP limit.
MAX_CAMERA_SIDE = 8000


class CameraConfig(Section):
    """``[[cameras]]``: one camera and the faces it sees."""

    name: Annotated[str, Field(min_length=1)]
    source: str = "simulated"
    # at most 8000 a side: 64 MP, the largest image vision decodes (a simulated camera of
    # 100,000 x 100,000 px passed the check and would have rendered 240 GB)
    width: Annotated[int, Field(gt=0, le=MAX_CAMERA_SIDE)] = 1280
    height: Annotated[int, Field(gt=0, le=MAX_CAMERA_SIDE)] = 720
    view: Literal["face", "corner"] = "corner"
    faces: tuple[str, ...]
    calibration: str = ""
    lock_exposure: bool = True
    lock_white_balance: bool = True

    @field_validator("faces")
    @classmethod
    def _faces(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in FACE_NAMES:
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


class ColoursConfig(Section):
    """``[colours]``: the cube's colour scheme and an optional calibration."""

    scheme: str = "white-green"
    calibration_file: str = ""

    @field_validator("scheme")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if value not in SCHEMES:
            raise ValueError(f"unknown colour scheme {value!r}; choose one of {list(SCHEMES)}")
        return value


class CostConfig(Section):
    """``[solver.cost]``: seconds this robot takes (the solver's robot-time objective)."""

    quarter_turn_s: Annotated[float, Field(ge=0, le=MAX_MOTION_S)] = 0.10
    half_turn_s: Annotated[float, Field(ge=0, le=MAX_MOTION_S)] = 0.17
    pair_extra_s: Annotated[float, Field(ge=0, le=MAX_MOTION_S)] = 0.01
    settle_s: Annotated[float, Field(ge=0, le=MAX_MOTION_S)] = 0.02

    def model(self, simultaneous: bool = True) -> CostModel:
        return CostModel(
            self.quarter_turn_s, self.half_turn_s, self.pair_extra_s, self.settle_s, simultaneous
        )


#: The longest ``[solver] budget_s`` a profile may give (seconds).
MAX_JOB_BUDGET_S = 600.0


class SolverConfig(Section):
    """``[solver]``: which engine, how long it may search."""

    engine: str = "twophase"
    #: a job's search time; at most :data:`MAX_JOB_BUDGET_S` (a robot whose motors wait longer
    #: than that for a plan has a mistyped profile: 1e300 was finite and the job never moved)
    budget_s: Annotated[float, Field(ge=0, le=MAX_JOB_BUDGET_S)] = 1.0
    max_length: Annotated[int, Field(gt=0)] | None = None
    cost: CostConfig = CostConfig()
    #: anytime solving: the motors start on the first solution and the search goes on while
    #: they turn, replacing the moves not yet sent by faster ones (``budget_s`` is then unused)
    anytime: bool = False
    #: anytime: how long after the job entered SOLVING the search before the first move ends
    #: (0: the first solution found); with ``first_step_s``, the least it is
    head_start_s: Annotated[float, Field(ge=0, le=1)] = 0.005
    #: anytime: the time from SOLVING to the first motor step to aim at: the head start is
    #: lengthened to this less the host's own part of it (planning, journaling, sending: as the
    #: last jobs measured it), never below ``head_start_s`` (0: always ``head_start_s``).
    #: 14 ms: the 15 ms that time should stay under at the median, less a margin (the host's
    #: part is sized by its worst quarter: the median lands at the aim or a little under it)
    first_step_s: Annotated[float, Field(ge=0, le=1)] = 0.014

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: str) -> str:
        if value != AUTO and value not in engine_names():
            raise ValueError(
                f"unknown engine {value!r}; choose one of {[AUTO, *engine_names()]} "
                f"({AUTO!r}: the engine for the cube size)"
            )
        return value

    @model_validator(mode="after")
    def _first_step(self) -> SolverConfig:
        # (given in the profile: by default it only lengthens a shorter head start)
        stated = "first_step_s" in self.model_fields_set
        if stated and 0 < self.first_step_s <= self.head_start_s:
            raise ValueError(
                f"@solver.first_step_s: first_step_s ({self.first_step_s:g}) must be more than "
                f"head_start_s "
                f"({self.head_start_s:g}): the first motor step comes after the head start"
            )
        return self

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


class TlsConfig(Section):
    """``[mqtt.tls]``."""

    enabled: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    insecure: bool = False


#: The longest base topic, discovery prefix, client id or login in a profile (characters): a
#: topic built from them stays far below MQTT's 65,535 bytes.
MAX_MQTT_TEXT = 1024


def _host_name(value: str) -> str:
    """A host name the resolver can take: each dot-separated label at most 63 characters (a
    longer one ended the daemon at start: UnicodeError from the 'idna' codec)."""
    try:
        value.encode("idna")
    except UnicodeError:
        raise ValueError(
            f"{value[:40]!r}{'…' if len(value) > 40 else ''} is not a host name (each part "
            "between dots is 1..63 characters); give a name or an IP address"
        ) from None
    return value


_Host = Annotated[str, AfterValidator(_host_name)]

#: A topic prefix: no wildcard (# +), no leading or trailing slash, not empty.
_TOPIC_PREFIX = r"^[^#+/][^#+]*[^#+/]$|^[^#+/]$"


class DiscoveryConfig(Section):
    """``[mqtt.discovery]``: Home Assistant MQTT discovery."""

    enabled: bool = True
    # a topic level like base_topic: a wildcard here ("ha/#") ended run at start
    # (ValueError: Invalid subscription filter)
    prefix: Annotated[str, Field(pattern=_TOPIC_PREFIX, max_length=MAX_MQTT_TEXT)] = "homeassistant"


class MqttConfig(Section):
    """``[mqtt]``: the broker. ``host = ""`` starts an embedded broker on
    ``embedded_host:embedded_port`` (localhost only)."""

    enabled: bool = True
    host: _Host = ""
    port: Annotated[int, Field(ge=1, le=65535)] = 1883
    embedded_host: _Host = "127.0.0.1"
    embedded_port: Annotated[int, Field(ge=0, le=65535)] = 1883
    # bounded: MQTT carries a topic, an id or a login of at most 65,535 bytes, and a base topic
    # of 70,000 characters ended the daemon at start with a struct.error traceback
    base_topic: Annotated[str, Field(pattern=_TOPIC_PREFIX, max_length=MAX_MQTT_TEXT)] = "cuberobot"
    client_id: Annotated[str, Field(max_length=MAX_MQTT_TEXT)] = ""
    username: Annotated[str, Field(max_length=MAX_MQTT_TEXT)] = ""
    password: Annotated[str, Field(max_length=MAX_MQTT_TEXT)] = ""
    password_file: str = ""
    #: embedded broker only: a second login that may subscribe but never publish (dashboards)
    viewer_username: Annotated[str, Field(max_length=MAX_MQTT_TEXT)] = ""
    viewer_password: Annotated[str, Field(max_length=MAX_MQTT_TEXT)] = ""
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


class WebConfig(Section):
    """``[web]``: the robot's own web page (off unless enabled). Reading needs nothing; every
    command needs the token (``token`` or ``token_file``); without one the page is read-only."""

    enabled: bool = False
    host: _Host = "127.0.0.1"
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


class JournalConfig(Section):
    """``[journal]``: the SQLite job journal."""

    path: Annotated[str, Field(min_length=1)] = "cuberobot-journal.sqlite"


#: ``[simulation] speed_factor`` (and ``demo --speed``): how many times faster than real time
#: the simulated motors run, within these bounds (past them the motors' acceleration, scaled by
#: its square, underflows or overflows)
SPEED_FACTOR_MIN = 0.001
SPEED_FACTOR_MAX = 1000.0


class SimulationConfig(Section):
    """``[simulation]``: the simulated robot (firmware on a pty, rendered cameras)."""

    speed_factor: Annotated[float, Field(ge=SPEED_FACTOR_MIN, le=SPEED_FACTOR_MAX)] = 1.0
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


class ScanConfig(Section):
    """``[scan]``: what the robot does when a read is in doubt, and the check after a solve."""

    #: reads of the same view when a read is not a valid cube as is
    attempts: Annotated[int, Field(ge=1, le=5)] = 2
    #: face turns (each read, then undone) to see doubtful stickers from another view
    rescan_turns: Annotated[int, Field(ge=0, le=12)] = 4
    #: read the cube after execution; it must read as solved
    verify: bool = True
    #: solves started again from the state seen when the check finds a misread
    corrections: Annotated[int, Field(ge=0, le=5)] = 2
