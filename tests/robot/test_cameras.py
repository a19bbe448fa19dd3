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
