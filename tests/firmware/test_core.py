"""The firmware's protocol core, compiled for this machine with `cc` (ASan and UBSan on), runs
its C tests against the golden frames: PROTOCOL.md's frames, sequencing, refusals, pairs,
e-stop, watchdog, hold, home, reset, and megabytes of line garbage that must never move a
motor."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from firmware_protocol import emulator
from firmware_protocol.emulator import EmulatorUnavailableError, firmware_dir, start_emulator

from .test_golden import GOLDEN_TXT, _vector_rows


def test_host_compiled_core_passes_its_checks(host_cc: str) -> None:
    root = firmware_dir()
    make = subprocess.run(
        ["make", "-s", "-C", str(root), "build/test_core"], capture_output=True, text=True
    )
    assert make.returncode == 0, make.stderr
    result = subprocess.run(
        [str(root / "build" / "test_core"), str(GOLDEN_TXT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    frames = len(_vector_rows())  # every frame of golden_frames.txt (17 with moves_depth)
    assert f" 0 failed, {frames} golden frames" in result.stdout, result.stdout


def test_core_is_warning_free_c99(host_cc: str) -> None:
    sources = [str(firmware_dir() / "core" / name) for name in ("wire.c", "proto.c", "reply.c")]
    result = subprocess.run(
        [
            host_cc,
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-fsyntax-only",
            *sources,
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_unknown_board_is_a_typed_error_naming_the_boards() -> None:
    with pytest.raises(EmulatorUnavailableError, match="mega2560_ramps, uno_cnc"):
        start_emulator("due_ramps")


@pytest.mark.parametrize("board", ["mega2560_ramps", "uno_cnc"])
def test_firmware_never_allocates(emulator_ready: None, board: str) -> None:
    elf = firmware_dir() / "build" / board / "firmware.elf"
    symbols = subprocess.run(["avr-nm", str(elf)], capture_output=True, text=True, check=True)
    names = {line.split()[-1] for line in symbols.stdout.splitlines()}
    assert "main" in names
    assert not names & {"malloc", "calloc", "realloc", "free", "__brkval", "__malloc_heap_start"}


def test_missing_tools_are_named_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda tool: None if tool == "avr-gcc" else real_which(tool)
    )
    assert "avr-gcc" in emulator.missing_tools()
    with pytest.raises(EmulatorUnavailableError, match="apt-get install -y gcc-avr avr-libc"):
        start_emulator("mega2560_ramps")
