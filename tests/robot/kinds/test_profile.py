"""``[robot] kind`` in a profile: the example profiles, the errors (each naming its place), the
cube sizes a mechanism can solve, and what ``cuberobot config check`` says about it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robot.config import load_config, parse_config
from robot.errors import ConfigError
from robot.kinds import Turntable, TwoGripper
from robot.kinds.profile import (
    TurntableConfig,
    TwoGripperConfig,
    build_mechanism,
    depths_reach,
    largest_n,
)
from tests.robot.helpers import CONFIGS
from tests.robot.test_cli_daemon import cli

KIND_PROFILES = {
    "turntable.toml": ("turntable", 3),
    "bigcube_gripper.toml": ("turntable", 4),
    "two_gripper.toml": ("two-gripper", 3),
}


@pytest.mark.parametrize("name", sorted(KIND_PROFILES))
def test_kind_profiles_load(name: str) -> None:
    config = load_config(CONFIGS / name)
    kind, n = KIND_PROFILES[name]
    assert config.robot.kind == kind and config.robot.cube_size == n
    assert config.simulated and config.scan.rescan_turns == 0
    table = config.robot.mechanism_table
    assert table is not None
    mechanism = build_mechanism(config.robot.kind, table, n)
    assert isinstance(mechanism, Turntable if kind == "turntable" else TwoGripper)


def test_profiles_without_a_kind_stay_six_face() -> None:
    for name in ("six_motor.toml", "five_motor.toml", "simulated.toml"):
        config = load_config(CONFIGS / name)
        assert config.robot.kind == "six-face" and config.robot.mechanism_table is None
        assert config.scan.rescan_turns == 4  # the six-face default, untouched


def test_kind_tables_default_when_left_out() -> None:
    config = parse_config({"robot": {"kind": "turntable"}})
    assert config.robot.turntable == TurntableConfig()
    assert config.scan.rescan_turns == 0
    assert parse_config({"robot": {"kind": "two-gripper"}}).robot.two_gripper == TwoGripperConfig()


def _error(data: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(data, "robot.toml")
    return info.value


@pytest.mark.parametrize(
    ("data", "section", "key", "words"),
    [
        pytest.param(
            {"robot": {"kind": "turntable", "cube_size": 4}},
            "robot",
            "cube_size",
            "up to N=3",
            id="cube-too-big-for-the-cover",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"flip_s": 0}}},
            "robot.turntable",
            "flip_s",
            "greater than 0",
            id="action-time",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"flip_speed": 1}}},
            "robot.turntable",
            "flip_speed",
            "did you mean 'flip_s'",
            id="unknown-key",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"table_motor": 1}}},
            "robot",
            "turntable",
            "flipper_motor: motor 1 is already the table_motor",
            id="shared-motor",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"table_positions": [1, 2]}}},
            "robot",
            "turntable",
            "must include 0",
            id="table-positions",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"cover_depths": []}}},
            "robot",
            "turntable",
            "at least one depth",
            id="no-depth",
        ),
        pytest.param(
            {"robot": {"kind": "turntable", "turntable": {"flip": "y"}}},
            "robot.turntable",
            "flip",
            "'x'",
            id="flip-not-a-tip",
        ),
        pytest.param(
            {"robot": {"kind": "two-gripper", "two_gripper": {"faces": ["U", "D"]}}},
            "robot",
            "two_gripper",
            "opposite",
            id="opposed-arms",
        ),
        pytest.param(
            {"robot": {"kind": "bogus"}},
            "robot",
            "kind",
            "six-face",
            id="unknown-kind",
        ),
        pytest.param(
            {"robot": {"turntable": {}}},
            "robot",
            "turntable",
            'for kind = "turntable"',
            id="table-of-another-kind",
        ),
        pytest.param(
            {
                "robot": {"kind": "turntable"},
                "motors": {f: {"motor": i} for i, f in enumerate("URFDLB")},
            },
            "motors",
            "",
            "no face motors",
            id="face-motors-on-a-turntable",
        ),
        pytest.param(
            {"robot": {"kind": "two-gripper"}, "scan": {"rescan_turns": 2}},
            "scan",
            "rescan_turns",
            "cannot turn single faces",
            id="rescan-turns",
        ),
        pytest.param(
            {
                "robot": {"kind": "turntable"},
                "serial": {"url": "sim"},
                "simulation": {"emulator": "avr"},
            },
            "simulation",
            "emulator",
            "face motors only",
            id="avr-emulator",
        ),
    ],
)
def test_errors_name_the_place(data: dict[str, Any], section: str, key: str, words: str) -> None:
    error = _error(data)
    assert (error.section, error.key) == (section, key), str(error)
    assert words in str(error) and "robot.toml" in str(error)


@pytest.mark.parametrize(
    ("depths", "n", "ok"),
    [
        ((1,), 3, True),
        ((1,), 4, False),
        ((1, 2), 5, True),
        ((1, 2), 6, False),
        ((3,), 4, False),
        ((2, 3), 4, True),
    ],
)
def test_depths_reach(depths: tuple[int, ...], n: int, ok: bool) -> None:
    assert depths_reach(depths, n) is ok


def test_largest_n() -> None:
    assert largest_n("six-face", None) == 7
    assert largest_n("turntable", TurntableConfig()) == 3
    assert largest_n("turntable", TurntableConfig(cover_depths=(1, 2))) == 5
    assert largest_n("turntable", TurntableConfig(cover_depths=(1, 2, 3))) == 7
    assert largest_n("two-gripper", TwoGripperConfig()) == 3


def test_config_check_states_what_the_mechanism_can_do(tmp_path: Path) -> None:
    result = cli("config", "check", str(CONFIGS / "bigcube_gripper.toml"))
    assert result.returncode == 0, result.stderr
    assert "kind       turntable: table motor 3 (any angle (stepper))" in result.stdout
    assert "solves: N = 2, 3, 4, 5, 6, 7 (largest N = 7)" in result.stdout
    assert "s per solution move on N=4" in result.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('[robot]\nkind = "turntable"\ncube_size = 5\n')
    result = cli("config", "check", str(bad))
    assert result.returncode == 2 and "[robot] cube_size" in result.stderr
    result = cli("config", "check", str(CONFIGS / "turntable.toml"))
    assert result.returncode == 0, result.stderr
    assert "scan       one camera at U: 7 actions, 6 frames, 5.10 s" in result.stdout


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.usefixtures("solver_tables")
def test_demo_of_the_big_cube_gripper_solves_a_4x4() -> None:
    result = cli("demo", "--profile", "bigcube_gripper", "--seed", "5", "--speed", "40")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(seed 5, N=4)" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("virtual cube solved: yes")


def test_demo_refuses_a_size_the_mechanism_cannot_solve() -> None:
    """Before anything starts (it used to scan, then fail to plan the first wide turn)."""
    result = cli("demo", "--profile", "two_gripper", "--size", "4")
    assert result.returncode == 2
    assert "--size 4: the two-gripper mechanism" in result.stderr
    assert "up to N=3" in result.stderr
