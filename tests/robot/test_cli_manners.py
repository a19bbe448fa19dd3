"""CLI manners: --version, -v after the command, help on every option, colours, one stream rule
(results on stdout, problems on stderr, --format json documents on stdout even on failure),
and clear messages with the documented exit codes where tracebacks used to be."""

from __future__ import annotations

import argparse
import json
import os
import pty
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from robot.cli import build_parser, subparsers
from tests.robot.helpers import CONFIGS

CLI = [sys.executable, "-m", "robot.cli"]
SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
IMPOSSIBLE = SOLVED[:-1] + "F"


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
    )


# --- the parser -----------------------------------------------------------------------------


def test_version() -> None:
    result = cli("--version")
    assert result.returncode == 0
    name, version = result.stdout.split()
    assert name == "cuberobot" and version[0].isdigit()


def test_verbose_after_the_command() -> None:
    quiet = cli("solve", "--scramble", "R U")
    loud = cli("solve", "-v", "--scramble", "R U")
    before = cli("-v", "solve", "--scramble", "R U")
    assert quiet.returncode == loud.returncode == before.returncode == 0, loud.stderr
    assert quiet.stdout == loud.stdout == before.stdout == "U' R'\n"
    assert " INFO " not in quiet.stderr
    assert " INFO " in loud.stderr and " INFO " in before.stderr


def _every_parser() -> Iterator[argparse.ArgumentParser]:
    parser = build_parser()
    yield parser
    yield from subparsers(parser)


def test_every_option_and_argument_has_help() -> None:
    quiet = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
    missing = [
        f"{parser.prog} {action.option_strings or action.dest}"
        for parser in _every_parser()
        for action in parser._actions
        if not isinstance(action, quiet) and not (action.help or "").strip()
    ]
    assert len(list(_every_parser())) > 15
    assert not missing, missing


# --- colours -------------------------------------------------------------------------------


def _apply_on_a_terminal(env: dict[str, str]) -> str:
    """``cuberobot apply R`` with its stdout on a pseudo-terminal; what it wrote there."""
    master, slave = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | env
    try:
        proc = subprocess.run(
            [*CLI, "apply", "R"], stdout=slave, stderr=subprocess.PIPE, env=environ, timeout=60
        )
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    assert proc.returncode == 0, proc.stderr
    return out.decode()


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        pytest.param({"TERM": "xterm"}, True, id="terminal"),
        pytest.param({"TERM": "xterm", "NO_COLOR": ""}, True, id="empty-no-color"),
        pytest.param({"TERM": "xterm", "NO_COLOR": "1"}, False, id="no-color"),
        pytest.param({"TERM": "dumb"}, False, id="dumb-terminal"),
    ],
)
def test_apply_colours_only_where_wanted(env: dict[str, str], coloured: bool) -> None:
    out = _apply_on_a_terminal(env)
    assert ("\x1b[" in out) is coloured
    assert out.count("\n") >= 9  # the net itself is there either way


# --- streams ---------------------------------------------------------------------------------


def test_validate_results_on_stdout_problems_on_stderr() -> None:
    good = cli("validate", SOLVED)
    assert (good.returncode, good.stdout, good.stderr) == (0, "valid\n", "")
    bad = cli("validate", IMPOSSIBLE)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("cuberobot: impossible cube:\n")
    assert "appears 10 times" in bad.stderr


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        pytest.param([IMPOSSIBLE], 1, "InvalidCubeError", id="impossible"),
        pytest.param(["--scramble", "R Q"], 2, "NotationError", id="bad-move"),
        pytest.param(
            ["--scramble", "R U F", "--max-length", "1"], 1, "NoSolutionError", id="limit"
        ),
        pytest.param(["--scramble", "R", "--engine", "nope"], 2, "UsageError", id="engine"),
    ],
)
def test_solve_json_failure_is_a_json_document(args: list[str], code: int, kind: str) -> None:
    result = cli("solve", "--format", "json", *args)
    assert result.returncode == code
    document = json.loads(result.stdout)
    assert document["error"]["type"] == kind
    assert document["error"]["exit_code"] == code
    assert document["error"]["message"] in result.stderr  # and reported on stderr as ever


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(["trace", IMPOSSIBLE], 1, id="trace-impossible"),
        pytest.param(["trace", "hello"], 2, id="trace-not-facelets"),
        pytest.param(["scan", "/nonexistent-folder"], 2, id="scan-no-images"),
    ],
)
def test_every_json_command_fails_with_a_json_document(args: list[str], code: int) -> None:
    result = cli(*args, "--format", "json")
    assert result.returncode == code, result.stderr
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["error"]["exit_code"] == code
    assert result.stderr.startswith("cuberobot: ")


def test_solve_json_success_is_unchanged() -> None:
    result = cli("solve", "--format", "json", "--scramble", "R U")
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["moves"] == "U' R'" and "error" not in document and "solve_ms" in document


def test_json_batch_never_prints_plain_error_lines(tmp_path: Path) -> None:
    batch = tmp_path / "states.txt"
    batch.write_text(f"{SOLVED}\n{IMPOSSIBLE}\nnot a cube\n")
    result = cli("solve", "--format", "json", "--batch", str(batch))
    assert result.returncode == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3 and not any(line.startswith("ERROR") for line in result.stdout)
    assert rows[0]["moves"] == ""
    assert rows[1]["error"]["type"] == "InvalidCubeError" and rows[1]["solve_ms"] >= 0
    assert rows[2]["error"]["exit_code"] == 2


def test_batch_of_a_non_utf8_file(tmp_path: Path) -> None:
    batch = tmp_path / "states.txt"
    batch.write_bytes(SOLVED.encode() + b"\n\xff\xfe\xfa\n")
    result = cli("solve", "--batch", str(batch))
    assert result.returncode == 2
    assert "not UTF-8 text" in result.stderr and str(batch) in result.stderr
    assert "Traceback" not in result.stderr
    as_json = cli("solve", "--batch", str(batch), "--format", "json")
    assert as_json.returncode == 2
    assert "not UTF-8" in json.loads(as_json.stdout.splitlines()[-1])["error"]["message"]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["send", "{port}", "R U"], id="send"),
        pytest.param(["home", "--port", "{port}"], id="home"),
    ],
)
def test_a_link_error_is_printed_once(tmp_path: Path, command: list[str]) -> None:
    args = [a.format(port=tmp_path / "no-such-port") for a in command]
    result = cli(*args, "--connect-timeout", "1")
    assert result.returncode == 1
    assert result.stderr.count("cannot open") == 1, result.stderr
    assert result.stderr.startswith("cuberobot: cannot open")
    verbose = cli(*args, "--connect-timeout", "1", "-v")
    assert verbose.stderr.count("cannot open") == 2  # -v adds the link's own log line


# --- config check ----------------------------------------------------------------------------


def test_config_check_names_the_place_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[serial]\nbaud = 'fast'\n")
    result = cli("config", "check", str(bad))
    assert result.returncode == 2
    assert result.stderr.count("[serial] baud") == 1, result.stderr


def test_config_check_suggests_the_nearest_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[robot]\nnmae = 'x'\n[mqtt.tls]\nenabld = true\n")
    result = cli("config", "check", str(bad))
    assert result.returncode == 2
    assert "did you mean 'name'?" in result.stderr and "did you mean 'enabled'?" in result.stderr


@pytest.mark.parametrize(
    ("addition", "section", "key"),
    [
        pytest.param(
            '[colours]\ncalibration_file = "colours.toml"\n', "colours", "calibration_file", id="c"
        ),
        pytest.param(
            '[mqtt]\nhost = "localhost"\nusername = "u"\npassword_file = "pw.txt"\n',
            "mqtt",
            "password_file",
            id="password",
        ),
    ],
)
def test_config_check_fails_for_a_missing_file(
    tmp_path: Path, addition: str, section: str, key: str
) -> None:
    text = (CONFIGS / "six_motor.toml").read_text(encoding="utf-8")
    profile = tmp_path / "robot.toml"
    profile.write_text(_without_section(text, section) + addition)
    assert cli("config", "check", str(CONFIGS / "six_motor.toml")).returncode == 0
    result = cli("config", "check", str(profile))
    assert result.returncode == 2
    assert f"[{section}] {key}" in result.stderr
    assert str(tmp_path) in result.stderr


def _without_section(text: str, section: str) -> str:
    """``text`` without the ``[section]`` table (its header and keys, up to the next table)."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            skipping = line.strip() == f"[{section}]"
        if not skipping:
            out.append(line)
    return "".join(out)


# --- clear messages instead of tracebacks -------------------------------------------------


def test_a_journal_under_a_file(tmp_path: Path) -> None:
    a_file = tmp_path / "plain"
    a_file.write_text("")
    demo = cli("demo", "--journal", str(a_file / "journal.sqlite"))
    assert demo.returncode == 2
    assert "is a file, not a folder" in demo.stderr and "Traceback" not in demo.stderr
    profile = tmp_path / "robot.toml"
    text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
    profile.write_text(text.replace('"sim-journal.sqlite"', f'"{a_file}/deeper/j.sqlite"'))
    run = cli("run", "--config", str(profile))
    assert run.returncode == 2
    assert "[journal] path" in run.stderr and "is a file, not a folder" in run.stderr


def test_a_busy_broker_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        profile = tmp_path / "robot.toml"
        text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
        assert "embedded_port = 0 " in text
        profile.write_text(text.replace("embedded_port = 0 ", f"embedded_port = {port} "))
        result = cli("demo", "--config", str(profile))
    assert result.returncode == 1
    assert result.stderr.startswith("cuberobot: cannot start the embedded MQTT broker"), (
        result.stderr
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_log_level_before_or_after_the_command(where: str) -> None:
    level = ["--log-level", "info"]
    words = ["solve", "--scramble", "R U"]
    done = cli(*level, *words) if where == "before" else cli(*words, *level)
    assert done.returncode == 0 and done.stdout == "U' R'\n"
    assert " INFO " in done.stderr
    bad = cli("solve", "--log-level", "loud")
    assert bad.returncode == 2 and "log level must be one of" in bad.stderr
