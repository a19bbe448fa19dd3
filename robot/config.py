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

import codecs
import errno
import logging
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from robot.config_errors import format_errors
from robot.config_sections import (
    FACE_NAMES,
    CameraConfig,
    ColoursConfig,
    CostConfig,
    DiscoveryConfig,
    JournalConfig,
    MotorConfig,
    MotorsConfig,
    MqttConfig,
    RobotSection,
    ScanConfig,
    Section,
    SerialConfig,
    SimulationConfig,
    SolverConfig,
    TlsConfig,
    WebConfig,
    default_motors,
    engine_solves,
)
from robot.errors import ConfigError
from robot.kinds.profile import (
    TurntableConfig,
    TwoGripperConfig,
)
from solver.api import AUTO, engine_for_size
from solver.cost import CostModel
from vision.imagefile import read_regular

__all__ = [
    "CONFIG_VERSION",
    "MAX_PROFILE_BYTES",
    "MAX_SECRET_BYTES",
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
    "path_problem",
]

logger = logging.getLogger(__name__)

#: Version of the profile format (logged at start).
CONFIG_VERSION = 1


class RobotConfig(Section):
    """A whole robot profile. ``source`` is the file it came from (for messages); ``folder``,
    when set, is the folder its relative paths are resolved against instead of the file's own
    (a bundled profile's: :mod:`robot.bundled`)."""

    robot: RobotSection = RobotSection()
    serial: SerialConfig = SerialConfig()
    motors: MotorsConfig = Field(default_factory=default_motors)
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
            missing = [f for f in FACE_NAMES if f not in seen]
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
                f"{self.robot.kind} robot plans its actions from the whole solution, and "
                "searching while it moves gained nothing (docs/kinds.md); set anytime = false"
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

    def _secret(self, section: str, key: str, what: str) -> str:
        """The secret in the file ``[section] key`` names, stripped; a file that cannot be
        read, is not UTF-8 text or holds nothing is a :class:`ConfigError` at that key."""
        path = self.resolve(getattr(getattr(self, section), key))
        try:
            secret = read_regular(path, MAX_SECRET_BYTES).decode("utf-8").strip()
        except OSError as exc:
            problem = f"cannot read the {what} file {path}: {exc.strerror}"
        except UnicodeDecodeError as exc:
            problem = f"the {what} file {path} is not UTF-8 text (byte {exc.start})"
        else:
            if secret:
                return secret
            problem = f"the {what} file {path} is empty"
        raise ConfigError(problem, file=self.source, section=section, key=key)

    def mqtt_password(self) -> str | None:
        """The broker password, read from ``password_file`` when given."""
        if self.mqtt.password_file:
            return self._secret("mqtt", "password_file", "password")
        return self.mqtt.password or None

    def mqtt_viewer_password(self) -> str | None:
        """The embedded broker's read-only login password (None: no viewer login)."""
        mq = self.mqtt
        if not mq.viewer_username:
            return None
        if not mq.viewer_password_file:
            return mq.viewer_password
        return self._secret("mqtt", "viewer_password_file", "password")

    def web_token(self) -> str:
        """The web page's command token ("" = read-only), read from ``token_file`` if given."""
        if not self.web.token_file:
            return self.web.token
        path = self.resolve(self.web.token_file)
        token = self._secret("web", "token_file", "token")
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
        journal = self.resolve(self.journal.path)
        for section, key, value in [*named, ("journal", "path", self.journal.path)]:
            problem = path_problem(self.resolve(value)) if value else None
            if problem is not None:
                raise ConfigError(problem, file=self.source, section=section, key=key)
        if journal.is_dir():
            raise ConfigError(
                f"{journal} is a folder; name the journal file in it (e.g. "
                f"{journal / 'cuberobot-journal.sqlite'})",
                file=self.source,
                section="journal",
                key="path",
            )
        if journal.exists() and not journal.is_file():  # SQLite said only "disk I/O error"
            raise ConfigError(
                f"{journal} is not a regular file (a device, a FIFO, a socket); name a file "
                "for the journal",
                file=self.source,
                section="journal",
                key="path",
            )
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


#: Largest profile read (bytes): the bundled ones are 2..5 kB.
MAX_PROFILE_BYTES = 1 << 20
#: Largest password or token file read (bytes): MQTT carries a password of at most 65,535.
MAX_SECRET_BYTES = 4096


def path_problem(path: Path) -> str | None:
    """Why ``path`` cannot even be looked up (a name longer than the system allows, a loop of
    links), or ``None``; ``is_file()`` and ``is_dir()`` raise for these."""
    try:
        path.stat()
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        text = str(path)
        shown = text if len(text) <= 80 else f"{text[:60]}…({len(text):,} characters)"
        return f"cannot use the path {shown}: {exc.strerror}; give a shorter path"
    return None


def load_config(path: str | Path, *, base_dir: Path | None = None) -> RobotConfig:
    """Read and validate a profile; :class:`ConfigError` names the file, section and key.
    Relative paths in it are resolved against ``base_dir`` if given, else the file's folder."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_PROFILE_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read the profile: {exc.strerror}", file=str(p)) from exc
    # a byte-order mark (Windows editors write one) is no statement
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        data = tomllib.loads(raw[skip:].decode("utf-8"))
    except UnicodeDecodeError as exc:
        start = skip + exc.start
        line = raw.count(b"\n", 0, start) + 1
        raise ConfigError(
            f"not UTF-8 text ({exc.reason} at line {line}, byte {start + 1}); save it as UTF-8",
            file=str(p),
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=str(p)) from exc
    except RecursionError as exc:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(
            "not valid TOML for a profile: arrays or inline tables nested too deeply",
            file=str(p),
        ) from exc
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
