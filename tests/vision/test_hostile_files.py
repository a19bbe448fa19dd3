"""Files vision is handed that are no files (2026-11-27 evening sweep): a FIFO given as an RGB
scan, a calibration or a simulated camera's state file made the reader wait for a writer
forever (the CLI hung; the daemon's scan thread never came back). Now each is refused by name
without being opened for a blocking read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from robot.cameras import state_file_source
from tests.fifo_guard import outcome_without_writer
from vision.calibration import load_calibration
from vision.errors import CalibrationError, CaptureError, ScanInputError
from vision.rgbfile import load_rgb_scan


def _refused_at_once(fifo: Path, call: Callable[[], object]) -> BaseException:
    """What ``call`` raised; fails if it waited on the FIFO or returned."""
    got = outcome_without_writer(fifo, call)
    assert got and isinstance(got[0], BaseException), "a FIFO was read as a file"
    return got[0]


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


# --- where the CLI writes: --out and --annotate ------------------------------------------------


@pytest.fixture(scope="module")
def faces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from solver.cube.facelets import Cube
    from tests.vision.test_cli import _write_faces

    folder = tmp_path_factory.mktemp("faces")
    _write_faces(folder, Cube.solved(3))
    return folder


@pytest.mark.parametrize("command", ["calibrate", "learn-colors"])
@pytest.mark.parametrize(
    ("where", "words"),
    [
        pytest.param("missing/cal.toml", "No such file or directory", id="missing-folder"),
        pytest.param("file/cal.toml", "Not a directory", id="under-a-file"),
        pytest.param("c" * 300 + ".toml", "too long", id="name-too-long"),
    ],
)
def test_an_out_path_that_cannot_be_written_is_a_usage_error(
    faces: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    where: str,
    words: str,
) -> None:
    """Was a FileNotFoundError / NotADirectoryError / OSError traceback after the work."""
    from robot.cli import main

    (tmp_path / "file").write_text("x")
    assert main(["vision", command, str(faces), "--out", str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing half-written


def test_saving_a_calibration_leaves_no_half_file_when_the_disk_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.calibration import Calibration, save_calibration

    path = tmp_path / "cal.toml"
    path.write_text("n = 3\n")

    def full(self: Path, *_args: object, **_kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError, match="No space"):
        save_calibration(Calibration(3, ()), path)
    monkeypatch.undo()
    assert path.read_text() == "n = 3\n"  # the old file as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.toml"]


@pytest.mark.parametrize("kind", ["file", "fifo", "under-a-file"])
def test_an_annotate_path_that_is_no_folder_is_a_usage_error_before_the_scan(
    faces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    from robot.cli import main

    target = tmp_path / "out"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_text("x")
    where = target / "x" if kind == "under-a-file" else target
    assert main(["scan", str(faces), "--annotate", str(where)]) == 2
    captured = capsys.readouterr()
    assert "--annotate" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # refused before the scan
