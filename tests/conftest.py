"""Shared fixtures: a real MQTT broker, and the simulated firmware as a separate process.

``mqtt_broker``: a Mosquitto started on a free port of 127.0.0.1 with its own configuration (the
system's broker on 1883 is never used), restartable mid-test (``restart()``, ``stop()``,
``start()``) with persistence on, so QoS-1 sessions survive a restart as they would in
production. Where no ``mosquitto`` binary exists the fixture falls back to the daemon's own
embedded broker (amqtt) running in a thread, which supports the same calls.

``firmware_process``: a factory starting ``cuberobot firmware-sim --pty`` as a subprocess (the
first line it prints is the pty path), for tests in which the daemon itself is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
)
CUBEROBOT = [sys.executable, "-m", "robot.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(host: str, port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
            return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout_s} s")


@dataclass
class MosquittoBroker:
    """A private Mosquitto. ``extra_config`` lines are appended (TLS, passwords)."""

    workdir: Path
    port: int = field(default_factory=free_port)
    host: str = "127.0.0.1"
    extra_config: str = ""
    listener: bool = True
    kind: str = "mosquitto"
    _proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert MOSQUITTO is not None
        conf = self.workdir / "mosquitto.conf"
        lines = [
            # as root, mosquitto would switch to its own user and lose access to tmp_path
            *(["user root"] if os.geteuid() == 0 else []),
            "persistence true",
            f"persistence_location {self.workdir}/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
        ]
        if self.listener:
            lines += [f"listener {self.port} {self.host}", "allow_anonymous true"]
        conf.write_text("\n".join(lines) + "\n" + self.extra_config)
        log = open(self.workdir / "mosquitto.log", "ab")  # noqa: SIM115 - owned by the process
        self._proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=log, stderr=log)
        log.close()
        wait_for_port(self.host, self.port)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def restart(self, down_s: float = 0.5) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


class ThreadedBroker:
    """The embedded broker (amqtt) in a thread with its own event loop: the fallback."""

    kind = "amqtt"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.host = "127.0.0.1"
        self.port = free_port()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._broker: object | None = None

    def start(self) -> None:
        from robot.broker import EmbeddedBroker

        ready = threading.Event()
        loop = asyncio.new_event_loop()
        broker = EmbeddedBroker(self.host, self.port)

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(broker.start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(broker.stop())
            loop.close()

        self._loop, self._broker = loop, broker
        self._thread = threading.Thread(target=serve, name="test-broker", daemon=True)
        self._thread.start()
        ready.wait(10)
        wait_for_port(self.host, self.port)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop = self._thread = None

    def restart(self, down_s: float = 0.5) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


Broker = MosquittoBroker | ThreadedBroker


@pytest.fixture(scope="session")
def solver_tables() -> None:
    """The two-phase and robot-metric tables in the user cache (built once, on an empty cache,
    before any test that runs a daemon starts its clock)."""
    from solver.engines.twophase.tables import load_axial_tables, load_tables

    load_axial_tables(load_tables())


@pytest.fixture
def mqtt_broker(tmp_path: Path) -> Iterator[Broker]:
    """A real MQTT broker on a free port (Mosquitto, or the in-process fallback)."""
    workdir = tmp_path / "broker"
    workdir.mkdir()
    broker: Broker = MosquittoBroker(workdir) if MOSQUITTO else ThreadedBroker(workdir)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mosquitto_factory(tmp_path: Path) -> Iterator[Callable[..., MosquittoBroker]]:
    """Mosquittos with extra configuration (TLS, passwords); skipped without the binary."""
    if MOSQUITTO is None:
        pytest.skip("no mosquitto binary: TLS and password tests need a real Mosquitto")
    started: list[MosquittoBroker] = []

    def make(
        extra_config: str, *, listener: bool = False, port: int | None = None
    ) -> MosquittoBroker:
        workdir = tmp_path / f"mosquitto{len(started)}"
        workdir.mkdir()
        broker = MosquittoBroker(workdir, extra_config=extra_config, listener=listener)
        if port is not None:
            broker.port = port
        broker.start()
        started.append(broker)
        return broker

    yield make
    for broker in started:
        broker.stop()


@dataclass
class FirmwareProcess:
    """``cuberobot firmware-sim --pty`` running in its own process."""

    proc: subprocess.Popen[str]
    port: str
    state_file: Path

    def facelets(self) -> str:
        return self.state_file.read_text().strip()

    def stop(self) -> str:
        """Stop it; return what it printed on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return err


@pytest.fixture
def firmware_process(tmp_path: Path) -> Iterator[Callable[..., FirmwareProcess]]:
    """Factory: ``firmware_process(start=FACELETS, faults=SPEC, speed=1.0, extra=())``
    (``extra``: more ``firmware-sim`` options, e.g. ``("--size", "4", "--max-depth", "3")``)."""
    running: list[FirmwareProcess] = []

    def start(
        start: str | None = None,
        faults: str | None = None,
        speed: float = 1.0,
        extra: Sequence[str] = (),
    ) -> FirmwareProcess:
        state_file = tmp_path / f"cube{len(running)}.txt"
        cmd = [*CUBEROBOT, "firmware-sim", "--pty", "--state-file", str(state_file), *extra]
        if start:
            cmd += ["--from", start]
        if faults:
            cmd += ["--faults", faults]
        if speed != 1.0:
            cmd += ["--speed", str(speed)]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        port = proc.stdout.readline().strip()
        if not port:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"firmware-sim did not start: {err}")
        fw = FirmwareProcess(proc, port, state_file)
        running.append(fw)
        return fw

    yield start
    for fw in running:
        if fw.proc.returncode is None or (fw.proc.stdout is not None and not fw.proc.stdout.closed):
            fw.stop()
