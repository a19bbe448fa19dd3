"""Robot profiles: the example files load, and every fault names file, section and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.config import RobotConfig, load_config
from robot.errors import ConfigError
from solver.cube.geometry import Face

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("name", ["six_motor.toml", "five_motor.toml", "simulated.toml"])
def test_example_profiles_load(name: str) -> None:
    config = load_config(CONFIGS / name)
    assert isinstance(config, RobotConfig)
    seen = {f for cam in config.cameras for f in cam.faces}
    assert seen == set("URFDLB")


def test_five_motor_profile_has_no_d() -> None:
    config = load_config(CONFIGS / "five_motor.toml")
    assert config.motors.missing == frozenset({Face.D})
    assert config.cost_model.quarter_turn_s == pytest.approx(0.12)


def test_six_motor_cameras_are_two_corners() -> None:
    config = load_config(CONFIGS / "six_motor.toml")
    assert [c.view for c in config.cameras] == ["corner", "corner"]
    assert [len(c.faces) for c in config.cameras] == [3, 3]


def test_relative_paths_resolve_against_the_profile(tmp_path: Path) -> None:
    path = tmp_path / "robot.toml"
    path.write_text('[journal]\npath = "j/journal.sqlite"\n')
    config = load_config(path)
    assert config.resolve(config.journal.path) == tmp_path / "j" / "journal.sqlite"


def _error(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    return info.value


@pytest.mark.parametrize(
    ("text", "section", "key", "words"),
    [
        pytest.param(
            "[serial]\nbaud = -5\n", "serial", "baud", "greater than 0", id="negative-baud"
        ),
        pytest.param("[serial]\nbuad = 9600\n", "serial", "buad", "unknown key", id="unknown-key"),
        pytest.param("[robt]\nid = 'x'\n", "", "robt", "unknown key", id="unknown-section"),
        pytest.param(
            "[motors.U]\nmotor = 9\n", "motors.U", "motor", "less than or equal", id="motor-range"
        ),
        pytest.param(
            "[motors]\n[motors.U]\nmotor = 0\n[motors.R]\nmotor = 1\n",
            "motors",
            "",
            "at least five",
            id="too-few-motors",
        ),
        pytest.param(
            "[motors.U]\nmotor=0\n[motors.R]\nmotor=1\n[motors.F]\nmotor=2\n"
            "[motors.D]\nmotor=4\n[motors.L]\nmotor=3\n[motors.B]\nmotor=5\n",
            "motors",
            "",
            "not a firmware pair",
            id="pairs-not-opposite",
        ),
        pytest.param(
            "[solver]\nengine = 'magic'\n", "solver", "engine", "unknown engine", id="engine"
        ),
        pytest.param(
            "[solver.cost]\nquarter_turn_s = -1\n",
            "solver.cost",
            "quarter_turn_s",
            "greater than or equal",
            id="cost-negative",
        ),
        pytest.param(
            "[[cameras]]\nname='a'\nview='corner'\nfaces=['U','D','F']\n",
            "cameras[0]",
            "",
            "mutually adjacent",
            id="corner-opposite-faces",
        ),
        pytest.param(
            "[[cameras]]\nname='a'\nview='corner'\nfaces=['U','F','R']\n",
            "cameras",
            "",
            "no camera sees face(s) D L B",
            id="cameras-miss-faces",
        ),
        pytest.param(
            "[mqtt]\npassword = 'x'\n", "mqtt", "", "needs a username", id="password-no-user"
        ),
        pytest.param("[mqtt.tls]\nenabld = true\n", "mqtt.tls", "enabld", "unknown", id="tls-typo"),
        pytest.param("[colours]\nscheme = 'pink'\n", "colours", "scheme", "unknown", id="scheme"),
        pytest.param(
            "[serial]\nurl = 'sim'\n", "serial", "url", "[simulation]", id="sim-needs-section"
        ),
        pytest.param("[robot]\nid = 'Has Space'\n", "robot", "id", "pattern", id="robot-id"),
        pytest.param(
            "[robot]\ncube_size = 2\n[solver]\nengine = 'twophase'\n",
            "solver",
            "engine",
            "engine 'twophase' does not solve the profile's 2x2x2 cube ([robot] cube_size = 2); "
            "set engine = \"auto\" (the engine for the cube size: 'pocket' for N=2)",
            id="engine-cannot-solve-size",
        ),
        pytest.param(
            "[robot]\ncube_size = 5\n[solver]\nengine = 'pocket'\n",
            "solver",
            "engine",
            "'nxn' for N=5",
            id="pocket-for-5x5",
        ),
        pytest.param(
            "[motors.U]\nmotor = 0\nmax_depth = 17\n",
            "motors.U",
            "max_depth",
            "less than or equal to 16",
            id="max-depth-range",
        ),
        pytest.param(
            "[motors.U]\nmotor = 0\nmax_depth = 3\ndepth_layers = 2\n",
            "motors",
            "U",
            "exclude each other",
            id="max-depth-and-depth-layers",
        ),
        pytest.param(
            "[solver]\nengine = 'lbl'\nanytime = true\n",
            "solver",
            "anytime",
            'needs engine = "twophase"',
            id="anytime-needs-twophase",
        ),
        pytest.param(
            "[robot]\ncube_size = 4\n[solver]\nanytime = true\n",
            "solver",
            "anytime",
            "on a 3x3 cube",
            id="anytime-needs-3x3",
        ),
        pytest.param(
            "[robot]\nkind = 'turntable'\n[solver]\nanytime = true\n",
            "solver",
            "anytime",
            "a turntable robot plans its actions",
            id="anytime-needs-face-motors",
        ),
        pytest.param(
            "[solver]\nhead_start_s = 2\n", "solver", "head_start_s", "1", id="head-start"
        ),
        pytest.param(
            "[solver]\nhead_start_s = 0.01\nfirst_step_s = 0.008\n",
            "solver",
            "first_step_s",
            "must be more than head_start_s (0.01)",
            id="first-step-before-head-start",
        ),
        pytest.param(
            "[solver]\nfirst_step_s = -0.01\n",
            "solver",
            "first_step_s",
            "greater than or equal to 0",
            id="first-step-negative",
        ),
        pytest.param("[solver]\nbudget_s = inf\n", "solver", "budget_s", "finite", id="budget-inf"),
        pytest.param("[solver]\nbudget_s = 1e300\n", "solver", "budget_s", "600", id="budget-huge"),
        pytest.param(
            "[solver.cost]\nhalf_turn_s = inf\n",
            "solver.cost",
            "half_turn_s",
            "finite",
            id="cost-inf",
        ),
        pytest.param(
            "[serial]\nconnect_timeout_s = inf\n",
            "serial",
            "connect_timeout_s",
            "finite",
            id="timeout-inf",
        ),
        pytest.param('[journal]\npath = "a\\u0000b"\n', "journal", "path", "NUL", id="journal-nul"),
        pytest.param(
            "[journal]\npath = ''\n", "journal", "path", "1 character", id="journal-empty"
        ),
        pytest.param(
            '[mqtt]\nbase_topic = "cube\\u0000robot"\n',
            "mqtt",
            "base_topic",
            "NUL",
            id="topic-nul",
        ),
        pytest.param("[serial]\nurl = ''\n", "serial", "url", "1 character", id="url-empty"),
        pytest.param(
            "[journal]\npath = '.'\n",
            "journal",
            "path",
            "is a folder; name the journal file",
            id="journal-folder",
        ),
    ],
)
def test_errors_name_section_and_key(
    tmp_path: Path, text: str, section: str, key: str, words: str
) -> None:
    error = _error(tmp_path, text)
    assert error.section == section
    assert error.key == key
    assert words in str(error)


def test_not_toml(tmp_path: Path) -> None:
    error = _error(tmp_path, "[serial\nurl=")
    assert "not valid TOML" in str(error)


def test_a_profile_saved_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """Windows editors start UTF-8 files with U+FEFF; tomllib called it "Invalid statement
    (at line 1, column 1)", where the operator sees nothing wrong."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + (CONFIGS / "simulated.toml").read_bytes())
    assert load_config(path).robot.id == load_config(CONFIGS / "simulated.toml").robot.id


@pytest.mark.parametrize(
    ("data", "where"),
    [
        pytest.param(b'[robot]\nid = "caf\xe9"\n', "line 2, byte 18", id="latin-1"),
        pytest.param(b'\xef\xbb\xbf[robot]\nid = "\xe9"\n', "line 2, byte 18", id="marked-latin-1"),
        pytest.param("[robot]\n".encode("utf-16"), "line 1", id="utf-16"),
    ],
)
def test_a_profile_that_is_not_utf8_says_where(tmp_path: Path, data: bytes, where: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match=f"not UTF-8 text .*{where}.*save it as UTF-8"):
        load_config(path)


def test_deeply_nested_toml_is_a_config_error(tmp_path: Path) -> None:
    error = _error(tmp_path, "a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested too deeply" in str(error)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.toml")


def test_a_head_start_longer_than_the_default_first_step_aim_loads(tmp_path: Path) -> None:
    """``first_step_s`` by default only lengthens a shorter head start: a profile that sets a
    longer one (or turns the aim off with 0) loads as it is."""
    path = tmp_path / "p.toml"
    path.write_text("[solver]\nhead_start_s = 0.02\n")
    assert load_config(path).solver.head_start_s == 0.02
    path.write_text("[solver]\nhead_start_s = 0.02\nfirst_step_s = 0\n")
    assert load_config(path).solver.first_step_s == 0


def test_frozen() -> None:
    config = load_config(CONFIGS / "simulated.toml")
    with pytest.raises(ValueError, match="frozen"):
        config.robot.id = "other"  # type: ignore[misc]


def test_topics_and_password_file(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("s3cret\n")
    path = tmp_path / "r.toml"
    path.write_text("[robot]\nid='r1'\n[mqtt]\nusername='u'\npassword_file='pw'\n")
    config = load_config(path)
    assert config.topic("status") == "cuberobot/r1/status"
    assert config.mqtt_password() == "s3cret"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        pytest.param(b"\x93\xff binary", "is not UTF-8 text", id="binary"),
        pytest.param(b"  \n", "is empty", id="empty"),
    ],
)
@pytest.mark.parametrize(
    ("table", "key"),
    [
        ("[mqtt]\nusername = 'u'\npassword_file = 'secret'\n", "password_file"),
        (
            "[mqtt]\nusername = 'u'\npassword = 'p'\nviewer_username = 'v'\n"
            "viewer_password_file = 'secret'\n",
            "viewer_password_file",
        ),
        ("[web]\nenabled = true\ntoken_file = 'secret'\n", "token_file"),
    ],
)
def test_a_secret_file_that_is_binary_or_empty_is_named(
    tmp_path: Path, table: str, key: str, content: bytes, words: str
) -> None:
    (tmp_path / "secret").write_bytes(content)
    error = _error(tmp_path, table)
    assert error.key == key
    assert words in str(error) and str(tmp_path / "secret") in str(error)


@pytest.mark.parametrize(("n", "engine"), [(2, "auto"), (3, "auto"), (4, "auto"), (6, "nxn")])
def test_engine_fits_the_cube_size(tmp_path: Path, n: int, engine: str) -> None:
    path = tmp_path / "robot.toml"
    path.write_text(f"[robot]\ncube_size = {n}\n[solver]\nengine = '{engine}'\n")
    config = load_config(path)
    assert config.solver.engine == engine and config.solver.solves(n)
    assert not config.solver.solves(1)


def test_simulated_profile_grips_three_layers() -> None:
    config = load_config(CONFIGS / "simulated.toml")
    for face in Face:
        motor = config.motors.motor_of(face)
        assert motor is not None and motor.max_depth == 3
        assert motor.depths(7) == (1, 2, 3) and motor.depths(3) == (1, 2)
