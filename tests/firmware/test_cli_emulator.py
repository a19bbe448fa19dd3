"""``cuberobot firmware-sim --emulator avr``: the reference C firmware in simavr behind the
same CLI as the Python simulation; ``cuberobot send`` executes moves through it."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from firmware_protocol.emulator import missing_tools
from tests.conftest import CUBEROBOT

MISSING = missing_tools()
pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"EMULATOR TESTS SKIPPED: missing {', '.join(MISSING)} (make test installs them)",
)


def test_send_through_the_emulated_board() -> None:
    proc = subprocess.Popen(
        [*CUBEROBOT, "firmware-sim", "--emulator", "avr"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().strip()
        assert port.startswith("/dev/"), port
        sent = subprocess.run(
            [*CUBEROBOT, "send", port, "R U R' U'"],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
        )
        assert sent.returncode == 0, sent.stderr
        assert sent.stdout.splitlines()[-1].startswith("4/4 U'")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "emulated mega2560_ramps stopped" in err


@pytest.mark.parametrize(
    "extra",
    [["--tcp", "5555"], ["--faults", "drop=0.1"], ["--speed", "2"]],
    ids=["tcp", "faults", "speed"],
)
def test_python_only_options_are_refused(extra: list[str]) -> None:
    done = subprocess.run(
        [*CUBEROBOT, "firmware-sim", "--emulator", "avr", *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--emulator avr" in done.stderr
