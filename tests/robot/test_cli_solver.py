"""The apply / validate / scramble command forms (a contract for scripts)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from robot.cli import main
from solver.cube.facelets import Cube

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_apply_facelets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "apply", "R", "--format", "facelets")
    assert code == 0
    assert out.strip() == "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"


def test_apply_from_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    start = Cube.solved(3).apply("R").to_facelets()
    code, out, _ = run(capsys, "apply", "R'", "--from", start, "--format", "facelets")
    assert (code, out.strip()) == (0, SOLVED)
    code, out, _ = run(capsys, "apply", "Rw 2R'", "--size", "4", "--format", "facelets")
    assert code == 0
    assert out.strip() == Cube.solved(4).apply("R").to_facelets()


def test_apply_net_is_plain_when_not_a_tty(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "apply", "")
    assert code == 0
    assert "\x1b[" not in out
    assert out.splitlines()[3].split() == list("LLLFFFRRRBBB")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        pytest.param(["apply", "R Q"], "column 3", id="bad-move"),
        pytest.param(["apply", "M", "--size", "2"], "N >= 3", id="move-size-lacks"),
        pytest.param(["apply", "R", "--from", "UUU"], "6·N²", id="bad-from"),
    ],
)
def test_apply_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err


def test_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", SOLVED) == (0, "valid\n", "")
    bad = SOLVED[:8] + "F" + SOLVED[9:]
    code, out, err = run(capsys, "validate", bad)
    assert code == 1 and out == ""  # problems go to stderr (robot.cli.exits)
    assert err.splitlines() == [
        "cuberobot: impossible cube:",
        "  white (U) appears 8 times, expected 9",
        "  green (F) appears 10 times, expected 9",
        "  corner at URF shows green/red/green",
    ]
    code, _, err = run(capsys, "validate", "hello")
    assert code == 2 and "not a facelet string" in err
    code, _, err = run(capsys, "validate", SOLVED.replace("B", "X"))
    assert code == 2 and "'X'" in err


def test_validate_big_cube(capsys: pytest.CaptureFixture[str]) -> None:
    text = Cube.solved(4).apply("Rw U 2F'").to_facelets()
    assert run(capsys, "validate", text, "--size", "4")[0] == 0


def test_scramble_facelets_and_big_moves(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scramble", "--seed", "3", "--format", "facelets")
    assert code == 0 and len(out.strip()) == 54
    assert run(capsys, "validate", out.strip())[0] == 0
    code, out, _ = run(capsys, "scramble", "--size", "5", "--seed", "3")
    assert code == 0 and len(out.split()) == 60
    code, again, _ = run(capsys, "scramble", "--size", "5", "--seed", "3")
    assert again == out


def test_console_script_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "robot.cli", "apply", "R U", "--format", "facelets"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == Cube.solved(3).apply("R U").to_facelets()


def test_each_module_registers_the_commands_the_dispatcher_lists() -> None:
    import argparse
    import importlib

    from robot.cli import SUBCOMMANDS

    for module, names in SUBCOMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        assert tuple(sub.choices) == names, module


def test_a_solver_command_does_not_import_opencv() -> None:
    # `cuberobot solve` in a script loop must not pay for OpenCV and the daemon at every start
    code = (
        "import sys; from robot.cli import build_parser; "
        "build_parser(['-v', 'solve', 'R']); print('cv2' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    # nor, running, the firmware link, MQTT, the daemon's configuration or the exit map's targets
    heavy = ("cv2", "vision", "firmware_protocol", "serial", "aiomqtt", "pydantic", "rich")
    code = (
        "import sys; from robot.cli import main; main(['solve', '--scramble', 'R U']); "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["U' R'", "[]"]
    done = subprocess.run(
        [sys.executable, "-m", "robot.cli", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("apply", "solve", "scan", "demo", "firmware-sim"):
        assert command in done.stdout
