"""The camera rig's inputs from files: a firmware-sim cube state file read by a simulated camera
(``source = "simulated:FILE"``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.cameras import state_file_source
from solver.cube.facelets import Cube
from vision.errors import CaptureError


def test_a_state_file_is_read_at_every_frame(tmp_path: Path) -> None:
    path = tmp_path / "cube.state"
    path.write_text(Cube.solved(3).to_facelets() + "\n", encoding="ascii")
    read = state_file_source(path, 3)
    assert read().is_solved()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "holds no N=3 cube"),
        (b"\xff\xfe garbage", "holds no N=3 cube"),
        (b"U" * 24, "holds no N=3 cube"),
        (b"Q" * 54, "holds no N=3 cube"),
        (b"U" * 100_000, "larger than 4096 bytes"),
    ],
    ids=["empty", "binary", "other-n", "letters", "huge"],
)
def test_a_corrupt_state_file_is_a_capture_error_naming_it(
    tmp_path: Path, content: bytes, why: str
) -> None:
    """A non-ASCII file was a UnicodeDecodeError and a bad state a CubeError: neither is a
    VisionError, so the job ended as an internal error instead of a scan failure."""
    path = tmp_path / "cube.state"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=why) as caught:
        state_file_source(path, 3)()
    assert str(path) in str(caught.value)


def test_a_missing_state_file_says_what_writes_it(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="firmware-sim --state-file"):
        state_file_source(tmp_path / "absent.state", 3)()


@pytest.mark.parametrize("source", ["²", "99999999999999999999"])
def test_a_camera_source_that_is_no_index_does_not_stop_the_daemon_with_a_traceback(
    tmp_path: Path, source: str
) -> None:
    """``int("²")`` (``"²".isdigit()`` is true) raised ValueError building the rig: the daemon
    could not start and printed a traceback."""
    from robot.cameras import CameraRig
    from robot.config import parse_config

    config = parse_config(
        {
            "cameras": [
                {"name": "front", "source": source, "view": "face", "faces": ["F"]},
                {
                    "name": "upper",
                    "source": "simulated",
                    "view": "corner",
                    "faces": ["U", "R", "B"],
                },
                {
                    "name": "lower",
                    "source": "simulated",
                    "view": "corner",
                    "faces": ["D", "L", "B"],
                },
            ]
        },
        str(tmp_path / "robot.toml"),
    )
    try:
        rig = CameraRig(config, Cube.solved)
    except CaptureError as exc:  # refused by name at start
        assert "out of range" in str(exc)
        return
    assert rig.missing_calibration == ("front",)
    with pytest.raises(CaptureError, match="cannot open camera source"):
        rig.capture()
