"""systemd notifications: readiness, status, the watchdog and stopping, through a real unix
datagram socket as systemd provides it; nothing happens without NOTIFY_SOCKET."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from robot import sdnotify
from tests.conftest import CUBEROBOT
from tests.robot.helpers import CONFIGS


def _socket(tmp_path: Path) -> tuple[socket.socket, str]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(60)
    return sock, path


def test_notify_sends_to_the_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sock, path = _socket(tmp_path)
    with sock:
        monkeypatch.setenv("NOTIFY_SOCKET", path)
        assert sdnotify.notify("READY=1", "STATUS=fine")
        assert sock.recv(4096) == b"READY=1\nSTATUS=fine"


def test_without_systemd_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert sdnotify.notify("READY=1") is False
    assert sdnotify.watchdog_interval_s() is None


def test_watchdog_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.watchdog_interval_s() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", "1")  # meant for another process
    assert sdnotify.watchdog_interval_s() is None


@pytest.mark.e2e
@pytest.mark.usefixtures("solver_tables")
def test_the_daemon_under_systemd_notifies(tmp_path: Path) -> None:
    profile = tmp_path / "robot.toml"
    text = (CONFIGS / "simulated.toml").read_text(encoding="utf-8")
    profile.write_text(text.replace('path = "sim-journal.sqlite"', 'path = "journal.sqlite"'))
    sock, path = _socket(tmp_path)
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}
    proc = subprocess.Popen(
        [*CUBEROBOT, "run", "--config", str(profile)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env["WATCHDOG_PID"] = str(proc.pid)
    seen: list[bytes] = []
    try:
        with sock:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and not any(b"READY=1" in m for m in seen):
                seen.append(sock.recv(4096))
            assert any(b"READY=1" in m for m in seen), seen
            assert any(m == b"WATCHDOG=1" for m in seen) or sock.recv(4096) == b"WATCHDOG=1"
            proc.send_signal(signal.SIGTERM)
            while not any(m == b"STOPPING=1" for m in seen):
                seen.append(sock.recv(4096))
            proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
    assert proc.returncode == 0
