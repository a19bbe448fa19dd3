"""The one exception → exit-code map of the CLI (robot/cli/exits.py), a closed stdout, Ctrl-C."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robot.cli.exits import (
    LIBRARY_ERRORS,
    CommandFailed,
    ExitCode,
    UsageError,
    run_command,
)
from solver.errors import (
    CubeError,
    InvalidCubeError,
    NoSolutionError,
    NotationError,
    Problem,
    UnsupportedError,
)
from tests.conftest import CUBEROBOT


def outcome(capsys: pytest.CaptureFixture[str], exc: BaseException) -> tuple[int, str]:
    def body() -> int:
        raise exc

    code = run_command(body)
    return code, capsys.readouterr().err


def test_every_rule_names_an_exception_class() -> None:
    for rule in LIBRARY_ERRORS:
        cls = getattr(importlib.import_module(rule.module), rule.name)
        assert isinstance(cls, type) and issubclass(cls, Exception), rule


def test_no_rule_is_hidden_behind_a_more_general_one() -> None:
    classes = [getattr(importlib.import_module(r.module), r.name) for r in LIBRARY_ERRORS]
    for later, cls in enumerate(classes):
        for earlier in classes[:later]:
            assert not issubclass(cls, earlier), f"{cls.__name__} after {earlier.__name__}"


@pytest.mark.parametrize(
    ("exc", "code", "err"),
    [
        pytest.param(
            NotationError("unknown move", text="R Q", column=3, token="Q"),
            2,
            "cuberobot: bad move: unknown move at column 3: 'Q' in 'R Q'\n",
            id="notation",
        ),
        pytest.param(
            UnsupportedError("M needs N >= 3"), 2, "cuberobot: M needs N >= 3\n", id="cube"
        ),
        pytest.param(NoSolutionError("none in 20"), 1, "cuberobot: none in 20\n", id="no-solution"),
        pytest.param(
            InvalidCubeError([Problem("twist", "corners", "a corner is twisted")]),
            1,
            "cuberobot: impossible cube:\n  twist at corners: a corner is twisted\n",
            id="impossible",
        ),
        pytest.param(UsageError("no moves given"), 2, "cuberobot: no moves given\n", id="usage"),
        pytest.param(
            CommandFailed("no valid cube could be read:", details=["a", "b"]),
            1,
            "cuberobot: no valid cube could be read:\n  a\n  b\n",
            id="failed-with-details",
        ),
        pytest.param(KeyboardInterrupt(), 130, "interrupted\n", id="ctrl-c"),
    ],
)
def test_exceptions_map_to_codes_and_one_message(
    capsys: pytest.CaptureFixture[str], exc: BaseException, code: int, err: str
) -> None:
    assert outcome(capsys, exc) == (code, err)


def test_the_packages_errors_map_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_protocol.errors import InvalidMoveError, PortOpenError
    from robot.errors import ConfigError, JournalError
    from vision.errors import CaptureError, GridNotFoundError

    assert outcome(capsys, InvalidMoveError("Q")) == (2, "cuberobot: bad moves: Q\n")
    assert outcome(capsys, PortOpenError("cannot open /dev/x", "/dev/x"))[0] == 1
    assert outcome(capsys, GridNotFoundError("U: no grid")) == (
        1,
        "cuberobot: no valid cube could be read: U: no grid\n",
    )
    assert outcome(capsys, CaptureError("camera 0 gave nothing"))[0] == 2
    assert outcome(capsys, ConfigError("bad", file="r.toml", section="serial")) == (
        2,
        "cuberobot: r.toml: [serial]: bad\n",
    )
    assert outcome(capsys, JournalError("locked"))[0] == 1


def test_a_bug_keeps_its_traceback() -> None:
    def body() -> int:
        raise ZeroDivisionError("bug")

    with pytest.raises(ZeroDivisionError):
        run_command(body)


def test_a_subclass_of_a_mapped_error_is_mapped(capsys: pytest.CaptureFixture[str]) -> None:
    class Odd(CubeError):
        pass

    assert outcome(capsys, Odd("odd")) == (ExitCode.USAGE, "cuberobot: odd\n")


def test_a_broken_pipe_that_is_not_stdout_is_a_bug() -> None:
    def body() -> int:
        raise BrokenPipeError("socket")

    with pytest.raises(BrokenPipeError):
        run_command(body)


def _piped_into_a_closed_reader(*args: str, buffered: bool) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with stdout on a pipe whose reader is already gone (as after `| head`)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*CUBEROBOT, *args], stdout=write, stderr=subprocess.PIPE, env=env, timeout=60
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["apply", "R U", "--format", "facelets"], id="apply"),
        pytest.param(["scramble", "--size", "5", "--seed", "1"], id="scramble"),
    ],
)
def test_a_closed_stdout_ends_quietly_as_after_sigpipe(args: list[str], buffered: bool) -> None:
    done = _piped_into_a_closed_reader(*args, buffered=buffered)
    assert (done.returncode, done.stderr) == (141, b"")


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_help_into_a_closed_stdout_is_quiet(buffered: bool) -> None:
    done = _piped_into_a_closed_reader("--help", buffered=buffered)
    # buffered: the final flush fails (141); unbuffered: argparse itself ignores the error (0)
    assert (done.returncode, done.stderr) == (141 if buffered else 0, b"")


def test_piped_into_head_prints_no_traceback() -> None:
    shell = f"{' '.join(CUBEROBOT)} apply 'R U' --format facelets | head -c 1"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == "U" and done.stderr == ""


def _wait_reading_its_stdin(pid: int, timeout_s: float = 30.0) -> None:
    """Until process ``pid`` blocks reading its stdin pipe (Linux: its wait channel; elsewhere
    1.5 s), rather than a fixed wait that a slow start outlasts."""
    wchan = Path(f"/proc/{pid}/wchan")
    if not wchan.exists():
        time.sleep(1.5)
        return
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if "pipe" in wchan.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"the CLI did not wait for stdin within {timeout_s} s")


def test_ctrl_c_exits_130_with_one_line() -> None:
    # Ctrl-C at a terminal: SIGINT as the default action, whatever this test inherited (a run
    # started in the background by a non-interactive shell ignores SIGINT, its children too,
    # and a Python started so never raises KeyboardInterrupt: it read its stdin to the end)
    proc = subprocess.Popen(
        [*CUBEROBOT, "solve", "--engine", "lbl", "--batch", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        _wait_reading_its_stdin(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err == b"interrupted\n"


def test_usage_errors_stay_argparse_errors() -> None:
    def body() -> int:
        argparse.ArgumentParser(prog="x").parse_args(["--nope"])
        return 0

    with pytest.raises(SystemExit) as info:
        run_command(body)
    assert info.value.code == 2


def test_run_command_flushes_what_the_command_printed(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        sys.stdout.write("partial line")
        return 0

    assert run_command(body) == 0
    assert capsys.readouterr().out == "partial line"
