"""``cuberobot firmware-sim`` and ``cuberobot send`` as processes: the contracts scripts use."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from solver.cube.facelets import Cube

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "robot.cli"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@contextmanager
def firmware_sim(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        [*CLI, "firmware-sim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "firmware-sim printed nothing within 20 s"
        port = proc.stdout.readline().strip()
        yield port, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout
    )


def send(port: str, moves: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return cli("send", port, moves, *extra)


def test_sim_on_a_pty_and_send(tmp_path: Path) -> None:
    state = tmp_path / "cube.txt"
    with firmware_sim("--pty", "--state-file", str(state), "--speed", "5") as (port, proc):
        assert Path(port).exists() and os.path.realpath(port).startswith("/dev/pts/")
        done = send(port, "R U R' U' F2+B'")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [
            "1/6 R index=1",
            "2/6 U index=2",
            "3/6 R' index=3",
            "4/6 U' index=4",
            "5/6 F2 index=5",
            "6/6 B' index=6",
        ]
        expected = Cube.solved(3).apply("R U R' U' F2 B'").to_facelets()
        assert state.read_text().strip() == expected
        bad = send(port, "R Q")
        assert bad.returncode == 2 and "column 3" in bad.stderr
        again = send(port, "U")
        assert again.returncode == 0 and again.stdout.strip() == "1/1 U index=7"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stderr is not None and "7 moves executed" in proc.stderr.read()


def test_sim_from_an_impossible_cube_says_so() -> None:
    """An impossible --from is allowed (a test of the daemon's refusal wants one) but said."""
    letters = list(Cube.solved(3).to_facelets())  # URFDLB order, 9 letters a face
    u, r, f = 8, 9, 20  # the URF corner's stickers on U, R and F
    letters[u], letters[r], letters[f] = letters[f], letters[u], letters[r]  # twisted in place
    with firmware_sim("--tcp", "0", "--from", "".join(letters)) as (port, proc):
        assert port.startswith("socket://127.0.0.1:")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        err = proc.stderr.read()
    assert "--from is no cube a robot can be handed" in err and "cuberobot validate" in err


def test_sim_on_tcp_with_a_4x4(tmp_path: Path) -> None:
    state = tmp_path / "cube.txt"
    with firmware_sim("--tcp", "0", "--size", "4", "--state-file", str(state), "--speed", "5") as (
        port,
        _,
    ):
        assert port.startswith("socket://127.0.0.1:")
        done = send(port, "R U2 D'")
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.splitlines()) == 3
        assert state.read_text().strip() == Cube.solved(4).apply("R U2 D'").to_facelets()


def test_send_reports_a_reset_and_exits_1() -> None:
    with firmware_sim("--faults", "reset@3,flip=1e-3", "--seed", "4", "--speed", "5") as (port, _):
        done = send(port, "R U F D L B")
        assert done.returncode == 1
        assert done.stdout.splitlines() == ["1/6 R index=1", "2/6 U index=2"]
        assert "reset mid-sequence" in done.stderr and "2 of 6 moves executed" in done.stderr


def test_send_to_a_missing_port(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyGONE")
    done = send(port, "R", "--connect-timeout", "0.3")
    assert done.returncode == 1
    assert port in done.stderr and "cannot open" in done.stderr


def test_send_to_a_url_that_is_no_port() -> None:
    done = send("nope://x", "R", "--connect-timeout", "20")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "nope://x is not a port" in done.stderr


@pytest.mark.parametrize("timeout", ["nan", "inf", "0", "-1"])
def test_send_connect_timeout_is_finite_seconds(timeout: str) -> None:
    done = send("loop://", "R", "--connect-timeout", timeout)
    assert done.returncode == 2
    assert "--connect-timeout" in done.stderr


@pytest.mark.parametrize(
    ("where", "words"),
    [
        pytest.param(".", "is a folder", id="a-folder"),
        pytest.param("missing/state", "does not exist", id="missing-folder"),
        pytest.param("file/state", "is a file, not a folder", id="under-a-file"),
    ],
)
def test_firmware_sim_state_file_in_no_folder(tmp_path: Path, where: str, words: str) -> None:
    (tmp_path / "file").write_text("x")
    done = cli("firmware-sim", "--state-file", str(tmp_path / where), timeout=30)
    assert done.returncode == 2
    assert words in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--faults", "warp=1"], id="unknown-fault"),
        pytest.param(["--size", "1"], id="size-too-small"),
        pytest.param(["--pty", "--tcp", "5000"], id="pty-and-tcp"),
    ],
)
def test_firmware_sim_usage_errors(args: list[str]) -> None:
    done = cli("firmware-sim", *args, timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""


def test_send_to_a_port_that_opens_but_fails_every_write() -> None:
    """loop:// opens and then times out on every write: the serial transport's fatal write
    error was logged with a traceback each time, and the back-off restarted at every open
    (a retry and a warning every 0.05 s); now one warning line per try, backing off."""
    done = send("loop://", "R", "--connect-timeout", "2")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "no answer from the firmware on loop://" in done.stderr
    assert done.stderr.count("port lost") <= 8
