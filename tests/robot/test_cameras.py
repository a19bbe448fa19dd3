"""The cameras' cube sources (:mod:`robot.cameras`): a state file that cannot be a cube is a
:class:`CaptureError` naming the file (the daemon reports a failed scan), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.cameras import state_file_source
from solver.cube.facelets import Cube
from vision.errors import CaptureError


def test_a_state_file_is_read_at_every_frame(tmp_path: Path) -> None:
    path = tmp_path / "state"
    path.write_text(Cube.solved(3).apply("R").to_facelets() + "\n")
    read = state_file_source(path, 3)
    assert read() == Cube.solved(3).apply("R")
    path.write_text(Cube.solved(3).to_facelets())
    assert read().is_solved()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        pytest.param(b"\x89PNG\xff\xfe", "is not text", id="binary"),
        pytest.param(b"", "holds no 3x3 cube", id="empty"),
        pytest.param(b"UUUU", "holds no 3x3 cube", id="short"),
        pytest.param(Cube.solved(4).to_facelets().encode(), "holds no 3x3 cube", id="other-size"),
    ],
)
def test_a_state_file_that_is_no_cube_is_a_capture_error(
    tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "state"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=words) as info:
        state_file_source(path, 3)()
    assert str(path) in str(info.value)


def test_a_missing_state_file_is_a_capture_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cannot read the cube state file"):
        state_file_source(tmp_path / "gone", 3)()


def test_a_huge_or_endless_state_file_is_refused_not_read(tmp_path: Path) -> None:
    """The whole file was read at every frame: /dev/zero until memory ran out."""
    path = tmp_path / "state"
    path.write_bytes(b"U" * 100_000)
    with pytest.raises(CaptureError, match="is larger than 4096 bytes"):
        state_file_source(path, 3)()
    with pytest.raises(CaptureError, match="/dev/zero: not a regular file"):
        state_file_source(Path("/dev/zero"), 3)()  # a device: refused unread


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


@pytest.mark.parametrize(
    "content",
    [b"\x00\x01binary", b"n = 3\nview = 7\n", b"n = 4\n[views.front]\nsites = []\n"],
    ids=["binary", "wrong-shape", "another-cube"],
)
def test_an_unusable_calibration_file_does_not_keep_the_daemon_from_starting(
    tmp_path: Path, content: bytes
) -> None:
    """A corrupt calibration file raised CalibrationError while the rig was built: `cuberobot
    run` refused to start. Now the camera counts as uncalibrated, with what is wrong named;
    scans are refused with that reason (NO_CALIBRATION), everything else runs."""
    from robot.cameras import CameraRig
    from robot.config import parse_config

    (tmp_path / "cal.toml").write_bytes(content)
    cameras = [
        {"name": "front", "source": "7", "view": "face", "faces": ["F"], "calibration": "cal.toml"},
        {"name": "upper", "source": "simulated", "view": "corner", "faces": ["U", "R", "B"]},
        {"name": "lower", "source": "simulated", "view": "corner", "faces": ["D", "L", "B"]},
    ]
    config = parse_config({"cameras": cameras}, str(tmp_path / "robot.toml"))
    rig = CameraRig(config, Cube.solved)
    assert rig.calibration is None and rig.missing_calibration == ("front",)
    assert "cal.toml" in rig.calibration_problems["front"]


def test_a_calibration_of_another_cube_size_is_refused_by_name(tmp_path: Path) -> None:
    """A well-formed 4x4 calibration on a 3x3 robot was taken: its sites name rows and columns
    the robot's cube does not have. Now the camera counts as uncalibrated, with the sizes."""
    from robot.cameras import CameraRig, calibrated_view
    from robot.config import parse_config
    from solver.cube.geometry import Face
    from vision.calibration import Calibration, StickerSite, ViewCalibration, save_calibration
    from vision.errors import CalibrationError

    sites = tuple(
        StickerSite(Face.F, r, c, (10.0 + 20 * c, 10.0 + 20 * r), (), 5.0)
        for r in range(4)
        for c in range(4)
    )
    save_calibration(Calibration(4, (ViewCalibration("front", sites),)), tmp_path / "cal.toml")
    with pytest.raises(CalibrationError, match="calibrates a 4x4x4 cube; this robot's cube is"):
        calibrated_view(tmp_path / "cal.toml", "front", 3)
    assert calibrated_view(tmp_path / "cal.toml", "front", 4).name == "front"
    cameras = [
        {"name": "front", "source": "7", "view": "face", "faces": ["F"], "calibration": "cal.toml"},
        {"name": "upper", "source": "simulated", "view": "corner", "faces": ["U", "R", "B"]},
        {"name": "lower", "source": "simulated", "view": "corner", "faces": ["D", "L", "B"]},
    ]
    rig = CameraRig(parse_config({"cameras": cameras}, str(tmp_path / "robot.toml")), Cube.solved)
    assert rig.missing_calibration == ("front",)
    assert "calibrates a 4x4x4" in rig.calibration_problems["front"]
