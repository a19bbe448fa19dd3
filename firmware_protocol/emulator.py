"""The reference C firmware (``firmware/``) running in simavr, with its UART on a pty.

:func:`start_emulator` builds the board's ELF and the harness when needed (``make -C firmware``,
incremental), starts the harness and returns an :class:`EmulatedBoard` whose ``port`` is a
pseudo-terminal path any pyserial user opens, :class:`~firmware_protocol.link.FirmwareLink`
included. The emulated clock is paced to the wall clock, so the link's real-time timeouts hold.

The harness writes every STEP edge and DIR/ENABLE level of every motor with its emulated time to
``record`` (read it with :mod:`firmware_protocol.pulses`) and, when stopped, interrupt timings
to ``stats`` (JSON).

It needs a source checkout (the ``firmware/`` folder) and the Debian packages ``gcc-avr
avr-libc simavr libsimavr-dev libsimavrparts1``; :func:`missing_tools` says what is missing and
:class:`EmulatorUnavailableError` names the command that installs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from firmware_protocol.errors import FirmwareProtocolError

__all__ = [
    "APT_PACKAGES",
    "BOARDS",
    "EmulatedBoard",
    "EmulatorUnavailableError",
    "build",
    "firmware_dir",
    "missing_tools",
    "start_emulator",
]

logger = logging.getLogger(__name__)

#: Board files in ``firmware/boards/``: the six-motor Mega 2560 + RAMPS and the Uno + CNC shield.
BOARDS = ("mega2560_ramps", "uno_cnc")
APT_PACKAGES = ("gcc-avr", "avr-libc", "simavr", "libsimavr-dev", "libsimavrparts1")
_SIMAVR_HEADER = Path("/usr/include/simavr/sim_avr.h")
_START_TIMEOUT_S = 10.0


class EmulatorUnavailableError(FirmwareProtocolError):
    """The emulated board cannot be built or started here (tools or sources missing)."""


def firmware_dir() -> Path:
    """The ``firmware/`` folder of this source checkout."""
    return Path(__file__).resolve().parents[1] / "firmware"


def missing_tools() -> list[str]:
    """What this machine lacks to build and run the emulated board (empty: nothing)."""
    missing = [tool for tool in ("make", "cc", "avr-gcc") if shutil.which(tool) is None]
    if not _SIMAVR_HEADER.exists():
        missing.append("libsimavr-dev (simavr headers)")
    if not (firmware_dir() / "Makefile").exists():
        missing.append(f"the firmware sources ({firmware_dir()})")
    return missing


def _check_available(board: str) -> None:
    if board not in BOARDS:
        raise EmulatorUnavailableError(
            f"unknown board {board!r}; firmware/boards/ has {', '.join(BOARDS)}"
        )
    missing = missing_tools()
    if missing:
        raise EmulatorUnavailableError(
            "cannot build the emulated board: missing "
            + ", ".join(missing)
            + f"; install with `apt-get install -y {' '.join(APT_PACKAGES)}`"
        )


def build(board: str = "mega2560_ramps") -> tuple[Path, Path]:
    """Build (incrementally) the board's firmware ELF and harness; return their paths."""
    _check_available(board)
    root = firmware_dir()
    targets = [f"build/{board}/firmware.elf", f"build/{board}/harness"]
    (root / "build").mkdir(exist_ok=True)
    with open(root / "build" / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test processes build once
        result = subprocess.run(
            ["make", "-s", "-C", str(root), *targets],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise EmulatorUnavailableError(
            f"`make -C {root} {' '.join(targets)}` failed:\n{result.stderr.strip()}"
        )
    return root / targets[0], root / targets[1]


@dataclass
class EmulatedBoard:
    """A running emulated board. ``port`` is the pty the host opens."""

    board: str
    port: str
    process: subprocess.Popen[bytes]
    record_path: Path | None = None
    stats_path: Path | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    def _command(self, line: str) -> None:
        stdin = self.process.stdin
        if stdin is None or self.process.poll() is not None:
            raise EmulatorUnavailableError(f"the emulated {self.board} is not running")
        stdin.write(line.encode() + b"\n")
        stdin.flush()

    def press_estop(self, pressed: bool = True) -> None:
        """Drive the board's e-stop input (pressed = low)."""
        self._command(f"estop {1 if pressed else 0}")

    def reset(self) -> None:
        """Reset the MCU (its .noinit move counters survive, as on a real board)."""
        self._command("reset")

    def power_cycle(self) -> None:
        """Cut the board's power and restore it: the SRAM comes back holding noise, so the
        .noinit move counters are lost (they come back at zero); the EEPROM keeps its boot
        count, so the boot id still changes."""
        self._command("power")

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """Stop the harness; return its statistics (also kept in ``stats``)."""
        if self.process.poll() is None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self._command("quit")
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        if self.stats_path is not None and self.stats_path.exists():
            self.stats = json.loads(self.stats_path.read_text(encoding="utf-8"))
        if self.process.returncode not in (0, -15):
            logger.warning("emulated %s exited with %s", self.board, self.process.returncode)
        return self.stats

    def __enter__(self) -> EmulatedBoard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _read_pty_line(process: subprocess.Popen[bytes], board: str) -> str:
    stdout: IO[bytes] | None = process.stdout
    assert stdout is not None
    fd = stdout.fileno()
    deadline = time.monotonic() + _START_TIMEOUT_S
    pending = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            if process.poll() is not None:
                break
            continue
        chunk = os.read(fd, 4096)  # unbuffered: select() and a buffered reader disagree
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.startswith(b"pty "):
                return line[4:].decode().strip()
            logger.debug("harness: %s", line.decode(errors="replace"))
    process.kill()
    process.wait()
    raise EmulatorUnavailableError(
        f"the emulated {board} did not start within {_START_TIMEOUT_S:.0f} s; "
        f"run `make -C {firmware_dir()}` and try `firmware/build/{board}/harness --elf ...`"
    )


def start_emulator(
    board: str = "mega2560_ramps",
    *,
    record: Path | None = None,
    stats: Path | None = None,
    seed: int | None = None,
) -> EmulatedBoard:
    """Build if needed and start the emulated ``board``; return it once its pty exists."""
    elf, harness = build(board)
    args = [str(harness), "--elf", str(elf)]
    if record is not None:
        args += ["--record", str(record)]
    if stats is not None:
        args += ["--stats", str(stats)]
    salt = seed if seed is not None else int.from_bytes(os.urandom(4), "little")
    args += ["--seed", str(salt & 0xFFFF_FFFF)]
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = _read_pty_line(process, board)
    logger.info("emulated %s running on %s", board, port)
    return EmulatedBoard(board, port, process, record, stats)
