"""The profile's ``[web]`` section: off and on loopback by default, the token checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.config import load_config, parse_config
from robot.errors import ConfigError
from tests.robot.helpers import CONFIGS


def test_web_section_defaults_to_off_and_loopback() -> None:
    config = parse_config({}, "p.toml")
    assert not config.web.enabled and config.web.loopback and config.web_token() == ""


@pytest.mark.parametrize(
    ("web", "key", "message"),
    [
        pytest.param({"token": "short"}, "token", "12 characters", id="short-token"),
        pytest.param({"token": "x" * 12, "token_file": "t"}, "", "not both", id="both"),
        pytest.param({"port": 70000}, "port", "65535", id="port"),
        pytest.param({"colour": 1}, "colour", "unknown key", id="unknown"),
    ],
)
def test_web_section_errors_name_the_key(web: dict[str, object], key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config({"web": web}, "p.toml")
    assert info.value.section == "web" and info.value.key == key


def test_web_token_file_is_read_and_checked(tmp_path: Path) -> None:
    text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
    path = tmp_path / "robot.toml"
    path.write_text(text + '\n[web]\nenabled = true\ntoken_file = "token.txt"\n', "utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == "token_file"
    (tmp_path / "token.txt").write_text("abc\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="shorter than 12"):
        load_config(path)
    (tmp_path / "token.txt").write_text("a-long-enough-token\n", encoding="utf-8")
    assert load_config(path).web_token() == "a-long-enough-token"
