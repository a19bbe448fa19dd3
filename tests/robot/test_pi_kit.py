"""The Raspberry Pi kit (docs/raspberry-pi/): the systemd unit and the udev rule say what the
daemon needs, and every ``cuberobot`` command the install guide shows exists."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

from robot.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DOCS / "raspberry-pi" / "cuberobot.service", encoding="utf-8")
    return parser


def test_the_unit_runs_the_daemon_as_systemd_expects() -> None:
    service = _unit()["Service"]
    assert service["Type"] == "notify" and service["NotifyAccess"] == "main"
    assert int(service["WatchdogSec"]) > 0 and service["Restart"] == "on-failure"
    assert "dialout" in service["SupplementaryGroups"].split()
    assert service["StateDirectory"] == service["CacheDirectory"] == "cuberobot"
    assert service["Environment"] == "CUBEROBOT_CACHE_DIR=/var/cache/cuberobot"
    command = shlex.split(service["ExecStart"])
    assert command[0].endswith("/cuberobot") and command[1] == "run"
    args = build_parser().parse_args(command[1:])
    assert str(args.config) == "/etc/cuberobot/robot.toml"


def test_the_udev_rule_names_the_motor_board() -> None:
    rules = [
        line
        for line in (DOCS / "raspberry-pi" / "99-cuberobot.rules").read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert rules
    for rule in rules:
        assert 'SUBSYSTEM=="tty"' in rule and 'SYMLINK+="cuberobot-motors"' in rule
        assert re.search(r'ATTRS\{idVendor\}=="[0-9a-f]{4}"', rule)


def test_every_command_in_the_install_guide_exists() -> None:
    guide = (DOCS / "raspberry-pi.md").read_text("utf-8")
    commands = re.findall(r"/opt/cuberobot/venv/bin/cuberobot ([a-z-]+(?: [a-z-]+)?)", guide)
    assert commands
    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command in commands:
        assert command.split()[0] in subcommands, command
