"""Files vision is handed that are no files (2026-11-27 evening sweep): a FIFO given as an RGB
scan, a calibration or a simulated camera's state file made the reader wait for a writer
forever (the CLI hung; the daemon's scan thread never came back). Now each is refused by name
without being opened for a blocking read."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from robot.cameras import state_file_source
from vision.calibration import load_calibration
from vision.errors import CalibrationError, CaptureError, ScanInputError
from vision.rgbfile import load_rgb_scan


def _refused_at_once(fifo: Path, call: Callable[[], object]) -> BaseException:
    """What ``call`` raised; fails (after unblocking it) if it waited on the FIFO."""
    raised: list[BaseException] = []

    def body() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test thread
            raised.append(exc)

    worker = threading.Thread(target=body)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "w"):
            pass
        worker.join(10)
        pytest.fail(f"{call} waited for a writer on {fifo}")
    assert raised, "a FIFO was read as a file"
    return raised[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_an_rgb_scan_that_is_a_fifo_is_refused(fifo: Path) -> None:
    exc = _refused_at_once(fifo, lambda: load_rgb_scan(fifo))
    assert isinstance(exc, ScanInputError) and "not a regular file" in str(exc)


def test_a_calibration_that_is_a_fifo_is_refused(fifo: Path) -> None:
    exc = _refused_at_once(fifo, lambda: load_calibration(fifo))
    assert isinstance(exc, CalibrationError) and "not a regular file" in str(exc)


def test_a_simulated_camera_state_file_that_is_a_fifo_is_a_capture_error(fifo: Path) -> None:
    read = state_file_source(fifo, 3)
    exc = _refused_at_once(fifo, read)
    assert isinstance(exc, CaptureError) and "not a regular file" in str(exc)


@pytest.mark.parametrize(
    ("load", "error"),
    [
        pytest.param(load_rgb_scan, ScanInputError, id="rgb"),
        pytest.param(load_calibration, CalibrationError, id="calibration"),
    ],
)
def test_a_device_is_refused_unread(load: Callable[[Path], object], error: type) -> None:
    with pytest.raises(error, match="not a regular file"):
        load(Path("/dev/zero"))
